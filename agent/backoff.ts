// Reconnect backoff (seed 6): full jitter, delay = random(0, min(cap, base * 2^attempt)),
// base 1 s, cap 60 s; the attempt counter resets once a connection has stayed Active
// for resetAfterMs (60 s). Clock and random source are injectable so tests are exact.

export interface BackoffOptions {
  /** Default 1000 ms. */
  baseMs?: number;
  /** Default 60000 ms. */
  capMs?: number;
  /** Continuous Active time after which attempt resets to 0. Default 60000 ms. */
  resetAfterMs?: number;
  /** Returns a number in [0, 1). Default Math.random. */
  random?: () => number;
  /** Milliseconds clock. Default Date.now. */
  now?: () => number;
}

export class Backoff {
  readonly baseMs: number;
  readonly capMs: number;
  readonly resetAfterMs: number;
  private readonly random: () => number;
  private readonly now: () => number;
  private attemptCount = 0;
  private activeSince: number | null = null;

  constructor(options: BackoffOptions = {}) {
    this.baseMs = options.baseMs ?? 1000;
    this.capMs = options.capMs ?? 60_000;
    this.resetAfterMs = options.resetAfterMs ?? 60_000;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    if (!(this.baseMs > 0) || !(this.capMs >= this.baseMs) || !(this.resetAfterMs >= 0)) {
      throw new RangeError('backoff: need baseMs > 0, capMs >= baseMs, resetAfterMs >= 0');
    }
  }

  /** The attempt number the next delay will use. */
  get attempt(): number {
    return this.settle();
  }

  /** Upper bound of the next delay: min(cap, base * 2^attempt). */
  ceilingMs(): number {
    return Math.min(this.capMs, this.baseMs * 2 ** this.settle());
  }

  /**
   * The delay before the next connection attempt, and counts the attempt. Call on
   * entering Reconnecting.
   */
  nextDelayMs(): number {
    const ceiling = this.ceilingMs();
    const r = this.random();
    const delay = Math.min(Math.floor(Math.min(Math.max(r, 0), 1) * ceiling), ceiling);
    // Stop counting once the cap is reached (keeps 2^attempt finite).
    if (this.baseMs * 2 ** this.attemptCount < this.capMs) this.attemptCount++;
    return delay;
  }

  /** The connection entered Active. */
  markActive(): void {
    this.activeSince = this.now();
  }

  /** The connection left Active (closed, drained, ...). */
  markInactive(): void {
    this.settle();
    this.activeSince = null;
  }

  reset(): void {
    this.attemptCount = 0;
    this.activeSince = null;
  }

  /** Applies the reset rule if Active has lasted long enough; returns the attempt. */
  private settle(): number {
    if (this.activeSince !== null && this.now() - this.activeSince >= this.resetAfterMs) {
      this.attemptCount = 0;
    }
    return this.attemptCount;
  }
}
