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

export const INSERT_METRIC = 'INSERT INTO metrics (host_id, ts, name, value, labels_json, received_at) VALUES (?, ?, ?, ?, ?, ?)';

export const TOUCH_LAST_SEEN = 'UPDATE agents SET last_seen = ? WHERE host_id = ?';

/**
 * Values per row of the multi-row statement: every column but host_id and received_at,
 * which are the same for every row of one commit and bound once per statement.
 */
const CHUNK_COLUMNS = 9;

/**
 * Rows per multi-row INSERT of the ingest path. One statement step per CHUNK rows instead
 * of one per row: bench/_insert-cost.mjs measured about a fifth less insert time per row at
 * 50 rows than at 1 (the per-statement work — bind, step, reset, the ON CONFLICT
 * bookkeeping of a statement — spread over the chunk). 2 + 50 × 9 = 452 bound values, far
 * under SQLite's limit of 32,766.
 */
export const LOG_ROWS_PER_INSERT = 50;

/**
 * The multi-row insert of `rows` rows of one host and one commit: its first two values are
 * host_id and received_at, then CHUNK_COLUMNS values per row (seq, ts, severity, facility,
 * app_name, process_id, message, source, metadata_json), in that order. An INSERT … SELECT
 * from a VALUES list, so that the two values shared by every row are bound once (binding
 * is about a third of the insert's instructions: each string is copied out of V8 and again
 * into SQLite); SQLite reads the VALUES rows in order, so rowids follow seq as with one
 * INSERT per row. `WHERE true` is SQLite's way of writing an upsert on a SELECT (without
 * it, ON reads as a join's). ON CONFLICT DO NOTHING applies to each row.
 */
export function insertLogRowsSql(rows: number): string {
  const tuple = `(${new Array<string>(CHUNK_COLUMNS).fill('?').join(', ')})`;
  return (
    'INSERT INTO logs (host_id, seq, ts, received_at, severity, facility, app_name,' +
    ' process_id, message, source, metadata_json)' +
    ' SELECT ?, column1, column2, ?, column3, column4, column5, column6, column7, column8, column9' +
    ` FROM (VALUES ${new Array<string>(rows).fill(tuple).join(', ')})` +
    ' WHERE true ON CONFLICT (host_id, seq) DO NOTHING'
  );
}

/** What LogRowInserter needs of a prepared statement (better-sqlite3's Statement). */
export interface RunStatement {
  run(...params: unknown[]): { changes: number };
}

/**
 * Collects the log rows of one commit (one host, one received_at: begin()) and inserts them
 * LOG_ROWS_PER_INSERT at a time (`many`: insertLogRowsSql(LOG_ROWS_PER_INSERT)), the rest
 * one by one (`one`: INSERT_LOG), so the in-process writer and the writer thread store
 * exactly the same rows with the same statements. Rows are inserted in the order they were
 * added; `finish()` must be called before the transaction's other statements that depend on
 * them and returns the rows inserted since begin() (duplicates of (host_id, seq) are not
 * counted). The values go to better-sqlite3 as arguments, not as one array: it reads an
 * array element by element through V8's generic property lookup.
 */
export class LogRowInserter {
  private readonly args: unknown[] = Array.from({ length: LOG_ROWS_PER_INSERT * CHUNK_COLUMNS }, () => null);
  private host_id = '';
  private received_at = '';
  private pending = 0;
  private inserted = 0;

  constructor(
    private readonly one: RunStatement,
    private readonly many: RunStatement,
  ) {}

  /** Starts the rows of one commit, dropping any still held (a transaction rolled back). */
  begin(host_id: string, received_at: string): void {
    this.host_id = host_id;
    this.received_at = received_at;
    this.pending = 0;
    this.inserted = 0;
  }

  add(
    seq: number,
    ts: string,
    severity: string,
    facility: string | null,
    app_name: string | null,
    process_id: string | null,
    message: string,
    source: string,
    metadata_json: string | null,
  ): void {
    const a = this.args;
    let i = this.pending * CHUNK_COLUMNS;
    a[i++] = seq;
    a[i++] = ts;
    a[i++] = severity;
    a[i++] = facility;
    a[i++] = app_name;
    a[i++] = process_id;
    a[i++] = message;
    a[i++] = source;
    a[i] = metadata_json;
    if (++this.pending === LOG_ROWS_PER_INSERT) {
      this.inserted += this.many.run(this.host_id, this.received_at, ...a).changes;
      this.pending = 0;
    }
  }

  /** Inserts the rows still held and returns how many rows were inserted since begin(). */
  finish(): number {
    const a = this.args;
    for (let r = 0; r < this.pending; r++) {
      const i = r * CHUNK_COLUMNS;
      this.inserted += this.one.run(this.host_id, a[i], a[i + 1], this.received_at, a[i + 2], a[i + 3], a[i + 4], a[i + 5], a[i + 6], a[i + 7], a[i + 8]).changes;
    }
    this.pending = 0;
    const n = this.inserted;
    this.inserted = 0;
    return n;
  }
}
