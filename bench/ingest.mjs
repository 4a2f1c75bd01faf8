// npm run bench -- ingest
// End-to-end ingest benchmark: the compiled server runs in its own process (spawned CLI,
// SQLite file in a temp dir); this process is the load client (N simulated agents over
// real WebSockets). The in-process ceiling (JSON.parse of the frame Buffer + generated
// validator + one prepared one-row insert per entry, all on one thread, SQLite
// checkpointing inside COMMIT: the single-thread path as it was when issue 20 was filed,
// kept as the yardstick) is measured in the same run, and so are the server's current
// inline writer (one thread) and the writer ceiling: the server's writer thread alone
// committing ready (packed) rows.
// Last output line: one JSON object with the figures.
// `npm run bench -- ingest --db postgres`: the PostgreSQL run instead (bench/_ingest-pg.mjs).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { validateLogsPushParams } from '@cortex/agent-protocol';
import { openSqliteStorage } from '../dist/server/db/dialect.js';
import { packRows } from '../dist/server/db/packed-rows.js';
import { ADVANCE_ACCEPTED, INSERT_LOG, SELECT_ACCEPTED } from '../dist/server/db/sqlite-ingest-sql.js';
import { migrateToLatest } from '../dist/server/db/migrations/index.js';
import { issueAgent } from '../dist/server/db/agents.repository.js';
import { connect as connectTo, entry, helloFrame, rawHello, upgradeRequest } from './_wire.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const dbArg = process.argv.indexOf('--db');
if (dbArg > 0 && process.argv[dbArg + 1] === 'postgres') {
  await import('./_ingest-pg.mjs');
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'cortex-bench-'));
const log = (...a) => console.log(...a);
const BATCH = 1000;
const WINDOW = 4;
// Batches of 1000 entries each ceiling times (after 10 of warm-up): long enough (about a second)
// to include the checkpoints and the writer's steady state, not only its first commits.
const CEILING_BATCHES = Number(process.env.BENCH_CEILING_BATCHES ?? 200);
const IDLE_AGENTS = Number(process.env.BENCH_IDLE_AGENTS ?? 5000);

function pushFrameJson(id, seqStart, n) {
  const entries = new Array(n);
  for (let i = 0; i < n; i++) entries[i] = entry(seqStart + i);
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'logs.push', params: { seq_start: seqStart, entries } });
}

// The load client shares the 2 cores with the server: it writes the same frame text as
// JSON.stringify of the same entries (checked below) without building 1000 objects.
const [entryHead, entryMid, entryTail] = (() => {
  const probe = JSON.stringify(entry(7777777));
  const at = probe.indexOf('7777777');
  const port = probe.indexOf('port 57777') + 'port 5'.length;
  return [probe.slice(0, at), probe.slice(at + 7, port), probe.slice(port + 4)];
})();
const entryText = (seq) => `${entryHead}${seq}${entryMid}${seq % 10000}${entryTail}`;
// The frame as bytes, built 100 entries at a time: a JS string over 128 KiB is a V8 "large
// object", which costs ~4 ns per byte to make here (DECISIONS P12), and ws.send of a string
// makes one flat string of the whole frame first.
function pushFrame(id, seqStart, n) {
  const pieces = [Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"logs.push","params":{"seq_start":${seqStart},"entries":[`)];
  for (let i = 0; i < n; i += 100) {
    let body = '';
    for (let k = i; k < Math.min(n, i + 100); k++) body += (k === 0 ? '' : ',') + entryText(seqStart + k);
    pieces.push(Buffer.from(body));
  }
  pieces.push(Buffer.from(']}}'));
  return Buffer.concat(pieces);
}
for (const [id, s, n] of [[1, 1, 3], [9, 123456, 1000], [2, 99999990, 20], [3, 5, 250]]) {
  if (pushFrame(id, s, n).toString() !== pushFrameJson(id, s, n)) throw new Error('bench: pushFrame text differs from JSON.stringify');
}

// ───────────── in-process ceilings ─────────────
// `ceiling`: the yardstick issue 20 names — "today's single-thread in-process ceiling" — kept
// as it was when the issue was filed, so later changes to the server's insert do not move
// the yardstick: JSON.parse of the frame Buffer + the generated validator + the ingest
// transaction with ONE prepared one-row INSERT per entry (INSERT_LOG), all on one thread,
// SQLite checkpointing inside COMMIT, on the server's migrated schema with the (received_at)
// index it had then (migration 0030 drops it). `inline`: the same on
// the server's current in-process writer (CORTEX_SQLITE_WRITER=inline: today multi-row
// inserts, DECISIONS P5) — what one thread of the current code does.
function ceilingFrames() {
  const frames = [];
  for (let b = 0; b < CEILING_BATCHES + 10; b++) frames.push(pushFrame(b + 1, b * BATCH + 1, BATCH));
  return frames;
}
async function timeFrames(frames, commit) {
  for (const buf of frames.splice(0, 10)) { // warm-up (JIT, page cache), not timed
    const msg = JSON.parse(buf.toString());
    if (!validateLogsPushParams(msg.params)) throw new Error('invalid');
    await commit(msg.params.entries);
  }
  const n = frames.length;
  const t0 = performance.now();
  for (const buf of frames) {
    const msg = JSON.parse(buf.toString());
    if (!validateLogsPushParams(msg.params)) throw new Error('invalid');
    await commit(msg.params.entries);
  }
  return Math.round((n * BATCH) / ((performance.now() - t0) / 1000));
}
async function ceiling() {
  const path = join(dir, 'ceiling.db');
  const setupDb = openSqliteStorage({ path, writer: 'inline' });
  await migrateToLatest(setupDb);
  const { host_id } = await issueAgent(setupDb.db, 'ceiling');
  await setupDb.close();
  const sqlite = new Database(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // the schema as it was too: migration 0030 (DECISIONS P5b) dropped this index on SQLite
  sqlite.exec('CREATE INDEX IF NOT EXISTS logs_received_at_idx ON logs (received_at)');
  const selectAccepted = sqlite.prepare(SELECT_ACCEPTED);
  const insertLog = sqlite.prepare(INSERT_LOG);
  const advanceAccepted = sqlite.prepare(ADVANCE_ACCEPTED);
  const commitTx = sqlite.transaction((entries, received_at) => {
    const row = selectAccepted.get(host_id);
    const previous = row.accepted_seq;
    let highest = previous;
    for (const e of entries) {
      if (e.seq <= previous) continue;
      insertLog.run(host_id, e.seq, e.ts, received_at, e.severity, e.facility ?? null, e.app_name ?? null, e.process_id ?? null, e.message, e.source, e.metadata == null ? null : JSON.stringify(e.metadata));
      if (e.seq > highest) highest = e.seq;
    }
    advanceAccepted.run(highest, received_at, host_id);
  });
  const rate = await timeFrames(ceilingFrames(), async (entries) => commitTx.immediate(entries, new Date().toISOString()));
  if (sqlite.prepare('SELECT count(*) AS n FROM logs').get().n !== (CEILING_BATCHES + 10) * BATCH) throw new Error('ceiling: rows missing');
  sqlite.close();
  return rate;
}
async function inlineCeiling() {
  const storage = openSqliteStorage({ path: join(dir, 'inline.db'), writer: 'inline' });
  await migrateToLatest(storage);
  const { host_id } = await issueAgent(storage.db, 'inline');
  const rate = await timeFrames(ceilingFrames(), (entries) => storage.ingest.commitBatch(host_id, entries, new Date().toISOString()));
  await storage.close();
  return rate;
}

// ───────────── writer ceiling: the writer thread alone, rows packed before the clock starts ─────────────
async function writerCeiling() {
  const storage = openSqliteStorage({ path: join(dir, 'writer-ceiling.db'), writer: 'thread' });
  await migrateToLatest(storage);
  const { host_id } = await issueAgent(storage.db, 'writer-ceiling');
  const batches = [];
  for (let b = 0; b < CEILING_BATCHES + 10; b++) {
    const entries = new Array(BATCH);
    for (let i = 0; i < BATCH; i++) entries[i] = entry(b * BATCH + i + 1);
    batches.push(packRows(entries));
  }
  const w = storage.ingest;
  for (const p of batches.splice(0, 10)) await w.commitPacked(host_id, p, new Date().toISOString()); // warm-up
  const t0 = performance.now();
  // WINDOW commits in flight, as sessions keep the writer's queue full
  let next = 0;
  await Promise.all(Array.from({ length: WINDOW }, async () => {
    while (next < batches.length) await w.commitPacked(host_id, batches[next++], new Date().toISOString());
  }));
  const secs = (performance.now() - t0) / 1000;
  await storage.close();
  return Math.round((CEILING_BATCHES * BATCH) / secs);
}

// ───────────── server process ─────────────
const dbPath = join(dir, 'server.db');
const setup = openSqliteStorage({ path: dbPath, writer: 'inline' });
await migrateToLatest(setup);
async function issueMany(n, prefix) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await issueAgent(setup.db, `${prefix}-${i}`));
  return out;
}

/** Starts `cortex-server serve` on `db`; resolves with the process and its ws:// URL. */
async function startServer(db, extraNodeArgs = []) {
  const proc = spawn(process.execPath, [...extraNodeArgs, join(ROOT, 'dist/server/cli.js'), 'serve', '--listen', '127.0.0.1:0', '--db', db, '--agent-rate', '100000000', '--upgrades-per-minute', '0', '--ingest-queue-batches', '1000', '--hello-timeout-ms', '60000'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CORTEX_LOG_LEVEL: 'warn' } });
  const address = await new Promise((resolve, reject) => {
    let err = '';
    // The banner ("cortex-server listening on ws://…") is on stdout, the JSON logs on stderr.
    const onData = (d) => {
      err += d.toString();
      const m = /listening on (ws:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (c) => reject(new Error(`server exited ${c}: ${err}`)));
  });
  return { proc, url: address };
}
const { proc: server, url } = await startServer(dbPath, process.env.BENCH_SERVER_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_SERVER_CPU_PROF] : []);
const connect = (agent) => connectTo(url, agent);
const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);


/** One agent streaming `batches` pushes, frame(id) each (ids 1, 2, …), with WINDOW in flight; resolves with ack latencies. */
function stream(conn, batches, frame) {
  return new Promise((resolve, reject) => {
    const { ws } = conn;
    let sent = 0, acked = 0, id = 1;
    const sentAt = new Map();
    const lat = [];
    const pump = () => {
      while (sent < batches && sent - acked < WINDOW) {
        sentAt.set(id, performance.now());
        ws.send(frame(id), { binary: false }); // a text frame, as an agent sends
        id++; sent++;
      }
    };
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.error) return reject(new Error(JSON.stringify(m.error)));
      lat.push(performance.now() - sentAt.get(m.id));
      acked++;
      if (acked === batches) resolve(lat);
      else pump();
    });
    pump();
  });
}

/** CPU seconds (user + system) the server process used so far, all its threads. */
function serverCpuSecs() {
  const f = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}
/** CPU seconds of each server thread so far: tid → [name, secs]. */
function serverThreadCpu() {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${server.pid}/task`)) {
    try {
      const st = readFileSync(`/proc/${server.pid}/task/${tid}/stat`, 'utf8');
      const name = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const f = st.slice(st.lastIndexOf(') ') + 2).split(' ');
      out.set(tid, [name, (Number(f[11]) + Number(f[12])) / 100]);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}
/** CPU seconds per 100k entries of the last agentsRun, server and this load client. */
const cpuPer100k = {};

async function agentsRun(n, batchesEach) {
  const agents = await issueMany(n, `load${n}`);
  const conns = await Promise.all(agents.map((a) => connectTo(url, a, { zeroMask: true })));
  // Every frame built before the clock starts (as bench hellos builds its hellos): the load
  // client shares the 2 cores with the server, so what it spends building frames is taken
  // from the server. What it still does while timed: ws sends each frame (masked with a zero
  // key: no copy, see _wire.mjs; the server unmasks as always) and reads the acks.
  const built = conns.map((c) => Array.from({ length: batchesEach }, (_, k) => pushFrame(k + 1, c.accepted + 1 + k * BATCH, BATCH)));
  const t0 = performance.now();
  const s0 = serverCpuSecs();
  const threads0 = serverThreadCpu();
  const c0 = process.cpuUsage();
  await Promise.all(conns.map((c, i) => stream(c, batchesEach, (id) => built[i][id - 1])));
  const secs = (performance.now() - t0) / 1000;
  const total = n * batchesEach * BATCH;
  const c1 = process.cpuUsage(c0);
  const per100k = (s) => +((s * 1e5) / total).toFixed(3);
  cpuPer100k[n] = {
    server: per100k(serverCpuSecs() - s0),
    client: per100k((c1.user + c1.system) / 1e6),
    // the busiest server threads (main, writer, checkpointer, …) by CPU-s per 100k entries
    threads: [...serverThreadCpu()]
      .map(([tid, [name, s]]) => [`${name}:${tid}`, per100k(s - (threads0.get(tid)?.[1] ?? 0))])
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5),
  };
  for (const c of conns) c.ws.close();
  return Math.round(total / secs);
}

async function ackLatencyAt10k() {
  const [agent] = await issueMany(1, 'lat');
  const { ws, accepted } = await connect(agent);
  const lat = [];
  let seq = accepted + 1, id = 1;
  const sentAt = new Map();
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    lat.push(performance.now() - sentAt.get(m.id));
  });
  // 100 entries every 10 ms = 10,000 entries/s for 3 s
  const total = 300;
  await new Promise((resolve) => {
    let i = 0;
    const start = performance.now();
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - start) / 10) + 1);
      while (i < due) {
        sentAt.set(id, performance.now());
        ws.send(pushFrame(id, seq, 100), { binary: false });
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

/**
 * 50 at a time; resolves with hellos/s and each agent with the token it holds afterwards.
 * The client is bench hellos' raw one (_wire.mjs rawHello: upgrade request and masked hello
 * frames built before the clock; it still checks the 101 and parses the answer): the `ws`
 * client costs about as much CPU per connect as the server's side (DECISIONS P7), and on 2
 * cores that would be measured as the server's.
 */
async function helloRound(agents) {
  const u = new URL(url);
  const request = upgradeRequest(url);
  const frames = agents.map(helloFrame);
  const t0 = performance.now();
  const conns = new Array(agents.length);
  let next = 0;
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < agents.length) {
      const i = next++;
      conns[i] = await rawHello(Number(u.port), u.hostname, request, frames[i]);
    }
  }));
  const rate = Math.round(agents.length / ((performance.now() - t0) / 1000));
  await Promise.all(conns.map((c) => c.close()));
  return { rate, agents: agents.map((a, i) => ({ ...a, token: conns[i].rotated ?? a.token })) };
}

/**
 * First enrollments (one-time token, rotated), then the same agents reconnecting with their
 * long-lived tokens. As bench hellos measures them (since 2026-12-07): after a warm-up round of
 * n other agents, both kinds of hello, so that the rates are the server's steady state and not
 * its first thousand hellos ever (the hello path not compiled yet, the heap growing to hold n
 * sessions); that cold round is reported too (hellos_cold_per_s), as bench hellos does.
 */
async function hellos(n) {
  const cold = await helloRound(await issueMany(n, 'warm'));
  await helloRound(cold.agents);
  // Best of BENCH_HELLOS_ROUNDS (3) rounds of each kind, each first-enrollment round on agents of
  // its own, as bench hellos (DECISIONS P20): a round lasts about half a second, and one disturbed
  // half-second moved a single sample by up to 45 %.
  const enroll = [];
  const reconnect = [];
  for (let r = 0; r < ROUNDS; r++) {
    const first = await helloRound(await issueMany(n, `hello${r}`));
    enroll.push(first.rate);
    reconnect.push((await helloRound(first.agents)).rate);
  }
  return { cold: cold.rate, enroll: Math.max(...enroll), reconnect: Math.max(...reconnect), enrollSamples: enroll, reconnectSamples: reconnect };
}
const ROUNDS = Math.max(1, Number(process.env.BENCH_HELLOS_ROUNDS ?? 3));

/**
 * Server RSS per idle authenticated connection: a fresh server on a database of its own, so
 * that nothing the ingest phases left (heap the GC gives back, page cache of the WAL) moves
 * its RSS between the two samples (on the ingest phases' server the figure came out negative).
 */
async function idleMemory(n) {
  const idleDb = join(dir, 'idle.db');
  const storage = openSqliteStorage({ path: idleDb, writer: 'inline' });
  await migrateToLatest(storage);
  const WARM = 300;
  const agents = [];
  for (let i = 0; i < n + WARM; i++) agents.push(await issueAgent(storage.db, `idle-${i}`));
  await storage.close();
  const fresh = await startServer(idleDb);
  const connectAll = async (list) => {
    const conns = [];
    let next = 0;
    await Promise.all(Array.from({ length: 50 }, async () => {
      while (next < list.length) conns.push(await connectTo(fresh.url, list[next++]));
    }));
    return conns;
  };
  try {
    // WARM agents connect and leave first: the code a connection runs is loaded and compiled,
    // and the heap has grown to its working size, before `before` (as bench fleet's empty RSS)
    for (const c of await connectAll(agents.slice(n))) c.ws.terminate();
    await new Promise((r) => setTimeout(r, 1000));
    const before = rssKiB(fresh.proc.pid);
    const conns = await connectAll(agents.slice(0, n));
    await new Promise((r) => setTimeout(r, 2000));
    const after = rssKiB(fresh.proc.pid);
    for (const c of conns) c.ws.terminate();
    return Math.round(((after - before) * 1024) / n);
  } finally {
    fresh.proc.kill('SIGTERM');
    await new Promise((r) => fresh.proc.once('exit', r));
  }
}

// BENCH_PHASES=ceiling,writer,10 (say) runs only those phases (for profiling one of them:
// BENCH_SERVER_CPU_PROF=DIR runs the server under `node --cpu-prof`, one .cpuprofile per
// thread, summarised by `node bench/_cpuprofile-summary.mjs FILE`).
const phases = new Set((process.env.BENCH_PHASES ?? 'ceiling,writer,1,10,100,latency,hellos,idle').split(','));
const run = (name, fn) => (phases.has(name) ? fn() : null);
const ratio = (x) => (x === null || ceil === null ? null : +(x / ceil).toFixed(3));

const ceil = await run('ceiling', ceiling);
log(`in-process ceiling (parse Buffer + generated validator + one-row prepared inserts, one thread, as when issue 20 was filed): ${ceil} entries/s (${ceil ? (1e5 / ceil).toFixed(3) : null} CPU-s per 100k entries)`);
const inl = await run('ceiling', inlineCeiling);
log(`in-process, the server's current inline writer (multi-row inserts, one thread): ${inl} entries/s (${ratio(inl)} of ceiling)`);
const wceil = await run('writer', writerCeiling);
log(`writer ceiling (the writer thread alone committing packed rows): ${wceil} entries/s (${ratio(wceil)} of ceiling)`);
const a1 = await run('1', () => agentsRun(1, 60));
log(`1 agent, 1000-entry batches, window ${WINDOW}: ${a1} entries/s (${ratio(a1)} of ceiling)`);
const a10 = await run('10', () => agentsRun(10, Number(process.env.BENCH_BATCHES_10 ?? 40)));
log(`10 agents: ${a10} entries/s (${ratio(a10)} of ceiling); CPU-s per 100k entries: server ${cpuPer100k[10]?.server} (threads ${JSON.stringify(cpuPer100k[10]?.threads)}), load client ${cpuPer100k[10]?.client} (2 cores in all)`);
const a100 = await run('100', () => agentsRun(100, 2));
log(`100 agents: ${a100} entries/s (${ratio(a100)} of ceiling)`);
const p99 = await run('latency', ackLatencyAt10k);
log(`ack latency p99 at 10,000 entries/s (100-entry pushes every 10 ms): ${p99} ms`);
const hps = (await run('hellos', () => hellos(1000))) ?? { cold: null, enroll: null, reconnect: null };
log(`hellos for 1000 agents, 50 connecting at a time, after a warm-up round of 1000 others: first enrollment (with rotation) ${hps.enroll}/s, reconnect with a long-lived token ${hps.reconnect}/s (best of ${ROUNDS} rounds each: ${hps.enrollSamples?.join(', ')} and ${hps.reconnectSamples?.join(', ')}); the warm-up's first enrollments (the first hellos this server saw) ${hps.cold}/s`);
const idle = await run('idle', () => idleMemory(IDLE_AGENTS));
log(`server RSS per idle authenticated connection with ${IDLE_AGENTS} agents: ${idle} bytes`);

server.kill('SIGTERM');
await new Promise((r) => server.on('exit', r));
await setup.close();
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({
  ceiling_entries_per_s: ceil,
  inline_entries_per_s: inl,
  inline_ratio: ratio(inl),
  writer_ceiling_entries_per_s: wceil,
  writer_ceiling_ratio: ratio(wceil),
  agents_1_entries_per_s: a1,
  agents_10_entries_per_s: a10,
  agents_100_entries_per_s: a100,
  agents_1_ratio: ratio(a1),
  agents_10_ratio: ratio(a10),
  agents_100_ratio: ratio(a100),
  agents_10_server_cpu_s_per_100k: cpuPer100k[10]?.server ?? null,
  agents_10_client_cpu_s_per_100k: cpuPer100k[10]?.client ?? null,
  ack_p99_ms_at_10k: p99,
  hellos_per_s: hps.enroll,
  hellos_reconnect_per_s: hps.reconnect,
  hellos_cold_per_s: hps.cold,
  hellos_samples: hps.enrollSamples ?? null,
  hellos_reconnect_samples: hps.reconnectSamples ?? null,
  idle_connection_bytes: idle,
  idle_agents: IDLE_AGENTS,
}));
