#!/usr/bin/env node
// One mutant's test for `npm run conformance:mutants` (Stryker's command runner runs it in its
// sandbox with __STRYKER_ACTIVE_MUTANT__ set; the compiled server inherits it): starts the
// sandbox's compiled reference server through the fault-injecting fixture, runs the
// conformance runner's server suite against it with every option, and exits with the
// runner's status (0: every case passed, the mutant survived; 1: a case failed, killed).
// Under a mutant only its module's cases run (scripts/mutants/ranges.mjs, --only).
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activeMutant, failedCase, record } from './mutant.mjs';

const root = process.cwd();
const started = Date.now();
const mutant = activeMutant();
const dir = mkdtempSync(join(tmpdir(), 'cortex-mutant-'));
const db = join(dir, 'cortex.db');
const fault = join(dir, 'storage-fault');
const PING_MS = 500;
const RATE = 2000;
const QUEUE = 1000;
const env = {
  ...process.env,
  CORTEX_TEST_CONFIG: JSON.stringify({ hello_timeout_ms: 800, max_batch_entries: 500, ping_interval_ms: PING_MS, missed_pongs: 2, agent_rate_entries_per_s: RATE, shutdown_drain_secs: 1, min_agent_version: '0.1.0' }),
  CORTEX_TEST_QUEUE_ENTRIES: String(QUEUE),
  CORTEX_TEST_ROTATION_CLOSE_MS: '500',
};
const q = (v) => `'${v.replace(/'/g, `'\\''`)}'`;
const cli = join(root, 'dist/server/cli.js');
/** Hosts issued with the template for the cases that ask --issue-command for one valid an hour (ingest/max-seq, the two decommission cases). */
const POOL = 3;

/**
 * A database with the two hosts issued, made once per sandbox (the dry run makes it) and
 * copied for every mutant: two `agent issue` runs and the migrations per mutant took seconds
 * on the loaded machine. Every copy holds the same fresh one-time tokens.
 */
function template() {
  const at = join(root, 'dist/mutants-template');
  if (!existsSync(join(at, 'hosts.json'))) {
    const tmp = mkdtempSync(join(tmpdir(), 'cortex-mutant-template-'));
    const issue = (name, ...more) => {
      const r = spawnSync(process.execPath, [cli, 'agent', 'issue', '--host', name, '--json', '--db', join(tmp, 'cortex.db'), ...more], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`agent issue: ${r.stderr}`);
      return JSON.parse(r.stdout);
    };
    // The pool: fresh hosts for the cases that issue one valid for an hour (--issue-command below).
    const pool = Array.from({ length: POOL }, (_, i) => issue(`m-pool-${i}`, '--expires-in', '12h'));
    writeFileSync(join(tmp, 'hosts.json'), JSON.stringify({ h1: issue('m-1'), h2: issue('m-2'), pool }));
    try {
      renameSync(tmp, at);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // made meanwhile by the other worker
    }
  }
  return { db: join(at, 'cortex.db'), ...JSON.parse(readFileSync(join(at, 'hosts.json'), 'utf8')) };
}
const tpl = template();
copyFileSync(tpl.db, db);
const poolFile = join(dir, 'pool.jsonl');
writeFileSync(poolFile, tpl.pool.map((h) => `${JSON.stringify({ host_id: h.host_id, token: h.token })}\n`).join(''));
const serverArgs = (listen) => [join(root, 'test/conformance/fixtures/reference-server.mjs'), fault, '--db', db, '--listen', listen];
let code = 1;
const server = spawn(process.execPath, serverArgs('127.0.0.1:0'), { env, stdio: ['ignore', 'ignore', 'pipe'] });
try {
  const url = await new Promise((resolve, reject) => {
    let err = '';
    server.stderr.on('data', (d) => {
      err += d;
      const m = /"url":"(ws:[^"]+)"/.exec(err);
      if (m && err.includes('"msg":"listening"')) resolve(m[1]);
    });
    server.on('exit', () => reject(new Error(`server exited before listening: ${err.slice(-500)}`)));
    setTimeout(() => reject(new Error('server did not listen within 20 s')), 20_000).unref();
  });
  server.stderr.resume();
  const port = new URL(url).port;
  const { h1, h2 } = tpl;
  /** A curl call of the admin API on host {host_id} (the body is shell text: quoted JSON with template values spliced in). */
  const admin = (method, path, body) => `curl -sfS -X ${method} -H 'content-type: application/json'${body ? ` -d ${body}` : ''} http://127.0.0.1:${port}/admin/agents/{host_id}${path}`;
  const envPrefix = ['CORTEX_TEST_CONFIG', 'CORTEX_TEST_QUEUE_ENTRIES', 'CORTEX_TEST_ROTATION_CLOSE_MS'].map((k) => `${k}=${q(env[k])}`).join(' ');
  const args = [
    join(root, 'dist/conformance/cli.js'), 'server', '--url', url, '--enroll-token', h1.token, '--host-id', h1.host_id, '--token-2', h2.token, '--host-id-2', h2.host_id,
    // No --ping-interval-ms: the 1011 case waits several ping intervals and pings are not in
    // the mutated scope; without --strict that one skip does not fail a run.
    '--hello-timeout-ms', '800', '--server-max-batch-entries', '500',
    '--agent-rate', String(RATE), '--ingest-queue-entries', String(QUEUE), '--min-agent-version', '0.1.0', '--timeout-ms', '3000',
    '--admin-url', `http://127.0.0.1:${port}`,
    // The admin changes through the server's own admin API (the same repository calls as the
    // `cortex-server agent …` commands, which test/conformance/server.test.ts uses): curl starts
    // in milliseconds, a node CLI in a second or more on the loaded machine, several per mutant.
    '--revoke-command', `${admin('POST', '/revoke')}`,
    '--rotate-command', `${admin('POST', '/rotate', `'{"grace_secs": '{grace_secs}'}'`)}`, '--rotation-grace-secs', '1',
    '--decommission-command', `${admin('POST', '/decommission', `'{"drain_secs": '{drain_secs}'}'`)}`,
    '--config-command', `${admin('PUT', '/config', `'{"config": '{config}'}'`)}`,
    '--break-storage-command', `echo break > ${q(fault)}`, '--repair-storage-command', `rm -f ${q(fault)}`,
    '--stall-storage-command', `echo stall > ${q(fault)}`, '--resume-storage-command', `rm -f ${q(fault)}`,
    // A pooled host when one valid for an hour is asked for, else `agent issue` (the expiry case's 3 s tokens).
    '--issue-command', `l=$(head -n 1 ${q(poolFile)}); if [ {expires_in} = 1h ] && [ -n "$l" ]; then sed -i 1d ${q(poolFile)}; echo "$l"; else ${q(process.execPath)} ${q(cli)} agent issue --host {label} --expires-in {expires_in} --json --db ${q(db)}; fi`,
    '--metrics-count-command', `${q(process.execPath)} ${q(join(root, 'test/conformance/fixtures/metrics-count.mjs'))} ${q(db)} {host_id}`,
    '--stop-command', `kill -TERM ${server.pid}`, '--restart-command', `${envPrefix} ${q(process.execPath)} ${serverArgs(`127.0.0.1:${port}`).map(q).join(' ')}`,
    '--bail', ...mutant.only,
  ];
  // Asynchronously: the server's stderr must keep draining while the runner runs.
  const runner = spawn(process.execPath, args, { env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  runner.stdout.on('data', (d) => (out += d));
  runner.stderr.on('data', (d) => (out += d));
  const killer = setTimeout(() => runner.kill('SIGKILL'), 120_000);
  code = await new Promise((resolve) => runner.on('exit', (c) => resolve(c ?? 1)));
  clearTimeout(killer);
  record({ mutant: mutant.id ?? null, file: mutant.file ?? null, code, failed: failedCase(out), ms: Date.now() - started });
  if (process.env.CORTEX_MUTANTS_VERBOSE) process.stdout.write(`${out.split('\n').filter((l) => !l.startsWith('PASS')).join('\n')}\n`);
} catch (err) {
  process.stderr.write(`run-server: ${err.message}\n`);
  code = 1;
} finally {
  server.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
