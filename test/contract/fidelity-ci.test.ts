/**
 * The fidelity suite's handling of a missing seed: skipped with a message outside CI, a failure
 * when CI is set. Runs fidelity.test.ts in a child vitest with CORTEX_SEED_PATH pointing nowhere.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const vitestBin = join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs');
const missingSeed = join(tmpdir(), 'no-such-dir', 'agent-protocol-v1.md');

function runFidelity(ci: boolean): Promise<{ code: number | null; output: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(VITEST|CI$|NODE_OPTIONS$)/.test(k)) env[k] = v;
  }
  env['CORTEX_SEED_PATH'] = missingSeed;
  env['NO_COLOR'] = '1';
  if (ci) env['CI'] = '1';
  return new Promise((done) => {
    execFile(
      process.execPath,
      [vitestBin, 'run', 'test/contract/fidelity.test.ts', '--reporter=verbose'],
      { cwd: repoRoot, env, maxBuffer: 8 * 1024 * 1024 },
      (error, stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: stdout + stderr }),
    );
  });
}

describe.concurrent('fidelity suite without the seed', () => {
  it('is skipped with a message saying so when CI is not set', async () => {
    const run = await runFidelity(false);
    expect(run.output).toContain(`contract fidelity SKIPPED: seed ${missingSeed} not found`);
    expect(run.code).toBe(0);
  });

  it('fails when CI is set', async () => {
    const run = await runFidelity(true);
    expect(run.code).not.toBe(0);
    expect(run.output).toContain(`CI is set but the seed ${missingSeed} is missing`);
  });
});
