// parseJsonFrame (generated runtime, DECISIONS P12): a large frame parsed in pieces gives
// exactly JSON.parse of its whole text — the same value, or the same exception — on valid
// frames of every shape the split can meet and on frames broken next to the split points;
// a Peer given the bytes (`utf8` frames, as the server's connection hands them) answers as
// one given the text.
import { describe, expect, it, vi } from 'vitest';
import { PIECE_BYTES, SPLIT_MIN_BYTES, parseJsonFrame } from '@cortex/agent-protocol/runtime';

/** JSON.parse of the whole text, or the exception's message. */
function reference(bytes: Buffer): unknown {
  try {
    return { value: JSON.parse(bytes.toString('utf8')) as unknown };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
function split(bytes: Buffer): unknown {
  try {
    return { value: parseJsonFrame(bytes) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** A deterministic pseudo-random sequence (tests repeat exactly). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const awkwardText = ['plain', 'ünïcödé ✓ 日本語 😀', 'quote " and backslash \\ and \\"', ', ] [ } { :', '\u0000\u001f\t\n', '\\u0022 not an escape once decoded', '"]}', ''];

function entry(i: number, r: () => number): Record<string, unknown> {
  const e: Record<string, unknown> = {
    seq: i + 1,
    ts: '2026-05-16T19:42:50.123Z',
    severity: 'info',
    message: `${awkwardText[Math.floor(r() * awkwardText.length)]} ${'x'.repeat(Math.floor(r() * 300))}`,
    source: 'journald',
  };
  if (r() < 0.3) e.metadata = { nested: [1, [2, [3, { deep: 'a,b]' }]], {}], n: r(), t: true, z: null };
  return e;
}

function frame(n: number, seed: number, shape: (entries: unknown[]) => unknown = (entries) => ({ jsonrpc: '2.0', id: seed, method: 'logs.push', params: { seq_start: 1, entries } })): Buffer {
  const r = rng(seed);
  const entries = Array.from({ length: n }, (_, i) => entry(i, r));
  return Buffer.from(JSON.stringify(shape(entries)));
}

describe('parseJsonFrame', () => {
  it('large logs.push frames: the same value as JSON.parse of the whole text', () => {
    for (let seed = 1; seed <= 6; seed++) {
      const bytes = frame(1000 + seed * 37, seed);
      expect(bytes.length).toBeGreaterThan(SPLIT_MIN_BYTES);
      expect(split(bytes)).toEqual(reference(bytes));
    }
    // and in pieces: no string JSON.parse saw was a large object (the point of the split)
    const spy = vi.spyOn(JSON, 'parse');
    try {
      parseJsonFrame(frame(1000, 1));
      const lengths = spy.mock.calls.map((c) => String(c[0]).length);
      expect(lengths.length).toBeGreaterThan(3);
      expect(Math.max(...lengths)).toBeLessThanOrEqual(PIECE_BYTES + 2);
    } finally {
      spy.mockRestore();
    }
  });

  it('other shapes: the array at the root, deep in arrays, with whitespace, beside a large string, under __proto__', () => {
    const shapes: ((entries: unknown[]) => unknown)[] = [
      (entries) => entries,
      (entries) => [[0, [entries]], 'tail'],
      (entries) => ({ a: { b: { c: [{ d: entries }] } } }),
      (entries) => ({ small: [1, 2], big: entries, after: 'x'.repeat(PIECE_BYTES * 2) }),
      (entries) => ({ big: entries.slice(0, 300), bigger: entries }),
    ];
    for (const [k, shape] of shapes.entries()) {
      const bytes = frame(900, 100 + k, shape);
      expect(split(bytes), `shape ${k}`).toEqual(reference(bytes));
    }
    // whitespace everywhere
    const spaced = Buffer.from(JSON.stringify(JSON.parse(frame(900, 7).toString()), null, 2));
    expect(split(spaced)).toEqual(reference(spaced));
    // "__proto__" as a key: JSON.parse makes it an own property, and so must the split
    const protoFrame = Buffer.from(`{"__proto__":${JSON.stringify(JSON.parse(frame(900, 8).toString()).params.entries)}}`);
    const viaSplit = parseJsonFrame(protoFrame) as Record<string, unknown>;
    expect(Object.keys(viaSplit)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(viaSplit)).toBe(Object.prototype);
    expect(viaSplit).toEqual(JSON.parse(protoFrame.toString()));
  });

  it('a duplicate key that overrides the large array: the later value, as JSON.parse', () => {
    const big = frame(900, 9).toString();
    const bytes = Buffer.from(`{"entries":${big},"entries":[1]}`);
    expect(split(bytes)).toEqual({ value: { entries: [1] } });
    expect(split(bytes)).toEqual(reference(bytes));
  });

  it('broken frames fail as JSON.parse fails, whatever the split points', () => {
    const good = frame(1000, 11).toString();
    const at = good.indexOf('"entries":[') + '"entries":['.length;
    const comma = good.indexOf('},{', at + 60_000) + 1; // a comma between two elements, past the first piece
    const broken = [
      `${good.slice(0, at)},${good.slice(at)}`, // [,e1,…]
      `${good.slice(0, comma)},${good.slice(comma)}`, // e,,e
      `${good.slice(0, comma)}${good.slice(comma + 1)}`, // e e (comma missing)
      `${good.slice(0, good.length - 3)},]}}`, // trailing comma
      good.slice(0, good.length - 1), // truncated
      `${good}x`, // trailing garbage
      good.replace('"entries":[', '"entries":{'), // mismatched brackets
      `\uFEFF${good}`, // a BOM
      `${good.slice(0, comma)}]${good.slice(comma)}`, // an early ]
      good.replace('"seq":500,', '"seq":500,,'), // broken inside an element
      '['.repeat(70) + good + ']'.repeat(70), // nested past the split's depth limit (valid)
      '['.repeat(70) + good + ']'.repeat(69), // and unbalanced
    ];
    for (const [k, text] of broken.entries()) {
      const bytes = Buffer.from(text);
      expect(bytes.length).toBeGreaterThan(SPLIT_MIN_BYTES);
      expect(split(bytes), `case ${k}`).toEqual(reference(bytes));
    }
    expect(split(Buffer.from(broken[0] as string))).toHaveProperty('error');
  });

  it('random bytes flipped in a large frame: always JSON.parse verdict', () => {
    const good = frame(700, 12);
    const r = rng(99);
    const alphabet = [0x22, 0x5c, 0x2c, 0x5b, 0x5d, 0x7b, 0x7d, 0x3a, 0x20, 0x31, 0x61];
    for (let k = 0; k < 120; k++) {
      const bytes = Buffer.from(good);
      for (let f = 0; f < 1 + Math.floor(r() * 3); f++) bytes[Math.floor(r() * bytes.length)] = alphabet[Math.floor(r() * alphabet.length)] as number;
      expect(split(bytes), `flip ${k}`).toEqual(reference(bytes));
    }
  });

  it('small frames and Uint8Array input (no Buffer): decoded whole, the same value', () => {
    const small = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logs.push', params: { seq_start: 1, entries: [{ message: 'ü' }] } }));
    expect(parseJsonFrame(small)).toEqual(JSON.parse(small.toString()));
    const big = frame(1000, 13);
    const plain = new Uint8Array(big.buffer.slice(big.byteOffset, big.byteOffset + big.length));
    expect(parseJsonFrame(plain)).toEqual(JSON.parse(big.toString()));
  });
});
