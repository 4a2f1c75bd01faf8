// The agent loads its CommonJS packages through agent/cjs.ts (createRequire), never with a
// value `import` (DECISIONS P9): an ESM import of a CommonJS file runs Node's cjs-module-lexer
// over it at start-up, which cost the idle agent 1.5-5 MiB of resident memory, and an ESM
// import of node:tls reads its whole CA list. Type-only imports are free and allowed.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');
const REQUIRED = ['pino', 'better-sqlite3', 'ws', 'node:tls', 'tls'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? tsFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

/** Value imports (and re-exports) of `names` in a TypeScript source: `import type` and `export type` are not counted. */
function valueImportsOf(source: string, names: readonly string[]): string[] {
  const found: string[] = [];
  const re = /^\s*(import|export)\s+(type\s+)?([^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
  for (const m of source.matchAll(re)) {
    if (m[2] !== undefined) continue; // import type … / export type …
    if (names.includes(m[4]!)) found.push(m[4]!);
  }
  for (const m of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    // a dynamic import( ) in an expression (a `typeof import('x')` type is not one)
    const before = source.slice(Math.max(0, m.index - 7), m.index);
    if (!/typeof\s*$/.test(before) && names.includes(m[1]!)) found.push(m[1]!);
  }
  return found;
}

describe('agent CommonJS packages', () => {
  it('no agent module imports pino, better-sqlite3, ws or node:tls as a value: agent/cjs.ts requires them', () => {
    const offenders: string[] = [];
    for (const f of tsFiles(join(repo, 'agent'))) {
      for (const name of valueImportsOf(readFileSync(f, 'utf8'), REQUIRED)) offenders.push(`${relative(repo, f)}: ${name}`);
    }
    expect(offenders).toEqual([]);
  });

  it('the check sees a value import and lets a type-only one through', () => {
    expect(valueImportsOf(`import pino from 'pino';\nimport type WebSocket from 'ws';\nimport { rootCertificates } from 'node:tls';\n`, REQUIRED)).toEqual(['pino', 'node:tls']);
    expect(valueImportsOf(`const x = await import('ws');\ntype T = typeof import('node:tls');\nexport { default } from 'better-sqlite3';\n`, REQUIRED)).toEqual(['better-sqlite3', 'ws']);
  });
});
