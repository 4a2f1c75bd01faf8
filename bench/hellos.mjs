// npm run bench -- hellos [--agents N] [--concurrency C] [--cpu-prof DIR]
// Hellos only: the compiled server in its own process (spawned CLI, SQLite file in a temp
// dir); this process connects N issued agents, C at a time — first enrollments (one-time
// token, rotated), then the same agents again with their long-lived tokens — and, in the same
// run, the same connects against a bare `ws` server in its own process that answers the
// first frame with a canned result (upgrade + one round trip, no handshake): the ceiling a
// hello is measured against. --cpu-prof DIR: the server runs under `node --cpu-prof` and
// writes its profile there on exit. BENCH_SERVER_CLI=path: another build's dist/server/cli.js
// (an A/B of two builds with the same client).
// The load client is `rawHello` (./_wire.mjs): plain `net` sockets with the upgrade request
// and the masked hello frames built before the clock starts, the same client for the bare
// baseline and for the server, so the ratios compare servers, not clients. The `ws` client
// (`connect`, what the ingest bench uses) is measured against the bare server too
// (`ws_client_connects_per_s`): the ceiling the old load client put on every figure. The
// client's own CPU per connect is reported beside the server's.
// Also the server's CPU time per hello (/proc/<pid>/stat), which a busy machine disturbs far
// less than the rates.
// Each timed round (bare ws, first enrollments, reconnects) runs ROUNDS times (default 3,
// BENCH_HELLOS_ROUNDS), interleaved, each first-enrollment round on agents of its own: a round of
// 1,000 hellos lasts about half a second, and one disturbed half-second moved a single sample by
// up to 45% on a quiet machine (2026-12-07: reconnects 1,049, 1,328, 1,877/s in three runs).
// The best sample of each kind is reported (the least disturbed, as bench agent does), every
// sample printed; the CPU figures are the mean over all samples of the kind. Last output line: one JSON object (hellos_per_s,
// hellos_reconnect_per_s, ws_connects_per_s, the two ratios to it, and the CPU figures).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStorage } from '../dist/server/db/dialect.js';
import { migrateToLatest } from '../dist/server/db/migrations/index.js';
import { issueAgent } from '../dist/server/db/agents.repository.js';
import { connect, helloFrame, rawHello, upgradeRequest } from './_wire.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const N = Number(arg('--agents', process.env.BENCH_HELLOS ?? 1000));
const C = Number(arg('--concurrency', 50));
const profDir = arg('--cpu-prof', undefined);
const dir = mkdtempSync(join(tmpdir(), 'cortex-bench-hellos-'));
const log = (...a) => console.log(...a);

/** A child process; resolves with it and the ws:// URL it printed. */
function start(args, pattern) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CORTEX_LOG_LEVEL: 'warn' } });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m) resolve({ child, url: m[1] });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (c) => reject(new Error(`${args[0]} exited ${c}: ${out}`)));
  });
}

function stop(child) {
  return new Promise((r) => {
    child.removeAllListeners('exit');
    child.once('exit', r);
    child.kill('SIGTERM');
  });
}

/** CPU time (user + system, ms) a process has used: less sensitive to a busy machine than a rate. */
function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime in clock ticks (USER_HZ 100)
}

/** CPU ms per thread of a process (comm:tid → ms): where the server's CPU goes. */
function threadCpuMs(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const raw = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')'));
      const f = raw.slice(raw.lastIndexOf(') ') + 2).split(' ');
      out.set(tid === String(pid) ? 'main' : `${comm}:${tid}`, ((Number(f[11]) + Number(f[12])) * 1000) / 100);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** This process's CPU time (ms). */
const ownCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/**
 * C at a time over `agents`; resolves with connects/s, the server's and this client's CPU ms
 * per connect and what each connect returned. `client`: 'raw' (rawHello, frames built before
 * the clock starts) or 'ws' (the `ws` client, `connect`).
 */
async function round(url, agents, pid, client = 'raw') {
  const u = new URL(url);
  const port = Number(u.port);
  const request = upgradeRequest(url);
  const frames = client === 'raw' ? agents.map(helloFrame) : [];
  const one = client === 'raw' ? (i) => rawHello(port, u.hostname, request, frames[i]) : (i) => connect(url, agents[i]);
  const cpu0 = pid === undefined ? 0 : cpuMs(pid);
  const threads0 = pid === undefined ? new Map() : threadCpuMs(pid);
  const own0 = ownCpuMs();
  const t0 = performance.now();
  const conns = new Array(agents.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < agents.length) {
        const i = next++;
        conns[i] = await one(i);
      }
    }),
  );
  const rate = Math.round(agents.length / ((performance.now() - t0) / 1000));
  const clientCpu = +((ownCpuMs() - own0) / agents.length).toFixed(3);
  const cpu = pid === undefined ? 0 : +((cpuMs(pid) - cpu0) / agents.length).toFixed(3);
  const threads = pid === undefined ? [] : [...threadCpuMs(pid)].map(([k, v]) => [k, +((v - (threads0.get(k) ?? 0)) / agents.length).toFixed(3)]).filter(([, v]) => v > 0);
  const mainCpu = threads.find(([k]) => k === 'main')?.[1] ?? 0;
  await Promise.all(conns.map((c) => (client === 'raw' ? c.close() : new Promise((r) => { c.ws.once('close', r); c.ws.close(); }))));
  // let the server finish the closes (row updates) before the next round
  await new Promise((r) => setTimeout(r, 300));
  return { rate, cpu, mainCpu, threads, clientCpu, conns };
}

// ───────────── bare ws baseline ─────────────
const BARE = `
import { WebSocketServer } from 'ws';
const result = JSON.stringify({ jsonrpc: '2.0', id: 0, result: { server_version: '0', server_time: new Date().toISOString(), accepted_seq: 0, session_id: '00000000-0000-4000-8000-000000000000', config: {} } });
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, clientTracking: false, handleProtocols: (p) => (p.has('cortex.v1') ? 'cortex.v1' : false) });
wss.on('connection', (ws) => ws.once('message', () => ws.send(result)));
wss.on('listening', () => console.log('listening on ws://127.0.0.1:' + wss.address().port + '/ws/agent'));
`;
const ROUNDS = Math.max(1, Number(process.env.BENCH_HELLOS_ROUNDS ?? 3));
/** The best of several rounds (highest rate), with every rate and the mean CPU figures. */
function best(rounds) {
  const top = rounds.reduce((a, b) => (b.rate > a.rate ? b : a));
  const mean = (k) => +(rounds.reduce((s, r) => s + r[k], 0) / rounds.length).toFixed(3);
  const threads = top.threads.map(([k]) => [k, +(rounds.reduce((s, r) => s + (r.threads.find(([t]) => t === k)?.[1] ?? 0), 0) / rounds.length).toFixed(3)]);
  return { ...top, cpu: mean('cpu'), mainCpu: mean('mainCpu'), clientCpu: mean('clientCpu'), threads, samples: rounds.map((r) => r.rate) };
}
const bare = await start(['--input-type=module', '-e', BARE], /listening on (ws:\/\/\S+)/);
const fake = Array.from({ length: N }, (_, i) => ({ host_id: '00000000-0000-4000-8000-000000000000', hostname: `bare-${i}`, token: 'x' }));
await round(bare.url, fake.slice(0, Math.min(200, N)), bare.child.pid); // warm-up
const bareRounds = [];
for (let r = 0; r < ROUNDS; r++) bareRounds.push(await round(bare.url, fake, bare.child.pid));
const bareRound = best(bareRounds);
const wsRate = bareRound.rate;
await round(bare.url, fake.slice(0, Math.min(200, N)), bare.child.pid, 'ws'); // warm-up
const wsClientRound = await round(bare.url, fake, bare.child.pid, 'ws');
await stop(bare.child);

// ───────────── the server ─────────────
const dbPath = join(dir, 'server.db');
const setup = openSqliteStorage({ path: dbPath });
await migrateToLatest(setup);
const agents = [];
// N for the warm-up, N for each round's first enrollments
for (let i = 0; i < (ROUNDS + 1) * N; i++) agents.push(await issueAgent(setup.db, `hello-${i}`));
await setup.close();
const serverArgs = [
  ...(profDir !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${resolvePath(profDir)}`] : []),
  process.env.BENCH_SERVER_CLI ?? join(ROOT, 'dist/server/cli.js'),
  'serve', '--listen', '127.0.0.1:0', '--db', dbPath, '--agent-rate', '100000000', '--upgrades-per-minute', '0', '--hello-timeout-ms', '60000',
];
const server = await start(serverArgs, /listening on (ws:\/\/\S+)/);
// Warm-up on N agents of their own, both kinds of hello: the timed rounds then measure a
// server that has held N sessions before. The first of them, on the fresh server, is
// reported too (hellos_cold_per_s): there the server also grows its heap to hold N sessions
// (most of its young-generation GC work), and its JIT is not warm yet.
const pid = server.child.pid;
const warm = agents.slice(ROUNDS * N);
const cold = await round(server.url, warm, pid);
await round(server.url, warm.map((a, i) => ({ ...a, token: cold.conns[i].rotated ?? a.token })), pid);
const firstRounds = [];
const reconnectRounds = [];
for (let r = 0; r < ROUNDS; r++) {
  const own = agents.slice(r * N, (r + 1) * N);
  const f = await round(server.url, own, pid);
  firstRounds.push(f);
  reconnectRounds.push(await round(server.url, own.map((a, i) => ({ ...a, token: f.conns[i].rotated ?? a.token })), pid));
}
const first = best(firstRounds);
const reconnect = best(reconnectRounds);
await stop(server.child);
rmSync(dir, { recursive: true, force: true });

log(`samples (${ROUNDS} rounds each, the best reported): bare ws ${bareRound.samples.join(', ')}; first enrollments ${first.samples.join(', ')}; reconnects ${reconnect.samples.join(', ')} per s`);
log(`bare ws (upgrade + one round trip), ${C} at a time: ${wsRate}/s (server CPU ${bareRound.cpu} ms, load client CPU ${bareRound.clientCpu} ms per connect); with the \`ws\` client instead: ${wsClientRound.rate}/s (client CPU ${wsClientRound.clientCpu} ms per connect)`);
log(`hellos for ${N} agents, ${C} at a time: first enrollment (with rotation) ${first.rate}/s (${(first.rate / wsRate).toFixed(2)} of bare ws), reconnect with a long-lived token ${reconnect.rate}/s (${(reconnect.rate / wsRate).toFixed(2)} of bare ws); server CPU per hello ${first.cpu} ms / ${reconnect.cpu} ms, load client CPU ${first.clientCpu} ms / ${reconnect.clientCpu} ms`);
log(`the same first enrollments on the fresh server (the warm-up, other agents): ${cold.rate}/s (${(cold.rate / wsRate).toFixed(2)} of bare ws), server CPU ${cold.cpu} ms per hello (${JSON.stringify(cold.threads)})`);
log(`server CPU ms per hello by thread: first enrollment ${JSON.stringify(first.threads)}, reconnect ${JSON.stringify(reconnect.threads)}`);
log(
  JSON.stringify({
    hellos_per_s: first.rate,
    hellos_reconnect_per_s: reconnect.rate,
    hellos_cold_per_s: cold.rate,
    ws_connects_per_s: wsRate,
    hellos_ratio: +(first.rate / wsRate).toFixed(3),
    hellos_reconnect_ratio: +(reconnect.rate / wsRate).toFixed(3),
    server_cpu_ms_per_hello: first.cpu,
    server_cpu_ms_per_reconnect: reconnect.cpu,
    server_cpu_ms_per_cold_hello: cold.cpu,
    server_main_thread_cpu_ms_per_hello: first.mainCpu,
    server_main_thread_cpu_ms_per_reconnect: reconnect.mainCpu,
    server_cpu_ms_per_bare_connect: bareRound.cpu,
    client_cpu_ms_per_connect: bareRound.clientCpu,
    ws_client_connects_per_s: wsClientRound.rate,
    ws_client_cpu_ms_per_connect: wsClientRound.clientCpu,
    agents: N,
    concurrency: C,
    rounds: ROUNDS,
    ws_connects_samples: bareRound.samples,
    hellos_samples: first.samples,
    hellos_reconnect_samples: reconnect.samples,
  }),
);
