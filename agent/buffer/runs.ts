// Runs: how buffer.db (schema 2, DECISIONS P21) stores entries.
//
// A row of `entries` holds a run of `n` entries with the contiguous seqs seq .. seq + n - 1:
// their JSON texts joined by RUN_SEPARATOR ("\n"), and `bytes`, the sum of their UTF-8 lengths
// (the separators not counted: bytes = UTF-8 length of json - (n - 1)). A JSON text as the
// buffer stores it never holds a raw line feed (JSON.stringify escapes it inside strings and
// writes no whitespace; the agent's own serializers escape it too, and the buffer re-serializes
// a text that holds one), so splitting on it gives the entries back.
//
// A schema 1 row (one entry a row) is a run of one: opening a schema 1 file adds the column
// `n` with its default 1 and nothing else changes (no row is rewritten).

import type BetterSqlite3 from 'better-sqlite3';

export const RUN_SEPARATOR = '\n';

/** The texts of a run of `n` entries; null when the text does not split into exactly `n` (a damaged row). */
export function splitRun(json: string, n: number): string[] | null {
  if (n === 1) return json.includes(RUN_SEPARATOR) ? null : [json];
  const parts = json.split(RUN_SEPARATOR);
  return parts.length === n ? parts : null;
}

/** Summed UTF-8 bytes of parts[from .. to) (the separators not counted). */
export function partsBytes(parts: readonly string[], from: number, to: number): number {
  let b = 0;
  for (let i = from; i < to; i++) b += Buffer.byteLength(parts[i]!, 'utf8');
  return b;
}

/** The SQL expression for a row's entry count: the column `n` (schema 2), or 1 in a schema 1 file (no such column). */
export function runLengthSql(db: BetterSqlite3.Database): string {
  return (db.pragma('table_info(entries)') as { name: string }[]).some((c) => c.name === 'n') ? 'n' : '1';
}

/** The problem liveTotals (buffer check) names for a row whose text does not split into its `n` entries. */
export function damagedRowProblem(seq: number, n: number): string {
  return `row ${seq} does not hold its ${n} entries`;
}

/** Whether a problem text is damagedRowProblem's. */
export function isDamagedRowProblem(message: string): boolean {
  return /^row \d+ does not hold its \d+ entries$/.test(message);
}

export interface LiveTotals {
  /** Rows in `entries`. */
  rows: number;
  /** Entries above acked_seq (what queue_depth counts) and their bytes (buffer_bytes). */
  entries: number;
  bytes: number;
  /** Lowest and highest live seq; null when no entry is live. */
  lo: number | null;
  hi: number | null;
  /** Rows whose text does not split into their `n` entries, or whose every seq is at or below acked_seq. */
  bad: string[];
}

/**
 * What the rows hold above `ackedSeq`, read from the file (buffer check, the invariant tests).
 * At most one row straddles acked_seq (acks delete only rows wholly at or below it): its
 * entries at or below it are not counted.
 */
export function liveTotals(db: BetterSqlite3.Database, ackedSeq: number): LiveTotals {
  const nSql = runLengthSql(db);
  const out: LiveTotals = { rows: 0, entries: 0, bytes: 0, lo: null, hi: null, bad: [] };
  const rows = db.prepare(`SELECT seq, ${nSql} AS n, bytes, json FROM entries ORDER BY seq`).iterate() as Iterable<{ seq: number; n: number; bytes: number; json: string }>;
  let prevLast = -Infinity;
  for (const r of rows) {
    out.rows++;
    if (r.seq <= prevLast) out.bad.push(`row ${r.seq} overlaps the row before it (up to ${prevLast})`);
    prevLast = Math.max(prevLast, r.seq + r.n - 1);
    const parts = splitRun(r.json, r.n);
    const last = r.seq + r.n - 1;
    if (parts === null || !(r.n >= 1)) {
      out.bad.push(damagedRowProblem(r.seq, r.n));
      continue;
    }
    if (partsBytes(parts, 0, parts.length) !== r.bytes) out.bad.push(`row ${r.seq} says ${r.bytes} bytes but its entries hold ${partsBytes(parts, 0, parts.length)}`);
    if (last <= ackedSeq) {
      out.bad.push(`row ${r.seq}..${last} is not above acked_seq ${ackedSeq}`);
      continue;
    }
    const from = Math.max(r.seq, ackedSeq + 1);
    out.entries += last - from + 1;
    out.bytes += from === r.seq ? r.bytes : partsBytes(parts, from - r.seq, r.n);
    if (out.lo === null) out.lo = from;
    out.hi = last;
  }
  return out;
}
