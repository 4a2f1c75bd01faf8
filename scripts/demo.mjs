#!/usr/bin/env node
// npm run demo — the whole pipeline on this machine, for newcomers.
//
//   node scripts/demo.mjs [--seconds N] [--keep]
//
// Everything runs from the compiled JavaScript in dist/ (npm run demo builds first), as
// child processes, in a temporary folder that is removed at the end:
//   1. cortex-server serve on 127.0.0.1 (a free port) with a temporary SQLite database
//   2. agent issue      → a host_id and a one-time token (the token is never printed)
//   3. agent config     → the host's AgentConfig: tail sample.log (with labels)
//   4. the demo keeps appending lines to sample.log (syslog, JSON and plain lines) and
//      rotates it once midway (rename to sample.log.1, a few more lines into the old file,
//      then a new sample.log) — the agent finishes the old file, then reads the new one
//   5. cortex-agent enroll, then cortex-agent run (the real file source)
//   6. agent tail --follow prints the rows as the server stores them
//   7. probe fs.disk_usage through the admin API; its ProbeOutput is printed
// Ctrl-C (or --seconds N elapsed) stops everything cleanly: the writer, the agent
// (SIGTERM: it closes with final_seq=<n>), the tail, the server (SIGTERM: drain), then
// checks that every written line is stored exactly once and removes the temporary files.
// A second Ctrl-C kills whatever is left at once.

import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SERVER_CLI = join(ROOT, 'dist/server/cli.js');
const AGENT_CLI = join(ROOT, 'dist/agent/cli.js');

const USAGE = `Usage: node scripts/demo.mjs [--seconds N] [--keep]
  --seconds N   stop by itself N seconds after the agent started (default: run until Ctrl-C)
  --keep        keep the temporary folder (database, agent state, sample logs) at the end
`;

let opts;
try {
  opts = parseArgs({ options: { seconds: { type: 'string' }, keep: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } }).values;
} catch (err) {
  process.stderr.write(`demo: ${err.message}\n${USAGE}`);
  process.exit(2);
}
if (opts.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const seconds = opts.seconds === undefined ? null : Number(opts.seconds);
if (seconds !== null && !(Number.isFinite(seconds) && seconds > 0)) {
  process.stderr.write(`demo: --seconds must be a positive number\n${USAGE}`);
  process.exit(2);
}
for (const f of [SERVER_CLI, AGENT_CLI]) {
  if (!existsSync(f)) {
    process.stderr.write(`demo: ${f} is missing; build first (npm run build), or use "npm run demo"\n`);
    process.exit(1);
  }
}

// ---- output -----------------------------------------------------------------------------
const tty = process.stdout.isTTY;
const paint = (code, s) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
const say = (s) => process.stdout.write(`${paint('1;36', 'demo')} ${s}\n`);
const row = (s) => process.stdout.write(`  ${paint('32', '│')} ${s}\n`);
const detail = (s) => process.stdout.write(`  ${paint('2', s)}\n`);

// ---- state ------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'cortex-demo-'));
const db = join(dir, 'server.db');
const stateDir = join(dir, 'agent');
const logPath = join(dir, 'sample.log');
/** Child processes we started: name → {child, exited, stderr tail}. */
const procs = new Map();
let writerTimer = null;
let stopTimer = null;
let written = 0;
let stopping = false;
let forced = false;
let hostId = null;
/** Rows printed by the tail child so far. */
let rowsPrinted = 0;

function start(name, args, { onLine } = {}) {
  // detached: own process group, so a terminal Ctrl-C reaches only the demo, which then
  // stops the children in order (agent before server).
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const tail = [];
  const keep = (line) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
  };
  const lines = (stream, cb) => {
    let buf = '';
    stream.on('data', (d) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      for (const l of parts) cb(l);
    });
  };
  let stdout = '';
  lines(child.stdout, (l) => {
    stdout += `${l}\n`;
    onLine?.(l, 'stdout');
  });
  lines(child.stderr, (l) => {
    keep(l);
    onLine?.(l, 'stderr');
  });
  const exited = new Promise((r) => child.once('exit', (code, signal) => r(code ?? (signal ? `signal ${signal}` : null))));
  const p = { name, child, exited, tail, stdout: () => stdout };
  procs.set(name, p);
  void exited.then(() => procs.delete(name));
  return p;
}

function run(args) {
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

function fail(what, details = '') {
  process.stderr.write(`demo: ${what}\n${details ? `${details.trimEnd()}\n` : ''}`);
  void shutdown(1);
}

// ---- the sample log writer ---------------------------------------------------------------
const APPS = [
  ['web', 4242, (i) => `GET /items/${i % 97} 200 ${3 + (i % 40)}ms`],
  ['sshd', 812, (i) => `Accepted publickey for user${i % 5} from 10.0.0.${i % 250} port ${40000 + i}`],
  ['cron', 1999, () => `(root) CMD (run-parts /etc/cron.hourly)`],
];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function sampleLine(i) {
  const now = new Date();
  switch (i % 5) {
    case 3: // RFC 5424
      return `<11>1 ${now.toISOString()} demo-host billing 3131 ERR - payment ${i} failed: upstream timeout`;
    case 4: // JSON
      return JSON.stringify({ level: 'warn', msg: `queue depth high (${100 + i})`, worker: i % 3 });
    default: {
      // RFC 3164, as syslog writes it to files
      const [app, pid, msg] = APPS[i % APPS.length];
      const ts = `${MONTHS[now.getMonth()]} ${String(now.getDate()).padStart(2, ' ')} ${now.toTimeString().slice(0, 8)}`;
      return `${ts} demo-host ${app}[${pid}]: ${msg(i)} (line ${i})`;
    }
  }
}

let rotated = false;
function writeSome(path, n) {
  for (let k = 0; k < n; k++) appendFileSync(path, `${sampleLine(++written)}\n`);
}

function rotate() {
  rotated = true;
  say(`rotating: ${paint('1', 'sample.log → sample.log.1')} (rename); 2 more lines go to the old file, then a new sample.log`);
  renameSync(logPath, `${logPath}.1`);
  writeSome(`${logPath}.1`, 2); // a writer that has not reopened its file yet
  writeFileSync(logPath, '');
}

/** Rows have reached the server (so the agent knows sample.log: a rotation before that would just look like a new file). */
let flowing = false;

/** When `cortex-agent run` was started (0: not yet). */
let agentStartedAt = 0;

function startWriter(rotateAfterMs) {
  let flowingSince = 0;
  writerTimer = setInterval(() => {
    if (flowing && flowingSince === 0) flowingSince = Date.now();
    if (!rotated && flowingSince > 0 && Date.now() - agentStartedAt >= rotateAfterMs && Date.now() - flowingSince >= 500) rotate();
    writeSome(logPath, 2);
  }, 400);
}

// ---- shutdown -------------------------------------------------------------------------------
async function stopProc(name, signal, timeoutMs) {
  const p = procs.get(name);
  if (!p) return null;
  try {
    p.child.kill(signal);
  } catch {
    return null;
  }
  const t = setTimeout(() => {
    try {
      p.child.kill('SIGKILL');
    } catch {
      // gone
    }
  }, timeoutMs);
  const code = await p.exited;
  clearTimeout(t);
  return code;
}

async function readDb(fn) {
  const { default: Database } = await import('better-sqlite3');
  const r = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return fn(r);
  } finally {
    r.close();
  }
}

async function storedCounts() {
  return readDb((r) => {
    const rows = r.prepare('SELECT message, COUNT(*) AS n FROM logs WHERE host_id = ? GROUP BY message').all(hostId);
    return { distinct: rows.length, total: rows.reduce((a, x) => a + Number(x.n), 0) };
  });
}

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  if (stopTimer) clearTimeout(stopTimer);
  if (writerTimer) clearInterval(writerTimer);
  writerTimer = null;
  let status = code;
  try {
    if (procs.has('agent') && hostId) {
      // let the last lines arrive (at most 5 s), then stop the agent
      const t0 = Date.now();
      while (Date.now() - t0 < 5000) {
        const c = await storedCounts().catch(() => ({ distinct: 0, total: 0 }));
        if (c.distinct >= written) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      say('stopping the agent (SIGTERM: it closes the connection with reason final_seq=<n>)');
      const c = await stopProc('agent', 'SIGTERM', 10_000);
      if (c !== 0) status = status || 1;
      await new Promise((r) => setTimeout(r, 300)); // the server records the close
      const reason = await readDb((r) => r.prepare('SELECT last_disconnect_reason AS reason FROM agents WHERE host_id = ?').get(hostId)?.reason).catch(() => null);
      detail(`agent exited ${c}; the server recorded the close as "${reason ?? '?'}"`);
    }
    if (procs.has('tail') && hostId) {
      // let the tail print what the server stored (at most 3 s)
      const stored = (await storedCounts().catch(() => ({ total: 0 }))).total;
      const t0 = Date.now();
      while (rowsPrinted < stored && Date.now() - t0 < 3000) await new Promise((r) => setTimeout(r, 100));
    }
    await stopProc('tail', 'SIGTERM', 3000);
    if (hostId && existsSync(db)) {
      const c = await storedCounts().catch(() => null);
      if (c) {
        const ok = c.distinct === written && c.total === written;
        say(`${written} lines written across the rotation; ${c.total} rows stored for this host (${c.distinct} distinct) — ${ok ? paint('32', 'every line exactly once') : paint('31', 'MISMATCH')}`);
        if (!ok && !forced && code === 0) status = 1;
      }
    }
    if (procs.has('server')) {
      say('stopping the server (SIGTERM: drains sessions, commits, exits)');
      const c = await stopProc('server', 'SIGTERM', 15_000);
      detail(`server exited ${c}`);
      if (c !== 0) status = status || 1;
    }
  } catch (err) {
    process.stderr.write(`demo: error while stopping: ${err.message}\n`);
    status = status || 1;
  }
  for (const p of procs.values()) {
    try {
      p.child.kill('SIGKILL');
    } catch {
      // gone
    }
  }
  if (opts.keep) say(`kept ${dir}`);
  else {
    rmSync(dir, { recursive: true, force: true });
    say(`removed ${dir}`);
  }
  process.exit(status);
}

process.on('SIGINT', () => {
  if (stopping) {
    forced = true;
    process.stderr.write('demo: second Ctrl-C: killing everything now\n');
    for (const p of procs.values()) {
      try {
        p.child.kill('SIGKILL');
      } catch {
        // gone
      }
    }
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
    process.exit(130);
  }
  process.stdout.write('\n');
  say('Ctrl-C: stopping everything cleanly (press Ctrl-C again to kill at once)');
  void shutdown(0);
});
process.on('SIGTERM', () => void shutdown(0));
process.on('exit', () => {
  for (const p of procs.values()) {
    try {
      p.child.kill('SIGKILL');
    } catch {
      // gone
    }
  }
});

// ---- the demo ---------------------------------------------------------------------------------
async function main() {
  say(`temporary folder ${dir} (removed at the end)`);

  // 1. server
  const server = start('server', [SERVER_CLI, 'serve', '--listen', '127.0.0.1:0', '--db', db]);
  const url = await new Promise((resolveUrl, reject) => {
    const onData = () => {
      for (const l of server.tail) {
        if (!l.startsWith('{')) continue;
        try {
          const rec = JSON.parse(l);
          if (rec.msg === 'listening' && rec.url) return resolveUrl(rec.url);
        } catch {
          // not JSON
        }
      }
    };
    server.child.stderr.on('data', () => setImmediate(onData));
    void server.exited.then((code) => reject(new Error(`the server exited (${code}) before listening:\n${server.tail.join('\n')}`)));
  });
  const http = url.replace(/^ws/, 'http').replace(/\/ws\/agent$/, '');
  say(`server listening on ${paint('1', url)} (database ${db})`);
  if (stopping) return;

  // 2. token
  const issued = run([SERVER_CLI, 'agent', 'issue', '--host', 'demo-host', '--json', '--db', db]);
  if (issued.code !== 0) return fail('agent issue failed', issued.stderr);
  const { host_id: id, token } = JSON.parse(issued.stdout);
  hostId = id;
  say(`issued a one-time enrollment token for host demo-host (host_id ${hostId}; the token is not shown)`);
  detail(`cortex-server agent issue --host demo-host --json --db ${db}`);

  // 3. config
  writeFileSync(logPath, '');
  const config = {
    heartbeat_interval_secs: 30,
    max_batch_entries: 1000,
    flush_interval_ms: 200,
    metrics_interval_secs: 60,
    probe_concurrency: 2,
    log_sources: [{ kind: 'file', path: logPath, labels: { demo: 'true' } }],
  };
  const set = run([SERVER_CLI, 'agent', 'config', hostId, '--set', JSON.stringify(config), '--db', db]);
  if (set.code !== 0) return fail('agent config failed', set.stderr);
  say(`host config: tail ${logPath} with labels {"demo":"true"}`);
  detail(`cortex-server agent config ${hostId} --set '{"log_sources":[{"kind":"file","path":"…/sample.log"}],…}'`);

  // 4. the sample log: rotation midway (or 10 s after the agent started when running until Ctrl-C)
  const rotateAfterMs = seconds === null ? 10_000 : (seconds * 1000) / 2;
  writeSome(logPath, 3);
  startWriter(rotateAfterMs);
  say(`writing sample.log (syslog RFC 3164/5424, JSON and plain lines, 5 per second); one rotation ${Math.round(rotateAfterMs / 1000)} s after the agent starts (once rows flow)`);
  if (stopping) return;

  // 5. enroll and run the agent
  const enrolled = run([AGENT_CLI, 'enroll', '--server', url, '--token', token, '--host-id', hostId, '--state-dir', stateDir, '--allow-insecure', '--json']);
  if (enrolled.code !== 0) return fail('cortex-agent enroll failed', enrolled.stderr.split(token).join('[token]'));
  say(`agent enrolled (state dir ${stateDir}; the rotated token is in ${join(stateDir, 'token')}, mode 0600)`);
  if (stopping) return;
  let active = false;
  start('agent', [AGENT_CLI, 'run', '--state-dir', stateDir, '--allow-insecure', '--source-poll-ms', '100'], {
    onLine(l) {
      if (!l.startsWith('{')) return;
      let rec;
      try {
        rec = JSON.parse(l);
      } catch {
        return;
      }
      if (rec.msg === 'state') {
        detail(`agent: ${rec.from} → ${rec.to}`);
        if (rec.to === 'Active') active = true;
      } else if (/rotated|moved away|log source added|config\.update applied/.test(rec.msg ?? '')) {
        detail(`agent: ${rec.msg}${rec.rotated_to ? ` (${rec.rotated_to})` : ''}`);
      } else if (rec.level >= 50) {
        detail(`agent error: ${rec.msg}`);
      }
    },
  });
  agentStartedAt = Date.now();
  if (seconds !== null) {
    stopTimer = setTimeout(() => {
      say(`${seconds} s elapsed: stopping`);
      void shutdown(0);
    }, seconds * 1000);
  }
  say(`agent running (cortex-agent run --state-dir …); its file source reads sample.log from the start${seconds !== null ? `; stopping in ${seconds} s` : ''}`);
  void procs.get('agent').exited.then((code) => {
    if (!stopping) fail(`the agent exited unexpectedly (${code})`, procs.get('agent')?.tail.join('\n') ?? '');
  });

  // 6. rows as they arrive
  say(`rows stored by the server, as ${paint('1', `cortex-server agent tail ${hostId} --follow`)} prints them:`);
  let firstRow;
  const firstRowSeen = new Promise((r) => (firstRow = r));
  start('tail', [SERVER_CLI, 'agent', 'tail', hostId, '--follow', '--db', db], {
    onLine(l, stream) {
      if (stream !== 'stdout' || l.trim() === '') return;
      rowsPrinted++;
      flowing = true;
      row(l.length > 160 ? `${l.slice(0, 157)}...` : l);
      firstRow();
    },
  });

  // 7. one probe once rows flow
  await Promise.race([firstRowSeen, new Promise((r) => setTimeout(r, 15_000))]);
  if (stopping) return;
  if (!active) detail('(the agent is not Active yet)');
  const probe = run([SERVER_CLI, 'probe', hostId, 'fs.disk_usage', '--args', '{"path":"/"}', '--url', http]);
  say(`probe ${paint('1', 'fs.disk_usage {"path":"/"}')} through the admin API (cortex-server probe ${hostId} fs.disk_usage --args '{"path":"/"}' --url ${http}):`);
  if (probe.code === 0) {
    const out = JSON.parse(probe.stdout);
    for (const l of JSON.stringify(out, null, 2).split('\n')) process.stdout.write(`  ${paint('33', l)}\n`);
    const o = out.output;
    detail(`→ ${o.path}: ${(o.used_bytes / 2 ** 30).toFixed(1)} GiB used of ${(o.total_bytes / 2 ** 30).toFixed(1)} GiB (${o.used_percent}%), answered in ${out.duration_ms} ms`);
  } else {
    process.stdout.write(`  probe failed (exit ${probe.code}): ${probe.stdout}${probe.stderr}\n`);
  }
  if (seconds === null) say('Ctrl-C stops everything cleanly and removes the temporary files');
}

// --seconds counts from the agent's start; setup itself must not hang either.
if (seconds !== null) {
  setTimeout(() => {
    if (agentStartedAt === 0 && !stopping) fail('setup did not finish within 60 s');
  }, 60_000).unref();
}

main().catch((err) => fail(err.message));
