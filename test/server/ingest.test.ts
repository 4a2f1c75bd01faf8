import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getAgent, issueAgent } from '../../server/db/agents.repository.js';
import { SessionSupersededError, UnknownHostError, type IngestLogEntry } from '../../server/db/storage.js';
import { entries, openTempDb, type TempDb } from './helpers.js';
import { itOn } from '../support/dialects.js';

let t: TempDb;
let host: string;
beforeEach(async () => {
  t = await openTempDb();
  host = (await issueAgent(t.storage.db, 'h')).host_id;
});
afterEach(async () => {
  await t.cleanup();
});

async function storedSeqs(host_id = host): Promise<number[]> {
  const rows = await t.storage.db
    .selectFrom('logs')
    .select('seq')
    .where('host_id', '=', host_id)
    .orderBy('seq')
    .execute();
  return rows.map((r) => r.seq);
}

const acceptedSeq = async (host_id = host) => (await getAgent(t.storage.db, host_id))?.accepted_seq;

describe('IngestWriter.commitBatch', () => {
  it('stores the rows with every column and advances accepted_seq and last_seen', async () => {
    const received = '2026-05-16T19:42:50.612Z';
    const batch: IngestLogEntry[] = [
      {
        seq: 1,
        ts: '2026-05-16T19:42:50.123Z',
        severity: 'info',
        app_name: 'sshd',
        process_id: '1431',
        message: 'Accepted publickey',
        source: 'journald',
      },
      {
        seq: 2,
        ts: '2026-05-16T19:42:50.501Z',
        severity: 'warning',
        facility: 'daemon',
        message: 'deprecated option foo',
        source: 'docker:cortex',
        metadata: { container: 'cortex', n: 1 },
      },
    ];
    expect(await t.storage.ingest.commitBatch(host, batch, received)).toEqual({
      accepted_seq: 2,
      previous_accepted_seq: 0,
      inserted: 2,
    });
    const rows = await t.storage.db.selectFrom('logs').selectAll().orderBy('seq').execute();
    expect(rows).toEqual([
      {
        host_id: host, seq: 1, ts: '2026-05-16T19:42:50.123Z', received_at: received, severity: 'info',
        facility: null, app_name: 'sshd', process_id: '1431', message: 'Accepted publickey',
        source: 'journald', metadata_json: null,
      },
      {
        host_id: host, seq: 2, ts: '2026-05-16T19:42:50.501Z', received_at: received, severity: 'warning',
        facility: 'daemon', app_name: null, process_id: null, message: 'deprecated option foo',
        source: 'docker:cortex', metadata_json: '{"container":"cortex","n":1}',
      },
    ]);
    const agent = await getAgent(t.storage.db, host);
    expect(agent?.accepted_seq).toBe(2);
    expect(agent?.last_seen).toBe(received);
  });

  it('drops entries with seq <= accepted_seq and still reports the high-water mark', async () => {
    await t.storage.ingest.commitBatch(host, entries(1, 10), new Date().toISOString());
    // a replay overlapping what was accepted
    const r = await t.storage.ingest.commitBatch(host, entries(6, 15, { message: 'replayed' }), new Date().toISOString());
    expect(r).toEqual({ accepted_seq: 15, previous_accepted_seq: 10, inserted: 5 });
    expect(await storedSeqs()).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    const six = await t.storage.db.selectFrom('logs').select('message').where('seq', '=', 6).executeTakeFirst();
    expect(six?.message).toBe('message 6'); // the original row, not the replayed one
    // a batch entirely at or below accepted_seq: nothing stored, accepted_seq unchanged
    expect(await t.storage.ingest.commitBatch(host, entries(3, 7), new Date().toISOString())).toEqual({
      accepted_seq: 15,
      previous_accepted_seq: 15,
      inserted: 0,
    });
    expect(await storedSeqs()).toHaveLength(15);
  });

  it('never stores seq 0 (0 <= accepted_seq 0)', async () => {
    const r = await t.storage.ingest.commitBatch(host, entries(0, 3), new Date().toISOString());
    expect(r).toEqual({ accepted_seq: 3, previous_accepted_seq: 0, inserted: 3 });
    expect(await storedSeqs()).toEqual([1, 2, 3]);
    const only0 = await t.storage.ingest.commitBatch(host, entries(0, 0), new Date().toISOString());
    expect(only0.inserted).toBe(0);
  });

  it('accepts a gap (seq_start beyond accepted_seq + 1)', async () => {
    await t.storage.ingest.commitBatch(host, entries(1, 2), new Date().toISOString());
    const r = await t.storage.ingest.commitBatch(host, entries(10, 11), new Date().toISOString());
    expect(r).toEqual({ accepted_seq: 11, previous_accepted_seq: 2, inserted: 2 });
  });

  it('rows and accepted_seq are one transaction: a failing row stores nothing', async () => {
    await t.storage.ingest.commitBatch(host, entries(1, 3), new Date().toISOString());
    const bad = entries(4, 8);
    // violates NOT NULL on message: must fail the commit, not be skipped silently
    (bad[3] as unknown as { message: null }).message = null;
    await expect(t.storage.ingest.commitBatch(host, bad, new Date().toISOString())).rejects.toThrow(/NOT NULL|not-null/i);
    expect(await storedSeqs()).toEqual([1, 2, 3]);
    expect(await acceptedSeq()).toBe(3);
    // the writer is usable again afterwards
    expect((await t.storage.ingest.commitBatch(host, entries(4, 8), new Date().toISOString())).accepted_seq).toBe(8);
  });

  // SQLite's global UNIQUE (host_id, seq). PostgreSQL partitions logs by day: a row written
  // outside the ingest path on another day is not seen (DECISIONS G6).
  itOn('sqlite')('a row already present above accepted_seq is a no-op conflict, not an error', async () => {
    await t.storage.db
      .insertInto('logs')
      .values({ host_id: host, seq: 2, ts: 't', received_at: 'r', severity: 'info', message: 'pre-existing', source: 'journald' })
      .execute();
    const r = await t.storage.ingest.commitBatch(host, entries(1, 3), new Date().toISOString());
    expect(r).toEqual({ accepted_seq: 3, previous_accepted_seq: 0, inserted: 2 });
    expect(await storedSeqs()).toEqual([1, 2, 3]);
  });

  it('throws UnknownHostError when the host row is gone, storing nothing', async () => {
    await t.storage.db.deleteFrom('agents').where('host_id', '=', host).execute();
    const error = await t.storage.ingest.commitBatch(host, entries(1, 3), new Date().toISOString()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnknownHostError);
    expect((error as UnknownHostError).host_id).toBe(host);
    expect(await storedSeqs()).toEqual([]);
    const other = randomUUID();
    await expect(t.storage.ingest.commitBatch(other, entries(1, 1), 'x')).rejects.toBeInstanceOf(UnknownHostError);
  });

  it('with a session_id, commits only while that session holds the host (a newer hello replaced it: nothing stored)', async () => {
    await t.storage.db.updateTable('agents').set({ session_id: 'session-1' }).where('host_id', '=', host).execute();
    expect(await t.storage.ingest.commitBatch(host, entries(1, 3), new Date().toISOString(), 'session-1')).toMatchObject({ accepted_seq: 3 });
    await t.storage.db.updateTable('agents').set({ session_id: 'session-2' }).where('host_id', '=', host).execute();
    const error = await t.storage.ingest.commitBatch(host, entries(4, 6), new Date().toISOString(), 'session-1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionSupersededError);
    expect(await storedSeqs()).toEqual([1, 2, 3]);
    expect(await acceptedSeq()).toBe(3);
    // a detached row (swept server, reissued token) refuses every session too
    await t.storage.db.updateTable('agents').set({ session_id: null }).where('host_id', '=', host).execute();
    await expect(t.storage.ingest.commitBatch(host, entries(4, 6), new Date().toISOString(), 'session-2')).rejects.toBeInstanceOf(SessionSupersededError);
    expect(await storedSeqs()).toEqual([1, 2, 3]);
  });

  it('waits for an open kysely transaction instead of joining it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // A kysely transaction that spans a real wait and then rolls back.
    const tx = t.storage.db
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable('agents').set({ hostname: 'changed' }).where('host_id', '=', host).execute();
        await gate;
        throw new Error('rollback');
      })
      .catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 10));
    const commit = t.storage.ingest.commitBatch(host, entries(1, 5), new Date().toISOString());
    await new Promise((r) => setTimeout(r, 20));
    release();
    expect(await tx).toBeInstanceOf(Error);
    expect((await commit).accepted_seq).toBe(5);
    // the ingest commit survived the other transaction's rollback
    expect(await storedSeqs()).toEqual([1, 2, 3, 4, 5]);
    expect((await getAgent(t.storage.db, host))?.hostname).toBe('h');
  });

  it('keeps hosts apart', async () => {
    const other = (await issueAgent(t.storage.db, 'other')).host_id;
    await t.storage.ingest.commitBatch(host, entries(1, 4), new Date().toISOString());
    await t.storage.ingest.commitBatch(other, entries(1, 2), new Date().toISOString());
    expect(await storedSeqs(host)).toEqual([1, 2, 3, 4]);
    expect(await storedSeqs(other)).toEqual([1, 2]);
    expect(await acceptedSeq(other)).toBe(2);
  });

  it('property: any sequence of (overlapping, replayed) contiguous batches stores each seq once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ start: fc.integer({ min: 0, max: 60 }), len: fc.integer({ min: 1, max: 20 }) }), {
          minLength: 1,
          maxLength: 12,
        }),
        async (batches) => {
          const h = (await issueAgent(t.storage.db, 'prop')).host_id;
          let model = 0;
          const modelRows = new Set<number>();
          for (const { start, len } of batches) {
            const r = await t.storage.ingest.commitBatch(h, entries(start, start + len - 1), new Date().toISOString());
            for (let s = start; s < start + len; s++) if (s > model) modelRows.add(s);
            model = Math.max(model, start + len - 1);
            expect(r.accepted_seq).toBe(model);
          }
          expect(await storedSeqs(h)).toEqual([...modelRows].sort((a, b) => a - b));
          expect(await acceptedSeq(h)).toBe(model);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('IngestWriter.insertMetrics', () => {
  it('stores samples with labels and moves last_seen; unknown host throws', async () => {
    const n = await t.storage.ingest.insertMetrics(
      host,
      '2026-05-16T19:43:00.000Z',
      [
        { name: 'load1', value: 0.42 },
        { name: 'mem_used_pct', value: 38.1, labels: { host: 'devhost' } },
      ],
      '2026-05-16T19:43:00.100Z',
    );
    expect(n).toBe(2);
    const rows = await t.storage.db.selectFrom('metrics').selectAll().orderBy('name').execute();
    expect(rows).toEqual([
      { host_id: host, ts: '2026-05-16T19:43:00.000Z', name: 'load1', value: 0.42, labels_json: null, received_at: '2026-05-16T19:43:00.100Z' },
      { host_id: host, ts: '2026-05-16T19:43:00.000Z', name: 'mem_used_pct', value: 38.1, labels_json: '{"host":"devhost"}', received_at: '2026-05-16T19:43:00.100Z' },
    ]);
    expect((await getAgent(t.storage.db, host))?.last_seen).toBe('2026-05-16T19:43:00.100Z');
    await expect(
      t.storage.ingest.insertMetrics(randomUUID(), 'ts', [{ name: 'x', value: 1 }]),
    ).rejects.toBeInstanceOf(UnknownHostError);
  });
});
