// npm run bench -- ingest --db postgres [--url postgres://...]
// The PostgreSQL side of the ingest benchmark (bench/ingest.mjs hands over to this file).
// In one run, on a fresh schema of CORTEX_TEST_POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432/test), dropped at the end:
//   1. in-process insert ceiling, same batch shape as the SQLite bench (1000-entry frames:
//      JSON.parse + generated validator + commit), three insert forms compared:
//        prepared  the server's statement: one named prepared CTE, rows as unnest arrays
//        multirow  BEGIN; SELECT ... FOR UPDATE; INSERT ... VALUES (...),(...) x1000; UPDATE; COMMIT
//        copy      BEGIN; SELECT ... FOR UPDATE; COPY logs FROM STDIN; UPDATE; COMMIT
//      pg_ceiling_entries_per_s is the best of them;
//   2. one server process (spawned CLI), 10 agents streaming: entries/s, server CPU-s per 100k;
//   3. two server processes on the same database, 5 agents each: total entries/s, CPU-s per 100k;
//   4. ack p99 at 10,000 entries/s (one server);
//   5. hellos/s (first enrollment with rotation, 50 connecting at a time);
//   6. the fleet shape: many hosts, a few entries a push (DECISIONS G13). In-process, 1,000
//      hosts each committing 2-entry batches back to back through the writer (pool 10), with
//      one statement per batch (maxGroupHosts 1: the writer before G13) and grouped (the
//      server's default), same run: pg_small_batches_group_ratio; then one server process and
//      1,000 agents pushing 2 entries at a time (4 pushes in flight each): entries acked/s and
//      ack p99.
// Last line: one JSON object, with the ratios against the ceiling measured in this run.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import { validateLogsPushParams } from '@cortex/agent-protocol';
import { openStorage } from '../dist/server/db/open.js';
import { migrateToLatest } from '../dist/server/db/migrations/index.js';
import { issueAgent } from '../dist/server/db/agents.repository.js';
import { connect as connectRaw, entry } from './_wire.mjs';

// Every wait of this bench is bounded: a server that stops answering fails the run with what
// was waited for and the server's last log lines, instead of hanging until all.mjs's timeout
// (seen once, 2026-12-03 16:17, in \`bench all\`: the server alive and idle, not reproduced in 5
// runs since).
const WAIT_MS = Number(process.env.BENCH_PG_WAIT_MS ?? 60_000);
const serverLogs = [];
const tailOfLogs = () => serverLogs.flatMap((s) => [`--- ${s.id} (last lines) ---`, ...s.text.split('\n').slice(-15)]).join('\n');
function bounded(promise, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench ingest --db postgres: no answer in ${WAIT_MS} ms: ${what}\n${tailOfLogs()}`)), WAIT_MS);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}
const connectTo = (url, agent) => bounded(connectRaw(url, agent), `agent.hello of ${agent.hostname} at ${url}`);

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const argUrl = process.argv.indexOf('--url');
const BASE = argUrl > 0 ? process.argv[argUrl + 1] : process.env.CORTEX_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = `cx_bench_${process.pid}`;
const u = new URL(BASE);
u.searchParams.set('options', `-c search_path=${SCHEMA}`);
const DB = u.toString();
const log = (...a) => console.log(...a);
const BATCH = 1000;
const WINDOW = 4;
const CLK = 100; // clock ticks per second (/proc/PID/stat utime, stime)

const admin = new pg.Client({ connectionString: BASE });
await admin.connect();
await admin.query(`drop schema if exists ${SCHEMA} cascade`);
await admin.query(`create schema ${SCHEMA}`);

function pushFrame(id, seqStart, n) {
  const entries = new Array(n);
  for (let i = 0; i < n; i++) entries[i] = entry(seqStart + i);
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'logs.push', params: { seq_start: seqStart, entries } });
}

const setup = await openStorage(DB, { poolSize: 4 });
await migrateToLatest(setup);
await setup.maintainPartitions(new Date(), null);

// ───────────── 1. in-process ceiling, three insert forms ─────────────
const COLS = 'host_id, seq, ts, received_at, severity, facility, app_name, process_id, message, source, metadata_json';
function row(host_id, e, received) {
  return [host_id, e.seq, e.ts, received, e.severity, e.facility ?? null, e.app_name ?? null, e.process_id ?? null, e.message, e.source, e.metadata == null ? null : JSON.stringify(e.metadata)];
}
async function txForm(client, host_id, entries, body) {
  const received = new Date().toISOString();
  await client.query('BEGIN');
  try {
    const prev = Number((await client.query('select accepted_seq from agents where host_id = $1 for update', [host_id])).rows[0].accepted_seq);
    const fresh = entries.filter((e) => e.seq > prev);
    if (fresh.length > 0) await body(fresh, received);
    await client.query('update agents set accepted_seq = greatest(accepted_seq, $2), last_seen = $3 where host_id = $1', [host_id, fresh.length ? fresh[fresh.length - 1].seq : prev, received]);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK');
    throw e;
  }
}
const copyEscape = (v) => (v === null ? '\\N' : String(v).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r'));
const forms = {
  prepared: (client, host_id, entries) => setup.ingest.commitBatch(host_id, entries, new Date().toISOString()),
  multirow: (client, host_id, entries) =>
    txForm(client, host_id, entries, async (fresh, received) => {
      const values = [];
      const tuples = fresh.map((e, i) => {
        values.push(...row(host_id, e, received));
        return `(${Array.from({ length: 11 }, (_, k) => `$${i * 11 + k + 1}`).join(',')})`;
      });
      await client.query(`insert into logs (${COLS}) values ${tuples.join(',')}`, values);
    }),
  copy: (client, host_id, entries) =>
    txForm(client, host_id, entries, async (fresh, received) => {
      const text = fresh.map((e) => row(host_id, e, received).map(copyEscape).join('\t')).join('\n') + '\n';
      await pipeline(Readable.from([text]), client.query(copyStreams.from(`COPY logs (${COLS}) FROM STDIN`)));
    }),
};
async function ceiling(form) {
  const client = new pg.Client({ connectionString: DB });
  await client.connect();
  const { host_id } = await issueAgent(setup.db, `ceiling-${form}`);
  const frames = [];
  for (let b = 0; b < 60; b++) frames.push(Buffer.from(pushFrame(b + 1, b * BATCH + 1, BATCH)));
  const one = async (buf) => {
    const msg = JSON.parse(buf.toString());
    if (!validateLogsPushParams(msg.params)) throw new Error('invalid');
    await forms[form](client, host_id, msg.params.entries);
  };
  for (const f of frames.splice(0, 10)) await one(f); // warm-up, not timed
  const t0 = performance.now();
  for (const f of frames) await one(f);
  const secs = (performance.now() - t0) / 1000;
  await client.end();
  return Math.round((frames.length * BATCH) / secs);
}

// ───────────── server processes ─────────────
// Servers are killed with this process, however it ends (a failed wait, a signal).
const children = [];
process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => process.exit(1));
function startServer(id) {
  const child = spawn(process.execPath, [join(ROOT, 'dist/server/cli.js'), 'serve', '--listen', '127.0.0.1:0', '--db', DB, '--server-id', id, '--db-pool', '10', '--agent-rate', '100000000', '--upgrades-per-minute', '0', '--ingest-queue-batches', '1000', '--hello-timeout-ms', '60000'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CORTEX_LOG_LEVEL: 'warn' } });
  children.push(child);
  const log = { id, text: '' };
  serverLogs.push(log);
  return bounded(new Promise((resolve, reject) => {
    let err = '';
    // The banner ("cortex-server listening on ws://…") is on stdout, the JSON logs on stderr.
    const onData = (d) => {
      err += d.toString();
      log.text = (log.text + d.toString()).slice(-20_000);
      const m = /listening on (ws:\/\/\S+)/.exec(err);
      if (m) resolve({ child, url: m[1] });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (c) => reject(new Error(`server exited ${c}: ${err}`)));
  }), `the banner of server ${id}`);
}
const cpuSecs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK;
};
function stream(conn, batches) {
  return bounded(new Promise((resolve, reject) => {
    const { ws } = conn;
    let sent = 0, acked = 0, seq = conn.accepted + 1, id = 1;
    const pump = () => {
      while (sent < batches && sent - acked < WINDOW) {
        ws.send(pushFrame(id, seq, BATCH));
        id++; seq += BATCH; sent++;
      }
    };
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.error) return reject(new Error(JSON.stringify(m.error)));
      if (++acked === batches) resolve();
      else pump();
    });
    pump();
  }), `the acks of ${batches} pushes (stream of one agent)`);
}
async function issueMany(n, prefix) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await issueAgent(setup.db, `${prefix}-${i}`));
  return out;
}
/** `agents` spread round-robin over the servers; entries/s and server CPU-s per 100k. */
async function run(servers, agents, batchesEach, prefix) {
  const issued = await issueMany(agents, prefix);
  const conns = await Promise.all(issued.map((a, i) => connectTo(servers[i % servers.length].url, a)));
  const cpu0 = servers.map((s) => cpuSecs(s.child.pid));
  const t0 = performance.now();
  await Promise.all(conns.map((c) => stream(c, batchesEach)));
  const secs = (performance.now() - t0) / 1000;
  const cpu = servers.reduce((sum, s, i) => sum + cpuSecs(s.child.pid) - cpu0[i], 0);
  for (const c of conns) c.ws.close();
  const total = agents * batchesEach * BATCH;
  return { rate: Math.round(total / secs), cpuPer100k: +((cpu * 100_000) / total).toFixed(2) };
}
async function ackP99At10k(url) {
  const [agent] = await issueMany(1, 'lat');
  const { ws, accepted } = await connectTo(url, agent);
  const lat = [];
  let seq = accepted + 1, id = 1;
  const sentAt = new Map();
  ws.on('message', (d) => lat.push(performance.now() - sentAt.get(JSON.parse(d.toString()).id)));
  const total = 500; // 100 entries every 10 ms = 10,000 entries/s for 5 s
  await new Promise((resolve) => {
    let i = 0;
    const start = performance.now();
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - start) / 10) + 1);
      while (i < due) {
        sentAt.set(id, performance.now());
        ws.send(pushFrame(id, seq, 100));
        id++; seq += 100; i++;
      }
      if (i < total) setTimeout(tick, 2); else resolve();
    };
    tick();
  });
  while (lat.length < total) await new Promise((r) => setTimeout(r, 10));
  ws.close();
  lat.sort((a, b) => a - b);
  return +lat[Math.floor(lat.length * 0.99)].toFixed(1);
}
async function hellos(url, n) {
  const agents = await issueMany(n, 'hello');
  const t0 = performance.now();
  const conns = [];
  let next = 0;
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < agents.length) conns.push(await connectTo(url, agents[next++]));
  }));
  const rate = Math.round(n / ((performance.now() - t0) / 1000));
  for (const c of conns) c.ws.close();
  return rate;
}

const SMALL_HOSTS = 1000;
const SMALL_SECS = 5;
/** In-process: SMALL_HOSTS hosts each committing 2-entry batches back to back for SMALL_SECS; batches/s. */
async function smallBatches(maxGroupHosts, prefix) {
  const storage = await openStorage(DB, { poolSize: 10, maxGroupHosts });
  try {
    const ids = [];
    for (let i = 0; i < SMALL_HOSTS; i++) ids.push((await issueAgent(setup.db, `${prefix}-${i}`)).host_id);
    let done = 0;
    let stop = false;
    const t0 = performance.now();
    await Promise.all(ids.map(async (id) => {
      let seq = 1;
      while (!stop) {
        await storage.ingest.commitBatch(id, [entry(seq), entry(seq + 1)], new Date().toISOString());
        seq += 2;
        done++;
        if (performance.now() - t0 > SMALL_SECS * 1000) stop = true;
      }
    }));
    return Math.round(done / ((performance.now() - t0) / 1000));
  } finally {
    await storage.close();
  }
}
/**
 * One server, SMALL_HOSTS agents pushing 2 entries at a time, WINDOW pushes in flight each (a
 * real agent's window), for SMALL_SECS: entries acked/s and ack p99 ms. The server acks a
 * session's pending pushes together after T = 200 ms (or K = 100 entries), so each agent
 * makes about 5 commits a second: 5,000 a second from the fleet.
 */
async function smallPushes(url) {
  const agents = await issueMany(SMALL_HOSTS, 'small');
  const conns = [];
  let next = 0;
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < agents.length) conns.push(await connectTo(url, agents[next++]));
  }));
  const lat = [];
  let stop = false;
  const t0 = performance.now();
  await bounded(Promise.all(conns.map((c) => new Promise((resolve, reject) => {
    let seq = c.accepted + 1, id = 1, inFlight = 0;
    const sentAt = new Map();
    const pump = () => {
      if (stop || performance.now() - t0 > SMALL_SECS * 1000) stop = true;
      if (stop) return inFlight === 0 && resolve();
      while (inFlight < WINDOW) {
        sentAt.set(id, performance.now());
        c.ws.send(pushFrame(id++, seq, 2));
        seq += 2;
        inFlight++;
      }
    };
    c.ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.method !== undefined) return; // a server request (config, probe): not an answer
      if (m.error) return reject(new Error(JSON.stringify(m.error)));
      lat.push(performance.now() - sentAt.get(m.id));
      sentAt.delete(m.id);
      inFlight--;
      pump();
    });
    pump();
  }))), `the acks of ${SMALL_HOSTS} agents pushing 2 entries at a time`);
  const secs = (performance.now() - t0) / 1000;
  for (const c of conns) c.ws.close();
  lat.sort((a, b) => a - b);
  return { rate: Math.round((lat.length * 2) / secs), p99: +lat[Math.floor(lat.length * 0.99)].toFixed(1) };
}

const ceilings = {};
for (const form of ['prepared', 'multirow', 'copy']) {
  ceilings[form] = await ceiling(form);
  log(`in-process ceiling, ${form}: ${ceilings[form]} entries/s`);
}
const best = Math.max(...Object.values(ceilings));
const s1 = await startServer('bench-1');
const one = await run([s1], 10, 12, 'one');
log(`one server, 10 agents, 1000-entry batches, window ${WINDOW}: ${one.rate} entries/s (${(one.rate / best).toFixed(2)} of the ceiling), ${one.cpuPer100k} server CPU-s per 100k`);
const s2 = await startServer('bench-2');
const two = await run([s1, s2], 10, 12, 'two');
log(`two servers, 5 agents each: ${two.rate} entries/s in all (${(two.rate / one.rate).toFixed(2)} of one server), ${two.cpuPer100k} server CPU-s per 100k`);
s2.child.kill('SIGTERM');
await new Promise((r) => s2.child.on('exit', r));
const p99 = await ackP99At10k(s1.url);
log(`ack p99 at 10,000 entries/s (100-entry pushes every 10 ms), one server: ${p99} ms`);
const hps = await hellos(s1.url, 500);
log(`hellos (first enrollment with rotation), 500 agents, 50 connecting at a time: ${hps}/s`);
const smallOne = await smallBatches(1, 'small-one');
const smallGrouped = await smallBatches(undefined, 'small-group');
log(`fleet shape in-process, ${SMALL_HOSTS} hosts committing 2-entry batches: ${smallOne} batches/s one statement each, ${smallGrouped} grouped (${(smallGrouped / smallOne).toFixed(2)}x)`);
const small = await smallPushes(s1.url);
log(`fleet shape, one server, ${SMALL_HOSTS} agents pushing 2 entries, ${WINDOW} pushes in flight each: ${small.rate} entries acked/s, ack p99 ${small.p99} ms`);
s1.child.kill('SIGTERM');
await new Promise((r) => s1.child.on('exit', r));
await setup.close();
await admin.query(`drop schema if exists ${SCHEMA} cascade`);
await admin.end();
console.log(JSON.stringify({
  pg_ceiling_entries_per_s: best,
  pg_ceiling_form: Object.entries(ceilings).find(([, v]) => v === best)[0],
  pg_ceiling_prepared_entries_per_s: ceilings.prepared,
  pg_ceiling_multirow_entries_per_s: ceilings.multirow,
  pg_ceiling_copy_entries_per_s: ceilings.copy,
  pg_one_server_entries_per_s: one.rate,
  pg_one_server_ratio: +(one.rate / best).toFixed(3),
  pg_one_server_cpu_s_per_100k: one.cpuPer100k,
  pg_two_servers_entries_per_s: two.rate,
  pg_two_servers_ratio_vs_one: +(two.rate / one.rate).toFixed(3),
  pg_two_servers_cpu_s_per_100k: two.cpuPer100k,
  pg_ack_p99_ms_at_10k: p99,
  pg_hellos_per_s: hps,
  pg_small_batches_one_statement_per_s: smallOne,
  pg_small_batches_grouped_per_s: smallGrouped,
  pg_small_batches_group_ratio: +(smallGrouped / smallOne).toFixed(3),
  pg_small_pushes_entries_per_s: small.rate,
  pg_small_push_ack_p99_ms: small.p99,
}));
