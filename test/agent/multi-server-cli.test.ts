// `cortex-agent enroll --server A --server B`: every server is kept in agent.json, and
// `status` lists them beside the one the agent holds.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild } from './fixtures/bundle.js';
import { ROTATED, TOKEN, cleanupDirs, tempDir } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';

let cli = '';
beforeAll(async () => {
  cli = await bundleChild(new URL('../../agent/cli.ts', import.meta.url).pathname, tempDir(), 'cli');
}, 60_000);
afterAll(cleanupDirs);

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('cortex-agent with several --server', () => {
  it('enroll keeps every server; status --json lists them; a bad one is a usage error', async () => {
    const a = await FakeServer.start();
    const b = await FakeServer.start();
    a.rotatedToken = ROTATED;
    b.rotatedToken = ROTATED;
    try {
      const dir = tempDir();
      const hostId = randomUUID();
      const tokenFile = join(tempDir(), 'enroll-token');
      writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
      const r = await runCli(['enroll', '--server', a.url, '--server', b.url, '--token-file', tokenFile, '--host-id', hostId, '--state-dir', dir, '--allow-insecure', '--json']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ server_url: a.url, server_urls: [a.url, b.url] });
      expect(JSON.parse(readFileSync(join(dir, 'agent.json'), 'utf8'))).toMatchObject({ server_url: a.url, server_urls: [a.url, b.url] });
      const s = await runCli(['status', '--state-dir', dir, '--json']);
      expect(s.code).toBe(0);
      expect(JSON.parse(s.stdout)).toMatchObject({ server_urls: [a.url, b.url] });
      const text = await runCli(['status', '--state-dir', dir]);
      expect(text.stdout).toContain(`(of 2: ${a.url}, ${b.url})`);

      const bad = await runCli(['enroll', '--server', a.url, '--server', 'http://127.0.0.1:1/', '--token-file', tokenFile, '--host-id', hostId, '--state-dir', tempDir(), '--allow-insecure']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('http://127.0.0.1:1/');
      // no server answers: the error points at the servers and says the token is unspent
      const down = await runCli(['enroll', '--server', 'ws://127.0.0.1:1/ws/agent', '--server', 'ws://127.0.0.1:2/ws/agent', '--token-file', tokenFile, '--host-id', hostId, '--state-dir', tempDir(), '--allow-insecure']);
      expect(down.code).toBe(1);
      expect(down.stderr).toContain('error[E_CONNECT]: no server answered: ');
      expect(down.stderr).toContain('127.0.0.1:1');
      expect(down.stderr).toContain('127.0.0.1:2');
      expect(down.stderr).toContain('the token was not sent and is still good');
      expect(down.stderr).toContain('check that the server runs and that the URL is right');
      for (const out of [r.stdout, r.stderr, s.stdout, bad.stderr, down.stderr]) {
        expect(out).not.toContain(TOKEN);
        expect(out).not.toContain(ROTATED);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});
