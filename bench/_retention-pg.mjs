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
// The pass takes well under a second, so one round's "during" holds only ~230 pushes and its
// p99 is its third-worst push: one stall from a shared machine moves it (0.97 to 1.53 over four
// runs on 2026-12-04). So the whole round (fill, baseline, purge) runs BENCH_RETENTION_ROUNDS
// times (default 3), each round's ratio is its "during" p99 over its own baseline p99, and
// `p99_ratio_vs_baseline` (the target's figure) is the median of the rounds' ratios: a stall the
// purge causes shows in every round, one from outside in one round (seen: 0.78, 4.12, 0.71, the
// 4.12 round's baseline itself had a 37 ms push). `p99_ratio_pooled` is the p99 of every round's
// "during" pushes over the p99 of every baseline push. BENCH_RETENTION_TOP=1 prints each round's
// slowest pushes with the time they were sent: how the 35-90 ms stall at the start of most
// passes was found (the retention's advisory lock took the ingest path's pool connection).
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
const ROUNDS = Math.max(1, Number(process.env.BENCH_RETENTION_ROUNDS ?? 3));
// BENCH_RETENTION_TOP=1: each round also prints its 12 slowest pushes and when they were sent
const TOP = process.env.BENCH_RETENTION_TOP === '1';
const slowest = (samples, t0) =>
  samples
    .map(([t, l]) => [Math.round(t - t0), +l.toFixed(1)])
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12);
const BATCH = 1000;
const log = (...a) => console.log(...a);

const admin = new pg.Client({ connectionString: BASE });
await admin.connect();

/** A fresh schema with ROWS expired rows; returns the two streaming agents' credentials. */
async function fill() {
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
return streamers;
}

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

/** One round: fill, baseline (nothing to purge), purge. */
async function round(r) {
  const streamers = await fill();
  // baseline: nothing to purge
  const base = startServer(`bench-base-${r}`, 0);
  const baseUrl = (await base.waitFor((o) => o.msg === 'listening', 30_000)).url;
  const bconn = await connect(baseUrl, streamers.baseline);
  const bs = await streamAt10k(bconn, new Promise((res) => setTimeout(res, 8_000)));
  if (TOP) log(`  slowest baseline pushes [ms from the first push, latency ms]: ${JSON.stringify(slowest(bs, bs[0][0]))}`);
  const baseline = bs.map(([, l]) => l);
  bconn.ws.close();
  await stop(base);
  log(`round ${r}: baseline (nothing to purge, ${baseline.length} pushes): p50 ${p(baseline, 0.5)} ms, p99 ${p(baseline, 0.99)} ms, max ${p(baseline, 1)} ms`);

  // purge
  const purge = startServer(`bench-purge-${r}`, 30);
  const purgeUrl = (await purge.waitFor((o) => o.msg === 'listening', 30_000)).url;
  const conn = await connect(purgeUrl, streamers.purge);
  const done = purge.waitFor((o) => o.msg === 'retention: old rows deleted', 300_000);
  const samples = await streamAt10k(conn, done.then(() => new Promise((res) => setTimeout(res, 1500))));
  const passLine = await done;
  const dropLine = await purge.waitFor((o) => o.msg === 'retention: expired day partitions dropped', 1000).catch(() => null);
  conn.ws.close();
  await stop(purge);
  const passEnd = Date.parse(passLine.time);
  const passStart = passEnd - passLine.ms;
  const during = samples.filter(([t]) => t >= passStart - 1000 && t <= passEnd + 1000).map(([, l]) => l);
  const all = samples.map(([, l]) => l);
  if (TOP) log(`  slowest pushes [ms from the pass's start, latency ms]: ${JSON.stringify(slowest(samples, passStart))} (the pass took ${passLine.ms} ms)`);
  log(`round ${r}: purge: ${passLine.logs} rows removed in ${(passLine.ms / 1000).toFixed(2)} s (${dropLine ? dropLine.partitions.length : 0} day partitions dropped) while 10,000 entries/s were acked`);
  log(`  ack latency around the purge (±1 s, ${during.length} pushes): p50 ${p(during, 0.5)} ms, p99 ${p(during, 0.99)} ms, max ${p(during, 1)} ms; whole run (${all.length} pushes) p99 ${p(all, 0.99)} ms; this round's p99 ratio ${(p(during, 0.99) / p(baseline, 0.99)).toFixed(2)}`);
  return { baseline, during, all, passLine, dropLine };
}

const rounds = [];
for (let r = 1; r <= ROUNDS; r++) rounds.push(await round(r));
await admin.query(`drop schema if exists ${SCHEMA} cascade`);
await admin.end();
const pool = (k) => rounds.flatMap((x) => x[k]);
const during = pool('during');
const baseline = pool('baseline');
const all = pool('all');
const p99During = p(during, 0.99);
const p99Base = p(baseline, 0.99);
const last = rounds[rounds.length - 1];
const ratios = rounds.map((x) => p(x.during, 0.99) / p(x.baseline, 0.99));
const medianRatio = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)];
log(`${ROUNDS} rounds: p99 ratio per round ${ratios.map((x) => x.toFixed(2)).join(', ')}, median ${medianRatio.toFixed(2)} (target ≤ 1.2); pooled: ack p99 around the purges ${p99During} ms (${during.length} pushes), baseline ${p99Base} ms (${baseline.length} pushes), ratio ${(p99During / p99Base).toFixed(2)}`);
console.log(JSON.stringify({
  bench: 'retention-postgres',
  rounds: ROUNDS,
  expired_rows: ROWS,
  purged_rows: last.passLine.logs,
  partitions_dropped: last.dropLine ? last.dropLine.partitions.length : 0,
  purge_secs: +(Math.max(...rounds.map((x) => x.passLine.ms)) / 1000).toFixed(2),
  pushes_during_purge: during.length,
  ack_p50_ms_during_purge: p(during, 0.5),
  ack_p99_ms_during_purge: p99During,
  ack_max_ms_during_purge: p(during, 1),
  ack_p99_ms_whole_purge_run: p(all, 0.99),
  ack_p99_ms_baseline: p99Base,
  p99_ratio_vs_baseline: +medianRatio.toFixed(2),
  p99_ratio_per_round: ratios.map((x) => +x.toFixed(2)),
  p99_ratio_pooled: p99Base ? +(p99During / p99Base).toFixed(2) : null,
  target_ratio: 1.2,
  meets_target: medianRatio <= 1.2,
  backpressure_refusals: refusals,
}));
