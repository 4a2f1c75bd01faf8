// PostgreSQL only: the ingest writer commits the batches of many hosts that wait for it in
// one statement (DECISIONS G13), and every batch still gets what it got alone.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { getAgent, issueAgent } from '../../server/db/agents.repository.js';
import { openStorage } from '../../server/db/open.js';
import { SessionSupersededError, UnknownHostError, type CommitResult, type Storage } from '../../server/db/storage.js';
import { entries, openTempDb, type TempDb } from './helpers.js';

let t: TempDb;
/** A second storage on the same database with a pool of 2: one ingest statement at a time, so what waits behind it is one group. */
let one: Storage;
beforeEach(async () => {
  t = await openTempDb('postgres');
  one = await openStorage(t.path, { poolSize: 2 });
});
afterEach(async () => {
  await one.close();
  await t.cleanup();
});

const hosts = async (n: number, prefix: string) => Promise.all(Array.from({ length: n }, async (_, i) => (await issueAgent(t.storage.db, `${prefix}-${i}`)).host_id));
/** The transactions that stored the hosts' rows (rows inserted by one transaction share xmin). */
const transactions = async (ids: readonly string[]) =>
  Number((await sql<{ n: number }>`select count(distinct xmin::text)::int as n from logs where host_id in (${sql.join(ids)})`.execute(t.storage.db)).rows[0]?.n);
const xminOf = async (id: string) => (await sql<{ x: string }>`select distinct xmin::text as x from logs where host_id = ${id}`.execute(t.storage.db)).rows.map((r) => r.x);
const now = () => new Date().toISOString();
/** A commit's result, or the error it failed with. */
const settle = (p: Promise<CommitResult>) => p.then((r) => r, (e: unknown) => e);

describe('PostgreSQL group commit across hosts', () => {
  it('batches of many hosts waiting for the writer share one transaction; each host gets its own accepted_seq', async () => {
    const ids = await hosts(41, 'g');
    // the first goes at once; the 40 others arrive while it runs and wait for the next statement
    const results = await Promise.all(ids.map((id, i) => one.ingest.commitBatch(id, entries(1, i + 1), now())));
    results.forEach((r, i) => expect(r).toEqual({ accepted_seq: i + 1, previous_accepted_seq: 0, inserted: i + 1 }));
    // one statement per batch would be 41 transactions
    expect(await transactions(ids)).toBe(2);
    for (const [i, id] of ids.entries()) expect((await getAgent(t.storage.db, id))?.accepted_seq).toBe(i + 1);
    const dup = await sql<{ n: number }>`select count(*)::int as n from (select host_id, seq from logs group by 1, 2 having count(*) > 1) d`.execute(t.storage.db);
    expect(dup.rows[0]?.n).toBe(0);
  });

  it('in one group an unknown host, a replaced session and a replay each get their own answer; the rest commits', async () => {
    const [first, ok, replaced, replay] = await hosts(4, 'm');
    await one.ingest.commitBatch(replay!, entries(1, 5), now());
    await sql`update agents set session_id = 'session-new' where host_id in (${ok!}, ${replaced!})`.execute(t.storage.db);
    const [r0, rOk, rGone, rReplaced, rReplay] = await Promise.all([
      settle(one.ingest.commitBatch(first!, entries(1, 3), now())),
      settle(one.ingest.commitBatch(ok!, entries(1, 10), now(), 'session-new')),
      settle(one.ingest.commitBatch('no-such-host', entries(1, 10), now())),
      settle(one.ingest.commitBatch(replaced!, entries(1, 10), now(), 'session-old')),
      settle(one.ingest.commitBatch(replay!, entries(1, 10), now())),
    ]);
    expect(r0).toEqual({ accepted_seq: 3, previous_accepted_seq: 0, inserted: 3 });
    expect(rOk).toEqual({ accepted_seq: 10, previous_accepted_seq: 0, inserted: 10 });
    expect(rGone).toBeInstanceOf(UnknownHostError);
    expect(rReplaced).toBeInstanceOf(SessionSupersededError);
    expect(rReplay).toEqual({ accepted_seq: 10, previous_accepted_seq: 5, inserted: 5 });
    // the replaced session stored nothing and moved nothing
    expect((await getAgent(t.storage.db, replaced!))?.accepted_seq).toBe(0);
    expect(await transactions([replaced!])).toBe(0);
    // the two that committed did so in the one statement that also answered the refused ones
    const [xOk] = await xminOf(ok!);
    expect(await xminOf(replay!)).toContain(xOk);
  });

  it('a batch PostgreSQL refuses fails alone: the hosts that shared its statement are committed', async () => {
    const [first, good, bad, other] = await hosts(4, 'f');
    const results = await Promise.all([
      settle(one.ingest.commitBatch(first!, entries(1, 2), now())),
      settle(one.ingest.commitBatch(good!, entries(1, 7), now())),
      // a NUL in text: PostgreSQL refuses the value (the server replaces NUL before this; DECISIONS H3)
      settle(one.ingest.commitBatch(bad!, entries(1, 3, { message: 'nul \u0000 here' }), now())),
      settle(one.ingest.commitBatch(other!, entries(1, 4), now())),
    ]);
    expect(results[1]).toEqual({ accepted_seq: 7, previous_accepted_seq: 0, inserted: 7 });
    expect(results[2]).toBeInstanceOf(Error);
    expect(String((results[2] as Error).message)).toMatch(/0x00|invalid byte sequence/);
    expect(results[3]).toEqual({ accepted_seq: 4, previous_accepted_seq: 0, inserted: 4 });
    expect((await getAgent(t.storage.db, bad!))?.accepted_seq).toBe(0);
    expect(await transactions([bad!])).toBe(0);
  });

  it("a host's second batch waits for the next statement, in order", async () => {
    const [first, h] = await hosts(2, 's');
    const [, a, b] = await Promise.all([
      one.ingest.commitBatch(first!, entries(1, 1), now()),
      one.ingest.commitBatch(h!, entries(1, 5), now()),
      one.ingest.commitBatch(h!, entries(6, 10), now()),
    ]);
    expect(a).toEqual({ accepted_seq: 5, previous_accepted_seq: 0, inserted: 5 });
    expect(b).toEqual({ accepted_seq: 10, previous_accepted_seq: 5, inserted: 5 });
    expect(await transactions([h!])).toBe(2);
  });

  it('a group received on a day without a partition creates it and commits', async () => {
    const ids = await hosts(3, 'd');
    const day = '2031-03-04T05:06:07.000Z';
    const results = await Promise.all(ids.map((id) => one.ingest.commitBatch(id, entries(1, 2), day)));
    for (const r of results) expect(r.inserted).toBe(2);
    const rows = await sql<{ n: number }>`select count(*)::int as n from logs_p20310304`.execute(t.storage.db);
    expect(rows.rows[0]?.n).toBe(6);
  });

  it('two servers committing the same hosts in opposite orders never deadlock', async () => {
    const ids = await hosts(30, 'x');
    const other = await openStorage(t.path, { poolSize: 2 });
    try {
      for (let round = 0; round < 5; round++) {
        const from = round * 10 + 1;
        const batch = entries(from, from + 9);
        await Promise.all([
          ...ids.map((id) => one.ingest.commitBatch(id, batch, now())),
          ...[...ids].reverse().map((id) => other.ingest.commitBatch(id, batch, now())),
        ]);
      }
    } finally {
      await other.close();
    }
    for (const id of ids) expect((await getAgent(t.storage.db, id))?.accepted_seq).toBe(50);
    const n = await sql<{ n: number }>`select count(*)::int as n from logs`.execute(t.storage.db);
    expect(n.rows[0]?.n).toBe(30 * 50);
  });
});
