// A TCP proxy on 127.0.0.1 between agents and a server, for fault injection.
//
//   const proxy = await TcpProxy.start({ targetPort });
//   agent → ws://127.0.0.1:${proxy.port}/ws/agent → proxy → server
//
// Faults (each counted in `proxy.faults` by kind):
//   stall(ms?)       stop forwarding in both directions without closing (half-open from
//                    both ends' view); for `ms`, or until resume(). New connections
//                    accepted while stalled are stalled too.
//   cut()            destroy both sockets of every live pair (FIN/RST as the kernel sees fit).
//   delay(ms)        hold every forwarded chunk `ms` before writing it (0 = off).
//   resetMidFrame()  on the next chunk in the chosen direction, forward only part of it,
//                    then RST both sockets (socket.resetAndDestroy()).
//   setTarget(port)  new connections go to another upstream port (server restarted on port 0).
// Every accepted client connection is recorded in `attempts` (ms timestamps), so a test
// can measure the reconnect rate.

import net from 'node:net';
import { EventEmitter } from 'node:events';

export type FaultKind = 'stall' | 'cut' | 'delay' | 'reset_mid_frame' | 'upstream_refused';
export type Direction = 'to_server' | 'to_client';

interface Pair {
  id: number;
  client: net.Socket;
  server: net.Socket;
  /** Chunks held while stalled or delayed, per direction, forwarded in order on resume. */
  held: { to_server: Buffer[]; to_client: Buffer[] };
  bytes: { to_server: number; to_client: number };
  closed: boolean;
  /** One side closed while the link was stalled: closed for good on resume. */
  closeOnResume: boolean;
}

export interface ProxyOptions {
  targetPort: number;
  targetHost?: string;
  /** Listen port (default 0: any free port). */
  port?: number;
}

export class TcpProxy extends EventEmitter {
  readonly faults: Record<FaultKind, number> = { stall: 0, cut: 0, delay: 0, reset_mid_frame: 0, upstream_refused: 0 };
  /** Accept times (Date.now()) of every client connection. */
  readonly attempts: number[] = [];
  private readonly pairs = new Set<Pair>();
  private nextId = 1;
  private stalled = false;
  private stallTimer: NodeJS.Timeout | null = null;
  private delayMs = 0;
  private pendingReset: { direction: Direction; keepBytes: number } | null = null;
  private targetPort: number;
  private readonly targetHost: string;

  private constructor(
    private readonly server: net.Server,
    options: ProxyOptions,
  ) {
    super();
    this.targetPort = options.targetPort;
    this.targetHost = options.targetHost ?? '127.0.0.1';
  }

  static async start(options: ProxyOptions): Promise<TcpProxy> {
    const server = net.createServer();
    const proxy = new TcpProxy(server, options);
    server.on('connection', (c) => proxy.accept(c));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  url(path = '/ws/agent'): string {
    return `ws://127.0.0.1:${this.port}${path}`;
  }

  /** Live connection pairs. */
  get connections(): number {
    return this.pairs.size;
  }

  setTarget(port: number): void {
    this.targetPort = port;
  }

  /** Stop forwarding both ways without closing; resumes after `ms` when given. */
  stall(ms?: number): void {
    this.faults.stall++;
    this.stalled = true;
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = ms === undefined ? null : setTimeout(() => this.resume(), ms);
    this.emit('fault', 'stall');
  }

  resume(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = null;
    this.stalled = false;
    for (const p of [...this.pairs]) {
      if (p.closeOnResume) {
        this.close(p, false);
        continue;
      }
      this.flush(p, 'to_server');
      this.flush(p, 'to_client');
      p.client.resume();
      p.server.resume();
    }
    this.emit('resumed');
  }

  /** Destroys both sockets of every live pair. Returns how many pairs were cut. */
  cut(): number {
    let n = 0;
    for (const p of [...this.pairs]) {
      n++;
      this.close(p, false);
    }
    if (n > 0) this.faults.cut++;
    this.emit('fault', 'cut');
    return n;
  }

  /** Per-chunk forwarding delay (0 disables). */
  delay(ms: number): void {
    if (ms > 0) this.faults.delay++;
    this.delayMs = ms;
  }

  /**
   * Arms a reset: the next chunk flowing in `direction` is forwarded only up to
   * `keepBytes` (at least 1 byte is withheld), then both sockets are reset.
   */
  resetMidFrame(direction: Direction = 'to_server', keepBytes = 7): void {
    this.pendingReset = { direction, keepBytes };
  }

  get resetArmed(): boolean {
    return this.pendingReset !== null;
  }

  async close(): Promise<void>;
  close(p: Pair, reset: boolean): void;
  close(p?: Pair, reset = false): Promise<void> | void {
    if (p !== undefined) {
      if (p.closed) return;
      p.closed = true;
      this.pairs.delete(p);
      if (reset) {
        p.client.resetAndDestroy();
        p.server.resetAndDestroy();
      } else {
        p.client.destroy();
        p.server.destroy();
      }
      return;
    }
    if (this.stallTimer) clearTimeout(this.stallTimer);
    for (const pair of [...this.pairs]) this.close(pair, false);
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.attempts.push(Date.now());
    const server = net.connect({ port: this.targetPort, host: this.targetHost });
    const pair: Pair = { id: this.nextId++, client, server, held: { to_server: [], to_client: [] }, bytes: { to_server: 0, to_client: 0 }, closed: false, closeOnResume: false };
    this.pairs.add(pair);
    client.setNoDelay(true);
    server.setNoDelay(true);
    let upstreamOk = false;
    server.once('connect', () => (upstreamOk = true));
    client.on('data', (d: Buffer) => this.forward(pair, 'to_server', d));
    server.on('data', (d: Buffer) => this.forward(pair, 'to_client', d));
    const end = (s: net.Socket) => () => {
      // Half-close propagation: the other side gets FIN after what is held.
      if (pair.closed) return;
      if (this.stalled) return; // a stalled link carries nothing, not even FIN
      s.end();
    };
    client.on('end', end(server));
    server.on('end', end(client));
    client.on('error', () => this.close(pair, false));
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (!upstreamOk && err.code === 'ECONNREFUSED') this.faults.upstream_refused++;
      this.close(pair, false);
    });
    const onClose = () => {
      if (this.stalled) pair.closeOnResume = true;
      else this.close(pair, false);
    };
    client.on('close', onClose);
    server.on('close', onClose);
  }

  private forward(p: Pair, dir: Direction, chunk: Buffer): void {
    if (p.closed) return;
    p.bytes[dir] += chunk.length;
    if (this.pendingReset && this.pendingReset.direction === dir) {
      const keep = Math.max(0, Math.min(this.pendingReset.keepBytes, chunk.length - 1));
      this.pendingReset = null;
      this.faults.reset_mid_frame++;
      const dst = dir === 'to_server' ? p.server : p.client;
      if (keep > 0) dst.write(chunk.subarray(0, keep));
      // let the partial chunk leave before the RST
      setImmediate(() => this.close(p, true));
      this.emit('fault', 'reset_mid_frame');
      return;
    }
    if (this.stalled || this.delayMs > 0 || p.held[dir].length > 0) {
      p.held[dir].push(chunk);
      if (this.stalled) {
        // stop reading: a stalled link applies TCP back-pressure instead of buffering forever
        (dir === 'to_server' ? p.client : p.server).pause();
        return;
      }
      if (p.held[dir].length === 1) setTimeout(() => this.flush(p, dir), this.delayMs);
      return;
    }
    (dir === 'to_server' ? p.server : p.client).write(chunk);
  }

  private flush(p: Pair, dir: Direction): void {
    if (p.closed || this.stalled) return;
    const dst = dir === 'to_server' ? p.server : p.client;
    if (this.delayMs > 0) {
      const c = p.held[dir].shift();
      if (c !== undefined) dst.write(c);
      if (p.held[dir].length > 0) setTimeout(() => this.flush(p, dir), this.delayMs);
      return;
    }
    for (const c of p.held[dir].splice(0)) dst.write(c);
  }
}
