// `cortex-server --version` / `version`: one line (or one JSON object) and exit 0; the
// version constant the server announces in its hello result follows package.json.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SERVER_VERSION } from '../../server/server.js';
import { ROOT, requireServerCli, cli } from './spawn.js';

const pkgVersion = (file: string) => (JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { version: string }).version;

beforeAll(() => requireServerCli(), 60_000);

describe('cortex-server --version', () => {
  it('SERVER_VERSION is package.json version (a release bump cannot leave it behind)', () => {
    expect(SERVER_VERSION).toBe(pkgVersion('package.json'));
  });

  it('--version and version print one line with the server, protocol and Node versions and exit 0', () => {
    const line = `cortex-server ${SERVER_VERSION} (protocol ${pkgVersion('generated/package.json')}, node ${process.version}, ${process.platform}-${process.arch})\n`;
    for (const args of [['--version'], ['version']]) {
      const r = cli(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toBe(line);
      expect(r.stderr).toBe('');
    }
  });

  it('--version --json prints one JSON object; a stray option is bad usage (exit 2)', () => {
    const r = cli(['--version', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      name: 'cortex-server',
      version: SERVER_VERSION,
      protocol: pkgVersion('generated/package.json'),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    });
    const bad = cli(['--version', '--nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--nope');
  });

  it('--help names --version', () => {
    const r = cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}version, --version +\S/m);
  });
});
