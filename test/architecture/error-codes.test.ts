// Every error a command line prints has a stable code (common/errors.ts, ERROR_CODES): each
// code is unique, documented once in docs/error-codes.md, and the programs use no other.
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, UsageError, describeCliError, formatCliError, installProblem } from '../../common/errors.js';

const repo = resolve(import.meta.dirname, '..', '..');
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (['node_modules', 'generated'].includes(e.name) ? [] : walk(join(dir, e.name))) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

describe('CLI error codes', () => {
  const codes = Object.keys(ERROR_CODES);

  it('are unique E_ names, each documented exactly once with what to do', () => {
    expect(codes.length).toBeGreaterThan(10);
    expect(new Set(codes).size).toBe(codes.length);
    for (const c of codes) expect(c).toMatch(/^E_[A-Z][A-Z_]*[A-Z]$/);
    const doc = readFileSync(join(repo, 'docs', 'error-codes.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(E_[A-Z_]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$/gm)];
    expect(rows.map((r) => r[1]).sort()).toEqual([...codes].sort());
    for (const r of rows) {
      expect(r[2]!.trim(), r[1]).toMatch(/^[12](, [12])*$/);
      expect(r[4]!.trim().length, r[1]).toBeGreaterThan(10);
    }
    for (const [c, hint] of Object.entries(ERROR_CODES)) expect(hint.length, c).toBeGreaterThan(10);
  });

  it('the programs use only catalogued codes', () => {
    const used = new Map<string, string>();
    for (const dir of ['server', 'agent', 'codegen', 'conformance', 'fleet', 'common']) {
      for (const f of walk(join(repo, dir))) {
        for (const m of readFileSync(f, 'utf8').matchAll(/(?:code: |formatCliError\()'(E_[A-Z_]+)'/g)) used.set(m[1]!, f);
      }
    }
    expect(used.size).toBeGreaterThan(10);
    for (const [code, file] of used) expect(codes, `${code} in ${file}`).toContain(code);
  });

  it('print as error[CODE]: what went wrong — what to do', () => {
    expect(formatCliError('E_DB_OPEN', 'no database at x.db')).toBe(`error[E_DB_OPEN]: no database at x.db — ${ERROR_CODES.E_DB_OPEN}`);
    // a message ending in a usage text keeps it below the first line
    expect(formatCliError('E_USAGE', 'unknown option --x\n\nusage: y', 'see y --help')).toBe('error[E_USAGE]: unknown option --x — see y --help\n\nusage: y');
    const usage = new UsageError('give exactly one HOST_ID');
    expect([usage.code, usage.hint]).toEqual(['E_USAGE', ERROR_CODES.E_USAGE]);
    expect(describeCliError(new UsageError('x exists', { code: 'E_FILE_EXISTS', hint: 'pick y' })).text).toBe('error[E_FILE_EXISTS]: x exists — pick y');
    expect(describeCliError(new Error('boom')).code).toBe('E_INTERNAL');
    expect(describeCliError(Object.assign(new Error('refused'), { code: 'E_CONNECT' })).code).toBe('E_CONNECT');
  });

  it('an incomplete install is said as such whatever wrapped it (the packaged bindings shim, L11)', () => {
    const shim = Object.assign(new Error('this installation is incomplete: the native addon lib/better_sqlite3.node is missing or unreadable (ERR_DLOPEN_FAILED, /opt/x/lib/better_sqlite3.node): unpack the tarball again into /opt/x'), { name: 'CortexInstallError', code: 'E_INSTALL_INCOMPLETE' });
    const wrapped = new Error(`buffer /var/lib/cortex-agent/buffer.db: open failed: ${shim.message}`, { cause: new Error('middle', { cause: shim }) });
    for (const e of [shim, wrapped]) {
      const d = describeCliError(e);
      expect(d.code).toBe('E_INSTALL_INCOMPLETE');
      expect(d.text).toBe(`error[E_INSTALL_INCOMPLETE]: ${shim.message} — ${ERROR_CODES.E_INSTALL_INCOMPLETE}`);
    }
    expect(installProblem(new Error('x', { cause: new Error('y') }))).toBeUndefined();
  });

  it('UsageError has one definition, in common/', () => {
    const defs: string[] = [];
    for (const dir of ['server', 'agent', 'codegen', 'conformance', 'fleet', 'common']) {
      for (const f of walk(join(repo, dir))) if (/class UsageError\b/.test(readFileSync(f, 'utf8'))) defs.push(f.slice(repo.length + 1));
    }
    expect(defs).toEqual(['common/errors.ts']);
  });
});
