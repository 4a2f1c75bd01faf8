#!/usr/bin/env node
// `npm run contract:diff -- <git-ref> …`: the contract diff without a whole-project build.
// esbuild bundles codegen/diff/cli.ts (and the contract loader and common/errors.ts it imports, nothing else)
// into dist/codegen/diff/cli.mjs when that file is missing or older than its sources
// (about 0.1 s), then runs it with the same arguments, exit code and output.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'codegen', 'diff', 'cli.ts');
const out = join(root, 'dist', 'codegen', 'diff', 'cli.mjs');
const tsIn = (...dir) => readdirSync(join(root, ...dir)).filter((f) => f.endsWith('.ts')).map((f) => join(root, ...dir, f));
const sources = [join(root, 'codegen', 'contract.ts'), ...tsIn('codegen', 'diff'), ...tsIn('common')];

const stale = !existsSync(out) || sources.some((s) => statSync(s).mtimeMs > statSync(out).mtimeMs);
if (stale) {
  const { build } = await import('esbuild');
  await build({ entryPoints: [entry], outfile: out, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' });
}
const r = spawnSync(process.execPath, [out, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exitCode = r.status ?? 1;
