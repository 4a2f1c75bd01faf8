// Issue 18, the agent's enroll path: a hello answer the agent cannot apply must not be
// reported as a failure once the rotated token is written (the one-time token is spent),
// and the enrollment token can come from a file or stdin instead of the command line
// (where any local process reads it from /proc/<pid>/cmdline).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild } from '../agent/fixtures/bundle.js';
import { ROTATED, TOKEN, cleanupDirs, tempDir } from '../agent/helpers/agent-harness.js';
import { FakeServer } from '../agent/helpers/fake-server.js';
import { until } from '../support/procs.js';

let cli = '';
beforeAll(async () => {
  cli = await bundleChild(new URL('../../agent/cli.ts', import.meta.url).pathname, tempDir(), 'cli');
}, 60_000);
afterAll(cleanupDirs);

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], stdin?: string): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

function noSecrets(r: Result): void {
  for (const t of [TOKEN, ROTATED]) {
    expect(r.stdout).not.toContain(t);
    expect(r.stderr).not.toContain(t);
  }
}

describe('enroll: after the rotated token is written, never "failed"', () => {
  it('an accepted_seq beyond max_seq: the token is kept, exit 0, and the warning names agent reset-seq', async () => {
    const server = await FakeServer.start();
    server.rotatedToken = ROTATED;
    server.accepted = 1e300;
    const dir = tempDir();
    const hostId = randomUUID();
    const r = await runCli(['enroll', '--server', server.url, '--token', TOKEN, '--host-id', hostId, '--state-dir', dir, '--allow-insecure']);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(ROTATED);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/failed/i);
    expect(r.stderr).toContain('agent reset-seq');
    noSecrets(r);
    await server.close();
  });
});

/** The shell command of `enroll --token -` (the token typed at its prompt) into `dir`. */
const enrollAtPrompt = (url: string, dir: string): string =>
  [process.execPath, cli, 'enroll', '--server', url, '--token', '-', '--host-id', randomUUID(), '--state-dir', dir, '--allow-insecure'].map((a) => `'${a}'`).join(' ');

/** Runs the shell command `cmd` on a pseudo-terminal (util-linux script): what is written to `child.stdin` is typed there; `out()` is what the terminal showed. */
function onTerminal(cmd: string): { child: ChildProcessWithoutNullStreams; out: () => string; exited: Promise<number | null> } {
  const child = spawn('script', ['-qec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  return { child, out: () => out, exited: new Promise((resolve) => child.on('exit', resolve)) };
}

describe('enroll: the token from a file or stdin', () => {
  it('--token-file FILE (a trailing newline is ignored) enrolls', async () => {
    const server = await FakeServer.start();
    server.rotatedToken = ROTATED;
    const dir = tempDir();
    const file = join(tempDir(), 'enroll-token');
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    const r = await runCli(['enroll', '--server', server.url, '--token-file', file, '--host-id', randomUUID(), '--state-dir', dir, '--allow-insecure']);
    expect(r.code, r.stderr).toBe(0);
    expect(server.current!.hello!.token).toBe(TOKEN);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(ROTATED);
    noSecrets(r);
    await server.close();
  });

  it('--token - reads the token from stdin', async () => {
    const server = await FakeServer.start();
    server.rotatedToken = ROTATED;
    const dir = tempDir();
    const r = await runCli(['enroll', '--server', server.url, '--token', '-', '--host-id', randomUUID(), '--state-dir', dir, '--allow-insecure'], `${TOKEN}\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(server.current!.hello!.token).toBe(TOKEN);
    noSecrets(r);
    await server.close();
  });

  it('--token - at a terminal asks for the token and takes it at Enter, without echoing it (it waited for Ctrl-D without a word, then echoed it)', async () => {
    const server = await FakeServer.start();
    server.rotatedToken = ROTATED;
    const dir = tempDir();
    const { child, out, exited } = onTerminal(enrollAtPrompt(server.url, dir));
    try {
      await until('the prompt', () => out().includes('cortex-agent: paste the one-time token (from "cortex-server agent issue"), then press Enter: '), 15_000);
      child.stdin.write(`${TOKEN}\n`); // the pipe stays open: only Enter ends the token
      expect(await exited).toBe(0);
    } finally {
      child.stdin.end();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(server.current!.hello!.token).toBe(TOKEN);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(ROTATED);
    expect(out()).toContain('enrolled host');
    // the terminal showed the prompt and the result, never the token typed at it
    expect(out()).not.toContain(TOKEN);
    expect(out()).not.toContain(TOKEN.slice(0, 8));
    await server.close();
  }, 30_000);

  it('Ctrl-C at the token prompt ends enroll with 130, enrolls nothing and leaves the terminal echoing', async () => {
    const server = await FakeServer.start();
    const dir = join(tempDir(), 'state');
    // after enroll, the same terminal says its exit code and whether it echoes and reads lines again
    const cmd = `${enrollAtPrompt(server.url, dir)}; echo "rc=$?"; stty -a | tr ' ' '\\n' | grep -xE -- '-?(echo|icanon)' | tr '\\n' ' '; echo`;
    const { child, out, exited } = onTerminal(cmd);
    try {
      await until('the prompt', () => out().includes('then press Enter: '), 15_000);
      child.stdin.write('half-a-tok\x03');
      await until('the terminal modes', () => /rc=\d+[\s\S]*icanon/.test(out()), 15_000);
      expect(await exited).toBe(0);
    } finally {
      child.stdin.end();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    expect(out()).toContain('canceled at the token prompt (Ctrl-C); nothing was enrolled');
    expect(out()).toMatch(/rc=130/);
    expect(out()).toMatch(/(^|\s)echo(\s|$)/m);
    expect(out()).toMatch(/(^|\s)icanon(\s|$)/m);
    expect(out()).not.toContain('half-a-tok');
    expect(server.current).toBeUndefined();
    expect(existsSync(dir)).toBe(false);
    await server.close();
  }, 30_000);

  it('a missing or empty token file, or both --token and --token-file, exit 2 and write nothing', async () => {
    const dir = tempDir();
    const base = ['enroll', '--server', 'ws://127.0.0.1:9/ws/agent', '--host-id', randomUUID(), '--state-dir', dir, '--allow-insecure'];
    const missing = await runCli([...base, '--token-file', join(dir, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--token-file');
    const empty = join(tempDir(), 'empty');
    writeFileSync(empty, '\n');
    const e = await runCli([...base, '--token-file', empty]);
    expect(e.code).toBe(2);
    expect(e.stderr).toContain('empty');
    const both = await runCli([...base, '--token', TOKEN, '--token-file', empty]);
    expect(both.code).toBe(2);
    const noStdin = await runCli([...base, '--token', '-'], '');
    expect(noStdin.code).toBe(2);
    expect(existsSync(join(dir, 'token'))).toBe(false);
    noSecrets(both);
  });

  it('a token given on the command line works and warns that other processes can read it', async () => {
    const server = await FakeServer.start();
    server.rotatedToken = ROTATED;
    const r = await runCli(['enroll', '--server', server.url, '--token', TOKEN, '--host-id', randomUUID(), '--state-dir', tempDir(), '--allow-insecure']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('--token-file');
    noSecrets(r);
    await server.close();
  });
});
