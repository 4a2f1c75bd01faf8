// Ground truth of an agent's buffer.db read straight from the file, for the tests that check
// the buffer's invariants without going through its module. A row of `entries` is a run of
// `n` entries with the seqs seq .. seq + n - 1, their JSON texts joined by "\n", `bytes` their
// summed UTF-8 length (schema 2, DECISIONS P21); the entries at or below acked_seq of a row
// acked in part are not live.
import type BetterSqlite3 from 'better-sqlite3';

export interface StoredEntry {
  seq: number;
  bytes: number;
  json: string;
}

/** The live entries (above acked_seq), oldest first. Throws when a row's text, n or bytes disagree. */
export function storedEntries(db: BetterSqlite3.Database): StoredEntry[] {
  const acked = (db.prepare('SELECT acked_seq FROM meta WHERE id = 1').get() as { acked_seq: number }).acked_seq;
  const out: StoredEntry[] = [];
  for (const r of db.prepare('SELECT seq, n, bytes, json FROM entries ORDER BY seq').all() as { seq: number; n: number; bytes: number; json: string }[]) {
    const parts = r.json.split('\n');
    if (parts.length !== r.n) throw new Error(`row ${r.seq}: n = ${r.n} but its text holds ${parts.length} entries`);
    const sizes = parts.map((p) => Buffer.byteLength(p, 'utf8'));
    if (sizes.reduce((a, b) => a + b, 0) !== r.bytes) throw new Error(`row ${r.seq}: bytes = ${r.bytes} but its entries hold ${sizes.reduce((a, b) => a + b, 0)}`);
    if (r.seq + r.n - 1 <= acked) throw new Error(`row ${r.seq}..${r.seq + r.n - 1} lies wholly at or below acked_seq ${acked}`);
    parts.forEach((json, k) => {
      if (r.seq + k > acked) out.push({ seq: r.seq + k, bytes: sizes[k]!, json });
    });
  }
  return out;
}

/** COUNT and summed bytes of the live entries: what queue_depth and buffer_bytes must say. */
export function storedTotals(db: BetterSqlite3.Database): { n: number; b: number } {
  const live = storedEntries(db);
  return { n: live.length, b: live.reduce((a, e) => a + e.bytes, 0) };
}
