// node bench/_insert-cost.mjs [REPEATS]
// What the SQLite insert of the ingest path costs per row, and per index: 50 commits of
// 1000 sshd-like rows (bench/_wire.mjs entry) into the `logs` table of migrations 0001 +
// 0002 (rowid table, UNIQUE (host_id, seq), (host_id, ts), (received_at)), with indexes
// left out one at a time, and with the WAL checkpoint inside COMMIT (SQLite's default
// wal_autocheckpoint 1000) or not (wal_autocheckpoint 0: what the writer thread sees while
// the checkpointer thread copies the WAL back). Prints the median µs per row of each
// variant. Not a benchmark of the server (run.mjs skips _* files).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { entry } from './_wire.mjs';

const dir = mkdtempSync(join(tmpdir(), 'cortex-insert-cost-'));
const HOST = '0b9e8a1c-3f0e-4a77-9c61-0d4a7d7b2a11';
const B = 1000;
const N = 60 * B;
const rows = Array.from({ length: N }, (_, i) => entry(i + 1));

function run(name, { indexes = ['unique', 'host_ts', 'received_at'], checkpoint = true }) {
  const db = new Database(join(dir, `${name}.db`));
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  if (!checkpoint) db.pragma('wal_autocheckpoint = 0');
  db.exec('create table agents (host_id text primary key, accepted_seq bigint not null default 0, last_seen text, session_id text)');
  db.prepare('insert into agents (host_id) values (?)').run(HOST);
  const unique = indexes.includes('unique');
  db.exec(`create table logs (host_id text not null, seq bigint not null, ts text not null, received_at text not null, severity text not null, facility text, app_name text, process_id text, message text not null, source text not null, metadata_json text${unique ? ', constraint u unique (host_id, seq)' : ''})`);
  if (indexes.includes('host_ts')) db.exec('create index i1 on logs (host_id, ts)');
  if (indexes.includes('received_at')) db.exec('create index i2 on logs (received_at)');
  const insert = db.prepare(`INSERT INTO logs (host_id, seq, ts, received_at, severity, facility, app_name, process_id, message, source, metadata_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)${unique ? ' ON CONFLICT (host_id, seq) DO NOTHING' : ''}`);
  const select = db.prepare('SELECT accepted_seq, session_id FROM agents WHERE host_id = ?');
  const advance = db.prepare('UPDATE agents SET accepted_seq = MAX(accepted_seq, ?), last_seen = ? WHERE host_id = ?');
  const tx = db.transaction((from, received_at) => {
    select.get(HOST);
    for (let i = from; i < from + B; i++) {
      const e = rows[i];
      insert.run(HOST, e.seq, e.ts, received_at, e.severity, e.facility ?? null, e.app_name ?? null, e.process_id ?? null, e.message, e.source, null);
    }
    advance.run(rows[from + B - 1].seq, received_at, HOST);
  });
  let b = 0;
  for (; b < 10; b++) tx.immediate(b * B, new Date().toISOString()); // warm-up
  const t0 = performance.now();
  for (; b < N / B; b++) tx.immediate(b * B, new Date().toISOString());
  const us = ((performance.now() - t0) * 1000) / (N - 10 * B);
  db.close();
  return us;
}

const variants = {
  'all 3 indexes': {},
  'without (received_at)': { indexes: ['unique', 'host_ts'] },
  'without (host_id, ts)': { indexes: ['unique', 'received_at'] },
  'UNIQUE (host_id, seq) only': { indexes: ['unique'] },
  'no index': { indexes: [] },
  'all 3, no checkpoint in COMMIT': { checkpoint: false },
  'UNIQUE only, no checkpoint': { indexes: ['unique'], checkpoint: false },
  'no index, no checkpoint': { indexes: [], checkpoint: false },
};
const repeats = Number(process.argv[2] ?? 3);
const results = {};
for (let r = 0; r < repeats; r++) {
  let i = 0;
  for (const [k, v] of Object.entries(variants)) (results[k] ??= []).push(run(`v${i++}-${r}`, v));
}
const out = {};
for (const [k, v] of Object.entries(results)) {
  v.sort((a, b) => a - b);
  out[k] = +v[Math.floor(v.length / 2)].toFixed(2);
  console.log(`${k.padEnd(32)} ${out[k].toFixed(2).padStart(6)} µs/row  (runs: ${v.map((x) => x.toFixed(2)).join(' ')})`);
}
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(out));
