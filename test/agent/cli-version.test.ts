// `cortex-agent --version` / `version` (run from an esbuild bundle of agent/cli.ts, as the
// release tarball runs it): one line (or one JSON object) and exit 0; the agent_version the
// agent sends in its hello follows package.json.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENT_VERSION } from '../../agent/handshake.js';
import { bundleChild } from './fixtures/bundle.js';
import { cleanupDirs, tempDir } from './helpers/agent-harness.js';

const pkgVersion = (file: string) => (JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')) as { version: string }).version;

let cli = '';
beforeAll(async () => {
  cli = await bundleChild(new URL('../../agent/cli.ts', import.meta.url).pathname, tempDir(), 'cli');
}, 60_000);
afterAll(cleanupDirs);

function run(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('cortex-agent --version', () => {
  it('AGENT_VERSION is package.json version (a release bump cannot leave it behind)', () => {
    expect(AGENT_VERSION).toBe(pkgVersion('package.json'));
  });

  it('--version and version print one line with the agent, protocol and Node versions and exit 0', () => {
    const line = `cortex-agent ${AGENT_VERSION} (protocol ${pkgVersion('generated/package.json')}, node ${process.version}, ${process.platform}-${process.arch})\n`;
    for (const args of [['--version'], ['version']]) {
      const r = run(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toBe(line);
      expect(r.stderr).toBe('');
    }
  });

  it('--version --json prints one JSON object; a stray option is bad usage (exit 2)', () => {
    const r = run(['--version', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      name: 'cortex-agent',
      version: AGENT_VERSION,
      protocol: pkgVersion('generated/package.json'),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    });
    const bad = run(['--version', '--nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--nope');
  });

  it('--help names --version', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}version, --version +\S/m);
  });
});
