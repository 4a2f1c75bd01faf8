// One batch of log rows packed as ONE string, for handing ready rows to the SQLite writer
// thread (./sqlite-writer.ts → ./sqlite-writer-worker.ts). postMessage copies a string
// as one block (no per-object structured clone), and building it is a single
// Array.join on the main thread; the writer takes it apart with one String.split.
// Everything that is not the insert itself (metadata JSON.stringify, `?? null`) is done
// here, on the packing side. (A binary buffer with Buffer.write per field measured
// slower on the main thread under `node --cpu-prof`: one native call per field.)
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

export interface PackedRows {
  /** The packed rows (see the layout above). */
  text: string;
  /** Rows in it. */
  rows: number;
}

/** Packs entries into one string (no field may hold NUL: see the layout above). */
export function packRows(entries: readonly IngestLogEntry[]): PackedRows {
  const n = entries.length;
  const parts = new Array<string>(n * PARTS_PER_ROW + 1);
  let p = 0;
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
    parts[p++] = String.fromCharCode(mask) + e.seq;
    parts[p++] = e.ts;
    parts[p++] = e.severity;
    parts[p++] = facility ?? '';
    parts[p++] = app_name ?? '';
    parts[p++] = process_id ?? '';
    parts[p++] = e.message;
    parts[p++] = e.source;
    parts[p++] = metadata ?? '';
  }
  parts[p] = '';
  return { text: parts.join(SEP), rows: n };
}

/**
 * Calls `fn` for each packed row with its seq and a reused array of the 8 column values
 * after seq (valid only during the call), NULL fields as null. Throws before the first
 * call when the text does not hold exactly `rows` rows (a NUL inside a field would shift
 * every later row: refused whole rather than stored wrong).
 */
export function forEachRow(text: string, rows: number, fn: (seq: number, fields: (string | null)[]) => void): void {
  const parts = text.split(SEP);
  if (parts.length !== rows * PARTS_PER_ROW + 1) throw new Error(`packed rows: ${parts.length - 1} parts for ${rows} rows (a text field holds NUL?)`);
  const fields = new Array<string | null>(PARTS_PER_ROW - 1);
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
