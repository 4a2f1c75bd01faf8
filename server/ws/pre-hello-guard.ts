// Everything a socket may do before its hello succeeded (DESIGN.md 5.8, DECISIONS H7):
// - UpgradeGate: which upgrade requests get a WebSocket at all (starting/draining 503, a
//   browser Origin 403, failed-hello throttle and per-address rate limit 429, no cortex.v1
//   subprotocol 400);
// - PreHelloGuard: per socket, the bytes allowed before the hello (the hello frame itself
//   plus LIMITS.pre_hello_bytes of anything else) and the hello timer;
// - parseHello: whether the first frame is a well-formed agent.hello request.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { LIMITS, SUBPROTOCOL, validateJsonRpcRequest, type Frame } from '@cortex/agent-protocol';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';
import { HelloThrottle } from '../security/hello-throttle.js';
import type { ServerSettings } from '../settings.js';
import { TrustedProxies, UpgradeRateLimiter } from './net.js';
import { isPlainRequest } from './session-peer.js';

/** Largest WebSocket frame header (2 + 8 length + 4 mask): counted with each frame. */
export const MAX_HEADER = 14;

/** Hello failures the throttle counts: wrong, revoked or rotated-away tokens. */
const AUTH_CODES = new Set([-32001, -32002, -32005]);

/** Answers an upgrade request with a plain HTTP error and ends the socket. */
export function refuse(socket: Socket, status: number, text: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: message });
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}

/** Which upgrade requests get a WebSocket, and the failed-hello bookkeeping per client address. */
export class UpgradeGate {
  readonly proxies: TrustedProxies;
  private readonly limiter: UpgradeRateLimiter;
  // Failed hellos per client address, loopback included (DECISIONS H7).
  private readonly throttle: HelloThrottle;
  /** Upgrades wait until the server joined the cluster (its id and lease row exist). */
  joined = false;
  draining = false;

  constructor(
    private readonly settings: ServerSettings,
    private readonly logger: Logger,
    private readonly metrics: ServerMetrics,
  ) {
    this.proxies = new TrustedProxies(settings.trusted_proxies);
    this.limiter = new UpgradeRateLimiter(settings.upgrades_per_minute);
    this.throttle = new HelloThrottle(settings.failed_hellos_before_throttle);
  }

  /** clientKey per upgrade request (admit() and the connection both ask). */
  private readonly keys = new WeakMap<IncomingMessage, string>();

  /** The client address the failed-hello throttle counts against. */
  clientKey(req: IncomingMessage): string {
    let key = this.keys.get(req);
    if (key === undefined) {
      key = this.proxies.clientAddress(req) ?? (req.socket.remoteAddress ?? '').replace(/^::ffff:/i, '');
      this.keys.set(req, key);
    }
    return key;
  }

  helloFailed(key: string, code: number): void {
    if (!AUTH_CODES.has(code)) return;
    const delay = this.throttle.failed(key);
    this.metrics.helloFailures.inc();
    if (delay > 0) this.logger.warn({ address: key, retry_after_ms: delay }, 'failed hellos from this address: further upgrades get 429 for a while');
  }

  helloOk(key: string): void {
    this.throttle.succeeded(key);
  }

  /** True when the upgrade may go on; otherwise the socket was answered and ended. */
  admit(req: IncomingMessage, socket: Socket): boolean {
    if (!this.joined) return refuse(socket, 503, 'Service Unavailable', 'the server is starting; reconnect later', { 'Retry-After': '1' }), false;
    if (this.draining) return refuse(socket, 503, 'Service Unavailable', 'the server is shutting down; reconnect later', { 'Retry-After': '5' }), false;
    // A web page's upgrade carries Origin: refused unless allowed (DECISIONS H7).
    const origin = req.headers['origin'];
    if (origin !== undefined && !this.settings.allowed_origins.includes(origin)) {
      this.metrics.upgradesRefused.labels('origin').inc();
      this.logger.warn({ origin }, 'upgrade with a browser Origin refused (403); allow it with --allow-origin');
      refuse(socket, 403, 'Forbidden', 'upgrades from web pages are refused; an agent sends no Origin header (see --allow-origin)');
      return false;
    }
    const waitMs = this.throttle.retryAfterMs(this.clientKey(req));
    if (waitMs > 0) {
      this.metrics.upgradesRefused.labels('failed_hellos').inc();
      refuse(socket, 429, 'Too Many Requests', 'too many failed hellos from this address; retry later', { 'Retry-After': String(Math.ceil(waitMs / 1000)) });
      return false;
    }
    const client = this.proxies.clientAddress(req);
    if (client !== undefined && !this.limiter.allow(client)) {
      this.logger.warn({ address: client }, 'upgrade rate limit exceeded (429)');
      refuse(socket, 429, 'Too Many Requests', 'too many connection attempts from this address; retry later', { 'Retry-After': '60' });
      return false;
    }
    const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((s) => s.trim());
    if (!offered.includes(SUBPROTOCOL)) {
      this.logger.info({ address: client ?? req.socket.remoteAddress }, 'upgrade without subprotocol cortex.v1 refused (400)');
      refuse(socket, 400, 'Bad Request', `offer the WebSocket subprotocol ${SUBPROTOCOL}`);
      return false;
    }
    return true;
  }
}

/** Where a connection is: before its hello, waiting for the verdict, activating the row, in session, closed. */
export type ConnectionState = 'new' | 'hello_pending' | 'activating' | 'active' | 'closed';

/** What the guard asks of its socket. */
export interface GuardedSocket {
  state(): ConnectionState;
  /** More bytes than allowed before the hello: close 1009. */
  oversize(): void;
  /** hello_timeout_ms passed (the socket closes 4000 unless its hello was authenticated). */
  timedOut(): void;
  /** The first frame is the hello: hand it to the peer. */
  hello(text: string): void;
  /** Any other frame before the session: the peer answers it (-32700, -32600, -32000, ...). */
  deliver(frame: Frame): void;
  /** After such a frame: the socket is not authenticated, close 4001. */
  unauthenticated(): void;
}

/** Per socket: the bytes allowed before the hello, and the hello timer. */
export class PreHelloGuard {
  private rawBytes = 0;
  private nonHelloBytes = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly socket: GuardedSocket,
    helloTimeoutMs: number,
  ) {
    this.timer = setTimeout(() => this.socket.timedOut(), helloTimeoutMs);
  }

  private get preHello(): boolean {
    const state = this.socket.state();
    return state !== 'active' && state !== 'closed';
  }

  /** Raw bytes off the TCP socket: everything before hello is bounded, frames not yet complete included. */
  data(bytes: number): void {
    if (!this.preHello) return;
    this.rawBytes += bytes;
    if (this.rawBytes > LIMITS.max_hello_frame_bytes + LIMITS.pre_hello_bytes + 2 * MAX_HEADER) this.socket.oversize();
  }

  /** A frame (or ping/pong) that is not the hello. */
  count(bytes: number): void {
    if (!this.preHello) return;
    this.nonHelloBytes += bytes;
    if (this.nonHelloBytes > LIMITS.pre_hello_bytes) this.socket.oversize();
  }

  /**
   * A frame before the session: the first one is the hello (up to max_hello_frame_bytes) or
   * counts against pre_hello_bytes; whatever else comes is answered by the peer, and then the
   * socket closes 4001 (it is not authenticated).
   */
  frame(data: Buffer, isBinary: boolean): void {
    const sock = this.socket;
    if (sock.state() === 'closed') return;
    if (isBinary) return sock.deliver({ kind: 'binary', byteLength: data.length });
    const text = data.toString();
    if (sock.state() === 'new') {
      if (data.length > LIMITS.max_hello_frame_bytes) return sock.oversize();
      if (parseHello(text) !== undefined) return sock.hello(text);
    }
    // hello_pending / activating: anything else is answered by the peer (-32000 etc.).
    this.count(data.length + MAX_HEADER);
    if (sock.state() === 'closed') return;
    sock.deliver({ kind: 'text', text });
    // Whatever the peer answered (-32700, -32600, -32601, -32000), the socket is not
    // authenticated: close 4001.
    if (this.preHello) sock.unauthenticated();
  }

  /** The hello authenticated (or the socket closed): the timer no longer applies. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The hello frame, when the first frame is a well-formed agent.hello request. */
export function parseHello(text: string): { id: string | number; params: unknown } | undefined {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return undefined;
  const m = msg as { method?: unknown; id?: unknown; params?: unknown };
  if (m.method !== 'agent.hello' || !(isPlainRequest(msg) || validateJsonRpcRequest(msg))) return undefined;
  if (typeof m.id !== 'string' && typeof m.id !== 'number') return undefined;
  return { id: m.id, params: m.params };
}
