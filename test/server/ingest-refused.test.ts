// A failure of the ingest statement itself that repeats (a table dropped, a right revoked, a
// statement timeout — here a trigger that refuses every row): each push is answered -32007
// and nothing is stored, as before, but the log has one line a minute for it, not one per
// push of every agent (DECISIONS G30). Once the cause is gone, the resent entries are stored once.
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { countRows, enroll, logEntries, startTestServer, type TestServer } from './wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

it('a trigger refusing every row: 3 agents × 10 pushes answered -32007, one error line; dropped, every entry stored once', async () => {
  t = await startTestServer();
  const agents = [await enroll(t), await enroll(t), await enroll(t)];
  for (const a of agents) expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 10) })).result.up_to_seq).toBe(10);
  await sql`create trigger cx_refuse before insert on logs begin select raise(abort, 'refused by a trigger'); end`.execute(t.server.storage.db);
  // Each push waits for its group commit (ack_flush_ms): the three agents push together.
  for (let i = 0; i < 10; i++) {
    for (const r of await Promise.all(agents.map((a) => a.client.request('logs.push', { seq_start: 11, entries: logEntries(11, 10) })))) {
      expect(r.error?.code).toBe(-32007);
      expect(r.error?.data?.reason).toBe('commit failed; nothing of the batch was stored');
    }
  }
  const lines = t.log.records().filter((r) => r['msg'] === 'ingest commit failed (-32007)');
  expect(lines).toHaveLength(1);
  expect(JSON.stringify(lines[0]?.['err'])).toContain('refused by a trigger');
  await sql`drop trigger cx_refuse`.execute(t.server.storage.db);
  for (const a of agents) {
    expect((await a.client.request('logs.push', { seq_start: 11, entries: logEntries(11, 10) })).result.up_to_seq).toBe(20);
    expect(await countRows(t, a.host_id)).toBe(20);
    a.client.ws.close();
    await a.client.closed;
  }
});
