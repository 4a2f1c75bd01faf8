// Hitting the file-descriptor limit is logged (DECISIONS H10). At the limit libuv drops new
// connections itself (its EMFILE trick) without telling Node, so there is no error event to
// log: instead the open descriptors are counted (Linux: /proc/self/fd) against the soft limit
// (RLIMIT_NOFILE, /proc/self/limits) and a line is logged when they reach 90 % of it, at most
// every 10 s. Elsewhere it does nothing.
//
// Listing /proc/self/fd costs about 1 µs per open descriptor: ~15 ms with 15,000 agents
// connected. It was taken on every connection once above 75 % of the limit, so a server with
// 15,000 of its 20,000 descriptors in use spent its CPU listing them while a fleet
// reconnected: hellos waited past their timers, every agent retried, and the server never
// recovered (DECISIONS G14). Now the server's sockets are counted as they open and close, and
// between two listings the open descriptors are estimated as the last listing plus the
// sockets opened since; a listing is taken at most once a second while that estimate is at or
// above 75 % of the limit, at most every 10 s below it.
import { readFileSync, readdirSync } from 'node:fs';

export interface FdWatchLogger {
  error(obj: object, msg: string): void;
}

function softLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const n = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

function listOpen(): number {
  return readdirSync('/proc/self/fd').length;
}

export interface FdWatchOptions {
  /** The soft limit (default: this process's, from /proc/self/limits; undefined: not Linux). */
  limit?: number | undefined;
  /** Counts the open descriptors (default: lists /proc/self/fd); may throw (EMFILE: at the limit). */
  countOpen?: () => number;
}

/** Listings while the estimate is at or above 75 % of the limit: at most one per this many ms. */
const NEAR_EVERY_MS = 1_000;
/** Below 75 %: at most one per this many ms (descriptors opened otherwise than by sockets). */
const FAR_EVERY_MS = 10_000;

export class FdWatch {
  private readonly limit: number | undefined;
  private readonly countOpen: () => number;
  /** The server's sockets open now. */
  private sockets = 0;
  private lastCount = Number.NEGATIVE_INFINITY;
  private lastOpen = 0;
  private socketsAtCount = 0;
  private lastLog = Number.NEGATIVE_INFINITY;
  /** A listing put off while near the limit: taken when due even if no socket comes then (at the limit libuv drops them unseen). */
  private due: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly logger: FdWatchLogger,
    options: FdWatchOptions = {},
  ) {
    this.limit = 'limit' in options ? options.limit : softLimit();
    this.countOpen = options.countOpen ?? listOpen;
  }

  /** Call with every socket the server accepts (before its other listeners run). */
  connection(socket: { once(event: 'close', listener: () => void): unknown }): void {
    if (this.limit === undefined) return;
    this.sockets++;
    socket.once('close', () => this.sockets--);
    this.check();
  }

  /** The descriptors open now as last listed plus the sockets opened since. */
  estimate(): number {
    return this.lastOpen + (this.sockets - this.socketsAtCount);
  }

  private check(): void {
    const limit = this.limit as number;
    const now = Date.now();
    const near = this.estimate() >= 0.75 * limit;
    const every = near ? NEAR_EVERY_MS : FAR_EVERY_MS;
    if (now - this.lastCount < every) {
      if (near && this.due === undefined) {
        this.due = setTimeout(() => {
          this.due = undefined;
          this.check();
        }, this.lastCount + every - now);
        this.due.unref();
      }
      return;
    }
    let open: number;
    try {
      open = this.countOpen();
    } catch (error) {
      // Listing needs a descriptor of its own: none left is the limit itself.
      const code = (error as { code?: unknown } | null)?.code;
      if (code !== 'EMFILE' && code !== 'ENFILE') return;
      open = limit;
    }
    this.lastCount = now;
    this.lastOpen = open;
    this.socketsAtCount = this.sockets;
    if (open < 0.9 * limit || now - this.lastLog < 10_000) return;
    this.lastLog = now;
    this.logger.error(
      { open_fds: open, fd_limit: limit, sockets: this.sockets },
      'file-descriptor limit is reached (or nearly): new connections are being dropped; raise it (ulimit -n, systemd LimitNOFILE=)',
    );
  }
}
