// The reconnect-storm criterion itself (test/support/backoff-model.ts): a correct
// full-jitter storm rarely trips it, a storm without jitter always does.
import { expect, it } from 'vitest';
import { predictAttemptsPerSecond, simulateStorm, stormLimit } from '../support/backoff-model.js';

it('storm criterion: < 1% false alarms on simulated full-jitter storms, always flags a storm without jitter', () => {
  for (const outageMs of [2000, 5000, 10_000]) {
    const m = { agents: 50, baseMs: 1000, capMs: 60_000, outageMs, bins: 70 };
    const predicted = predictAttemptsPerSecond({ ...m, runs: 4000 });
    let alarms = 0;
    const trials = 400;
    for (let t = 0; t < trials; t++) if (simulateStorm(m).some((o, i) => o > stormLimit(predicted[i]!))) alarms++;
    expect(alarms / trials).toBeLessThan(0.02);
    expect(simulateStorm(m, false).some((o, i) => o > stormLimit(predicted[i]!))).toBe(true);
  }
});
