// npm run bench -- retention
// Ack latency while the retention pass deletes a large backlog of expired rows (issue 4:
// "ack latency during a large purge stays within the ingest targets").
//
// One database is filled with BENCH_PURGE_ROWS log rows received 60 days ago, then copied,
// so both servers below start from the same file:
//   purge     the compiled server with --retention-days 30: its first pass (5 s after
//             start) deletes every row in batches while one agent pushes 100 entries
//             every 10 ms (10,000 entries/s) and waits for the acks;
//   baseline  the same server and workload with --retention-days 0 (nothing purged),
//             for the same time.
// The purge window is read from the server's own log line ("retention: old rows
// deleted", with its duration); only pushes sent inside it count for the purge figures.
// Last output line: one JSON object with the figures.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStorage } from '../dist/server/db/dialect.js';
import { migrateToLatest } from '../dist/server/db/migrations/index.js';
import { issueAgent } from '../dist/server/db/agents.repository.js';
import { connect, entry } from './_wire.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
// `npm run bench -- retention --db postgres`: the PostgreSQL run (bench/_retention-pg.mjs).
const dbArg = process.argv.indexOf('--db');
if (dbArg > 0 && process.argv[dbArg + 1] === 'postgres') {
  await import('./_retention-pg.mjs');
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'cortex-bench-retention-'));
const ROWS = Number(process.env.BENCH_PURGE_ROWS ?? 1_000_000);
const BATCH = 1000;
const log = (...a) => console.log(...a);


// ───────────── the database: ROWS expired rows from 20 hosts, one commit per 1000 ─────────────
const purgeDb = join(dir, 'purge.db');
const baseDb = join(dir, 'baseline.db');
const fillStart = performance.now();
{
  const storage = openSqliteStorage({ path: purgeDb });
  await migrateToLatest(storage);
  const hosts = [];
  for (let h = 0; h < 20; h++) hosts.push((await issueAgent(storage.db, `old-${h}`)).host_id);
  const old = Date.now() - 60 * 86_400_000;
  const next = new Map(hosts.map((h) => [h, 1]));
  for (let b = 0; b * BATCH < ROWS; b++) {
    const host = hosts[b % hosts.length];
    const start = next.get(host);
    const n = Math.min(BATCH, ROWS - b * BATCH);
    const entries = Array.from({ length: n }, (_, i) => entry(start + i));
    await storage.ingest.commitBatch(host, entries, new Date(old + b * 1000).toISOString());
    next.set(host, start + n);
  }
  await storage.close();
}
// the agent that streams during the run, issued in both copies
copyFileSync(purgeDb, baseDb);
const agents = {};
for (const [name, path] of [['purge', purgeDb], ['baseline', baseDb]]) {
  const storage = openSqliteStorage({ path });
  agents[name] = await issueAgent(storage.db, 'streamer');
  await storage.close();
}
log(`filled ${ROWS} expired rows in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);

function startServer(db, retentionDays) {
  const server = spawn(
    process.execPath,
    [join(ROOT, 'dist/server/cli.js'), 'serve', '--listen', '127.0.0.1:0', '--db', db, '--retention-days', String(retentionDays), '--upgrades-per-minute', '0'],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, CORTEX_LOG_LEVEL: 'info' } },
  );
  const lines = [];
  let buf = '';
  const listeners = new Set();
  server.stderr.on('data', (d) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let obj;
      try { obj = JSON.parse(line); } catch { continue; }
      lines.push(obj);
      for (const l of listeners) l(obj);
    }
  });
  const waitFor = (pred, ms) => new Promise((resolve, reject) => {
    const found = lines.find(pred);
    if (found) return resolve(found);
    const t = setTimeout(() => { listeners.delete(l); reject(new Error(`server log line not seen in ${ms} ms`)); }, ms);
    const l = (o) => { if (pred(o)) { clearTimeout(t); listeners.delete(l); resolve(o); } };
    listeners.add(l);
    server.once('exit', (c) => { clearTimeout(t); reject(new Error(`server exited ${c}`)); });
  });
  return { server, waitFor };
}


/** 100 entries every 10 ms until stop() resolves; returns [sentAtEpochMs, latencyMs] per push. */
function streamAt10k({ ws, accepted }, until) {
  const samples = [];
  const sentAt = new Map();
  let seq = accepted + 1, id = 1, stopped = false, outstanding = 0;
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.error) throw new Error(`push refused: ${JSON.stringify(m.error)}`);
    const s = sentAt.get(m.id);
    if (!s) return;
    sentAt.delete(m.id);
    outstanding--;
    samples.push([s.wall, performance.now() - s.mono]);
  });
  return new Promise((resolve) => {
    const start = performance.now();
    let sent = 0;
    const tick = () => {
      const due = Math.floor((performance.now() - start) / 10) + 1;
      while (!stopped && sent < due) {
        const entries = Array.from({ length: 100 }, (_, i) => entry(seq + i));
        sentAt.set(id, { wall: Date.now(), mono: performance.now() });
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'logs.push', params: { seq_start: seq, entries } }));
        id++; seq += 100; sent++; outstanding++;
      }
      if (!stopped) return void setTimeout(tick, 2);
      const drain = () => (outstanding === 0 ? resolve(samples) : setTimeout(drain, 5));
      drain();
    };
    until.then(() => (stopped = true));
    tick();
  });
}

const p = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? null : +s[Math.min(s.length - 1, Math.floor(s.length * q))].toFixed(1);
};

// ───────────── purge run ─────────────
const fileBytes = (f) => (existsSync(f) ? statSync(f).size : 0) + (existsSync(`${f}-wal`) ? statSync(`${f}-wal`).size : 0);
const bytesBefore = fileBytes(purgeDb);
const purge = startServer(purgeDb, 30);
const purgeUrl = (await purge.waitFor((o) => o.msg === 'listening', 30_000)).url;
const conn = await connect(purgeUrl, agents.purge);
const done = purge.waitFor((o) => o.msg === 'retention: old rows deleted', 300_000);
const runStart = Date.now();
const samples = await streamAt10k(conn, done);
const passLine = await done;
conn.ws.close();
purge.server.kill('SIGTERM');
await new Promise((r) => purge.server.on('exit', r));
const bytesAfter = fileBytes(purgeDb);
const passEnd = Date.parse(passLine.time);
const passStart = passEnd - passLine.ms;
const during = samples.filter(([t]) => t >= passStart && t <= passEnd).map(([, l]) => l);
const runSecs = (Date.now() - runStart) / 1000;
log(`purge: ${passLine.logs} rows deleted in ${(passLine.ms / 1000).toFixed(1)} s (${Math.round(passLine.logs / (passLine.ms / 1000))} rows/s) while 10,000 entries/s were acked`);
log(`  database file (with its WAL) ${(bytesBefore / 2 ** 20).toFixed(1)} MiB before, ${(bytesAfter / 2 ** 20).toFixed(1)} MiB after (${(passLine.released_bytes / 2 ** 20).toFixed(1)} MiB handed back)`);
log(`  ack latency during the purge (${during.length} pushes): p50 ${p(during, 0.5)} ms, p99 ${p(during, 0.99)} ms, max ${p(during, 1)} ms`);

// ───────────── baseline run: same file, nothing to purge, same duration ─────────────
const base = startServer(baseDb, 0);
const baseUrl = (await base.waitFor((o) => o.msg === 'listening', 30_000)).url;
const bconn = await connect(baseUrl, agents.baseline);
const bsamples = await streamAt10k(bconn, new Promise((r) => setTimeout(r, Math.max(5_000, runSecs * 1000))));
bconn.ws.close();
base.server.kill('SIGTERM');
await new Promise((r) => base.server.on('exit', r));
const baseline = bsamples.map(([, l]) => l);
log(`baseline (nothing to purge, ${baseline.length} pushes): p50 ${p(baseline, 0.5)} ms, p99 ${p(baseline, 0.99)} ms, max ${p(baseline, 1)} ms`);

rmSync(dir, { recursive: true, force: true });
const p99During = p(during, 0.99);
const p99Base = p(baseline, 0.99);
const figures = {
  bench: 'retention',
  expired_rows: ROWS,
  purged_rows: passLine.logs,
  purge_secs: +(passLine.ms / 1000).toFixed(2),
  purge_rows_per_s: Math.round(passLine.logs / (passLine.ms / 1000)),
  released_bytes: passLine.released_bytes,
  file_bytes_before: bytesBefore,
  file_bytes_after: bytesAfter,
  pushes_during_purge: during.length,
  ack_p50_ms_during_purge: p(during, 0.5),
  ack_p99_ms_during_purge: p99During,
  ack_max_ms_during_purge: p(during, 1),
  ack_p99_ms_baseline: p99Base,
  p99_ratio_vs_baseline: p99Base ? +(p99During / p99Base).toFixed(2) : null,
  target_ack_p99_ms: 300,
  meets_target: p99During !== null && p99During < 300,
};
console.log(JSON.stringify(figures));
