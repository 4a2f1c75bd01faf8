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
