// One WebSocket connection: the pre-hello rules (./pre-hello-guard.ts), the hello (decided
// by ./handshake.ts, its reads and writes in ./hello-flow.ts), then the authenticated session
// (logs.push through ../ingest.ts, metrics.push, agent.heartbeat) and the row bookkeeping on
// close (DESIGN.md 5.14). Which session holds a host: ./session-registry.ts.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import {
  AuthRequiredError,
  BackpressureError,
  InvalidRequestError,
  LIMITS,
  RpcError,
  ServerClient,
  UnknownHostError as UnknownHostRpcError,
  registerServerHandlers,
  type ServerHandlers,
  type AgentConfig,
  type AgentHelloResult,
  type Frame,
  type LogsPushResult,
  type MetricsPushResult,
  type ProbeOutput,
  type ProbeRequestParams,
  type Transport,
} from '@cortex/agent-protocol';
import { markDisconnected, undoUndeliveredEnrollment } from '../db/agents.repository.js';
import { OUTAGE_WHY, outageKind } from '../db/outage.js';
import { UnknownHostError } from '../db/storage.js';
import type { SessionIngest } from '../ingest.js';
import type { ServerContext } from './context.js';
import { helloAnswer, type ActivatedRow, type HelloAcceptance, type HelloRefusal } from './handshake.js';
import { runHello } from './hello-flow.js';
import { AgentCalls } from './agent-calls.js';
import { onPeerEvent } from './peer-events.js';
import { MAX_HEADER, PreHelloGuard, type ConnectionState } from './pre-hello-guard.js';
import { createSessionPeer } from './session-peer.js';
import { closeReason, loggableHostId, peerText } from './peer-text.js';
import { readHold, type ReadHold } from '../../common/read-hold.js';
import { utcTimestamp } from '../timestamps.js';

export { parseStoredConfig } from './handshake.js';

/**
 * metrics.push requests of one session being stored at once; more are answered -32020 (the
 * contract's Backpressure for metrics.push) instead of queued: an agent that sends them without
 * waiting for the answers (a loop in a third-party agent) made the server hold every one, 1.3 GB
 * in 21 s (DECISIONS H23). The reference agent sends one per metrics_interval_secs.
 */
export const METRICS_PUSH_IN_FLIGHT = 4;
/** What such a refusal advises. */
const METRICS_RETRY_AFTER_MS = 1000;

const CLOSE_NAMES: Record<number, string> = { 1000: 'normal', 1001: 'going away', 1005: 'no status', 1006: 'abnormal' };
/** What a close for a frame ws refused is recorded as, by the close code it was closed with. */
const WS_ERROR_REASONS: Record<number, string> = { 1002: 'protocol error', 1007: 'invalid utf-8', 1009: 'oversize' };

/**
 * A socket that is not authenticated and is being closed (a refused or timed-out hello, a
 * first frame that is not a hello, a binary frame, the pre-hello limits) is read this much
 * further — room for the peer's close frame (at most 131 bytes) — and then no more; it is
 * ended CLOSE_WAIT_MS after the close whether or not the peer answered it (ws would wait
 * 30 s, reading and parsing everything meanwhile: DECISIONS H63).
 */
export const UNAUTHENTICATED_AFTER_CLOSE_BYTES = LIMITS.pre_hello_bytes;
/** How long a socket the server is closing waits for the peer's close frame (closeWith without a time of its own, or after a frame ws refused: H63, H74). */
export const CLOSE_WAIT_MS = 1000;

/**
 * ws ends a connection by itself (no close frame, no error event) once this many pongs it
 * owes are not written yet: ws's default maxPendingAutoPongs, which the server keeps.
 */
export const WS_MAX_PENDING_AUTO_PONGS = 60;

/** The close code ws attached to an error about a frame the peer sent (undefined for any other error). */
function wsStatusCode(error: Error): number | undefined {
  // ws keeps it under a symbol of its own, Symbol('status-code') (ws/lib/constants.js kStatusCode).
  for (const key of Object.getOwnPropertySymbols(error)) {
    if (key.description === 'status-code') {
      const code = (error as unknown as Record<symbol, unknown>)[key];
      return typeof code === 'number' ? code : undefined;
    }
  }
  return undefined;
}

/**
 * The close code the contract has for one ws chose: ws closes a message in more than 16,384
 * fragments (or a peer 262,144 chunks ahead of its parser) with 1008, which is not in
 * close-codes.json — the frame limit by another measure, so 1009 (DECISIONS H69).
 */
function contractCloseCode(code: number): number {
  return code === 1008 ? 1009 : code;
}

export class Connection {
  state: ConnectionState = 'new';
  host_id: string | undefined;
  session_id: string | undefined;
  /** Pings sent without a pong since (the server's ping sweep reads and resets it). */
  missedPongs = 0;
  /** metrics.push requests of this session being stored (METRICS_PUSH_IN_FLIGHT). */
  private metricsInFlight = 0;
  private toldMetricsRefused = false;
  /** Frames are not read while the agent has more than 1 MiB to take (common/read-hold.ts, DECISIONS H21). */
  private readonly hold: ReadHold;
  private toldReadsHeld = false;
  /** The last agent.heartbeat's buffer figures (the console shows them). */
  lastHeartbeat: { queue_depth: number; buffer_bytes: number; at: string } | undefined;
  readonly address: string;
  /** Calls to the agent (probe.request, agent.shutdown, config.update). */
  private readonly calls: AgentCalls;
  /** capabilities.supported_probes of this session's hello (what is stored for the host). */
  supportedProbes: ReadonlySet<string> = new Set();
  /** agents.config_version this session's agent has (HelloResult.config or the last config.update). */
  configVersion = 0;
  /** Control-plane bookkeeping (server/control/control.ts). */
  readonly control = { rotationAsked: false, decommissioning: false, revoking: false, shuttingDown: false };
  private frameListener: ((frame: Frame) => void) | undefined;
  private closeListener: ((code: number, reason: string) => void) | undefined;
  private readonly guard: PreHelloGuard;
  /** The hello frame went to the peer (a second agent.hello before the answer is refused -32000). */
  private helloTaken = false;
  /** Runs right after the peer sent its answer to the hello (close after a refusal, follow-ups after a result). */
  private afterHelloAnswer: (() => void) | undefined;
  private serverClose: { code: number; reason: string } | undefined;
  /** The server decided to close (closeWith): no frame of the peer's reaches a handler any more (DECISIONS H74). */
  private closing = false;
  /** Set once an unauthenticated socket is being closed: the bytes read since, and whether reading stopped. */
  private afterClose: { bytes: number; paused: boolean } | undefined;
  private ingest: SessionIngest | undefined;
  /** The client address the failed-hello throttle counts against (DECISIONS H7). */
  private readonly clientKey: string;
  private resolveClosed!: () => void;
  /** Resolves once the socket closed and the row bookkeeping is done. */
  readonly closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));

  constructor(
    private readonly ws: WebSocket,
    req: IncomingMessage,
    private readonly ctx: ServerContext<Connection>,
  ) {
    this.address = req.socket.remoteAddress ?? '';
    // The request itself is not kept: a session would hold it, its headers and head buffer
    // for its whole life (test/server/upgrade-retention.test.ts).
    this.clientKey = ctx.clientKey?.(req) ?? this.address;
    const transport: Transport = {
      send: (text) => {
        ws.send(text);
        this.hold.afterSend();
        const after = this.afterHelloAnswer;
        this.afterHelloAnswer = undefined;
        after?.();
      },
      close: (code, reason) => this.closeWith(code ?? 1000, reason ?? ''),
      onFrame: (l) => (this.frameListener = l),
      onClose: (l) => (this.closeListener = l),
    };
    const peer = createSessionPeer(transport, {
      intercept: (call) => {
        if (this.state !== 'active') {
          // The hello itself (./pre-hello-guard.ts found it the first frame): its handler is the handshake.
          if (call.method === 'agent.hello' && this.state === 'hello_pending' && !this.helloTaken) return void (this.helloTaken = true);
          return new AuthRequiredError({ reason: 'send agent.hello first' }, 'AuthRequired');
        }
        if (call.method === 'logs.push') this.ctx.metrics.pushIn.inc();
        else this.ctx.metrics.framesIn.labels(call.method).inc();
        if (call.method === 'agent.hello') return new InvalidRequestError({ reason: 'this session is already authenticated' }, 'InvalidRequest');
        return undefined;
      },
      onEvent: (e) => onPeerEvent(e, this.eventScope),
    });
    this.calls = new AgentCalls(new ServerClient(peer), ctx.metrics, ctx.logger, () => this.open, () => this.host_id);
    const out = this.ctx.metrics;
    registerServerHandlers(peer, {
      'agent.hello': (params) => this.hello(params),
      'logs.push': (params) => {
        let answered: Promise<LogsPushResult>;
        try {
          answered = (this.ingest as SessionIngest).push(params);
        } catch (error) {
          // refused before anything was queued (the peer answers the error)
          if (error instanceof RpcError) out.pushRefused.labels(String(error.code)).inc();
          throw error;
        }
        void answered.then(
          () => out.pushOut.inc(),
          () => out.pushOut.inc(),
        );
        return answered;
      },
      'metrics.push': (params) => {
        if (this.metricsInFlight >= METRICS_PUSH_IN_FLIGHT) {
          out.metricsRefused.inc();
          if (!this.toldMetricsRefused) {
            this.toldMetricsRefused = true;
            this.ctx.logger.info({ host_id: this.host_id, address: this.address, in_flight: this.metricsInFlight }, `agent sends metrics.push without waiting for the answers: more than ${METRICS_PUSH_IN_FLIGHT} at once are refused -32020`);
          }
          throw new BackpressureError({ retry_after_ms: METRICS_RETRY_AFTER_MS });
        }
        this.metricsInFlight++;
        const answered = this.metricsPush(utcTimestamp(params.ts), params.samples);
        void answered
          .finally(() => {
            this.metricsInFlight--;
            out.framesOut.labels('metrics.push').inc();
          })
          .catch(() => undefined);
        return answered;
      },
      'agent.heartbeat': (params) => {
        this.lastHeartbeat = { queue_depth: params.queue_depth, buffer_bytes: params.buffer_bytes, at: new Date().toISOString() };
        this.ctx.lastSeen.touch(this.host_id as string);
      },
    } satisfies ServerHandlers); // every agent-to-server method of the contract: a new one fails to compile here until handled

    const socket = (ws as unknown as { _socket: Socket })._socket;
    // Every close ws makes by itself (a frame it refused) goes out with a contract code.
    const wsClose = ws.close.bind(ws);
    ws.close = (code?: number, data?: string | Buffer) => wsClose(code === undefined ? code : contractCloseCode(code), data);
    this.hold = readHold(ws, (queued) => this.readsHeldNow(queued));
    this.guard = new PreHelloGuard(
      {
        state: () => this.state,
        oversize: () => this.preHelloOversize(),
        hello: (text) => {
          // The hello: answered by the peer, its handler being the handshake (this.hello).
          this.state = 'hello_pending';
          this.frameListener?.({ kind: 'text', text });
        },
        deliver: (frame) => this.frameListener?.(frame),
        unauthenticated: () => this.closeWith(4001, 'agent.hello required'),
        timedOut: () => {
          if (this.state !== 'new' && this.state !== 'hello_pending') return;
          // A hello that came in time but whose check did not end in time (its reads waited on
          // the database: locked, overloaded) is said apart, or it reads as agents that send nothing.
          const checking = this.state === 'hello_pending';
          if (checking) this.helloNotChecked();
          else this.ctx.logger.info({ address: this.address }, 'hello timeout: closing 4000');
          this.ctx.metrics.handshakes.labels('timeout').inc();
          this.closeWith(4000, checking ? 'hello not checked in time' : '');
        },
      },
      ctx.settings.hello_timeout_ms,
    );
    // Everything before hello is bounded: the hello frame itself plus 1 KiB of anything else;
    // after an unauthenticated socket's close, UNAUTHENTICATED_AFTER_CLOSE_BYTES. Counted
    // before ws parses the bytes (prepended to its own listener).
    socket.prependListener('data', (chunk: Buffer) => {
      if (this.afterClose === undefined) return this.guard.data(chunk.length);
      this.afterClose.bytes += chunk.length;
      if (this.afterClose.bytes > UNAUTHENTICATED_AFTER_CLOSE_BYTES && !this.afterClose.paused) {
        // Not read any more: TCP holds the rest back until the socket is ended (closeWith's timer).
        this.afterClose.paused = true;
        ws.pause();
      }
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on('ping', (data: Buffer) => {
      // ws answers each ping itself; with WS_MAX_PENDING_AUTO_PONGS of its pongs not yet
      // written it ends the socket (before this event) and says nothing: said here, or the
      // session would read as "1006 abnormal" (DECISIONS H70).
      if (ws.readyState !== ws.OPEN && this.serverClose === undefined) this.pingFlood();
      this.guard.count(data.length + MAX_HEADER);
    });
    ws.on('pong', (data: Buffer) => {
      this.missedPongs = 0;
      this.guard.count(data.length + MAX_HEADER);
    });
    ws.on('error', (error: Error & { code?: string }) => {
      // A frame ws refused: it closes the socket with the code it attached to the error
      // (through ws.close above: a contract code), which is what is recorded.
      const status = wsStatusCode(error);
      if (status === undefined) {
        // not about a frame (a write that failed): the close is recorded as it happens
        this.ctx.logger.info({ host_id: this.host_id, address: this.address, code: error.code, err: error.message }, 'websocket error');
        return;
      }
      const code = contractCloseCode(status);
      const reason = error.code === 'WS_ERR_TOO_MANY_BUFFERED_PARTS' ? `oversize (${error.message.toLowerCase()})` : (WS_ERROR_REASONS[code] ?? 'protocol error');
      this.serverClose ??= { code, reason };
      this.ctx.logger.info({ host_id: this.host_id, address: this.address, code: error.code, close_code: code }, `websocket error: ${reason} (closing ${code})`);
      // ws reads no more frames; the socket ends within a second whatever the peer does.
      setTimeout(() => ws.terminate(), CLOSE_WAIT_MS).unref();
    });
    ws.on('close', (code: number, reason: Buffer) => {
      void this.onClose(code, reason.toString()).finally(() => this.resolveClosed());
    });
  }

  ping(): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.ping();
  }

  /** Whether the agent's frames are not read now (it has not taken what was sent: H21). */
  get readsHeld(): boolean {
    return this.hold.held;
  }

  /** Reads were held: counted each time, said once per session. */
  private readsHeldNow(queued: number): void {
    this.ctx.metrics.readsHeld.inc();
    if (this.toldReadsHeld) return;
    this.toldReadsHeld = true;
    this.ctx.logger.info(
      { host_id: this.host_id, address: this.address, queued_bytes: queued },
      'agent does not read what the server sends: its frames are not read until it does (closed at the missed-pong limit if it never does)',
    );
  }

  /**
   * Close with our own code and reason (recorded as last_disconnect_reason). The reason is
   * cut to what a close frame holds (123 bytes). From here on nothing the peer sends reaches
   * a handler: what a session does before its close (a drain's pushes and acks) is done before
   * this is called. The socket is ended `terminateAfterMs` later (default CLOSE_WAIT_MS)
   * unless the peer answers the close before; ws alone would wait 30 s, reading and
   * dispatching the peer's frames meanwhile (DECISIONS H74). A socket that is not
   * authenticated is moreover read only UNAUTHENTICATED_AFTER_CLOSE_BYTES further (H63).
   */
  closeWith(code: number, reason: string, opts: { terminateAfterMs?: number } = {}): void {
    reason = closeReason(reason);
    if (this.serverClose === undefined) this.serverClose = { code, reason };
    const unauthenticated = this.state !== 'active';
    if (unauthenticated && this.state !== 'closed') this.state = 'closed';
    const first = !this.closing;
    this.closing = true;
    // Read again: the agent's close frame ends the handshake (whatever else it sends after our
    // close reaches no handler: onMessage drops it).
    this.hold.release();
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
    if (unauthenticated && this.afterClose === undefined) this.afterClose = { bytes: 0, paused: false };
    // One timer for the first close; a later closeWith sets one only when it asks for a time of its own.
    const after = opts.terminateAfterMs ?? (first ? CLOSE_WAIT_MS : undefined);
    if (after !== undefined) setTimeout(() => this.ws.terminate(), after).unref();
  }

  /** ws ended the socket for a ping flood (see the 'ping' listener): recorded and said as such. */
  private pingFlood(): void {
    this.serverClose = { code: 1006, reason: `ping flood (${WS_MAX_PENDING_AUTO_PONGS} pongs not yet written)` };
    this.ctx.logger.info(
      { host_id: this.host_id, address: this.address, pending_pongs: WS_MAX_PENDING_AUTO_PONGS },
      `ping flood: the peer sent pings faster than their pongs could be written (${WS_MAX_PENDING_AUTO_PONGS} waiting): connection ended (1006)`,
    );
  }

  /**
   * A hello came in time but its check did not end in time: its reads waited on the database.
   * While the database is known to be out of reach that is the outage, not news: counted in its
   * once-a-minute line (`failed_operations`), not one warning per hello — 200 agents retrying
   * made 1,170 lines in 100 s (DECISIONS H73). Otherwise (locked, overloaded) the warning, at
   * most once a minute, with how many were not logged since.
   */
  private helloNotChecked(): void {
    const outage = this.ctx.outage;
    if (outage.counted(HELLO_NOT_CHECKED_OP)) return;
    const say = outage.shouldLog(HELLO_NOT_CHECKED_OP, HELLO_NOT_CHECKED_OP);
    if (say === undefined) return;
    this.ctx.logger.warn({ address: this.address, hello_timeout_ms: this.ctx.settings.hello_timeout_ms, ...say }, 'hello received but not checked in time (the database slow or locked?): closing 4000');
  }

  private preHelloOversize(): void {
    this.ctx.logger.info({ address: this.address }, 'pre-hello limit exceeded: closing 1009');
    this.closeWith(1009, '');
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    // After the server's close frame: dropped, whatever it is (an answer would not go out either).
    if (this.closing) return;
    if (this.state === 'active') {
      // the bytes as they are: the peer parses a large frame in pieces (no string of the whole, DECISIONS P12)
      this.frameListener?.(isBinary ? { kind: 'binary', byteLength: data.length } : { kind: 'utf8', bytes: data });
      return;
    }
    this.guard.frame(data, isBinary);
  }

  /** A refused hello: the peer answers with its error (thrown from here), then the socket closes. */
  private fail(refusal: HelloRefusal): never {
    const { error, closeCode } = refusal;
    if (refusal.log !== undefined) this.ctx.logger.info(refusal.log.fields, refusal.log.msg);
    // The message summarises the error's data, which holds what the hello sent (a property
    // name, an agent_version): peer text, as is a host_id that is not a UUID (DECISIONS H65).
    const said = peerText(error.message);
    this.ctx.logger.info({ address: this.address, host_id: loggableHostId(refusal.host_id), code: error.code }, `hello refused: ${said} (closing ${closeCode})`);
    // labelled by the error's name: a label per message was a series per distinct hello (and the text on /metrics)
    this.ctx.metrics.handshakes.labels(error.wireMessage).inc();
    this.ctx.onHelloFailed?.(this.clientKey, error.code);
    this.afterHelloAnswer = () => this.closeWith(closeCode, said);
    throw error;
  }

  private get eventScope(): Parameters<typeof onPeerEvent>[1] {
    return { logger: this.ctx.logger, metrics: this.ctx.metrics, host_id: this.host_id, address: this.address, expiredProbe: (id) => this.calls.expiredProbe(id) };
  }

  /** True while the socket is open and authenticated. */
  get open(): boolean {
    return this.state === 'active' && this.ws.readyState === this.ws.OPEN;
  }

  /**
   * probe.request on this session (seed 4.6). Resolves with the agent's ProbeOutput as it
   * sent it (only the envelope is checked), rejects with the agent's RpcError unchanged, or
   * with a PeerError: 'timeout' after timeout_ms + graceMs (a later answer is dropped and
   * counted), 'closed' at once when the session closes, 'invalid_result' for a reply that
   * is not a ProbeOutput, not a JSON-RPC response at all, or whose output is nested deeper than
   * PROBE_OUTPUT_MAX_DEPTH (./agent-calls.ts).
   */
  probe(params: ProbeRequestParams, graceMs: number): Promise<ProbeOutput> {
    return this.calls.probe(params, graceMs);
  }

  /** agent.shutdown (a notification). False when it could not be sent. */
  sendShutdown(reason: 'ServerReload' | 'Revoked' | 'Decommission', drain_seconds: number): boolean {
    return this.calls.shutdown(reason, drain_seconds);
  }

  /** config.update (a notification) with the config verbatim and apply_after passed through. */
  sendConfig(config: AgentConfig, apply_after: string | null): boolean {
    return this.calls.config(config, apply_after);
  }

  /**
   * agent.hello, as the peer's handler: the decision (./handshake.ts) with its reads and
   * writes (./hello-flow.ts). Resolves with the HelloResult, or throws the RpcError to answer.
   */
  private async hello(params: unknown): Promise<AgentHelloResult> {
    try {
      const outcome = await runHello(params, {
        db: this.ctx.storage.db,
        rows: this.ctx.rows,
        settings: this.ctx.settings,
        serverId: this.ctx.serverId,
        now: this.ctx.now(),
        pending: () => this.state === 'hello_pending',
        // Authenticated. From here the hello timer no longer closes the socket.
        authenticated: () => (this.state = 'activating'),
      });
      if (outcome.kind === 'abandoned') throw ABANDONED; // timed out or closed meanwhile: nothing to answer
      if (outcome.kind === 'refuse') {
        if (this.state === 'activating') this.state = 'hello_pending';
        return this.fail(outcome);
      }
      const result = await this.activated(outcome.accepted, outcome.current);
      if (result === undefined) throw ABANDONED;
      return result;
    } catch (error) {
      if (error instanceof RpcError) throw error;
      const unreachable = this.ctx.outage.report('hello', error, (say) => this.ctx.logger.error({ address: this.address, err: String(error), ...say }, 'hello failed with an internal error'));
      this.afterHelloAnswer = () => this.closeWith(1011, unreachable ? 'server database unavailable' : 'internal error');
      throw new RpcError(-32603, 'InternalError');
    }
  }

  /** The row is Active for this session: register it; the HelloResult (undefined when the socket went away). */
  private async activated(accepted: HelloAcceptance, current: ActivatedRow): Promise<AgentHelloResult | undefined> {
    const { host_id, session_id } = accepted;
    this.guard.stop();
    this.host_id = host_id;
    this.session_id = session_id;
    this.ingest = this.ctx.ingest.session(host_id, session_id);
    if (this.ws.readyState !== this.ws.OPEN) {
      // The socket went away while the row was being activated: record the close now.
      this.state = 'active';
      await this.onCloseAuthenticated(1006, 'closed during hello');
      if (accepted.change.op === 'first_enrollment') await this.undoEnrollment(host_id, session_id, accepted.change);
      return undefined;
    }
    this.state = 'active';
    const answer = helloAnswer(accepted, current, { serverVersion: this.ctx.serverVersion, defaultConfig: this.ctx.settings.default_agent_config, now: this.ctx.now() });
    this.supportedProbes = new Set(accepted.hello.capabilities.supported_probes);
    this.configVersion = answer.config_version;
    this.ctx.registry.register(this);
    if (answer.lost !== undefined) {
      this.ctx.logger.warn({ host_id, ...answer.lost }, 'agent acked more than the database holds (restored from an older copy?): range lost');
      this.ctx.metrics.gaps.labels('lost').inc();
      this.ctx.metrics.gapEntries.labels('lost').inc(answer.lost.lost);
    }
    if (answer.storedConfigInvalid) this.ctx.logger.warn({ host_id }, 'stored agent config is invalid; sending the server default');
    this.afterHelloAnswer = () => {
      this.ctx.onHelloOk?.(this.clientKey);
      this.ctx.metrics.framesOut.labels('agent.hello').inc();
      this.ctx.metrics.handshakes.labels(accepted.outcome).inc();
      this.ctx.logger.info({ host_id, session_id, address: this.address, rotated: accepted.rotatedToken !== undefined, accepted_seq: answer.accepted_seq }, 'agent connected');
      // A staged config (apply_after in the future) goes out at once, so the agent applies it on time.
      if (answer.staged !== undefined) this.sendConfig(answer.staged.config, answer.staged.apply_after);
    };
    return answer.result;
  }

  /** The rotated token of a first enrollment never reached the agent: give it back its one-time token (DECISIONS G16). */
  private async undoEnrollment(host_id: string, session_id: string, hashes: { presented_hash: string; new_token_hash: string }): Promise<void> {
    try {
      const undone = await undoUndeliveredEnrollment(this.ctx.storage.db, host_id, session_id, hashes);
      if (undone) this.ctx.logger.warn({ host_id, address: this.address }, 'first enrollment not delivered (the agent closed before its answer): the host is NeverConnected again and its one-time token still enrolls it');
    } catch (error) {
      this.ctx.outage.failed('enrollment undo', error);
      this.ctx.logger.error({ host_id, err: String(error) }, `first enrollment not delivered and could not be undone: issue a new token for this host (agent issue --host-id ${host_id})`);
    }
  }

  private async metricsPush(ts: string, samples: { name: string; value: number; labels?: Record<string, string> }[]): Promise<MetricsPushResult> {
    try {
      const accepted = await this.ctx.storage.ingest.insertMetrics(this.host_id as string, ts, samples, this.ctx.now().toISOString());
      this.ctx.outage.succeeded(); // a write went through: an outage is over
      return { accepted, dropped: samples.length - accepted };
    } catch (error) {
      if (error instanceof UnknownHostError) throw new UnknownHostRpcError({ host_id: this.host_id as string });
      // The database out of reach, its login refused, read-only, its disk full: told by the
      // outage (one line, then one a minute) and answered as a refusal to retry, as logs.push
      // is (-32007 is not one of metrics.push's codes: the contract's -32020 with
      // retry_after_ms and the reason; DECISIONS H73). Anything else: -32603, logged once a minute.
      const outage = this.ctx.outage;
      const down = outage.report('metrics', error, (say) =>
        this.ctx.logger.error({ host_id: this.host_id, err: String(error), samples: samples.length, ...say }, 'metrics.push failed: samples not stored (-32603)'),
      );
      if (down) {
        const kind = outageKind(error) ?? 'unreachable';
        throw new BackpressureError({ retry_after_ms: outage.retryAfterMs(), reason: `${OUTAGE_WHY[kind]}; none of the samples was stored` });
      }
      throw new RpcError(-32603, 'InternalError');
    }
  }

  private async onClose(code: number, reason: string): Promise<void> {
    const wasActive = this.state === 'active';
    this.state = 'closed';
    this.guard.stop();
    this.ctx.registry.unregister(this);
    // The agent's own reason (final_seq=<n>) is peer text: logged and stored sanitised (H65).
    const said = peerText(reason);
    const recorded = this.serverClose ?? { code, reason: said };
    this.closeListener?.(code, said);
    if (wasActive) {
      this.ctx.metrics.disconnects.labels(String(recorded.code)).inc();
      await this.onCloseAuthenticated(recorded.code, recorded.reason);
      this.ctx.onSessionClosed?.(this);
    }
  }

  private async onCloseAuthenticated(code: number, reason: string): Promise<void> {
    this.ctx.registry.unregister(this);
    try {
      await this.ingest?.drain();
    } catch {
      // answered (or not) already; nothing else to do
    }
    const text = `${code} ${reason || CLOSE_NAMES[code] || 'closed'}`;
    try {
      await this.ctx.rows.run((db) => markDisconnected(db, this.host_id as string, this.session_id as string, text, { now: this.ctx.now().toISOString() }));
    } catch (error) {
      this.ctx.outage.report('disconnect', error, (say) => this.ctx.logger.warn({ host_id: this.host_id, err: String(error), ...say }, 'could not record the disconnect'));
    }
    this.ctx.logger.info({ host_id: this.host_id, session_id: this.session_id, reason: text }, 'agent disconnected');
  }
}

/** What a hello not checked in time counts as in the outage account (`failed_operations`). */
const HELLO_NOT_CHECKED_OP = 'hello not checked in time';


/** Thrown by the hello handler when the socket timed out or closed meanwhile: no answer goes out. */
const ABANDONED = new RpcError(-32603, 'InternalError');
