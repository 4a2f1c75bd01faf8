import { EventEmitter } from 'node:events';
import { LIMITS, type AgentConfig, type AgentHeartbeatParams, type MetricSample, type MetricsPushParams } from '@cortex/agent-protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_CONFIG } from '../../agent/control.js';
import { createLogger } from '../../agent/log.js';
import { Telemetry, heartbeatDelayMs, type TelemetryOptions } from '../../agent/telemetry.js';

const stats = { nextSeq: 11, ackedSeq: 4, queueDepth: 6, bufferBytes: 1234, pushLagSeq: 6, evictedEntries: 0, evictedOldestSeq: null };

function telemetryFor(options: TelemetryOptions = {}, random = 0.5) {
  const sent = { heartbeats: [] as AgentHeartbeatParams[], metrics: [] as MetricsPushParams[] };
  let config: AgentConfig = { ...DEFAULT_CONFIG, heartbeat_interval_secs: 30, metrics_interval_secs: 60 };
  let active = true;
  const events = new EventEmitter();
  const t = new Telemetry({
    options: { mounts: ['/'], stateDir: '/tmp', ...options },
    log: createLogger({ level: 'silent' }),
    buffer: { stats: () => stats } as never,
    config: () => config,
    client: () =>
      active
        ? {
            agentHeartbeat: (p: AgentHeartbeatParams) => void sent.heartbeats.push(p),
            metricsPush: async (p: MetricsPushParams) => (sent.metrics.push(p), { accepted: p.samples.length }),
          }
        : null,
    random: () => random,
    events,
  });
  return { t, sent, events, setConfig: (c: AgentConfig) => (config = c), setActive: (a: boolean) => (active = a), config: () => config };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('telemetry: heartbeats', () => {
  it('delay = interval ± jitter (uniform), never below the minimum', () => {
    expect(heartbeatDelayMs(30_000, 5_000, 10_000, 0.5)).toBe(30_000);
    expect(heartbeatDelayMs(30_000, 5_000, 10_000, 0)).toBe(25_000);
    expect(heartbeatDelayMs(30_000, 5_000, 10_000, 0.999999)).toBe(35_000);
    expect(heartbeatDelayMs(1_000, 5_000, 10_000, 0)).toBe(10_000);
  });

  it('sends agent.heartbeat with the buffer counters every interval while Active, none once stopped', () => {
    const { t, sent } = telemetryFor({ heartbeatJitterMs: 0 });
    t.start();
    vi.advanceTimersByTime(29_999);
    expect(sent.heartbeats).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(sent.heartbeats).toHaveLength(1);
    expect(sent.heartbeats[0]).toMatchObject({ queue_depth: 6, buffer_bytes: 1234, push_lag_seq: 6 });
    vi.advanceTimersByTime(30_000);
    expect(sent.heartbeats).toHaveLength(2);
    t.stop();
    vi.advanceTimersByTime(120_000);
    expect(sent.heartbeats).toHaveLength(2);
  });

  it('sends nothing while no session can carry it, and picks up a new interval from config', () => {
    const h = telemetryFor({ heartbeatJitterMs: 0, heartbeatMinMs: 1000 });
    h.t.start();
    h.setActive(false);
    vi.advanceTimersByTime(30_000);
    expect(h.sent.heartbeats).toHaveLength(0);
    h.setActive(true);
    const previous = h.config();
    const next = { ...previous, heartbeat_interval_secs: 5 };
    h.setConfig(next);
    h.t.configChanged(previous, next);
    vi.advanceTimersByTime(5_000);
    expect(h.sent.heartbeats).toHaveLength(1);
  });

  it('uses the contract defaults for jitter and minimum', () => {
    const { t, sent } = telemetryFor({}, 0); // r = 0: interval - jitter
    t.start();
    vi.advanceTimersByTime(30_000 - LIMITS.heartbeat_jitter_s * 1000 - 1);
    expect(sent.heartbeats).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(sent.heartbeats).toHaveLength(1);
  });
});

describe('telemetry: metrics', () => {
  it('pushes host metrics every metrics interval; 0 disables', () => {
    const { t, sent } = telemetryFor({ metricsIntervalMs: 1000, heartbeatIntervalMs: 1e9 });
    t.start();
    vi.advanceTimersByTime(1000);
    expect(sent.metrics).toHaveLength(1);
    const names = sent.metrics[0]!.samples.map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['buffer_bytes', 'buffer_queue_depth', 'push_lag_seq']));
    expect(sent.metrics[0]!.samples.find((s) => s.name === 'buffer_queue_depth')?.value).toBe(6);
    t.stop();
    const off = telemetryFor({ metricsIntervalMs: 0, heartbeatIntervalMs: 1e9 });
    off.t.start();
    vi.advanceTimersByTime(3_600_000);
    expect(off.sent.metrics).toHaveLength(0);
  });

  it('sendMetrics caps a batch at metrics_push_max_samples, emits it, and sends nothing empty or without a session', () => {
    const { t, sent, events, setActive } = telemetryFor();
    const emitted: MetricsPushParams[] = [];
    events.on('metrics', (p: MetricsPushParams) => emitted.push(p));
    const many: MetricSample[] = Array.from({ length: LIMITS.metrics_push_max_samples + 5 }, (_, i) => ({ name: `m${i}`, value: i }));
    t.sendMetrics(many);
    expect(sent.metrics[0]!.samples).toHaveLength(LIMITS.metrics_push_max_samples);
    expect(emitted).toHaveLength(1);
    t.sendMetrics([]);
    setActive(false);
    t.sendMetrics([{ name: 'x', value: 1 }]);
    expect(sent.metrics).toHaveLength(1);
  });
});

describe('telemetry: metrics_interval_secs absent, null, beyond a timer', () => {
  it('absent: every 60 s; null: none (it sent them every 60 s, as if absent)', () => {
    const absent = telemetryFor();
    const { metrics_interval_secs: _, ...withoutInterval } = absent.config();
    absent.setConfig(withoutInterval as AgentConfig);
    absent.t.start();
    vi.advanceTimersByTime(60_000);
    expect(absent.sent.metrics).toHaveLength(1);
    absent.t.stop();

    const none = telemetryFor();
    none.setConfig({ ...none.config(), metrics_interval_secs: null });
    none.t.start();
    vi.advanceTimersByTime(3_600_000);
    expect(none.sent.metrics).toHaveLength(0);
    none.t.stop();
  });

  it('3,000,000 s (35 days, past the 24.8 days a Node timer holds): one push after 35 days, none before', () => {
    const { t, sent, setConfig, config } = telemetryFor();
    setConfig({ ...config(), metrics_interval_secs: 3_000_000 });
    t.start();
    vi.advanceTimersByTime(10_000); // a timer over 2^31 − 1 ms fires after 1 ms: this pushed 10,000 times
    expect(sent.metrics).toHaveLength(0);
    vi.advanceTimersByTime(2_999_989_000);
    expect(sent.metrics).toHaveLength(0);
    vi.advanceTimersByTime(1_000);
    expect(sent.metrics).toHaveLength(1);
    t.stop();
  });
});
