#!/usr/bin/env node
// `npm run bench -- <name> [args]` runs bench/<name>.mjs. Each benchmark prints its figures
// and ends with one line of JSON.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs' && !f.startsWith('_'))
  .map((f) => f.slice(0, -4))
  .sort();
const [name, ...args] = process.argv.slice(2);
if (!name || name === '--help' || name === '-h') {
  process.stdout.write(`usage: npm run bench -- <name> [args]\navailable: ${available.join(', ')}\n`);
  process.exit(name ? 0 : 2);
}
const file = join(here, `${name}.mjs`);
if (!existsSync(file)) {
  process.stderr.write(`bench: no benchmark named ${JSON.stringify(name)} (available: ${available.join(', ')})\n`);
  process.exit(2);
}
const child = spawn(process.execPath, ['--expose-gc', file, ...args], { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
