// Failed hellos are throttled per client address, loopback included (DECISIONS H7): from the
// FREE_FAILURES-th failed hello within WINDOW_MS on, the address's upgrades get 429 for a
// delay that doubles with every further failure (1 s, 2 s, 4 s, ... at most 5 min). A
// successful hello clears the address. This is separate from, and in addition to, the
// upgrades-per-minute limit (DESIGN 5.8), which does not apply to loopback peers.
// Times are performance.now()'s, the time this process has seen pass (DECISIONS G45): by the wall
// clock, a step back (`date -s`, an NTP step) kept a blocked address blocked for as long as the
// step, and a step ahead ended every block and window at once.

export const FREE_FAILURES = 5;
const WINDOW_MS = 10 * 60_000;
const BASE_DELAY_MS = 1000;
const MAX_DELAY_MS = 5 * 60_000;
const MAX_TRACKED = 100_000;

interface Entry {
  failures: number;
  last: number;
  blockedUntil: number;
}

export class HelloThrottle {
  private readonly entries = new Map<string, Entry>();

  /** freeFailures: from this many failures on, the address waits; 0 turns the throttle off. */
  constructor(private readonly freeFailures = FREE_FAILURES) {}

  /** 0 when `address` may try, else the ms until it may. */
  retryAfterMs(address: string, now = performance.now()): number {
    const e = this.entries.get(address);
    if (e === undefined) return 0;
    if (now - e.last > WINDOW_MS) {
      this.entries.delete(address);
      return 0;
    }
    return Math.max(0, e.blockedUntil - now);
  }

  /** Records a failed hello from `address`; returns the delay now imposed (0: none yet). */
  failed(address: string, now = performance.now()): number {
    if (this.freeFailures <= 0) return 0; // throttle off
    let e = this.entries.get(address);
    if (e === undefined || now - e.last > WINDOW_MS) {
      if (this.entries.size >= MAX_TRACKED) this.sweep(now);
      e = { failures: 0, last: now, blockedUntil: 0 };
      this.entries.set(address, e);
    }
    e.failures++;
    e.last = now;
    const over = e.failures - this.freeFailures + 1;
    if (over <= 0) return 0;
    const delay = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.min(over - 1, 20));
    e.blockedUntil = now + delay;
    return delay;
  }

  /** A successful hello: the address starts over. */
  succeeded(address: string): void {
    this.entries.delete(address);
  }

  private sweep(now: number): void {
    for (const [k, e] of this.entries) if (now - e.last > WINDOW_MS) this.entries.delete(k);
    // Still full (a flood of distinct addresses): forget the oldest half.
    if (this.entries.size >= MAX_TRACKED) {
      let n = 0;
      for (const k of this.entries.keys()) {
        if (n++ >= MAX_TRACKED / 2) break;
        this.entries.delete(k);
      }
    }
  }
}
