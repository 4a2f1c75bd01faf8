// The pause a -32020 advises (DECISIONS G17): about the time the full queue takes to drain at
// the rate it drained lately, spread so the refused agents do not all come back together.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Ingest } from '../../server/ingest.js';
import { createCapturingLogger } from '../../server/log.js';
import type { Storage } from '../../server/db/storage.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['performance'], now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

function ingest(): Ingest {
  // The retry advice needs no storage: nothing is committed here.
  return new Ingest({} as Storage, createCapturingLogger().logger, { maxBatchEntries: 1000, queueCapacityEntries: 16_000, agentRatePerSec: 1_000_000, flushMs: 200 });
}

/** Drains `perSecond` entries a second for `secs` seconds, in tenths. */
function drainAt(i: Ingest, perSecond: number, secs: number): void {
  for (let k = 0; k < secs * 10; k++) {
    i.queuedEntries += perSecond / 10;
    vi.advanceTimersByTime(100);
    i.drained(perSecond / 10);
  }
}

const advice = (i: Ingest, n = 200) => Array.from({ length: n }, () => i.backpressureRetryMs());

describe('-32020 retry_after_ms', () => {
  it('before any drain is measured: T (200 ms), spread from half to one and a half times', () => {
    const i = ingest();
    i.queuedEntries = 16_000;
    const a = advice(i);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...a)).toBeLessThanOrEqual(300);
    expect(new Set(a).size).toBeGreaterThan(10); // spread, not one value for every agent
  });

  it('a full queue that drains at 8,000 entries/s: about 2 s', () => {
    const i = ingest();
    drainAt(i, 8_000, 3);
    i.queuedEntries = 16_000;
    const a = advice(i);
    expect(Math.min(...a)).toBeGreaterThanOrEqual(1_000);
    expect(Math.max(...a)).toBeLessThanOrEqual(3_000);
    const mean = a.reduce((x, y) => x + y, 0) / a.length;
    expect(mean).toBeGreaterThan(1_700);
    expect(mean).toBeLessThan(2_300);
  });

  it('a fast writer: never below T; a stalled one: never above 5 s', () => {
    const fast = ingest();
    drainAt(fast, 1_000_000, 2);
    fast.queuedEntries = 16_000;
    expect(Math.min(...advice(fast))).toBeGreaterThanOrEqual(100);
    expect(Math.max(...advice(fast))).toBeLessThanOrEqual(300);
    const slow = ingest();
    drainAt(slow, 100, 2);
    slow.queuedEntries = 16_000;
    expect(Math.max(...advice(slow))).toBeLessThanOrEqual(7_500);
    expect(Math.min(...advice(slow))).toBeGreaterThanOrEqual(2_500);
  });

  it('an idle spell does not count as a slow writer', () => {
    const i = ingest();
    drainAt(i, 16_000, 2);
    vi.advanceTimersByTime(600_000); // ten idle minutes
    i.drained(10); // the first commit after them
    vi.advanceTimersByTime(500);
    i.drained(8_000);
    i.queuedEntries = 16_000;
    const mean = advice(i).reduce((x, y) => x + y, 0) / 200;
    expect(mean).toBeLessThan(1_300); // about 1 s at 16,000/s, not 5 s
  });
});
