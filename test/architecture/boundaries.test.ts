// The architecture's import rules (.dependency-cruiser.cjs, run by `npm run lint`): the real
// tree keeps them, and a tree with forbidden imports (fixtures/) fails with each rule named.
import { cliAsync } from '../support/scli-pool.js';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');
const config = join(repo, '.dependency-cruiser.cjs');
const bin = join(repo, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}

function depcruise(cwd: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return cliAsync(args, { script: bin, cwd }).then((r) => ({ status: r.code, stdout: r.stdout, stderr: r.stderr }));
}

/** The violations (JSON report), and the exit status and text of the check as `npm run lint` runs it (the two runs side by side). */
async function cruise(cwd: string, paths: string[]): Promise<{ status: number | null; text: string; violations: Violation[] }> {
  const [json, err] = await Promise.all([depcruise(cwd, [...paths, '--config', config, '--output-type', 'json']), depcruise(cwd, [...paths, '--config', config])]);
  const out = JSON.parse(json.stdout) as { summary: { violations: Violation[] } };
  return { status: err.status, text: err.stdout + err.stderr, violations: out.summary.violations };
}

describe('import boundaries', () => {
  it('the repository keeps every rule', async () => {
    const dirs = ['server', 'agent', 'codegen', 'common', 'generated/src', 'conformance', 'fleet', 'console'];
    const r = await cruise(repo, dirs);
    expect(r.violations).toEqual([]);
    expect(r.status).toBe(0);
  }, 180_000);

  it('a forbidden import fails the check, naming the rule, the importer and the imported file', async () => {
    const r = await cruise(join(import.meta.dirname, 'fixtures'), ['server', 'agent', 'codegen', 'common', 'generated', 'conformance', 'fleet']);
    expect(r.status).not.toBe(0);
    const seen = r.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
    expect(seen).toEqual(
      [
        'agent-not-server: agent/buffer.ts -> server/server.ts',
        'codegen-not-programs: codegen/generate.ts -> agent/buffer.ts',
        'common-imports-nothing-of-ours: common/errors.ts -> server/server.ts',
        'generated-self-contained: generated/src/index.ts -> server/server.ts',
        // server/server.ts and agent/buffer.ts import each other: a circle as well
        'no-circular: agent/buffer.ts -> server/server.ts',
        'runners-on-generated-only: conformance/suite.ts -> server/server.ts',
        'server-not-agent: server/server.ts -> agent/buffer.ts',
      ].sort(),
    );
    expect(r.violations.every((v) => v.rule.severity === 'error')).toBe(true);
    expect(r.text).toContain('error server-not-agent: server/server.ts → agent/buffer.ts');
  }, 180_000);

  it('an import circle fails the check, type-only imports included (no-circular)', async () => {
    // circular/: server/ws/connection.ts and server/ws/context.ts import each other's types,
    // as the real ones did before the context stopped naming the connection.
    const r = await cruise(join(import.meta.dirname, 'circular'), ['server']);
    expect(r.status).not.toBe(0);
    expect(r.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual(['no-circular: server/ws/connection.ts -> server/ws/context.ts']);
    expect(r.text).toContain('error no-circular: server/ws/connection.ts');
  }, 180_000);
});
