#!/usr/bin/env node
// Agent benchmark (`npm run bench -- agent`): compiled JavaScript from dist/.
//   1. buffer append throughput: durable commits (WAL, synchronous=FULL) in batches of 500;
//   2. end to end: one in-process agent → the reference server (`dist/server/cli.js serve`,
//      per-agent rate limit lifted) or, if that cannot start, a minimal acking ws server in
//      a child process (reported in `e2e_server`);
//   3. RSS and idle CPU of `node dist/agent/cli.js run` (the way users run it), idle and Active.
// Server alone (`server_alone_entries_per_s`): the same reference server in the same run, fed
// by a bare client (another host) that sends ready logs.push frames of the same entries (bytes
// built before the clock, zero mask key, since 2026-12-04 eighth session: the client's CPU
// was taken from the server's two cores),
// 1000 per batch, 4 in flight, the agent's batch size and window: what the server takes without
// an agent in front. `e2e_ratio` = e2e / server alone (issue 20 asks ≥ 0.8). The agent's own
// frames stop at 128 KiB (~610 of these entries): `server_alone_agent_frames_entries_per_s` is
// the server alone fed frames cut the same way, and `e2e_ratio_agent_frames` e2e ÷ that (added
// 2026-12-04, when the 1000-entry frames, ~211 KB, stopped costing the server more per entry
// than the agent's: DECISIONS P12). Both are
// measured three times, interleaved (alone, alone with the agent's frames, e2e; three rounds),
// and the best of each is reported (the machine is shared: the best run is the least disturbed
// one; the same count for each, as the best of more samples is higher); every sample is printed.
//
// CPU per entry (from getrusage of this process and /proc/<pid>/stat of the server, all
// threads): `agent_cpu_us_per_entry` (this process during the e2e runs: it is the agent),
// `server_cpu_us_per_entry_e2e` and `server_cpu_us_per_entry_alone` (the server process in
// each mode). On a 2-core machine both runs are CPU-bound, so e2e ÷ alone is at most about
// server ÷ (server + agent) CPU per entry: these keys say which side the time goes to.
//
// BENCH_AGENT_RSS_ONLY=1 runs only part 3. BENCH_AGENT_E2E_ONLY=1 runs only part 2.
// --cpu-prof DIR: part 2 only, this process (the agent) and the server under node --cpu-prof
// (profiles in DIR/agent and DIR/server), then prints bench/_cpuprofile-summary.mjs of each.
// (BENCH_SERVER_PROF_DIR=<dir> alone profiles only the server process.)
// Last line: one JSON object.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { applyAgentV8Flags } from '../dist/agent/v8-flags.js';

// This process runs the agent's code: with the V8 settings the agent process has (agent/v8-flags.ts).
applyAgentV8Flags();

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => join(root, 'dist', p);

if (process.argv[2] === '--acking-server') {
  // Minimal acking server: parses every frame, answers hello and acks logs.push.
  const { WebSocketServer } = await import('ws');
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, handleProtocols: (p) => (p.has('cortex.v1') ? 'cortex.v1' : false) });
  wss.on('listening', () => process.stdout.write(`port ${wss.address().port}\n`));
  const acceptedByHost = new Map();
  wss.on('connection', (ws) => {
    let host = '';
    const ping = setInterval(() => ws.ping(), 20000);
    ws.on('close', () => clearInterval(ping));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.method === 'agent.hello') {
        host = m.params.host_id;
        const accepted = acceptedByHost.get(host) ?? 0;
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { server_version: '0', server_time: new Date().toISOString(), accepted_seq: accepted, session_id: '00000000-0000-4000-8000-000000000000', config: { heartbeat_interval_secs: 30, max_batch_entries: 1000, flush_interval_ms: 200, metrics_interval_secs: 60, probe_concurrency: 4, log_sources: [] } } }));
      } else if (m.method === 'logs.push') {
        const accepted = Math.max(acceptedByHost.get(host) ?? 0, m.params.entries[m.params.entries.length - 1].seq);
        acceptedByHost.set(host, accepted);
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { up_to_seq: accepted } }));
      } else if (m.method === 'metrics.push') {
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { accepted: m.params.samples.length } }));
      }
    });
  });
} else if (process.argv.includes('--cpu-prof')) {
  await profiled(process.argv[process.argv.indexOf('--cpu-prof') + 1]);
} else {
  await main();
}

/** --cpu-prof DIR: reruns part 2 under the profiler and summarises both processes. */
async function profiled(dir) {
  if (!dir) throw new Error('--cpu-prof needs a folder');
  const { mkdirSync, readdirSync } = await import('node:fs');
  const agentDir = join(dir, 'agent');
  const serverDir = join(dir, 'server');
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(serverDir, { recursive: true });
  const r = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', agentDir, fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_AGENT_E2E_ONLY: '1', BENCH_SERVER_PROF_DIR: serverDir },
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const out = r.stdout.trimEnd().split('\n');
  for (const line of out.slice(0, -1)) console.log(line);
  const summary = join(dirname(fileURLToPath(import.meta.url)), '_cpuprofile-summary.mjs');
  for (const [name, d] of [['agent (this process; includes the bare client of the server-alone runs)', agentDir], ['server (main thread, then its worker threads)', serverDir]]) {
    for (const f of readdirSync(d).filter((x) => x.endsWith('.cpuprofile')).sort()) {
      console.log(`=== ${name}: ${join(d, f)}`);
      console.log(spawnSync(process.execPath, [summary, join(d, f)], { encoding: 'utf8' }).stdout.split('\n').slice(0, 24).join('\n'));
    }
  }
  console.log(out.at(-1));
}

async function main() {
  const { DurableBuffer } = await import(dist('agent/buffer/buffer.js'));
  const { Agent } = await import(dist('agent/agent.js'));
  const { createLogger } = await import(dist('agent/log.js'));
  const { writeToken } = await import(dist('agent/token-store.js'));
  const { writeHostId, writeAgentSettings } = await import(dist('agent/state-dir.js'));
  const work = mkdtempSync(join(tmpdir(), 'cortex-agent-bench-'));
  const cleanup = [];
  const e2eOnly = process.env.BENCH_AGENT_E2E_ONLY === '1';
  try {
    // 1. buffer append throughput
    const entry = (i) => ({ ts: new Date().toISOString(), severity: 'info', app_name: 'bench', process_id: '1234', message: `benchmark entry number ${i} with a realistic length of text, user=alice action=login ok`, source: 'custom:bench' });
    const batch = Array.from({ length: 500 }, (_, i) => entry(i));
    let appendRate = 0;
    if (!e2eOnly && process.env.BENCH_AGENT_RSS_ONLY !== '1') {
    const buf = DurableBuffer.open(join(work, 'append.db'));
    for (let i = 0; i < 10; i++) buf.append(batch);
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 3000) {
      buf.append(batch);
      n += batch.length;
    }
    appendRate = n / ((performance.now() - t0) / 1000);
    buf.close();
    console.log(`buffer append: ${Math.round(appendRate)} entries/s (batches of 500, WAL + synchronous=FULL, ~${JSON.stringify(batch[0]).length} B/entry)`);
    }

    // 2. end to end
    const dir = join(work, 'e2e');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(dir);
    // keepToken: a later start in the same state dir uses the token the agent stored (the
    // first hello swapped the issued one for a rotated token)
    const connect = async (server, { keepToken = false } = {}) => {
      if (!keepToken) await writeToken(dir, server.token);
      // BENCH_AGENT_TAIL_MIB: the buffer's in-memory tail budget (BufferOptions.tailMaxBytes) for A/B runs
      const tailMib = process.env.BENCH_AGENT_TAIL_MIB;
      const bufferOptions = tailMib === undefined ? {} : { bufferOptions: { tailMaxBytes: Number(tailMib) * 1024 * 1024 } };
      const agent = new Agent({ stateDir: dir, serverUrl: server.url, hostId: server.hostId, allowInsecure: true, logger: createLogger({ level: 'warn' }), metricsIntervalMs: 0, statusFile: false, ...bufferOptions });
      agent.start();
      try {
        await agent.waitForState('Active', 15000);
        return agent;
      } catch (err) {
        await agent.stop();
        throw err;
      }
    };
    let server;
    let agent;
    try {
      server = await startReferenceServer(work, cleanup);
      agent = await connect(server);
    } catch (err) {
      console.log(`reference server unusable (${err.message}); using the minimal acking server`);
      if (server) await server.stop();
      rmSync(join(dir, 'buffer.db'), { force: true });
      server = await startAckingServer(cleanup);
      agent = await connect(server);
    }
    const total = 200_000;
    const ingestBatch = Array.from({ length: 1000 }, (_, i) => entry(i));
    // Wall and CPU time inside the buffer's append and ack (the agent's module instance: the
    // same file URL), to tell the commit's fsync wait from the CPU work.
    const inside = { on: false, append: { wallMs: 0, cpuUs: 0 }, ack: { wallMs: 0, cpuUs: 0 } };
    for (const name of ['append', 'ack']) {
      const orig = DurableBuffer.prototype[name];
      DurableBuffer.prototype[name] = function (...a) {
        if (!inside.on) return orig.apply(this, a);
        const w0 = performance.now();
        const c0 = process.cpuUsage();
        try {
          return orig.apply(this, a);
        } finally {
          const c = process.cpuUsage(c0);
          inside[name].cpuUs += c.user + c.system;
          inside[name].wallMs += performance.now() - w0;
        }
      };
    }
    // the main thread's time waiting on a run queue (ready, no core free), from /proc/self/schedstat (ns)
    const runqueueNs = () => {
      try {
        return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]);
      } catch {
        return NaN;
      }
    };
    const cpu = { agentRunqueueNs: 0, agentBusyMs: 0, agentWallMs: 0, agentUs: 0, e2eServerTicks: 0, aloneServerTicks: 0, e2eEntries: 0, aloneEntries: 0 };
    const serverTicks = () => (server.pid ? cpuTicks(server.pid) : 0);
    const reads = { tail: 0, sqlite: 0 };
    const e2eRun = async () => {
      const r0 = { ...agent.buffer.readCounts };
      const c0 = process.cpuUsage();
      const s0 = serverTicks();
      const l0 = performance.eventLoopUtilization();
      inside.on = true;
      const q0 = runqueueNs();
      const e0 = performance.now();
      // Like a source: append a chunk, then back to the event loop (the sender runs in
      // between). Before 2026-12-03 this loop yielded only every 20 chunks, so ingest and
      // sending hardly overlapped; BENCH_AGENT_YIELD_EVERY=20 measures that way.
      const every = Number(process.env.BENCH_AGENT_YIELD_EVERY ?? 1);
      for (let i = 0, k = 0; i < total; i += 1000, k++) {
        agent.ingest(ingestBatch);
        if (k % every === 0) await new Promise((r) => setImmediate(r));
      }
      const lastSeq = agent.status().next_seq - 1;
      await agent.waitForAck(lastSeq, 120_000);
      const rate = total / ((performance.now() - e0) / 1000);
      inside.on = false;
      cpu.agentRunqueueNs += runqueueNs() - q0;
      const c1 = process.cpuUsage(c0);
      const l1 = performance.eventLoopUtilization(l0);
      cpu.agentBusyMs += l1.active;
      cpu.agentWallMs += l1.active + l1.idle;
      cpu.agentUs += c1.user + c1.system;
      cpu.e2eServerTicks += serverTicks() - s0;
      cpu.e2eEntries += total;
      reads.tail += agent.buffer.readCounts.tail - r0.tail;
      reads.sqlite += agent.buffer.readCounts.sqlite - r0.sqlite;
      return rate;
    };
    const aloneRun = async (maxBytes) => {
      if (server.kind !== 'reference server') return 0;
      const s0 = serverTicks();
      const rate = await serverAlone(server, ingestBatch, total, maxBytes);
      if (maxBytes === undefined) {
        cpu.aloneServerTicks += serverTicks() - s0;
        cpu.aloneEntries += total;
      }
      return rate;
    };
    const { DEFAULT_BATCH_MAX_BYTES } = await import(dist('agent/buffer/buffer.js'));
    const samples = { alone: [], aloneAgentFrames: [], e2e: [] };
    const rssOnly = process.env.BENCH_AGENT_RSS_ONLY === '1'; // part 3 alone (RSS comparisons)
    // Three rounds, so that e2e and each server-alone kind have the same number of samples: the
    // best of three noisy samples is higher than the best of two (until 2026-12-07 e2e had two
    // and server alone three, one of them taken in the drain's rounds; DECISIONS P21).
    for (let round = 0; round < (rssOnly ? 0 : 3); round++) {
      samples.alone.push(await aloneRun());
      samples.aloneAgentFrames.push(await aloneRun(DEFAULT_BATCH_MAX_BYTES));
      samples.e2e.push(await e2eRun());
    }
    const e2eRate = Math.max(0, ...samples.e2e);
    await agent.stop();
    // 2b. Backlog drain: the buffer already holds `total` entries (written while no agent ran, as
    // after a server outage), then the agent starts: buffer → reference server → acked, with no
    // ingest running beside it. Timed from the agent's start to the ack of the last entry (the
    // hello included); the buffer is fresh from disk, so its in-memory tail is empty and every
    // entry is read back from SQLite. Compared with the server-alone samples above.
    const { openHealing, markCleanStop } = await import(dist('agent/buffer/heal.js'));
    const drain = { samples: [], agentUs: 0, serverTicks: 0, entries: 0 };
    const drainRun = async () => {
      const { buffer } = openHealing(dir);
      for (let i = 0; i < total; i += 1000) buffer.append(ingestBatch);
      const lastSeq = buffer.nextSeq - 1;
      markCleanStop(dir, buffer.nextSeq);
      buffer.close();
      const c0 = process.cpuUsage();
      const s0 = serverTicks();
      const t0 = performance.now();
      const a = await connect(server, { keepToken: true });
      try {
        await a.waitForAck(lastSeq, 120_000);
      } finally {
        const rate = total / ((performance.now() - t0) / 1000);
        const c1 = process.cpuUsage(c0);
        drain.agentUs += c1.user + c1.system;
        drain.serverTicks += serverTicks() - s0;
        drain.entries += total;
        drain.samples.push(rate);
        await a.stop();
      }
    };
    for (let round = 0; round < (rssOnly ? 0 : 2); round++) await drainRun();
    const drainRate = Math.max(0, ...drain.samples);
    const aloneRate = Math.max(0, ...samples.alone);
    const aloneAgentFramesRate = Math.max(0, ...samples.aloneAgentFrames);
    if (drainRate > 0) console.log(`backlog drain (${total} entries already in the buffer, agent started): ${Math.round(drainRate)} entries/s (runs: ${drain.samples.map(Math.round).join(', ')}); ÷ server alone = ${(drainRate / aloneRate).toFixed(2)}, ÷ server alone with the agent's frames = ${(drainRate / aloneAgentFramesRate).toFixed(2)}`);
    console.log(`end to end (${server.kind}): ${Math.round(e2eRate)} entries/s (${total} entries ingested durably, sent, acked; runs: ${samples.e2e.map(Math.round).join(', ')})`);
    if (aloneRate > 0) console.log(`server alone (same server, bare client, ready frames of 1000, window 4): ${Math.round(aloneRate)} entries/s (runs: ${samples.alone.map(Math.round).join(', ')}); e2e / server alone = ${(e2eRate / aloneRate).toFixed(2)}`);
    if (aloneAgentFramesRate > 0) console.log(`server alone, frames cut as the agent cuts them (at most ${DEFAULT_BATCH_MAX_BYTES} B of entries): ${Math.round(aloneAgentFramesRate)} entries/s (runs: ${samples.aloneAgentFrames.map(Math.round).join(', ')}); e2e / that = ${(e2eRate / aloneAgentFramesRate).toFixed(2)}`);
    // /proc ticks are 10 ms; µs per entry
    const perEntry = (us, n) => (n > 0 ? round(us / n, 2) : null);
    const cpuKeys = {
      agent_cpu_us_per_entry: perEntry(cpu.agentUs, cpu.e2eEntries),
      // the agent's event loop busy (running, or blocked in a commit's fsync) per entry, and as a share of the e2e time
      agent_busy_us_per_entry: perEntry(cpu.agentBusyMs * 1000, cpu.e2eEntries),
      agent_event_loop_utilization: cpu.agentWallMs > 0 ? round(cpu.agentBusyMs / cpu.agentWallMs) : null,
      // inside buffer.append (validation excluded: that is the storage guard's) and buffer.ack, µs per entry:
      // wall, and the part not on the CPU (the commit's fsync, or waiting for a core)
      agent_append_wall_us_per_entry: perEntry(inside.append.wallMs * 1000, cpu.e2eEntries),
      agent_append_off_cpu_us_per_entry: perEntry(Math.max(0, inside.append.wallMs * 1000 - inside.append.cpuUs), cpu.e2eEntries),
      agent_ack_wall_us_per_entry: perEntry(inside.ack.wallMs * 1000, cpu.e2eEntries),
      // of the agent thread's off-CPU time, the part spent ready but waiting for a core (a loaded machine)
      agent_runqueue_wait_us_per_entry: Number.isFinite(cpu.agentRunqueueNs) ? perEntry(cpu.agentRunqueueNs / 1000, cpu.e2eEntries) : null,
      server_cpu_us_per_entry_e2e: perEntry(cpu.e2eServerTicks * 10_000, cpu.e2eEntries),
      server_cpu_us_per_entry_alone: perEntry(cpu.aloneServerTicks * 10_000, cpu.aloneEntries),
      // of the entries the sender read in the e2e runs, the share served by the buffer's in-memory tail (the rest: SQLite)
      agent_tail_read_share: reads.tail + reads.sqlite > 0 ? round(reads.tail / (reads.tail + reads.sqlite)) : null,
      // 2b: a backlog already in the buffer shipped and acked (no ingest beside it)
      drain_entries_per_s: drainRate > 0 ? Math.round(drainRate) : null,
      drain_ratio: drainRate > 0 && aloneRate > 0 ? round(drainRate / aloneRate) : null,
      drain_ratio_agent_frames: drainRate > 0 && aloneAgentFramesRate > 0 ? round(drainRate / aloneAgentFramesRate) : null,
      drain_agent_cpu_us_per_entry: perEntry(drain.agentUs, drain.entries),
      drain_server_cpu_us_per_entry: perEntry(drain.serverTicks * 10_000, drain.entries),
    };
    if (cpu.e2eEntries > 0) console.log(`CPU per entry: agent ${cpuKeys.agent_cpu_us_per_entry} µs (e2e; event loop busy ${cpuKeys.agent_busy_us_per_entry} µs per entry, utilization ${cpuKeys.agent_event_loop_utilization}; in buffer.append ${cpuKeys.agent_append_wall_us_per_entry} µs of which ${cpuKeys.agent_append_off_cpu_us_per_entry} off the CPU, in buffer.ack ${cpuKeys.agent_ack_wall_us_per_entry} µs; waiting for a core ${cpuKeys.agent_runqueue_wait_us_per_entry} µs; read from the in-memory tail: ${cpuKeys.agent_tail_read_share}); server ${cpuKeys.server_cpu_us_per_entry_e2e} µs (e2e), ${cpuKeys.server_cpu_us_per_entry_alone} µs (alone); load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    if (e2eOnly) {
      console.log(JSON.stringify({ bench: 'agent', e2e_entries_per_s: Math.round(e2eRate), server_alone_entries_per_s: Math.round(aloneRate), e2e_ratio: round(e2eRate / aloneRate), server_alone_agent_frames_entries_per_s: Math.round(aloneAgentFramesRate), e2e_ratio_agent_frames: aloneAgentFramesRate > 0 ? round(e2eRate / aloneAgentFramesRate) : null, ...cpuKeys }));
      return;
    }

    // 3. RSS and idle CPU of `node dist/agent/cli.js run`
    const runDir = join(work, 'run');
    mkdirSync(runDir);
    let runToken = server.token;
    if (server.kind === 'reference server') {
      const issued = JSON.parse(spawnSync(process.execPath, [dist('server/cli.js'), 'agent', 'issue', '--host', 'bench-run', '--json', '--db', server.db], { encoding: 'utf8' }).stdout);
      runToken = issued.token;
      const en = spawnSync(process.execPath, [dist('agent/cli.js'), 'enroll', '--server', server.url, '--token', runToken, '--host-id', issued.host_id, '--state-dir', runDir, '--allow-insecure'], { encoding: 'utf8' });
      if (en.status !== 0) throw new Error(`enroll failed: ${en.stderr}`);
    } else {
      await writeToken(runDir, runToken);
      await writeHostId(runDir, server.hostId);
      await writeAgentSettings(runDir, { server_url: server.url, allow_insecure: true });
    }
    const child = spawn(process.execPath, [dist('agent/cli.js'), 'run', '--state-dir', runDir, '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
    cleanup.push(() => child.kill('SIGKILL'));
    for (let i = 0; i < 200; i++) {
      await sleep(50);
      try {
        if (JSON.parse(readFileSync(join(runDir, 'status.json'), 'utf8')).state === 'Active') break;
      } catch {
        // not written yet: poll again
      }
    }
    await sleep(5000); // let start-up work (and its first GC) settle
    const c0 = cpuTicks(child.pid);
    const w0 = performance.now();
    await sleep(20_000);
    const cpuS = (cpuTicks(child.pid) - c0) / 100;
    const idleCpu = (cpuS / ((performance.now() - w0) / 1000)) * 100;
    const rss = rssBytes(child.pid);
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
    console.log(`cortex-agent run (Active, idle): RSS ${(rss / 1048576).toFixed(1)} MiB, CPU ${idleCpu.toFixed(3)}% of a core over 20 s`);

    // baseline: a bare node process
    const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await sleep(1000);
    const bareRss = rssBytes(bare.pid);
    bare.kill('SIGKILL');
    console.log(`baseline bare node process: RSS ${(bareRss / 1048576).toFixed(1)} MiB`);

    const result = {
      bench: 'agent',
      buffer_append_entries_per_s: Math.round(appendRate),
      buffer_append_target_ratio: round(appendRate / 100_000),
      e2e_entries_per_s: Math.round(e2eRate),
      e2e_server: server.kind,
      server_alone_entries_per_s: Math.round(aloneRate),
      e2e_ratio: aloneRate > 0 ? round(e2eRate / aloneRate) : null,
      server_alone_agent_frames_entries_per_s: Math.round(aloneAgentFramesRate),
      e2e_ratio_agent_frames: aloneAgentFramesRate > 0 ? round(e2eRate / aloneAgentFramesRate) : null,
      ...cpuKeys,
      rss_bytes: rss,
      // in MiB (2^20 bytes), the unit issue 20 states its figures in (59.8 MiB against 39.4 for bare node)
      rss_mib: +(rss / 1048576).toFixed(1),
      baseline_node_rss_mib: +(bareRss / 1048576).toFixed(1),
      rss_target_ratio: round(rss / (80 * 1048576)),
      baseline_node_rss_bytes: bareRss,
      rss_ratio_to_bare_node: round(rss / bareRss),
      idle_cpu_percent: round(idleCpu, 3),
    };
    console.log(JSON.stringify(result));
  } finally {
    for (const c of cleanup.reverse()) {
      try {
        await c();
      } catch {
        // cleanup is best effort
      }
    }
    rmSync(work, { recursive: true, force: true });
  }
}

async function startReferenceServer(work, cleanup) {
  const port = await freePort();
  const db = join(work, 'server.db');
  const issued = spawnSync(process.execPath, [dist('server/cli.js'), 'agent', 'issue', '--host', 'bench', '--json', '--db', db], { encoding: 'utf8', timeout: 20000 });
  if (issued.status !== 0) throw new Error(`agent issue failed: ${issued.stderr.slice(0, 200)}`);
  const { host_id, token } = JSON.parse(issued.stdout);
  const prof = process.env.BENCH_SERVER_PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_SERVER_PROF_DIR] : [];
  const child = spawn(process.execPath, [...prof, dist('server/cli.js'), 'serve', '--db', db, '--listen', `127.0.0.1:${port}`, '--agent-rate', '100000000'], { stdio: ['ignore', 'ignore', 'ignore'] });
  // a profiled server must exit (SIGTERM) to write its profile
  const stop = () => child.kill(prof.length > 0 ? 'SIGTERM' : 'SIGKILL');
  cleanup.push(stop);
  for (let i = 0; i < 100; i++) {
    await sleep(100);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (r.ok) return { kind: 'reference server', url: `ws://127.0.0.1:${port}/ws/agent`, hostId: host_id, token, db, stop, pid: child.pid };
    } catch {
      // not listening yet: poll again
    }
    if (child.exitCode !== null) break;
  }
  throw new Error('serve did not become healthy');
}

/**
 * The server alone: a bare client for another host sends `total` entries as ready logs.push
 * frames (built before the clock starts) of 1000 entries (the agent's batch size in entries)
 * with 4 in flight, and waits for every ack. Entries/s. With `maxBytes`, each frame holds as
 * many entries as the agent's readBatch puts in one (its bytes plus one per separator within
 * maxBytes: frames under 128 KiB, ~610 of these entries), the frames the agent sends.
 */
async function serverAlone(server, batch, total, maxBytes) {
  const { connect } = await import('./_wire.mjs');
  if (!server.alone) {
    const issued = spawnSync(process.execPath, [dist('server/cli.js'), 'agent', 'issue', '--host', `bench-alone`, '--json', '--db', server.db], { encoding: 'utf8', timeout: 20000 });
    if (issued.status !== 0) throw new Error(`agent issue failed: ${issued.stderr.slice(0, 200)}`);
    const { host_id, token } = JSON.parse(issued.stdout);
    server.alone = { host_id, token, hostname: 'bench-alone' };
  }
  // Frames as bytes built before the clock, sent with ws's all-zero mask (ws then skips the
  // masking copy; the server still unmasks): the load client's own CPU stays off the two cores
  // the server is measured on, as in bench ingest (DECISIONS P12).
  const conn = await connect(server.url, server.alone, { zeroMask: true });
  if (conn.rotated) server.alone.token = conn.rotated;
  const texts = batch.map((e) => JSON.stringify(e).slice(1)); // '"ts":…}' — seq goes in front
  const frames = [];
  let seq = conn.accepted + 1;
  const last = seq + total - 1;
  for (let id = 1; seq <= last; id++) {
    const parts = [];
    let bytes = 0;
    for (let i = 0; i < batch.length && seq + i <= last; i++) {
      const text = `{"seq":${seq + i},${texts[(seq + i) % batch.length]}`;
      if (maxBytes !== undefined && parts.length > 0 && bytes + parts.length + text.length > maxBytes) break;
      parts.push(text);
      bytes += text.length;
    }
    frames.push(Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"logs.push","params":{"seq_start":${seq},"entries":[${parts.join(',')}]}}`));
    seq += parts.length;
  }
  const WINDOW = 4;
  const t0 = performance.now();
  await new Promise((resolve, reject) => {
    let sent = 0;
    let acked = 0;
    const pump = () => {
      while (sent < frames.length && sent - acked < WINDOW) conn.ws.send(frames[sent++], { binary: false }); // a text frame, as an agent sends
    };
    // a refused frame closes the connection: fail the run instead of waiting for acks forever
    conn.ws.once('close', (code, reason) => reject(new Error(`server alone: the server closed the connection (${code} ${String(reason)}) after ${acked} of ${frames.length} frames were acked`)));
    conn.ws.on('message', (d) => {
      const m = JSON.parse(String(d));
      if (m.id === undefined) return; // a notification
      if (m.error) return reject(new Error(JSON.stringify(m.error)));
      if (++acked === frames.length) resolve();
      else pump();
    });
    pump();
  });
  const rate = total / ((performance.now() - t0) / 1000);
  await new Promise((r) => {
    conn.ws.once('close', r);
    conn.ws.close(1000, `final_seq=${seq - 1}`);
  });
  return rate;
}

async function startAckingServer(cleanup) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--acking-server'], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanup.push(() => child.kill('SIGKILL'));
  const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).split(' ')[1]))));
  return { stop: () => child.kill('SIGKILL'), kind: 'minimal acking ws server (bench/agent.mjs --acking-server)', url: `ws://127.0.0.1:${port}/ws/agent`, hostId: randomUUID(), token: 'bench-token-' + 'x'.repeat(32) };
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

function cpuTicks(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const parts = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return Number(parts[11]) + Number(parts[12]); // utime + stime (clock ticks, 100/s)
}

function rssBytes(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

function round(x, d = 2) {
  return Math.round(x * 10 ** d) / 10 ** d;
}
