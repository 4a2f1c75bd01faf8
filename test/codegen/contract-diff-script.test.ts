// `npm run contract:diff` runs scripts/contract-diff.mjs: an esbuild bundle of the diff CLI
// alone (no whole-project build on the way), rebuilt when its sources are newer.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');
const script = join(repo, 'scripts', 'contract-diff.mjs');
const temp = mkdtempSync(join(tmpdir(), 'cortex-diff-script-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function run(...args: string[]) {
  return spawnSync(process.execPath, [script, ...args], { cwd: repo, encoding: 'utf8' });
}

describe('contract:diff script', () => {
  it('compares two contract directories with the bundled CLI: identical → exit 0', () => {
    const r = run('--against', join(repo, 'contract'), '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ changes: [], breaking: 0, exit_code: 0 });
    expect(readFileSync(join(repo, 'dist', 'codegen', 'diff', 'cli.mjs'), 'utf8')).toContain('contract:diff');
  });

  it('a narrowed limit in a copy is reported breaking with exit 1; bad usage exits 2', () => {
    const old = join(temp, 'old');
    cpSync(join(repo, 'contract'), old, { recursive: true });
    const limits = JSON.parse(readFileSync(join(old, 'limits.json'), 'utf8')) as { limits: Record<string, { value: number }> };
    const frame = limits.limits['max_frame_bytes']!;
    frame.value = frame.value * 2; // old accepted more: the current contract narrows it
    writeFileSync(join(old, 'limits.json'), JSON.stringify(limits, null, 2));
    const r = run('--against', old);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/BREAKING .* at limits\.json:max_frame_bytes/);
    const usage = run('--no-such-option');
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/^contract:diff: error\[E_USAGE\]: unknown option/);
  });

  it('runs on a fresh clone with nothing built: bundles the diff CLI alone, not the project', { timeout: 60_000 }, () => {
    const clone = join(temp, 'clone');
    const git = spawnSync('git', ['clone', '--quiet', '--no-hardlinks', repo, clone], { encoding: 'utf8' });
    expect(git.status, git.stderr).toBe(0);
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    // the installed packages, as `npm ci` would leave them (the clone has none)
    symlinkSync(join(repo, 'node_modules'), join(clone, 'node_modules'), 'dir');
    const r = spawnSync(process.execPath, [join(clone, 'scripts', 'contract-diff.mjs'), 'HEAD', '--json'], { cwd: clone, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ changes: [], breaking: 0, exit_code: 0 });
    // nothing but the one bundle was built
    const built = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? built(join(dir, e.name)) : [join(dir, e.name).slice(clone.length + 1)]));
    expect(built(join(clone, 'dist'))).toEqual(['dist/codegen/diff/cli.mjs']);
  });
});
