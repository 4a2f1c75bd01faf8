// `serve --db-wait-secs` counts its wait in the time the process has seen pass (DECISIONS G45).
// By the wall clock, a clock stepped back while it waited (`date -s`, an NTP step) made it wait
// for as long as the step — 60 days — and say nothing more after its first line (the line
// repeats once a minute by the same clock); one stepped ahead made it give up at once. The
// compiled CLI under test/support/clock-step-on-signal.mjs (Date stepped at SIGUSR2), waiting on
// a PostgreSQL that is not there (127.0.0.1:1 refuses).
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireServerCli, CLI, ROOT } from './spawn.js';

const DAY = 86_400_000;

describe('serve --db-wait-secs, the clock stepped while it waits', () => {
  beforeAll(() => requireServerCli());

  it('60 days back: it gives up after --db-wait-secs all the same, saying it cannot reach PostgreSQL', async () => {
    const preload = resolve(ROOT, 'test/support/clock-step-on-signal.mjs');
    const child = spawn(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', '--db-wait-secs', '4', '--db', 'postgres://cortex@127.0.0.1:1/cortex'], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import=${preload}`.trim(), CORTEX_TEST_CLOCK_STEP_MS: String(-60 * DAY) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const waiting = new Promise<void>((r) => {
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
        if (stderr.includes('the database is out of reach; trying again every 2 s (--db-wait-secs)')) r();
      });
    });
    const started = performance.now();
    let bound: ReturnType<typeof setTimeout> | undefined;
    try {
      await waiting;
      child.kill('SIGUSR2');
      const code = await Promise.race([exited, new Promise<'still waiting'>((r) => (bound = setTimeout(() => r('still waiting'), 15_000)))]);
      expect(stderr).toContain('test clock: stepped');
      expect(code, 'still waiting 15 s after a wait of 4 s: the wait follows the stepped clock').toBe(2);
      expect(performance.now() - started).toBeGreaterThanOrEqual(3900);
      expect(stderr).toMatch(/cortex-server: error\[E_DB_OPEN\]: cannot reach PostgreSQL at 127\.0\.0\.1:1: ECONNREFUSED/);
    } finally {
      clearTimeout(bound);
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    }
  });
});
