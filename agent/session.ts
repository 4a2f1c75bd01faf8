// The agent's session with a server (seed 3, seed 6): connect, hello, every state
// transition, the reconnect backoff, and the token file while a session uses it.
//
// Every transition goes through StateMachine (state.ts: the contract's data; the diagram of
// which event is fired where is there).
//
// What a session does once Active (pump, telemetry, config) is wired by agent.ts through
// SessionHooks; this module never imports those parts.

import type { EventEmitter } from 'node:events';
import {
  ErrorCode,
  LIMITS,
  RpcError,
  registerAgentHandlers,
  type AgentHandlers,
  type AgentHelloParams,
  type AgentState,
  type AgentHelloResult,
  type PeerError,
  type PeerEvent,
} from '@cortex/agent-protocol';
import type WebSocket from 'ws';
import { Backoff, type BackoffOptions } from './backoff.js';
import type { DurableBuffer } from './buffer/buffer.js';
import type { ControlConn } from './control.js';
import type { Logger } from './log.js';
import type { PushConn } from './push-pump.js';
import { createConn, endConn, feedWatchdog, type Conn } from './connection.js';
import { ServerList } from './server-list.js';
import { openSocket } from './socket.js';
import { StateMachine, type Transition } from './state.js';
import { TokenKeeper, writeToken } from './token-store.js';
import { acceptedSeqProblem, authErrorMessage, authEventFor, closeSocket, helloParams } from './handshake.js';
import { tidyTlsText } from '../common/errors.js';

/** How long a session waits for its HelloResult (SessionOptions.helloTimeoutMs, `run --hello-timeout-ms`). */
export const DEFAULT_HELLO_TIMEOUT_MS = 10_000;
/** How long a logs.push or metrics.push waits for its answer (SessionOptions.requestTimeoutMs, `run --request-timeout-ms`). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export type { Conn } from './connection.js';

/** The reference server's close reason when a newer hello of the same host takes over. */
const REPLACED_REASON = 'replaced by a newer session';
/** This many replacements of a live session within REPLACED_WINDOW_MS: another agent holds this identity. */
const REPLACED_LIMIT = 3;
const REPLACED_WINDOW_MS = 10 * 60_000;

export interface SessionOptions {
  /** State dir: the token lives here. */
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
  caFile?: string | null;
  /** agent.json `proxy`: a proxy URL, or null for none; undefined: the environment's (HTTPS_PROXY …; DECISIONS F13). */
  proxy?: string | null;
  hostname?: string;
  /** No server ping (or frame) for this long → connection dead. Default 3 × ping interval; 0 disables. */
  pingWatchdogMs?: number;
  /** WebSocket upgrade timeout, default 10 s. */
  connectTimeoutMs?: number;
  /** Wait for HelloResult, default 10 s. */
  helloTimeoutMs?: number;
  /** Default request timeout (logs.push, metrics.push), default 30 s. */
  requestTimeoutMs?: number;
  backoff?: BackoffOptions;
  /** Validate outgoing frames against the contract in the peer (default true). */
  validateOutgoing?: boolean;
}

/** What the rest of the agent does at the session's milestones (wired by agent.ts). */
export interface SessionHooks {
  /** Every transition (after it happened). */
  transition(t: Transition): void;
  /**
   * The hello was accepted with accepted_seq (before Active): the buffer replays against it
   * and the pump resumes after it. Returns the first seq to send.
   */
  accepted(acceptedSeq: number): number;
  /** The session is Active with the hello's result. */
  active(result: AgentHelloResult): void;
  /** The session ended (closed, detached or stopped): session timers stop. */
  ended(): void;
}

export interface SessionDeps {
  options: SessionOptions;
  log: Logger;
  buffer: Pick<DurableBuffer, 'ackedSeq'>;
  random: () => number;
  /** hello capabilities (probes, sources, batch size). */
  capabilities(): AgentHelloParams['capabilities'];
  /** The handlers for one connection's peer (control.ts). */
  handlers(conn: Conn): Partial<AgentHandlers>;
  onPeerEvent(e: PeerEvent): void;
  /** Records last_error (scrubbed); returns what was stored. */
  setError(message: string): string;
  clearError(): void;
  /** Emits hello, reconnect_scheduled. */
  events: Pick<EventEmitter, 'emit'>;
  hooks: SessionHooks;
}

export class Session {
  readonly machine: StateMachine;
  readonly backoff: Backoff;
  readonly servers: ServerList;
  private readonly options: SessionOptions;
  private readonly log: Logger;
  private conn: Conn | null = null;
  private readonly tokens: TokenKeeper;
  private id: string | null = null;
  private halted = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  /** When a live session of this agent was replaced by another hello of its host (ms). */
  private replacedAt: number[] = [];

  constructor(private readonly deps: SessionDeps) {
    this.options = deps.options;
    this.log = deps.log;
    this.tokens = new TokenKeeper(deps.options.stateDir, deps.options.token);
    this.backoff = new Backoff(deps.options.backoff);
    const urls = deps.options.serverUrls;
    this.servers = new ServerList(urls !== undefined && urls.length > 0 ? urls : [deps.options.serverUrl], deps.random);
    this.machine = new StateMachine(
      (t) => deps.hooks.transition(t),
      (from, event) => this.log.warn({ from, event }, 'state transition not in the contract; refused'),
    );
  }

  get state(): AgentState {
    return this.machine.state;
  }

  /** The current connection (whatever its state), or null. */
  get current(): Conn | null {
    return this.conn;
  }

  /** The host's clock against the server's at the last hello, ms (> 0: behind); null before one. */
  clockOffsetMs: number | null = null;
  /** The proxy of the latest connection attempt (user and password left out); null: direct, or none yet. */
  proxyInUse: string | null = null;
  private clockWarned = false;

  get sessionId(): string | null {
    return this.id;
  }

  /** stop() was called or a terminal state was reached: nothing new starts. */
  get stopping(): boolean {
    return this.halted;
  }

  isCurrent(conn: ControlConn): boolean {
    return conn === this.conn;
  }

  /** Active or Draining. */
  sending(): boolean {
    const s = this.machine.state;
    return s === 'Active' || s === 'Draining';
  }

  draining(): boolean {
    return this.machine.state === 'Draining';
  }

  /** Disconnected → Connecting. */
  start(): void {
    if (this.machine.fire('start')) void this.connect();
  }

  /** Nothing new starts from now on (no reconnect). */
  halt(): void {
    this.halted = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
  }

  /**
   * Clean stop of the session: `flush` (waiting for in-flight pushes) runs while Active or
   * Draining with pushes in flight, then the socket closes with reason final_seq=<acked_seq>.
   */
  async stop(flush: (conn: Conn) => Promise<void>): Promise<void> {
    this.halt();
    const conn = this.conn;
    if (conn === null) return;
    if (conn.inFlight > 0 && this.sending()) await flush(conn);
    this.conn = null;
    this.stopSession(conn);
    await closeSocket(conn.ws, 1000, this.finalSeqReason());
  }

  /** Closes the connection cleanly (its close event then drives the transition). */
  closeConnection(conn: PushConn): void {
    const current = this.conn;
    if (current !== null && conn === current) current.ws.close(1000, this.finalSeqReason());
  }

  /** agent.shutdown Revoked: the session ends for good and the token file is deleted. */
  revokedByServer(conn: ControlConn): void {
    if (!this.machine.can('shutdown_revoked')) return void this.machine.fire('shutdown_revoked');
    const current = this.conn;
    if (current === null || conn !== current) return;
    this.deps.setError(authErrorMessage(ErrorCode.TokenRevoked, this.options.hostId));
    this.endConnection(current, 1000);
    this.machine.fire('shutdown_revoked');
    void this.forgetToken();
  }

  /** Active → Draining (agent.shutdown ServerReload/Decommission). */
  beginDrain(): boolean {
    return this.machine.fire('shutdown') !== null;
  }

  /** The drain is over: the session ends, then reconnect after backoff. */
  drained(): void {
    const conn = this.conn;
    if (conn) this.endConnection(conn, 1000);
    this.backoff.markInactive();
    this.servers.sessionEnded();
    if (this.machine.fire('drained')) this.scheduleReconnect();
  }

  /** Deletes the token file (revoked); idempotent: said once, by the call that deleted it. */
  async forgetToken(): Promise<void> {
    try {
      if (await this.tokens.forget()) this.log.warn('token file deleted (revoked)');
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'cannot delete the token file');
    }
  }

  /** `text` without the token (current or configured). */
  scrub(text: string): string {
    return this.tokens.scrub(text);
  }

  /**
   * The host's clock against the server's at the last hello (DECISIONS F10): server_time minus
   * the middle of the hello's round trip, ms (> 0: this host is behind). Said once when it is
   * off by more than CLOCK_WARN_MS beyond what the round trip leaves open, and once when back.
   */
  private noteClock(serverTime: string, sentAt: number, answeredAt: number): void {
    const server = Date.parse(serverTime);
    if (!Number.isFinite(server)) return;
    const offset = Math.round(server - (sentAt + answeredAt) / 2);
    this.clockOffsetMs = offset;
    const off = Math.abs(offset) - (answeredAt - sentAt) / 2 > CLOCK_WARN_MS;
    if (off && !this.clockWarned) {
      this.clockWarned = true;
      this.log.warn(
        { clock_offset_ms: offset, server_time: serverTime },
        `this host's clock is ${clockOffsetText(offset)} the server's: lines without a time of their own are stamped with this clock, and sort wrongly against other hosts' — set it right (timedatectl status; timedatectl set-ntp true)`,
      );
    } else if (!off && this.clockWarned) {
      this.clockWarned = false;
      this.log.info({ clock_offset_ms: offset }, "this host's clock is in step with the server's again");
    }
  }

  /** Writes the token held back when DIR/token is gone (buffer.db rescued, H25); true when written. */
  restoreTokenFile(): Promise<boolean> {
    return this.tokens.restore();
  }

  private async connect(): Promise<void> {
    if (this.halted) return;
    let ws: WebSocket;
    try {
      // A rotated token still being written (its session closed meanwhile) is the one this
      // hello must carry: wait for the write rather than send the old token and persist the
      // new one behind this session's back.
      await this.tokens.load();
      const url = this.servers.next();
      this.log.debug({ server_url: url }, 'connecting');
      ws = await openSocket(url, {
        caFile: this.options.caFile ?? null,
        timeoutMs: this.options.connectTimeoutMs,
        ...(this.options.proxy !== undefined ? { proxy: this.options.proxy } : {}),
        onRoute: (proxy) => (this.proxyInUse = proxy),
      });
    } catch (err) {
      if (this.halted) return;
      const why = tidyTlsText(this.scrub((err as Error).message));
      this.deps.setError(`connect: ${why}`);
      this.log.warn({ err: why }, 'connection attempt failed');
      if (this.machine.fire('upgrade_failed')) this.scheduleReconnect();
      return;
    }
    if (this.halted) {
      await closeSocket(ws, 1000, this.finalSeqReason());
      return;
    }
    let toldReadsHeld = false;
    const conn = createConn(ws, {
      requestTimeoutMs: this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      validateOutgoing: this.options.validateOutgoing ?? true,
      onEvent: (e) => this.deps.onPeerEvent(e),
      onReadsHeld: (queued) => {
        if (toldReadsHeld) return;
        toldReadsHeld = true;
        this.log.warn(
          { queued_bytes: queued },
          'the server does not read what the agent sends: nothing more is read from it until it does (the connection is ended when no ping arrives in time)',
        );
      },
    });
    this.conn = conn;
    ws.on('error', (err) => this.log.warn({ err: this.scrub(err.message) }, 'websocket error'));
    ws.on('ping', () => this.feedWatchdog(conn));
    ws.on('message', () => this.feedWatchdog(conn));
    conn.peer.onClose((code, reason) => this.onClosed(conn, code, reason));
    registerAgentHandlers(conn.peer, this.deps.handlers(conn));
    if (!this.machine.fire('upgrade_ok')) return;
    this.feedWatchdog(conn);
    try {
      await this.authenticate(conn);
    } finally {
      conn.markHelloDone();
    }
  }

  private async authenticate(conn: Conn): Promise<void> {
    const { buffer, events, hooks } = this.deps;
    let result;
    try {
      const hello = helloParams({ hostname: this.options.hostname, hostId: this.options.hostId, capabilities: this.deps.capabilities(), token: this.tokens.token ?? '', resumeFromSeq: buffer.ackedSeq });
      const sentAt = Date.now();
      result = await conn.client.agentHello(hello, { timeoutMs: this.options.helloTimeoutMs ?? DEFAULT_HELLO_TIMEOUT_MS });
      this.noteClock(result.server_time, sentAt, Date.now());
    } catch (err) {
      if (conn !== this.conn || this.halted) return;
      const event = err instanceof RpcError ? authEventFor(err.code) : null;
      if (event === 'token_revoked') {
        const msg = this.deps.setError(authErrorMessage(ErrorCode.TokenRevoked, this.options.hostId));
        this.log.error({ code: (err as RpcError).code }, msg);
        // Detach first: the server's 4002 close may arrive while the token file is deleted.
        this.endConnection(conn, 1000);
        await this.forgetToken();
        this.machine.fire('token_revoked');
        return;
      }
      if (event === 'auth_fatal') {
        const code = (err as RpcError).code;
        const refused = this.servers.refusedByHeld();
        const total = this.servers.urls.length;
        if (refused < total) {
          // One server of several: it may be on another database, or run a newer minimum
          // version than the others; the others are asked before this is the answer (F12).
          const msg = this.deps.setError(
            `${this.servers.held} refused this host: ${authErrorMessage(code, this.options.hostId)} — ${refused} of the ${total} servers of agent.json refused it; trying the others before stopping (is that server on another database?)`,
          );
          this.log.error({ code, server_url: this.servers.held, servers_refused: refused, servers: total }, msg);
          this.endConnection(conn, 1000);
          if (this.machine.fire('handshake_failed')) this.scheduleReconnect();
          return;
        }
        const msg = this.deps.setError(authErrorMessage(code, this.options.hostId) + (total > 1 ? ` (every server of agent.json, ${total}, refused it)` : ''));
        this.log.error({ code, ...(total > 1 ? { servers_refused: refused } : {}) }, msg);
        this.endConnection(conn, 1000);
        this.machine.fire('auth_fatal');
        return;
      }
      // -32603: the server failed to decide (the reference server answers it when its database
      // is out of reach); the agent retries with backoff, and the server's log says why.
      const what =
        err instanceof RpcError
          ? err.code === ErrorCode.InternalError
            ? `hello failed on the server: ${err.message}; retrying (the server's log says why: its database out of reach, for one)`
            : `hello rejected: ${err.message}`
          : `hello failed: ${(err as Error).message}`;
      const msg = this.deps.setError(this.scrub(what));
      this.log.warn({ code: err instanceof RpcError ? err.code : (err as PeerError).code }, msg);
      this.endConnection(conn, 1000);
      if (this.machine.fire('handshake_failed')) this.scheduleReconnect();
      return;
    }
    if (conn !== this.conn || this.halted) return;
    // Persist a rotated token before anything else is sent (seed 3 step 5).
    if (typeof result.rotated_token === 'string') {
      try {
        const rotated = result.rotated_token;
        await this.tokens.io(async () => {
          await writeToken(this.options.stateDir, rotated);
          this.tokens.token = rotated;
        });
        this.log.info('rotated token persisted');
      } catch (err) {
        this.log.error(this.deps.setError(`cannot persist the rotated token: ${(err as Error).message}`));
        this.endConnection(conn, 1011);
        if (this.machine.fire('handshake_failed')) this.scheduleReconnect();
        return;
      }
      if (conn !== this.conn || this.halted) return;
    }
    const seqProblem = acceptedSeqProblem(result.accepted_seq, this.options.hostId);
    if (seqProblem !== null) {
      // Nothing can be streamed against it (DECISIONS H1, H53): say what the operator does, and retry later.
      const msg = this.deps.setError(seqProblem);
      this.log.error({ accepted_seq: result.accepted_seq }, msg);
      this.endConnection(conn, 1011);
      if (this.machine.fire('handshake_failed')) this.scheduleReconnect();
      return;
    }
    const resumeAt = hooks.accepted(result.accepted_seq);
    this.servers.accepted();
    this.id = result.session_id;
    if (!this.machine.fire('hello_accepted')) return;
    // A shared identity stays the error until ten minutes pass without a replacement.
    const replaced = this.replacedRecently();
    if (replaced >= REPLACED_LIMIT) this.deps.setError(this.cloneMessage(replaced));
    else this.deps.clearError();
    this.log.info(
      { session_id: result.session_id, accepted_seq: result.accepted_seq, server_version: result.server_version, resume_at: resumeAt, server_url: this.servers.held },
      'connected',
    );
    events.emit('hello', { ...result, rotated_token: result.rotated_token ? '[redacted]' : result.rotated_token });
    this.backoff.markActive();
    hooks.active(result);
  }

  /**
   * Replacements of this agent's live session in the last 10 minutes (older ones forgotten).
   * One has innocent causes (a server that stalled past its lease), but two agents presenting
   * the same host_id and token (a state directory copied with a cloned VM or disk image)
   * replace each other's session at every reconnect — and the server then takes the entries
   * of the one behind as duplicates of the other's, with the same seqs, and drops them.
   */
  private replacedRecently(): number {
    const now = Date.now();
    this.replacedAt = this.replacedAt.filter((t) => now - t < REPLACED_WINDOW_MS);
    return this.replacedAt.length;
  }

  private cloneMessage(times: number): string {
    return (
      `another agent is using this host's identity (host_id ${this.options.hostId}): its hellos replaced this agent's session ${times} times in 10 minutes. ` +
      'A copied state directory (a cloned VM or disk image)? The two agents number their entries alike, and the server drops one agent\'s entries as duplicates of the other\'s. ' +
      'Give each host its own enrollment: on the server `cortex-server agent issue --host NAME`, then on the copy `cortex-agent enroll` into an empty state directory'
    );
  }

  private onClosed(conn: Conn, code: number, reason: string): void {
    if (conn !== this.conn) return;
    this.conn = null;
    this.stopSession(conn);
    if (this.halted) return;
    const state = this.machine.state;
    if (state === 'Active') {
      let replaced = 0;
      if (code === 1000 && reason === REPLACED_REASON) {
        this.replacedAt.push(Date.now());
        replaced = this.replacedRecently();
      }
      if (replaced >= REPLACED_LIMIT) {
        this.log.error({ code, reason, server_url: this.servers.held, replaced }, this.deps.setError(this.cloneMessage(replaced)));
      } else {
        this.deps.setError(`connection closed (${code}${reason ? ` ${reason}` : ''})`);
        this.log.warn({ code, reason, server_url: this.servers.held }, 'connection lost');
      }
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
      this.deps.setError(`connection closed during the handshake (${code}${reason ? ` ${reason}` : ''})`);
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
    endConn(conn);
    this.deps.hooks.ended();
  }

  private feedWatchdog(conn: Conn): void {
    const ms = this.options.pingWatchdogMs ?? LIMITS.ping_interval_ms * LIMITS.missed_pongs;
    if (conn !== this.conn) return;
    feedWatchdog(conn, ms, () => {
      if (conn !== this.conn) return;
      if (conn.readsHeld) this.log.warn({ watchdog_ms: ms, queued_bytes: conn.ws.bufferedAmount }, 'the server still does not read what the agent sends; ending the connection to reconnect');
      else this.log.warn({ watchdog_ms: ms }, 'no ping from the server in time; treating the connection as dead');
      conn.ws.terminate();
    });
  }

  private scheduleReconnect(): void {
    if (this.halted || this.machine.state !== 'Reconnecting') return;
    const delay = this.backoff.nextDelayMs();
    this.log.info({ delay_ms: delay, attempt: this.backoff.attempt }, 'reconnecting after backoff');
    this.deps.events.emit('reconnect_scheduled', delay);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.halted) return;
      if (this.machine.fire('backoff_elapsed')) void this.connect();
    }, delay);
  }

  /** The close reason of every clean close: the acked_seq the agent holds. */
  private finalSeqReason(): string {
    let acked = 0;
    try {
      acked = this.deps.buffer.ackedSeq;
    } catch {
      // closed buffer
    }
    return `final_seq=${acked}`;
  }
}

/** A clock off by more than this (beyond the hello's round trip) is said (DECISIONS F10). */
export const CLOCK_WARN_MS = 10_000;

/** "42 s behind", "3 min ahead of", "2.5 h behind": how `offsetMs` (> 0: the host behind) reads. */
export function clockOffsetText(offsetMs: number): string {
  const abs = Math.abs(offsetMs) / 1000;
  const size = abs < 120 ? `${Math.round(abs)} s` : abs < 7200 ? `${Math.round(abs / 60)} min` : `${(abs / 3600).toFixed(1)} h`;
  return offsetMs > 0 ? `${size} behind` : `${size} ahead of`;
}
