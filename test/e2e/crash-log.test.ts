// A bug that escapes (uncaught exception, unhandled rejection) in `serve` or `run` is one
// JSON line at level fatal with its stack, secrets cut out, and exit status 1.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

function crash(module: 'server' | 'agent', how: 'throw' | 'reject'): { status: number | null; lines: Record<string, unknown>[]; stderr: string } {
  const url = new URL(`file://${join(ROOT, 'dist', module, 'log.js')}`).href;
  const script = `
    const { createLogger, logCrashes } = await import(${JSON.stringify(url)});
    logCrashes(createLogger({}), (t) => t.split('s3cr3t-token').join('[redacted]'));
    setTimeout(() => {
      const err = new Error('boom with s3cr3t-token inside');
      if (${JSON.stringify(how)} === 'throw') throw err;
      void Promise.reject(err);
    }, 10);
    setTimeout(() => process.stdout.write('still running'), 2000);
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 15_000 });
  const lines = r.stderr.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { status: r.status, lines, stderr: r.stderr };
}

for (const module of ['server', 'agent'] as const) {
  for (const how of ['throw', 'reject'] as const) {
    it(`${module}: ${how === 'throw' ? 'an uncaught exception' : 'an unhandled rejection'} → one fatal JSON line, no secret, exit 1`, () => {
      const r = crash(module, how);
      expect(r.status).toBe(1);
      expect(r.lines).toHaveLength(1); // every stderr line parsed as JSON above
      const line = r.lines[0]!;
      expect(line['level']).toBe('fatal');
      expect(line['kind']).toBe(how === 'throw' ? 'uncaught exception' : 'unhandled rejection');
      expect(String(line['err'])).toMatch(/Error: boom with \[redacted\] inside\n\s+at /);
      expect(r.stderr).not.toContain('s3cr3t-token');
    });
  }
}

for (const module of ['server', 'agent'] as const) {
  it(`${module}: a process warning (pg's on sslmode=require, a deprecation) → one warn JSON line, no secret, the process goes on`, () => {
    const url = new URL(`file://${join(ROOT, 'dist', module, 'log.js')}`).href;
    const script = `
      const { createLogger, logCrashes } = await import(${JSON.stringify(url)});
      logCrashes(createLogger({}), (t) => t.split('s3cr3t-token').join('[redacted]'));
      process.emitWarning('first line with s3cr3t-token\\nsecond line', 'SecurityWarning');
      process.emitWarning('old API', { type: 'DeprecationWarning', code: 'DEP0999' });
      setTimeout(() => process.stdout.write('still running'), 50);
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 15_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('still running');
    const lines = r.stderr.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toMatchObject([
      { level: 'warn', warning: 'SecurityWarning', msg: 'first line with [redacted]\nsecond line' },
      { level: 'warn', warning: 'DeprecationWarning', code: 'DEP0999', msg: 'old API' },
    ]);
  });
}
