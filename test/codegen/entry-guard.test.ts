// nestedDeeperThan and metadataProblem (generated runtime, DECISIONS P9): the allocation-free
// recursive walk and the skipped byte count give the verdicts of the walk they replaced (the
// iterative one, kept below as the reference) on random nested values, cycles, arrays,
// inherited and non-enumerable keys, and caps on both sides of the recursion bound.
import { describe, expect, it } from 'vitest';
import { metadataProblem, nestedDeeperThan } from '@cortex/agent-protocol/runtime';

function referenceDeeperThan(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [object, number];
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child as object, depth + 1]);
    }
  }
  return false;
}

function referenceSizeProblem(metadata: object, maxBytes: number): boolean {
  return new TextEncoder().encode(JSON.stringify(metadata)).length > maxBytes;
}

/** Deterministic PRNG (mulberry32), so a failure names a reproducible seed. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const inherited = Object.create({ deep: { a: { b: { c: {} } } } }) as Record<string, unknown>;

function randomValue(r: () => number, depth: number): unknown {
  const k = r();
  if (depth > 40 || k < 0.3) return [1, 'x', null, true, 'é€😀'][Math.floor(r() * 5)];
  if (k < 0.55) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
  const o: Record<string, unknown> = r() < 0.1 ? Object.create(inherited) : {};
  const n = Math.floor(r() * 4);
  for (let i = 0; i < n; i++) o[`k${i}`] = randomValue(r, depth + 1);
  if (r() < 0.1) Object.defineProperty(o, 'hidden', { value: { x: { y: { z: {} } } }, enumerable: false });
  return o;
}

/** Objects nested `pairs` deep, each holding the next inside a one-element array (2 levels a pair). */
function chain(pairs: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let cur = root;
  for (let i = 1; i < pairs; i++) {
    const next: Record<string, unknown> = {};
    cur['n'] = [next];
    cur = next;
  }
  return root;
}

describe('nestedDeeperThan', () => {
  it('gives the reference walk’s verdict on random values for caps from 0 to 300', () => {
    let deeper = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const r = rng(seed);
      const v = randomValue(r, 0);
      for (const cap of [0, 1, 2, 3, 5, 8, 32, 300]) {
        const got = nestedDeeperThan(v, cap);
        expect(got, `seed ${seed} cap ${cap}`).toBe(referenceDeeperThan(v, cap));
        if (got) deeper++;
      }
    }
    expect(deeper).toBeGreaterThan(1000); // both verdicts are exercised
  });

  it('refuses cycles and chains past the cap on both sides of the recursion bound, and accepts them at the cap', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic['self'] = cyclic;
    for (const cap of [1, 32, 256, 257, 1000]) expect(nestedDeeperThan(cyclic, cap)).toBe(true);
    for (const pairs of [16, 17, 128, 129, 2500]) {
      const v = chain(pairs);
      for (const cap of [32, 256, 300, 10_000]) {
        expect(nestedDeeperThan(v, cap), `pairs ${pairs} cap ${cap}`).toBe(referenceDeeperThan(v, cap));
      }
    }
  });

  it('ignores inherited and non-enumerable keys, as Object.values does', () => {
    expect(nestedDeeperThan(Object.create(inherited), 1)).toBe(false);
    const o = {};
    Object.defineProperty(o, 'x', { value: { y: {} }, enumerable: false });
    expect(nestedDeeperThan(o, 1)).toBe(false);
    expect(nestedDeeperThan({ x: { y: {} } }, 2)).toBe(true);
  });
});

describe('metadataProblem', () => {
  it('measures the size exactly where a text could pass the byte cap', () => {
    const limits = { maxDepth: 32, maxBytes: 60 };
    for (let n = 0; n < 70; n++) {
      for (const ch of ['a', 'é', '€', '😀']) {
        const m = { t: ch.repeat(n) };
        const problem = metadataProblem(m, limits);
        expect(problem?.kind === 'size', `${n} × ${ch}`).toBe(referenceSizeProblem(m, limits.maxBytes));
      }
    }
    expect(metadataProblem({ t: '€'.repeat(20) }, limits)?.message).toBe('metadata is 68 bytes as JSON, more than metadata_max_bytes = 60');
    expect(metadataProblem({ toJSON: () => undefined }, limits)).toBeUndefined();
  });
});
