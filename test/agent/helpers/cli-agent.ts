// `cortex-agent run` as users run it (the CLI bundled from source) against a FakeServer: enroll
// a state folder, start and stop runs, read what the server stored.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentConfig } from '@cortex/agent-protocol';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { bundleChild } from '../fixtures/bundle.js';
import { TOKEN, cleanupDirs, tempDir } from './agent-harness.js';
import { FakeServer } from './fake-server.js';

export interface Run {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

export interface CliAgent {
  /** Starts `cortex-agent run --state-dir DIR` (sources polled every 50 ms); `stderrFd`: its stderr goes there instead of to `stderr()`. */
  run(dir: string, options?: { stderrFd?: number }): Run;
  /** The bundled CLI (after beforeAll), for a test that starts it its own way. */
  path(): string;
  /** A FakeServer whose config reads `log` (created with `lines`) and a state folder enrolled with it. */
  setUp(lines: string, config?: Partial<AgentConfig['log_sources'][number]>): Promise<{ server: FakeServer; dir: string; log: string }>;
}

/** Call once at the top of a test file: bundles the CLI, and stops what each test started. */
export function cliAgent(): CliAgent {
  let cli = '';
  beforeAll(async () => {
    cli = await bundleChild(new URL('../../../agent/cli.ts', import.meta.url).pathname, tempDir(), 'cli');
  }, 60_000);
  afterAll(cleanupDirs);
  const servers: FakeServer[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    for (const s of servers.splice(0)) await s.close();
  });
  const run = (dir: string, options: { stderrFd?: number } = {}): Run => {
    const child = spawn(process.execPath, [cli, 'run', '--state-dir', dir, '--source-poll-ms', '50'], { stdio: ['ignore', 'ignore', options.stderrFd ?? 'pipe'] });
    children.push(child);
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    return { child, stderr: () => stderr, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
  };
  const setUp: CliAgent['setUp'] = async (lines, config = {}) => {
    const server = await FakeServer.start();
    servers.push(server);
    const dir = tempDir();
    const enroll = spawn(process.execPath, [cli, 'enroll', '--server', server.url, '--token', TOKEN, '--host-id', randomUUID(), '--state-dir', dir, '--allow-insecure'], { stdio: 'ignore' });
    expect(await new Promise((resolve) => enroll.on('exit', resolve))).toBe(0);
    const log = join(tempDir(), 'app.log');
    writeFileSync(log, lines);
    server.config = { ...server.config, log_sources: [{ kind: 'file', path: log, ...config }] };
    return { server, dir, log };
  };
  return { run, setUp, path: () => cli };
}

/** The messages a FakeServer stored, in seq order. */
export const storedMessages = (s: FakeServer): string[] => [...s.stored.entries()].sort((a, b) => a[0] - b[0]).map(([, m]) => m);
