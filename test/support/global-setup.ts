// vitest's globalSetup: brings dist/ up to date (incremental `tsc -b`, about a second when
// nothing changed; `npm test` has built already) and bundles the CLIs the tests spawn
// (test/support/cli-bundles.ts), once per run, before any test file starts.
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCliBundles } from './cli-bundles.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export default async function setup(): Promise<void> {
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b'], { cwd: ROOT, stdio: 'inherit' });
  await buildCliBundles();
}
