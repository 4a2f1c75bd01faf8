// node bench/_buffer-layout.mjs [ROUNDS]
// What the agent buffer's row-per-entry layout costs against one row per appended chunk, per
// entry, in CPU: the real DurableBuffer (1000-entry appends, synchronous=FULL; acks deleting
// the rows with synchronous=NORMAL) against a bare SQLite table `chunks(first_seq, n, bytes,
// json)` holding each 1000-entry append as one row of its entries' JSON texts joined by
// newlines (same page size, WAL and sync levels; the entries serialised the same way, an ack
// deleting whole chunks). Also JSON.stringify + join alone, the floor both share. Medians of 4
// interleaved runs. Written for issue 20 (2026-12-04, ninth session) to size a layout change
// before making it; not a benchmark of the agent (run.mjs skips _* files).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DurableBuffer } from '../dist/agent/buffer/buffer.js';

const dir = mkdtempSync(join(tmpdir(), 'cortex-buffer-layout-'));
const ROUNDS = Number(process.argv[2] ?? 200);
const entry = (i) => ({ ts: '2026-12-04T20:00:00.000Z', severity: 'info', message: `GET /api/v1/items/${i} 200 512 worker-${i % 8} processed job ${i} in ${i % 97} ms`, source: 'custom:bench', app_name: 'web', process_id: String(1000 + (i % 50)) });
const batch = Array.from({ length: 1000 }, (_, i) => entry(i));
const cpuUs = (fn) => {
  const c0 = process.cpuUsage();
  const r = fn();
  const c = process.cpuUsage(c0);
  return [c.user + c.system, r];
};

function rowPerEntry(k) {
  const b = DurableBuffer.open(join(dir, `rows-${k}.db`), { reserveBytes: 0 });
  for (let r = 0; r < 20; r++) b.ack(b.append(batch).lastSeq); // warm-up
  let append = 0, ack = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const [a, x] = cpuUs(() => b.append(batch));
    const [d] = cpuUs(() => b.ack(x.lastSeq));
    append += a;
    ack += d;
  }
  b.close();
  return { append: append / (ROUNDS * 1000), ack: ack / (ROUNDS * 1000) };
}

function rowPerChunk(k) {
  const db = new Database(join(dir, `chunks-${k}.db`));
  db.pragma('page_size = 16384');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE chunks (first_seq INTEGER PRIMARY KEY, n INTEGER NOT NULL, bytes INTEGER NOT NULL, json TEXT NOT NULL); CREATE TABLE meta (id INTEGER PRIMARY KEY, next_seq INTEGER, acked_seq INTEGER); INSERT INTO meta VALUES (1, 1, 0)');
  const insert = db.prepare('INSERT INTO chunks VALUES (?, ?, ?, ?)');
  const meta = db.prepare('UPDATE meta SET next_seq = ?, acked_seq = ? WHERE id = 1');
  const del = db.prepare('DELETE FROM chunks WHERE first_seq + n - 1 <= ?');
  let next = 1;
  const appendTx = db.transaction(() => {
    const texts = new Array(batch.length);
    let bytes = 0;
    for (let i = 0; i < batch.length; i++) bytes += (texts[i] = JSON.stringify({ seq: next + i, ...batch[i] })).length;
    insert.run(next, batch.length, bytes, texts.join('\n'));
    next += batch.length;
    meta.run(next, 0);
    return next - 1;
  });
  const ackTx = db.transaction((upTo) => {
    del.run(upTo);
    meta.run(next, upTo);
  });
  const ack = (upTo) => {
    db.pragma('synchronous = NORMAL'); // as the buffer's relaxed acks
    try {
      ackTx(upTo);
    } finally {
      db.pragma('synchronous = FULL');
    }
  };
  for (let r = 0; r < 20; r++) ack(appendTx());
  let append = 0, acks = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const [a, last] = cpuUs(() => appendTx());
    const [d] = cpuUs(() => ack(last));
    append += a;
    acks += d;
  }
  db.close();
  return { append: append / (ROUNDS * 1000), ack: acks / (ROUNDS * 1000) };
}

function serialiseOnly() {
  const [us] = cpuUs(() => {
    let n = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const texts = new Array(batch.length);
      for (let i = 0; i < batch.length; i++) texts[i] = JSON.stringify({ seq: r * 1000 + i, ...batch[i] });
      n += texts.join('\n').length;
    }
    return n;
  });
  return us / (ROUNDS * 1000);
}

const runs = { rows: [], chunks: [], serialise: [] };
for (let k = 0; k < 4; k++) {
  runs.rows.push(rowPerEntry(k));
  runs.chunks.push(rowPerChunk(k));
  runs.serialise.push(serialiseOnly());
}
rmSync(dir, { recursive: true, force: true });
const med = (xs) => +[...xs].sort((a, b) => a - b)[xs.length >> 1].toFixed(2);
const out = {
  row_per_entry_append_cpu_us: med(runs.rows.map((x) => x.append)),
  row_per_entry_ack_cpu_us: med(runs.rows.map((x) => x.ack)),
  row_per_chunk_append_cpu_us: med(runs.chunks.map((x) => x.append)),
  row_per_chunk_ack_cpu_us: med(runs.chunks.map((x) => x.ack)),
  serialise_only_cpu_us: med(runs.serialise),
};
console.log(`per entry, CPU µs (median of 4): row per entry append ${out.row_per_entry_append_cpu_us} + ack ${out.row_per_entry_ack_cpu_us}; row per chunk append ${out.row_per_chunk_append_cpu_us} + ack ${out.row_per_chunk_ack_cpu_us}; JSON.stringify + join alone ${out.serialise_only_cpu_us}`);
console.log(JSON.stringify(out));
