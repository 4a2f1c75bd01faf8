// npm run bench -- retention --db postgres
// The PostgreSQL side of the retention benchmark (bench/retention.mjs hands over to this
// file): ack latency at 10,000 entries/s while a retention pass removes BENCH_PURGE_ROWS
// (default 1,000,000) expired rows, against the same workload with nothing to purge.
// One fresh schema is filled with rows received 60..51 days ago (ten day partitions);
//   baseline  the compiled server with --retention-days 0 streams for 8 s (nothing purged);
//   purge     the same server with --retention-days 30 on the same schema: its first pass
//             (5 s after start) detaches and drops the ten expired partitions while the
//             agent streams.
// Pushes sent from 1 s before the pass began to 1 s after it ended count as "during".
// Last line: one JSON object with the figures and the ratio vs the baseline.
import { spawn } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openStorage } from '../dist/server/db/open.js';
import { migrateToLatest } from '../dist/server/db/migrations/index.js';
import { issueAgent } from '../dist/server/db/agents.repository.js';
import { connect, entry } from './_wire.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BASE = process.env.CORTEX_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `cx_bench_ret_${process.pid}`;
const u = new URL(BASE);
u.searchParams.set('options', `-c search_path=${SCHEMA}`);
const DB = u.toString();
const ROWS = Number(process.env.BENCH_PURGE_ROWS ?? 1_000_000);
const BATCH = 1000;
const log = (...a) => console.log(...a);

const admin = new pg.Client({ connectionString: BASE });
await admin.connect();
await admin.query(`drop schema if exists ${SCHEMA} cascade`);
await admin.query(`create schema ${SCHEMA}`);

const fillStart = performance.now();
const storage = await openStorage(DB, { poolSize: 4 });
await migrateToLatest(storage);
const hosts = [];
for (let h = 0; h < 20; h++) hosts.push((await issueAgent(storage.db, `old-${h}`)).host_id);
const old = Date.now() - 60 * 86_400_000;
const batches = Math.ceil(ROWS / BATCH);
const spread = (9 * 86_400_000) / batches; // ten days of receive times
const next = new Map(hosts.map((h) => [h, 1]));
for (let b = 0; b < batches; b++) {
  const host = hosts[b % hosts.length];
  const start = next.get(host);
  const n = Math.min(BATCH, ROWS - b * BATCH);
  await storage.ingest.commitBatch(host, Array.from({ length: n }, (_, i) => entry(start + i)), new Date(old + b * spread).toISOString());
  next.set(host, start + n);
}
const streamers = { baseline: await issueAgent(storage.db, 'streamer-base'), purge: await issueAgent(storage.db, 'streamer-purge') };
await storage.close();
await admin.query(`vacuum analyze ${SCHEMA}.agents`);
log(`filled ${ROWS} expired rows (ten day partitions) in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);

function startServer(id, retentionDays) {
  const server = spawn(process.execPath, [join(ROOT, 'dist/server/cli.js'), 'serve', '--listen', '127.0.0.1:0', '--db', DB, '--server-id', id, '--retention-days', String(retentionDays), '--upgrades-per-minute', '0'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, CORTEX_LOG_LEVEL: 'info' } });
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
  });
  return { server, waitFor };
}
// Backpressure (-32020) is an answer a loaded server may give, not a failure of the bench: the
// client does what an agent does — waits retry_after_ms and resends from resend_from_seq (the
// refused push's seq_start) — and the refusals are counted (`backpressure_refusals`).
let refusals = 0;
function streamAt10k({ ws, accepted }, until) {
  const samples = [];
  const sentAt = new Map();
  let seq = accepted + 1, id = 1, stopped = false, outstanding = 0;
  let rewindTo, pausedUntil = 0;
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    const s = sentAt.get(m.id);
    if (m.error) {
      if (m.error.code !== -32020 || !s) throw new Error(`push refused: ${JSON.stringify(m.error)}`);
      refusals++;
      sentAt.delete(m.id);
      outstanding--;
      const from = m.error.data?.resend_from_seq ?? s.seq;
      rewindTo = Math.min(rewindTo ?? from, from);
      pausedUntil = Math.max(pausedUntil, performance.now() + (m.error.data?.retry_after_ms ?? 100));
      return;
    }
    if (!s) return;
    sentAt.delete(m.id);
    outstanding--;
    samples.push([s.wall, performance.now() - s.mono]);
  });
  return new Promise((resolve) => {
    const start = performance.now();
    let sent = 0;
    const tick = () => {
      const now = performance.now();
      if (now < pausedUntil) return void setTimeout(tick, 2);
      if (rewindTo !== undefined) {
        seq = rewindTo;
        rewindTo = undefined;
      }
      const due = Math.floor((now - start) / 10) + 1;
      while (!stopped && sent < due) {
        const entries = Array.from({ length: 100 }, (_, i) => entry(seq + i));
        sentAt.set(id, { wall: Date.now(), mono: performance.now(), seq });
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
const stop = async (s) => {
  s.server.kill('SIGTERM');
  await new Promise((r) => s.server.on('exit', r));
};

// baseline: nothing to purge
const base = startServer('bench-base', 0);
const baseUrl = (await base.waitFor((o) => o.msg === 'listening', 30_000)).url;
const bconn = await connect(baseUrl, streamers.baseline);
const baseline = (await streamAt10k(bconn, new Promise((r) => setTimeout(r, 8_000)))).map(([, l]) => l);
bconn.ws.close();
await stop(base);
log(`baseline (nothing to purge, ${baseline.length} pushes): p50 ${p(baseline, 0.5)} ms, p99 ${p(baseline, 0.99)} ms, max ${p(baseline, 1)} ms`);

// purge
const purge = startServer('bench-purge', 30);
const purgeUrl = (await purge.waitFor((o) => o.msg === 'listening', 30_000)).url;
const conn = await connect(purgeUrl, streamers.purge);
const done = purge.waitFor((o) => o.msg === 'retention: old rows deleted', 300_000);
const samples = await streamAt10k(conn, done.then(() => new Promise((r) => setTimeout(r, 1500))));
const passLine = await done;
const dropLine = await purge.waitFor((o) => o.msg === 'retention: expired day partitions dropped', 1000).catch(() => null);
conn.ws.close();
await stop(purge);
const passEnd = Date.parse(passLine.time);
const passStart = passEnd - passLine.ms;
const during = samples.filter(([t]) => t >= passStart - 1000 && t <= passEnd + 1000).map(([, l]) => l);
const all = samples.map(([, l]) => l);
log(`purge: ${passLine.logs} rows removed in ${(passLine.ms / 1000).toFixed(2)} s (${dropLine ? dropLine.partitions.length : 0} day partitions dropped) while 10,000 entries/s were acked`);
log(`  ack latency around the purge (±1 s, ${during.length} pushes): p50 ${p(during, 0.5)} ms, p99 ${p(during, 0.99)} ms, max ${p(during, 1)} ms; whole run (${all.length} pushes) p99 ${p(all, 0.99)} ms`);
await admin.query(`drop schema if exists ${SCHEMA} cascade`);
await admin.end();
const p99During = p(during, 0.99);
const p99Base = p(baseline, 0.99);
console.log(JSON.stringify({
  bench: 'retention-postgres',
  expired_rows: ROWS,
  purged_rows: passLine.logs,
  partitions_dropped: dropLine ? dropLine.partitions.length : 0,
  purge_secs: +(passLine.ms / 1000).toFixed(2),
  pushes_during_purge: during.length,
  ack_p50_ms_during_purge: p(during, 0.5),
  ack_p99_ms_during_purge: p99During,
  ack_max_ms_during_purge: p(during, 1),
  ack_p99_ms_whole_purge_run: p(all, 0.99),
  ack_p99_ms_baseline: p99Base,
  p99_ratio_vs_baseline: p99Base ? +(p99During / p99Base).toFixed(2) : null,
  target_ratio: 1.2,
  meets_target: p99Base !== null && p99During !== null && p99During <= 1.2 * p99Base,
  backpressure_refusals: refusals,
}));
