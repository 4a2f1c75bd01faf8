// One simulated agent: the contract's agent state machine (contract/state-machine.json)
// over one WebSocket at a time, built on the generated peer alone. Thousands of these
// share one event loop (./pool.ts owns the shared settings, counters and generator tick),
// so an agent holds only its own state: no per-agent interval timers except its heartbeat.
//
//   Disconnected ─▶ Connecting ─open─▶ Authenticating ─hello ok─▶ Active ─shutdown─▶ Draining
//        ▲              │ error            │ -32001/-32003/-32005 ─▶ FatalAuth (stops)
//        │              ▼                  │ -32002 ─▶ Revoked (token dropped, stops)
//        └──── Reconnecting ◀─ close/error ┴──────────── close / drained ◀┘
//              (full-jitter backoff, forever on transient errors)
//
// Entries are kept in memory (JSON text, seq > acked_seq) until acked, so a reconnect
// resends exactly the unacked ones from max(acked_seq, hello.accepted_seq) + 1.
import WebSocket from 'ws';
import {
  AgentClient,
  ErrorCode,
  LIMITS,
  PROTOCOL_VERSION,
  PeerError,
  RpcError,
  SUBPROTOCOL,
  createAgentPeer,
  registerAgentHandlers,
  webSocketTransport,
  type AgentConfig,
  type AgentHandlers,
  type AgentHelloResult,
  type AgentShutdownParams,
  type ConfigUpdateParams,
  type AgentPeer,
  type LogsPushResult,
} from '@cortex/agent-protocol';
import { FullJitterBackoff } from './backoff.js';
import { runProbe } from './probes.js';
import type { PoolContext } from './pool-context.js';

export type AgentState =
  | 'Disconnected'
  | 'Connecting'
  | 'Authenticating'
  | 'Active'
  | 'Draining'
  | 'Reconnecting'
  | 'FatalAuth'
  | 'Revoked'
  | 'Stopped'
  /** Never an agent's own state: the coordinator's for the agents of a worker process that died. */
  | 'Lost';

export const AGENT_STATES: readonly AgentState[] = ['Disconnected', 'Connecting', 'Authenticating', 'Active', 'Draining', 'Reconnecting', 'FatalAuth', 'Revoked', 'Stopped', 'Lost'];

/** What `inspect` shows of one agent (never its token). */
export interface AgentInfo {
  host_id: string;
  state: AgentState;
  next_seq: number;
  acked_seq: number;
  pending: number;
  attempt: number;
  config: AgentConfig | null;
  config_updates: number;
  probes_answered: number;
  sessions: number;
}

const MAX_PENDING = 100_000;
const RECOVERY_MS = LIMITS.backpressure_recovery_ms;
/**
 * Bytes of entries per push: the reference agent's frame target (agent/buffer/buffer.ts
 * DEFAULT_BATCH_MAX_BYTES = agent_frame_target_bytes - 1 KiB for the envelope), so large
 * messages make smaller batches instead of frames over max_frame_bytes.
 */
export const BATCH_MAX_BYTES = LIMITS.agent_frame_target_bytes - 1024;
/** Room for the JSON-RPC envelope around the logs.push params. */
const ENVELOPE_BYTES = 256;
/** PeerError codes of a push that never left this process. */
const NOT_SENT = new Set(['frame_too_large', 'send_failed', 'invalid_params', 'unknown_method']);

/**
 * HTTP answers to the upgrade that retrying cannot heal (a wrong path, not a WebSocket
 * endpoint, an unsupported WebSocket version): after this many in a row the agent stops.
 */
export const UPGRADE_REFUSALS_TO_STOP = 5;
const FINAL_UPGRADE_STATUS = /^http_(400|404|405|410|426)$/;

/** Classifies a connection-level failure as a stable label (for "errors by code"). */
export function connectErrorLabel(err: Error | undefined, closeCode: number): string {
  if (err !== undefined) {
    const status = /Unexpected server response: (\d+)/.exec(err.message);
    if (status) return `http_${status[1]}`;
    if (/handshake has timed out/i.test(err.message)) return 'connect_timeout';
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
    return 'connect_error';
  }
  return `close_${closeCode}`;
}

export class SimAgent {
  state: AgentState = 'Disconnected';
  config: AgentConfig | null = null;
  nextSeq = 1;
  ackedSeq = 0;
  configUpdates = 0;
  probesAnswered = 0;
  sessions = 0;
  /** Entries with seq > ackedSeq as JSON text; pending[0] has seq pendingFirst. */
  private pending: string[] = [];
  private pendingFirst = 1;
  private nextSendSeq = 1;
  /** Highest seq handed to the socket in this session (entries above ackedSeq up to it, minus `holes`, were sent). */
  private highestSent = 0;
  /** Seq ranges of pushes that never left this process (a local refusal) while later ones may have: never counted as acked. */
  private holes: Array<[number, number]> = [];
  private inFlight = 0;
  /** Entries per push now: the configured size, halved by -32008 and while slowed down. */
  private batchCap = 1000;
  /** Entries per push when nothing slows the agent down (config and own cap). */
  private batchMax = 1000;
  /** Fractional entries owed; starts random so agents at a low rate do not all emit in the same tick. */
  private credit = Math.random();
  private ws: WebSocket | null = null;
  private peer: AgentPeer | null = null;
  private gen = 0;
  private lastError: Error | undefined;
  private failureCounted = false;
  /** The same refusal of the upgrade that cannot heal, how many times in a row. */
  private refusal = { label: '', count: 0 };
  private lostAt = -1;
  private attemptAt = 0;
  private pausedUntil = 0;
  private reducedUntil = 0;
  private flushDue = false;
  /** While Draining: the last seq generated before agent.shutdown; closing once it is acked. */
  private drainTarget = 0;
  private hbTimer: NodeJS.Timeout | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private pumpTimer: NodeJS.Timeout | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private drainTimer: NodeJS.Timeout | null = null;
  /** Upgrade or hello deadline of the current attempt (see armDeadline). */
  private deadline: NodeJS.Timeout | null = null;
  private timedOut: 'connect_timeout' | 'hello_timeout' | null = null;
  private applyTimer: NodeJS.Timeout | null = null;
  private stopWaiters: Array<() => void> = [];
  /** Notifications that arrived before the hello's answer was handled (same read): run after it. */
  private early: Array<() => void> = [];
  private firstAttemptDone: (() => void) | null = null;
  readonly backoff: FullJitterBackoff;
  private readonly startedAt = Date.now();

  constructor(
    private readonly pool: PoolContext,
    readonly index: number,
    readonly host_id: string,
    private token: string,
    readonly hostname: string,
  ) {
    this.backoff = new FullJitterBackoff(pool.settings.backoff);
  }

  /** First connection; `done` is called once that first attempt has an outcome. */
  start(done: () => void): void {
    this.firstAttemptDone = done;
    this.connect();
  }

  get terminal(): boolean {
    return this.state === 'FatalAuth' || this.state === 'Revoked' || this.state === 'Stopped';
  }

  /** Entries generated and not yet acked (nor evicted). */
  get unacked(): number {
    return this.nextSeq - this.pendingFirst;
  }

  info(): AgentInfo {
    return {
      host_id: this.host_id,
      state: this.state,
      next_seq: this.nextSeq,
      acked_seq: this.ackedSeq,
      pending: this.unacked,
      attempt: this.backoff.attempt(),
      config: this.config,
      config_updates: this.configUpdates,
      probes_answered: this.probesAnswered,
      sessions: this.sessions,
    };
  }

  // ───────────────────────────── entries ─────────────────────────────

  /** Credits `n` entries/s worth of `dtMs` and generates the whole ones (called by the pool's tick). */
  tick(ratePerSec: number, dtMs: number, ts: string): void {
    if (this.terminal || ratePerSec <= 0) return;
    this.credit += (ratePerSec * dtMs) / 1000;
    const whole = Math.floor(this.credit);
    if (whole <= 0) return;
    this.credit -= whole;
    for (let i = 0; i < whole; i++) {
      const seq = this.nextSeq++;
      this.pending.push(this.pool.entryJson(seq, ts, this.index));
    }
    this.pool.counters.entries_generated += whole;
    if (this.pending.length > MAX_PENDING) {
      // A real agent's buffer has a hard cap too: the oldest entries go, counted.
      const drop = this.pending.length - MAX_PENDING;
      this.pending.splice(0, drop);
      this.pendingFirst += drop;
      this.nextSendSeq = Math.max(this.nextSendSeq, this.pendingFirst);
      this.pool.errors.add('buffer_evicted', drop);
    }
    this.pump();
  }

  /** Sends what is unsent now instead of waiting for a full batch or the flush interval. */
  flushNow(): void {
    this.flushDue = true;
    this.pump();
  }

  // ───────────────────────────── connection ─────────────────────────────

  private connect(): void {
    this.retryTimer = null;
    if (this.terminal) return;
    const s = this.pool.settings;
    const gen = ++this.gen;
    this.state = 'Connecting';
    this.lastError = undefined;
    this.failureCounted = false;
    this.timedOut = null;
    this.early = [];
    this.attemptAt = Date.now();
    this.pool.attempts.add(this.attemptAt);
    const ws = new WebSocket(s.url, SUBPROTOCOL, {
      perMessageDeflate: false,
      maxPayload: LIMITS.max_frame_bytes,
      ...(s.ca !== undefined ? { ca: s.ca } : {}),
    });
    this.ws = ws;
    this.armDeadline(gen, 'connect_timeout', s.connectTimeoutMs);
    ws.on('error', (err) => {
      if (gen === this.gen) this.lastError = err;
    });
    ws.once('close', (code) => this.onClose(gen, code));
    ws.once('open', () => {
      if (gen !== this.gen || this.terminal) return;
      if (ws.protocol !== SUBPROTOCOL) {
        this.lastError = new Error('subprotocol_not_confirmed');
        ws.terminate();
        return;
      }
      this.state = 'Authenticating';
      this.refusal = { label: '', count: 0 };
      this.armDeadline(gen, 'hello_timeout', s.helloTimeoutMs);
      const peer = createAgentPeer(webSocketTransport(ws), { requestTimeoutMs: s.requestTimeoutMs });
      this.peer = peer;
      registerAgentHandlers(peer, this.handlers);
      new AgentClient(peer)
        .agentHello(this.helloParams(), { timeoutMs: 0 })
        .then(
          (hello) => this.onHello(gen, hello),
          (err: unknown) => this.onHelloError(gen, err),
        );
    });
  }

  /**
   * The attempt fails with `label` if it has not got past its current step `ms` from now.
   * Checked once more after the next I/O poll (setImmediate): when this process was too busy
   * to run its timers on time, the answer may already wait in the socket, and a real agent —
   * alone on its host — would have read it; without this, a starved emulator would time out
   * connections the server had answered and inflate the storm it measures.
   */
  private armDeadline(gen: number, label: 'connect_timeout' | 'hello_timeout', ms: number): void {
    if (this.deadline) clearTimeout(this.deadline);
    const step = this.state;
    this.deadline = setTimeout(() => {
      this.deadline = null;
      setImmediate(() => {
        if (gen !== this.gen || this.state !== step || this.ws === null) return;
        this.timedOut = label;
        this.ws.terminate();
      });
    }, ms);
  }

  private clearDeadline(): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = null;
  }

  private helloParams() {
    const s = this.pool.settings;
    return {
      protocol_version: PROTOCOL_VERSION,
      agent_version: s.agentVersion,
      hostname: this.hostname,
      host_id: this.host_id,
      platform: { os: 'linux', arch: 'x86_64', kernel: '6.1.0-fleet', distro: 'Cortex fleet emulator' },
      capabilities: { supported_probes: [...s.probes], sources: ['custom' as const], max_batch_entries: s.maxBatchEntries, compression: [] },
      token: this.token,
      resume_from_seq: this.ackedSeq,
    };
  }

  private onHello(gen: number, hello: AgentHelloResult): void {
    if (gen !== this.gen || this.terminal) return;
    this.clearDeadline();
    const pool = this.pool;
    if (typeof hello.rotated_token === 'string') {
      // The new credential is persisted before anything else is sent (seed 3 step 5).
      this.token = hello.rotated_token;
      pool.journal?.record(this.host_id, this.token, this.hostname);
      pool.counters.rotated_tokens++;
    }
    const now = Date.now();
    this.state = 'Active';
    this.sessions++;
    this.refusal = { label: '', count: 0 };
    this.backoff.markActive(now);
    pool.hellos.add(now);
    pool.helloLatency.record(now - this.attemptAt);
    if (this.lostAt >= 0) {
      pool.reconnectTime.record(now - this.lostAt);
      this.lostAt = -1;
    }
    if (now > pool.lastActiveAt) pool.lastActiveAt = now;
    // Replay from what the server has (seed 7).
    if (this.sessions === 1 || hello.accepted_seq > this.highestSent) {
      // This run's first session (nothing of this run was sent yet), or the server holds seqs
      // this run never sent (the host shipped them in an earlier run or from elsewhere):
      // continue after them, as an agent with a lost buffer does, and renumber what this run
      // generated and did not ship — none of it counts as acked (the server would drop seqs
      // it already has as duplicates).
      if (this.sessions > 1) this.ackTo(this.highestSent);
      this.renumberAfter(Math.max(hello.accepted_seq, this.ackedSeq), now);
    } else this.ackTo(hello.accepted_seq);
    this.holes = [];
    this.nextSendSeq = Math.max(this.ackedSeq + 1, this.pendingFirst);
    this.highestSent = this.ackedSeq;
    this.inFlight = 0;
    this.applyConfig(hello.config);
    this.finishFirstAttempt();
    // notifications that arrived with the hello's answer, now that its config is applied
    for (const run of this.early.splice(0)) run();
    this.pump();
  }

  /** Numbers the held (unsent) entries from `seq` + 1 on; the server holds everything up to `seq`. */
  private renumberAfter(seq: number, now: number): void {
    const held = this.pending.length;
    this.ackedSeq = seq;
    this.nextSeq = seq + 1;
    this.pending = [];
    this.pendingFirst = this.nextSeq;
    const ts = new Date(now).toISOString();
    for (let i = 0; i < held; i++) this.pending.push(this.pool.entryJson(this.nextSeq++, ts, this.index));
  }

  private onHelloError(gen: number, err: unknown): void {
    if (gen !== this.gen || this.terminal) return;
    this.clearDeadline();
    const pool = this.pool;
    if (err instanceof RpcError) {
      pool.errors.add(`hello_${err.code}`);
      if (err.code === ErrorCode.TokenRevoked) {
        pool.journal?.record(this.host_id, null);
        this.token = '';
        return this.giveUp('Revoked', 'revoked');
      }
      if (err.code === ErrorCode.AuthFailed || err.code === ErrorCode.AgentVersionUnsupported || err.code === ErrorCode.TokenRotationRequired) {
        return this.giveUp('FatalAuth', `fatal_${err.code}`);
      }
    } else {
      if (err instanceof PeerError && err.code === 'closed') return; // counted by the close handler
      pool.errors.add(err instanceof PeerError ? `hello_${err.code}` : 'hello_failed');
    }
    this.failureCounted = true;
    this.ws?.terminate();
  }

  private giveUp(state: 'FatalAuth' | 'Revoked', reason: string): void {
    this.state = state;
    this.pool.gaveUp.add(reason);
    this.clearTimers();
    this.ws?.close(1000, this.finalSeqReason());
    this.finishFirstAttempt();
  }

  private onClose(gen: number, code: number): void {
    if (gen !== this.gen) return;
    const pool = this.pool;
    const wasSession = this.state === 'Active' || this.state === 'Draining';
    this.clearDeadline();
    this.ws = null;
    this.peer = null;
    this.inFlight = 0;
    this.clearTimers();
    if (wasSession) {
      if (this.state === 'Active') pool.errors.add(`session_closed_${code}`);
      this.backoff.markInactive();
      if (this.lostAt < 0) {
        this.lostAt = Date.now();
        pool.lost.add(this.lostAt);
      }
    } else if (!this.terminal && !this.failureCounted) {
      const label = this.timedOut ?? connectErrorLabel(this.lastError, code);
      pool.errors.add(label);
      if (FINAL_UPGRADE_STATUS.test(label)) {
        this.refusal = { label, count: this.refusal.label === label ? this.refusal.count + 1 : 1 };
        if (this.refusal.count >= UPGRADE_REFUSALS_TO_STOP) {
          // The URL is wrong (or not a Cortex agent endpoint): retrying for the whole run
          // would measure nothing. Stopped, under gave_up `upgrade_http_<status>`.
          this.state = 'Stopped';
          pool.gaveUp.add(`upgrade_${label}`);
          this.finishFirstAttempt();
          for (const w of this.stopWaiters.splice(0)) w();
          return;
        }
      } else this.refusal = { label: '', count: 0 };
    }
    if (this.terminal) {
      for (const w of this.stopWaiters.splice(0)) w();
      return;
    }
    this.finishFirstAttempt();
    this.state = 'Reconnecting';
    this.retryTimer = setTimeout(() => this.connect(), this.backoff.nextDelayMs());
  }

  private finishFirstAttempt(): void {
    const done = this.firstAttemptDone;
    this.firstAttemptDone = null;
    done?.();
  }

  private finalSeqReason(): string {
    return `final_seq=${this.ackedSeq}`;
  }

  /** Closes the session (final_seq reason) and stays stopped. Resolves once closed. */
  stop(): Promise<void> {
    if (this.state === 'Stopped') return Promise.resolve();
    const wasTerminal = this.terminal;
    this.state = wasTerminal ? this.state : 'Stopped';
    this.clearTimers();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.finishFirstAttempt();
    const ws = this.ws;
    if (ws === null || ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.stopWaiters.push(resolve);
      if (ws.readyState === WebSocket.OPEN) {
        ws.close(1000, this.finalSeqReason());
        setTimeout(() => ws.terminate(), 2000).unref();
      } else ws.terminate();
    });
  }

  // ───────────────────────────── control handlers ─────────────────────────────

  private readonly handlers: Partial<AgentHandlers> = {
    'probe.request': ({ probe, args }) => {
      try {
        const out = runProbe(probe, args, this.pool.settings.probes, this.startedAt, this.index);
        this.probesAnswered++;
        this.pool.probes.add(probe);
        return out;
      } catch (err) {
        this.pool.probes.add(`${probe}:error_${err instanceof RpcError ? err.code : 'local'}`);
        throw err;
      }
    },
    'config.update': (params) => this.onConfigUpdate(params),
    'agent.shutdown': (params) => this.onShutdown(params),
  };

  // A config.update or agent.shutdown sent right behind the hello's answer can be read in
  // the same chunk and dispatched before onHello ran (a promise continuation): both wait for
  // it and then run in arrival order (DECISIONS F4).

  private onConfigUpdate(params: ConfigUpdateParams): void {
    if (this.state === 'Authenticating') return void this.early.push(() => this.onConfigUpdate(params));
    const at = params.apply_after ? Date.parse(params.apply_after) : NaN;
    const wait = Number.isFinite(at) ? at - Date.now() : 0;
    if (this.applyTimer) clearTimeout(this.applyTimer);
    this.applyTimer = null;
    const apply = () => {
      this.applyTimer = null;
      this.applyConfig(params.config);
      this.configUpdates++;
      this.pool.counters.config_updates++;
    };
    if (wait > 0) this.applyTimer = setTimeout(apply, Math.min(wait, 2 ** 31 - 1));
    else apply();
  }

  private onShutdown(params: AgentShutdownParams): void {
    if (this.state === 'Authenticating') return void this.early.push(() => this.onShutdown(params));
    this.pool.counters.shutdowns++;
    if (params.reason === 'Revoked') {
      this.pool.journal?.record(this.host_id, null);
      this.token = '';
      return this.giveUp('Revoked', 'revoked');
    }
    if (this.state !== 'Active') return;
    this.state = 'Draining';
    this.drainTarget = this.nextSeq - 1;
    this.drainTimer = setTimeout(() => this.finishDrain(), params.drain_seconds * 1000);
    this.pump();
  }

  private finishDrain(): void {
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = null;
    if (this.state === 'Draining') this.ws?.close(1000, this.finalSeqReason());
  }

  private applyConfig(config: AgentConfig): void {
    const hbChanged = this.config?.heartbeat_interval_secs !== config.heartbeat_interval_secs;
    this.config = config;
    this.batchMax = Math.min(config.max_batch_entries, this.pool.settings.maxBatchEntries, LIMITS.logs_push_max_entries);
    this.batchCap = Math.min(this.batchCap, this.batchMax);
    if (Date.now() >= this.reducedUntil) this.batchCap = this.batchMax;
    if (hbChanged || this.hbTimer === null) this.scheduleHeartbeat();
  }

  private scheduleHeartbeat(): void {
    if (this.hbTimer) clearTimeout(this.hbTimer);
    this.hbTimer = null;
    if (this.config === null || (this.state !== 'Active' && this.state !== 'Draining')) return;
    const fixed = this.pool.settings.heartbeatMs;
    const base = this.config.heartbeat_interval_secs * 1000;
    const jitter = LIMITS.heartbeat_jitter_s * 1000;
    const delay = fixed ?? Math.max(LIMITS.heartbeat_min_interval_s * 1000, base - jitter + Math.random() * 2 * jitter);
    this.hbTimer = setTimeout(() => {
      this.hbTimer = null;
      const peer = this.peer;
      if (peer === null || peer.closed) return;
      try {
        peer.notify('agent.heartbeat', {
          ts: new Date().toISOString(),
          queue_depth: this.nextSeq - this.nextSendSeq,
          buffer_bytes: this.pending.length * this.pool.entryBytes,
          push_lag_seq: this.nextSeq - 1 - this.ackedSeq,
        });
        this.pool.counters.heartbeats++;
      } catch {
        return; // closed meanwhile: the close handler reconnects
      }
      this.scheduleHeartbeat();
    }, delay);
  }

  // ───────────────────────────── pushing ─────────────────────────────

  /** Sends unsent entries in batches, up to the window of pushes in flight. */
  private pump(): void {
    const peer = this.peer;
    if (peer === null || (this.state !== 'Active' && this.state !== 'Draining')) return;
    const now = Date.now();
    // After a refusal, one push at a time until recovered: a later batch accepted while an
    // earlier one was refused would move the server's accepted_seq past it.
    const window = now < this.reducedUntil ? 1 : this.pool.settings.window;
    while (this.inFlight < window) {
      if (now < this.pausedUntil) return this.armPump(this.pausedUntil - now);
      if (this.state === 'Draining' && this.ackedSeq >= this.drainTarget) return this.finishDrain();
      const unsent = this.nextSeq - this.nextSendSeq;
      if (unsent <= 0) {
        this.flushDue = false;
        return;
      }
      // A batch is full at batchCap entries or BATCH_MAX_BYTES of entries, whichever comes first.
      const n = this.fitting(Math.min(unsent, this.batchCap));
      if (n === unsent && !this.flushDue && this.state !== 'Draining' && n < this.batchCap) return this.armFlush();
      if (n === unsent) this.flushDue = false;
      if (!this.send(peer, this.nextSendSeq, n)) return this.pump();
    }
  }

  /** How many of the next `max` unsent entries fit in BATCH_MAX_BYTES (at least one). */
  private fitting(max: number): number {
    const from = this.nextSendSeq - this.pendingFirst;
    let bytes = 0;
    for (let i = 0; i < max; i++) {
      bytes += (this.pending[from + i] as string).length + 1;
      if (bytes > BATCH_MAX_BYTES) return Math.max(1, i);
    }
    return max;
  }

  /**
   * Sends entries seqStart .. seqStart+n-1 in one logs.push. False when the frame would exceed
   * max_frame_bytes: nothing is sent and the batch is halved as for -32008, with one push in
   * flight until recovered (so no later batch can reach the server past these entries).
   */
  private send(peer: AgentPeer, seqStart: number, n: number): boolean {
    const from = seqStart - this.pendingFirst;
    const json = `{"seq_start":${seqStart},"entries":[${this.pending.slice(from, from + n).join(',')}]}`;
    const pool = this.pool;
    if (Buffer.byteLength(json) + ENVELOPE_BYTES > LIMITS.max_frame_bytes) {
      pool.errors.add('push_frame_too_large');
      if (n === 1) {
        // One entry larger than a frame can never be shipped (not with a message within
        // max_message_chars): skipped, and lost once the server acks past it.
        this.addHole(seqStart, seqStart);
        this.nextSendSeq = seqStart + 1;
        return false;
      }
      this.batchCap = Math.max(1, Math.min(this.batchCap, Math.floor(n / 2)));
      this.reducedUntil = Date.now() + RECOVERY_MS;
      return false;
    }
    const last = seqStart + n - 1;
    this.nextSendSeq = seqStart + n;
    this.highestSent = Math.max(this.highestSent, last);
    if (this.holes.length > 0) this.fillHoles(seqStart, last);
    this.inFlight++;
    const gen = this.gen;
    const sentAt = performance.now();
    pool.counters.pushes++;
    pool.counters.entries_sent += n;
    peer.requestSerialized('logs.push', json).then(
      (res: LogsPushResult) => {
        if (gen !== this.gen) return;
        pool.ackLatency.record(performance.now() - sentAt);
        this.inFlight--;
        if (this.batchCap < this.batchMax && Date.now() >= this.reducedUntil) this.batchCap = Math.min(this.batchMax, this.batchCap * 2);
        this.ackTo(Math.min(res.up_to_seq, this.highestSent));
        this.pump();
      },
      (err: unknown) => {
        if (gen !== this.gen) return;
        this.inFlight--;
        // refused before it left this process: while later pushes may have gone out
        if (err instanceof PeerError && NOT_SENT.has(err.code)) this.addHole(seqStart, last);
        this.onPushError(seqStart, err);
      },
    );
    return true;
  }

  private addHole(from: number, to: number): void {
    this.fillHoles(from, to); // no seq twice
    this.holes.push([from, to]);
  }

  /** Seqs from..to are on their way now: no longer holes. */
  private fillHoles(from: number, to: number): void {
    const out: Array<[number, number]> = [];
    for (const [a, b] of this.holes) {
      if (b < from || a > to) out.push([a, b]);
      else {
        if (a < from) out.push([a, from - 1]);
        if (b > to) out.push([to + 1, b]);
      }
    }
    this.holes = out;
  }

  /** Entries from..to will never be stored (skipped past): counted lost, never acked. */
  private lose(from: number, to: number): void {
    if (to < from) return;
    this.pool.counters.entries_lost += to - from + 1;
    this.pool.errors.add('entries_lost', to - from + 1);
  }

  /**
   * The server holds every seq up to `upTo`. Counts as acked only the entries this agent
   * still held and sent: evicted ones were counted as buffer_evicted, and those of a push
   * that never left this process (a hole the server acked past) as entries_lost.
   */
  private ackTo(upTo: number): void {
    if (upTo <= this.ackedSeq) return;
    let lost = 0;
    if (this.holes.length > 0) {
      const keep: Array<[number, number]> = [];
      for (const [a, b] of this.holes) {
        const lo = Math.max(a, this.ackedSeq + 1, this.pendingFirst);
        const hi = Math.min(b, upTo);
        if (hi >= lo) {
          this.lose(lo, hi);
          lost += hi - lo + 1;
        }
        if (b > upTo) keep.push([Math.max(a, upTo + 1), b]);
      }
      this.holes = keep;
    }
    const heldFrom = Math.max(this.ackedSeq + 1, this.pendingFirst);
    const drop = Math.max(0, Math.min(this.pending.length, upTo - this.pendingFirst + 1));
    if (drop > 0) {
      this.pending.splice(0, drop);
      this.pendingFirst += drop;
    }
    const acked = Math.max(0, upTo - heldFrom + 1 - lost);
    this.ackedSeq = upTo;
    if (this.pendingFirst <= upTo) this.pendingFirst = upTo + 1;
    this.nextSendSeq = Math.max(this.nextSendSeq, upTo + 1);
    if (acked > 0) {
      this.pool.counters.entries_acked += acked;
      this.pool.acked.add(Date.now(), acked);
    }
  }

  private onPushError(seqStart: number, err: unknown): void {
    const pool = this.pool;
    this.nextSendSeq = Math.min(this.nextSendSeq, Math.max(seqStart, this.ackedSeq + 1, this.pendingFirst));
    if (err instanceof PeerError) {
      if (err.code === 'closed') return; // the close handler reconnects
      pool.errors.add(`push_${err.code}`);
      if (err.code === 'timeout') {
        this.ws?.terminate();
        return;
      }
      // Refused here (a frame too large, a send that failed): like -32008, halve the batch
      // and keep one push in flight until recovered, so no later batch overtakes these entries.
      this.batchCap = Math.max(1, Math.floor(this.batchCap / 2));
      this.reducedUntil = Date.now() + RECOVERY_MS;
      if (!NOT_SENT.has(err.code)) this.pausedUntil = Date.now() + LIMITS.retry_after_default_ms;
      return this.pump();
    }
    const code = err instanceof RpcError ? err.code : 0;
    pool.errors.add(`push_${code || 'failed'}`);
    const retry = err instanceof RpcError ? (err.data as { retry_after_ms?: unknown } | undefined)?.retry_after_ms : undefined;
    const pause = typeof retry === 'number' && retry >= 0 ? retry : LIMITS.retry_after_default_ms;
    if (code === ErrorCode.UnknownHost) {
      this.ws?.close(1000, this.finalSeqReason());
      return;
    }
    // -32008 halves the batch; -32020/-32030/-32007 pause for retry_after_ms and halve the
    // send rate (DESIGN 5.6) — here by halving the batch, so a batch larger than the server's
    // burst allowance shrinks until it fits — recovering after 10 s without refusals.
    // A refusal only because an earlier push was refused (it carries resend_from_seq) says
    // nothing new about the server's load: no second halving (DECISIONS F6).
    const followOn = err instanceof RpcError && typeof (err.data as { resend_from_seq?: unknown } | undefined)?.resend_from_seq === 'number';
    if (!followOn) this.batchCap = Math.max(1, Math.floor(this.batchCap / 2));
    if (code !== ErrorCode.PayloadTooLarge) this.pausedUntil = Math.max(this.pausedUntil, Date.now() + pause);
    this.reducedUntil = Date.now() + RECOVERY_MS;
    this.pump();
  }

  private armFlush(): void {
    if (this.flushTimer || this.config === null) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flushDue = true;
      this.pump();
    }, this.config.flush_interval_ms);
  }

  private armPump(ms: number): void {
    if (this.pumpTimer) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = null;
      this.pump();
    }, ms);
  }

  private clearTimers(): void {
    for (const t of [this.hbTimer, this.flushTimer, this.pumpTimer, this.drainTimer, this.applyTimer]) if (t) clearTimeout(t);
    this.hbTimer = this.flushTimer = this.pumpTimer = this.drainTimer = this.applyTimer = null;
  }
}
