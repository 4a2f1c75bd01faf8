// Heartbeats batched (DECISIONS G19): the hosts heard from within a moment are written in one
// statement, not one each; a failed write is told once, not once per host.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { getAgent, issueAgent } from '../../server/db/agents.repository.js';
import { DatabaseOutage } from '../../server/db/outage.js';
import { createCapturingLogger } from '../../server/log.js';
import { LastSeenBatch } from '../../server/ws/last-seen-batch.js';
import { openTempDb, type TempDb } from './helpers.js';

let t: TempDb;
beforeEach(async () => {
  t = await openTempDb();
});
afterEach(async () => {
  await t.cleanup();
});

/** Counts the statements run through it; throws on each when `fail` is set. */
class Counter implements KyselyPlugin {
  statements = 0;
  fail: Error | undefined;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.statements++;
    if (this.fail !== undefined) throw this.fail;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

describe('LastSeenBatch', () => {
  it('300 heartbeats at once: one statement, every host written', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push((await issueAgent(t.storage.db, `h${i}`)).host_id);
    const counter = new Counter();
    const log = createCapturingLogger();
    const batch = new LastSeenBatch({ db: t.storage.db.withPlugin(counter), dialect: t.storage.dialect }, new DatabaseOutage({ logger: log.logger }), log.logger);
    const before = new Date().toISOString();
    for (const id of ids) batch.touch(id);
    expect(counter.statements).toBe(0); // collected, not written one by one
    await batch.flush();
    expect(counter.statements).toBe(1);
    for (const id of [ids[0]!, ids[150]!, ids[299]!]) expect(String((await getAgent(t.storage.db, id))?.last_seen) >= before).toBe(true);
    // nothing collected: nothing written
    await batch.flush();
    expect(counter.statements).toBe(1);
  });

  it('written by itself within a moment, without a flush', async () => {
    const { host_id } = await issueAgent(t.storage.db, 'solo');
    const log = createCapturingLogger();
    const batch = new LastSeenBatch(t.storage, new DatabaseOutage({ logger: log.logger }), log.logger);
    batch.touch(host_id);
    const end = Date.now() + 5_000;
    while ((await getAgent(t.storage.db, host_id))?.last_seen == null && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect((await getAgent(t.storage.db, host_id))?.last_seen).not.toBeNull();
  });

  it('a failed write is logged once a minute at most, not once per host; an unreachable database goes to the outage', async () => {
    const counter = new Counter();
    const log = createCapturingLogger();
    const outage = new DatabaseOutage({ logger: log.logger });
    const batch = new LastSeenBatch({ db: t.storage.db.withPlugin(counter), dialect: t.storage.dialect }, outage, log.logger);
    counter.fail = new Error('some statement error');
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 50; i++) batch.touch(`host-${round}-${i}`);
      await batch.flush();
    }
    const warns = log.records().filter((r) => String(r['msg']).startsWith('heartbeat: last_seen update failed'));
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({ level: 'warn', hosts: 50 });
    counter.fail = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    batch.touch('x');
    await batch.flush();
    expect(outage.down).toBe(true);
    counter.fail = undefined;
    batch.touch('x');
    await batch.flush();
    expect(outage.down).toBe(false);
  });
});
