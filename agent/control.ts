// What the server asks of the agent (seed 4.3, 4.6, 4.8):
//
//   - agent.shutdown: Revoked ends the session for good (token deleted); ServerReload and
//     Decommission drain: the pump sends eagerly until everything ingested before the
//     notification is acked or drain_seconds pass, then the session ends and reconnects.
//   - probe.request: answered only once the hello outcome is handled (a rotated token is on
//     disk before anything is sent, seed 3 step 5); the registry validates the args and runs
//     the probe under config.probe_concurrency. Its RpcErrors (-32602, -32010, -32011,
//     -32012, and -32603 for a bug in a probe, which the registry logs at error level)
//     travel as they are; when the session ends first, the probe is killed and nothing is sent.
//   - config.update: validated (an invalid one is logged, emitted as 'config_rejected' and
//     ignored), applied at once or at apply_after. The hello's config is applied here too.
//
// The state transitions themselves are the session's (session.ts); this module decides.

import type { EventEmitter } from 'node:events';
import {
  LIMITS,
  RpcError,
  describeIssues,
  toIssues,
  validateConfigUpdateParams,
  type AgentConfig,
  type AgentHandlers,
  type AgentShutdownParams,
  type ConfigUpdateParams,
  type PeerEvent,
  type ProbeOutput,
  type ProbeRequestParams,
} from '@cortex/agent-protocol';
import type { DurableBuffer } from './buffer/buffer.js';
import type { Logger } from './log.js';
import type { ProbeRegistry } from './probes/index.js';
import { MAX_TIMER_MS } from './timers.js';

/** Used until the server's HelloResult.config arrives. */
export const DEFAULT_CONFIG: AgentConfig = {
  heartbeat_interval_secs: 30,
  max_batch_entries: LIMITS.server_max_batch_entries,
  flush_interval_ms: 200,
  metrics_interval_secs: 60,
  probe_concurrency: 4,
  log_sources: [],
};

/** What control needs of a connection. */
export interface ControlConn {
  /** Resolves once the hello outcome is handled (a rotated token persisted). */
  readonly helloDone: Promise<void>;
  /** Aborted when the session ends: running probes are killed, their answers dropped. */
  readonly probeAbort: AbortController;
}

/** The session's transitions control drives (session.ts implements them). */
export interface ControlSession {
  isCurrent(conn: ControlConn): boolean;
  /** Active or Draining. */
  sending(): boolean;
  draining(): boolean;
  /** agent.shutdown Revoked: end the session for good (token deleted). */
  revokedByServer(conn: ControlConn): void;
  /** Active → Draining; false when the contract has no such transition now. */
  beginDrain(): boolean;
  /** Draining → Reconnecting: the session ends. */
  drained(): void;
}

export interface ControlDeps {
  log: Logger;
  buffer: Pick<DurableBuffer, 'nextSeq' | 'ackedSeq'>;
  probes: Pick<ProbeRegistry, 'invoke' | 'setConcurrency'>;
  sources: { apply(sources: AgentConfig['log_sources']): void };
  session: ControlSession;
  /** Wake the pump (draining sends eagerly). */
  pump(): void;
  /** A new config is in force while Active/Draining (heartbeat/metrics intervals). */
  reschedule(previous: AgentConfig, config: AgentConfig): void;
  /** Write status.json now. */
  writeStatus(): void;
  /** Emits config_applied and config_rejected. */
  events: Pick<EventEmitter, 'emit'>;
  /** Keeps a config the server put in force for the next start (./config-store.ts). */
  keep?(config: AgentConfig): void;
}

export class Control {
  private configInForce: AgentConfig = DEFAULT_CONFIG;
  private configTimer: NodeJS.Timeout | null = null;
  private drainTarget = 0;
  private drainTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: ControlDeps) {}

  get config(): AgentConfig {
    return this.configInForce;
  }

  /** The handlers of one connection's peer: every server-to-agent method of the contract (a new one fails to compile here until handled). */
  handlersFor(conn: ControlConn): AgentHandlers {
    return {
      'probe.request': async (params) => this.onProbeRequest(conn, params),
      // Notifications that arrive while the hello result is still being handled (token write,
      // replay) wait for it, in arrival order: the hello's config must not override a newer
      // config.update, and a shutdown has no transition out of Authenticating.
      'agent.shutdown': (params) => void conn.helloDone.then(() => this.onShutdown(conn, params)),
      'config.update': (params) => void conn.helloDone.then(() => this.deps.session.isCurrent(conn) && this.onConfigUpdate(params)),
    };
  }

  /** Protocol events of the peer: a config.update the peer refused is a rejected config. */
  onPeerEvent(e: PeerEvent): void {
    if ((e.type === 'invalid_params' || e.type === 'notification_dropped') && e.method === 'config.update') {
      this.rejectConfig(e.type === 'invalid_params' ? describeIssues(e.issues) : e.reason);
      return;
    }
    if (e.type === 'handler_error') this.deps.log.error({ method: e.method, err: String((e.error as Error)?.message ?? e.error) }, 'handler failed');
    else this.deps.log.debug({ event: e.type }, 'protocol event');
  }

  /**
   * Puts `config` in force: sources, probe concurrency, intervals, batch size. `stored`: the
   * config last in force before this start (DIR/config.json), until the server's arrives.
   */
  applyConfig(config: AgentConfig, from: 'hello' | 'update' | 'stored'): void {
    const { log, session } = this.deps;
    const previous = this.configInForce;
    this.configInForce = config;
    if (from === 'update') log.info({ config: summarizeConfig(config) }, 'config.update applied');
    if (from === 'stored') log.info({ config: summarizeConfig(config) }, "the config last in force (config.json) applies until the server's arrives");
    else this.deps.keep?.(config);
    try {
      this.deps.sources.apply(config.log_sources);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'applying log sources failed');
    }
    if (previous.probe_concurrency !== config.probe_concurrency || from !== 'update') {
      try {
        this.deps.probes.setConcurrency(config.probe_concurrency);
      } catch (err) {
        log.error({ err: (err as Error).message, probe_concurrency: config.probe_concurrency }, 'cannot apply probe_concurrency');
      }
    }
    if (session.sending()) {
      this.deps.reschedule(previous, config);
      this.deps.pump();
    }
    this.deps.events.emit('config_applied', config);
    this.deps.writeStatus();
  }

  /**
   * After an ack while draining: once everything ingested before the shutdown is acked, the
   * drain is over. True when it ended the session.
   */
  afterAck(): boolean {
    if (!this.deps.session.draining() || this.deps.buffer.ackedSeq < this.drainTarget) return false;
    this.finishDrain('buffer drained');
    return true;
  }

  /** The session ended: the drain timer stops. */
  sessionEnded(): void {
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = null;
  }

  /** A staged config.update will not be applied (the agent stops). */
  cancelStaged(): void {
    if (this.configTimer) clearTimeout(this.configTimer);
    this.configTimer = null;
  }

  stop(): void {
    this.cancelStaged();
    this.sessionEnded();
  }

  private onShutdown(conn: ControlConn, params: AgentShutdownParams): void {
    const { session, buffer } = this.deps;
    if (!session.isCurrent(conn)) return;
    this.deps.log.info({ reason: params.reason, drain_seconds: params.drain_seconds }, 'agent.shutdown received');
    if (params.reason === 'Revoked') {
      session.revokedByServer(conn);
      return;
    }
    if (!session.beginDrain()) return;
    this.drainTarget = buffer.nextSeq - 1;
    this.drainTimer = setTimeout(() => this.finishDrain('drain_seconds elapsed'), params.drain_seconds * 1000);
    if (buffer.ackedSeq >= this.drainTarget) this.finishDrain('buffer empty');
    else this.deps.pump();
  }

  private finishDrain(why: string): void {
    if (!this.deps.session.draining()) return;
    this.deps.log.info({ why, acked_seq: this.deps.buffer.ackedSeq, drain_target: this.drainTarget }, 'drain finished');
    this.deps.session.drained();
  }

  private async onProbeRequest(conn: ControlConn, params: ProbeRequestParams): Promise<ProbeOutput> {
    await conn.helloDone;
    const started = Date.now();
    const log = this.deps.log;
    try {
      const out = await this.deps.probes.invoke(params, { signal: conn.probeAbort.signal });
      log.info({ probe: params.probe, duration_ms: out.duration_ms, exit_code: out.exit_code }, 'probe answered');
      return out;
    } catch (err) {
      if (err instanceof RpcError) {
        log.info({ probe: params.probe, code: err.code, ms: Date.now() - started }, 'probe failed');
      } else if (!conn.probeAbort.signal.aborted) {
        log.error({ probe: params.probe, err: (err as Error)?.message ?? String(err) }, 'probe failed unexpectedly');
      }
      throw err;
    }
  }

  private onConfigUpdate(params: ConfigUpdateParams): void {
    if (!validateConfigUpdateParams(params)) {
      this.rejectConfig(describeIssues(toIssues(validateConfigUpdateParams.errors)));
      return;
    }
    this.cancelStaged();
    const at = params.apply_after ? Date.parse(params.apply_after) : NaN;
    const delay = Number.isFinite(at) ? at - Date.now() : 0;
    if (delay > 0) {
      this.deps.log.info({ apply_after: params.apply_after }, 'config.update staged');
      this.stageUntil(params.config, at);
    } else {
      this.applyConfig(params.config, 'update');
    }
  }

  /**
   * Applies `config` at `at` (ms since the epoch). A Node.js timer longer than 2^31 − 1 ms
   * fires after 1 ms, so a far apply_after (more than ~24.8 days ahead) waits in steps.
   */
  private stageUntil(config: AgentConfig, at: number): void {
    const delay = at - Date.now();
    if (delay <= 0) {
      this.configTimer = null;
      this.applyConfig(config, 'update');
      return;
    }
    this.configTimer = setTimeout(() => this.stageUntil(config, at), Math.min(delay, MAX_TIMER_MS));
  }

  private rejectConfig(why: string): void {
    this.deps.log.warn({ why }, 'invalid config.update ignored');
    this.deps.events.emit('config_rejected', why);
  }
}

function summarizeConfig(c: AgentConfig): Record<string, unknown> {
  return {
    heartbeat_interval_secs: c.heartbeat_interval_secs,
    max_batch_entries: c.max_batch_entries,
    flush_interval_ms: c.flush_interval_ms,
    metrics_interval_secs: c.metrics_interval_secs === undefined ? 60 : c.metrics_interval_secs, // the interval in force: null is "none" since F11
    probe_concurrency: c.probe_concurrency,
    log_sources: c.log_sources.length,
  };
}
