import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueAgent } from '../../server/db/agents.repository.js';
import { since, tail } from '../../server/db/logs.repository.js';
import { entries, openTempDb, type TempDb } from './helpers.js';

let t: TempDb;
let host: string;
beforeEach(async () => {
  t = await openTempDb();
  host = (await issueAgent(t.storage.db, 'h')).host_id;
});
afterEach(async () => {
  await t.cleanup();
});

describe('logs repository', () => {
  it('tail returns the last n rows, oldest first, with metadata parsed', async () => {
    // committed out of order across batches to make sure ordering is by seq
    await t.storage.ingest.commitBatch(host, entries(1, 3), '2026-05-16T19:42:51.000Z');
    await t.storage.ingest.commitBatch(host, entries(4, 6, { metadata: { k: 'v' } }), '2026-05-16T19:42:52.000Z');
    const last = await tail(t.storage.db, host, 4);
    expect(last.map((r) => r.seq)).toEqual([3, 4, 5, 6]);
    expect(last[0]).toEqual({
      host_id: host,
      seq: 3,
      ts: entries(3, 3)[0]!.ts,
      received_at: '2026-05-16T19:42:51.000Z',
      severity: 'info',
      facility: null,
      app_name: null,
      process_id: null,
      message: 'message 3',
      source: 'journald',
      metadata: null,
    });
    expect(last[1]?.metadata).toEqual({ k: 'v' });
    expect(last[1]).not.toHaveProperty('metadata_json');
    expect((await tail(t.storage.db, host, 100)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await tail(t.storage.db, host, 0)).toEqual([]);
    expect(await tail(t.storage.db, host.toUpperCase(), 1)).toHaveLength(1);
  });

  it('since returns rows after a seq, oldest first, limited', async () => {
    await t.storage.ingest.commitBatch(host, entries(1, 10), '2026-05-16T19:42:53.000Z');
    expect((await since(t.storage.db, host, 7)).map((r) => r.seq)).toEqual([8, 9, 10]);
    expect((await since(t.storage.db, host, 0, 2)).map((r) => r.seq)).toEqual([1, 2]);
    expect(await since(t.storage.db, host, 10)).toEqual([]);
  });
});
