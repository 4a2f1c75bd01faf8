// The send-rate governor of DESIGN 5.6: on -32020/-32030 the agent halves its send
// rate and recovers linearly to full rate over `recoveryMs` (10 s) without errors.
// Unthrottled when no error happened within the recovery window. A token bucket
// turns the rate into a delay before the next batch; the caller arms a timer for it
// (never a busy loop).

import { LIMITS } from '@cortex/agent-protocol';

export const MIN_RATE_ENTRIES_PER_S = 50;

export class SendRate {
  readonly recoveryMs: number;
  private halvedAt: number | null = null;
  private base = 0; // entries/s right after the last halving
  private full = 0; // entries/s before it
  private tokens = 0;
  private lastRefill = 0;
  // entries sent in the current and previous one-second buckets
  private bucketStart = 0;
  private bucketCount = 0;
  private prevCount = 0;

  constructor(
    private readonly now: () => number = Date.now,
    recoveryMs: number = LIMITS.backpressure_recovery_ms,
  ) {
    this.recoveryMs = recoveryMs;
  }

  /** Entries/s observed over about the last second. */
  observed(): number {
    this.roll(this.now());
    return Math.max(this.prevCount, this.bucketCount);
  }

  /** Current cap in entries/s, or null when unthrottled. */
  cap(): number | null {
    if (this.halvedAt === null) return null;
    const t = this.now() - this.halvedAt;
    if (t >= this.recoveryMs) {
      this.halvedAt = null;
      return null;
    }
    return this.base + ((this.full - this.base) * t) / this.recoveryMs;
  }

  /** A -32020/-32030 arrived: halve the current (or observed) rate. */
  halve(): void {
    const current = this.cap() ?? Math.max(this.observed(), MIN_RATE_ENTRIES_PER_S * 2);
    const now = this.now();
    this.full = current;
    this.base = Math.max(MIN_RATE_ENTRIES_PER_S, current / 2);
    this.halvedAt = now;
    this.tokens = 0;
    this.lastRefill = now;
  }

  /** ms to wait before `n` entries may be sent (0 = now). */
  delayFor(n: number): number {
    const cap = this.cap();
    if (cap === null) return 0;
    const now = this.now();
    this.tokens = Math.min(Math.max(cap, n), this.tokens + (cap * (now - this.lastRefill)) / 1000);
    this.lastRefill = now;
    if (this.tokens >= n) return 0;
    return Math.max(1, Math.ceil(((n - this.tokens) / cap) * 1000));
  }

  /** `n` entries were sent. */
  record(n: number): void {
    this.roll(this.now());
    this.bucketCount += n;
    if (this.halvedAt !== null) this.tokens -= n;
  }

  private roll(now: number): void {
    const elapsed = now - this.bucketStart;
    if (elapsed >= 1000) {
      this.prevCount = elapsed >= 2000 ? 0 : this.bucketCount;
      this.bucketCount = 0;
      this.bucketStart = now;
    }
  }
}
