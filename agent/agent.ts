// The reference agent: one instance = one host identity, one state dir, one buffer.
// Many instances can run in one process (tests, benchmarks).
//
// Connection lifecycle (seed 6), every transition through StateMachine (the
// contract's AGENT_STATE_MACHINE data; transitions it lacks are refused):
//   Disconnected -start-> Connecting -upgrade_ok-> Authenticating -hello_accepted-> Active
//   Connecting -upgrade_failed-> Reconnecting          (HTTP error, TLS/DNS, no cortex.v1)
//   Authenticating -auth_fatal-> FatalAuth              (error codes from the data: -32001/-32003/-32005)
//   Authenticating -token_revoked-> Revoked             (-32002: token file deleted)
//   Authenticating -handshake_failed-> Reconnecting     (timeout, io error, close)
//   Active -shutdown-> Draining -drained-> Reconnecting (ServerReload/Decommission)
//   Active -shutdown_revoked-> Revoked                  (token file deleted)
//   Active -connection_lost-> Reconnecting              (close, io error, ping watchdog)
//   Reconnecting -backoff_elapsed-> Connecting          (full-jitter backoff)
//
// Sending (seed 7, DESIGN 5.4/5.6): batches of up to min(config.max_batch_entries,
// capabilities.max_batch_entries, 1000) entries and ~100 KiB, when a batch is full or
// flush_interval_ms after entries arrived (at once under buffer pressure or while
// draining), with up to `window` logs.push in flight. Acks advance acked_seq and
// delete rows in one transaction (buffer.ack).
//
// Probes (seed 4.6, DESIGN 5.11): hello's capabilities.supported_probes is exactly the
// registry's names(); probe.request goes to registry.invoke (args validated, -32010/-32011/
// -32012/-32602 as the registry throws them) once a rotated token is persisted, under
// config.probe_concurrency (applied live). Sources: config.log_sources → SourceManager.

import { EventEmitter } from 'node:events';
import os from 'node:os';
import {
  AGENT_STATE_MACHINE,
  AgentClient,
  ErrorCode,
  LIMITS,
  PROTOCOL_VERSION,
  PeerError,
  RpcError,
  createAgentPeer,
  describeIssues,
  registerAgentHandlers,
  toIssues,
  validateConfigUpdateParams,
  validateLogBatchEntry,
  webSocketTransport,
  type AgentConfig,
  type AgentEvent,
  type AgentHelloParams,
  type AgentPeer,
  type AgentShutdownParams,
  type AgentState,
  type ConfigUpdateParams,
  type LogsPushResult,
  type MetricsPushParams,
  type MetricSample,
  type PeerEvent,
  type ProbeOutput,
  type ProbeRequestParams,
  type RetryAfterData,
} from '@cortex/agent-protocol';
import type WebSocket from 'ws';
import { Backoff, type BackoffOptions } from './backoff.js';
import {
  DEFAULT_BATCH_MAX_BYTES,
  DurableBuffer,
  type AppendResult,
  type BufferBatch,
  type BufferOptions,
  type EvictionReport,
  type SourcePositionUpdate,
} from './buffer/buffer.js';
import type { JsonValue, NewLogEntry } from './buffer/entry.js';
import { BufferStorageError } from './buffer/errors.js';
import { logsPushParamsJson } from './buffer/frame.js';
import { DEFAULT_MOUNTS, collectHostMetrics } from './host-metrics.js';
import { createLogger, scrubSecret, type Logger } from './log.js';
import { detectPlatform } from './platform.js';
import { SendRate } from './send-rate.js';
import { createProbeRegistry, type ProbeRegistry, type ProbeRegistryOptions } from './probes/index.js';
import { ServerList } from './server-list.js';
import { openSocket } from './socket.js';
import { BasicSourceManager, type SourceFactory, type SourceManager, type SourceStatus } from './sources.js';
import { StateMachine, type Transition } from './state.js';
import { writeStatusFile, type StatusFile } from './status-file.js';
import { clearRecovery, markCleanStop, openHealing, type RecoveryReport } from './buffer/heal.js';
import { deleteToken, readToken, writeToken } from './token-store.js';

export const AGENT_VERSION = '0.1.0';

/** file.tail's allowed paths when agent.json has no probe_file_tail_paths (DECISIONS.md F2). */
export const DEFAULT_PROBE_FILE_TAIL_PATHS: readonly string[] = ['/var/log'];

/** Used until the server's HelloResult.config arrives. */
export const DEFAULT_CONFIG: AgentConfig = {
  heartbeat_interval_secs: 30,
  max_batch_entries: LIMITS.server_max_batch_entries,
  flush_interval_ms: 200,
  metrics_interval_secs: 60,
  probe_concurrency: 4,
  log_sources: [],
};

export interface AgentOptions {
  /** State dir: token, buffer.db and status.json live here. */
  stateDir: string;
  /** Full WebSocket URL, used as given. */
  serverUrl: string;
  /**
   * Several servers on one database (agent.json server_urls): each connection attempt takes
   * the next of a shuffled order (server-list.ts). Default: `serverUrl` alone.
   */
  serverUrls?: readonly string[];
  hostId: string;
  /** Token to present; default: DIR/token, re-read before every connection. */
  token?: string;
  allowInsecure?: boolean;
  caFile?: string | null;
  logger?: Logger;
  bufferOptions?: BufferOptions;
  hostname?: string;
  /** capabilities.max_batch_entries (default 1000). */
  maxBatchEntries?: number;
  /** Byte budget per batch (default 100 KiB, frames stay < 128 KiB). */
  batchMaxBytes?: number;
  /** logs.push requests in flight (default 4). */
  window?: number;
  /** Overrides config.heartbeat_interval_secs (tests). */
  heartbeatIntervalMs?: number;
  /** Default LIMITS.heartbeat_jitter_s. */
  heartbeatJitterMs?: number;
  /** Default LIMITS.heartbeat_min_interval_s. */
  heartbeatMinMs?: number;
  /** Overrides config.metrics_interval_secs (tests); 0 disables periodic metrics. */
  metricsIntervalMs?: number;
  /** No server ping (or frame) for this long → connection dead. Default 3 × ping interval; 0 disables. */
  pingWatchdogMs?: number;
  /** WebSocket upgrade timeout, default 10 s. */
  connectTimeoutMs?: number;
  /** Wait for HelloResult, default 10 s. */
  helloTimeoutMs?: number;
  /** Default request timeout (logs.push, metrics.push), default 30 s. */
  requestTimeoutMs?: number;
  backoff?: BackoffOptions;
  /** On stop(): how long to wait for in-flight pushes to be acked. Default 2 s. */
  stopFlushMs?: number;
  /** While storage is failing: how often to probe for recovery. Default 5 s. */
  storageRetryMs?: number;
  /** Write DIR/status.json for `status` (default true). */
  statusFile?: boolean;
  statusIntervalMs?: number;
  /** Mount points reported as disk_used_pct. */
  mounts?: string[];
  sourceFactories?: SourceFactory[];
  /**
   * The probe registry (capabilities.supported_probes = its names(), probe.request runs
   * through it): a registry, or options for createProbeRegistry (default: every built-in
   * probe, file.tail limited to `probeFileTailPaths`).
   */
  probes?: ProbeRegistry | ProbeRegistryOptions;
  /** file.tail's allowed paths when `probes` is not a registry (agent.json probe_file_tail_paths; default DEFAULT_PROBE_FILE_TAIL_PATHS). */
  probeFileTailPaths?: readonly string[];
  /** Validate outgoing frames against the contract in the peer (default true). */
  validateOutgoing?: boolean;
  /** Random source for heartbeat jitter (backoff has its own in `backoff`). */
  random?: () => number;
}

export interface IngestOptions {
  /** Source position committed in the same transaction as the entries. */
  position?: SourcePositionUpdate;
}

export interface AgentStatus {
  state: AgentState;
  stopped: boolean;
  host_id: string;
  /** The server of the latest connection attempt (the one held while a session is open). */
  server_url: string;
  /** Every server the agent may connect to, in configured order. */
  server_urls: string[];
  session_id: string | null;
  next_seq: number;
  acked_seq: number;
  queue_depth: number;
  buffer_bytes: number;
  push_lag_seq: number;
  evicted_entries: number;
  sources_paused: boolean;
  sources: SourceStatus[];
  last_error: string | null;
  batch_entries: number;
  send_rate_cap: number | null;
  /** Set while the buffer is degraded: it was damaged and replaced, and the server has not acked past the lost range. */
  degraded?: RecoveryReport;
}

interface Conn {
  ws: WebSocket;
  peer: AgentPeer;
  client: AgentClient;
  inFlight: number;
  watchdog: NodeJS.Timeout | null;
  /** Resolves once the hello outcome is handled (a rotated token persisted). */
  helloDone: Promise<void>;
  markHelloDone: () => void;
  /** Aborted when the session ends: running probes are killed, their answers dropped. */
  probeAbort: AbortController;
}

/** Error codes per Authenticating event, read from the contract's state-machine data. */
function authEventFor(code: number): AgentEvent | null {
  const t = AGENT_STATE_MACHINE.transitions.find((tr) => tr.from === 'Authenticating' && tr.errors?.includes(code));
  return t?.event ?? null;
}

export function authErrorMessage(code: number, hostId: string): string {
  switch (code) {
    case ErrorCode.AuthFailed:
      return `authentication failed (-32001 AuthFailed): the server does not accept this host_id and token; issue a new enrollment token on the server (agent issue --host-id ${hostId}) and run enroll again`;
    case ErrorCode.TokenRevoked:
      return `token revoked (-32002 TokenRevoked): this host was revoked or decommissioned; the token file was deleted and the agent will not reconnect`;
    case ErrorCode.AgentVersionUnsupported:
      return `agent version unsupported (-32003 AgentVersionUnsupported): the server requires a newer agent or protocol; upgrade the agent (this is ${AGENT_VERSION}, protocol ${PROTOCOL_VERSION})`;
    case ErrorCode.TokenRotationRequired:
      return `token rotation required (-32005 TokenRotationRequired): this token was rotated and its grace window has ended; re-enroll: run \`agent issue --host-id ${hostId}\` on the server, then enroll with the new token`;
    default:
      return `handshake rejected (${code})`;
  }
}

export class Agent extends EventEmitter {
  readonly options: AgentOptions;
  readonly log: Logger;
  readonly buffer: DurableBuffer;
  /** Set while a healed buffer's lost range has not been acked past (status: degraded). */
  private recovery: RecoveryReport | null = null;
  readonly sources: SourceManager;
  readonly probes: ProbeRegistry;
  readonly backoff: Backoff;
  readonly servers: ServerList;
  private readonly machine: StateMachine;
  private readonly rate = new SendRate();
  private readonly random: () => number;

  private config: AgentConfig = DEFAULT_CONFIG;
  private conn: Conn | null = null;
  private token: string | null;
  private sessionId: string | null = null;
  private lastError: string | null = null;
  private stopping = false;
  private stoppedFlag = false;
  private stopPromise: Promise<void> | null = null;
  private readonly finished: Promise<AgentState>;
  private resolveFinished!: (s: AgentState) => void;

  // sender
  private nextSendSeq = 1;
  /**
   * Highest seq the server can have from this agent: the largest seq_end ever sent, or the
   * accepted_seq a hello reported. An ack beyond it (a broken or hostile server) must not
   * delete entries that were never sent.
   */
  private highestSentSeq = 0;
  private batchCap: number = LIMITS.logs_push_max_entries; // lowered by -32008
  private pausedUntil = 0;
  private flushDue = false;
  private avgEntryBytes = 250;
  private pumpScheduled = false;
  private flushTimer: NodeJS.Timeout | null = null;
  private pumpTimer: NodeJS.Timeout | null = null;
  private drainTarget = 0;
  private drainTimer: NodeJS.Timeout | null = null;
  private inFlightWaiter: (() => void) | null = null;

  // other timers
  private reconnectTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private metricsTimer: NodeJS.Timeout | null = null;
  private configTimer: NodeJS.Timeout | null = null;
  private storageTimer: NodeJS.Timeout | null = null;
  private statusTimer: NodeJS.Timeout | null = null;
  private statusWriting: Promise<void> | null = null;
  private statusAgain = false;
  private lastStatusJson = '';
  private lastStatusWrite = 0;
  private statusDirty = true;
  private readonly ownsBuffer: boolean;

  constructor(options: AgentOptions, buffer?: DurableBuffer) {
    super();
    this.options = options;
    this.log = (options.logger ?? createLogger()).child({ host_id: options.hostId });
    this.random = options.random ?? Math.random;
    this.token = options.token ?? null;
    this.ownsBuffer = buffer === undefined;
    if (buffer !== undefined) this.buffer = buffer;
    else {
      // A damaged buffer is moved aside and replaced here, and a lost -wal cannot move next_seq back (DECISIONS H5).
      const healed = openHealing(options.stateDir, options.bufferOptions);
      this.buffer = healed.buffer;
      this.recovery = healed.recovery;
      if (healed.walLost !== null) {
        this.log.warn({ from_seq: healed.walLost.from, to_seq: healed.walLost.to }, 'buffer.db-wal was missing after an unclean stop: next_seq moved past every seq ever reserved (the server sees an eviction gap)');
      }
      if (healed.recovery !== null) this.log.error({ ...healed.recovery }, 'buffer was damaged: moved aside and replaced; the seqs it could not give back are reported as an eviction gap');
    }
    this.backoff = new Backoff(options.backoff);
    this.servers = new ServerList(options.serverUrls !== undefined && options.serverUrls.length > 0 ? options.serverUrls : [options.serverUrl], this.random);
    this.machine = new StateMachine(
      (t) => this.onTransition(t),
      (from, event) => this.log.warn({ from, event }, 'state transition not in the contract; refused'),
    );
    this.sources = new BasicSourceManager(
      { append: (e, p) => this.appendDurable(e, p), position: (s) => this.buffer.getSourcePosition(s) },
      options.sourceFactories ?? [],
      (msg, fields) => this.log.info(fields, msg),
    );
    this.probes = isProbeRegistry(options.probes)
      ? options.probes
      : createProbeRegistry({
          allowedTailPaths: options.probeFileTailPaths ?? DEFAULT_PROBE_FILE_TAIL_PATHS,
          concurrency: DEFAULT_CONFIG.probe_concurrency,
          ...(options.probes ?? {}),
        });
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
    this.nextSendSeq = this.buffer.ackedSeq + 1;
  }

  // ---- public API -------------------------------------------------------------

  get state(): AgentState {
    return this.machine.state;
  }

  get stopped(): boolean {
    return this.stoppedFlag;
  }

  get transitions(): readonly Transition[] {
    return this.machine.history;
  }

  get currentConfig(): AgentConfig {
    return this.config;
  }

  /** Resolves when the agent stops for good (stop(), FatalAuth or Revoked), with the state. */
  get done(): Promise<AgentState> {
    return this.finished;
  }

  /** Starts connecting (Disconnected → Connecting). */
  start(): void {
    if (this.machine.state !== 'Disconnected' || this.stopping) return;
    if (this.options.statusFile !== false) {
      this.statusTimer = setInterval(() => this.writeStatus(false), this.options.statusIntervalMs ?? 1000);
      this.statusTimer.unref?.();
    }
    this.sources.apply(this.config.log_sources);
    if (this.machine.fire('start')) void this.connect();
  }

  /**
   * Commits entries to buffer.db (durable before this returns) and wakes the sender.
   * Throws TypeError for an invalid entry (nothing stored) and BufferStorageError when
   * storage fails (nothing stored; sources are paused until storage recovers).
   */
  ingest(entries: readonly NewLogEntry[], options: IngestOptions = {}): AppendResult {
    return this.appendDurable(entries, options.position);
  }

  status(): AgentStatus {
    const s = this.buffer.stats();
    return {
      state: this.machine.state,
      stopped: this.stoppedFlag,
      host_id: this.options.hostId,
      server_url: this.servers.held ?? this.servers.urls[0]!,
      server_urls: [...this.servers.urls],
      session_id: this.sessionId,
      next_seq: s.nextSeq,
      acked_seq: s.ackedSeq,
      queue_depth: s.queueDepth,
      buffer_bytes: s.bufferBytes,
      push_lag_seq: s.pushLagSeq,
      evicted_entries: s.evictedEntries,
      sources_paused: this.sources.paused,
      sources: this.sourceStatus(),
      last_error: this.lastError,
      batch_entries: this.batchSize(),
      send_rate_cap: this.rate.cap(),
      ...(this.recovery !== null ? { degraded: this.recovery } : {}),
    };
  }

  /** Resolves when the state is `state` (now or later); rejects after timeoutMs. */
  waitForState(state: AgentState, timeoutMs = 10_000): Promise<void> {
    if (this.machine.state === state) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('state', onState);
        reject(new Error(`timed out waiting for state ${state} (now ${this.machine.state})`));
      }, timeoutMs);
      const onState = (t: Transition) => {
        if (t.to !== state) return;
        clearTimeout(timer);
        this.off('state', onState);
        resolve();
      };
      this.on('state', onState);
    });
  }

  /** Resolves once acked_seq >= seq. */
  waitForAck(seq: number, timeoutMs = 10_000): Promise<void> {
    if (this.buffer.ackedSeq >= seq) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('acked', onAck);
        reject(new Error(`timed out waiting for ack of ${seq} (acked ${this.buffer.ackedSeq})`));
      }, timeoutMs);
      const onAck = (acked: number) => {
        if (acked < seq) return;
        clearTimeout(timer);
        this.off('acked', onAck);
        resolve();
      };
      this.on('acked', onAck);
    });
  }

  /**
   * Clean stop: waits (up to stopFlushMs) for in-flight pushes to be acked, closes
   * with reason final_seq=<acked_seq>, stops timers and sources, closes the buffer.
   */
  stop(): Promise<void> {
    if (this.stopPromise) return this.stopPromise;
    this.stopping = true;
    this.stopPromise = (async () => {
      this.clearTimer('reconnectTimer');
      this.clearTimer('configTimer');
      const conn = this.conn;
      if (conn !== null) {
        if (conn.inFlight > 0 && (this.state === 'Active' || this.state === 'Draining')) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, this.options.stopFlushMs ?? 2000);
            this.inFlightWaiter = () => {
              clearTimeout(t);
              resolve();
            };
          });
          this.inFlightWaiter = null;
        }
        this.conn = null;
        this.stopSession(conn);
        await closeSocket(conn.ws, 1000, this.finalSeqReason());
      }
      await this.shutdownLocal();
    })();
    return this.stopPromise;
  }

  // ---- connection -------------------------------------------------------------

  private async connect(): Promise<void> {
    if (this.stopping) return;
    let ws: WebSocket;
    try {
      // A rotated token still being written (its session closed meanwhile) is the one this
      // hello must carry: wait for the write rather than send the old token and persist the
      // new one behind this session's back.
      await this.tokenIo(async () => undefined);
      if (this.options.token === undefined) {
        this.token = await readToken(this.options.stateDir);
        if (this.token === null) throw new Error(`no token in ${this.options.stateDir}; enroll the agent first`);
      }
      const url = this.servers.next();
      this.log.debug({ server_url: url }, 'connecting');
      ws = await openSocket(url, { caFile: this.options.caFile ?? null, timeoutMs: this.options.connectTimeoutMs });
    } catch (err) {
      if (this.stopping) return;
      this.setError(`connect: ${this.scrub((err as Error).message)}`);
      this.log.warn({ err: this.scrub((err as Error).message) }, 'connection attempt failed');
      if (this.machine.fire('upgrade_failed')) this.scheduleReconnect();
      return;
    }
    if (this.stopping) {
      await closeSocket(ws, 1000, this.finalSeqReason());
      return;
    }
    const peer = createAgentPeer(webSocketTransport(ws), {
      requestTimeoutMs: this.options.requestTimeoutMs ?? 30_000,
      validateOutgoing: this.options.validateOutgoing ?? true,
      onEvent: (e) => this.onPeerEvent(e),
    });
    let helloDone!: () => void;
    const conn: Conn = {
      ws,
      peer,
      client: new AgentClient(peer),
      inFlight: 0,
      watchdog: null,
      helloDone: new Promise<void>((r) => (helloDone = r)),
      markHelloDone: () => helloDone(),
      probeAbort: new AbortController(),
    };
    this.conn = conn;
    ws.on('error', (err) => this.log.warn({ err: this.scrub(err.message) }, 'websocket error'));
    ws.on('ping', () => this.feedWatchdog(conn));
    ws.on('message', () => this.feedWatchdog(conn));
    peer.onClose((code, reason) => this.onClosed(conn, code, reason));
    registerAgentHandlers(peer, {
      'probe.request': async (params) => this.onProbeRequest(conn, params),
      // Notifications that arrive while the hello result is still being handled (token write,
      // replay) wait for it, in arrival order: the hello's config must not override a newer
      // config.update, and a shutdown has no transition out of Authenticating.
      'agent.shutdown': (params) => void conn.helloDone.then(() => this.onShutdown(conn, params)),
      'config.update': (params) => void conn.helloDone.then(() => conn === this.conn && this.onConfigUpdate(params)),
    });
    if (!this.machine.fire('upgrade_ok')) return;
    this.feedWatchdog(conn);
    try {
      await this.authenticate(conn);
    } finally {
      conn.markHelloDone();
    }
  }

  private helloParams(): AgentHelloParams {
    return {
      protocol_version: PROTOCOL_VERSION,
      agent_version: AGENT_VERSION,
      hostname: (this.options.hostname ?? os.hostname()).slice(0, 253) || 'localhost',
      host_id: this.options.hostId,
      platform: detectPlatform(),
      capabilities: {
        supported_probes: this.probes.names(),
        sources: [...this.sources.kinds],
        max_batch_entries: this.capabilityBatch(),
        compression: [],
      },
      token: this.token ?? '',
      resume_from_seq: this.buffer.ackedSeq,
    };
  }

  private async authenticate(conn: Conn): Promise<void> {
    let result;
    try {
      result = await conn.client.agentHello(this.helloParams(), { timeoutMs: this.options.helloTimeoutMs ?? 10_000 });
    } catch (err) {
      if (conn !== this.conn || this.stopping) return;
      const event = err instanceof RpcError ? authEventFor(err.code) : null;
      if (event === 'token_revoked') {
        this.setError(authErrorMessage(ErrorCode.TokenRevoked, this.options.hostId));
        this.log.error({ code: (err as RpcError).code }, this.lastError!);
        // Detach first: the server's 4002 close may arrive while the token file is deleted.
        this.endConnection(conn, 1000);
        await this.forgetToken();
        this.machine.fire('token_revoked');
        return;
      }
      if (event === 'auth_fatal') {
        this.setError(authErrorMessage((err as RpcError).code, this.options.hostId));
        this.log.error({ code: (err as RpcError).code }, this.lastError!);
        this.endConnection(conn, 1000);
        this.machine.fire('auth_fatal');
        return;
      }
      const what = err instanceof RpcError ? `hello rejected (${err.code} ${err.message})` : `hello failed: ${(err as Error).message}`;
      this.setError(this.scrub(what));
      this.log.warn({ code: err instanceof RpcError ? err.code : (err as PeerError).code }, this.lastError!);
      this.endConnection(conn, 1000);
      if (this.machine.fire('handshake_failed')) this.scheduleReconnect();
      return;
    }
    if (conn !== this.conn || this.stopping) return;
    // Persist a rotated token before anything else is sent (seed 3 step 5).
    if (typeof result.rotated_token === 'string') {
      try {
        const rotated = result.rotated_token;
        await this.tokenIo(async () => {
          await writeToken(this.options.stateDir, rotated);
          this.token = rotated;
        });
        this.log.info('rotated token persisted');
      } catch (err) {
        this.setError(`cannot persist the rotated token: ${(err as Error).message}`);
        this.log.error(this.lastError!);
        this.endConnection(conn, 1011);
        if (this.machine.fire('handshake_failed')) this.scheduleReconnect();
        return;
      }
      if (conn !== this.conn || this.stopping) return;
    }
    if (!Number.isSafeInteger(result.accepted_seq) || result.accepted_seq > LIMITS.max_seq) {
      // Nothing can be streamed against it (DECISIONS H1): say what the operator does, and retry later.
      this.setError(`the server reports accepted_seq ${result.accepted_seq}, beyond max_seq ${LIMITS.max_seq}; on the server run: cortex-server agent reset-seq ${this.options.hostId}`);
      this.log.error({ accepted_seq: result.accepted_seq }, this.lastError!);
      this.endConnection(conn, 1011);
      if (this.machine.fire('handshake_failed')) this.scheduleReconnect();
      return;
    }
    try {
      const ackedBefore = this.buffer.ackedSeq;
      const r = this.buffer.applyAccepted(result.accepted_seq);
      if (r.jumped) {
        this.log.warn(
          { accepted_seq: result.accepted_seq, previous_next_seq: r.previousNextSeq, next_seq: r.nextSeq },
          'next_seq was <= the server accepted_seq (buffer lost or restored from an old copy): next_seq jumped past it',
        );
      }
      if (r.deleted > 0) this.log.info({ accepted_seq: result.accepted_seq, deleted: r.deleted }, 'replay: rows the server already has were deleted');
      // The server's accepted_seq acknowledges entries too (their ack may have been lost).
      if (r.ackedSeq > ackedBefore) this.emit('acked', r.ackedSeq);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'replay: cannot apply accepted_seq to the buffer');
      this.onStorageError(err);
    }
    this.sessionId = result.session_id;
    this.nextSendSeq = Math.max(this.buffer.ackedSeq, result.accepted_seq) + 1;
    this.highestSentSeq = Math.max(this.highestSentSeq, this.buffer.ackedSeq, result.accepted_seq);
    this.pausedUntil = 0;
    this.flushDue = false;
    if (!this.machine.fire('hello_accepted')) return;
    this.lastError = null;
    this.log.info(
      { session_id: result.session_id, accepted_seq: result.accepted_seq, server_version: result.server_version, resume_at: this.nextSendSeq, server_url: this.servers.held },
      'connected',
    );
    this.emit('hello', { ...result, rotated_token: result.rotated_token ? '[redacted]' : result.rotated_token });
    this.backoff.markActive();
    this.applyConfig(result.config, 'hello');
    this.scheduleHeartbeat();
    this.scheduleMetrics();
    this.schedulePump();
    const rec = this.recovery;
    if (rec !== null && rec.lost_from !== null && rec.lost_to !== null) {
      // The range a damaged buffer took with it, reported like an eviction (DECISIONS H5).
      this.sendMetrics([
        { name: 'buffer_recovery_lost_entries', value: rec.lost_to - rec.lost_from + 1 },
        { name: 'buffer_recovery_lost_oldest_seq', value: rec.lost_from },
      ]);
    }
  }

  private onClosed(conn: Conn, code: number, reason: string): void {
    if (conn !== this.conn) return;
    this.conn = null;
    this.stopSession(conn);
    if (this.stopping) return;
    const state = this.machine.state;
    if (state === 'Active') {
      this.setError(`connection closed (${code}${reason ? ` ${reason}` : ''})`);
      this.log.warn({ code, reason, server_url: this.servers.held }, 'connection lost');
      this.backoff.markInactive();
      this.servers.sessionEnded();
      if (this.machine.fire('connection_lost')) this.scheduleReconnect();
    } else if (state === 'Draining') {
      this.log.info({ code, reason }, 'server closed the connection during the drain');
      this.backoff.markInactive();
      this.servers.sessionEnded();
      if (this.machine.fire('drained')) this.scheduleReconnect();
    } else if (state === 'Authenticating') {
      // The pending hello (or the rotated-token write) settles later and sees that this
      // connection is no longer current, so the transition is made here, once. Without it
      // a close during the handshake (server killed, watchdog, 4000) left the agent
      // in Authenticating for good.
      this.setError(`connection closed during the handshake (${code}${reason ? ` ${reason}` : ''})`);
      this.log.warn({ code, reason }, 'connection closed before the hello was answered');
      if (this.machine.fire('handshake_failed')) this.scheduleReconnect();
    }
  }

  /** Detaches and closes a connection we are done with (its close event is then ignored). */
  private endConnection(conn: Conn, code: number): void {
    if (this.conn === conn) this.conn = null;
    this.stopSession(conn);
    void closeSocket(conn.ws, code, this.finalSeqReason());
  }

  private stopSession(conn: Conn): void {
    if (!conn.probeAbort.signal.aborted) conn.probeAbort.abort(new Error('session closed'));
    if (conn.watchdog) clearTimeout(conn.watchdog);
    conn.watchdog = null;
    this.clearTimer('heartbeatTimer');
    this.clearTimer('metricsTimer');
    this.clearTimer('flushTimer');
    this.clearTimer('pumpTimer');
    this.clearTimer('drainTimer');
    this.inFlightWaiter?.();
  }

  private feedWatchdog(conn: Conn): void {
    const ms = this.options.pingWatchdogMs ?? LIMITS.ping_interval_ms * LIMITS.missed_pongs;
    if (ms <= 0 || conn !== this.conn) return;
    if (conn.watchdog) conn.watchdog.refresh();
    else {
      conn.watchdog = setTimeout(() => {
        if (conn !== this.conn) return;
        this.log.warn({ watchdog_ms: ms }, 'no ping from the server in time; treating the connection as dead');
        conn.ws.terminate();
      }, ms);
    }
  }

  private scheduleReconnect(): void {
    if (this.stopping || this.machine.state !== 'Reconnecting') return;
    const delay = this.backoff.nextDelayMs();
    this.log.info({ delay_ms: delay, attempt: this.backoff.attempt }, 'reconnecting after backoff');
    this.emit('reconnect_scheduled', delay);
    this.clearTimer('reconnectTimer');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.stopping) return;
      if (this.machine.fire('backoff_elapsed')) void this.connect();
    }, delay);
  }

  // ---- server → agent ---------------------------------------------------------

  private onShutdown(conn: Conn, params: AgentShutdownParams): void {
    if (conn !== this.conn) return;
    this.log.info({ reason: params.reason, drain_seconds: params.drain_seconds }, 'agent.shutdown received');
    if (params.reason === 'Revoked') {
      if (!this.machine.can('shutdown_revoked')) return void this.machine.fire('shutdown_revoked');
      this.setError(authErrorMessage(ErrorCode.TokenRevoked, this.options.hostId));
      this.endConnection(conn, 1000);
      this.machine.fire('shutdown_revoked');
      void this.forgetToken();
      return;
    }
    if (!this.machine.fire('shutdown')) return;
    this.drainTarget = this.buffer.nextSeq - 1;
    this.drainTimer = setTimeout(() => this.finishDrain('drain_seconds elapsed'), params.drain_seconds * 1000);
    if (this.buffer.ackedSeq >= this.drainTarget) this.finishDrain('buffer empty');
    else this.schedulePump();
  }

  private finishDrain(why: string): void {
    if (this.machine.state !== 'Draining') return;
    const conn = this.conn;
    this.log.info({ why, acked_seq: this.buffer.ackedSeq, drain_target: this.drainTarget }, 'drain finished');
    if (conn) this.endConnection(conn, 1000);
    this.backoff.markInactive();
    this.servers.sessionEnded();
    if (this.machine.fire('drained')) this.scheduleReconnect();
  }

  /**
   * probe.request: answered only once the hello outcome is handled (a rotated token is on
   * disk before anything is sent, seed 3 step 5); then the registry validates the args and
   * runs the probe under probe_concurrency. Its RpcErrors (-32602, -32010, -32011, -32012)
   * travel as they are; when the session ends first, the probe is killed and nothing is sent.
   */
  private async onProbeRequest(conn: Conn, params: ProbeRequestParams): Promise<ProbeOutput> {
    await conn.helloDone;
    const started = Date.now();
    try {
      const out = await this.probes.invoke(params, { signal: conn.probeAbort.signal });
      this.log.info({ probe: params.probe, duration_ms: out.duration_ms, exit_code: out.exit_code }, 'probe answered');
      return out;
    } catch (err) {
      if (err instanceof RpcError) {
        this.log.info({ probe: params.probe, code: err.code, ms: Date.now() - started }, 'probe failed');
      } else if (!conn.probeAbort.signal.aborted) {
        this.log.error({ probe: params.probe, err: (err as Error)?.message ?? String(err) }, 'probe failed unexpectedly');
      }
      throw err;
    }
  }

  private onConfigUpdate(params: ConfigUpdateParams): void {
    if (!validateConfigUpdateParams(params)) {
      this.rejectConfig(describeIssues(toIssues(validateConfigUpdateParams.errors)));
      return;
    }
    this.clearTimer('configTimer');
    const at = params.apply_after ? Date.parse(params.apply_after) : NaN;
    const delay = Number.isFinite(at) ? at - Date.now() : 0;
    if (delay > 0) {
      this.log.info({ apply_after: params.apply_after }, 'config.update staged');
      this.configTimer = setTimeout(() => {
        this.configTimer = null;
        this.applyConfig(params.config, 'update');
      }, Math.min(delay, 2 ** 31 - 1));
    } else {
      this.applyConfig(params.config, 'update');
    }
  }

  private rejectConfig(why: string): void {
    this.log.warn({ why }, 'invalid config.update ignored');
    this.emit('config_rejected', why);
  }

  private onPeerEvent(e: PeerEvent): void {
    if ((e.type === 'invalid_params' || e.type === 'notification_dropped') && e.method === 'config.update') {
      this.rejectConfig(e.type === 'invalid_params' ? describeIssues(e.issues) : e.reason);
      return;
    }
    if (e.type === 'handler_error') this.log.error({ method: e.method, err: String((e.error as Error)?.message ?? e.error) }, 'handler failed');
    else this.log.debug({ event: e.type }, 'protocol event');
  }

  private applyConfig(config: AgentConfig, from: 'hello' | 'update'): void {
    const previous = this.config;
    this.config = config;
    if (from === 'update') this.log.info({ config: summarizeConfig(config) }, 'config.update applied');
    try {
      this.sources.apply(config.log_sources);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'applying log sources failed');
    }
    if (previous.probe_concurrency !== config.probe_concurrency || from === 'hello') {
      try {
        this.probes.setConcurrency(config.probe_concurrency);
      } catch (err) {
        this.log.error({ err: (err as Error).message, probe_concurrency: config.probe_concurrency }, 'cannot apply probe_concurrency');
      }
    }
    if (this.machine.state === 'Active' || this.machine.state === 'Draining') {
      if (previous.heartbeat_interval_secs !== config.heartbeat_interval_secs) this.scheduleHeartbeat();
      if (previous.metrics_interval_secs !== config.metrics_interval_secs) this.scheduleMetrics();
      this.schedulePump();
    }
    this.emit('config_applied', config);
    this.writeStatus(true);
  }

  // ---- sending ----------------------------------------------------------------

  private capabilityBatch(): number {
    return Math.min(this.options.maxBatchEntries ?? LIMITS.logs_push_max_entries, 65535);
  }

  /** min(config, capabilities, 1000, the -32008 cap). */
  batchSize(): number {
    return Math.max(1, Math.min(this.config.max_batch_entries, this.capabilityBatch(), LIMITS.logs_push_max_entries, this.batchCap));
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private armPumpTimer(ms: number): void {
    if (this.pumpTimer) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = null;
      this.pump();
    }, ms);
  }

  private armFlushTimer(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flushDue = true;
      this.pump();
    }, this.config.flush_interval_ms);
  }

  private pump(): void {
    const conn = this.conn;
    const state = this.machine.state;
    if (conn === null || (state !== 'Active' && state !== 'Draining') || this.stopping) return;
    // After a backpressure/quota/overflow error, one push at a time until the rate has
    // recovered: a later batch accepted while an earlier one was refused would move the
    // server's accepted_seq past the refused one (DESIGN 5.4 accepts gaps).
    const window = this.rate.cap() !== null || this.pausedUntil > Date.now() ? 1 : (this.options.window ?? 4);
    const maxBytes = this.options.batchMaxBytes ?? DEFAULT_BATCH_MAX_BYTES;
    while (conn.inFlight < window) {
      const wait = this.pausedUntil - Date.now();
      if (wait > 0) return this.armPumpTimer(wait);
      const size = this.batchSize();
      const unsent = this.buffer.nextSeq - this.nextSendSeq;
      if (unsent <= 0) {
        this.flushDue = false;
        return;
      }
      const eager = this.flushDue || this.buffer.pressure || state === 'Draining';
      const looksFull = unsent >= size || unsent * this.avgEntryBytes >= maxBytes;
      if (!looksFull && !eager) return this.armFlushTimer();
      const rateWait = this.rate.delayFor(Math.min(unsent, size));
      if (rateWait > 0) return this.armPumpTimer(rateWait);
      let batch: BufferBatch | null;
      try {
        batch = this.buffer.readBatch(this.nextSendSeq, size, maxBytes);
      } catch (err) {
        this.log.error({ err: (err as Error).message }, 'cannot read the buffer; retrying in 1 s');
        this.setError((err as Error).message);
        return this.armPumpTimer(1000);
      }
      if (batch === null) {
        this.nextSendSeq = this.buffer.nextSeq;
        return;
      }
      const n = batch.entries.length;
      this.avgEntryBytes = Math.max(1, Math.round(batch.bytes / n));
      const full = n >= size || batch.seqEnd < this.buffer.nextSeq - 1;
      if (!full && !eager) return this.armFlushTimer();
      if (!full) this.flushDue = false;
      this.send(conn, batch);
    }
  }

  private send(conn: Conn, batch: BufferBatch): void {
    conn.inFlight++;
    this.nextSendSeq = batch.seqEnd + 1;
    this.highestSentSeq = Math.max(this.highestSentSeq, batch.seqEnd);
    this.rate.record(batch.entries.length);
    // The buffer holds each entry as its final JSON text, validated when it was ingested:
    // splice it into the frame instead of parsing, re-validating and re-serializing it.
    conn.peer.requestSerialized('logs.push', logsPushParamsJson(batch)).then(
      (res) => this.onAck(conn, batch, res),
      (err: unknown) => this.onPushError(conn, batch, err),
    );
  }

  private onAck(conn: Conn, batch: BufferBatch, res: LogsPushResult): void {
    conn.inFlight--;
    this.statusDirty = true;
    let upTo = res.up_to_seq;
    if (upTo > this.highestSentSeq) {
      this.log.warn({ up_to_seq: upTo, highest_sent_seq: this.highestSentSeq }, 'server acknowledged entries that were never sent; ignoring the excess');
      upTo = this.highestSentSeq;
    }
    if (upTo > this.buffer.ackedSeq) {
      try {
        const r = this.buffer.ack(upTo);
        if (r.jumped) this.log.warn({ up_to_seq: res.up_to_seq, next_seq: r.nextSeq }, 'ack beyond next_seq: next_seq jumped');
        this.emit('acked', r.ackedSeq);
        if (this.recovery !== null && r.ackedSeq >= this.recovery.next_seq) this.endRecovery();
      } catch (err) {
        // rows stay and are resent later; the server drops the duplicates
        this.log.error({ err: (err as Error).message }, 'cannot record the ack in the buffer');
        this.onStorageError(err);
      }
    }
    if (res.up_to_seq < batch.seqEnd && conn === this.conn) {
      this.log.debug({ up_to_seq: res.up_to_seq, seq_end: batch.seqEnd }, 'partial ack');
    }
    if (conn.inFlight === 0) this.inFlightWaiter?.();
    if (conn !== this.conn) return;
    if (this.machine.state === 'Draining' && this.buffer.ackedSeq >= this.drainTarget) {
      this.finishDrain('buffer drained');
      return;
    }
    this.schedulePump();
  }

  private onPushError(conn: Conn, batch: BufferBatch, err: unknown): void {
    conn.inFlight--;
    if (conn.inFlight === 0) this.inFlightWaiter?.();
    if (conn !== this.conn) return;
    // Resend the batch (later entries may be resent too; the server drops duplicates).
    this.nextSendSeq = Math.min(this.nextSendSeq, batch.seqStart);
    const code = err instanceof RpcError ? err.code : err instanceof PeerError ? err.code : 'unknown';
    this.emit('push_error', { code, seq_start: batch.seqStart, seq_end: batch.seqEnd });
    if (err instanceof RpcError) {
      const retry = (err.data as Partial<RetryAfterData> | undefined)?.retry_after_ms;
      const pause = typeof retry === 'number' && retry >= 0 ? retry : LIMITS.retry_after_default_ms;
      switch (err.code) {
        case ErrorCode.Backpressure:
        case ErrorCode.QuotaExceeded:
          // A push refused only because an earlier one was (DECISIONS B6a) says nothing new
          // about the server's load: pause, but do not halve the rate again.
          if (typeof (err.data as { resend_from_seq?: unknown } | undefined)?.resend_from_seq !== 'number') this.rate.halve();
          this.pauseFor(pause);
          this.log.warn({ code: err.code, retry_after_ms: pause, rate_cap: Math.round(this.rate.cap() ?? 0) }, 'server asked to slow down');
          break;
        case ErrorCode.PayloadTooLarge:
          this.batchCap = Math.max(1, Math.floor(this.batchSize() / 2));
          this.log.warn({ batch_entries: this.batchCap }, 'payload too large: halving the batch size');
          break;
        case ErrorCode.BufferOverflow:
          this.pauseFor(pause);
          this.log.warn({ retry_after_ms: pause }, 'server could not store the batch; keeping it and resending after a pause');
          break;
        case ErrorCode.UnknownHost:
          this.setError('server no longer knows this host (-32004 UnknownHost); reconnecting');
          this.log.warn(this.lastError!);
          conn.ws.close(1000, this.finalSeqReason());
          return;
        default:
          this.pauseFor(LIMITS.retry_after_default_ms);
          this.setError(`logs.push rejected (${err.code} ${err.message})`);
          this.log.error({ code: err.code, data: err.data }, 'logs.push rejected; retrying after a pause');
      }
    } else if (err instanceof PeerError && err.code === 'closed') {
      return; // the close handler takes over
    } else if (err instanceof PeerError && err.code === 'timeout') {
      this.log.warn('logs.push timed out; treating the connection as dead');
      conn.ws.terminate();
      return;
    } else {
      this.pauseFor(LIMITS.retry_after_default_ms);
      this.log.error({ err: (err as Error)?.message }, 'logs.push failed locally; retrying after a pause');
    }
    this.schedulePump();
  }

  private pauseFor(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
    this.clearTimer('pumpTimer');
  }

  // ---- heartbeats and metrics -------------------------------------------------

  private scheduleHeartbeat(): void {
    this.clearTimer('heartbeatTimer');
    const base = this.options.heartbeatIntervalMs ?? this.config.heartbeat_interval_secs * 1000;
    const jitter = this.options.heartbeatJitterMs ?? LIMITS.heartbeat_jitter_s * 1000;
    const min = this.options.heartbeatMinMs ?? LIMITS.heartbeat_min_interval_s * 1000;
    const delay = heartbeatDelayMs(base, jitter, min, this.random());
    this.heartbeatTimer = setTimeout(() => {
      this.heartbeatTimer = null;
      this.sendHeartbeat();
      this.scheduleHeartbeat();
    }, delay);
  }

  private sendHeartbeat(): void {
    const conn = this.conn;
    if (!conn || (this.machine.state !== 'Active' && this.machine.state !== 'Draining')) return;
    const s = this.buffer.stats();
    const params = { ts: new Date().toISOString(), queue_depth: s.queueDepth, buffer_bytes: s.bufferBytes, push_lag_seq: s.pushLagSeq };
    try {
      conn.client.agentHeartbeat(params);
      this.emit('heartbeat', params);
    } catch (err) {
      this.log.debug({ err: (err as Error).message }, 'heartbeat not sent');
    }
  }

  private scheduleMetrics(): void {
    this.clearTimer('metricsTimer');
    const ms = this.options.metricsIntervalMs ?? (this.config.metrics_interval_secs ?? 60) * 1000;
    if (ms <= 0) return;
    this.metricsTimer = setTimeout(() => {
      this.metricsTimer = null;
      this.sendMetrics(this.hostMetrics());
      this.scheduleMetrics();
    }, ms);
  }

  hostMetrics(): MetricSample[] {
    const s = this.buffer.stats();
    return collectHostMetrics({
      mounts: this.options.mounts ?? [...DEFAULT_MOUNTS, this.options.stateDir],
      bufferBytes: s.bufferBytes,
      queueDepth: s.queueDepth,
      pushLagSeq: s.pushLagSeq,
      evictedEntries: s.evictedEntries,
      evictedOldestSeq: s.evictedOldestSeq,
    });
  }

  private sendMetrics(samples: MetricSample[]): void {
    const conn = this.conn;
    if (!conn || samples.length === 0 || (this.machine.state !== 'Active' && this.machine.state !== 'Draining')) return;
    const params: MetricsPushParams = { ts: new Date().toISOString(), samples: samples.slice(0, LIMITS.metrics_push_max_samples) as MetricsPushParams['samples'] };
    this.emit('metrics', params);
    conn.client.metricsPush(params).catch((err: unknown) => {
      this.log.debug({ err: (err as Error).message, code: (err as RpcError).code }, 'metrics.push not accepted');
    });
  }

  // ---- buffer writes and storage errors ----------------------------------------

  /**
   * Every entry — from ingest() or a source — is validated here, once, before it is stored:
   * the sender then splices the stored JSON into logs.push frames without checking again.
   */
  private appendDurable(entries: readonly NewLogEntry[], position?: SourcePositionUpdate): AppendResult {
    for (let i = 0; i < entries.length; i++) {
      if (!validateLogBatchEntry({ seq: 1, ...entries[i]! })) {
        throw new TypeError(`entry ${i} is not a valid LogBatchEntry (nothing stored): ${describeIssues(toIssues(validateLogBatchEntry.errors))}`);
      }
    }
    let result: AppendResult;
    try {
      result = this.buffer.append(entries, position);
    } catch (err) {
      this.onStorageError(err);
      throw err;
    }
    if (this.sources.paused) this.onStorageRecovered();
    if (result.evicted) this.onEvicted(result.evicted);
    if (result.count > 0) this.schedulePump();
    this.statusDirty = true;
    return result;
  }

  private onStorageError(err: unknown): void {
    if (!(err instanceof BufferStorageError)) return;
    this.setError(err.message);
    if (err.kind === 'corrupt' && this.listenerCount('buffer_corrupt') > 0) {
      // `run` restarts the agent, and opening heals the buffer (DECISIONS H5).
      this.log.error({ code: err.code }, `buffer damaged at run time: restarting to move it aside and heal it (${err.message})`);
      this.emit('buffer_corrupt', err);
    }
    if (!this.sources.paused) {
      this.log.error({ kind: err.kind, code: err.code }, `buffer write failed, sources paused: ${err.message}`);
      this.sources.pause(err.message);
      this.emit('storage_error', err);
    }
    if (err.retryable && !this.storageTimer && !this.stopping) {
      const every = this.options.storageRetryMs ?? 5000;
      this.storageTimer = setInterval(() => this.probeStorage(), every);
    }
  }

  private probeStorage(): void {
    try {
      this.buffer.assertSpace('storage probe'); // above the low-water mark again (DECISIONS H4)
      this.buffer.setSourcePosition({ source: 'agent:storage-probe', position: Date.now() });
      this.onStorageRecovered();
    } catch {
      // still failing
    }
  }

  private onStorageRecovered(): void {
    this.clearTimer('storageTimer', true);
    if (!this.sources.paused) return;
    this.sources.resume();
    this.lastError = null;
    this.log.info('buffer writable again; sources resumed');
    this.emit('storage_recovered');
    this.writeStatus(true);
  }

  private endRecovery(): void {
    this.log.info({ acked_seq: this.buffer.ackedSeq, ...this.recovery }, 'the server has acked past the range lost with the damaged buffer: no longer degraded');
    this.recovery = null;
    clearRecovery(this.options.stateDir);
    this.statusDirty = true;
  }

  private onEvicted(ev: EvictionReport): void {
    this.log.warn(
      { evicted_entries: ev.entries, from_seq: ev.fromSeq, to_seq: ev.toSeq, hard_cap_bytes: this.buffer.hardCapBytes },
      'buffer hard cap reached: oldest entries dropped',
    );
    this.emit('evicted', ev);
    const s = this.buffer.stats();
    this.sendMetrics([
      { name: 'buffer_evicted_entries', value: s.evictedEntries },
      { name: 'buffer_evicted_oldest_seq', value: ev.fromSeq },
    ]);
  }

  // ---- status and shutdown ----------------------------------------------------

  private sourceStatus(): SourceStatus[] {
    const list = this.sources.status();
    let positions: { source: string; position: JsonValue }[] = [];
    try {
      positions = this.buffer.sourcePositions();
    } catch {
      // status still works without positions
    }
    for (const p of positions) {
      if (p.source.startsWith('agent:')) continue;
      const match = list.find((s) => s.key === p.source || (s.kind === 'file' ? `file:${s.path}` : s.name) === p.source || s.path === p.source);
      if (match) match.position = p.position;
      else {
        const kind = (['file', 'docker', 'custom', 'journald'] as const).find((k) => p.source === k || p.source.startsWith(`${k}:`)) ?? 'custom';
        const rest = p.source.includes(':') ? p.source.slice(p.source.indexOf(':') + 1) : p.source;
        list.push({
          kind,
          path: kind === 'file' ? rest : null,
          name: kind === 'file' ? null : rest,
          position: p.position,
          last_error: null,
          paused: this.sources.paused,
        });
      }
    }
    return list;
  }

  private statusFileContent(): StatusFile {
    const s = this.status();
    return {
      pid: process.pid,
      updated_at: new Date().toISOString(),
      state: s.state,
      stopped: s.stopped,
      server_url: s.server_url,
      server_urls: s.server_urls,
      session_id: s.session_id,
      host_id: s.host_id,
      last_error: s.last_error,
      sources_paused: s.sources_paused,
      sources: s.sources,
      batch_entries: s.batch_entries,
      send_rate_cap: s.send_rate_cap === null ? null : Math.round(s.send_rate_cap),
      ...(s.degraded !== undefined ? { degraded: s.degraded } : {}),
    };
  }

  /** Writes DIR/status.json when something changed (or `force`), at most one write at a time. */
  private writeStatus(force: boolean): void {
    if (this.options.statusFile === false) return;
    if (this.statusWriting) {
      this.statusAgain = true;
      return;
    }
    // Idle cost: nothing is recomputed unless something changed (or every 30 s).
    if (!force && !this.statusDirty && Date.now() - this.lastStatusWrite < 30_000) return;
    this.statusDirty = false;
    let content: StatusFile;
    try {
      content = this.statusFileContent();
    } catch {
      return;
    }
    const { updated_at: _ignored, ...rest } = content;
    const sig = JSON.stringify(rest);
    if (!force && sig === this.lastStatusJson && Date.now() - this.lastStatusWrite < 30_000) return;
    this.lastStatusJson = sig;
    this.lastStatusWrite = Date.now();
    this.statusWriting = writeStatusFile(this.options.stateDir, content)
      .catch((err: unknown) => this.log.debug({ err: (err as Error).message }, 'cannot write status.json'))
      .finally(() => {
        this.statusWriting = null;
        if (this.statusAgain) {
          this.statusAgain = false;
          this.writeStatus(true);
        }
      });
  }

  private onTransition(t: Transition): void {
    this.log.info({ from: t.from, to: t.to, event: t.event }, 'state');
    this.emit('state', t);
    this.writeStatus(true);
    if (this.machine.terminal) void this.shutdownLocal();
  }

  private async forgetToken(): Promise<void> {
    try {
      const existed = await this.tokenIo(async () => {
        const had = await deleteToken(this.options.stateDir);
        this.token = null;
        return had;
      });
      this.log.warn({ existed }, 'token file deleted (revoked)');
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'cannot delete the token file');
    }
  }

  /** Token file operations, one at a time and in order (a write never lands after a later one). */
  private tokenQueue: Promise<unknown> = Promise.resolve();
  private tokenIo<T>(op: () => Promise<T>): Promise<T> {
    const run = this.tokenQueue.then(op);
    this.tokenQueue = run.catch(() => undefined);
    return run;
  }

  private shutdownDone = false;
  private async shutdownLocal(): Promise<void> {
    if (this.shutdownDone) return;
    this.shutdownDone = true;
    this.stopping = true;
    for (const t of ['reconnectTimer', 'heartbeatTimer', 'metricsTimer', 'configTimer', 'flushTimer', 'pumpTimer', 'drainTimer'] as const) {
      this.clearTimer(t);
    }
    this.clearTimer('storageTimer', true);
    if (this.statusTimer) clearInterval(this.statusTimer);
    this.statusTimer = null;
    await Promise.resolve(this.sources.close()).catch(() => undefined);
    if (this.state === 'Revoked') await this.forgetToken(); // idempotent; makes sure it is gone
    this.stoppedFlag = true;
    if (this.statusWriting) await this.statusWriting;
    this.writeStatus(true);
    if (this.statusWriting) await this.statusWriting;
    if (this.ownsBuffer) {
      const next = this.buffer.nextSeq;
      this.buffer.close();
      markCleanStop(this.options.stateDir, next);
    }
    this.log.info({ state: this.state }, 'agent stopped');
    this.emit('stopped', this.state);
    this.resolveFinished(this.state);
  }

  private finalSeqReason(): string {
    let acked = 0;
    try {
      acked = this.buffer.ackedSeq;
    } catch {
      // closed buffer
    }
    return `final_seq=${acked}`;
  }

  private setError(message: string): void {
    this.statusDirty = true;
    this.lastError = this.scrub(message);
  }

  private scrub(text: string): string {
    return scrubSecret(scrubSecret(text, this.token), this.options.token);
  }

  private clearTimer(
    name: 'reconnectTimer' | 'heartbeatTimer' | 'metricsTimer' | 'configTimer' | 'flushTimer' | 'pumpTimer' | 'drainTimer' | 'storageTimer',
    interval = false,
  ): void {
    const t = this[name];
    if (t) {
      if (interval) clearInterval(t);
      else clearTimeout(t);
    }
    this[name] = null;
  }
}

/** DESIGN 5.10: interval ± jitter (uniform), never below the minimum. r in [0, 1). */
export function heartbeatDelayMs(baseMs: number, jitterMs: number, minMs: number, r: number): number {
  return Math.max(minMs, Math.round(baseMs + (r * 2 - 1) * jitterMs));
}

function summarizeConfig(c: AgentConfig): Record<string, unknown> {
  return {
    heartbeat_interval_secs: c.heartbeat_interval_secs,
    max_batch_entries: c.max_batch_entries,
    flush_interval_ms: c.flush_interval_ms,
    metrics_interval_secs: c.metrics_interval_secs ?? null,
    probe_concurrency: c.probe_concurrency,
    log_sources: c.log_sources.length,
  };
}

/** Closes a socket with code/reason and waits (≤ 1 s) for the close handshake. */
export function closeSocket(ws: WebSocket, code: number, reason: string): Promise<void> {
  return new Promise((resolve) => {
    if (ws.readyState === ws.CLOSED) return resolve();
    const timer = setTimeout(() => {
      ws.terminate();
      resolve();
    }, 1000);
    ws.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
    } catch {
      ws.terminate();
    }
  });
}

function isProbeRegistry(p: ProbeRegistry | ProbeRegistryOptions | undefined): p is ProbeRegistry {
  return p !== undefined && typeof (p as ProbeRegistry).invoke === 'function' && typeof (p as ProbeRegistry).names === 'function';
}
