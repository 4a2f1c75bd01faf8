#!/usr/bin/env node
// Side by side with what an operator would pick instead (`npm run bench -- peers`): the same
// file of syslog lines (one host; default 1,000,000, the RFC 3339 form rsyslog writes to
// /var/log/syslog on Debian) shipped, in one run on this machine, by
//   rsyslog: imfile → omrelp → imrelp → omfile (RELP: rsyslog's acknowledged transport), two
//            standalone rsyslogd instances (`rsyslogd -n -f CONF -i PIDFILE`) with their own
//            config, pid file and work dir in a temp folder, on a loopback port; the system
//            rsyslog is never touched;
//   ours:    `cortex-agent run` (a file source) → `cortex-server serve` (SQLite), enrolled the
//            way users do it, per-agent rate limit lifted.
// Each side runs alone (one after the other), all its processes started and idle first; the
// clock starts when the file appears at the watched path (a hard link of one prepared file)
// and stops when the last line is in rsyslog's output file / acked by our server (acks are
// sent after the commit: the rows are in the database). CPU: utime + stime from
// /proc/<pid>/stat of both processes of each side (and any children), over the same window.
//
// rsyslog's main figure uses omrelp windowSize=8192 (--relp-window N) with a LinkedList action
// queue dequeuing batches of 1024: with librelp's default window of 128 unacked messages
// the pipeline waits on acks (a few thousand lines/s here), which is measured too, on a slice
// of 20,000 lines (--default-window-lines N) to keep the run short.
// Options: --lines N (default 1000000), --only rsyslog|ours, --profile (run our two
// processes under `node --cpu-prof` and print where their time went), --cpu-prof DIR (the
// same, keeping the profiles in DIR), --no-install.
// Set-up: rsyslogd and the RELP modules come from the Debian packages rsyslog and
// rsyslog-relp; when absent they are installed with apt-get if this runs as root with apt,
// otherwise the bench names them and exits 1.
// Last line: one JSON object.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, linkSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => join(root, 'dist', p);
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const N = Number(opt('lines', 1_000_000));
const only = opt('only', '');
// --cpu-prof DIR: as --profile, and the .cpuprofile files are kept in DIR (for
// bench/_cpuprofile-summary.mjs with a pattern)
const cpuProfDir = opt('cpu-prof', '');
const profile = args.includes('--profile') || cpuProfDir !== '';
const RELP_WINDOW = Number(opt('relp-window', 8192));
const DEFAULT_WINDOW_LINES = Math.min(N, Number(opt('default-window-lines', 20_000)));
if (!Number.isInteger(N) || N < 1) throw new Error('--lines must be a positive integer');
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x, d = 3) => Number(x.toFixed(d));

const GUARANTEES = {
  ours:
    'durable agent buffer (SQLite WAL, synchronous=FULL: a line is on disk at the agent before it is sent, survives agent crash/restart and server outages of any length); ' +
    'idempotent storage (UNIQUE(host_id, seq): a resend after a lost ack is stored once); ack only after the server commit (WAL, synchronous=NORMAL); per-host order kept',
  rsyslog_relp:
    'RELP acks each message once imrelp has taken it into its in-memory queue (not after omfile wrote it); the sender holds unacked messages in memory (default queues, no disk assistance): ' +
    'a sender crash or restart loses what was queued, and after a lost ack RELP resends, so a line can be written twice; omfile writes without fsync',
};

// --- set-up -------------------------------------------------------------------------
const MODULE_DIRS = ['/usr/lib/x86_64-linux-gnu/rsyslog', '/usr/lib/aarch64-linux-gnu/rsyslog', '/usr/lib/rsyslog', '/usr/lib64/rsyslog'];
function findRsyslog() {
  const bin = ['/usr/sbin/rsyslogd', '/sbin/rsyslogd', '/usr/bin/rsyslogd'].find((p) => existsSync(p));
  const modDir = MODULE_DIRS.find((d) => ['imfile.so', 'omrelp.so', 'imrelp.so'].every((m) => existsSync(join(d, m))));
  return bin && modDir ? { bin, modDir } : undefined;
}
function setUp() {
  let found = findRsyslog();
  if (found) return found;
  const need = 'rsyslog and rsyslog-relp (Debian/Ubuntu: apt-get install -y rsyslog rsyslog-relp)';
  const canApt = process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).status === 0;
  if (!canApt || args.includes('--no-install')) {
    console.error(`peers: rsyslogd with the imfile, omrelp and imrelp modules is not installed; install ${need}${canApt ? '' : ' (not root or no apt-get here, so the bench did not)'}`);
    process.exit(1);
  }
  console.log(`peers: installing ${need}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['install', '-y', 'rsyslog', 'rsyslog-relp'], { stdio: 'inherit', env });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'inherit', env });
    r = spawnSync('apt-get', ['install', '-y', 'rsyslog', 'rsyslog-relp'], { stdio: 'inherit', env });
  }
  found = findRsyslog();
  if (!found) {
    console.error(`peers: apt-get could not install ${need}`);
    process.exit(1);
  }
  return found;
}

// --- helpers ----------------------------------------------------------------------------
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
function canConnect(port) {
  return new Promise((resolve) => {
    const c = connect({ host: '127.0.0.1', port });
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}
/** CPU ticks (user + system, own and waited-for children) of a process and its live descendants. */
function cpuTicks(pid) {
  let total = 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    for (const t of readdirSync(`/proc/${pid}/task`)) {
      for (const c of readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) total += cpuTicks(Number(c));
    }
  } catch {
    // the process is gone: what it used is in its parent's cutime/cstime once waited for
  }
  return total;
}
async function waitFor(what, cond, timeoutMs, child) {
  const t0 = performance.now();
  while (!(await cond())) {
    if (child && child.exitCode !== null) throw new Error(`${what}: process exited (${child.exitCode})${child.stderrText ? `: ${child.stderrText().slice(-500)}` : ''}`);
    if (performance.now() - t0 > timeoutMs) throw new Error(`${what}: timed out after ${timeoutMs} ms`);
    await sleep(20);
  }
}
function start(cmd, argv, cleanup, opts = {}) {
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  child.stdout.on('data', () => {});
  child.stderrText = () => err;
  child.exited = new Promise((r) => child.once('exit', r));
  cleanup.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await child.exited;
    }
  });
  return child;
}
async function stop(child, ms = 15000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), ms);
  await child.exited;
  clearTimeout(t);
}
/** Counts the newlines appended to a file since the last call. */
function lineCounter(path) {
  let pos = 0;
  let count = 0;
  const buf = Buffer.allocUnsafe(1 << 20);
  return () => {
    if (!existsSync(path)) return 0;
    const fd = openSync(path, 'r');
    try {
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, pos);
        if (n === 0) break;
        pos += n;
        for (let i = buf.indexOf(10, 0); i !== -1 && i < n; i = buf.indexOf(10, i + 1)) count++;
      }
    } finally {
      closeSync(fd);
    }
    return count;
  };
}

// --- the input file ---------------------------------------------------------------------
const HOST = 'web-1';
function writeInput(path, count) {
  const apps = [
    ['sshd', (i) => `Accepted publickey for user${i % 13} from 10.0.${i % 255}.${(i * 7) % 255} port ${20000 + (i % 40000)} ssh2: ED25519 SHA256:Qx8f2k3LmZ0pV9sT4yW1nR6cE5hJ7aB3dF0gK2iO`],
    ['CRON', () => '(root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)'],
    ['nginx', (i) => `10.0.${i % 255}.${(i * 7) % 255} - - "GET /api/v1/items/${i} HTTP/1.1" 200 512 "-" "curl/8.5.0"`],
    ['systemd', (i) => `Started session-${i}.scope - Session ${i} of User user${i % 13}.`],
  ];
  const fd = openSync(path, 'w');
  const base = Date.UTC(2026, 11, 3, 11, 0, 0);
  let chunk = [];
  let second = '';
  let secondOf = -1;
  for (let i = 0; i < count; i++) {
    const [app, msg] = apps[i % apps.length];
    // 10,000 lines a second of log time, microsecond timestamps as rsyslog writes them
    const s = Math.floor(i / 10000);
    if (s !== secondOf) {
      second = new Date(base + s * 1000).toISOString().slice(0, 19);
      secondOf = s;
    }
    chunk.push(`${second}.${String((i % 10000) * 100).padStart(6, '0')}+00:00 ${HOST} ${app}[${1000 + (i % 97)}]: ${msg(i)}`);
    if (chunk.length === 10000) {
      writeSync(fd, chunk.join('\n') + '\n');
      chunk = [];
    }
  }
  if (chunk.length) writeSync(fd, chunk.join('\n') + '\n');
  closeSync(fd);
}

// --- rsyslog ----------------------------------------------------------------------------
async function runRsyslog(work, input, lines, rs, cleanup, { window, name }) {
  const dir = join(work, name);
  for (const d of ['s-work', 'r-work', 'in', 'out']) mkdirSync(join(dir, d), { recursive: true });
  const port = await freePort();
  const watched = join(dir, 'in', 'syslog');
  const output = join(dir, 'out', 'host.log');
  writeFileSync(
    join(dir, 'receiver.conf'),
    [
      `global(workDirectory="${dir}/r-work")`,
      `module(load="${rs.modDir}/imrelp.so")`,
      `input(type="imrelp" port="${port}" address="127.0.0.1" ruleset="store")`,
      `ruleset(name="store") { action(type="omfile" file="${output}") }`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'sender.conf'),
    [
      `global(workDirectory="${dir}/s-work")`,
      `module(load="${rs.modDir}/imfile.so" mode="inotify")`,
      `module(load="${rs.modDir}/omrelp.so")`,
      `input(type="imfile" file="${watched}" tag="syslog:" facility="user" severity="info" ruleset="ship")`,
      `ruleset(name="ship") { action(type="omrelp" target="127.0.0.1" port="${port}"${window ? ` windowSize="${window}" queue.type="LinkedList" queue.dequeueBatchSize="1024"` : ''}) }`,
      '',
    ].join('\n'),
  );
  for (const c of ['receiver', 'sender']) {
    const r = spawnSync(rs.bin, ['-N1', '-f', join(dir, `${c}.conf`)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`rsyslogd -N1 ${c}.conf: ${r.stderr || r.stdout}`);
  }
  const receiver = start(rs.bin, ['-n', '-f', join(dir, 'receiver.conf'), '-i', join(dir, 'receiver.pid')], cleanup);
  await waitFor('rsyslog receiver listening', () => canConnect(port), 15000, receiver);
  const sender = start(rs.bin, ['-n', '-f', join(dir, 'sender.conf'), '-i', join(dir, 'sender.pid')], cleanup);
  await waitFor('rsyslog sender pid file', () => existsSync(join(dir, 'sender.pid')), 15000, sender);
  await sleep(1000); // imfile sets its inotify watch after start-up; nothing to await from outside
  const written = lineCounter(output);
  const c0 = cpuTicks(receiver.pid) + cpuTicks(sender.pid);
  const t0 = performance.now();
  linkSync(input, watched);
  await waitFor('rsyslog output complete', () => written() >= lines, 600_000, sender);
  const seconds = (performance.now() - t0) / 1000;
  const cpuS = (cpuTicks(receiver.pid) + cpuTicks(sender.pid) - c0) / CLK_TCK;
  const stored = written();
  await stop(sender);
  await stop(receiver);
  return { lines_per_s: lines / seconds, seconds, cpu_s: cpuS, stored };
}

// --- ours -------------------------------------------------------------------------------
async function runOurs(work, input, cleanup) {
  const dir = join(work, 'ours');
  const stateDir = join(dir, 'agent');
  const watchedDir = join(dir, 'in');
  mkdirSync(watchedDir, { recursive: true });
  const watched = join(watchedDir, 'syslog');
  const db = join(dir, 'server.db');
  const server = (...a) => {
    const r = spawnSync(process.execPath, [dist('server/cli.js'), ...a], { encoding: 'utf8', timeout: 30000 });
    if (r.status !== 0) throw new Error(`cortex-server ${a.slice(0, 2).join(' ')}: ${r.stderr.slice(0, 500)}`);
    return r.stdout;
  };
  const { host_id, token } = JSON.parse(server('agent', 'issue', '--host', HOST, '--json', '--db', db));
  const config = JSON.parse(server('agent', 'config', '--default', '--db', db));
  config.log_sources = [{ kind: 'file', path: watched }];
  server('agent', 'config', host_id, '--set', JSON.stringify(config), '--db', db);
  const port = await freePort();
  const profDir = cpuProfDir || join(work, 'profiles');
  const prof = (name) => (profile ? ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-name', `${name}.cpuprofile`] : []);
  const serve = start(process.execPath, [...prof('server'), dist('server/cli.js'), 'serve', '--db', db, '--listen', `127.0.0.1:${port}`, '--agent-rate', '100000000'], cleanup);
  await waitFor('cortex-server healthy', async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true, 20000, serve);
  const en = spawnSync(process.execPath, [dist('agent/cli.js'), 'enroll', '--server', `ws://127.0.0.1:${port}/ws/agent`, '--token', '-', '--host-id', host_id, '--state-dir', stateDir, '--allow-insecure'], { encoding: 'utf8', input: token });
  if (en.status !== 0) throw new Error(`cortex-agent enroll: ${en.stderr.slice(0, 500)}`);
  const agent = start(process.execPath, [...prof('agent'), dist('agent/cli.js'), 'run', '--state-dir', stateDir, '--log-level', 'warn', '--source-poll-ms', '50'], cleanup);
  const status = () => {
    try {
      return JSON.parse(readFileSync(join(stateDir, 'status.json'), 'utf8'));
    } catch {
      return undefined;
    }
  };
  await waitFor('cortex-agent Active with its file source', () => {
    const s = status();
    return s?.state === 'Active' && (s.sources ?? []).some((x) => x.path === watched);
  }, 30000, agent);
  const { default: Database } = await import('better-sqlite3');
  const reader = new Database(db, { readonly: true, fileMustExist: true });
  const accepted = reader.prepare('select accepted_seq from agents where host_id = ?').pluck();
  const c0 = cpuTicks(serve.pid) + cpuTicks(agent.pid);
  const t0 = performance.now();
  linkSync(input, watched);
  await waitFor('our server acked every line', () => Number(accepted.get(host_id)) >= N, 900_000, agent);
  const seconds = (performance.now() - t0) / 1000;
  const cpuS = (cpuTicks(serve.pid) + cpuTicks(agent.pid) - c0) / CLK_TCK;
  const stored = Number(reader.prepare('select count(*) from logs where host_id = ?').pluck().get(host_id));
  reader.close();
  await stop(agent);
  await stop(serve);
  const profiles = profile ? summariseProfiles(profDir) : undefined;
  return { lines_per_s: N / seconds, seconds, cpu_s: cpuS, stored, profiles };
}

/** Self time by function (top 14) and by area, from each .cpuprofile in dir. */
function summariseProfiles(dir) {
  const out = {};
  for (const f of existsSync(dir) ? readdirSync(dir).filter((x) => x.endsWith('.cpuprofile')) : []) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const self = new Map();
    const dt = new Map();
    for (let i = 0; i < p.samples.length; i++) dt.set(p.samples[i], (dt.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
    let total = 0;
    const areas = new Map();
    for (const [id, us] of dt) {
      const n = byId.get(id);
      const cf = n.callFrame;
      const url = cf.url.replace(/^file:\/\//, '').replace(root + '/', '');
      const key = `${cf.functionName || '(anonymous)'} ${url ? `${url}:${cf.lineNumber + 1}` : ''}`.trim();
      self.set(key, (self.get(key) ?? 0) + us);
      total += us;
      const area = cf.functionName === '(idle)' ? 'idle' : cf.functionName === '(garbage collector)' ? 'gc' : !url ? (cf.functionName.startsWith('(') ? cf.functionName : 'native/builtin') : url.startsWith('node:') ? url.split('/')[0] : url.includes('node_modules/') ? url.split('node_modules/')[1].split('/')[0] : url.split('/').slice(0, 2).join('/');
      areas.set(area, (areas.get(area) ?? 0) + us);
    }
    const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 14).map(([k, us]) => ({ fn: k, ms: Math.round(us / 1000), pct: round((100 * us) / total, 1) }));
    const byArea = Object.fromEntries([...areas].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, us]) => [k, round((100 * us) / total, 1)]));
    out[f.replace('.cpuprofile', '')] = { total_ms: Math.round(total / 1000), by_area_pct: byArea, top };
  }
  return out;
}

// --- main -------------------------------------------------------------------------------
const rs = only === 'ours' ? undefined : setUp();
const work = mkdtempSync(join(tmpdir(), 'cortex-bench-peers-'));
const cleanup = [];
try {
  const input = join(work, 'syslog.input');
  const tw = performance.now();
  writeInput(input, N);
  const bytes = statSync(input).size;
  console.log(`input: ${N.toLocaleString()} lines, ${(bytes / 1048576).toFixed(1)} MiB (${Math.round(bytes / N)} B/line), written in ${Math.round(performance.now() - tw)} ms; e.g. ${readFileSync(input, 'utf8').slice(0, 200).split('\n')[0]}`);
  let rsyslog;
  let rsyslogDefault;
  let ours;
  if (rs) {
    // librelp's default window (128 unacked messages) is latency-bound here (a few thousand
    // lines/s): measured on a slice only, and the main figure uses a throughput setting.
    const small = join(work, 'syslog.small');
    writeInput(small, DEFAULT_WINDOW_LINES);
    rsyslogDefault = await runRsyslog(work, small, DEFAULT_WINDOW_LINES, rs, cleanup, { name: 'rsyslog-default', window: 0 });
    console.log(`rsyslog RELP, default window (128), ${DEFAULT_WINDOW_LINES.toLocaleString()} lines: ${Math.round(rsyslogDefault.lines_per_s).toLocaleString()} lines/s (${rsyslogDefault.seconds.toFixed(2)} s)`);
    rsyslog = await runRsyslog(work, input, N, rs, cleanup, { name: 'rsyslog', window: RELP_WINDOW });
    console.log(`rsyslog imfile → omrelp (windowSize=${RELP_WINDOW}, LinkedList action queue, batches of 1024) → imrelp → omfile: ${Math.round(rsyslog.lines_per_s).toLocaleString()} lines/s (${rsyslog.seconds.toFixed(2)} s), ${(rsyslog.cpu_s / (N / 100000)).toFixed(3)} CPU-s per 100k lines (${rsyslog.cpu_s.toFixed(2)} CPU-s, both rsyslogd), ${rsyslog.stored.toLocaleString()} lines in the output file`);
  }
  if (only !== 'rsyslog') {
    ours = await runOurs(work, input, cleanup);
    console.log(`ours: file source → cortex-agent → cortex-server (SQLite): ${Math.round(ours.lines_per_s).toLocaleString()} lines/s (${ours.seconds.toFixed(2)} s), ${(ours.cpu_s / (N / 100000)).toFixed(3)} CPU-s per 100k lines (${ours.cpu_s.toFixed(2)} CPU-s, agent + server), ${ours.stored.toLocaleString()} rows stored`);
    if (ours.stored !== N) console.log(`warning: the server stored ${ours.stored} rows for ${N} lines`);
  }
  console.log(`guarantees — ours: ${GUARANTEES.ours}`);
  console.log(`guarantees — rsyslog RELP: ${GUARANTEES.rsyslog_relp}`);
  if (ours?.profiles) {
    for (const [name, p] of Object.entries(ours.profiles)) {
      console.log(`profile ${name}: ${p.total_ms} ms sampled; by area (% of samples): ${JSON.stringify(p.by_area_pct)}`);
      for (const t of p.top) console.log(`  ${String(t.pct).padStart(5)}%  ${String(t.ms).padStart(6)} ms  ${t.fn}`);
    }
  }
  const per100k = (r) => (r ? round(r.cpu_s / (N / 100000)) : null);
  const result = {
    bench: 'peers',
    lines: N,
    input_bytes: bytes,
    ours_lines_per_s: ours ? Math.round(ours.lines_per_s) : null,
    rsyslog_relp_lines_per_s: rsyslog ? Math.round(rsyslog.lines_per_s) : null,
    ours_cpu_s_per_100k: per100k(ours),
    rsyslog_relp_cpu_s_per_100k: per100k(rsyslog),
    ours_vs_rsyslog: ours && rsyslog ? round(ours.lines_per_s / rsyslog.lines_per_s) : null,
    ours_cpu_vs_rsyslog: ours && rsyslog ? round(ours.cpu_s / rsyslog.cpu_s) : null,
    ours_rows_stored: ours?.stored ?? null,
    rsyslog_lines_written: rsyslog?.stored ?? null,
    rsyslog_relp_window: RELP_WINDOW,
    rsyslog_relp_default_window_lines_per_s: rsyslogDefault ? Math.round(rsyslogDefault.lines_per_s) : null,
    rsyslog_relp_default_window_lines: rsyslogDefault ? DEFAULT_WINDOW_LINES : null,
    rsyslog_version: rs ? spawnSync(rs.bin, ['-v'], { encoding: 'utf8' }).stdout.split('\n')[0].trim() : null,
    guarantees: GUARANTEES,
    targets: { ours_at_least_half_rsyslog: ours && rsyslog ? ours.lines_per_s >= 0.5 * rsyslog.lines_per_s : null },
  };
  console.log(JSON.stringify(result));
} finally {
  for (const c of cleanup.reverse()) {
    try {
      await c();
    } catch {
      // best effort
    }
  }
  rmSync(work, { recursive: true, force: true });
}
