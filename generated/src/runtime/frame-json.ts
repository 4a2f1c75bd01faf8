/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * JSON.parse of a text frame that arrives as UTF-8 bytes, without ever making one string of
 * a large frame.
 *
 * Why: a JavaScript string over 128 KiB is a V8 "large object", allocated on pages of its
 * own that are mapped and unmapped for it. On the 2-vCPU machines this project is measured
 * on, making one costs about 4 ns per byte against 0.1 ns for a smaller string, and a full
 * logs.push frame of 1000 entries is about 230 KiB: decoding it whole cost the reference
 * server about as much as JSON.parse itself.
 *
 * How: one pass over the bytes finds the largest array (a logs.push frame's `entries`) and
 * the commas between its elements. The frame is then parsed as a skeleton — the same bytes
 * with that array replaced by a placeholder string — and the array's elements in pieces of
 * at most PIECE_BYTES, each parsed as `[piece]`; the placeholder is replaced by the
 * elements, in order. For valid JSON the result is exactly JSON.parse of the whole text:
 * the pass tracks strings and escapes as JSON defines them (`"` and `\` never occur inside a
 * multi-byte UTF-8 sequence), every byte is parsed by JSON.parse once, and pieces start and
 * end at an element boundary, so decoding them apart gives the same characters. Anything
 * unexpected (the array is not where a value is, the placeholder is not found exactly once
 * after duplicate keys, a piece fails to parse, nesting deeper than MAX_DEPTH) falls back to
 * JSON.parse of the whole frame, which also reports invalid JSON the usual way.
 */

/**
 * Frames shorter than this are decoded and parsed whole: as a one-byte string (ASCII and
 * Latin-1 text) a frame of up to 131,056 bytes is no large object (measured: 0.15 ns per byte
 * to decode at 131,056, 4.5 at 131,057), and splitting one costs more than it saves. (A frame
 * with characters beyond Latin-1 decodes to a two-byte string, a large object from 65,529
 * characters: such frames under this size are parsed whole all the same.)
 */
export const SPLIT_MIN_BYTES = 131_057;

/**
 * Bytes per piece at most (but for a single longer element): 56 KiB of UTF-8 stay under
 * 128 KiB as a string even when it is two-byte (a character outside Latin-1 makes it so; an
 * ASCII byte then takes two bytes).
 */
export const PIECE_BYTES = 56 * 1024;

/** Nesting beyond this gives up the split (JSON.parse of the whole frame decides). */
const MAX_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

// A placeholder no peer can send on purpose: 128 random bits per process (Web Crypto, in
// Node.js and browsers alike), with a NUL. Were a frame to carry it elsewhere while a
// duplicate key dropped the real one, its array would land in the wrong place.
const PLACEHOLDER = `\u0000frame-json:${Array.from(globalThis.crypto.getRandomValues(new Uint32Array(4)), (w) => w.toString(16)).join('')}`;
const PLACEHOLDER_JSON = JSON.stringify(PLACEHOLDER);

type BufferLike = Uint8Array & { toString(encoding: 'utf8', start: number, end: number): string };
const NodeBuffer = (globalThis as { Buffer?: { isBuffer(value: unknown): boolean } }).Buffer;
const decoder = new TextDecoder();

function decode(bytes: Uint8Array, start: number, end: number): string {
  if (NodeBuffer !== undefined && NodeBuffer.isBuffer(bytes)) return (bytes as BufferLike).toString('utf8', start, end);
  return decoder.decode(bytes.subarray(start, end));
}

/** The largest array's span ([ at start, ] at end) and the offsets of the commas between its elements. */
interface ArraySpan {
  start: number;
  end: number;
  depth: number;
  commas: number[];
}

/** JSON.parse of the UTF-8 text `bytes` (a frame of SPLIT_MIN_BYTES or more in pieces, see above). Throws as JSON.parse does. */
export function parseJsonFrame(bytes: Uint8Array): unknown {
  if (bytes.length >= SPLIT_MIN_BYTES) {
    const span = largestArray(bytes);
    if (span !== null) {
      const value = parseSplit(bytes, span);
      if (value !== FAILED) return value;
    }
  }
  return JSON.parse(decode(bytes, 0, bytes.length));
}

const FAILED: unique symbol = Symbol('split failed');

/** One pass: the largest array over PIECE_BYTES with its element commas, or null. */
function largestArray(bytes: Uint8Array): ArraySpan | null {
  const n = bytes.length;
  // per open bracket: its offset (negative for an object) and, for an array, its commas
  const opened: number[] = [];
  const commas: (number[] | null)[] = [];
  let best: ArraySpan | null = null;
  for (let i = 0; i < n; i++) {
    const c = bytes[i] as number;
    if (c === QUOTE) {
      // skip the string: to the next quote not escaped
      for (i++; i < n; i++) {
        const s = bytes[i] as number;
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === COMMA) {
      const list = commas[commas.length - 1];
      if (list != null) list.push(i);
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (opened.length === MAX_DEPTH) return null;
      opened.push(c === OPEN_ARRAY ? i : -1 - i);
      commas.push(c === OPEN_ARRAY ? [] : null);
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      const start = opened.pop();
      const list = commas.pop();
      if (start === undefined || (c === CLOSE_ARRAY) !== start >= 0) return null; // unbalanced: let JSON.parse say so
      if (list != null && i - start > PIECE_BYTES && (best === null || i - start > best.end - best.start)) {
        best = { start, end: i, depth: opened.length, commas: list };
      }
    }
  }
  return opened.length === 0 ? best : null;
}

function parseSplit(bytes: Uint8Array, span: ArraySpan): unknown {
  let skeleton: unknown;
  let elements: unknown[];
  try {
    skeleton = JSON.parse(decode(bytes, 0, span.start) + PLACEHOLDER_JSON + decode(bytes, span.end + 1, bytes.length));
    elements = [];
    let from = span.start + 1;
    let last = from; // the start of the current piece
    const { commas } = span;
    for (let k = 0; k <= commas.length; k++) {
      const at = k < commas.length ? (commas[k] as number) : span.end; // the element's end: its comma, or the ]
      // close the piece before the element that would take it past PIECE_BYTES
      if (at - last > PIECE_BYTES && from > last) {
        appendPiece(elements, bytes, last, from - 1);
        last = from;
      }
      from = at + 1;
    }
    appendPiece(elements, bytes, last, span.end);
  } catch {
    return FAILED;
  }
  // n commas separate n + 1 elements: fewer means an empty one (`[1,]`, `[,1]`), which
  // JSON.parse of the whole refuses but a piece of nothing but whitespace would not
  if (span.commas.length > 0 && elements.length !== span.commas.length + 1) return FAILED;
  if (skeleton === PLACEHOLDER) return elements;
  const found = findPlaceholder(skeleton, span.depth);
  if (found === null) return FAILED;
  Object.defineProperty(found.parent, found.key, { value: elements, writable: true, enumerable: true, configurable: true });
  return skeleton;
}

/** Parses bytes [from, to) (whole elements, comma-separated) as an array and appends its elements. */
function appendPiece(out: unknown[], bytes: Uint8Array, from: number, to: number): void {
  const text = decode(bytes, from, to);
  // `[]` of nothing but whitespace is an empty array, as the whole array would be
  const part = JSON.parse(`[${text}]`) as unknown[];
  for (let i = 0; i < part.length; i++) out.push(part[i]);
}

/** Where the placeholder is in the skeleton (at `depth` levels below the root), when it is there exactly once. */
function findPlaceholder(root: unknown, depth: number): { parent: object; key: string | number } | null {
  let found: { parent: object; key: string | number } | null = null;
  let count = 0;
  const walk = (node: unknown, level: number): void => {
    if (node === null || typeof node !== 'object' || level >= depth || count > 1) return;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        if (node[i] === PLACEHOLDER) {
          count++;
          found = { parent: node, key: i };
        } else walk(node[i], level + 1);
      }
      return;
    }
    for (const key of Object.keys(node)) {
      const v = (node as Record<string, unknown>)[key];
      if (v === PLACEHOLDER) {
        count++;
        found = { parent: node, key };
      } else walk(v, level + 1);
    }
  };
  walk(root, 0);
  return count === 1 ? found : null;
}
