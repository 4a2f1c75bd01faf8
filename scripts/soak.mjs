#!/usr/bin/env node
// Soak: a bounded run of N minutes against the real server (dist/server/cli.js) with real
// agent processes (test/support/agent-runner.mjs: the agent library with the file source).
//
//   npm run soak -- --minutes N [--agents 20] [--rate 100] [--file-rate 200] [--dir DIR] [--keep]
//
// Every agent streams generated entries (`gen k`, --rate per second) and tails one shared
// log file that a writer appends to (--file-rate lines/s) and rotates by rename every
// ~30 s. Every ~20-40 s one disruption happens in turn: a server SIGKILL + restart, a
// server SIGTERM + restart, an agent SIGKILL + restart, a token rotation (`agent rotate`).
// Probes go through the admin API every 10 s. Every 10 s it prints entries in/out and
// memory (server RSS, agents' RSS). After N minutes it stops the writer and the
// generators, waits (bounded) for the buffers to drain, stops everything and verifies,
// for every host: seqs 1..max exactly once, `gen 1..produced` exactly once, `line
// 1..written` exactly once, and that no token appears in any output. Exit 0 when all hold.
// It always stops by itself: setup (bounded), then N minutes, then at most 3 minutes of
// drain and verification; a timer kills everything past that.

import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SERVER_CLI = join(ROOT, 'dist/server/cli.js');
const AGENT_CLI = join(ROOT, 'dist/agent/cli.js');
const RUNNER = join(ROOT, 'test/support/agent-runner.mjs');

// ---- options ----------------------------------------------------------------------------
function parse(argv) {
  const o = { minutes: 5, agents: 20, rate: 100, fileRate: 200, dir: null, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      const x = argv[++i];
      if (x === undefined) usage(`${a} needs a value`);
      return x;
    };
    if (a === '--minutes') o.minutes = Number(v());
    else if (a === '--agents') o.agents = Number(v());
    else if (a === '--rate') o.rate = Number(v());
    else if (a === '--file-rate') o.fileRate = Number(v());
    else if (a === '--dir') o.dir = resolve(v());
    else if (a === '--keep') o.keep = true;
    else if (a === '--help' || a === '-h') usage(null);
    else usage(`unknown option ${a}`);
  }
  if (!(o.minutes > 0 && o.minutes <= 24 * 60)) usage('--minutes must be in (0, 1440]');
  if (!(Number.isInteger(o.agents) && o.agents >= 1 && o.agents <= 200)) usage('--agents must be 1..200');
  if (!(o.rate >= 0 && o.fileRate >= 0)) usage('--rate/--file-rate must be >= 0');
  return o;
}
function usage(err) {
  const text = 'Usage: npm run soak -- --minutes N [--agents 20] [--rate 100] [--file-rate 200] [--dir DIR] [--keep]\n';
  if (err) {
    process.stderr.write(`soak: ${err}\n${text}`);
    process.exit(2);
  }
  process.stdout.write(text);
  process.exit(0);
}
const opt = parse(process.argv.slice(2));
for (const f of [SERVER_CLI, AGENT_CLI]) {
  if (!existsSync(f)) {
    process.stderr.write(`soak: ${f} is missing; run "npm run build" first\n`);
    process.exit(1);
  }
}

// ---- bookkeeping ------------------------------------------------------------------------
const captured = [];
const tokens = new Set();
const t0 = Date.now();
// The N minutes start once every agent is enrolled and running (set in main()).
let deadline = t0 + opt.minutes * 60_000;
let hardStop = deadline + 3 * 60_000 + 10 * 60_000;
const dir = opt.dir ?? mkdtempSync(join(tmpdir(), 'cortex-soak-'));
mkdirSync(dir, { recursive: true });
const db = join(dir, 'server.db');
const logPath = join(dir, 'app.log');
const counters = { server_sigkill: 0, server_sigterm: 0, agent_sigkill: 0, token_rotations: 0, file_rotations: 0, probes: {}, lines_written: 0 };
const memory = [];
const log = (msg) => process.stdout.write(`[soak ${((Date.now() - t0) / 1000).toFixed(0).padStart(5)}s] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rss = (pid) => {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
};
const MiB = (b) => (b / 1048576).toFixed(1);

// Safety net: whatever happens, the process ends by hardStop (+30 s); re-armed after setup.
let killTimer = null;
function armKillTimer() {
  if (killTimer) clearTimeout(killTimer);
  killTimer = setTimeout(() => {
    process.stderr.write('soak: hard stop reached; killing everything\n');
    for (const c of children) c.kill('SIGKILL');
    process.exit(1);
  }, hardStop - Date.now() + 30_000);
  killTimer.unref();
}
armKillTimer();
const children = new Set();

function track(child, name) {
  children.add(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d.toString()));
  child.stderr?.on('data', (d) => {
    err += d.toString();
    if (err.length > 4 * 1048576) {
      captured.push(err);
      err = '';
    }
  });
  const exited = new Promise((r) => child.once('exit', (code, sig) => r(code ?? sig)));
  child.once('exit', () => {
    children.delete(child);
    captured.push(name === 'runner' ? '' : out, err);
  });
  return { exited, out: () => out, err: () => err };
}

function cli(args, resultHasToken = false) {
  const r = spawnSync(process.execPath, [SERVER_CLI, ...args, '--db', db], { cwd: ROOT, encoding: 'utf8' });
  captured.push(resultHasToken ? '' : r.stdout, r.stderr);
  return r;
}

// ---- server -------------------------------------------------------------------------------
let server = null;
let port = 0;
async function startServer() {
  const child = spawn(process.execPath, [SERVER_CLI, 'serve', '--listen', `127.0.0.1:${port}`, '--db', db, '--config', join(dir, 'server.json'), '--ping-interval-ms', '2000', '--shutdown-drain-secs', '2'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const t = track(child, 'server');
  for (let i = 0; i < 300; i++) {
    const m = /"msg":"listening"[^\n]*"url":"ws:\/\/127\.0\.0\.1:(\d+)/.exec(t.err()) ?? /"url":"ws:\/\/127\.0\.0\.1:(\d+)[^\n]*"msg":"listening"/.exec(t.err());
    if (m) {
      port = Number(m[1]);
      server = { child, ...t };
      return server;
    }
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`server did not start: ${t.err().slice(-2000)}`);
}

// ---- agents -------------------------------------------------------------------------------
const agents = [];
function startRunner(a, extra = {}) {
  const child = spawn(process.execPath, [RUNNER, JSON.stringify({ stateDir: a.dir, total: 1e12, rate: opt.rate, chunk: 50, sources: true, pollMs: 100, pingWatchdogMs: 8000, backoffBaseMs: 200, backoffCapMs: 5000, progressMs: 1000, logLevel: 'warn', ...extra })], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const t = track(child, 'runner');
  a.proc = { child, ...t };
  a.last = null;
  let partial = '';
  child.stdout.on('data', (d) => {
    partial += d.toString();
    const lines = partial.split('\n');
    partial = lines.pop();
    for (const l of lines) {
      try {
        const e = JSON.parse(l);
        if (e.ev === 'progress') a.last = e;
        if (e.ev === 'done') a.done = e;
      } catch {
        // not ours
      }
    }
  });
}

function rememberToken(a) {
  try {
    const t = readFileSync(join(a.dir, 'token'), 'utf8').trim();
    if (t) tokens.add(t);
  } catch {
    // none yet
  }
}

// ---- file writer with rename rotation --------------------------------------------------------
let fd = null;
let writer = null;
function startWriter() {
  fd = openSync(logPath, 'a');
  let k = 0;
  const start = Date.now();
  let lastRotate = start;
  writer = setInterval(() => {
    const due = Math.floor(((Date.now() - start) / 1000) * opt.fileRate);
    let text = '';
    while (k < due) text += `line ${++k}\n`;
    if (text) writeSync(fd, text);
    counters.lines_written = k;
    if (Date.now() - lastRotate > 25_000 + Math.random() * 10_000) {
      lastRotate = Date.now();
      counters.file_rotations++;
      renameSync(logPath, `${logPath}.${counters.file_rotations}`);
      closeSync(fd);
      fd = openSync(logPath, 'a');
    }
  }, 50);
}
function stopWriter() {
  clearInterval(writer);
  if (fd !== null) closeSync(fd);
  fd = null;
}

// ---- probes -------------------------------------------------------------------------------
async function probe() {
  const a = agents[Math.floor(Math.random() * agents.length)];
  let key;
  try {
    const r = await fetch(`http://127.0.0.1:${port}/admin/agents/${a.host_id}/probe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ probe: 'sys.uptime', args: {}, timeout_ms: 2000 }),
      signal: AbortSignal.timeout(5000),
    });
    const body = await r.text();
    captured.push(body);
    let code = '';
    try {
      code = JSON.parse(body)?.error?.code ?? '';
    } catch {
      // not JSON
    }
    key = `${r.status}${code ? ` ${code}` : ''}`;
  } catch (err) {
    key = `failed: ${err.name}`;
  }
  counters.probes[key] = (counters.probes[key] ?? 0) + 1;
}

// ---- disruptions --------------------------------------------------------------------------
let turn = 0;
async function disrupt() {
  const what = ['server_sigkill', 'agent_sigkill', 'token_rotation', 'server_sigterm'][turn++ % 4];
  if (what === 'server_sigkill' || what === 'server_sigterm') {
    const old = server;
    old.child.kill(what === 'server_sigkill' ? 'SIGKILL' : 'SIGTERM');
    const t = setTimeout(() => old.child.kill('SIGKILL'), 20_000);
    await old.exited;
    clearTimeout(t);
    counters[what]++;
    await startServer();
    log(`${what === 'server_sigkill' ? 'SIGKILL' : 'SIGTERM'} server, restarted (pid ${server.child.pid})`);
  } else if (what === 'agent_sigkill') {
    const a = agents[Math.floor(Math.random() * agents.length)];
    a.proc.child.kill('SIGKILL');
    await a.proc.exited;
    counters.agent_sigkill++;
    startRunner(a);
    log(`SIGKILL agent ${a.name}, restarted`);
  } else {
    const a = agents[Math.floor(Math.random() * agents.length)];
    const r = cli(['agent', 'rotate', a.host_id]);
    counters.token_rotations++;
    log(`token rotation for ${a.name}: exit ${r.status}`);
  }
}

// ---- verification -------------------------------------------------------------------------
function verify() {
  const rdb = new Database(db, { readonly: true, fileMustExist: true });
  const results = [];
  try {
    for (const a of agents) {
      const rows = rdb.prepare('SELECT seq, message FROM logs WHERE host_id = ? ORDER BY seq').all(a.host_id);
      const seqs = new Set();
      const gen = new Map();
      const lines = new Map();
      let maxSeq = 0;
      for (const r of rows) {
        const s = Number(r.seq);
        seqs.add(s);
        maxSeq = Math.max(maxSeq, s);
        let m = /^gen (\d+)$/.exec(r.message);
        if (m) gen.set(Number(m[1]), (gen.get(Number(m[1])) ?? 0) + 1);
        m = /^line (\d+)$/.exec(r.message);
        if (m) lines.set(Number(m[1]), (lines.get(Number(m[1])) ?? 0) + 1);
      }
      const count = (map, n) => {
        let missing = 0;
        let dups = 0;
        for (let k = 1; k <= n; k++) {
          const c = map.get(k) ?? 0;
          if (c === 0) missing++;
          if (c > 1) dups += c - 1;
        }
        return { missing, dups };
      };
      let seqMissing = 0;
      for (let s = 1; s <= maxSeq; s++) if (!seqs.has(s)) seqMissing++;
      const g = count(gen, a.produced);
      const l = count(lines, counters.lines_written);
      results.push({ name: a.name, rows: rows.length, max_seq: maxSeq, seq_missing: seqMissing, gen_produced: a.produced, gen_missing: g.missing, gen_dups: g.dups, lines_missing: l.missing, lines_dups: l.dups });
    }
  } finally {
    rdb.close();
  }
  return results;
}

// ---- main ---------------------------------------------------------------------------------
async function main() {
  log(`dir ${dir}; ${opt.agents} agents × ${opt.rate} entries/s + shared file at ${opt.fileRate} lines/s; ${opt.minutes} min`);
  writeFileSync(logPath, '');
  writeFileSync(
    join(dir, 'server.json'),
    JSON.stringify({ default_agent_config: { heartbeat_interval_secs: 10, max_batch_entries: 1000, flush_interval_ms: 200, metrics_interval_secs: 30, probe_concurrency: 4, log_sources: [{ kind: 'file', path: logPath }] } }),
  );
  await startServer();
  for (let i = 0; i < opt.agents; i++) {
    const r = cli(['agent', 'issue', '--host', `soak-${i}`, '--json'], true);
    if (r.status !== 0) throw new Error(`agent issue failed: ${r.stderr}`);
    const issued = JSON.parse(r.stdout);
    tokens.add(issued.token);
    const a = { name: `soak-${i}`, host_id: issued.host_id, dir: join(dir, `agent-${i}`), produced: 0 };
    const e = spawnSync(process.execPath, [AGENT_CLI, 'enroll', '--server', `ws://127.0.0.1:${port}/ws/agent`, `--token=${issued.token}`, '--host-id', issued.host_id, '--state-dir', a.dir, '--allow-insecure', '--json'], { cwd: ROOT, encoding: 'utf8' });
    captured.push(e.stdout, e.stderr);
    if (e.status !== 0) throw new Error(`enroll failed: ${e.stderr}`);
    rememberToken(a);
    agents.push(a);
    startRunner(a);
  }
  startWriter();
  deadline = Date.now() + opt.minutes * 60_000;
  hardStop = deadline + 3 * 60_000;
  armKillTimer();
  log(`running for ${opt.minutes} min (setup took ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  let nextDisrupt = Date.now() + 20_000 + Math.random() * 20_000;
  let nextProbe = Date.now() + 10_000;
  let nextReport = Date.now() + 10_000;
  while (Date.now() < deadline) {
    await sleep(Math.max(50, Math.min(1000, deadline - Date.now())));
    const now = Date.now();
    for (const a of agents) rememberToken(a);
    if (now >= nextDisrupt) {
      await disrupt().catch((err) => log(`disruption failed: ${err.message}`));
      nextDisrupt = Date.now() + 20_000 + Math.random() * 20_000;
    }
    if (now >= nextProbe) {
      void probe();
      nextProbe = now + 10_000;
    }
    if (now >= nextReport) {
      report();
      nextReport = now + 10_000;
    }
  }

  log('time is up: stopping the writer and the generators, draining');
  stopWriter();
  // stop the generators where they are; restart them producing nothing more, so they drain
  await Promise.all(
    agents.map(async (a) => {
      a.proc.child.kill('SIGTERM');
      await Promise.race([a.proc.exited, sleep(10_000)]);
      a.proc.child.kill('SIGKILL');
      await a.proc.exited;
      const b = new Database(join(a.dir, 'buffer.db'), { readonly: true, fileMustExist: true });
      const pos = b.prepare("SELECT position FROM source_positions WHERE source = 'custom:gen'").get();
      b.close();
      a.produced = pos ? Number(JSON.parse(pos.position)) : 0;
      a.done = null;
      startRunner(a, { total: a.produced, rate: 0 });
    }),
  );
  const drainUntil = Math.min(hardStop, Date.now() + 150_000);
  const lastLine = `line ${counters.lines_written}`;
  for (;;) {
    const rdb = new Database(db, { readonly: true, fileMustExist: true });
    const haveLast = agents.filter((a) => rdb.prepare('SELECT 1 FROM logs WHERE host_id = ? AND message = ?').get(a.host_id, lastLine)).length;
    rdb.close();
    const drained = agents.filter((a) => a.done && a.last && a.last.acked === a.last.next_seq - 1).length;
    if ((haveLast === agents.length || counters.lines_written === 0) && drained === agents.length) break;
    if (Date.now() > drainUntil) {
      log(`drain incomplete after 150 s: ${drained}/${agents.length} drained, ${haveLast}/${agents.length} have the last file line`);
      break;
    }
    await sleep(1000);
  }
  report();
  for (const a of agents) {
    rememberToken(a);
    a.proc.child.kill('SIGTERM');
  }
  await Promise.all(agents.map((a) => Promise.race([a.proc.exited, sleep(10_000)])));
  server.child.kill('SIGTERM');
  await Promise.race([server.exited, sleep(20_000)]);
  server.child.kill('SIGKILL');

  const results = verify();
  const sum = (k) => results.reduce((s, r) => s + r[k], 0);
  const lost = sum('seq_missing') + sum('gen_missing') + sum('lines_missing');
  const dups = sum('gen_dups') + sum('lines_dups');
  const leaks = [...tokens].filter((t) => t.length >= 16 && captured.some((c) => c && c.includes(t))).length;
  const mem = (k) => {
    const v = memory.map((m) => m[k]);
    return v.length ? `min ${MiB(Math.min(...v))} / max ${MiB(Math.max(...v))} / last ${MiB(v[v.length - 1])} MiB` : '-';
  };
  const summary = {
    minutes: opt.minutes,
    agents: opt.agents,
    entries_in: sum('gen_produced') + counters.lines_written * agents.length,
    rows_out: sum('rows'),
    lost,
    duplicates: dups,
    token_leaks: leaks,
    ...counters,
  };
  process.stdout.write(`\n== soak summary ==\n${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(`server RSS: ${mem('server')}\nagents RSS (sum): ${mem('agents')}\n`);
  process.stdout.write(`memory over time (s, server MiB, agents MiB):\n${memory.map((m) => `  ${m.t} ${MiB(m.server)} ${MiB(m.agents)}`).join('\n')}\n`);
  for (const r of results) if (r.seq_missing || r.gen_missing || r.gen_dups || r.lines_missing || r.lines_dups) process.stdout.write(`  PROBLEM ${JSON.stringify(r)}\n`);
  const ok = lost === 0 && dups === 0 && leaks === 0;
  process.stdout.write(ok ? 'soak: OK — every entry exactly once, no token in any output\n' : 'soak: FAILED\n');
  if (!opt.keep && ok) rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`soak: files kept in ${dir}\n`);
  return ok ? 0 : 1;
}

function report() {
  let rows = 0;
  try {
    const rdb = new Database(db, { readonly: true, fileMustExist: true });
    rows = rdb.prepare('SELECT COUNT(*) AS n FROM logs').get().n;
    rdb.close();
  } catch {
    // the server may be restarting
  }
  const produced = agents.reduce((s, a) => s + (a.last?.produced ?? 0), 0);
  const acked = agents.reduce((s, a) => s + (a.last?.acked ?? 0), 0);
  const sRss = server ? rss(server.child.pid) : 0;
  const aRss = agents.reduce((s, a) => s + (a.proc ? rss(a.proc.child.pid) : 0), 0);
  memory.push({ t: Math.round((Date.now() - t0) / 1000), server: sRss, agents: aRss });
  const active = agents.filter((a) => a.last?.state === 'Active').length;
  log(
    `in: gen ${produced} + file ${counters.lines_written}×${agents.length} | acked ${acked} | rows ${rows} | active ${active}/${agents.length} | server ${MiB(sRss)} MiB, agents ${MiB(aRss)} MiB | restarts kill ${counters.server_sigkill} term ${counters.server_sigterm} agent ${counters.agent_sigkill} rot ${counters.token_rotations} files ${counters.file_rotations} | probes ${JSON.stringify(counters.probes)}`,
  );
}

main().then(
  (code) => {
    clearTimeout(killTimer);
    process.exit(code);
  },
  (err) => {
    process.stderr.write(`soak: ${err.stack ?? err}\n`);
    for (const c of children) c.kill('SIGKILL');
    process.exit(1);
  },
);
