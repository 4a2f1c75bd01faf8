// Telemetry of one session: agent.heartbeat (DESIGN 5.10: config.heartbeat_interval_secs
// ± jitter, never below the minimum) and metrics.push (host metrics every
// config.metrics_interval_secs — absent: 60 s, null: none — plus the one-off eviction and
// recovery reports). Nothing is sent unless the session is Active or Draining (`client()` is
// null otherwise); a metrics batch the server refuses is logged at debug and dropped (metrics
// are not buffered).

import type { EventEmitter } from 'node:events';
import { LIMITS, type AgentClient, type AgentConfig, type MetricSample, type MetricsPushParams, type RpcError } from '@cortex/agent-protocol';
import type { DurableBuffer } from './buffer/buffer.js';
import { DEFAULT_MOUNTS, collectHostMetrics } from './host-metrics.js';
import type { Logger } from './log.js';
import { LongTimer } from './timers.js';

export interface TelemetryOptions {
  /** Overrides config.heartbeat_interval_secs (tests). */
  heartbeatIntervalMs?: number;
  /** Default LIMITS.heartbeat_jitter_s. */
  heartbeatJitterMs?: number;
  /** Default LIMITS.heartbeat_min_interval_s. */
  heartbeatMinMs?: number;
  /** Overrides config.metrics_interval_secs (tests); 0 disables periodic metrics. */
  metricsIntervalMs?: number;
  /** Mount points reported as disk_used_pct (default DEFAULT_MOUNTS and the state dir). */
  mounts?: string[];
}

export interface TelemetryDeps {
  options: TelemetryOptions & { stateDir: string };
  log: Logger;
  buffer: Pick<DurableBuffer, 'stats'>;
  /** The config in force (intervals). */
  config(): AgentConfig;
  /** The session's client while it is Active or Draining, else null. */
  client(): Pick<AgentClient, 'agentHeartbeat' | 'metricsPush'> | null;
  /** In [0, 1): heartbeat jitter. */
  random(): number;
  /** Emits 'heartbeat' and 'metrics' with what was sent. */
  events: Pick<EventEmitter, 'emit'>;
}

export class Telemetry {
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** Any metrics_interval_secs: the contract sets no maximum, and a Node timer holds 24.8 days (./timers.ts). */
  private readonly metricsTimer = new LongTimer();

  constructor(private readonly deps: TelemetryDeps) {}

  /** A session became Active: start both schedules. */
  start(): void {
    this.scheduleHeartbeat();
    this.scheduleMetrics();
  }

  /** A new config is in force while Active/Draining: re-arm what changed. */
  configChanged(previous: AgentConfig, config: AgentConfig): void {
    if (previous.heartbeat_interval_secs !== config.heartbeat_interval_secs) this.scheduleHeartbeat();
    if (previous.metrics_interval_secs !== config.metrics_interval_secs) this.scheduleMetrics();
  }

  /** The session ended (or the agent stops): no more heartbeats or metrics. */
  stop(): void {
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    this.metricsTimer.stop();
    this.heartbeatTimer = null;
  }

  hostMetrics(): MetricSample[] {
    const s = this.deps.buffer.stats();
    return collectHostMetrics({
      mounts: this.deps.options.mounts ?? [...DEFAULT_MOUNTS, this.deps.options.stateDir],
      bufferBytes: s.bufferBytes,
      queueDepth: s.queueDepth,
      pushLagSeq: s.pushLagSeq,
      evictedEntries: s.evictedEntries,
      evictedOldestSeq: s.evictedOldestSeq,
    });
  }

  /** One metrics.push (at most LIMITS.metrics_push_max_samples samples), if a session can carry it. */
  sendMetrics(samples: MetricSample[]): void {
    const client = this.deps.client();
    if (client === null || samples.length === 0) return;
    const params: MetricsPushParams = { ts: new Date().toISOString(), samples: samples.slice(0, LIMITS.metrics_push_max_samples) as MetricsPushParams['samples'] };
    this.deps.events.emit('metrics', params);
    client.metricsPush(params).catch((err: unknown) => {
      this.deps.log.debug({ err: (err as Error).message, code: (err as RpcError).code }, 'metrics.push not accepted');
    });
  }

  private scheduleHeartbeat(): void {
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    const o = this.deps.options;
    const base = o.heartbeatIntervalMs ?? this.deps.config().heartbeat_interval_secs * 1000;
    const jitter = o.heartbeatJitterMs ?? LIMITS.heartbeat_jitter_s * 1000;
    const min = o.heartbeatMinMs ?? LIMITS.heartbeat_min_interval_s * 1000;
    const delay = heartbeatDelayMs(base, jitter, min, this.deps.random());
    this.heartbeatTimer = setTimeout(() => {
      this.heartbeatTimer = null;
      this.sendHeartbeat();
      this.scheduleHeartbeat();
    }, delay);
  }

  private sendHeartbeat(): void {
    const client = this.deps.client();
    if (client === null) return;
    const s = this.deps.buffer.stats();
    const params = { ts: new Date().toISOString(), queue_depth: s.queueDepth, buffer_bytes: s.bufferBytes, push_lag_seq: s.pushLagSeq };
    try {
      client.agentHeartbeat(params);
      this.deps.events.emit('heartbeat', params);
    } catch (err) {
      this.deps.log.debug({ err: (err as Error).message }, 'heartbeat not sent');
    }
  }

  private scheduleMetrics(): void {
    this.metricsTimer.stop();
    // absent: every 60 s; null: none (the contract's description, docs/configuration.md); it sent every 60 s for null too
    const secs = this.deps.config().metrics_interval_secs;
    const ms = this.deps.options.metricsIntervalMs ?? (secs === null ? 0 : (secs ?? 60) * 1000);
    if (ms <= 0) return;
    this.metricsTimer.start(ms, () => {
      this.sendMetrics(this.hostMetrics());
      this.scheduleMetrics();
    });
  }
}

/** DESIGN 5.10: interval ± jitter (uniform), never below the minimum. r in [0, 1). */
export function heartbeatDelayMs(baseMs: number, jitterMs: number, minMs: number, r: number): number {
  return Math.max(minMs, Math.round(baseMs + (r * 2 - 1) * jitterMs));
}
