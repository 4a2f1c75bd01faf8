// A network path to PostgreSQL that stops answering under a running server (DECISIONS G43):
// packets neither answered nor refused — a firewall that DROPs, a partition, a host or proxy
// that hangs. Before, a statement on a connection that was already open waited for TCP to give
// up (about 15 minutes with Linux's default retransmissions), and with it everything behind it:
// an agent's push (the agent's request timed out at 30 s with nothing said), the lease
// renewal, the LISTEN connection of the control plane. Here the server reaches PostgreSQL
// through a relay that can freeze (hold everything, deliver it once thawed) or lose its open
// connections for good (the far side closed, the near side left silent, as behind a stateful
// firewall that forgot the flows), with short bounds (`silentMs` and friends, options of
// openPostgresStorage) so that the test takes seconds.
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it, type TestContext } from 'vitest';
import { TestClient, countRows, enroll, logEntries, startTestServer, waitFor, type Msg, type TestServer } from './wire.js';
import { httpBase, httpRequest, metricValue } from './control-helpers.js';
import { PG_TEST_URL, newTestDb } from '../support/dialects.js';
import { FreezingRelay } from '../support/freezing-relay.js';
import { openPostgresStorage, type PostgresStorageOptions } from '../../server/db/postgres.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { revoke } from '../../server/db/agents.repository.js';
import { DatabaseOutage, isDatabaseUnreachable, waitedFor } from '../../server/db/outage.js';
import { createCapturingLogger } from '../../server/log.js';
import { registerFleetMetrics } from '../../server/fleet-metrics.js';
import { Registry } from 'prom-client';
import type { Storage } from '../../server/db/storage.js';

const LATE = Symbol('no answer in time');

/** `p`'s outcome, or LATE when it takes longer than `ms` (a test must not hang for TCP's 15 minutes). */
async function within<T>(p: Promise<T>, ms: number): Promise<T | typeof LATE> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<typeof LATE>((resolve) => (timer = setTimeout(() => resolve(LATE), ms)))]).finally(() => clearTimeout(timer));
}

/** Short bounds: a statement silent for 400 ms is looked into; connecting waits 1 s at most; the LISTEN connection is pinged every 300 ms. */
const SHORT: Omit<PostgresStorageOptions, 'url'> = { poolSize: 4, silentMs: 400, connectTimeoutMs: 1000, listenPingMs: 300 };

/** What one test opened: its relay, its server, what else to close when it ends. Each test has its own (they run side by side). */
interface Fixture {
  relay?: FreezingRelay;
  t?: TestServer;
  cleanups: (() => Promise<void>)[];
}

/** A fixture for the test of `ctx`, closed when it ends. */
function fixture(ctx: TestContext): Fixture {
  const f: Fixture = { cleanups: [] };
  ctx.onTestFinished(async () => {
    f.relay?.thaw(); // the server's close needs its database
    await f.t?.close();
    for (const c of f.cleanups.splice(0).reverse()) await c().catch(() => undefined);
    await f.relay?.close();
  });
  return f;
}

/** A fresh schema, a relay in front of it, a storage opened (and migrated) through the relay with `options`. */
async function throughRelay(f: Fixture, options: Omit<PostgresStorageOptions, 'url'> = SHORT): Promise<{ direct: string; url: string; storage: Storage; relay: FreezingRelay }> {
  const target = await newTestDb('postgres');
  f.cleanups.push(target.drop);
  const url = new URL(target.db);
  const relay = (f.relay = new FreezingRelay({ host: url.hostname, port: Number(url.port || 5432) }));
  await relay.open();
  url.hostname = '127.0.0.1';
  url.port = String(relay.port);
  const storage = openPostgresStorage({ url: url.toString(), ...options });
  f.cleanups.push(() => storage.close());
  await migrateToLatest(storage);
  return { direct: target.db, url: url.toString(), storage, relay };
}

/** A server on `storage` (its own options: a lease of 3 s, renewed every second). */
async function serverOn(f: Fixture, url: string, storage: Storage, extra: { controlPollMs?: number } = {}): Promise<TestServer> {
  return (f.t = await startTestServer({ db: url }, { dialect: 'postgres', storage, leaseMs: 3000, ...extra }));
}

/** A push of entries [from, from + n), and its answer (or LATE after `ms`). */
function push(c: TestClient, from: number, n: number, ms: number): Promise<Msg | typeof LATE> {
  return within(c.request('logs.push', { seq_start: from, entries: logEntries(from, n) }), ms);
}

const msgs = (s: TestServer): unknown[] => s.log.records().map((r) => r['msg']);

describe.concurrent('a network path to PostgreSQL that stops answering', () => {
  // At most five side by side (vitest's maxConcurrency): the longest first, so that the last to
  // start are short.
  it('a server stopped while the path is frozen stops within bounds (its last writes fail, told as one outage), not when TCP gives up', async (ctx) => {
    const f = fixture(ctx);
    const { url, storage, relay } = await throughRelay(f);
    const t = await serverOn(f, url, storage);
    const a = await enroll(t);
    expect(await push(a.client, 1, 10, 5000)).toMatchObject({ result: { up_to_seq: 10 } });
    relay.freeze();
    const at = Date.now();
    expect(await within(t.server.close(), 8000), 'the server\'s close with the path frozen').not.toBe(LATE);
    expect(await within(storage.close(), 3000), 'the storage\'s close with the path frozen').not.toBe(LATE);
    expect(Date.now() - at).toBeLessThan(8000);
    expect(msgs(t).filter((m) => typeof m === 'string' && /^database (not answering|out of reach)/.test(m))).toHaveLength(1);
  }, 30_000);

  it('frozen: a push is answered -32007, the lease renewal ends and the outage is told, /healthz 503, within bounds; thawed, the server goes on by itself and nothing is lost', async (ctx) => {
    const f = fixture(ctx);
    const { url, storage, relay } = await throughRelay(f);
    const t = await serverOn(f, url, storage);
    const a = await enroll(t);
    expect(await push(a.client, 1, 100, 5000)).toMatchObject({ result: { up_to_seq: 100 } });

    relay.freeze();
    // The commit goes to a pool connection that was open (and idle) when the path froze.
    const at = Date.now();
    const refused = await push(a.client, 101, 100, 8000);
    expect(refused, 'a push with the path frozen (it hung until TCP gave up)').not.toBe(LATE);
    expect(Date.now() - at).toBeLessThan(4000);
    expect((refused as Msg).error?.code).toBe(-32007);
    expect((refused as Msg).error?.data.reason).toBe('commit failed: the server cannot reach its database; nothing of the batch was stored');

    // The lease renewal ends within the lease (3 s) instead of hanging, and the outage is told once.
    expect(await within(t.server.registry.tick(), 3000), 'a lease renewal with the path frozen').not.toBe(LATE);
    // (first a statement cut, or a new connection timed out: whichever came first, one line)
    const outageLines = () => msgs(t).filter((m) => typeof m === 'string' && /^database (not answering|out of reach)/.test(m));
    await waitFor(() => outageLines().length > 0, 3000);
    expect(outageLines()).toHaveLength(1);
    // Known now: /healthz says so at once, /metrics too.
    const h = await within(httpRequest(`${httpBase(t)}/healthz`), 1000);
    expect(h).not.toBe(LATE);
    expect(h === LATE ? undefined : [h.status, (h.body as { database?: string }).database]).toEqual([503, 'unreachable']);
    expect(metricValue(await t.server.metrics.text(), 'cortex_database_up')).toBe(0);

    relay.thaw();
    // The agent resends; connections cut during the freeze are gone, new ones carry on.
    await waitFor(async () => {
      const r = await push(a.client, 101, 100, 5000);
      return r !== LATE && r.result?.up_to_seq === 200;
    }, 15_000);
    expect(await countRows(t, a.host_id)).toBe(200);
    await waitFor(() => msgs(t).includes('database reachable again'), 5000);
    await waitFor(async () => (await httpRequest(`${httpBase(t)}/healthz`)).status === 200, 5000);
    expect(await within(t.server.registry.tick(), 3000)).not.toBe(LATE);
    a.client.ws.close();
    await a.client.closed;
  }, 60_000);

  it('a large answer over a slow link is not cut: bytes keep coming, though PostgreSQL has long sent it all', async (ctx) => {
    const f = fixture(ctx);
    const { storage, relay } = await throughRelay(f, { poolSize: 2, silentMs: 300, connectTimeoutMs: 1000, listenPingMs: 300 });
    await sql`select 1`.execute(storage.db);
    relay.slowBytes = 8 * 1024; // 80 KB/s: ~250 KB take 3 s
    const at = Date.now();
    const r = await within(sql<{ s: string }>`select repeat('x', 1000) as s from generate_series(1, 250)`.execute(storage.db), 10_000);
    relay.slowBytes = undefined;
    expect(r).not.toBe(LATE);
    expect(r === LATE ? 0 : r.rows.length).toBe(250);
    expect(Date.now() - at).toBeGreaterThan(1000); // it did take longer than the bound
  }, 30_000);

  it('a lease renewal left unanswered is told within the lease, however long the statements themselves may wait', async (ctx) => {
    const f = fixture(ctx);
    // Statements are looked into after 5 s and connections wait 5 s: nothing of the pool tells the outage within the 3 s lease.
    const { url, storage, relay } = await throughRelay(f, { poolSize: 4, silentMs: 5000, connectTimeoutMs: 5000, listenPingMs: 5000 });
    const t = await serverOn(f, url, storage);
    const frozenAt = Date.now();
    relay.freeze();
    await waitFor(() => t.log.records().some((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('database not answering')), 3000);
    expect(Date.now() - frozenAt).toBeLessThan(3000);
    const told = t.log.records().find((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('database not answering'))!;
    expect(told['failed']).toBe('lease renewal');
    expect(String(told['err'])).toMatch(/lease renewal got no answer from the database within 1.5 s \(half its lease\)/);
    expect(metricValue(await t.server.metrics.text(), 'cortex_database_up')).toBe(0);
    relay.thaw();
    await waitFor(async () => (await t.server.metrics.text()).includes('cortex_database_up 1'), 15_000);
  }, 40_000);

  it('open connections lost for good (the path back, its flows forgotten): pushes are acked again, the lease renewed, and the LISTEN connection replaced — a revocation by NOTIFY reaches the agent', async (ctx) => {
    const f = fixture(ctx);
    const { direct, url, storage, relay } = await throughRelay(f);
    // No poll to speak of: a control change reaches this server by NOTIFY only.
    const t = await serverOn(f, url, storage, { controlPollMs: 120_000 });
    const a = await enroll(t);
    expect(await push(a.client, 1, 100, 5000)).toMatchObject({ result: { up_to_seq: 100 } });
    const watcher = openPostgresStorage({ url: direct, poolSize: 2 });
    f.cleanups.push(() => watcher.close());
    const present = () => watcher.notifyBus!().presenceHeld!(t.server.serverId);
    expect(await present()).toBe(true);

    relay.loseOpenConnections();
    // Every statement on a lost connection is cut once it has gone unanswered; new connections carry on.
    await waitFor(async () => {
      const r = await push(a.client, 101, 100, 5000);
      return r !== LATE && r.result?.up_to_seq === 200;
    }, 15_000);
    expect(await countRows(t, a.host_id)).toBe(200);
    expect(await within(t.server.registry.tick(), 3000)).not.toBe(LATE);
    const lease = await sql<{ live: boolean }>`select lease_until > ${t.server.registry.now().toISOString()} as live from servers where server_id = ${t.server.serverId}`.execute(watcher.db);
    expect(lease.rows[0]?.live).toBe(true);

    // The LISTEN connection was found dead by its ping and opened again (with the presence lock
    // of G42, which PostgreSQL let go with the lost session).
    await waitFor(present, 10_000);
    await revoke(watcher.db, a.host_id);
    expect(await within(a.client.closed, 5000), 'the revocation, told by NOTIFY').toEqual({ code: 4002, reason: 'revoked' });
  }, 60_000);

  it('a statement PostgreSQL is still working on runs past the bound; one on a frozen path is cut and its connection closed, not given back to the pool', async (ctx) => {
    const f = fixture(ctx);
    const { storage, relay } = await throughRelay(f, { poolSize: 2, silentMs: 300, connectTimeoutMs: 1000, listenPingMs: 300 });
    // Slow, not silent: PostgreSQL says it runs (pg_stat_activity), so it is let run.
    expect((await sql<{ ok: number }>`select 1 as ok from pg_sleep(1.2)`.execute(storage.db)).rows).toEqual([{ ok: 1 }]);
    // A pool connection known by its backend: used again next (the pool hands out the last one back).
    const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(storage.db)).rows[0]!.pid;

    relay.freeze();
    const at = Date.now();
    const frozen = await within(
      sql`select pg_backend_pid()`.execute(storage.db).then(
        () => 'answered',
        (error: unknown) => error,
      ),
      5000,
    );
    expect(frozen, 'a statement with the path frozen').not.toBe(LATE);
    expect(Date.now() - at).toBeLessThan(2000);
    expect(frozen).toMatchObject({ code: 'CORTEX_DB_SILENT' });
    expect(String((frozen as Error).message)).toMatch(/no answer from PostgreSQL within 0.3 s/);
    expect(isDatabaseUnreachable(frozen)).toBe(true);
    // told by the outage account in its own words
    const log = createCapturingLogger();
    new DatabaseOutage({ logger: log.logger }).failed('ingest', frozen);
    expect(log.records()[0]).toMatchObject({
      msg: expect.stringMatching(/^database not answering: .* — check the network between this host and the database/),
      err: expect.stringMatching(/a statement got no answer from PostgreSQL within 0.3 s/),
    });
    relay.thaw();
    // That connection was closed (the relay closed its PostgreSQL side): its backend is gone.
    const admin = new pg.Client({ connectionString: PG_TEST_URL });
    await admin.connect();
    f.cleanups.push(() => admin.end());
    await waitFor(async () => (await admin.query('select count(*)::int as n from pg_stat_activity where pid = $1', [pid])).rows[0].n === 0, 5000);
    // The pool opens a new one.
    expect((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(storage.db)).rows[0]!.pid).not.toBe(pid);
  }, 30_000);

  it('a statement and a connection begun on the frozen path and failing after the database answered again say how long they waited: no new outage (G46); one begun after does open one', async (ctx) => {
    const f = fixture(ctx);
    const options = { poolSize: 2, silentMs: 400, connectTimeoutMs: 1500, listenPingMs: 300 };
    const { direct, url, storage, relay } = await throughRelay(f, options);
    await sql`select 1`.execute(storage.db);
    // a second storage with no connection open yet: its first statement starts one
    const cold = openPostgresStorage({ url, ...options });
    f.cleanups.push(() => cold.close());
    const log = createCapturingLogger();
    const outage = new DatabaseOutage({ logger: log.logger });
    // A failure goes to the outage account as it comes, as the server's callers report them.
    const failure = (p: Promise<unknown>) =>
      p.then(
        () => ({ error: undefined as unknown, took: false, downAfter: outage.down }),
        (error: unknown) => ({ error, took: outage.failed('health check', error), downAfter: outage.down }),
      );
    relay.freeze();
    const frozenAt = Date.now();
    const onOpen = failure(sql`select 1`.execute(storage.db)); // on a connection that was open
    const onNew = failure(sql`select 2`.execute(cold.db)); // on a new connection, its start held
    outage.failed('ingest', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    expect(outage.down).toBe(true);
    // The path comes back without the flows it carried: both are lost for good. The database
    // answers again (another connection), and that ends the outage.
    relay.loseOpenConnections();
    const admin = new pg.Client({ connectionString: direct });
    await admin.connect();
    f.cleanups.push(() => admin.end());
    await admin.query('select 1');
    outage.succeeded();
    const endedAt = Date.now();
    const [cut, timedOut] = await Promise.all([within(onOpen, 10_000), within(onNew, 10_000)]);
    expect(cut).toMatchObject({ error: { code: 'CORTEX_DB_SILENT' } });
    expect(timedOut).toMatchObject({ error: { message: expect.stringMatching(/timeout/) } });
    for (const r of [cut, timedOut]) {
      if (typeof r === 'symbol') continue;
      expect(waitedFor(r.error), String(r.error)).toBeGreaterThanOrEqual(endedAt - frozenAt);
      expect(r.took).toBe(true);
      expect(r.downAfter, `a late failure (${String(r.error)}) opened a new outage`).toBe(false);
    }
    expect(log.records().map((r) => r['msg'])).toEqual([expect.stringMatching(/^database out of reach/), 'database reachable again']);
    // A statement begun after the end, on a connection made after it, on a path that freezes again: a new outage.
    relay.thaw();
    const later = openPostgresStorage({ url, ...options });
    f.cleanups.push(() => later.close());
    await sql`select 3`.execute(later.db);
    relay.freeze();
    const fresh = await within(failure(sql`select 4`.execute(later.db)), 10_000);
    expect(fresh).toMatchObject({ error: { code: 'CORTEX_DB_SILENT' }, took: true, downAfter: true });
  }, 30_000);

  it('a /metrics scrape after the path came back does not join a fleet read begun while it was frozen: it reads anew and has its gauges', async (ctx) => {
    const f = fixture(ctx);
    const options = { poolSize: 4, silentMs: 5000, connectTimeoutMs: 5000, listenPingMs: 300 };
    const { url, relay } = await throughRelay(f, options);
    // a storage with two connections open, both taken by one fleet read (its two statements)
    const storage = openPostgresStorage({ url, ...options });
    f.cleanups.push(() => storage.close());
    await Promise.all([sql`select 1`.execute(storage.db), sql`select 2`.execute(storage.db)]);
    const registry = new Registry();
    const errors: unknown[] = [];
    registerFleetMetrics(registry, storage.db, { silentAfterSecs: 60, readTimeoutMs: 300, databaseDown: () => false, onError: (e) => errors.push(e) });
    const scrape = async (): Promise<{ ms: number; text: string }> => {
      // a new scrape, as the next HTTP request would be: the one before ended its share of the read on its event loop turn
      await new Promise<void>((resolve) => setImmediate(resolve));
      const at = Date.now();
      const text = await registry.metrics();
      return { ms: Date.now() - at, text };
    };
    expect(metricValue((await scrape()).text, 'cortex_agents', { state: 'Active' })).toBe(0);

    relay.freeze();
    const frozen = await scrape();
    expect(frozen.ms).toBeLessThan(2000);
    expect(frozen.text).not.toMatch(/^cortex_agents\{/m); // left out: no figures of this scrape
    // The path back without the flows it carried: that read's statements are never answered
    // (cut only after silentMs, 5 s); new connections pass.
    relay.loseOpenConnections();
    relay.thaw();
    const back = await scrape();
    expect(back.text, 'a scrape that joined the read begun while the path was frozen').toMatch(/^cortex_agents\{/m);
    expect(metricValue(back.text, 'cortex_agents', { state: 'Active' })).toBe(0);
    expect(errors).toEqual([]);
  }, 30_000);

  it('batches waiting for an ingest statement fail with the one that found the path silent, instead of each waiting to be cut in turn', async (ctx) => {
    const f = fixture(ctx);
    // Two pool connections (both kept open), one ingest statement at a time.
    const { storage, relay } = await throughRelay(f, { poolSize: 2, silentMs: 500, connectTimeoutMs: 3000, listenPingMs: 300 });
    await Promise.all([sql`select 1`.execute(storage.db), sql`select 1`.execute(storage.db)]);
    relay.freeze();
    const when = (p: Promise<unknown>) =>
      p.then(
        () => ({ at: Date.now(), error: undefined as unknown }),
        (error: unknown) => ({ at: Date.now(), error }),
      );
    const now = new Date().toISOString();
    const first = when(storage.ingest.commitBatch('host-a', [{ seq: 1, ts: now, severity: 'info', message: 'a', source: 'custom:test' }], now));
    const waiting = when(storage.ingest.commitBatch('host-b', [{ seq: 1, ts: now, severity: 'info', message: 'b', source: 'custom:test' }], now));
    const [a, b] = await Promise.all([within(first, 5000), within(waiting, 5000)]);
    expect(a).not.toBe(LATE);
    expect(b).not.toBe(LATE);
    if (a === LATE || b === LATE) return;
    expect(a.error).toMatchObject({ code: 'CORTEX_DB_SILENT' });
    expect(b.error).toMatchObject({ code: 'CORTEX_DB_SILENT' });
    // the waiting batch with it, not one bound later on the next frozen connection
    expect(b.at - a.at).toBeLessThan(250);
  }, 30_000);
});
