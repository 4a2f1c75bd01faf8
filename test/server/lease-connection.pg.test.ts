// PostgreSQL: a server renews its lease on a connection of its own (DECISIONS G47). It renewed
// it on the pool: with every pool connection busy (ingest commits, a burst of hellos, slow
// admin queries, here statements waiting on a lock) the renewal waited behind them, and once
// it had waited a lease long the other servers took this live server for dead, marked its
// agents Disconnected and every one of them reconnected. A CI run saw a renewal 9 s late.
import pg from 'pg';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, waitFor, type TestServer } from './wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const LOCK = 914_047;

describe('the lease renewal (PostgreSQL)', () => {
  it('goes through while every connection of the pool waits on a lock', async () => {
    t = await startTestServer({}, { dialect: 'postgres', serverId: 'server-a', leaseMs: 60_000, dbPool: 2 });
    const db = t.server.storage.db;
    const holder = new pg.Client({ connectionString: t.dbPath });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1)', [LOCK]);
      // both connections of the pool wait for the lock the holder has
      let settled = 0;
      const stuck = [0, 1].map(() =>
        sql`select pg_advisory_lock(${LOCK}) as a, pg_advisory_unlock(${LOCK}) as b`.execute(db).finally(() => void settled++),
      );
      const waiting = async () =>
        (await holder.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%pg_advisory_lock%' and pid <> pg_backend_pid()")).rows[0]!.n;
      await waitFor(async () => (await waiting()) === 2, 10_000);
      const leaseOf = async () => (await holder.query<{ l: string }>("select lease_until as l from servers where server_id = 'server-a'")).rows[0]!.l;
      const before = await leaseOf();
      await waitFor(() => Date.now() > Date.parse(before) - 60_000 + 50, 5_000); // a renewal now writes a later lease
      // and a server whose lease ran out: the sweep runs on that connection too
      await holder.query("insert into servers (server_id, url, started_at, lease_until, settings_json) values ('ghost', null, $1, $2, null)", [new Date().toISOString(), new Date(Date.now() - 1000).toISOString()]);
      await t.server.registry.tick();
      expect(Date.parse(await leaseOf())).toBeGreaterThan(Date.parse(before));
      expect((await holder.query("select 1 from servers where server_id = 'ghost'")).rowCount).toBe(0);
      expect(settled).toBe(0); // the pool was still stuck while the lease was renewed
      expect(t.log.records().filter((r) => r['msg'] === 'lease renewal failed; retrying')).toEqual([]);
      expect(await waiting()).toBe(2);
      await holder.query('select pg_advisory_unlock($1)', [LOCK]);
      await Promise.all(stuck);
    } finally {
      await holder.end();
    }
  });
});
