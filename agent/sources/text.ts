// Line and text handling shared by every log source (DESIGN.md 5.12, DECISIONS.md D8, D9).
//
// What lives here: the message cap in code points, UTF-8 boundary arithmetic on raw
// bytes (a cut never falls inside a sequence), splitting over-long text into parts,
// the `filter` option, and the byte-level line scanner the file source reads chunks
// with. No I/O, no source state: every source imports these from here (never from
// another source's module). Imports nothing of the agent but types.

import { SourceConfigError } from './types.js';

/** LogBatchEntry.message maxLength (contract): a longer line is sent in parts of exactly this many code points. */
export const MAX_MESSAGE_CODE_POINTS = 65536;

/** How one part of a split line is marked in its metadata (`metadata.split`). */
export interface SplitMark {
  /** 1-based part number. */
  part: number;
  /** More parts of the same line follow. */
  more: boolean;
}

/**
 * Byte index after up to `max` code points of s[a, b), as a WHATWG UTF-8 decoder would
 * count them at most (an invalid byte counts as one). Stops before an incomplete sequence
 * at `b`. Returns [end, codePoints].
 */
export function utf8Advance(s: Buffer, a: number, b: number, max: number): [number, number] {
  let i = a;
  let n = 0;
  while (i < b && n < max) {
    const c = s[i]!;
    let len = 1;
    if (c >= 0x80) {
      let lo = 0x80, hi = 0xbf;
      if (c >= 0xc2 && c <= 0xdf) len = 2;
      else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c === 0xe0) lo = 0xa0;
        else if (c === 0xed) hi = 0x9f;
      } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c === 0xf0) lo = 0x90;
        else if (c === 0xf4) hi = 0x8f;
      } else len = 0; // invalid lead byte
      if (len > 0) {
        if (i + len > b) {
          // possibly incomplete at the end: check what is there
          let ok = true;
          for (let k = 1; i + k < b; k++) {
            const d = s[i + k]!;
            if (k === 1 ? d < lo || d > hi : d < 0x80 || d > 0xbf) ok = false;
          }
          if (ok) break;
          len = 1;
        } else {
          for (let k = 1; k < len; k++) {
            const d = s[i + k]!;
            if (k === 1 ? d < lo || d > hi : d < 0x80 || d > 0xbf) {
              len = 1;
              break;
            }
          }
        }
      } else len = 1;
    }
    i += len;
    n++;
  }
  return [i, n];
}

/** Splits a string into pieces of at most `max` code points (a surrogate pair is never cut). */
export function splitCodePoints(s: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        if (count === max) {
          out.push(s.slice(start, i));
          start = i;
          count = 0;
        }
        i++;
        count++;
        continue;
      }
    }
    if (count === max) {
      out.push(s.slice(start, i));
      start = i;
      count = 0;
    }
    count++;
  }
  out.push(s.slice(start));
  return out;
}

/** Code points of a string (a lone surrogate counts as one). */
export function countCodePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Validates `filter`: a JavaScript regular expression source (no flags), applied to each raw line. */
export function compileFilter(filter: string | null | undefined): RegExp | null {
  if (filter === undefined || filter === null || filter === '') return null;
  try {
    return new RegExp(filter);
  } catch (err) {
    throw new SourceConfigError(`filter ${JSON.stringify(filter)} is not a valid JavaScript regular expression: ${(err as Error).message}`);
  }
}

/** What scanLines() found in one chunk. */
export interface ScannedChunk {
  /** Bytes consumed (complete lines and whole parts); the rest is read again with more data. */
  consumed: number;
  /** Parts of the current over-long line emitted so far (0: the chunk ends at a line start). */
  part: number;
  /** Lines completed (empty ones included). */
  lines: number;
  /** Lines that were cut into parts (counted at their first part). */
  split: number;
}

/**
 * Cuts buf[0, n) into lines at LF (a CR before it is dropped) and calls `emit` for each
 * non-empty line, or for each part of a line over MAX_MESSAGE_CODE_POINTS code points
 * (with its SplitMark; a BOM at the start of a split line is dropped). `part` is the
 * number of parts of the first line already emitted by an earlier chunk. A trailing
 * line without its LF is left unconsumed, unless `final` (it is a line then), or it is
 * longer than one part: whole parts are emitted, always leaving at least one code point
 * (so the last part carries `more: false`). `take`, when given, is offered each whole line
 * that fits one part as its bytes buf[a, end) first: when it returns true the line is
 * taken (not decoded, not emitted).
 */
export function scanLines(
  buf: Buffer,
  n: number,
  final: boolean,
  part: number,
  emit: (text: string, split: SplitMark | null) => void,
  take?: (a: number, end: number) => boolean,
): ScannedChunk {
  let pos = 0;
  let lines = 0;
  let split = 0;
  const lineDone = (a: number, b: number): void => {
    let end = b;
    if (end > a && buf[end - 1] === 13) end--;
    lines++;
    if (part === 0 && end - a <= MAX_MESSAGE_CODE_POINTS) {
      if (end === a) return; // empty line: skipped (D9)
      if (take !== undefined && take(a, end)) return;
      emit(buf.toString('utf8', a, end), null);
      return;
    }
    let text = buf.toString('utf8', a, end);
    if (part === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (part === 0 && countCodePoints(text) <= MAX_MESSAGE_CODE_POINTS) {
      if (text.length > 0) emit(text, null);
      return;
    }
    const pieces = text.length === 0 ? [] : splitCodePoints(text, MAX_MESSAGE_CODE_POINTS);
    if (part === 0) split++;
    for (let k = 0; k < pieces.length; k++) emit(pieces[k]!, { part: part + k + 1, more: k < pieces.length - 1 });
    part = 0;
  };
  for (;;) {
    const nl = buf.indexOf(10, pos);
    if (nl < 0 || nl >= n) break;
    lineDone(pos, nl);
    pos = nl + 1;
  }
  if (final && pos < n) {
    lineDone(pos, n);
    pos = n;
  } else if (n - pos > MAX_MESSAGE_CODE_POINTS) {
    for (;;) {
      const [end, cps] = utf8Advance(buf, pos, n, MAX_MESSAGE_CODE_POINTS + 1);
      if (cps <= MAX_MESSAGE_CODE_POINTS) break;
      const [cut] = utf8Advance(buf, pos, end, MAX_MESSAGE_CODE_POINTS);
      if (part === 0) split++;
      part++;
      emit(buf.toString('utf8', pos, cut), { part, more: true });
      pos = cut;
    }
  }
  return { consumed: pos, part, lines, split };
}
