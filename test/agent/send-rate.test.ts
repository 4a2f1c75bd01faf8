import { describe, expect, it } from 'vitest';
import { MIN_RATE_ENTRIES_PER_S, SendRate } from '../../agent/send-rate.js';

/** A SendRate on a clock the test moves. */
function clocked(recoveryMs = 10_000) {
  let t = 1_000_000;
  const rate = new SendRate(() => t, recoveryMs);
  return { rate, advance: (ms: number) => (t += ms) };
}

describe('send rate (DESIGN 5.6)', () => {
  it('is unthrottled until a -32020 arrives: no cap, no delay', () => {
    const { rate } = clocked();
    expect(rate.cap()).toBeNull();
    expect(rate.delayFor(1000)).toBe(0);
    rate.record(1000);
    expect(rate.cap()).toBeNull();
  });

  it('halves the observed rate on -32020', () => {
    const { rate, advance } = clocked();
    rate.record(4000);
    advance(500);
    rate.record(4000); // 8000 entries in the current one-second bucket
    expect(rate.observed()).toBe(8000);
    rate.halve();
    expect(rate.cap()).toBe(4000);
  });

  it('halves the current cap again on a second -32020 while recovering', () => {
    const { rate } = clocked();
    rate.record(8000);
    rate.halve();
    expect(rate.cap()).toBe(4000);
    rate.halve();
    expect(rate.cap()).toBe(2000);
    rate.halve();
    expect(rate.cap()).toBe(1000);
  });

  it('never goes below the floor, however often it is halved', () => {
    const { rate } = clocked();
    rate.record(300);
    for (let i = 0; i < 20; i++) rate.halve();
    expect(rate.cap()).toBe(MIN_RATE_ENTRIES_PER_S);
    // nothing observed at all: starts from twice the floor, halves to the floor
    const idle = clocked().rate;
    idle.halve();
    expect(idle.cap()).toBe(MIN_RATE_ENTRIES_PER_S);
  });

  it('recovers linearly to the rate before the halving over recoveryMs, then is unthrottled', () => {
    const { rate, advance } = clocked(10_000);
    rate.record(8000);
    rate.halve(); // 8000 → 4000
    advance(2500);
    expect(rate.cap()).toBe(5000);
    advance(2500);
    expect(rate.cap()).toBe(6000);
    advance(4999);
    expect(rate.cap()).toBeCloseTo(7999.6, 5);
    advance(1);
    expect(rate.cap()).toBeNull();
    expect(rate.delayFor(100_000)).toBe(0);
  });

  it('turns the cap into a delay before the next batch (token bucket), never a busy loop', () => {
    const { rate, advance } = clocked(1e12); // recovery so slow the cap stays at 1000/s here
    rate.record(2000);
    rate.halve(); // cap 1000/s, bucket empty
    // 500 entries at 1000/s from an empty bucket: 500 ms
    expect(rate.delayFor(500)).toBe(500);
    advance(250);
    expect(rate.delayFor(500)).toBe(250);
    advance(250);
    expect(rate.delayFor(500)).toBe(0);
    rate.record(500);
    // the bucket is spent again
    expect(rate.delayFor(500)).toBeGreaterThan(0);
  });

  it('counts what was sent per one-second bucket (observed rate)', () => {
    const { rate, advance } = clocked();
    rate.record(300);
    advance(1000);
    rate.record(100);
    expect(rate.observed()).toBe(300); // the previous full second
    advance(2000);
    expect(rate.observed()).toBe(0); // nothing sent for more than a second
  });
});
