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
export declare const SPLIT_MIN_BYTES = 131057;
/**
 * Bytes per piece at most (but for a single longer element): 56 KiB of UTF-8 stay under
 * 128 KiB as a string even when it is two-byte (a character outside Latin-1 makes it so; an
 * ASCII byte then takes two bytes).
 */
export declare const PIECE_BYTES: number;
/** JSON.parse of the UTF-8 text `bytes` (a frame of SPLIT_MIN_BYTES or more in pieces, see above). Throws as JSON.parse does. */
export declare function parseJsonFrame(bytes: Uint8Array): unknown;
