// packaging/package.mjs collects the licence of every package esbuild bundled, and refuses
// to package one that ships no licence file (issue 16).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations
import { notices } from '../../packaging/package.mjs';

const collect = notices as (metafile: { inputs: Record<string, unknown> }, extra: string[]) => { text: string; packages: string[] };
const dir = mkdtempSync(join(tmpdir(), 'cortex-notices-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function pkg(name: string, files: Record<string, string>): string {
  const d = join(dir, 'node_modules', name);
  mkdirSync(join(d, 'lib'), { recursive: true });
  writeFileSync(join(d, 'package.json'), JSON.stringify({ name, version: '1.2.3', license: 'MIT' }));
  for (const [f, text] of Object.entries(files)) writeFileSync(join(d, f), text);
  return join(d, 'lib', 'index.js');
}

it('lists each bundled package once, scoped ones too, with its licence text; a package without a licence file stops packaging', () => {
  const a = pkg('alpha', { LICENSE: 'MIT License\nCopyright alpha' });
  const b = pkg('@scope/beta', { 'LICENSE.md': 'ISC beta', NOTICE: 'beta notice' });
  const r = collect({ inputs: { [a]: {}, [`${a}.extra`]: {}, [b]: {}, [join(dir, 'src', 'own.js')]: {} } }, []);
  expect(r.packages).toEqual(['@scope/beta@1.2.3', 'alpha@1.2.3']);
  expect(r.text).toContain('alpha@1.2.3 (MIT)');
  expect(r.text).toContain('Copyright alpha');
  expect(r.text).toContain('ISC beta\n\nbeta notice');
  const c = pkg('gamma', {});
  expect(() => collect({ inputs: { [a]: {}, [c]: {} } }, [])).toThrow(/gamma@1\.2\.3 is bundled but ships no licence file/);
});
