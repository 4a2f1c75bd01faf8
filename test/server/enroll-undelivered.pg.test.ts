// A first enrollment whose answer never reached the agent (DECISIONS G16): the agent gave up on
// its hello (its timeout) while the server was still activating the row; the rotated token was
// committed but never sent, and the one-time token no longer matched, so the host could not
// connect again until an operator issued a new token. The server now gives the host its
// one-time token back. PostgreSQL: a row lock held from another connection keeps the
// activation waiting while the agent goes away.
import { afterEach, describe, expect, it } from 'vitest';
import pg from 'pg';
import { getAgent } from '../../server/db/agents.repository.js';
import { TestClient, enroll, helloParams, startTestServer, waitFor, type TestServer } from './wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Statements of the server waiting on a lock now (asked outside the locker's transaction: pg_stat_activity is a snapshot per transaction). */
async function waitingOnLock(watcher: pg.Client): Promise<number> {
  const r = await watcher.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and application_name = 'cortex-server' and query ilike 'update%agents%'",
  );
  return r.rows[0]?.n ?? 0;
}

describe('a first enrollment the agent never got', () => {
  it('is undone: the host is NeverConnected again and its one-time token enrolls it', async () => {
    t = await startTestServer({}, { dialect: 'postgres' });
    const h = await t.issue('edge-7');
    const locker = new pg.Client({ connectionString: t.dbPath });
    const watcher = new pg.Client({ connectionString: t.dbPath });
    await locker.connect();
    await watcher.connect();
    try {
      await locker.query('begin');
      await locker.query('select 1 from agents where host_id = $1 for update', [h.host_id]);
      const c = await TestClient.open(t.url);
      c.fire('agent.hello', helloParams(h.host_id, h.token));
      // the hello is authenticated and its activation waits for the row
      await waitFor(async () => (await waitingOnLock(watcher)) === 1);
      // the agent gives up (its hello timeout) before the answer
      c.ws.terminate();
      await c.closed;
      await locker.query('commit');
    } finally {
      await locker.end();
      await watcher.end();
    }
    await waitFor(() => t!.log.records().some((r) => r['msg'] === 'first enrollment not delivered (the agent closed before its answer): the host is NeverConnected again and its one-time token still enrolls it'));
    expect((await getAgent(t.server.storage.db, h.host_id))?.connection_state).toBe('NeverConnected');
    // the agent's retry with the same one-time token enrolls, with a new rotated token
    const again = await enroll(t, h);
    expect(typeof again.hello.rotated_token).toBe('string');
    expect((await getAgent(t.server.storage.db, h.host_id))?.connection_state).toBe('Active');
    again.client.ws.close();
    await again.client.closed;
  });
});
