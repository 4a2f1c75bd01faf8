// Queries compiled once and run with new values (server/db/cached-query.ts, DECISIONS P7):
// the same rows and SQL as the builder, NULLs get a plan of their own, and a value that does
// not reach the SQL as a plain bound parameter is refused instead of being run wrongly.
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type KyselyPlugin } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { runCached } from '../../server/db/cached-query.js';

interface T {
  t: { id: string; v: string | null };
}
const open: Kysely<T>[] = [];
afterEach(async () => {
  for (const d of open.splice(0)) await d.destroy();
});

async function db(plugins: KyselyPlugin[] = []): Promise<{ k: Kysely<T>; sqls: string[] }> {
  const sqls: string[] = [];
  const k = new Kysely<T>({ dialect: new SqliteDialect({ database: new Database(':memory:') }), plugins, log: (e) => void sqls.push(e.query.sql) });
  open.push(k);
  await sql`create table t (id text primary key, v text)`.execute(k);
  await k.insertInto('t').values([{ id: 'a', v: 'x' }, { id: 'b', v: null }, { id: 'c', v: 'y' }]).execute();
  return { k, sqls };
}

it('builds and compiles once per key, then runs with each call`s values', async () => {
  const { k } = await db();
  let builds = 0;
  const find = (id: string) =>
    runCached(k, 'find', { id }, (d, v) => {
      builds++;
      return d.selectFrom('t').select(['id', 'v']).where('id', '=', v.id as string);
    });
  expect((await find('a')).rows).toEqual([{ id: 'a', v: 'x' }]);
  expect((await find('c')).rows).toEqual([{ id: 'c', v: 'y' }]);
  expect((await find('zz')).rows).toEqual([]);
  expect(builds).toBe(1);
});

it('a NULL value gets a plan of its own (it may compile differently)', async () => {
  const { k, sqls } = await db();
  const set = (id: string, v: string | null) =>
    runCached(k, 'set', { id, v }, (d, x) => d.updateTable('t').set({ v: x.v }).where('id', '=', x.id as string));
  await set('a', 'p');
  await set('c', null);
  await set('b', 'q');
  const updates = sqls.slice(-3);
  expect(await k.selectFrom('t').select(['id', 'v']).orderBy('id').execute()).toEqual([
    { id: 'a', v: 'p' },
    { id: 'b', v: 'q' },
    { id: 'c', v: null },
  ]);
  expect(updates).toEqual(Array(3).fill('update "t" set "v" = ? where "id" = ?'));
});

it('refuses a value that is transformed or inlined on its way into the SQL', async () => {
  const { k } = await db();
  await expect(runCached(k, 'upper', { id: 'a' }, (d, v) => d.selectFrom('t').selectAll().where('id', '=', (v.id as string).toUpperCase()))).rejects.toThrow(/changed/);
  await expect(runCached(k, 'lit', { id: 'a' }, (d, v) => d.selectFrom('t').selectAll().where('id', '=', sql.lit(v.id as string)))).rejects.toThrow(/inlined/);
  await expect(runCached(k, 'unused', { id: 'a' }, (d) => d.selectFrom('t').selectAll())).rejects.toThrow(/not a parameter/);
});

it('with a plugin installed, builds every query as usual', async () => {
  let seen = 0;
  const plugin: KyselyPlugin = { transformQuery: (a) => (seen++, a.node), transformResult: async (a) => a.result };
  const { k } = await db([plugin]);
  let builds = 0;
  for (const id of ['a', 'c']) {
    const r = await runCached(k, 'p', { id }, (d, v) => (builds++, d.selectFrom('t').select('id').where('id', '=', v.id as string)));
    expect(r.rows).toEqual([{ id }]);
  }
  expect(builds).toBe(2);
  expect(seen).toBeGreaterThanOrEqual(2);
});
