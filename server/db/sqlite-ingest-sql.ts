// The SQL of the SQLite ingest path, shared by the in-process writer (./dialect.ts) and the
// writer thread (./sqlite-writer-worker.ts), so both store exactly the same rows.

export const SELECT_ACCEPTED = 'SELECT accepted_seq, session_id FROM agents WHERE host_id = ?';

/** ON CONFLICT DO NOTHING, not INSERT OR IGNORE: see SqliteIngestWriter in ./dialect.ts. */
export const INSERT_LOG =
  'INSERT INTO logs (host_id, seq, ts, received_at, severity, facility, app_name,' +
  ' process_id, message, source, metadata_json)' +
  ' VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)' +
  ' ON CONFLICT (host_id, seq) DO NOTHING';

export const ADVANCE_ACCEPTED = 'UPDATE agents SET accepted_seq = MAX(accepted_seq, ?), last_seen = ? WHERE host_id = ?';

export const INSERT_METRIC = 'INSERT INTO metrics (host_id, ts, name, value, labels_json) VALUES (?, ?, ?, ?, ?)';

export const TOUCH_LAST_SEEN = 'UPDATE agents SET last_seen = ? WHERE host_id = ?';

/** Values per row of INSERT_LOG. */
const LOG_COLUMNS = 11;

/**
 * Rows per multi-row INSERT of the ingest path. One statement step per CHUNK rows instead
 * of one per row: bench/_insert-cost.mjs measured about a fifth less insert time per row at
 * 50 rows than at 1 (the per-statement work — bind, step, reset, the ON CONFLICT
 * bookkeeping of a statement — spread over the chunk). 50 × 11 = 550 bound values, far
 * under SQLite's limit of 32,766.
 */
export const LOG_ROWS_PER_INSERT = 50;

/** INSERT_LOG with `rows` value tuples (ON CONFLICT DO NOTHING applies to each row). */
export function insertLogRowsSql(rows: number): string {
  const tuple = `(${new Array<string>(LOG_COLUMNS).fill('?').join(', ')})`;
  return (
    'INSERT INTO logs (host_id, seq, ts, received_at, severity, facility, app_name,' +
    ' process_id, message, source, metadata_json)' +
    ` VALUES ${new Array<string>(rows).fill(tuple).join(', ')}` +
    ' ON CONFLICT (host_id, seq) DO NOTHING'
  );
}

/** What LogRowInserter needs of a prepared statement (better-sqlite3's Statement). */
export interface RunStatement {
  run(...params: unknown[]): { changes: number };
}

/**
 * Collects the log rows of one transaction and inserts them LOG_ROWS_PER_INSERT at a time
 * (`many`: insertLogRowsSql(LOG_ROWS_PER_INSERT)), the rest one by one (`one`: INSERT_LOG),
 * so the in-process writer and the writer thread store exactly the same rows with the same
 * statements. Rows are inserted in the order they were added; `finish()` must be called
 * before the transaction's other statements that depend on them and returns the rows
 * inserted since the last finish (duplicates of (host_id, seq) are not counted).
 */
export class LogRowInserter {
  private readonly args: unknown[] = new Array<unknown>(LOG_ROWS_PER_INSERT * LOG_COLUMNS);
  private pending = 0;
  private inserted = 0;

  constructor(
    private readonly one: RunStatement,
    private readonly many: RunStatement,
  ) {}

  add(
    host_id: string,
    seq: number,
    ts: string,
    received_at: string,
    severity: string,
    facility: string | null,
    app_name: string | null,
    process_id: string | null,
    message: string,
    source: string,
    metadata_json: string | null,
  ): void {
    const a = this.args;
    let i = this.pending * LOG_COLUMNS;
    a[i++] = host_id;
    a[i++] = seq;
    a[i++] = ts;
    a[i++] = received_at;
    a[i++] = severity;
    a[i++] = facility;
    a[i++] = app_name;
    a[i++] = process_id;
    a[i++] = message;
    a[i++] = source;
    a[i] = metadata_json;
    if (++this.pending === LOG_ROWS_PER_INSERT) {
      this.inserted += this.many.run(a).changes;
      this.pending = 0;
    }
  }

  /** Inserts the rows still held and returns how many rows were inserted in all. */
  finish(): number {
    const a = this.args;
    for (let r = 0; r < this.pending; r++) {
      const i = r * LOG_COLUMNS;
      this.inserted += this.one.run(a[i], a[i + 1], a[i + 2], a[i + 3], a[i + 4], a[i + 5], a[i + 6], a[i + 7], a[i + 8], a[i + 9], a[i + 10]).changes;
    }
    this.pending = 0;
    const n = this.inserted;
    this.inserted = 0;
    return n;
  }

  /** Drops the rows still held (the transaction is being rolled back). */
  reset(): void {
    this.pending = 0;
    this.inserted = 0;
  }
}
