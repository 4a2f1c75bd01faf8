// Found by the fault suite (a flaky enroll in server-kill): tokens are base64url, so about
// 1 in 4096 begins with "--", and `cortex-agent enroll --token <T>` then exits 2 with
// "--token needs a value" (agent/cli.ts treats a value starting with "--" as a missing
// value). Fixed: the CLI takes the next argument as the value unless it is another option
// of the command, and the server no longer issues tokens starting with "-". Deterministic:
// no server is needed to reach the argument parser.
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { AGENT_CLI, SERVER_CLI, cleanupTempDirs, cliSync, tempDir } from '../support/procs.js';

afterAll(() => cleanupTempDirs());

it('enroll accepts a token that begins with "--" (as `agent issue` can print one)', () => {
  const token = `--${'A'.repeat(41)}`; // 43 base64url characters, like generateToken()
  const r = cliSync(AGENT_CLI, ['enroll', '--server', 'ws://127.0.0.1:9/ws/agent', '--token', token, '--host-id', '6f1c1a8e-2b7d-4c55-9f0e-1a2b3c4d5e6f', '--state-dir', join(tempDir(), 's'), '--allow-insecure']);
  // connection refused is exit 1; a usage error (exit 2) means the token was not accepted as a value
  expect(r.stderr).not.toMatch(/--token needs a value/);
  expect(r.code).toBe(1);
});

// The same for the server CLI, whose parser is node's parseArgs: it refused
// `--admin-token -abc…` as "ambiguous" (exit 2). The examples/minimal-agent had the same
// bug; the conformance agent suite now enrolls a second host with a "-" token to catch it.
it('server commands accept an --admin-token that begins with "-", and still refuse an option where a value belongs', async () => {
  const { createServer } = await import('node:net');
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const r = cliSync(SERVER_CLI, ['probe', '6f1c1a8e-2b7d-4c55-9f0e-1a2b3c4d5e6f', 'uptime', '--url', `http://127.0.0.1:${port}`, '--admin-token', `-${'A'.repeat(42)}`]);
  expect(r.stderr).not.toMatch(/ambiguous/);
  expect(r.stderr).toMatch(/cannot reach/);
  expect(r.code).toBe(1);
  const usage = cliSync(SERVER_CLI, ['agent', 'list', '--db', '--json']);
  expect(usage.stderr).toContain('--db needs a value, and the argument after it starts with "-": if that is the value, write --db=VALUE');
  expect(usage.code).toBe(2);
});
