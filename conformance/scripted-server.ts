// The scripted server of the agent suite: a WebSocket endpoint on 127.0.0.1:0 that speaks
// the server side through the generated typed peer (createServerPeer) and records what the
// agent does. The suite decides each hello's answer and whether pushes are acked at once
// ("ack") or held unanswered ("hold", to leave entries unacked before a kill).
//
//   upgrade ─ refuse budget > 0? ─▶ HTTP 503 (backoff measurements)
//     │ no cortex.v1 offered ─▶ HTTP 400
//     │ (each attempt records its subprotocols and Sec-WebSocket-Extensions offer; none is accepted)
//     ▼
//   Session: first frame must be agent.hello (else -32000 + 4001)
//     agent.hello ─▶ suite.onHello(params) ─▶ result | error + close code
//     logs.push   ─▶ recorded; a push starting beyond a refused one of this session ─▶ -32020
//                    with resend_from_seq until a push starts at or before it (DECISIONS B6a);
//                    pushHook (the sender cases): an error, an ack of a chosen up_to_seq, or
//                    held; else ack mode: commit (seq > accepted) and answer up_to_seq;
//                    hold mode: kept unanswered until release()
//     metrics.push, agent.heartbeat ─▶ recorded
//   freezeAtFirstFrame (the rotated-token case): the first frame after a HelloResult that carried
//   rotated_token calls it (the suite SIGKILLs the agent there) and nothing of that session is
//   answered any more
//   a frame from the agent over max_frame_bytes ─▶ close 1009 (the peer), recorded as `oversize`
//   with its size (frames over OVERSIZE_MEASURED_BYTES are cut off by ws: size unknown)
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  AuthRequiredError,
  BackpressureError,
  LIMITS,
  RpcError,
  SUBPROTOCOL,
  ServerClient,
  createServerPeer,
  registerServerHandlers,
  validateAgentHelloParams,
  toIssues,
  webSocketTransport,
  type AgentConfig,
  type AgentHeartbeatParams,
  type AgentHelloParams,
  type AgentHelloResult,
  type LogsPushParams,
  type LogsPushResult,
  type MetricsPushResult,
  type PeerEvent,
  type ServerPeer,
} from '@cortex/agent-protocol';

/** A hello's answer: a result, an error (then the close code), or none at all ('no-answer': the agent's hello timeout is judged). */
export type HelloDecision = { result: AgentHelloResult } | { error: RpcError; closeCode: number } | 'no-answer';

export interface UpgradeAttempt {
  at: number;
  protocols: string[];
  /** The Sec-WebSocket-Extensions header as offered ('' when absent). */
  extensions: string;
  refused: number | undefined;
}

/**
 * Frames from the agent up to this size reach the peer, which measures them and closes an
 * oversize one with 1009 (so the report can name the size); larger ones ws refuses (1009) unread.
 */
export const OVERSIZE_MEASURED_BYTES = 4 * LIMITS.max_frame_bytes;

/** A frame the agent sent over max_frame_bytes: its size in bytes (undefined: over OVERSIZE_MEASURED_BYTES). */
export interface OversizeFrame {
  bytes: number | undefined;
  limit: number;
  at: number;
}

export interface PushRecord {
  session: number;
  at: number;
  params: LogsPushParams;
  acked: boolean;
  /** When the push was answered (result or error); undefined while unanswered. */
  answeredAt?: number;
  /** The error code it was answered with, if any. */
  refusedWith?: number;
  /** The up_to_seq it was answered with, if acked. */
  upTo?: number;
  /** A refused push: the seq the agent is asked to resend from (its seq_start, or the -32020's resend_from_seq). */
  resendFrom?: number;
  /** logs.push requests of this session unanswered when this one arrived (itself included). */
  inFlight: number;
}

/**
 * What the sender cases answer a logs.push with: an error (the push is refused: B6a applies to
 * the pushes behind it), an ack with a chosen up_to_seq after committing up to `commitTo`
 * (a partial ack, an ack beyond what was sent), or 'hold' (left unanswered). undefined: the
 * ordinary answer.
 */
export type PushAnswer = { error: RpcError } | { upTo: number; commitTo: number } | 'hold' | undefined;

/** Predicates waited on until they hold, re-checked on every notify(); false at the timeout. */
class Waiters {
  private checks: Array<() => void> = [];

  until(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    if (pred()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (pred()) done(true);
      };
      const done = (v: boolean) => {
        clearTimeout(timer);
        this.checks = this.checks.filter((c) => c !== check);
        resolve(v);
      };
      const timer = setTimeout(() => done(pred()), timeoutMs);
      this.checks.push(check);
    });
  }

  notify(): void {
    for (const c of [...this.checks]) c();
  }
}

/** Committed entries and the host's accepted_seq: survive sessions, like a database. */
export class Store {
  accepted = 0;
  readonly messages = new Map<number, string>();
  /** A seq that arrived again with a different message (a reused seq). */
  readonly reused: { seq: number; first: string; later: string }[] = [];

  /** Every pushed entry, committed or not: detects a seq carrying two different messages. */
  see(params: LogsPushParams): void {
    for (const e of params.entries) {
      const known = this.messages.get(e.seq);
      if (known === undefined) this.messages.set(e.seq, e.message);
      else if (known !== e.message) this.reused.push({ seq: e.seq, first: known, later: e.message });
    }
  }

  commit(params: LogsPushParams): number {
    return this.commitTo(params.entries.at(-1)?.seq ?? 0);
  }

  /** Commits up to `seq` (the entries of a push up to there). */
  commitTo(seq: number): number {
    if (seq > this.accepted) this.accepted = seq;
    return this.accepted;
  }
}

export class Session {
  readonly openedAt = Date.now();
  hello: AgentHelloParams | undefined;
  helloRaw: unknown;
  helloIssues: string | undefined;
  helloAnswered: 'result' | 'error' | undefined;
  /** When the hello was answered (result or error). */
  helloAnsweredAt: number | undefined;
  /** The rotated_token this session's HelloResult carried, if any. */
  rotatedToken: string | undefined;
  /** The agent's first frame after its HelloResult: when, and what it was (a method name, or "a response"). */
  firstFrame: { at: number; what: string } | undefined;
  /** Set by freezeAtFirstFrame: nothing of this session is answered any more (its agent is being killed). */
  frozen = false;
  /** Responses from the agent (to the suite's probe.requests and other requests): any answer counts. */
  responses = 0;
  /** When a hello left unanswered ('no-answer') arrived. */
  helloHeldAt: number | undefined;
  /** accepted_seq returned in this session's HelloResult. */
  acceptedAtHello: number | undefined;
  /** The config this session's HelloResult carried. */
  helloConfig: AgentConfig | undefined;
  readonly pushes: PushRecord[] = [];
  readonly heartbeats: { at: number; params: AgentHeartbeatParams }[] = [];
  readonly metrics: { at: number }[] = [];
  readonly events: PeerEvent[] = [];
  close: { code: number; reason: string; byServer: boolean; at: number } | undefined;
  /** Set when the agent sent a frame over max_frame_bytes (the session was then closed 1009 by us). */
  oversize: OversizeFrame | undefined;
  readonly closed: Promise<{ code: number; reason: string; byServer: boolean; at: number }>;
  readonly peer: ServerPeer;
  readonly client: ServerClient;
  private held: { params: LogsPushParams; resolve: (r: LogsPushResult) => void; record: PushRecord }[] = [];
  /** logs.push requests unanswered now, and the most there were since resetMaxInFlight(). */
  inFlight = 0;
  maxInFlight = 0;
  /** seq_start of a refused push: later pushes starting beyond it are refused (B6a). */
  refusedFrom: number | undefined;
  private closingByServer = false;
  private readonly waiters = new Waiters();

  constructor(
    readonly index: number,
    readonly ws: WebSocket,
    private readonly server: ScriptedServer,
  ) {
    this.closed = new Promise((resolve) => {
      ws.on('close', (code: number, reason: Buffer) => {
        this.close = { code, reason: reason.toString(), byServer: this.closingByServer, at: Date.now() };
        this.changed();
        resolve(this.close);
      });
    });
    ws.on('error', (err: Error & { code?: string }) => {
      // ws refuses a frame over its maxPayload (OVERSIZE_MEASURED_BYTES) itself, with 1009
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.noteOversize(undefined);
    });
    // Before the peer's own listener (registered when it is created below): the frame is seen
    // (and the session frozen) before anything answers it.
    ws.on('message', (data: Buffer, isBinary: boolean) => this.sawFrame(data, isBinary));
    this.peer = createServerPeer(webSocketTransport(ws as never), {
      requestTimeoutMs: 10_000,
      maxFrameBytes: LIMITS.max_frame_bytes,
      intercept: (call) => {
        if (this.helloAnswered !== 'result' && call.method !== 'agent.hello') {
          setImmediate(() => this.closeWith(4001, 'agent.hello required'));
          return new AuthRequiredError({ reason: 'send agent.hello first' });
        }
        if (call.method === 'agent.hello') {
          this.helloRaw = call.params;
          if (!validateAgentHelloParams(call.params)) this.helloIssues = JSON.stringify(toIssues(validateAgentHelloParams.errors).slice(0, 3));
        }
        return undefined;
      },
      onEvent: (e) => {
        this.events.push(e);
        // the peer closes 1009 (frame_too_large) or 1003 (binary_frame) itself: a close by us
        if (e.type === 'frame_too_large') this.noteOversize(e.byteLength);
        if (e.type === 'binary_frame') this.closingByServer = true;
        this.changed();
      },
    });
    this.client = new ServerClient(this.peer);
    registerServerHandlers(this.peer, {
      'agent.hello': (params, ctx) => {
        this.hello = params;
        const d = this.server.onHello(params, this);
        if (d === 'no-answer') {
          this.helloHeldAt = Date.now();
          this.changed();
          return new Promise<AgentHelloResult>(() => undefined); // never answered
        }
        this.helloAnsweredAt = Date.now();
        if ('result' in d) {
          this.helloAnswered = 'result';
          this.rotatedToken = d.result.rotated_token ?? undefined;
          this.acceptedAtHello = d.result.accepted_seq;
          this.helloConfig = d.result.config;
          this.changed();
          return d.result;
        }
        this.helloAnswered = 'error';
        this.peer.sendError(ctx.id as number, d.error);
        this.closeWith(d.closeCode, d.error.message);
        this.changed();
        return new Promise<AgentHelloResult>(() => undefined); // answered above
      },
      'logs.push': (params) => {
        this.inFlight++;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        const record: PushRecord = { session: this.index, at: Date.now(), params, acked: false, inFlight: this.inFlight };
        this.pushes.push(record);
        this.server.store.see(params);
        if (this.frozen) return new Promise<LogsPushResult>(() => undefined); // never answered: the agent is being killed
        if (this.refusedFrom !== undefined) {
          if (params.seq_start > this.refusedFrom) {
            record.resendFrom = this.refusedFrom;
            this.answered(record, BackpressureError.code);
            throw new BackpressureError({
              retry_after_ms: this.server.followOnRetryMs,
              reason: `an earlier push of this session (from seq ${this.refusedFrom}) was refused; resend from seq ${this.refusedFrom}`,
              resend_from_seq: this.refusedFrom,
            });
          }
          this.refusedFrom = undefined;
        }
        const answer: PushAnswer = this.server.pushHook?.(params, this);
        if (answer !== undefined && answer !== 'hold' && 'error' in answer) {
          this.refusedFrom = params.seq_start;
          record.resendFrom = params.seq_start;
          this.answered(record, answer.error.code);
          throw answer.error;
        }
        if (answer !== undefined && answer !== 'hold') {
          record.acked = true;
          this.server.store.commitTo(answer.commitTo);
          this.answered(record, undefined, answer.upTo);
          return { up_to_seq: answer.upTo, received_at: new Date().toISOString() };
        }
        this.changed();
        if (answer === 'hold' || this.server.ackMode === 'hold') return new Promise<LogsPushResult>((resolve) => this.held.push({ params, resolve, record }));
        return this.commit(params, record);
      },
      'metrics.push': (params) => {
        this.metrics.push({ at: Date.now() });
        if (this.frozen) return new Promise<MetricsPushResult>(() => undefined);
        return { accepted: params.samples.length, dropped: 0 };
      },
      'agent.heartbeat': (params) => {
        this.heartbeats.push({ at: Date.now(), params });
        this.changed();
      },
    });
  }

  get isOpen(): boolean {
    return this.close === undefined;
  }

  /** Every frame from the agent, before the peer reads it: counts its responses, notes its first frame after the HelloResult. */
  private sawFrame(data: Buffer, isBinary: boolean): void {
    let what = isBinary ? 'binary frame' : 'frame';
    if (!isBinary) {
      try {
        const m = JSON.parse(data.toString()) as Record<string, unknown>;
        if (typeof m['method'] === 'string') what = m['method'];
        else if ('id' in m && ('result' in m || 'error' in m)) {
          what = 'response';
          this.responses++;
        }
      } catch {
        // not JSON: the peer answers it
      }
    }
    if (this.helloAnswered !== 'result' || this.firstFrame !== undefined) return;
    this.firstFrame = { at: Date.now(), what };
    const freeze = this.server.freezeAtFirstFrame;
    if (this.rotatedToken !== undefined && freeze !== undefined) {
      this.frozen = true;
      freeze(this, what);
    }
    this.changed();
  }

  private noteOversize(bytes: number | undefined): void {
    this.closingByServer = true;
    this.oversize ??= { bytes, limit: LIMITS.max_frame_bytes, at: Date.now() };
  }

  /**
   * How the session ended, for a case's "seen": who closed it with which code, and why when the
   * agent sent a frame over the limit (so a case that lost its session says so, not "1006").
   */
  describeClose(): string {
    if (this.close === undefined) return 'still open';
    const c = this.close;
    const base = `${c.byServer ? 'the scripted server' : 'the agent'} closed it ${c.code}${c.reason ? ` ${JSON.stringify(c.reason)}` : ''}`;
    return this.oversize ? `${base}: ${oversizeText(this.oversize)}` : base;
  }

  private commit(params: LogsPushParams, record: PushRecord): LogsPushResult {
    record.acked = true;
    const up_to_seq = this.server.store.commit(params);
    this.answered(record, undefined, up_to_seq); // waiters on accepted_seq see the commit now, not at the next frame
    return { up_to_seq, received_at: new Date().toISOString() };
  }

  private answered(record: PushRecord, code: number | undefined, upTo?: number): void {
    record.answeredAt = Date.now();
    if (code !== undefined) record.refusedWith = code;
    if (upTo !== undefined) record.upTo = upTo;
    this.inFlight--;
    this.changed();
  }

  /** Starts a new in-flight high-water mark (at the pushes unanswered now). */
  resetMaxInFlight(): void {
    this.maxInFlight = this.inFlight;
  }

  /** Commit and answer the held pushes (in order). */
  release(): void {
    for (const h of this.held.splice(0)) h.resolve(this.commit(h.params, h.record));
  }

  get heldCount(): number {
    return this.held.length;
  }

  closeWith(code: number, reason = ''): void {
    if (this.close) return;
    this.closingByServer = true;
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
  }

  sendRaw(msg: unknown): void {
    if (this.isOpen) this.ws.send(JSON.stringify(msg));
  }

  /** Sends one text frame as it is (no size check: the frame-limit cases send one over the limit). */
  sendText(text: string): void {
    if (this.isOpen) this.ws.send(text);
  }

  /** Sends one binary frame (V1 allows none: the agent must close 1003). */
  sendBinary(bytes: Uint8Array): void {
    if (this.isOpen) this.ws.send(bytes, { binary: true });
  }

  /** Resolves when pred() holds (checked on every recorded change), or false after timeoutMs. */
  until(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    return this.waiters.until(pred, timeoutMs);
  }

  private changed(): void {
    this.waiters.notify();
    this.server.changed();
  }
}

export class ScriptedServer {
  readonly sessions: Session[] = [];
  readonly attempts: UpgradeAttempt[] = [];
  readonly store = new Store();
  ackMode: 'ack' | 'hold' = 'ack';
  /** The sender cases' answers (see PushAnswer); undefined: the ordinary answer. */
  pushHook: ((params: LogsPushParams, session: Session) => PushAnswer) | undefined;
  /** retry_after_ms of the -32020 that refuses a push behind a refused one (B6a). */
  followOnRetryMs = 100;
  /**
   * Called at the agent's first frame after a HelloResult that carried rotated_token (with what
   * the frame is); that session is frozen first: nothing of it is answered any more. The
   * rotated-token case SIGKILLs the agent there.
   */
  freezeAtFirstFrame: ((session: Session, what: string) => void) | undefined;
  /** Upgrades still to refuse with HTTP 503 (backoff measurements). */
  refuseBudget = 0;
  onHello: (params: AgentHelloParams, session: Session) => HelloDecision = () => {
    throw new Error('no hello handler');
  };
  private http!: http.Server;
  private wss!: WebSocketServer;
  private readonly waiters = new Waiters();
  url = '';

  async start(): Promise<void> {
    this.wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: OVERSIZE_MEASURED_BYTES, handleProtocols: (p) => (p.has(SUBPROTOCOL) ? SUBPROTOCOL : false) });
    this.http = http.createServer((_req, res) => res.writeHead(404).end());
    this.http.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
      // Node's HTTP server drops its error listener from upgrade sockets: an agent that resets
      // the connection while we refuse it (503 during the backoff case) must not crash us.
      socket.on('error', () => undefined);
      const protocols = String(req.headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const attempt: UpgradeAttempt = { at: Date.now(), protocols, extensions: String(req.headers['sec-websocket-extensions'] ?? ''), refused: undefined };
      this.attempts.push(attempt);
      const refuse = (status: number, text: string) => {
        attempt.refused = status;
        socket.end(`HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
        this.changed();
      };
      if ((req.url ?? '').split('?')[0] !== LIMITS.ws_path) return refuse(404, 'Not Found');
      if (!protocols.includes(SUBPROTOCOL)) return refuse(400, 'Bad Request');
      if (this.refuseBudget > 0) {
        this.refuseBudget--;
        return refuse(503, 'Service Unavailable');
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.sessions.push(new Session(this.sessions.length, ws, this));
        this.changed();
      });
    });
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', () => resolve()));
    const port = (this.http.address() as AddressInfo).port;
    this.url = `ws://127.0.0.1:${port}${LIMITS.ws_path}`;
  }

  get current(): Session | undefined {
    return this.sessions.at(-1);
  }

  /** Resolves when pred() holds, or false after timeoutMs. */
  until(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    return this.waiters.until(pred, timeoutMs);
  }

  /** The next session opened after `count` sessions, or undefined after timeoutMs. */
  async nextSession(count: number, timeoutMs: number): Promise<Session | undefined> {
    const ok = await this.until(() => this.sessions.length > count, timeoutMs);
    return ok ? this.sessions[count] : undefined;
  }

  changed(): void {
    this.waiters.notify();
  }

  async stop(): Promise<void> {
    for (const s of this.sessions) if (s.isOpen) s.ws.terminate();
    this.http.closeAllConnections?.();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }
}

/** "the agent sent a frame of N bytes, over the max_frame_bytes limit of L (…)" */
export function oversizeText(o: OversizeFrame): string {
  const size = o.bytes === undefined ? `over ${OVERSIZE_MEASURED_BYTES} bytes` : `of ${o.bytes} bytes`;
  return `the agent sent a frame ${size}, over the max_frame_bytes limit of ${o.limit}: closed 1009 (PROTOCOL.md#websocket-close-codes), see agent/frames-within-limit`;
}
