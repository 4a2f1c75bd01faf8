// A recorded WebSocket client connection for the server suite: every frame the server
// sends is kept (parsed when it is JSON), so a case can wait for "the response with id 7",
// "any error response", or the close, with a timeout instead of a fixed sleep. A typed
// peer (createAgentPeer) can sit on the same socket for the behavioural cases.
import WebSocket from 'ws';
import { SUBPROTOCOL, createAgentPeer, webSocketTransport, AgentClient, type AgentPeer } from '@cortex/agent-protocol';

export interface Received {
  text: string;
  json: unknown;
  at: number;
}

export interface CloseInfo {
  code: number;
  reason: string;
}

/** The upgrade was refused (HTTP status) or the connection failed before it opened. */
export class ConnectError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly errno?: string,
  ) {
    super(message);
  }
}

export interface OpenOptions {
  protocols?: string | string[] | undefined;
  timeoutMs?: number;
}

type Waiter = { pred: (m: Received) => boolean; resolve: (m: Received) => void };

export class Conn {
  readonly frames: Received[] = [];
  readonly closed: Promise<CloseInfo>;
  closeInfo: CloseInfo | undefined;
  private waiters: Waiter[] = [];
  private peerValue: AgentPeer | undefined;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => {
      ws.on('close', (code: number, reason: Buffer) => {
        this.closeInfo = { code, reason: reason.toString() };
        resolve(this.closeInfo);
      });
    });
    ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
      const text = isBinary ? '' : data.toString();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const m: Received = { text, json, at: Date.now() };
      this.frames.push(m);
      for (const w of [...this.waiters]) {
        if (w.pred(m)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
    ws.on('error', () => undefined);
  }

  static open(url: string, opts: OpenOptions = {}): Promise<Conn> {
    const protocols = opts.protocols === undefined ? SUBPROTOCOL : opts.protocols;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, protocols, { perMessageDeflate: false, handshakeTimeout: opts.timeoutMs ?? 5000, maxPayload: 64 * 1024 * 1024 });
      const conn = new Conn(ws);
      ws.once('open', () => resolve(conn));
      ws.once('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        ws.terminate();
        reject(new ConnectError(`upgrade refused with HTTP ${status}`, status));
      });
      ws.once('error', (err: Error & { code?: string }) => reject(new ConnectError(err.message, undefined, err.code)));
    });
  }

  /** The subprotocol the server confirmed ('' when none). */
  get protocol(): string {
    return this.ws.protocol;
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  sendText(text: string): void {
    this.ws.send(text);
  }

  sendJson(msg: unknown): void {
    this.ws.send(JSON.stringify(msg));
  }

  sendBinary(buf: Buffer): void {
    this.ws.send(buf, { binary: true });
  }

  /** A typed peer on this socket (created once). */
  get peer(): AgentPeer {
    this.peerValue ??= createAgentPeer(webSocketTransport(this.ws as never), { requestTimeoutMs: 10_000 });
    return this.peerValue;
  }

  get client(): AgentClient {
    return new AgentClient(this.peer);
  }

  /** Waits for a frame (already received or future) matching pred; undefined on timeout or close. */
  next(pred: (m: Received) => boolean, timeoutMs: number, from = 0): Promise<Received | undefined> {
    const have = this.frames.slice(from).find(pred);
    if (have) return Promise.resolve(have);
    return new Promise((resolve) => {
      const w: Waiter = {
        pred,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        resolve(undefined);
      }, timeoutMs);
      this.waiters.push(w);
      void this.closed.then(() => {
        // Give frames that arrived with the close a chance to match first.
        setImmediate(() => {
          if (this.waiters.includes(w)) {
            this.waiters = this.waiters.filter((x) => x !== w);
            clearTimeout(timer);
            resolve(undefined);
          }
        });
      });
    });
  }

  /** The response (result or error) with this id. */
  response(id: number | string | null, timeoutMs: number): Promise<Received | undefined> {
    return this.next((m) => isObj(m.json) && 'id' in m.json && m.json['id'] === id && !('method' in m.json), timeoutMs);
  }

  /** Resolves with the close, or undefined when the socket is still open after timeoutMs. */
  async waitClose(timeoutMs: number): Promise<CloseInfo | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const r = await Promise.race([this.closed, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)))]);
    clearTimeout(timer);
    return r;
  }

  close(code = 1000, reason = ''): void {
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
  }

  terminate(): void {
    this.ws.terminate();
  }

  /** Close and wait (briefly) for the close to complete. */
  async dispose(): Promise<void> {
    if (this.closeInfo) return;
    this.close(1000, 'conformance case done');
    if ((await this.waitClose(1000)) === undefined) this.terminate();
  }
}

export function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** "error -32602" / "result {...}" / "close 4001" — short descriptions for expected/seen. */
export function describeFrame(m: Received | undefined): string {
  if (m === undefined) return 'no response';
  if (!isObj(m.json)) return `non-JSON frame ${JSON.stringify(m.text.slice(0, 80))}`;
  const e = m.json['error'];
  if (isObj(e)) return `error ${String(e['code'])} ${String(e['message'] ?? '')}`.trim();
  if ('result' in m.json) return `result ${JSON.stringify(m.json['result']).slice(0, 160)}`;
  return `frame ${m.text.slice(0, 120)}`;
}

export function errorCode(m: Received | undefined): number | undefined {
  if (m === undefined || !isObj(m.json) || !isObj(m.json['error'])) return undefined;
  const c = m.json['error']['code'];
  return typeof c === 'number' ? c : undefined;
}

export function describeClose(c: CloseInfo | undefined): string {
  return c === undefined ? 'connection still open' : `close ${c.code}${c.reason ? ` "${c.reason}"` : ''}`;
}
