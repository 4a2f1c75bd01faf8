// The generated package's version follows the contract (issue 16): contract/releases.json,
// contract:release (classifies with contract:diff, bumps, records), CHANGELOG.md, and the
// drift check failing while the contract is ahead of its newest release.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadContract } from '../../codegen/contract.js';
import { packageJson } from '../../codegen/emit-package.js';
import { currentRelease, nextVersion, renderChangelog, type Release } from '../../codegen/release.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'cortex-release-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

describe('versions', () => {
  it('breaking → the new protocol major, additive → minor, nothing on the wire → patch', () => {
    expect(nextVersion('1.0.0', { breaking: 0, additive: 2 }, 1)).toBe('1.1.0');
    expect(nextVersion('1.4.2', { breaking: 0, additive: 0 }, 1)).toBe('1.4.3');
    expect(nextVersion('1.4.2', { breaking: 3, additive: 1 }, 2)).toBe('2.0.0');
    expect(() => nextVersion('1.4.2', { breaking: 1, additive: 0 }, 1)).toThrow(/protocol_version/);
    expect(() => nextVersion('1.4.2', { breaking: 0, additive: 1 }, 2)).toThrow(/breaking/);
  });

  it('CHANGELOG.md: newest first, grouped by kind, an Unreleased note while the contract is ahead', () => {
    const releases: Release[] = [
      { version: '1.1.0', contract_sha256: 'b'.repeat(64), changes: [{ kind: 'additive', rule: 'property-added', where: 'schemas/x.json', detail: 'optional property y added' }] },
      { version: '1.0.0', contract_sha256: 'a'.repeat(64), changes: [{ kind: 'other', detail: 'First release.' }] },
    ];
    const md = renderChangelog('@x/y', releases);
    expect(md.indexOf('## 1.1.0')).toBeLessThan(md.indexOf('## 1.0.0'));
    expect(md).toContain('### Added\n\n- optional property y added (`schemas/x.json`)');
    expect(md).not.toContain('Unreleased');
    expect(renderChangelog('@x/y', releases, 'run it')).toContain('## Unreleased');
  });
});

describe('contract:release and codegen', () => {
  it('an additive change: codegen:check fails while it is unreleased; contract:release records 1.1.0; version and CHANGELOG follow', () => {
    // relative to the repository's newest release (1.0.0 when this test was written)
    const base = (JSON.parse(readFileSync(join(repo, 'contract', 'releases.json'), 'utf8')) as { version: string }[])[0]!.version;
    const [major, min] = base.split('.').map(Number) as [number, number];
    const minor = `${major}.${min + 1}.0`;
    const patchV = `${major}.${min + 1}.1`;
    // a scratch repository holding a copy of contract/ and generated/
    const root = tmp();
    cpSync(join(repo, 'contract'), join(root, 'contract'), { recursive: true });
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'release 1.0.0');
    const contract = join(root, 'contract');
    const out = join(root, 'generated');
    const codegen = (...args: string[]) => spawnSync(process.execPath, [join(repo, 'dist/codegen/cli.js'), '--contract', contract, '--out', out, ...args], { encoding: 'utf8' });

    // additive: a new optional property
    const file = join(contract, 'schemas', 'agent.heartbeat.params.json');
    const s = JSON.parse(readFileSync(file, 'utf8')) as { properties: Record<string, unknown> };
    s.properties['load_avg'] = { type: 'number', minimum: 0 };
    writeFileSync(file, JSON.stringify(s, null, 2));
    const write = codegen();
    expect(write.status).toBe(0);
    expect(write.stderr).toContain(`warning: contract/ changed since release ${base}`);
    expect(readFileSync(join(out, 'CHANGELOG.md'), 'utf8')).toContain('## Unreleased');
    // every generated file is in step, and still the check fails: the release is not recorded
    const check = codegen('--check');
    expect(check.status).toBe(1);
    expect(check.stderr).toContain('npm run contract:release');
    expect(check.stderr).not.toContain('differs:');

    const release = spawnSync(process.execPath, [join(repo, 'dist/codegen/release-cli.js'), 'HEAD', '--contract', contract, '--json'], { encoding: 'utf8' });
    expect(release.status, release.stderr).toBe(0);
    const entry = JSON.parse(release.stdout) as Release;
    const recorded = readFileSync(join(contract, 'releases.json'), 'utf8');
    expect(entry.version).toBe(minor);
    expect(entry.changes.some((c) => c.kind === 'additive' && c.detail.includes('load_avg'))).toBe(true);
    expect(entry.changes.every((c) => c.kind !== 'breaking')).toBe(true);

    // what codegen now generates the package as (the same functions generate() calls)
    const now = currentRelease(loadContract(contract), contract);
    expect(now.stale).toBeUndefined();
    expect(now.version).toBe(minor);
    expect(packageJson('@cortex/agent-protocol', now.version, { version: major, subprotocol: `cortex.v${major}` })).toContain(`"version": "${minor}"`);
    const changelog = renderChangelog('@cortex/agent-protocol', now.releases);
    expect(changelog).toMatch(new RegExp(`## ${minor.replace(/\./g, '\\.')}\n\n### Added\n\n- .*load_avg`));
    expect(changelog).not.toContain('Unreleased');

    // nothing more to record; a ref that does not hold the newest release is refused
    const again = spawnSync(process.execPath, [join(repo, 'dist/codegen/release-cli.js'), 'HEAD', '--contract', contract], { encoding: 'utf8' });
    expect(again.status).toBe(0);
    expect(again.stderr).toContain('nothing to record');
    const d = JSON.parse(readFileSync(file, 'utf8')) as { description: string };
    d.description += ' (reworded)';
    writeFileSync(file, JSON.stringify(d, null, 2));
    // 1.1.0 is recorded but not committed: amending the contract records it again (still 1.1.0)
    const amended = spawnSync(process.execPath, [join(repo, 'dist/codegen/release-cli.js'), 'HEAD', '--contract', contract, '--json'], { encoding: 'utf8' });
    expect(amended.status, amended.stderr).toBe(0);
    expect(amended.stderr).toContain(`release ${minor} is recorded in contract/releases.json but not committed`);
    const reRecorded = JSON.parse(readFileSync(join(contract, 'releases.json'), 'utf8')) as Release[];
    expect(reRecorded.map((r) => r.version).slice(0, 2)).toEqual([minor, base]);
    expect((JSON.parse(amended.stdout) as Release).changes.some((c) => c.detail.includes('load_avg'))).toBe(true);
    writeFileSync(join(contract, 'releases.json'), recorded); // back to 1.1.0 as first recorded

    // with 1.1.0 committed: the reworded description (nothing new on the wire) is a patch
    const releaseAt = (ref: string) => spawnSync(process.execPath, [join(repo, 'dist/codegen/release-cli.js'), ref, '--contract', contract, '--json'], { encoding: 'utf8' });
    writeFileSync(file, JSON.stringify(s, null, 2)); // back to the 1.1.0 contract
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'release 1.1.0');
    writeFileSync(file, JSON.stringify({ ...s, description: `${(s as unknown as { description: string }).description} (reworded)` }, null, 2));
    const patch = releaseAt('HEAD');
    expect(patch.status, patch.stderr).toBe(0);
    const patchEntry = JSON.parse(patch.stdout) as Release;
    expect(patchEntry.version).toBe(patchV);
    expect(patchEntry.changes.map((c) => [c.kind, c.rule])).toEqual([['other', 'annotation-changed']]);
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'release 1.1.1');

    // a breaking change without the protocol bump is refused and records nothing
    const before = readFileSync(join(contract, 'releases.json'), 'utf8');
    const narrowed = JSON.parse(readFileSync(file, 'utf8')) as { properties: { load_avg: { maximum?: number } } };
    narrowed.properties.load_avg.maximum = 100; // what agents send narrowed: old agents' heartbeats may be refused (the examples stay valid)
    writeFileSync(file, JSON.stringify(narrowed, null, 2));
    const breaking = releaseAt('HEAD');
    expect(breaking.status).toBe(1);
    expect(breaking.stderr).toContain('breaking change(s) without protocol_version and subprotocol bumped together');
    expect(readFileSync(join(contract, 'releases.json'), 'utf8')).toBe(before);
  }, 120_000);

  it('a ref holding none of the recorded releases is refused as such (E_GIT_REF, what to do, no usage text)', () => {
    const root = tmp();
    cpSync(join(repo, 'contract'), join(root, 'contract'), { recursive: true });
    const contract = join(root, 'contract');
    const file = join(contract, 'schemas', 'agent.heartbeat.params.json');
    const s = JSON.parse(readFileSync(file, 'utf8')) as { description: string };
    writeFileSync(file, JSON.stringify({ ...s, description: `${s.description} (a)` }, null, 2));
    git(root, 'init', '-q');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'not a release');
    writeFileSync(file, JSON.stringify({ ...s, description: `${s.description} (b)` }, null, 2));
    const r = spawnSync(process.execPath, [join(repo, 'dist/codegen/release-cli.js'), 'HEAD', '--contract', contract], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('E_GIT_REF');
    expect(r.stderr).toContain('none of the releases in contract/releases.json');
    expect(r.stderr).toContain('git log --oneline -- contract/releases.json');
    expect(r.stderr).not.toContain('usage:');
    expect(r.stderr).not.toContain('E_USAGE');
  }, 60_000);
});
