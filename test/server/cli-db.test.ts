// Which database the CLI opens (--db PATH|URL, CORTEX_DB), `migrate`, and the refusals
// (unknown URL scheme, a schema newer than this version) on both dialects.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { migrations } from '../../server/db/migrations/index.js';
import { DbTargetError, openStorage, parseDbTarget, redactDbUrl } from '../../server/db/open.js';
import { itOn, newTestDb, testDialect, type TestDbTarget } from '../support/dialects.js';
import { requireServerCli, cli, ROOT, serve } from './spawn.js';
import { cliEach } from '../support/scli-pool.js';

beforeAll(() => requireServerCli(), 60_000);
const targets: TestDbTarget[] = [];
afterEach(async () => {
  for (const t of targets.splice(0)) await t.drop();
});
async function fresh(): Promise<TestDbTarget> {
  const t = await newTestDb(testDialect());
  targets.push(t);
  return t;
}

describe('--db selection', () => {
  itOn('sqlite')('parseDbTarget: postgres(ql):// URLs, plain paths, other schemes refused; redactDbUrl masks only a password', () => {
    expect(parseDbTarget('postgres://u@h:5432/d')).toEqual({ dialect: 'postgres', url: 'postgres://u@h:5432/d' });
    expect(parseDbTarget('POSTGRESQL://u@h/d').dialect).toBe('postgres');
    for (const path of ['./data/cortex.db', '/var/lib/cortex/c.db', 'c.db', 'C:\\cortex\\c.db', 'file:c.db']) {
      expect(parseDbTarget(path)).toEqual({ dialect: 'sqlite', path });
    }
    for (const bad of ['mysql://h/d', 'sqlite:///x.db', 'postgres:x', '']) expect(() => parseDbTarget(bad)).toThrow(DbTargetError);
    expect(redactDbUrl('postgres://u:s3cret@h:5432/d?options=-c%20search_path%3Dx')).toBe('postgres://u:***@h:5432/d?options=-c%20search_path%3Dx');
    expect(redactDbUrl('postgres://u@h/d')).toBe('postgres://u@h/d');
    expect(redactDbUrl('./data/with:colon@odd.db')).toBe('./data/with:colon@odd.db');
  });

  it('migrate --db applies the migrations once and reports them (--json: one JSON value)', async () => {
    const t = await fresh();
    const first = cli(['migrate', '--db', t.db, '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ dialect: testDialect(), applied: Object.keys(migrations) });
    const again = cli(['migrate', '--db', t.db]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/up to date; nothing applied/);
  });

  // dialect-independent: the sqlite run covers it
  itOn('sqlite')('an unknown URL scheme is refused (exit 2, nothing created), not taken for a file path', async () => {
    const commands = [['migrate'], ['agent', 'list'], ['serve']];
    // every refusal on its own: side by side
    const [half, pool, ...runs] = await cliEach([['agent', 'list', '--db', 'postgres:db.example'], ['serve', '--db-pool', '0'], ...commands.map((args) => [...args, '--db', 'mysql://root@127.0.0.1/cortex'])]);
    for (const [i, args] of commands.entries()) {
      const r = runs[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/unknown database URL scheme "mysql:\/\/".*postgres:\/\/.*file path/);
      expect(r.stdout).toBe('');
    }
    expect(half!.code).toBe(2);
    expect(half!.stderr).toMatch(/not a PostgreSQL URL: write postgres:\/\/USER@HOST:PORT\/DATABASE/);
    expect(existsSync(join(ROOT, 'mysql:'))).toBe(false);
    expect(existsSync(join(ROOT, 'postgres:db.example'))).toBe(false);
    expect(pool!.code).toBe(2);
    expect(pool!.stderr).toMatch(/--db-pool must be an integer 2\.\.1000/);
  });

  itOn('sqlite')('a --db that is a device or a folder: E_DB_OPEN saying so from every command (serve and migrate printed E_INTERNAL SQLITE_IOERR_FSYNC)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'cortex-db-folder-'));
    const commands = [['migrate'], ['agent', 'list'], ['serve', '--listen', '127.0.0.1:0']];
    // six refusals, side by side: [device, folder] per command
    const runs = await cliEach(commands.flatMap((args) => [[...args, '--db', '/dev/null'], [...args, '--db', folder]]));
    for (const [i, args] of commands.entries()) {
      const [dev, dir] = [runs[2 * i]!, runs[2 * i + 1]!];
      expect(dev.code, `${args.join(' ')}: ${dev.stderr}`).toBe(2);
      expect(dev.stderr).toContain(args[0] === 'agent' ? 'error[E_DB_OPEN]: --db /dev/null is not a regular file' : 'error[E_DB_OPEN]: --db /dev/null is not a regular file (a device, a pipe or a socket)');
      expect(dir.code, `${args.join(' ')}: ${dir.stderr}`).toBe(2);
      expect(dir.stderr).toContain(`error[E_DB_OPEN]: --db ${folder} is a folder, not a database file; give the file, e.g. --db ${join(folder, 'cortex.db')}`);
    }
    expect(readdirSync(folder)).toEqual([]);
    rmSync(folder, { recursive: true });
  });

  it('CORTEX_DB is the fallback when --db is not given', async () => {
    const t = await fresh();
    const issued = cli(['agent', 'issue', '--host', 'env-host', '--json'], { CORTEX_DB: t.db });
    expect(issued.code, issued.stderr).toBe(0);
    const listed = cli(['agent', 'list', '--json', '--db', t.db]);
    expect((JSON.parse(listed.stdout) as { hostname: string }[]).map((a) => a.hostname)).toEqual(['env-host']);
  });

  it('a database migrated by a newer version: migrate, admin commands and serve refuse it (exit 2) and change nothing', async () => {
    const t = await fresh();
    expect(cli(['migrate', '--db', t.db]).code).toBe(0);
    const storage = await openStorage(t.db);
    try {
      await sql`insert into kysely_migration (name, timestamp) values ('0099-future', '2030-01-01T00:00:00.000Z')`.execute(storage.db);
    } finally {
      await storage.close();
    }
    const commands = [['migrate'], ['agent', 'list'], ['serve']];
    const runs = await cliEach(commands.map((args) => [...args, '--db', t.db]));
    for (const [i, args] of commands.entries()) {
      const r = runs[i]!;
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/schema is newer than this cortex-server knows \(migration 0099-future/);
    }
    const check = await openStorage(t.db);
    try {
      const names = (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(check.db)).rows.map((r) => r.name);
      expect(names).toEqual([...Object.keys(migrations), '0099-future']);
      expect(await check.db.selectFrom('servers').selectAll().execute()).toEqual([]);
    } finally {
      await check.close();
    }
  });

  it("another application's database (its tables, or its own kysely history, none of ours): refused (exit 2, E_DB_OPEN), nothing created in it (H33)", async () => {
    // the two databases are independent: checked side by side
    const cases = [
      [sql`create table users (id integer primary key, name text)`, /the database holds tables of another application \(users\) and none of cortex-server's: give --db the database serve uses/],
      [
        sql`create table kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null)`,
        /the database holds another application's migration history \(2024-01-01-create-invoices\) and none of cortex-server's/,
      ],
    ] as const;
    const check = async ([setUp, said]: (typeof cases)[number]) => {
      const t = await fresh();
      const storage = await openStorage(t.db);
      try {
        await setUp.execute(storage.db);
        if (String(said).includes('history')) await sql`insert into kysely_migration values ('2024-01-01-create-invoices', '2024-01-01T00:00:00.000Z')`.execute(storage.db);
      } finally {
        await storage.close();
      }
      const commands = [['migrate'], ['agent', 'list'], ['agent', 'issue', '--host', 'h'], ['serve', '--listen', '127.0.0.1:0']];
      const runs = await cliEach(commands.map((args) => [...args, '--db', t.db]));
      for (const [i, args] of commands.entries()) {
        const r = runs[i]!;
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain('error[E_DB_OPEN]: the database holds ');
        expect(r.stderr).toMatch(said);
      }
      const after = await openStorage(t.db);
      try {
        const tables =
          t.dialect === 'postgres'
            ? (await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema() order by 1`.execute(after.db)).rows
            : (await sql<{ name: string }>`select name from sqlite_master where type = 'table' order by 1`.execute(after.db)).rows;
        expect(tables.map((r) => r.name).filter((n) => n !== 'kysely_migration')).toEqual(String(said).includes('history') ? [] : ['users']);
      } finally {
        await after.close();
      }
    };
    await Promise.all(cases.map(check));
  });

  itOn('postgres')('serve on a postgres:// URL: the password never appears in its output; the lease row carries --server-id', async () => {
    const t = await fresh();
    const u = new URL(t.db);
    u.password = 'hunter2-not-logged';
    const s = await serve(['--db', u.toString(), '--server-id', 'cli-test-1', '--db-pool', '2']);
    try {
      const storage = await openStorage(t.db);
      try {
        expect((await storage.db.selectFrom('servers').select('server_id').execute()).map((r) => r.server_id)).toEqual(['cli-test-1']);
      } finally {
        await storage.close();
      }
    } finally {
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
    }
    expect(s.stderr()).toContain('postgres://postgres:***@');
    expect(s.stderr()).not.toContain('hunter2-not-logged');
  });
});
