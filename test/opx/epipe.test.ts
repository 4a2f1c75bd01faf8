// `agent tail … | head`, `agent list | head`: the reader closing the pipe early ends the
// command quietly (exit 0, nothing on stderr), not with an EPIPE stack trace.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { issueAgent } from '../../server/db/agents.repository.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { requireServerCli } from '../server/spawn.js';
import { until } from '../support/procs.js';
import { AGENT_CLI, CLI, tmp } from './helpers.js';

let db = '';
let hostId = '';
beforeAll(async () => {
  requireServerCli();
  db = join(tmp(), 'c.db');
  const s = openSqliteStorage({ path: db });
  await migrateToLatest(s);
  for (let i = 0; i < 600; i++) await issueAgent(s.db, `host-${String(i).padStart(4, '0')}-${'x'.repeat(100)}`);
  hostId = (await issueAgent(s.db, 'tail-host')).host_id;
  const now = new Date().toISOString();
  const rows = Array.from({ length: 4000 }, (_, i) => ({ seq: i + 1, ts: now, severity: 'info', message: `line ${i} ${'y'.repeat(100)}`, source: 'file:/var/log/x.log' }));
  await s.ingest.commitBatch(hostId, rows, now);
  await s.close();
}, 120_000);

function piped(args: string): { code: number | null; stdout: string; stderr: string } {
  // pipefail: the exit status is the CLI's, not head's. The output (> 400 KB) is far
  // larger than a pipe's buffer, so the CLI is still writing when head goes away.
  const r = spawnSync('bash', ['-c', `set -o pipefail; ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} ${args} --db ${JSON.stringify(db)} | head -c 4096`], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

it('agent tail -n 4000 | head: exit 0, no stack trace', () => {
  const r = piped(`agent tail ${hostId} -n 4000`);
  expect(r.stdout).toHaveLength(4096);
  expect(r.stdout.startsWith('1 ')).toBe(true);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
});

it('agent list | head and agent tail --json | head: exit 0, no stack trace', () => {
  for (const args of ['agent list', `agent tail ${hostId} -n 4000 --json`]) {
    const r = piped(args);
    expect(r.stdout, args).toHaveLength(4096);
    expect(r.stderr, args).toBe('');
    expect(r.code, args).toBe(0);
  }
});

// stdout that refuses every write (a file on a full disk, as /dev/full does): a command says so
// in one line and exits 1 (it threw: a stack trace); `serve` prints only its banner there and
// runs on (it did not start). DECISIONS H30.
function toFull(cli: string, args: string[], timeoutMs = 30_000): { code: number | null; signal: NodeJS.Signals | null; stderr: string } {
  const full = openSync('/dev/full', 'w');
  try {
    const r = spawnSync(process.execPath, [cli, ...args], { stdio: ['ignore', full, 'pipe'], encoding: 'utf8', timeout: timeoutMs });
    return { code: r.status, signal: r.signal, stderr: r.stderr };
  } finally {
    closeSync(full);
  }
}

it('agent list > /dev/full and cortex-agent --help > /dev/full: one line naming ENOSPC, exit 1, no stack trace', () => {
  for (const [cli, args, program] of [
    [CLI, ['agent', 'list', '--db', db], 'cortex-server'],
    [AGENT_CLI, ['--help'], 'cortex-agent'],
  ] as const) {
    const r = toFull(cli, [...args]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(`${program}: error[E_DISK_FULL]: cannot write the output to stdout (ENOSPC): it goes to a file or device that refuses it — free space on the disk of the database or file the command writes (df shows it), then run the command again; nothing already stored is lost\n`);
  }
});

it('serve > /dev/full: the banner cannot be written, the server listens and answers all the same', async () => {
  const full = openSync('/dev/full', 'w');
  const child = spawn(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', '--db', join(tmp(), 's.db')], { stdio: ['ignore', full, 'pipe'] });
  closeSync(full);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  try {
    const url = await until('listening', () => /"url":"ws:\/\/127\.0\.0\.1:(\d+)\/ws\/agent"[^\n]*"msg":"listening"/.exec(stderr)?.[1], 20_000);
    const res = await fetch(`http://127.0.0.1:${url}/healthz`);
    expect(res.status).toBe(200);
    // The banner is written after the listening line, and its failure comes a tick later; no
    // event marks it from outside, so the server is given half a second to fall (it did within
    // milliseconds), then asked again.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    expect(await Promise.race([exited.then(() => 'exited'), new Promise((resolve) => setTimeout(() => resolve('running'), 500))])).toBe('running');
    expect((await fetch(`http://127.0.0.1:${url}/healthz`)).status).toBe(200);
    expect(child.exitCode).toBeNull();
    expect(stderr).not.toContain('"level":"fatal"');
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}, 40_000);
