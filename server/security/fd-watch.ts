// Hitting the file-descriptor limit is logged (DECISIONS H10). At the limit libuv drops new
// connections itself (its EMFILE trick) without telling Node, so there is no error event to
// log: instead the open descriptors are counted as connections arrive (Linux: /proc/self/fd)
// and a line is logged when they reach 90 % of the soft limit (RLIMIT_NOFILE,
// /proc/self/limits), at most every 10 s. Elsewhere it does nothing. Listing /proc/self/fd
// costs about 1 µs per open descriptor, so it is not done on every connection: each count
// says how many more connections (one descriptor each) fit below 75 % of the limit, and the
// next count comes after that many connections or 250 ms, whichever is first — every
// connection once above 75 % (DECISIONS P7: it was every 32 connections, ~35 µs a hello
// with 1,000 agents connected).
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

export class FdWatch {
  private readonly limit = softLimit();
  private lastCheck = 0;
  private lastLog = 0;
  private since = 0;
  /** Connections until the next count (0: count on the next one). */
  private budget = 0;

  constructor(private readonly logger: FdWatchLogger) {}

  /** Call on every new connection. */
  check(connections: number, now = Date.now()): void {
    if (this.limit === undefined) return;
    // Every connection once above 75 % of the limit; below, when the connections since the
    // last count could have reached it, or after 250 ms (descriptors opened otherwise).
    if (++this.since <= this.budget && now - this.lastCheck < 250) return;
    this.since = 0;
    this.lastCheck = now;
    let open: number;
    try {
      open = readdirSync('/proc/self/fd').length;
    } catch {
      return;
    }
    this.budget = Math.max(0, Math.floor(0.75 * this.limit) - open);
    if (open < 0.9 * this.limit || now - this.lastLog < 10_000) return;
    this.lastLog = now;
    this.logger.error(
      { open_fds: open, fd_limit: this.limit, connections },
      'file-descriptor limit is reached (or nearly): new connections are being dropped; raise it (ulimit -n, systemd LimitNOFILE=)',
    );
  }
}
