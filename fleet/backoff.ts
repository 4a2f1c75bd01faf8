// Reconnect backoff of the contract (contract/limits.json backoff_*, seed 6): full jitter,
// delay = rand(0, min(cap, base * 2^attempt)); attempt resets to 0 once a connection has
// stayed Active for backoff_reset_after_active_s. And what that formula predicts for a
// whole fleet after a server outage, so a storm can be judged against it.
import { LIMITS } from '@cortex/agent-protocol';

export const DEFAULT_BACKOFF_BASE_MS = LIMITS.backoff_base_s * 1000;
export const DEFAULT_BACKOFF_CAP_MS = LIMITS.backoff_cap_s * 1000;
export const BACKOFF_RESET_AFTER_MS = LIMITS.backoff_reset_after_active_s * 1000;

export interface BackoffSettings {
  baseMs: number;
  capMs: number;
  resetAfterMs: number;
}

/** One agent's attempt counter. Small on purpose: ten thousand of these live in one process. */
export class FullJitterBackoff {
  private attemptCount = 0;
  private activeSince = -1;

  constructor(
    private readonly s: BackoffSettings,
    private readonly random: () => number = Math.random,
  ) {}

  /** The attempt number the next delay uses (after the reset rule). */
  attempt(now = Date.now()): number {
    if (this.activeSince >= 0 && now - this.activeSince >= this.s.resetAfterMs) this.attemptCount = 0;
    return this.attemptCount;
  }

  /** The delay before the next connection attempt; counts the attempt. */
  nextDelayMs(now = Date.now()): number {
    const ceiling = Math.min(this.s.capMs, this.s.baseMs * 2 ** this.attempt(now));
    this.activeSince = -1;
    if (this.s.baseMs * 2 ** this.attemptCount < this.s.capMs) this.attemptCount++;
    return Math.floor(Math.min(Math.max(this.random(), 0), 0.999999) * ceiling);
  }

  markActive(now = Date.now()): void {
    this.activeSince = now;
  }

  markInactive(now = Date.now()): void {
    this.attempt(now);
    this.activeSince = -1;
  }
}

export interface StormModel {
  baseMs: number;
  capMs: number;
  /** From the disconnect to the moment the server accepts connections again. */
  outageMs: number;
  /** 1 s bins from the disconnect. */
  bins: number;
  /** How many agents had each attempt counter at the disconnect: index = attempt. */
  initialAttempts: readonly number[];
  /** Simulated storms (Monte Carlo); with thousands of agents a few suffice. */
  runs?: number;
  /** Time a refused attempt takes before its next delay starts. */
  failMs?: number;
  random?: () => number;
}

/**
 * Expected connection attempts per 1 s bin (from the disconnect) over the whole fleet, if
 * every agent follows the formula and an attempt at or after the outage succeeds. A server
 * slower than its arrivals adds attempts (refused hellos retry); the prediction is the
 * floor a correct fleet cannot beat by much in any second.
 */
export function predictAttemptsPerSecond(m: StormModel): number[] {
  const runs = m.runs ?? 20;
  const random = m.random ?? Math.random;
  const failMs = m.failMs ?? 2;
  const counts = Array.from({ length: m.bins }, () => 0);
  for (let r = 0; r < runs; r++) {
    for (let initial = 0; initial < m.initialAttempts.length; initial++) {
      const agents = m.initialAttempts[initial] ?? 0;
      for (let a = 0; a < agents; a++) {
        let t = 0;
        let attempt = initial;
        for (let guard = 0; guard < 1000; guard++) {
          const ceiling = Math.min(m.capMs, m.baseMs * 2 ** attempt);
          t += Math.floor(random() * ceiling);
          const bin = Math.floor(t / 1000);
          if (bin < m.bins) counts[bin] = (counts[bin] ?? 0) + 1;
          if (t >= m.outageMs) break;
          t += failMs;
          if (m.baseMs * 2 ** attempt < m.capMs) attempt++;
        }
      }
    }
  }
  return counts.map((c) => c / runs);
}

/**
 * The storm criterion of the fault suite (test/support/backoff-model.ts): no second has
 * more than 3x the predicted attempts, seconds predicting fewer than 3 compared with 3.
 */
export function stormLimit(predicted: number): number {
  return 3 * Math.max(predicted, 3);
}
