// serve prints its human banner on stdout only and JSON log lines on stderr only; the
// banner and `agent issue` give complete enroll commands (npm run agent -- enroll …
// --allow-insecure for ws://) that work as printed.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireServerCli, serve, type ServeProcess } from '../server/spawn.js';
import { AGENT_CLI, issue, server, tmp } from './helpers.js';

let s: ServeProcess | undefined;
beforeAll(() => requireServerCli(), 120_000);
afterAll(async () => {
  if (s && s.child.exitCode === null) {
    s.child.kill('SIGTERM');
    await s.exited;
  }
});

it('banner on stdout, JSON on stderr, and the printed enroll command works as given', async () => {
  const dir = tmp();
  const db = join(dir, 'data', 'c.db');
  issue(db, 'first'); // creates the database
  s = await serve(['--db', db, '--shutdown-drain-secs', '0']);
  const banner = s.stdout();
  expect(banner).toContain(`cortex-server listening on ${s.url}`);
  expect(banner).toContain(`npm run server -- agent issue --host HOSTNAME --db ${db}`);
  expect(banner).toContain(`npm run agent -- enroll --server ${s.url} --token - --host-id HOST_ID --state-dir ./cortex-agent-state --allow-insecure`);
  expect(banner).toContain('npm run agent -- run --state-dir ./cortex-agent-state --allow-insecure');
  expect(banner).not.toContain('{"level"');
  expect(banner).not.toMatch(/^cortex-agent /m);
  for (const line of s.stderr().split('\n').filter(Boolean)) expect(() => JSON.parse(line), line).not.toThrow();

  const r = server(['agent', 'issue', '--host', 'web-1', '--db', db]);
  expect(r.code).toBe(0);
  const token = /^token: +(\S+)$/m.exec(r.stdout)?.[1] as string;
  const hostId = /^host_id: +(\S+)$/m.exec(r.stdout)?.[1] as string;
  expect(r.stderr).not.toContain(token);
  const line = r.stdout.split('\n').find((l) => l.includes('npm run agent -- enroll')) as string;
  // the token is not on the command (--token -: enroll reads it from stdin, asking for it at a terminal)
  expect(line.trim()).toBe(`npm run agent -- enroll --server ${s.url} --token - --host-id ${hostId} --state-dir ./cortex-agent-state --allow-insecure`);
  // Run it as printed (npm run agent -- X is node dist/agent/cli.js X), in a temp folder, the token on stdin.
  const args = line.trim().replace('npm run agent -- ', '').split(' ');
  const work = tmp();
  const enrolled = spawnSync(process.execPath, [AGENT_CLI, ...args], { cwd: work, encoding: 'utf8', input: `${token}\n`, timeout: 30_000 });
  expect(enrolled.status, enrolled.stderr).toBe(0);
  expect(existsSync(join(work, 'cortex-agent-state', 'token'))).toBe(true);
}, 120_000); // CLI runs: about 0.5 s each, more under load
