// One batch of log rows packed as a few strings, for handing ready rows to the SQLite writer
// thread (./sqlite-writer.ts → ./sqlite-writer-worker.ts). postMessage copies a string
// as one block (no per-object structured clone), and building one is a single
// Array.join on the main thread; the writer takes it apart with one String.split.
// Everything that is not the insert itself (metadata JSON.stringify, `?? null`) is done
// here, on the packing side. (A binary buffer with Buffer.write per field measured
// slower on the main thread under `node --cpu-prof`: one native call per field.)
//
// Pieces: the rows go into strings of at most PIECE_MAX_CHARS characters each (a row is
// never cut: a row longer than that is a piece of its own). A V8 string over 128 KiB is a
// "large object", which V8 maps and unmaps on its own pages: on the 2-vCPU machines here
// making one costs about 4 ns per byte against 0.1 for a smaller one (DECISIONS P12), and
// one 1000-entry batch packed whole is about 230 KiB — paid once on the main thread (join)
// and once in the writer (postMessage's copy).
//
// Layout: for each row, 9 parts, every part followed by NUL (U+0000):
//   <mask char><seq in decimal>  mask = '@' (0x40) | one bit per NULL field (NULLABLE)
//   ts, severity, facility, app_name, process_id, message, source, metadata_json
// NUL cannot occur inside a part: ingest replaces NUL in every text field by U+FFFD
// before a row gets here (storableText, DECISIONS H3), and JSON.stringify escapes it.
// A NULL field is an empty part with its mask bit set.
import type { IngestLogEntry } from './storage.js';

/** Parts per row: the seq part and the 8 text columns of the insert after seq. */
export const PARTS_PER_ROW = 9;
const SEP = '\u0000';
const BIT_FACILITY = 1;
const BIT_APP_NAME = 2;
const BIT_PROCESS_ID = 4;
const BIT_METADATA = 8;

/**
 * Characters per piece at most (but for a single longer row): 48 Ki characters stay under
 * V8's 128 KiB large-object threshold even as a two-byte string (a text outside Latin-1).
 */
export const PIECE_MAX_CHARS = 48 * 1024;

export interface PackedRows {
  /** The packed rows (see the layout above), in order, whole rows per piece. */
  texts: string[];
  /** Rows in them. */
  rows: number;
}

/** Packs entries into pieces of whole rows (no field may hold NUL: see the layout above). */
export function packRows(entries: readonly IngestLogEntry[]): PackedRows {
  const n = entries.length;
  const texts: string[] = [];
  let parts: string[] = [];
  let p = 0;
  let chars = 0;
  for (let i = 0; i < n; i++) {
    const e = entries[i] as IngestLogEntry;
    const facility = e.facility ?? null;
    const app_name = e.app_name ?? null;
    const process_id = e.process_id ?? null;
    const metadata = e.metadata == null ? null : JSON.stringify(e.metadata);
    const mask =
      0x40 |
      (facility === null ? BIT_FACILITY : 0) |
      (app_name === null ? BIT_APP_NAME : 0) |
      (process_id === null ? BIT_PROCESS_ID : 0) |
      (metadata === null ? BIT_METADATA : 0);
    const head = String.fromCharCode(mask) + e.seq;
    const rowChars = head.length + e.ts.length + e.severity.length + (facility?.length ?? 0) + (app_name?.length ?? 0) + (process_id?.length ?? 0) + e.message.length + e.source.length + (metadata?.length ?? 0) + PARTS_PER_ROW;
    if (p > 0 && chars + rowChars > PIECE_MAX_CHARS) {
      parts[p] = '';
      texts.push(parts.join(SEP));
      parts = [];
      p = 0;
      chars = 0;
    }
    chars += rowChars;
    parts[p++] = head;
    parts[p++] = e.ts;
    parts[p++] = e.severity;
    parts[p++] = facility ?? '';
    parts[p++] = app_name ?? '';
    parts[p++] = process_id ?? '';
    parts[p++] = e.message;
    parts[p++] = e.source;
    parts[p++] = metadata ?? '';
  }
  if (p > 0) {
    parts[p] = '';
    texts.push(parts.join(SEP));
  }
  return { texts, rows: n };
}

/**
 * Calls `fn` for each packed row with its seq and a reused array of the 8 column values
 * after seq (valid only during the call), NULL fields as null. Throws before the first
 * call when the pieces do not hold exactly `rows` whole rows (a NUL inside a field would
 * shift every later row: refused whole rather than stored wrong).
 */
export function forEachRow(texts: readonly string[], rows: number, fn: (seq: number, fields: (string | null)[]) => void): void {
  const pieces = texts.map((text) => text.split(SEP));
  let total = 0;
  for (const parts of pieces) {
    // every piece ends with a NUL (the part after it is empty) and holds whole rows
    if ((parts.length - 1) % PARTS_PER_ROW !== 0 || parts[parts.length - 1] !== '') throw new Error(`packed rows: a piece of ${parts.length - 1} parts does not hold whole rows (a text field holds NUL?)`);
    total += parts.length - 1;
  }
  if (total !== rows * PARTS_PER_ROW) throw new Error(`packed rows: ${total} parts for ${rows} rows (a text field holds NUL?)`);
  const fields = new Array<string | null>(PARTS_PER_ROW - 1);
  for (const parts of pieces) eachRow(parts, fn, fields);
}

function eachRow(parts: string[], fn: (seq: number, fields: (string | null)[]) => void, fields: (string | null)[]): void {
  const end = parts.length - 1; // the part after the last NUL is empty
  for (let p = 0; p + PARTS_PER_ROW <= end; p += PARTS_PER_ROW) {
    const head = parts[p] as string;
    const mask = head.charCodeAt(0);
    const seq = Number(head.slice(1));
    fields[0] = parts[p + 1] as string;
    fields[1] = parts[p + 2] as string;
    fields[2] = (mask & BIT_FACILITY) !== 0 ? null : (parts[p + 3] as string);
    fields[3] = (mask & BIT_APP_NAME) !== 0 ? null : (parts[p + 4] as string);
    fields[4] = (mask & BIT_PROCESS_ID) !== 0 ? null : (parts[p + 5] as string);
    fields[5] = parts[p + 6] as string;
    fields[6] = parts[p + 7] as string;
    fields[7] = (mask & BIT_METADATA) !== 0 ? null : (parts[p + 8] as string);
    fn(seq, fields);
  }
}
