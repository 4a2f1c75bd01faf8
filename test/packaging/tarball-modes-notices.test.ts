// packaging/package.mjs: the tarballs' modes do not depend on the umask of the build (built
// under umask 077 they held 0700 folders: root unpacks with the stored modes, and the service
// user could not run its own install), and the notices name the packages a generated file of
// this repository already bundles (generated/dist/validators.js carries ajv's and ajv-formats'
// code: the agent's notices left them out), and the launcher's `cd` ignores CDPATH (started
// by a relative path with CDPATH set, it took the folder found through CDPATH for the one it
// was invoked through).
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations
import { notices } from '../../packaging/package.mjs';
import { ROOT, cleanupTempDirs, requireDist, tempDir } from '../support/procs.js';

const collect = notices as (metafile: { inputs: Record<string, unknown> }, extra: string[]) => { text: string; packages: string[] };
let built: { version: string; platform: string; artifacts: { name: string; tarball: string }[] };

// one build, under umask 077, for the tests below
beforeAll(() => {
  requireDist();
  const out = tempDir('cortex-artifacts-umask-');
  const r = spawnSync('sh', ['-c', 'umask 077 && exec "$0" packaging/package.mjs --out "$1"', process.execPath, out], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`packaging/package.mjs failed (${r.status}): ${r.stderr}`);
  built = JSON.parse(r.stdout.trim().split('\n').pop()!) as typeof built;
}, 60_000);
afterAll(() => cleanupTempDirs());

it('built under umask 077, every folder is 0755 and every file readable by all, writable by its owner only; the agent names ajv and ajv-formats', () => {
  for (const a of built.artifacts) {
    const list = spawnSync('tar', ['-tvzf', a.tarball], { encoding: 'utf8' });
    expect(list.status, list.stderr).toBe(0);
    const entries = list.stdout.trim().split('\n').map((l) => ({ mode: l.split(/\s+/)[0]!, path: l.split(/\s+/).pop()! }));
    expect(entries.length).toBeGreaterThan(10);
    for (const { mode, path } of entries) {
      if (path.endsWith('/')) expect(`${mode} ${path}`).toBe(`drwxr-xr-x ${path}`);
      else expect(`${mode} ${path}`).toMatch(/^-rw.r..r.. /);
    }
    expect(entries.find((e) => e.path.endsWith(`/bin/${a.name}`))?.mode).toBe('-rwxr-xr-x');
    const base = `${a.name}-${built.version}-${built.platform}`;
    const info = JSON.parse(spawnSync('tar', ['-xOzf', a.tarball, `${base}/BUILD.json`], { encoding: 'utf8' }).stdout) as { bundled: string[] };
    const text = spawnSync('tar', ['-xOzf', a.tarball, `${base}/THIRD-PARTY-NOTICES.txt`], { encoding: 'utf8' }).stdout;
    for (const p of ['ajv', 'ajv-formats']) {
      const entry = info.bundled.find((b) => b.startsWith(`${p}@`) && /^[^@]+@[^@]+$/.test(b));
      expect(entry, `${a.name}: ${p}`).toBeDefined();
      expect(text, `${a.name}: ${entry}`).toContain(`${entry} (MIT)`);
    }
  }
});

it('started by a relative path through a link, with CDPATH naming another folder of that name, the launcher passes the folder it was invoked through', () => {
  const agent = built.artifacts.find((a) => a.name === 'cortex-agent')!;
  const home = tempDir('cortex-cdpath-');
  const t = spawnSync('tar', ['-xzf', agent.tarball, '-C', home], { encoding: 'utf8' });
  expect(t.status, t.stderr).toBe(0);
  symlinkSync(join(home, `cortex-agent-${built.version}-${built.platform}`), join(home, 'cortex-agent'));
  // a decoy cortex-agent/bin/ in a CDPATH folder
  const decoy = join(home, 'elsewhere');
  mkdirSync(join(decoy, 'cortex-agent', 'bin'), { recursive: true });
  // a "node" that prints what the launcher gives the program
  const node = join(home, 'node-prints-env');
  writeFileSync(node, '#!/bin/sh\necho "invoked=$CORTEX_INVOKED_HOME"\n', { mode: 0o755 });
  const r = spawnSync('cortex-agent/bin/cortex-agent', ['--help'], { cwd: home, env: { PATH: process.env['PATH'], CORTEX_NODE: node, CDPATH: decoy }, encoding: 'utf8' });
  expect({ code: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: `invoked=${join(home, 'cortex-agent')}\n`, stderr: '' });
});

it('a file of this repository that already bundles packages (esbuild path comments or CommonJS keys) brings their licences', () => {
  const dir = tempDir('cortex-prebundled-');
  const readable = join(dir, 'validators.js');
  writeFileSync(readable, '// node_modules/ajv-formats/dist/formats.js\nvar require_formats = __commonJS({\n  "node_modules/ajv-formats/dist/formats.js"(exports) {}\n});\n');
  const minified = join(dir, 'validators.min.js');
  writeFileSync(minified, 'var Uu=Du({"node_modules/ajv/dist/runtime/ucs2length.js"(t){t.default=1}});');
  const plain = join(dir, 'plain.js');
  writeFileSync(plain, '// a comment that names node_modules/ but bundles nothing\nconst s = "node_modules/pg/lib";\n');
  const r = collect({ inputs: { [readable]: {}, [minified]: {}, [plain]: {} } }, []);
  expect(r.packages.map((p) => p.replace(/@[^@]+$/, ''))).toEqual(['ajv', 'ajv-formats']);
  expect(r.text).toMatch(/ajv@\S+ \(MIT\)[\s\S]*Evgeny Poberezkin/);
});
