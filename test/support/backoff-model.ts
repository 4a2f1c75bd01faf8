// What the contract's reconnect backoff predicts for a storm (seed 6): after a server
// outage of `outageMs`, each agent retries with delay = rand(0, min(cap, base·2^attempt)),
// attempt counting from 0 at the disconnect; an attempt at or after the outage succeeds.
// Returns the expected attempts per 1 s bin (from the disconnect) over all agents,
// estimated by simulating `runs` storms (Monte Carlo; the exact density is a sum of
// convolutions of uniforms, which the simulation estimates to well under 5%).

export interface StormModel {
  agents: number;
  baseMs: number;
  capMs: number;
  outageMs: number;
  bins: number;
  runs?: number;
  /** Time a refused attempt takes before the next delay starts. */
  failMs?: number;
  /** Each agent's attempt counter at the disconnect (default 0 for all). */
  initialAttempts?: readonly number[];
  random?: () => number;
}

export function predictAttemptsPerSecond(m: StormModel): number[] {
  const runs = m.runs ?? 2000;
  const random = m.random ?? Math.random;
  const failMs = m.failMs ?? 5;
  const counts = Array.from({ length: m.bins }, () => 0);
  const agents = m.initialAttempts?.length ?? 1;
  const scale = m.initialAttempts ? 1 : m.agents;
  for (let r = 0; r < runs; r++) {
   for (let a = 0; a < agents; a++) {
    let t = 0;
    let attempt = m.initialAttempts?.[a] ?? 0;
    for (let guard = 0; guard < 1000; guard++) {
      const ceiling = Math.min(m.capMs, m.baseMs * 2 ** attempt);
      t += Math.floor(random() * ceiling);
      const bin = Math.floor(t / 1000);
      if (bin < m.bins) counts[bin]!++;
      if (t >= m.outageMs) break;
      t += failMs;
      if (m.baseMs * 2 ** attempt < m.capMs) attempt++;
    }
   }
  }
  return counts.map((c) => (c / runs) * scale);
}

/**
 * The storm criterion: no second has more than 3× the predicted count, where seconds that
 * predict fewer than FLOOR attempts are compared with FLOOR (small counts are too noisy
 * for a ratio). With FLOOR = 3 a correct full-jitter storm of 50 agents trips it in
 * under 0.5% of simulated storms, and a storm without jitter always does
 * (test/faults/backoff-model.test.ts).
 */
export const STORM_FLOOR = 3;
export function stormLimit(predicted: number): number {
  return 3 * Math.max(predicted, STORM_FLOOR);
}

/** Simulated attempts per 1 s bin for one storm (jitter false: delay = the ceiling itself). */
export function simulateStorm(m: StormModel, jitter = true): number[] {
  const random = m.random ?? Math.random;
  const failMs = m.failMs ?? 5;
  const obs = Array.from({ length: m.bins }, () => 0);
  for (let a = 0; a < m.agents; a++) {
    let t = 0;
    let attempt = 0;
    for (let guard = 0; guard < 1000; guard++) {
      const ceiling = Math.min(m.capMs, m.baseMs * 2 ** attempt);
      t += jitter ? Math.floor(random() * ceiling) : ceiling;
      const bin = Math.floor(t / 1000);
      if (bin < m.bins) obs[bin]!++;
      if (t >= m.outageMs) break;
      t += failMs;
      if (m.baseMs * 2 ** attempt < m.capMs) attempt++;
    }
  }
  return obs;
}
