// npm run bench -- fleet
// Fleet scale against the reference server: the compiled server runs in its own process
// (`node dist/server/cli.js serve` on 127.0.0.1, a free port, its own temp SQLite file);
// the fleet emulator (dist/fleet, worker processes) is the load. Phases:
//   1. enrollment: N one-time tokens issued in bulk in this process through the server's
//      own repository code (issueAgent in one transaction — the same rows `agent issue`
//      writes), then N agents enroll (hello with rotation) and stay connected, idle;
//   2. memory: server RSS with N idle authenticated agents against the empty server's RSS
//      measured in this run (the same process after 500 warm-up agents connected and left;
//      the RSS just after start is reported too) (target: ≤ 10 KB per agent);
//   3. probe fan-out: sys.uptime to 1,000 agents at once through POST /admin/agents/{id}/probe
//      (target: all answered within 5 s, each output valid for its schema);
//   4. restart storm: SIGKILL (BENCH_FLEET_SIGNAL=SIGTERM for a graceful stop), start again on
//      the same port and database; every agent back Active (target: within 2 minutes), no
//      agent gives up, connection attempts per second against what full jitter predicts
//      for the measured outage and each agent's attempt counter (fleet/backoff.ts);
//   5. traffic: every agent ships entries for a few seconds (entries/s, ack latency with
//      N agents connected), then the rows in the database are checked: every generated entry once.
// BENCH_FLEET_AGENTS (default 10000), BENCH_FLEET_WORKERS (default: fleet's plan),
// BENCH_FLEET_TRAFFIC_S (default 10), BENCH_FLEET_RATE (entries/s per agent, default 0.1),
// BENCH_FLEET_SIGNAL (default SIGKILL). See fleet/README.md and contract/DECISIONS.md M4.
// Last output line: one JSON object with the figures.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { validateSysUptimeOutput } from '@cortex/agent-protocol';
import { Fleet, fdLimits, planWorkers, predictAttemptsPerSecond, rssBytes, stormLimit, DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_CAP_MS, BACKOFF_RESET_AFTER_MS, FLEET_PROBES } from '../dist/fleet/index.js';
import { openSqliteStorage } from '../dist/server/db/dialect.js';
import { migrateToLatest } from '../dist/server/db/migrations/index.js';
import { issueAgent } from '../dist/server/db/agents.repository.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVER_CLI = join(ROOT, 'dist/server/cli.js');
const N = Number(process.env.BENCH_FLEET_AGENTS ?? 10_000);
const FANOUT = Math.min(1000, N);
const SIGNAL = process.env.BENCH_FLEET_SIGNAL ?? 'SIGKILL';
const TRAFFIC_S = Number(process.env.BENCH_FLEET_TRAFFIC_S ?? 10);
const RATE = Number(process.env.BENCH_FLEET_RATE ?? 0.1);
const WORKERS = process.env.BENCH_FLEET_WORKERS !== undefined ? Number(process.env.BENCH_FLEET_WORKERS) : planWorkers(N);
const IDLE_TARGET_BYTES = 10 * 1024;
const RESTART_TARGET_S = 120;
const FANOUT_TARGET_S = 5;
/** Hosts that connect and leave before the measurement, so "the empty server" is a running one. */
const WARMUP = 500;

const dir = mkdtempSync(join(tmpdir(), 'cortex-bench-fleet-'));
const dbPath = join(dir, 'server.db');
const log = (...a) => console.log(...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (v, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

// ───────────── open files ─────────────
const limits = fdLimits();
const need = N + 256;
const serverLimit = limits.hard !== null ? Math.min(limits.hard, Math.max(need, limits.soft ?? 0)) : null;
log(`open-file limit of this process: soft ${limits.soft}, hard ${limits.hard}; the server needs about ${need} (one per agent + headroom): it is started with \`ulimit -n ${serverLimit}\`${serverLimit !== null && serverLimit < need ? ' — BELOW what it needs' : ''}`);
log('upgrade rate limit: the server keeps its default (10 per minute per address); the agents connect from 127.0.0.1 without X-Forwarded-For, a trusted proxy address with no forwarded client, which the server does not limit (DESIGN 5.8). Ping settings: default (20 s, 3 missed pongs); ws answers pings by itself.');

// ───────────── server process ─────────────
function startServer(port) {
  const args = [SERVER_CLI, 'serve', '--listen', `127.0.0.1:${port}`, '--db', dbPath];
  const child = spawn('/bin/sh', ['-c', `${serverLimit !== null ? `ulimit -n ${serverLimit} && ` : ''}exec "$0" "$@"`, process.execPath, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CORTEX_LOG_LEVEL: 'warn' },
  });
  const exited = new Promise((r) => child.once('exit', (code, signal) => r(signal ?? code)));
  return new Promise((resolve, reject) => {
    let err = '';
    const onData = (d) => {
      err += d.toString();
      const m = /listening on (ws:\/\/\S+)/.exec(err);
      if (m) {
        child.stderr.off('data', onData);
        child.stdout.off('data', onData);
        child.stderr.resume(); // keep draining warnings so the pipe never fills
        child.stdout.resume();
        const url = m[1];
        resolve({ child, pid: child.pid, url, port: Number(new URL(url.replace(/^ws/, 'http')).port), http: url.replace(/^ws/, 'http').replace(/\/ws\/agent$/, ''), exited });
      }
      if (err.length > 100_000) err = err.slice(-50_000);
    };
    // The banner ("cortex-server listening on ws://…") is on stdout, the JSON logs on stderr.
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((c) => reject(new Error(`server exited ${c} before listening: ${err.slice(-2000)}`)));
  });
}

/** The server's live JS heap and external memory (prom-client's process metrics on /metrics). */
async function heapBytes(server) {
  const text = await (await fetch(`${server.http}/metrics`)).text();
  const v = (name) => Number(new RegExp(`^\\S*${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return v('nodejs_heap_size_used_bytes') + v('nodejs_external_memory_bytes');
}

async function healthz(server) {
  const res = await fetch(`${server.http}/healthz`);
  return res.json();
}

// ───────────── 1. enrollment tokens in bulk ─────────────
let t = performance.now();
const setup = openSqliteStorage({ path: dbPath });
await migrateToLatest(setup);
const issued = [];
const warmup = [];
await setup.db.transaction().execute(async (trx) => {
  for (let i = 0; i < N; i++) issued.push(await issueAgent(trx, `fleet-${i}`));
  for (let i = 0; i < WARMUP; i++) warmup.push(await issueAgent(trx, `warmup-${i}`));
});
await setup.close();
const issueS = (performance.now() - t) / 1000;
const tokenFile = join(dir, 'tokens.jsonl');
writeFileSync(tokenFile, issued.map((x) => JSON.stringify(x)).join('\n') + '\n', { mode: 0o600 });
log(`issued ${N} (+${WARMUP} warm-up) enrollment tokens in one transaction (server repository code, issueAgent): ${round(issueS)} s`);

let server = await startServer(0);
// Never leave the server behind (the workers exit with this process: their IPC channel closes).
process.on('exit', () => server.child.kill('SIGKILL'));
const fleetSettings = {
  ratePerAgent: 0,
  backoff: { baseMs: DEFAULT_BACKOFF_BASE_MS, capMs: DEFAULT_BACKOFF_CAP_MS, resetAfterMs: BACKOFF_RESET_AFTER_MS },
  connectTimeoutMs: 10_000,
  helloTimeoutMs: 15_000,
  requestTimeoutMs: 30_000,
  window: 4,
  maxBatchEntries: 1000,
  messageBytes: 120,
  probes: [...FLEET_PROBES],
  agentVersion: '1.0.0',
  startConcurrency: 200,
};
await sleep(1500);
const coldRss = rssBytes(server.pid);
// The empty server: running, warmed up (code loaded and compiled, young generation grown by
// a burst of hellos — a one-time cost, not a per-agent one), holding no session.
const warm = await Fleet.start({ ...fleetSettings, identities: warmup, workers: 1, url: server.url });
await warm.waitFor((x) => x.states.Active === WARMUP, 120_000, 250);
await warm.stop();
await sleep(3000);
const emptyRss = rssBytes(server.pid);
const emptyHeap = await heapBytes(server);
const emptyHz = await healthz(server);
log(`empty server: RSS ${round(coldRss / 1048576)} MiB just after start; ${round(emptyRss / 1048576)} MiB after ${WARMUP} warm-up agents connected and left (${emptyHz.sessions} sessions), JS heap used + external ${round(emptyHeap / 1048576)} MiB`);

const fleet = await Fleet.start({ ...fleetSettings, identities: issued, workers: WORKERS, url: server.url, tokenFile });
const s0 = await fleet.snapshot();
log(`fleet: ${N} agents in ${WORKERS} worker process(es) (emulator RSS ${round(s0.rssBytes / 1048576)} MiB at start); worker open-file limit ${fleet.fd.worker_limit}${fleet.fd.raised ? ' (raised)' : ''}${fleet.fd.insufficient ? ' — INSUFFICIENT' : ''}`);
t = Date.now();
let s = await fleet.waitFor((x) => x.states.Active === N || x.states.FatalAuth + x.states.Revoked > 0, 300_000, 250);
if (s.states.Active !== N) throw new Error(`enrollment: agents gave up: ${JSON.stringify(s.gaveUp.toJSON())}`);
const enrollS = (s.lastActiveAt - t) / 1000;
const enrollRate = Math.round(N / enrollS);
log(`enrollment: ${N} agents Active (hello with rotation, 200 connecting at a time) in ${round(enrollS)} s = ${enrollRate} hellos/s; errors on the way: ${JSON.stringify(s.errors.toJSON())}`);

// ───────────── 2. memory per idle agent ─────────────
// Idle: 5 s after the last hello, then one RSS sample a second for 10 s; the settled figure
// is the lowest (V8 hands garbage pages back to the system once allocation stops), the
// first one is reported too.
await sleep(5000);
const idleSamples = [];
for (let i = 0; i < 10; i++) {
  idleSamples.push(rssBytes(server.pid));
  await sleep(1000);
}
const idleRss = Math.min(...idleSamples);
const idleHeap = await heapBytes(server);
const hz = await healthz(server);
const idleBytes = Math.round((idleRss - emptyRss) / N);
const idleBytesFirst = Math.round((idleSamples[0] - emptyRss) / N);
const idleBytesCold = Math.round((idleRss - coldRss) / N);
const heapPerAgent = Math.round((idleHeap - emptyHeap) / N);
const emulatorIdle = (await fleet.snapshot()).rssBytes;
log(`emulator: RSS ${round(emulatorIdle / 1048576)} MiB with ${N} agents connected (${Math.round(emulatorIdle / N)} bytes per agent, all processes)`);
log(`idle: server RSS ${round(idleRss / 1048576)} MiB with ${hz.sessions} sessions (healthz) = ${idleBytes} bytes per idle authenticated agent above the empty server (target ≤ ${IDLE_TARGET_BYTES}; ${idleBytesFirst} at the first sample 5 s after the last hello; ${idleBytesCold} above the server just after its start); ${round(idleRss / emptyRss, 2)}× the empty server; JS heap used + external ${heapPerAgent} bytes per agent`);

// ───────────── 3. probe fan-out ─────────────
const targets = issued.slice(0, FANOUT).map((x) => x.host_id);
// The way a console or script calls an API: a pool of keep-alive connections (a burst of
// 1,000 new TCP connections at once would mostly measure the listen backlog's SYN drops).
const HTTP_CONNECTIONS = 64;
const httpAgent = new http.Agent({ keepAlive: true, maxSockets: HTTP_CONNECTIONS });
function post(path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.http}${path}`, { method: 'POST', agent: httpAgent, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
const answers = [];
t = performance.now();
await Promise.all(
  targets.map(async (id) => {
    const { status, body } = await post(`/admin/agents/${id}/probe`, { probe: 'sys.uptime', args: {}, timeout_ms: FANOUT_TARGET_S * 1000 });
    answers.push({ status, ok: status === 200 && validateSysUptimeOutput(body.output), at: performance.now() });
  }),
);
httpAgent.destroy();
const fanoutS = (Math.max(...answers.map((a) => a.at)) - t) / 1000;
const fanoutOk = answers.filter((a) => a.ok).length;
const statuses = {};
for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
log(`probe fan-out: sys.uptime to ${FANOUT} agents at once through the admin API (${HTTP_CONNECTIONS} keep-alive connections): ${fanoutOk} valid answers, last after ${round(fanoutS, 2)} s (target ${FANOUT_TARGET_S} s); HTTP statuses ${JSON.stringify(statuses)}`);

// ───────────── 4. restart storm ─────────────
await fleet.resetLoopDelay();
const before = await fleet.snapshot();
const initialAttempts = before.attemptCounters;
const port = server.port;
const tKill = Date.now();
server.child.kill(SIGNAL);
await server.exited;
const tDown = Date.now();
server = await startServer(port);
const tUp = Date.now();
s = await fleet.waitFor((x) => x.states.Active === N, RESTART_TARGET_S * 1000 + 30_000 - (Date.now() - tKill), 250);
// The storm starts when the agents see their sessions close (the kernel closes the killed
// server's sockets); bins and the model count from there.
const t0 = s.lost.firstAt(tKill) ?? tKill;
const restartS = (s.lastActiveAt - tKill) / 1000;
const gaveUp = s.states.FatalAuth + s.states.Revoked;
const bins = Math.ceil((s.lastActiveAt - t0) / 1000) + 1;
const attemptsPerS = s.attempts.perSecond(t0, bins);
const hellosPerS = s.hellos.perSecond(t0, bins);
const predicted = predictAttemptsPerSecond({ baseMs: DEFAULT_BACKOFF_BASE_MS, capMs: DEFAULT_BACKOFF_CAP_MS, outageMs: Math.max(0, tUp - t0), bins, initialAttempts, runs: 20 });
// While the server is down every attempt fails at once, as the model assumes: there each
// second must stay within the fault suite's bound (3× the prediction, floor 3). Once it
// listens, a server slower than the arrivals refuses or times out attempts that the model
// counts as successes, so later seconds can exceed a per-second prediction; the storm's peak
// must still stay below the predicted peak (without jitter the whole fleet would retry in
// one instant).
const outageBins = Math.max(1, Math.floor((tUp - t0) / 1000));
let worst = 0;
let worstSecond = 0;
for (let i = 0; i < outageBins; i++) {
  const r = attemptsPerS[i] / Math.max(predicted[i], 3);
  if (r > worst) {
    worst = r;
    worstSecond = i;
  }
}
const outageOk = attemptsPerS.slice(0, outageBins).every((o, i) => o <= stormLimit(predicted[i]));
const peakAttempts = Math.max(...attemptsPerS);
const peakPredicted = Math.max(...predicted);
const jitterOk = outageOk && peakAttempts <= peakPredicted;
const secondsOver = attemptsPerS.filter((o, i) => o > stormLimit(predicted[i])).length;
const stormLoop = s.loopDelay;
const hz2 = await healthz(server);
const restartErrors = {};
for (const [k, v] of Object.entries(s.errors.toJSON())) {
  const d = v - (before.errors.get(k) ?? 0);
  if (d > 0) restartErrors[k] = d;
}
log(`restart (${SIGNAL}): sessions seen closing ${t0 - tKill} ms after the signal, server exit seen after ${tDown - tKill} ms, listening again after ${tUp - tKill} ms; all ${N} agents Active ${round(restartS)} s after the signal (target ${RESTART_TARGET_S} s), sessions on the new server ${hz2.sessions}, gave up ${gaveUp}`);
log(`  attempt counters at the kill: ${JSON.stringify(initialAttempts)}`);
log(`  connection attempts per second from the loss:  ${JSON.stringify(attemptsPerS)}`);
log(`  predicted by full jitter for this outage:       ${JSON.stringify(predicted.map((p) => Math.round(p)))}`);
log(`  hellos (Active) per second from the loss:       ${JSON.stringify(hellosPerS)}`);
log(`  while the server was down (${outageBins} s): worst second ${worstSecond}, ${attemptsPerS[worstSecond]} attempts vs ${round(predicted[worstSecond])} predicted (${round(worst, 2)}×; bound 3×, floor 3): ${outageOk ? 'within' : 'OUTSIDE'}; peak ${peakAttempts} attempts/s vs the predicted peak ${Math.round(peakPredicted)}/s: ${peakAttempts <= peakPredicted ? 'below' : 'ABOVE'} (no jitter: all ${N} in one instant); seconds over 3× their prediction after the server was back: ${secondsOver}`);
log(`  emulator event-loop delay during the storm: p99 ${stormLoop.p99} ms, max ${stormLoop.max} ms (a busy emulator only delays attempts: it can make the first seconds quieter than predicted, never louder)`);
log(`  reconnect time per agent (lost session → Active): ${JSON.stringify(s.reconnectTime.summary())} ms; errors by code during the restart: ${JSON.stringify(restartErrors)}`);

// ───────────── 5. traffic ─────────────
let entriesPerS = 0;
let ackSummary = null;
let trafficLoop = null;
if (TRAFFIC_S > 0 && RATE > 0) {
  await fleet.resetLoopDelay();
  const a0 = s.counters.entries_acked;
  const lat0 = s.ackLatency.count;
  await fleet.setRate(RATE);
  const tt = Date.now();
  await sleep(TRAFFIC_S * 1000);
  await fleet.setRate(0);
  const s2 = await fleet.snapshot();
  entriesPerS = Math.round((s2.counters.entries_acked - a0) / ((s2.takenAt - tt) / 1000));
  ackSummary = s2.ackLatency.summary();
  trafficLoop = s2.loopDelay;
  log(`traffic: ${RATE} entries/s per agent (${Math.round(RATE * N)}/s offered by the fleet) for ${TRAFFIC_S} s: ${entriesPerS} entries/s acked; ack latency ${JSON.stringify(ackSummary)} ms over ${ackSummary.count - lat0} pushes (all pushes of the run); emulator event-loop delay p99 ${trafficLoop.p99} ms`);
}

const final = await fleet.stop(10_000);
const stopRc = await (async () => {
  server.child.kill('SIGTERM');
  return server.exited;
})();
const sqlite = new Database(dbPath, { readonly: true });
const stored = sqlite.prepare('select count(*) as n, count(distinct host_id || \':\' || seq) as d from logs').get();
sqlite.close();
log(`stop: fleet closed (final_seq), server ${stopRc}; rows in logs ${stored.n} (distinct ${stored.d}), entries acked ${final.counters.entries_acked}, generated ${final.counters.entries_generated}, unacked at stop ${final.entriesPending}`);
rmSync(dir, { recursive: true, force: true });

console.log(JSON.stringify({
  agents: N,
  workers: WORKERS,
  fd_limit_soft: limits.soft,
  fd_limit_hard: limits.hard,
  fd_needed_per_process: need,
  issue_tokens_s: round(issueS, 2),
  enroll_s: round(enrollS, 1),
  enroll_hellos_per_s: enrollRate,
  server_empty_rss_bytes: emptyRss,
  server_idle_rss_bytes: idleRss,
  idle_rss_ratio_vs_empty: round(idleRss / emptyRss, 3),
  idle_bytes_per_agent: idleBytes,
  idle_bytes_per_agent_first_sample: idleBytesFirst,
  idle_bytes_per_agent_vs_cold_start: idleBytesCold,
  server_cold_rss_bytes: coldRss,
  idle_heap_bytes_per_agent: heapPerAgent,
  emulator_rss_bytes_per_agent: Math.round(emulatorIdle / N),
  idle_bytes_target: IDLE_TARGET_BYTES,
  idle_target_ratio: round(idleBytes / IDLE_TARGET_BYTES, 3),
  probe_fanout_agents: FANOUT,
  probe_fanout_ok: fanoutOk,
  probe_fanout_1000_s: round(fanoutS, 2),
  probe_fanout_http_connections: HTTP_CONNECTIONS,
  restart_signal: SIGNAL,
  restart_outage_ms: tUp - t0,
  restart_all_active_s: round(restartS, 1),
  restart_gave_up: gaveUp,
  restart_attempts_per_s: attemptsPerS,
  restart_predicted_attempts_per_s: predicted.map((p) => Math.round(p)),
  restart_hellos_per_s: hellosPerS,
  restart_peak_hellos_per_s: Math.max(...hellosPerS),
  restart_peak_attempts_per_s: peakAttempts,
  restart_predicted_peak_attempts_per_s: Math.round(peakPredicted),
  restart_outage_worst_ratio_vs_jitter: round(worst, 2),
  restart_seconds_over_3x_after_outage: secondsOver,
  restart_within_jitter_bound: jitterOk,
  restart_emulator_loop_delay_ms: stormLoop,
  reconnect_time_ms: s.reconnectTime.summary(),
  restart_errors: restartErrors,
  traffic_entries_per_s: entriesPerS,
  traffic_ack_latency_ms: ackSummary,
  traffic_emulator_loop_delay_ms: trafficLoop,
  stored_rows: stored.n,
  stored_distinct: stored.d,
  entries_acked: final.counters.entries_acked,
  entries_generated: final.counters.entries_generated,
  stored_exactly_once: stored.n === stored.d && stored.n === final.counters.entries_generated,
}));
