import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Backoff } from '../../agent/backoff.js';

/** A controllable clock and random source. */
function harness(randoms: number[] = []) {
  let t = 0;
  const queue = [...randoms];
  let fixed = 0.999999;
  return {
    backoff: (opts: { baseMs?: number; capMs?: number; resetAfterMs?: number } = {}) =>
      new Backoff({ ...opts, now: () => t, random: () => (queue.length > 0 ? queue.shift()! : fixed) }),
    advance: (ms: number) => (t += ms),
    setRandom: (r: number) => (fixed = r),
  };
}

describe('backoff', () => {
  it('full jitter: delay = random * min(60 s, 1 s * 2^attempt)', () => {
    const h = harness();
    const b = h.backoff();
    const ceilings = [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000];
    for (const c of ceilings) {
      expect(b.ceilingMs()).toBe(c);
      expect(b.nextDelayMs()).toBe(Math.floor(0.999999 * c));
    }
    h.setRandom(0);
    expect(b.nextDelayMs()).toBe(0);
    h.setRandom(0.5);
    expect(b.nextDelayMs()).toBe(30000);
  });

  it('uses the injected random source exactly', () => {
    const h = harness([0.25, 0.5, 0.75]);
    const b = h.backoff();
    expect([b.nextDelayMs(), b.nextDelayMs(), b.nextDelayMs()]).toEqual([250, 1000, 3000]);
    expect(b.attempt).toBe(3);
  });

  it('stays within [0, ceiling) for any random sequence', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { maxLength: 40 }), (rs) => {
        const h = harness(rs);
        const b = h.backoff();
        rs.forEach((_, attempt) => {
          const ceiling = Math.min(60_000, 1000 * 2 ** attempt);
          const d = b.nextDelayMs();
          expect(d).toBeGreaterThanOrEqual(0);
          expect(d).toBeLessThan(ceiling);
        });
      }),
    );
  });

  it('resets the attempt after 60 s continuously Active, not before', () => {
    const h = harness();
    const b = h.backoff();
    for (let i = 0; i < 5; i++) b.nextDelayMs();
    expect(b.attempt).toBe(5);

    b.markActive();
    h.advance(59_999);
    b.markInactive(); // dropped just before 60 s
    expect(b.attempt).toBe(5);
    expect(b.ceilingMs()).toBe(32000);
    b.nextDelayMs();

    b.markActive();
    h.advance(60_000);
    expect(b.attempt).toBe(0); // still Active, already reset
    b.markInactive();
    expect(b.ceilingMs()).toBe(1000);
    expect(b.nextDelayMs()).toBe(999);
    expect(b.attempt).toBe(1);

    // Active time is not cumulative across connections
    b.markActive();
    h.advance(40_000);
    b.markInactive();
    h.advance(100_000); // time spent not Active does not count
    b.nextDelayMs();
    b.markActive();
    h.advance(30_000);
    b.markInactive();
    expect(b.attempt).toBe(2);
  });

  it('is configurable for fast tests and validates its options', () => {
    const h = harness();
    const b = h.backoff({ baseMs: 10, capMs: 50, resetAfterMs: 100 });
    expect([b.ceilingMs(), (b.nextDelayMs(), b.ceilingMs()), (b.nextDelayMs(), b.ceilingMs()), (b.nextDelayMs(), b.ceilingMs())]).toEqual([10, 20, 40, 50]);
    b.reset();
    expect(b.attempt).toBe(0);
    expect(() => new Backoff({ baseMs: 0 })).toThrow(RangeError);
    expect(() => new Backoff({ baseMs: 100, capMs: 50 })).toThrow(RangeError);
  });
});
