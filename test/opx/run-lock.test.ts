// A second `cortex-agent run` on a state folder in use is refused at once (DIR/run.lock);
// a lock left by an agent that is gone is taken over; the lock is removed on exit.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireServerCli, serve, type ServeProcess } from '../server/spawn.js';
import { AGENT_CLI, issue, tmp } from './helpers.js';

let s: ServeProcess;
let stateDir = '';
const children: ChildProcess[] = [];

beforeAll(async () => {
  requireServerCli();
  const db = join(tmp(), 'c.db');
  const host = issue(db, 'lock-host');
  s = await serve(['--db', db, '--shutdown-drain-secs', '0']);
  stateDir = join(tmp(), 'state');
  const r = spawnSync(process.execPath, [AGENT_CLI, 'enroll', '--server', s.url, '--token', host.token, '--host-id', host.host_id, '--state-dir', stateDir, '--allow-insecure'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(r.stderr);
}, 120_000);
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  s.child.kill('SIGTERM');
  await s.exited;
});

function run(): { child: ChildProcess; exited: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [AGENT_CLI, 'run', '--state-dir', stateDir, '--allow-insecure', '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  return { child, exited: new Promise((r) => child.on('exit', (code) => r(code))), stderr: () => err };
}

/** Resolves once DIR/FILE (run.lock, or status.json once the agent runs) names `pid`. */
async function fileNames(file: string, pid: number): Promise<void> {
  const path = join(stateDir, file);
  for (;;) {
    try {
      if ((JSON.parse(readFileSync(path, 'utf8')) as { pid: number }).pid === pid) return;
    } catch {
      // not there yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('a second run on the same state folder exits 1 at once naming the running pid; the first keeps running', async () => {
  const first = run();
  await fileNames('run.lock', first.child.pid as number);
  await fileNames('status.json', first.child.pid as number); // running, signal handlers set
  const t0 = Date.now();
  const second = run();
  expect(await second.exited).toBe(1);
  expect(Date.now() - t0).toBeLessThan(10_000);
  expect(second.stderr()).toContain(`another cortex-agent run (pid ${first.child.pid}) is using this state folder`);
  expect(first.child.exitCode).toBeNull();
  first.child.kill('SIGTERM');
  expect(await first.exited).toBe(0);
  expect(existsSync(join(stateDir, 'run.lock'))).toBe(false);
});

it('a lock left by a process that is gone (SIGKILL) is taken over', async () => {
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  writeFileSync(join(stateDir, 'run.lock'), JSON.stringify({ pid: Number(dead.stdout), host: (await import('node:os')).hostname() }));
  const again = run();
  await fileNames('run.lock', again.child.pid as number);
  await fileNames('status.json', again.child.pid as number);
  again.child.kill('SIGTERM');
  expect(await again.exited).toBe(0);
  expect(existsSync(join(stateDir, 'run.lock'))).toBe(false);
});
