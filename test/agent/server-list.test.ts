// The agent's list of servers (agent/server-list.ts): a shuffled order per round of attempts,
// every server tried, and the server a session just ended on tried last.
import { describe, expect, it } from 'vitest';
import { ServerList } from '../../agent/server-list.js';

const A = 'ws://127.0.0.1:1/ws/agent';
const B = 'ws://127.0.0.1:2/ws/agent';
const C = 'ws://127.0.0.1:3/ws/agent';

/** A seeded random source (mulberry32): the shuffles are reproducible. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('ServerList', () => {
  it('one URL (a load balancer): every attempt goes there, and no random number is drawn', () => {
    let draws = 0;
    const list = new ServerList([A], () => (draws++, 0.5));
    expect(list.held).toBeNull();
    for (let i = 0; i < 5; i++) expect(list.next()).toBe(A);
    list.sessionEnded();
    expect(list.next()).toBe(A);
    expect(draws).toBe(0);
  });

  it('each round of attempts is a permutation of all servers', () => {
    const list = new ServerList([A, B, C], seeded(7));
    for (let round = 0; round < 20; round++) {
      const got = [list.next(), list.next(), list.next()];
      expect([...got].sort()).toEqual([A, B, C]);
      expect(list.held).toBe(got[2]);
    }
  });

  it('the order is shuffled: over many agents every server comes first about equally often', () => {
    const firsts = new Map<string, number>();
    const random = seeded(42);
    for (let i = 0; i < 3000; i++) {
      const first = new ServerList([A, B, C], random).next();
      firsts.set(first, (firsts.get(first) ?? 0) + 1);
    }
    for (const url of [A, B, C]) {
      expect(firsts.get(url)).toBeGreaterThan(850);
      expect(firsts.get(url)).toBeLessThan(1150);
    }
  });

  it('after a session ends, the next round tries the server just left last', () => {
    const random = seeded(3);
    for (let i = 0; i < 200; i++) {
      const list = new ServerList([A, B, C], random);
      const held = list.next();
      list.sessionEnded();
      const round = [list.next(), list.next(), list.next()];
      expect(round[2]).toBe(held);
      expect([...round].sort()).toEqual([A, B, C]);
    }
  });

  it('drops duplicates and refuses an empty list', () => {
    expect(new ServerList([A, A, B]).urls).toEqual([A, B]);
    expect(() => new ServerList([])).toThrow(RangeError);
  });

  it('a server that refused the host is left out while another has not refused it; an accepted hello forgets refusals (F12)', () => {
    const list = new ServerList([A, B, C], seeded(3));
    const first = list.next();
    expect(list.refusedByHeld()).toBe(1);
    for (let i = 0; i < 12; i++) expect(list.next()).not.toBe(first);
    const second = list.held!;
    expect(list.refusedByHeld()).toBe(2);
    const third = [A, B, C].find((u) => u !== first && u !== second)!;
    for (let i = 0; i < 6; i++) expect(list.next()).toBe(third);
    expect(list.refusedByHeld()).toBe(3); // all of them: the caller stops
    list.accepted();
    const seen = new Set(Array.from({ length: 6 }, () => list.next())); // the rest of this round, then a new one
    expect(seen).toEqual(new Set([A, B, C]));
    // refusing twice counts once
    const one = new ServerList([A, B]);
    one.next();
    one.refusedByHeld();
    expect(one.refusedByHeld()).toBe(1);
  });
});
