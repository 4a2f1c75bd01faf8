#!/usr/bin/env node
// `npm run bench -- all`: every benchmark in bench/, one after the other (never two at once:
// they measure the machine), each in its own process with the options below that keep it
// within a few minutes, and what cannot run here skipped with the reason (PostgreSQL not
// reachable, no Chromium). Writes one JSON summary (bench/results/latest.json, git-ignored:
// machine- and run-specific) and rewrites the table between the markers in bench/README.md
// from it; the last line of output is the summary as one JSON line.
//
// Options: --only a,b  --skip a,b  --out FILE  --timeout-s N (per bench, default 900)
//          --no-readme (leave bench/README.md alone)  --dry-run (print the plan)
// A bench added to bench/ later runs with its defaults until it gets a plan entry here.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const list = (s) => (s ? s.split(',').filter(Boolean) : []);
const onlyIds = list(opt('only'));
const skipIds = list(opt('skip'));
const outFile = opt('out', join(here, 'results', 'latest.json'));
const timeoutS = Number(opt('timeout-s', 900));

const PG_URL = process.env.CORTEX_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
function reachable(url) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const c = connect({ host: u.hostname, port: Number(u.port || 5432), timeout: 2000 });
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
    c.once('timeout', () => (c.destroy(), resolve(false)));
  });
}
const CHROMIUM = process.env.CORTEX_CHROMIUM ?? '/usr/bin/chromium';
const needsPostgres = async () => ((await reachable(PG_URL)) ? null : `PostgreSQL not reachable at ${new URL(PG_URL).host} (set CORTEX_TEST_POSTGRES_URL)`);
const needsChromium = async () => (existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (set CORTEX_CHROMIUM)`);

/**
 * id, bench file, arguments, environment, a check that says why it cannot run here (or
 * null), and the headline keys of its JSON shown in the README table.
 */
const PLAN = [
  { id: 'validators', headline: ['logs_push_params_vs_ajv_ratio', 'log_batch_entry_vs_ajv_ratio', 'logs_push_params_entries_per_s', 'logs_push_params_ajv_entries_per_s', 'import_ms'] },
  { id: 'codegen', headline: ['generate_ms', 'check_ms', 'check_vs_10s_target_ratio'] },
  { id: 'sources', headline: ['file_lines_per_s', 'file_rfc5424_lines_per_s', 'file_rfc5424_vs_plain_ratio', 'rfc5424_lines_per_s', 'file_vs_raw_ratio'] },
  { id: 'agent', headline: ['e2e_entries_per_s', 'server_alone_entries_per_s', 'e2e_ratio', 'e2e_ratio_agent_frames', 'drain_entries_per_s', 'drain_ratio', 'buffer_append_entries_per_s', 'rss_mib', 'baseline_node_rss_mib', 'rss_ratio_to_bare_node', 'idle_cpu_percent'] },
  { id: 'ingest', env: { BENCH_IDLE_AGENTS: '2000' }, headline: ['ceiling_entries_per_s', 'agents_1_entries_per_s', 'agents_10_entries_per_s', 'agents_10_ratio', 'ack_p99_ms_at_10k', 'hellos_per_s', 'hellos_reconnect_per_s', 'hellos_cold_per_s', 'writer_ceiling_entries_per_s'] },
  { id: 'ingest-postgres', bench: 'ingest', args: ['--db', 'postgres'], env: { BENCH_IDLE_AGENTS: '2000' }, check: needsPostgres, headline: ['pg_ceiling_entries_per_s', 'pg_one_server_entries_per_s', 'pg_one_server_ratio', 'pg_two_servers_ratio_vs_one', 'pg_ack_p99_ms_at_10k', 'pg_hellos_per_s'] },
  { id: 'hellos', headline: ['hellos_per_s', 'hellos_reconnect_per_s', 'ws_connects_per_s', 'hellos_ratio', 'hellos_reconnect_ratio', 'server_cpu_ms_per_hello', 'server_cpu_ms_per_reconnect'] },
  { id: 'retention', env: { BENCH_PURGE_ROWS: '300000' }, headline: ['purge_rows_per_s', 'ack_p99_ms_during_purge', 'ack_p99_ms_baseline', 'p99_ratio_vs_baseline', 'meets_target'] },
  { id: 'retention-postgres', bench: 'retention', args: ['--db', 'postgres'], env: { BENCH_PURGE_ROWS: '300000' }, check: needsPostgres, headline: ['purge_rows_per_s', 'ack_p99_ms_during_purge', 'p99_ratio_vs_baseline'] },
  { id: 'fleet', env: { BENCH_FLEET_AGENTS: '2000', BENCH_FLEET_TRAFFIC_S: '5' }, headline: ['agents', 'enroll_hellos_per_s', 'idle_bytes_per_agent', 'probe_fanout_1000_s', 'restart_all_active_s', 'traffic_entries_per_s', 'stored_exactly_once'] },
  { id: 'console', check: needsChromium, headline: ['first_view_ms_5000_agents', 'first_view_ratio_vs_baseline', 'sort_click_ratio_vs_baseline', 'tail_lines_received_ratio'] },
  { id: 'peers', headline: ['ours_lines_per_s', 'rsyslog_relp_lines_per_s', 'ours_vs_rsyslog', 'ours_cpu_s_per_100k', 'rsyslog_relp_cpu_s_per_100k'] },
];
const benches = readdirSync(here)
  .filter((f) => f.endsWith('.mjs') && !['run.mjs', 'all.mjs'].includes(f) && !f.startsWith('_'))
  .map((f) => f.slice(0, -4));
for (const b of benches) if (!PLAN.some((p) => (p.bench ?? p.id) === b)) PLAN.push({ id: b, headline: [] });
const plan = PLAN.filter((p) => benches.includes(p.bench ?? p.id) && (onlyIds.length === 0 || onlyIds.includes(p.id)) && !skipIds.includes(p.id));

const commandOf = (p) => `${Object.entries(p.env ?? {}).map(([k, v]) => `${k}=${v} `).join('')}npm run bench -- ${[p.bench ?? p.id, ...(p.args ?? [])].join(' ')}`;
if (args.includes('--dry-run')) {
  for (const p of plan) console.log(commandOf(p));
  process.exit(0);
}
if (opt('readme-from')) {
  // Re-render the README table from a summary already written (no bench runs), with the
  // headline keys of the current plan.
  const s = JSON.parse(readFileSync(opt('readme-from'), 'utf8'));
  for (const [id, b] of Object.entries(s.benches)) b.headline = PLAN.find((p) => p.id === id)?.headline ?? b.headline;
  writeTable(s);
  process.exit(0);
}

/** The thrown error's own line from a stderr tail (not the stack or node's version line). */
function errorLine(err) {
  const lines = err.trim().split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.reverse().find((l) => /^(\w*Error|Error)\b/.test(l)) ?? lines[0] ?? '';
}

let current;
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    if (current) {
      try {
        process.kill(-current.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    process.exit(130);
  });
}

/** Runs one bench; its output goes through to ours, and its last JSON line is its result. */
function run(p) {
  return new Promise((resolve) => {
    const child = (current = spawn(process.execPath, ['--expose-gc', join(here, `${p.bench ?? p.id}.mjs`), ...(p.args ?? [])], { cwd: root, env: { ...process.env, ...(p.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      out = (out + d).slice(-200_000);
    });
    child.stderr.on('data', (d) => {
      process.stderr.write(d);
      err = (err + d).slice(-4000);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL'); // its own process group: the bench and what it started
      } catch {
        // already gone
      }
    }, timeoutS * 1000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      // What the bench started and left behind (a failed bench may not stop its server) is
      // in its process group.
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // nothing left
      }
      const lastJson = out
        .trim()
        .split('\n')
        .reverse()
        .find((l) => l.trim().startsWith('{'));
      let result = null;
      try {
        result = lastJson ? JSON.parse(lastJson) : null;
      } catch {
        result = null;
      }
      const status = timedOut ? 'timeout' : code === 0 && result ? 'ok' : 'failed';
      resolve({ status, exit: code ?? signal, result, ...(status === 'ok' ? {} : { error: timedOut ? `killed after ${timeoutS} s` : errorLine(err) || `exit ${code ?? signal}` }) });
    });
  });
}

const git = (a) => spawnSync('git', a, { cwd: root, encoding: 'utf8' }).stdout.trim();
const summary = {
  bench: 'all',
  started_at: new Date().toISOString(),
  finished_at: null,
  commit: git(['rev-parse', '--short', 'HEAD']),
  dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '',
  machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? null, mem_bytes: totalmem(), load_avg_at_start: loadavg().map((x) => Number(x.toFixed(2))), node: process.version },
  benches: {},
};
const t0 = performance.now();
for (const p of plan) {
  const command = commandOf(p);
  const reason = p.check ? await p.check() : null;
  if (reason) {
    console.log(`\n=== ${p.id}: skipped (${reason})`);
    summary.benches[p.id] = { command, status: 'skipped', reason };
    continue;
  }
  console.log(`\n=== ${p.id}: ${command}  (load average ${loadavg()[0].toFixed(2)})`);
  const s0 = performance.now();
  const r = await run(p);
  const seconds = Number(((performance.now() - s0) / 1000).toFixed(1));
  summary.benches[p.id] = { command, status: r.status, seconds, load_avg_1m_after: Number(loadavg()[0].toFixed(2)), headline: p.headline, ...(r.error ? { error: r.error } : {}), result: r.result };
  console.log(`=== ${p.id}: ${r.status} in ${seconds} s`);
}
summary.finished_at = new Date().toISOString();
summary.total_seconds = Number(((performance.now() - t0) / 1000).toFixed(1));
mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(summary, null, 2) + '\n');
console.log(`\nsummary written to ${outFile}`);
if (!args.includes('--no-readme') && onlyIds.length === 0 && skipIds.length === 0) writeTable(summary);
const failed = Object.values(summary.benches).filter((b) => b.status === 'failed' || b.status === 'timeout').length;
console.log(JSON.stringify(summary));
process.exit(failed ? 1 : 0);

function writeTable(s) {
  const readme = join(here, 'README.md');
  if (!existsSync(readme)) return;
  const text = readFileSync(readme, 'utf8');
  const begin = '<!-- bench:all:begin -->';
  const end = '<!-- bench:all:end -->';
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a >= 0 && b > a) {
    writeFileSync(readme, text.slice(0, a + begin.length) + '\n' + table(s) + text.slice(b));
    console.log(`table in ${readme} updated`);
  }
}

function fmt(v) {
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : String(v);
  if (v === null || v === undefined) return '–';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
function table(s) {
  const rows = [
    `Run of ${s.started_at.slice(0, 16).replace('T', ' ')} UTC, commit ${s.commit}${s.dirty ? ' (with uncommitted changes)' : ''}, ${s.machine.cpus} CPUs (${s.machine.cpu_model}), load average ${s.machine.load_avg_at_start[0]} at start, node ${s.machine.node}; ${Math.round(s.total_seconds / 60)} min in all. Produced by \`npm run bench -- all\` (full JSON: bench/results/latest.json).`,
    '',
    '| bench | command | status | headline figures |',
    '|---|---|---|---|',
  ];
  for (const [id, b] of Object.entries(s.benches)) {
    const r = b.result ?? {};
    const keys = b.headline?.length ? b.headline.filter((k) => k in r) : Object.keys(r).filter((k) => typeof r[k] === 'number').slice(0, 8);
    const figures = b.status === 'skipped' ? `skipped: ${b.reason}` : keys.map((k) => `\`${k}\` ${fmt(r[k])}`).join('<br>') || (b.error ? `error: ${b.error.split('\n').pop()}` : '–');
    rows.push(`| ${id} | \`${b.command}\` | ${b.status}${b.seconds !== undefined ? ` (${b.seconds} s)` : ''} | ${figures.replace(/\|/g, '\\|')} |`);
  }
  return rows.join('\n') + '\n';
}
