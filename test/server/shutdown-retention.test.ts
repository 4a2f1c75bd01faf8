// SIGTERM drain of the compiled server (DESIGN.md 3, seed 4.3, 11) and the retention purge.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { issueAgent } from '../../server/db/agents.repository.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { createCapturingLogger } from '../../server/log.js';
import { ServerMetrics } from '../../server/metrics.js';
import { Retention } from '../../server/control/retention.js';
import { withTrustTables } from '../../server/security/tables.js';
import { metricValue } from './control-helpers.js';
import { entries, makeTempDir, openTempDb } from './helpers.js';
import { itOn } from '../support/dialects.js';
import { requireServerCli, cli, serve } from './spawn.js';
import { helloParams, logEntries, startTestServer, TestClient } from './wire.js';

beforeAll(() => requireServerCli(), 60_000);

describe('SIGTERM', () => {
  it('drain: agent.shutdown {ServerReload, drain}, new upgrades refused, pushes acked during the drain, 1001 for the rest, exit 0, acked entries intact', async () => {
    const dir = makeTempDir();
    const db = join(dir, 'data', 'c.db');
    const h1 = JSON.parse(cli(['agent', 'issue', '--host', 'd1', '--json', '--db', db]).stdout);
    const h2 = JSON.parse(cli(['agent', 'issue', '--host', 'd2', '--json', '--db', db]).stdout);
    const s = await serve(['--db', db, '--shutdown-drain-secs', '2']);
    const a = await TestClient.open(s.url);
    expect((await a.request('agent.hello', helloParams(h1.host_id, h1.token))).error).toBeUndefined();
    const b = await TestClient.open(s.url);
    expect((await b.request('agent.hello', helloParams(h2.host_id, h2.token))).error).toBeUndefined();
    expect((await a.request('logs.push', { seq_start: 1, entries: logEntries(1, 50) })).result.up_to_seq).toBe(50);
    const signalled = Date.now();
    s.child.kill('SIGTERM');
    const sdA = await a.next((m) => m.method === 'agent.shutdown');
    const sdB = await b.next((m) => m.method === 'agent.shutdown');
    expect(sdA.params).toEqual({ reason: 'ServerReload', drain_seconds: 2 });
    expect(sdB.params).toEqual({ reason: 'ServerReload', drain_seconds: 2 });
    // still ingesting and acking during the drain
    expect((await a.request('logs.push', { seq_start: 51, entries: logEntries(51, 50) })).result.up_to_seq).toBe(100);
    expect((await b.request('logs.push', { seq_start: 1, entries: logEntries(1, 20) })).result.up_to_seq).toBe(20);
    // no new sessions
    await expect(TestClient.open(s.url)).rejects.toMatchObject({ status: 503 });
    // a closes cleanly; b ignores the request and is closed 1001 at the end of the drain
    a.ws.close(1000, 'final_seq=100');
    await a.closed;
    const closedB = await b.closed;
    expect(closedB.code).toBe(1001);
    expect(await s.exited).toBe(0);
    const took = Date.now() - signalled;
    expect(took).toBeGreaterThanOrEqual(1500);
    expect(took).toBeLessThan(2000 + 5000);
    const st = openSqliteStorage({ path: db });
    const rows = await st.db.selectFrom('logs').select(['host_id', 'seq']).orderBy('seq').execute();
    expect(rows.filter((r) => r.host_id === h1.host_id).map((r) => Number(r.seq))).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(rows.filter((r) => r.host_id === h2.host_id)).toHaveLength(20);
    const agents = await st.db.selectFrom('agents').select(['host_id', 'connection_state', 'last_disconnect_reason']).execute();
    expect(agents.find((r) => r.host_id === h2.host_id)?.last_disconnect_reason).toMatch(/^1001/);
    expect(agents.every((r) => r.connection_state === 'Disconnected')).toBe(true);
    await st.close();
  }, 30_000);

  it('sessions that close early shorten the drain', async () => {
    const dir = makeTempDir();
    const db = join(dir, 'data', 'c.db');
    const h = JSON.parse(cli(['agent', 'issue', '--host', 'e1', '--json', '--db', db]).stdout);
    const s = await serve(['--db', db, '--shutdown-drain-secs', '30']);
    const a = await TestClient.open(s.url);
    await a.request('agent.hello', helloParams(h.host_id, h.token));
    const signalled = Date.now();
    s.child.kill('SIGTERM');
    await a.next((m) => m.method === 'agent.shutdown');
    a.ws.close(1000, 'final_seq=0');
    expect(await s.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(5000);
  }, 30_000);
});

describe('retention', () => {
  it('deletes logs and metrics older than retention_days in batches, keeps the rest, counts and logs it; ingest keeps acking meanwhile', async () => {
    const t = await startTestServer({ retention_days: 30 }, { retentionFirstRunDelayMs: 60_000, retentionBatchRows: 500, retentionPauseMs: 2 });
    try {
      const db = t.server.storage.db;
      const old = await issueAgent(db, 'old-host');
      const ancient = new Date(Date.now() - 40 * 86_400_000).toISOString();
      // 20,000 old rows (40 days) in commit-sized groups, plus 100 recent ones
      for (let from = 1; from <= 20_000; from += 1000) {
        await t.server.storage.ingest.commitBatch(old.host_id, entries(from, from + 999), new Date(Date.parse(ancient) + from).toISOString());
      }
      await t.server.storage.ingest.commitBatch(old.host_id, entries(20_001, 20_100), new Date().toISOString());
      await t.server.storage.ingest.insertMetrics(old.host_id, ancient, [{ name: 'cpu', value: 1 }], ancient);
      await t.server.storage.ingest.insertMetrics(old.host_id, new Date().toISOString(), [{ name: 'cpu', value: 2 }]);
      // a live agent pushes during the purge; every ack stays fast
      const live = await t.issue('live');
      const c = await TestClient.open(t.url);
      await c.request('agent.hello', helloParams(live.host_id, live.token));
      const purge = t.server.retention.run();
      let seq = 1;
      let worst = 0;
      let done = false;
      void purge.then(() => (done = true));
      while (!done) {
        const sent = performance.now();
        const r = await c.request('logs.push', { seq_start: seq, entries: logEntries(seq, 100) });
        worst = Math.max(worst, performance.now() - sent);
        expect(r.result.up_to_seq).toBe(seq + 99);
        seq += 100;
      }
      const result = await purge;
      expect(result.logs).toBe(20_000);
      expect(result.metrics).toBe(1);
      expect(worst).toBeLessThan(500); // K=100 acks come at once; the 200 ms T bound plus slack
      expect(seq).toBeGreaterThan(1); // at least one push went through during the purge
      const left = await db.selectFrom('logs').select('seq').where('host_id', '=', old.host_id).execute();
      expect(left).toHaveLength(100);
      const metrics = await db.selectFrom('metrics').select('value').execute();
      expect(metrics.map((m) => m.value)).toEqual([2]);
      const text = await t.server.metrics.text();
      expect(metricValue(text, 'cortex_retention_purged_rows_total', { table: 'logs', reason: 'age' })).toBe(20_000);
      expect(metricValue(text, 'cortex_retention_purged_rows_total', { table: 'metrics', reason: 'age' })).toBe(1);
      expect(t.log.records().some((r) => r['msg'] === 'retention: old rows deleted' && r['logs'] === 20_000)).toBe(true);
      c.ws.close();
      await c.closed;
    } finally {
      await t.close();
    }
  }, 60_000);

  it('--max-db-bytes deletes the oldest rows first until the live data fits', async () => {
    const tdb = await openTempDb();
    try {
      const h = await issueAgent(tdb.storage.db, 'big');
      const pad = 'x'.repeat(500);
      for (let from = 1; from <= 10_000; from += 1000) {
        await tdb.storage.ingest.commitBatch(h.host_id, entries(from, from + 999, { message: pad }), new Date(Date.UTC(2026, 0, 1) + from).toISOString());
      }
      const full = await tdb.storage.usedBytes();
      const cap = Math.floor(full / 2);
      const log = createCapturingLogger();
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const r = new Retention(tdb.storage, log.logger, metrics, { retentionDays: 36500, maxDbBytes: cap, batchRows: 500, pauseMs: 0 });
      const result = await r.run(new Date(Date.UTC(2026, 0, 2)));
      expect(result.logs).toBe(0);
      expect(result.sizeLogs).toBeGreaterThan(0);
      expect(await tdb.storage.usedBytes()).toBeLessThanOrEqual(cap);
      const rows = await tdb.storage.db.selectFrom('logs').select('seq').orderBy('seq').execute();
      // the newest rows survive, the oldest went first
      expect(Number(rows[rows.length - 1]?.seq)).toBe(10_000);
      expect(Number(rows[0]?.seq)).toBe(10_000 - rows.length + 1);
      expect(metricValue(await metrics.text(), 'cortex_retention_purged_rows_total', { table: 'logs', reason: 'size' })).toBe(result.sizeLogs);
    } finally {
      await tdb.cleanup();
    }
  });

  // SQLite's own page handling (PostgreSQL reuses the space; its partitions are dropped whole).
  itOn('sqlite')('a purge hands the freed pages back: the database file shrinks with its data', async () => {
    const tdb = await openTempDb();
    try {
      expect(tdb.storage.fileShrinks()).toBe(true);
      const h = await issueAgent(tdb.storage.db, 'shrink');
      const pad = 'x'.repeat(1000);
      const old = new Date(Date.UTC(2026, 0, 1)).toISOString();
      for (let from = 1; from <= 10_000; from += 1000) await tdb.storage.ingest.commitBatch(h.host_id, entries(from, from + 999, { message: pad }), old);
      const pages = () => {
        const ro = new Database(tdb.path, { readonly: true });
        try {
          return ro.pragma('page_count', { simple: true }) as number;
        } finally {
          ro.close();
        }
      };
      const before = pages();
      const log = createCapturingLogger();
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const r = new Retention(tdb.storage, log.logger, metrics, { retentionDays: 1, maxDbBytes: null, batchRows: 500, pauseMs: 0 });
      expect((await r.run(new Date(Date.UTC(2026, 1, 1)))).logs).toBe(10_000);
      const after = pages();
      // ~10 MiB of rows went: the file keeps its schema pages and little else
      expect(after).toBeLessThan(before / 10);
      const line = log.records().find((x) => x['msg'] === 'retention: old rows deleted');
      expect(line?.['released_bytes']).toBeGreaterThan(8 * 1024 * 1024);
      expect(await tdb.storage.releaseFreePages(1024)).toBe(0); // nothing left to release
    } finally {
      await tdb.cleanup();
    }
  });

  itOn('sqlite')('a database created before auto_vacuum (NONE) still purges, says once that its file will not shrink, and releases nothing', async () => {
    const dir = makeTempDir();
    const path = join(dir, 'old.db');
    const raw = new Database(path);
    raw.pragma('journal_mode = WAL');
    // a table was created (and dropped: a database of another application is refused, H33): the file has pages, auto_vacuum can no longer change
    raw.exec('CREATE TABLE legacy_marker (x INTEGER); DROP TABLE legacy_marker');
    raw.close();
    const storage = openSqliteStorage({ path });
    try {
      await migrateToLatest(storage);
      expect(storage.fileShrinks()).toBe(false);
      const h = await issueAgent(storage.db, 'legacy');
      await storage.ingest.commitBatch(h.host_id, entries(1, 1000, { message: 'y'.repeat(500) }), new Date(Date.UTC(2026, 0, 1)).toISOString());
      const log = createCapturingLogger();
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const r = new Retention(storage, log.logger, metrics, { retentionDays: 1, maxDbBytes: null, batchRows: 500, pauseMs: 0, firstRunDelayMs: 3_600_000 });
      r.start();
      await r.stop();
      expect(log.records().filter((x) => String(x['msg']).includes('auto_vacuum NONE'))).toHaveLength(1);
      const pass = new Retention(storage, log.logger, metrics, { retentionDays: 1, maxDbBytes: null, batchRows: 500, pauseMs: 0 });
      expect((await pass.run(new Date(Date.UTC(2026, 1, 1)))).logs).toBe(1000);
      expect(log.records().find((x) => x['msg'] === 'retention: old rows deleted')?.['released_bytes']).toBe(0);
      expect(await storage.releaseFreePages(1024)).toBe(0);
    } finally {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('audit rows are kept a year, or retention_days when longer; retention_days 0 keeps them (H36: they were never deleted)', async () => {
    const tdb = await openTempDb();
    try {
      const now = Date.UTC(2026, 5, 1);
      const audit = withTrustTables(tdb.storage.db);
      for (const days of [400, 366, 200, 1]) {
        await audit.insertInto('audit').values({ id: randomUUID(), at: new Date(now - days * 86_400_000).toISOString(), actor: 'loopback', action: 'probe', host_id: null, detail_json: `{"days":${days}}` }).execute();
      }
      const left = async () => (await audit.selectFrom('audit').select('detail_json').orderBy('at').execute()).map((r) => JSON.parse(String(r.detail_json)).days as number);
      const log = createCapturingLogger();
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const pass = (retentionDays: number) => new Retention(tdb.storage, log.logger, metrics, { retentionDays, maxDbBytes: null, batchRows: 1, pauseMs: 0 }).run(new Date(now));
      expect((await pass(0)).audit).toBe(0);
      expect(await left()).toEqual([400, 366, 200, 1]);
      expect((await pass(380)).audit).toBe(1); // retention_days longer than a year
      expect(await left()).toEqual([366, 200, 1]);
      expect((await pass(30)).audit).toBe(1); // a year
      expect(await left()).toEqual([200, 1]);
      expect(metricValue(await metrics.text(), 'cortex_retention_purged_rows_total', { table: 'audit' })).toBe(2);
    } finally {
      await tdb.cleanup();
    }
  });

  it('retention_days 0 keeps everything, however old (the size cap still applies)', async () => {
    const tdb = await openTempDb();
    try {
      const h = await issueAgent(tdb.storage.db, 'keep');
      const pad = 'x'.repeat(500);
      const now = Date.UTC(2026, 5, 1);
      // rows received 10 years, 1 day and 1 second before the pass
      for (const [i, ago] of [86_400_000 * 3650, 86_400_000, 1000].entries()) {
        const from = i * 1000 + 1;
        await tdb.storage.ingest.commitBatch(h.host_id, entries(from, from + 999, { message: pad }), new Date(now - ago).toISOString());
      }
      await tdb.storage.ingest.insertMetrics(h.host_id, new Date(now - 86_400_000 * 3650).toISOString(), [{ name: 'cpu', value: 1 }]);
      const log = createCapturingLogger();
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const keep = new Retention(tdb.storage, log.logger, metrics, { retentionDays: 0, maxDbBytes: null, batchRows: 500, pauseMs: 0 });
      expect(await keep.run(new Date(now))).toEqual({ logs: 0, metrics: 0, sizeLogs: 0, sizeMetrics: 0, audit: 0 });
      const count = async (table: 'logs' | 'metrics') => (await tdb.storage.db.selectFrom(table).select('host_id').execute()).length;
      expect(await count('logs')).toBe(3000);
      expect(await count('metrics')).toBe(1);
      // with a cap, 0 days still trims by size, oldest first
      const cap = Math.floor((await tdb.storage.usedBytes()) / 2);
      const capped = new Retention(tdb.storage, log.logger, metrics, { retentionDays: 0, maxDbBytes: cap, batchRows: 500, pauseMs: 0 });
      const r = await capped.run(new Date(now));
      expect(r.logs + r.metrics).toBe(0);
      expect(r.sizeLogs).toBeGreaterThan(0);
      const first = await tdb.storage.db.selectFrom('logs').select('seq').orderBy('seq').limit(1).executeTakeFirst();
      expect(Number(first?.seq)).toBeGreaterThan(1);
    } finally {
      await tdb.cleanup();
    }
  });
  // SQLite reads the age of logs from the rowid (the order rows were stored in: migration
  // 0030 dropped the received_at index), PostgreSQL from its received_at index.
  it('an age purge deletes every old row and no young one, also when the clock stepped back between commits', async () => {
    const tdb = await openTempDb();
    try {
      const h = await issueAgent(tdb.storage.db, 'order');
      const now = Date.UTC(2026, 5, 1);
      const day = 86_400_000;
      // stored in this order: 40 days old, 1 day, 40 days again (the clock stepped back), 1 s
      const ages = [40 * day, day, 40 * day + 5000, 1000];
      for (const [i, ago] of ages.entries()) {
        const from = i * 700 + 1;
        await tdb.storage.ingest.commitBatch(h.host_id, entries(from, from + 699), new Date(now - ago).toISOString());
      }
      const log = createCapturingLogger();
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const r = new Retention(tdb.storage, log.logger, metrics, { retentionDays: 30, maxDbBytes: null, batchRows: 300, pauseMs: 0 });
      const seqs = async () => (await tdb.storage.db.selectFrom('logs').select('seq').orderBy('seq').execute()).map((x) => Number(x.seq));
      const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
      const first = await r.run(new Date(now));
      if (tdb.storage.dialect === 'sqlite') {
        // the leading old commit goes, in batches of 300; the old one stored after a young
        // commit waits for it: kept longer, never deleted early
        expect(first.logs).toBe(700);
        expect(await seqs()).toEqual(range(701, 2800));
        // 30 days on, the young commit is old too, and the stepped-back one goes with it
        const later = await r.run(new Date(now + 30 * day - 2000)); // the 1 s old commit is still young
        expect(later.logs).toBe(1400);
        expect(await seqs()).toEqual(range(2101, 2800));
      } else {
        expect(first.logs).toBe(1400);
        expect(await seqs()).toEqual([...range(701, 1400), ...range(2101, 2800)]);
      }
      expect(metricValue(await metrics.text(), 'cortex_retention_purged_rows_total', { table: 'logs', reason: 'age' })).toBe(tdb.storage.dialect === 'sqlite' ? 2100 : 1400);
    } finally {
      await tdb.cleanup();
    }
  });

  // G38: a metric row's ts is the agent's clock. A host whose clock is years behind (a board
  // without a battery-backed clock, before NTP) or ahead must neither lose its samples at the
  // next pass nor keep them forever and ahead of everyone else's under the size cap.
  it("metrics age by the server's receive time, not the agent's clock; rows stored before migration 0031 by their sample time", async () => {
    const tdb = await openTempDb();
    try {
      const db = tdb.storage.db;
      const h = await issueAgent(db, 'clocks');
      const now = Date.UTC(2026, 5, 1);
      const day = 86_400_000;
      const at = (ms: number) => new Date(ms).toISOString();
      const sample = (value: number) => [{ name: 'cpu', value }];
      await tdb.storage.ingest.insertMetrics(h.host_id, at(Date.UTC(1970, 0, 1)), sample(1), at(now - 1000)); // clock behind, received now: kept
      await tdb.storage.ingest.insertMetrics(h.host_id, at(Date.UTC(2036, 0, 1)), sample(2), at(now - 40 * day)); // clock ahead, received 40 days ago: goes
      await tdb.storage.ingest.insertMetrics(h.host_id, at(now - 40 * day), sample(3), at(now - 1000)); // sent late (a backlog), received now: kept
      // rows stored before migration 0031 have no received_at: their sample time decides
      await db
        .insertInto('metrics')
        .values([
          { host_id: h.host_id, ts: at(now - 40 * day), name: 'cpu', value: 4, labels_json: null, received_at: null },
          { host_id: h.host_id, ts: at(now - day), name: 'cpu', value: 5, labels_json: null, received_at: null },
        ])
        .execute();
      const log = createCapturingLogger();
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const r = await new Retention(tdb.storage, log.logger, metrics, { retentionDays: 30, maxDbBytes: null, batchRows: 1, pauseMs: 0 }).run(new Date(now));
      expect(r.metrics).toBe(2);
      const values = async () => (await db.selectFrom('metrics').select('value').orderBy('value').execute()).map((m) => Number(m.value));
      expect(await values()).toEqual([1, 3, 5]);
      expect(metricValue(await metrics.text(), 'cortex_retention_purged_rows_total', { table: 'metrics', reason: 'age' })).toBe(2);
      const stored = await db.selectFrom('metrics').select(['value', 'received_at']).where('value', '=', 1).executeTakeFirstOrThrow();
      expect(stored.received_at).toBe(at(now - 1000));
    } finally {
      await tdb.cleanup();
    }
  });

  it('--max-db-bytes deletes the metric rows received first, whatever time their agent put on them', async () => {
    const tdb = await openTempDb();
    try {
      const db = tdb.storage.db;
      const ahead = await issueAgent(db, 'ahead');
      const right = await issueAgent(db, 'right');
      const now = Date.UTC(2026, 5, 1);
      const at = (ms: number) => new Date(ms).toISOString();
      const labels = { pad: 'x'.repeat(400) };
      const samples = (value: number) => Array.from({ length: 100 }, (_, i) => ({ name: `m${i}`, value, labels }));
      // first a host whose clock is ten years ahead, then one whose clock is right; a row
      // stored before migration 0031 (no received_at) is older than both
      await db.insertInto('metrics').values({ host_id: right.host_id, ts: at(now - 5000), name: 'legacy', value: 0, labels_json: null, received_at: null }).execute();
      for (let i = 0; i < 20; i++) await tdb.storage.ingest.insertMetrics(ahead.host_id, at(now + 3650 * 86_400_000 + i), samples(1), at(now - 4000 + i));
      for (let i = 0; i < 20; i++) await tdb.storage.ingest.insertMetrics(right.host_id, at(now - 2000 + i), samples(2), at(now - 2000 + i));
      const cap = Math.floor((await tdb.storage.usedBytes()) * 0.6);
      const log = createCapturingLogger();
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const r = await new Retention(tdb.storage, log.logger, metrics, { retentionDays: 30, maxDbBytes: cap, batchRows: 100, pauseMs: 0 }).run(new Date(now));
      expect(r.metrics).toBe(0);
      expect(r.sizeMetrics).toBeGreaterThan(0);
      expect(await tdb.storage.usedBytes()).toBeLessThanOrEqual(cap);
      const left = async (host_id: string) => (await db.selectFrom('metrics').select('host_id').where('host_id', '=', host_id).execute()).length;
      // the host ahead sent first: its rows go first; the other host keeps every row
      expect(await left(right.host_id)).toBe(2000);
      expect(await left(ahead.host_id)).toBeLessThan(2000);
    } finally {
      await tdb.cleanup();
    }
  });
});
