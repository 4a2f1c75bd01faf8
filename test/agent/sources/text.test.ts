// agent/sources/text.ts: the line and text handling every source shares.
import { describe, expect, it } from 'vitest';
import {
  MAX_MESSAGE_CODE_POINTS, SourceConfigError, compileFilter, countCodePoints, scanLines, splitCodePoints, utf8Advance, type SplitMark,
} from '../../../agent/sources/index.js';

function scan(text: string | Buffer, final = false, part = 0) {
  const buf = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const out: { text: string; split: SplitMark | null }[] = [];
  const r = scanLines(buf, buf.length, final, part, (t, split) => out.push({ text: t, split }));
  return { ...r, out };
}

describe('utf8Advance', () => {
  it('counts code points of ASCII, 2-, 3- and 4-byte sequences and stops at max', () => {
    const b = Buffer.from('aé€😀z', 'utf8'); // 1 + 2 + 3 + 4 + 1 bytes
    expect(utf8Advance(b, 0, b.length, 10)).toEqual([11, 5]);
    expect(utf8Advance(b, 0, b.length, 3)).toEqual([6, 3]);
    expect(utf8Advance(b, 1, b.length, 1)).toEqual([3, 1]);
  });

  it('stops before a sequence cut off at the end, never inside it', () => {
    const b = Buffer.from('a😀', 'utf8');
    for (let end = 2; end < b.length; end++) expect(utf8Advance(b, 0, end, 10)).toEqual([1, 1]);
    expect(utf8Advance(b, 0, b.length, 10)).toEqual([5, 2]);
  });

  it('counts an invalid byte (bad lead, bad continuation, overlong, surrogate) as one code point, as a decoder does', () => {
    for (const bytes of [[0xff], [0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xc3, 0x41]]) {
      const b = Buffer.from([...bytes, 0x41]);
      const [end, n] = utf8Advance(b, 0, b.length, 100);
      expect(end).toBe(b.length);
      expect(n).toBe([...b.toString('utf8')].length);
    }
  });
});

describe('splitCodePoints and countCodePoints', () => {
  it('splits into pieces of at most max code points without cutting a surrogate pair', () => {
    expect(splitCodePoints('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    expect(splitCodePoints('ab😀c😀', 2)).toEqual(['ab', '😀c', '😀']);
    expect(splitCodePoints('', 3)).toEqual(['']);
    expect(countCodePoints('ab😀c')).toBe(4);
    expect(countCodePoints('a\ud800b')).toBe(3); // a lone surrogate counts as one
  });
});

describe('compileFilter', () => {
  it('no filter is null; a pattern is a RegExp; an invalid one is a SourceConfigError', () => {
    expect(compileFilter(undefined)).toBeNull();
    expect(compileFilter(null)).toBeNull();
    expect(compileFilter('')).toBeNull();
    expect(compileFilter('^err')!.test('error x')).toBe(true);
    expect(() => compileFilter('(')).toThrow(SourceConfigError);
  });
});

describe('scanLines', () => {
  it('emits complete lines, drops CR before LF, skips empty lines and leaves a trailing partial line unconsumed', () => {
    const r = scan('one\r\n\ntwo\nthr');
    expect(r.out).toEqual([{ text: 'one', split: null }, { text: 'two', split: null }]);
    expect(r.consumed).toBe('one\r\n\ntwo\n'.length);
    expect(r.lines).toBe(3);
    expect(r.part).toBe(0);
    expect(r.split).toBe(0);
  });

  it('final: the tail without a newline is a line too', () => {
    const r = scan('a\nlast', true);
    expect(r.out.map((o) => o.text)).toEqual(['a', 'last']);
    expect(r.consumed).toBe(6);
    expect(r.lines).toBe(2);
  });

  it('nothing complete: consumes nothing', () => {
    expect(scan('no newline yet')).toMatchObject({ consumed: 0, lines: 0, out: [] });
  });

  it('a line of exactly the cap is one entry; one code point more is two parts marked 1/more and 2/last', () => {
    const max = MAX_MESSAGE_CODE_POINTS;
    expect(scan(`${'x'.repeat(max)}\n`).out).toEqual([{ text: 'x'.repeat(max), split: null }]);
    const r = scan(`${'é'.repeat(max + 1)}\n`);
    expect(r.out).toEqual([
      { text: 'é'.repeat(max), split: { part: 1, more: true } },
      { text: 'é', split: { part: 2, more: false } },
    ]);
    expect(r.split).toBe(1);
    expect(r.lines).toBe(1);
  });

  it('a BOM at the start of an over-long line is dropped before counting', () => {
    const max = MAX_MESSAGE_CODE_POINTS;
    const r = scan(`\ufeff${'é'.repeat(max)}\n`);
    expect(r.out).toEqual([{ text: 'é'.repeat(max), split: null }]);
  });

  it('an over-long line without its newline: whole parts are emitted, at least one code point stays for the last part', () => {
    const max = MAX_MESSAGE_CODE_POINTS;
    const r = scan('😀'.repeat(max * 2 + 1));
    expect(r.out.map((o) => o.split)).toEqual([{ part: 1, more: true }, { part: 2, more: true }]);
    expect(r.out.every((o) => countCodePoints(o.text) === max)).toBe(true);
    expect(r.consumed).toBe(max * 2 * 4);
    expect(r.part).toBe(2);
    expect(r.lines).toBe(0);
    // the rest arrives with its newline: it is part 3, the last one
    const rest = scan('😀\n', false, r.part);
    expect(rest.out).toEqual([{ text: '😀', split: { part: 3, more: false } }]);
    expect(rest.part).toBe(0);
    expect(rest.split).toBe(0); // counted once, at its first part
  });

  it('never cuts inside a UTF-8 sequence at the end of the data', () => {
    const max = MAX_MESSAGE_CODE_POINTS;
    const full = Buffer.from('é'.repeat(max + 2), 'utf8');
    const cut = full.subarray(0, full.length - 1); // the last é is incomplete
    const r = scan(cut);
    expect(r.out).toEqual([{ text: 'é'.repeat(max), split: { part: 1, more: true } }]);
    expect(r.consumed).toBe(max * 2);
  });
});
