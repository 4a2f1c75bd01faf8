// The upgrades-per-minute limit (server/ws/net.ts UpgradeRateLimiter) and the failed-hello
// throttle (server/security/hello-throttle.ts) count their time in the time this process has seen
// pass (DECISIONS G45). By the wall clock, a step back (`date -s`, an
// NTP step) kept every earlier attempt inside the window for as long as the step: an address that
// reached the limit — agents behind one NAT address reconnecting — was refused for that long.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HelloThrottle } from '../../server/security/hello-throttle.js';
import { UpgradeRateLimiter } from '../../server/ws/net.js';

afterEach(() => vi.restoreAllMocks());

/** Date.now() and performance.now() under the test's hand: `step` moves the wall clock only, `pass` both (time going by). */
function clocks(): { step(ms: number): void; pass(ms: number): void } {
  let wall = Date.now();
  let elapsed = performance.now();
  vi.spyOn(Date, 'now').mockImplementation(() => wall);
  vi.spyOn(performance, 'now').mockImplementation(() => elapsed);
  return {
    step: (ms) => void (wall += ms),
    pass: (ms) => {
      wall += ms;
      elapsed += ms;
    },
  };
}

describe('upgrades per minute when the clock is stepped', () => {
  it('a clock stepped 60 days back: the address may upgrade again once a minute has passed', () => {
    const clock = clocks();
    const limiter = new UpgradeRateLimiter(2);
    expect(limiter.allow('203.0.113.7')).toBe(true);
    expect(limiter.allow('203.0.113.7')).toBe(true);
    expect(limiter.allow('203.0.113.7')).toBe(false);
    clock.step(-60 * 86_400_000);
    clock.pass(61_000);
    expect(limiter.allow('203.0.113.7')).toBe(true);
    // and the limit still holds in the new minute
    expect(limiter.allow('203.0.113.7')).toBe(true);
    expect(limiter.allow('203.0.113.7')).toBe(false);
  });

  it('a clock stepped ahead does not lift the limit within the minute', () => {
    const clock = clocks();
    const limiter = new UpgradeRateLimiter(2);
    expect(limiter.allow('203.0.113.7')).toBe(true);
    expect(limiter.allow('203.0.113.7')).toBe(true);
    clock.step(60 * 86_400_000);
    expect(limiter.allow('203.0.113.7')).toBe(false);
  });
});

describe('the failed-hello throttle when the clock is stepped', () => {
  const blocked = () => {
    const t = new HelloThrottle(1);
    expect(t.failed('203.0.113.9')).toBe(1000); // the first failure past the free ones: 1 s
    expect(t.retryAfterMs('203.0.113.9')).toBeGreaterThan(0);
    return t;
  };

  it('a clock stepped 60 days back: the address may try again once its second has passed', () => {
    const clock = clocks();
    const t = blocked();
    clock.step(-60 * 86_400_000);
    clock.pass(1_001);
    expect(t.retryAfterMs('203.0.113.9')).toBe(0);
  });

  it('a clock stepped ahead does not end the block', () => {
    const clock = clocks();
    const t = blocked();
    clock.step(60 * 86_400_000);
    expect(t.retryAfterMs('203.0.113.9')).toBeCloseTo(1000, 6); // performance.now()'s fractional ms
  });
});
