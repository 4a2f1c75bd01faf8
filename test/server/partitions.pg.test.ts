// PostgreSQL only: logs partitioned by day of received_at (DECISIONS G6).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { getAgent, issueAgent } from '../../server/db/agents.repository.js';
import { createCapturingLogger } from '../../server/log.js';
import { ServerMetrics } from '../../server/metrics.js';
import { Retention } from '../../server/control/retention.js';
import { openStorage } from '../../server/db/open.js';
import { jobLockKey } from '../../server/db/postgres.js';
import { entries, openTempDb, type TempDb } from './helpers.js';
import { until } from '../support/procs.js';

let t: TempDb;
let host: string;
const schemaOf = async (d: TempDb): Promise<string> => (await sql<{ s: string }>`select current_schema() as s`.execute(d.storage.db)).rows[0]!.s;
beforeEach(async () => {
  t = await openTempDb('postgres');
  host = (await issueAgent(t.storage.db, 'p')).host_id;
});
afterEach(async () => {
  await t.cleanup();
});

const DAY = 86_400_000;
const partitions = async () =>
  (await sql<{ name: string }>`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'logs'::regclass order by 1`.execute(t.storage.db)).rows.map((r) => r.name);
const pName = (ms: number) => `logs_p${new Date(ms).toISOString().slice(0, 10).replace(/-/g, '')}`;
const count = async () => Number((await t.storage.db.selectFrom('logs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

describe('logs partitioned by day', () => {
  it('partitions exist from yesterday to 3 days ahead after the migration', async () => {
    const now = Date.now();
    const names = await partitions();
    for (let d = -1; d <= 3; d++) expect(names).toContain(pName(now + d * DAY));
  });

  it('idempotency across partitions: a replay received on a later day stores nothing; concurrent commits store each seq once', async () => {
    const day1 = new Date(Date.now() - 5 * DAY).toISOString();
    const day2 = new Date(Date.now() - 4 * DAY).toISOString();
    expect((await t.storage.ingest.commitBatch(host, entries(1, 100), day1)).inserted).toBe(100);
    const replay = await t.storage.ingest.commitBatch(host, entries(51, 150), day2);
    expect(replay).toEqual({ accepted_seq: 150, previous_accepted_seq: 100, inserted: 50 });
    // the same batch from 4 connections at once (4 servers racing): stored once
    const results = await Promise.all([1, 2, 3, 4].map(() => t.storage.ingest.commitBatch(host, entries(151, 400), new Date().toISOString())));
    expect(results.reduce((n, r) => n + r.inserted, 0)).toBe(250);
    const dup = await sql<{ n: number }>`select count(*)::int as n from (select seq from logs where host_id = ${host} group by seq having count(*) > 1) d`.execute(t.storage.db);
    expect(dup.rows[0]?.n).toBe(0);
    expect(await count()).toBe(400);
    expect((await getAgent(t.storage.db, host))?.accepted_seq).toBe(400);
    // the days the commits created their partitions for (5 and 4 days ago: not created ahead)
    expect(await partitions()).toEqual(expect.arrayContaining([pName(Date.parse(day1)), pName(Date.parse(day2))]));
  });

  it('retention drops whole expired days as partitions and deletes only the rest of the cutoff day row by row', async () => {
    const now = Date.UTC(2026, 5, 10, 12, 0, 0);
    const old1 = new Date(now - 40 * DAY).toISOString();
    const old2 = new Date(now - 35 * DAY).toISOString();
    const cutoffDayEarly = new Date(now - 30 * DAY - 3_600_000).toISOString(); // expired, same day as the cutoff
    const cutoffDayLate = new Date(now - 30 * DAY + 3_600_000).toISOString(); // kept
    await t.storage.ingest.commitBatch(host, entries(1, 3000), old1);
    await t.storage.ingest.commitBatch(host, entries(3001, 5000), old2);
    await t.storage.ingest.commitBatch(host, entries(5001, 5010), cutoffDayEarly);
    await t.storage.ingest.commitBatch(host, entries(5011, 5020), cutoffDayLate);
    const log = createCapturingLogger();
    const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
    const r = new Retention(t.storage, log.logger, metrics, { retentionDays: 30, maxDbBytes: null, batchRows: 500, pauseMs: 0 });
    const result = await r.run(new Date(now));
    expect(result.logs).toBe(5010);
    const names = await partitions();
    expect(names).not.toContain(pName(Date.parse(old1)));
    expect(names).not.toContain(pName(Date.parse(old2)));
    expect(names).toContain(pName(Date.parse(cutoffDayLate)));
    const left = await t.storage.db.selectFrom('logs').select('seq').orderBy('seq').execute();
    expect(left.map((x) => Number(x.seq))).toEqual(Array.from({ length: 10 }, (_, i) => 5011 + i));
    const dropped = log.records().find((x) => x['msg'] === 'retention: expired day partitions dropped');
    expect(dropped?.['rows']).toBe(5000);
    // and the pass created the days ahead of its `now`
    expect(names).toContain(pName(now + 3 * DAY));
  });

  it('one retention pass at a time across servers: while another process runs its pass, this one skips', async () => {
    const old = new Date(Date.now() - 40 * DAY).toISOString();
    await t.storage.ingest.commitBatch(host, entries(1, 100), old);
    const other = await openStorage(t.path, { poolSize: 2 });
    try {
      let started!: () => void;
      let release!: () => void;
      const running = new Promise<void>((r) => (started = r));
      const held = other.exclusiveJob!('retention', () => {
        started();
        return new Promise<void>((r) => (release = r));
      });
      await running;
      // The lock is held on a connection of the job's own (application_name says so), not on one
      // of the pool, which the ingest path would otherwise have to replace while its acks wait.
      const holders = await sql<{ app: string }>`
        select a.application_name as app from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where l.locktype = 'advisory' and l.granted and l.database = (select oid from pg_database where datname = current_database())
          and l.objid::bigint = (hashtext(${jobLockKey('retention', await schemaOf(t))})::bigint & 4294967295)`.execute(t.storage.db);
      expect(holders.rows.map((r) => r.app)).toEqual(['cortex-server retention']);
      const log = createCapturingLogger({ level: 'debug' });
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const r = new Retention(t.storage, log.logger, metrics, { retentionDays: 30, maxDbBytes: null, batchRows: 500, pauseMs: 0 });
      expect(await r.run()).toEqual({ logs: 0, metrics: 0, sizeLogs: 0, sizeMetrics: 0, audit: 0 });
      expect(log.records().some((x) => x['msg'] === 'retention: another server is running its pass; skipped')).toBe(true);
      expect(await count()).toBe(100);
      release();
      await held;
      expect((await r.run()).logs).toBe(100);
    } finally {
      await other.close();
    }
  });

  it('a deployment in another schema of the same database does not skip this one\'s pass (the job lock names the schema)', async () => {
    const old = new Date(Date.now() - 40 * DAY).toISOString();
    await t.storage.ingest.commitBatch(host, entries(1, 100), old);
    const elsewhere = await openTempDb('postgres'); // a schema of its own, as search_path gives one
    try {
      expect(await schemaOf(elsewhere)).not.toBe(await schemaOf(t));
      let started!: () => void;
      let release!: () => void;
      const running = new Promise<void>((r) => (started = r));
      const held = elsewhere.storage.exclusiveJob!('retention', () => {
        started();
        return new Promise<void>((r) => (release = r));
      });
      await running;
      const log = createCapturingLogger({ level: 'debug' });
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const r = new Retention(t.storage, log.logger, metrics, { retentionDays: 30, maxDbBytes: null, batchRows: 500, pauseMs: 0 });
      expect((await r.run()).logs).toBe(100);
      expect(log.records().some((x) => x['msg'] === 'retention: another server is running its pass; skipped')).toBe(false);
      release();
      await held;
    } finally {
      await elsewhere.cleanup();
    }
  });

  it('a new day\'s partition is added while a reader holds logs (as pg_dump does), and inserts go on meanwhile (G34)', async () => {
    const reader = new pg.Client({ connectionString: t.path });
    await reader.connect();
    try {
      await reader.query('begin isolation level repeatable read');
      await reader.query('select count(*) from logs'); // ACCESS SHARE on logs until the transaction ends, as a dump holds it
      const later = Date.now() + 10 * DAY; // a day nobody created yet, as each new day is for the pass after midnight
      const pass = t.storage.maintainPartitions!(new Date(later), null);
      const insert = t.storage.ingest.commitBatch(host, entries(1, 50), new Date().toISOString());
      // CREATE TABLE … PARTITION OF waited for the reader's ACCESS EXCLUSIVE lock, and the insert behind it;
      // the bound only says when to give up: both end in milliseconds once nothing waits for the reader
      let bound: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        Promise.all([pass, insert]).then(() => 'done'),
        new Promise<string>((r) => (bound = setTimeout(() => r('held up by the reader'), 10_000))),
      ]);
      clearTimeout(bound);
      expect(outcome).toBe('done');
      expect((await pass).created).toContain(pName(later));
      expect((await insert).inserted).toBe(50);
    } finally {
      await reader.query('commit').catch(() => undefined);
      await reader.end();
    }
    // the partition added this way is one like the others: its day's rows go there, a replay stores nothing
    const at = new Date(Date.now() + 10 * DAY).toISOString();
    expect((await t.storage.ingest.commitBatch(host, entries(51, 60), at)).inserted).toBe(10);
    expect((await t.storage.ingest.commitBatch(host, entries(51, 60), at)).inserted).toBe(0);
    const where = await sql<{ p: string; n: number }>`select tableoid::regclass::text as p, count(*)::int as n from logs where seq > 50 group by 1`.execute(t.storage.db);
    expect(where.rows).toEqual([{ p: pName(Date.parse(at)), n: 10 }]);
    const idx = await sql<{ n: number }>`select count(*)::int as n from pg_indexes where tablename = ${pName(Date.parse(at))} and schemaname = current_schema()`.execute(t.storage.db);
    expect(idx.rows[0]?.n).toBe(3); // its unique (host_id, seq) and the two of logs
  });

  it('a detach left pending by a pass stopped halfway, and a day detached but not dropped, are finished by the next pass (G34)', async () => {
    const now = Date.now();
    const old1 = new Date(now - 40 * DAY).toISOString();
    const old2 = new Date(now - 39 * DAY).toISOString();
    await t.storage.ingest.commitBatch(host, entries(1, 100), old1);
    await t.storage.ingest.commitBatch(host, entries(101, 300), old2);
    // old2's day: detached (a pass's first step), the server gone before its drop
    await sql.raw(`alter table logs detach partition ${pName(Date.parse(old2))}`).execute(t.storage.db);
    // old1's day: DETACH … CONCURRENTLY waits for a reader's snapshot; its connection is cut meanwhile
    const reader = new pg.Client({ connectionString: t.path });
    const detacher = new pg.Client({ connectionString: t.path, application_name: 'cortex-test-detacher' });
    detacher.on('error', () => undefined); // its connection is the one cut
    await reader.connect();
    await detacher.connect();
    try {
      await reader.query('begin isolation level repeatable read');
      await reader.query('select count(*) from logs');
      const detach = detacher.query(`alter table logs detach partition ${pName(Date.parse(old1))} concurrently`).then(
        () => 'finished',
        () => 'cut',
      );
      const waiting = async () =>
        (await reader.query(`select 1 from pg_stat_activity where application_name = 'cortex-test-detacher' and wait_event_type is not null and state = 'active'`)).rowCount === 1;
      await until('the detach waiting for the reader', waiting, 10_000, 50);
      await t.storage.db.executeQuery(sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'cortex-test-detacher'`.compile(t.storage.db));
      expect(await detach).toBe('cut');
    } finally {
      await reader.query('commit').catch(() => undefined);
      await reader.end();
      await detacher.end().catch(() => undefined);
    }
    const pending = await sql<{ p: boolean }>`select inhdetachpending as p from pg_inherits where inhrelid = to_regclass(${pName(Date.parse(old1))})`.execute(t.storage.db);
    expect(pending.rows).toEqual([{ p: true }]);

    const r = await t.storage.maintainPartitions!(new Date(now), new Date(now - 30 * DAY).toISOString());
    expect(r.dropped.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: pName(Date.parse(old1)), rows: 100 },
      { name: pName(Date.parse(old2)), rows: 200 },
    ]);
    const left = await sql<{ n: number }>`select count(*)::int as n from pg_tables where schemaname = current_schema() and tablename in (${pName(Date.parse(old1))}, ${pName(Date.parse(old2))})`.execute(t.storage.db);
    expect(left.rows[0]?.n).toBe(0);
    expect(await count()).toBe(0);
  });
});
