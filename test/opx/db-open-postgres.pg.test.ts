// A PostgreSQL that answers but refuses what --db asks (PostgreSQL project only): an unknown
// user and a missing database are the operator's to fix (exit 2, E_DB_OPEN, what to do), not
// "this is a bug" (E_INTERNAL, as SQLSTATE 28000 printed before).
import { beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../server/spawn.js';
import { PG_TEST_URL } from '../support/postgres-project.js';
import { server } from './helpers.js';

beforeAll(() => buildServer(), 120_000);

function withUrl(change: (u: URL) => void): string {
  const u = new URL(PG_TEST_URL);
  u.search = '';
  change(u);
  return u.toString();
}

describe('PostgreSQL refuses the --db', () => {
  it('an unknown user: E_DB_OPEN naming the user, the password redacted', () => {
    const db = withUrl((u) => {
      u.username = 'cortex_no_such_role';
      u.password = 'hunter2';
    });
    for (const args of [['serve', '--listen', '127.0.0.1:0'], ['agent', 'list']]) {
      const r = server([...args, '--db', db]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/error\[E_DB_OPEN\]: PostgreSQL refused the user "cortex_no_such_role": .* — check the user and password in the URL, and pg_hba\.conf/);
      expect(r.stderr).not.toContain('hunter2');
    }
  });

  it('a database that does not exist: E_DB_OPEN saying to create it', () => {
    const db = withUrl((u) => {
      u.pathname = '/cortex_no_such_db';
    });
    const r = server(['agent', 'list', '--db', db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error\[E_DB_OPEN\]: PostgreSQL has no database "cortex_no_such_db": .* — create it \(createdb cortex_no_such_db\) or fix the URL/);
  });
});
