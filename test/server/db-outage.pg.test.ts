// PostgreSQL out of reach under a running server (DECISIONS G11): the server talks to the
// database through a TCP relay this test cuts (every open connection dropped, new ones
// refused) and restores, as when PostgreSQL is stopped or restarted or the network to it
// fails. Nothing is stored while it is out, every push is answered -32007 with the reason,
// a hello gets -32603 and close 1011 saying why, the admin API 503; the log holds one line
// for the outage instead of one per failed operation, /metrics says it; once the database
// is back the resent entries are stored exactly once.
import { afterEach, describe, expect, it } from 'vitest';
import { TestClient, countRows, enroll, helloParams, logEntries, startTestServer, waitFor, type TestServer } from './wire.js';
import { httpBase, httpRequest, metricValue } from './control-helpers.js';
import { sql } from 'kysely';
import pg from 'pg';
import { PG_TEST_URL, dropSchemaUnderLock, newTestDb } from '../support/dialects.js';
import { Relay } from '../support/tcp-relay.js';
import { openStorage } from '../../server/db/open.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';

/** Queries `select pg_sleep(10)` running on PostgreSQL now (seen directly, not through the relay). */
async function sleepingQueries(): Promise<number> {
  const client = new pg.Client({ connectionString: PG_TEST_URL });
  await client.connect();
  try {
    const r = await client.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where query = 'select pg_sleep(10)' and state = 'active'");
    return r.rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

/**
 * A login role and schema of the test's own, so that altering the role (read-only, NOLOGIN)
 * touches no other test's connections; `kick` ends the role's connections (as a failover does).
 */
async function ownRole(prefix: string) {
  const role = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  const su = new pg.Client({ connectionString: PG_TEST_URL });
  await su.connect();
  const kick = () => su.query('select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role]);
  await su.query(`create role ${role} login`);
  await su.query(`create schema ${role} authorization ${role}`);
  const url = new URL(PG_TEST_URL);
  url.username = role;
  url.searchParams.set('options', `-c search_path=${role}`);
  return {
    role,
    url: url.toString(),
    su,
    kick,
    async drop() {
      await dropSchemaUnderLock(su, role).catch(() => undefined);
      await kick().catch(() => undefined);
      await su.query(`drop role if exists ${role}`).catch(() => undefined);
      await su.end();
    },
  };
}

let t: TestServer | undefined;
let relay: Relay | undefined;
let dropDb: (() => Promise<void>) | undefined;
afterEach(async () => {
  await relay?.open().catch(() => undefined); // the server's close needs its database
  await t?.close();
  await relay?.cut();
  await dropDb?.();
  t = relay = dropDb = undefined;
});

/** What the admin API answers GET /admin/agents with: its status and error message. */
async function adminAnswer(server: NonNullable<typeof t>): Promise<{ status: number; message: string | undefined }> {
  const r = await fetch(`${httpBase(server)}/admin/agents`);
  return { status: r.status, message: ((await r.json()) as { error?: { message: string } }).error?.message };
}

describe('PostgreSQL out of reach under a running server', () => {
  it('a hello whose check waits on a locked table past the hello timer: close 4000 saying so (not as if no hello came)', async () => {
    t = await startTestServer({ hello_timeout_ms: 300 }, { dialect: 'postgres' });
    const h = await t.issue();
    const locker = new pg.Client({ connectionString: t.dbPath });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table agents in access exclusive mode');
      const c = await TestClient.open(t.url);
      c.fire('agent.hello', helloParams(h.host_id, h.token));
      expect(await c.closed).toEqual({ code: 4000, reason: 'hello not checked in time' });
      expect(t.log.records().some((r) => r['msg'] === 'hello received but not checked in time (the database slow or locked?): closing 4000')).toBe(true);
      await locker.query('commit');
    } finally {
      await locker.end();
    }
    // and with the table free again the hello goes through
    const a = await enroll(t, h);
    a.client.ws.close();
    await a.client.closed;
  });

  it('pushes get -32007 with the reason, a hello 1011, the admin API 503; one log line, cortex_database_up 0; once it is back, every entry stored once', async () => {
    const target = await newTestDb('postgres');
    dropDb = target.drop;
    const url = new URL(target.db);
    relay = new Relay({ host: url.hostname, port: Number(url.port || 5432) });
    await relay.open();
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    t = await startTestServer({ db: url.toString() }, { dialect: 'postgres' });
    const a = await enroll(t);
    const other = await t.issue('web-2');
    expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 100) })).result.up_to_seq).toBe(100);

    // A query running when the connection is lost fails; the server process goes on (pg
    // emits 'error' on that client too: unhandled, it was an uncaught exception that ended
    // the server, and vitest fails the file on one).
    const running = sql`select pg_sleep(10)`.execute(t.server.storage.db);
    await waitFor(async () => (await sleepingQueries()) === 1);
    await relay.cut();
    await expect(running).rejects.toThrow(/Connection terminated unexpectedly/);
    for (let i = 0; i < 3; i++) {
      const r = await a.client.request('logs.push', { seq_start: 101, entries: logEntries(101, 100) });
      expect(r.error?.code).toBe(-32007);
      expect(r.error?.data.reason).toBe('commit failed: the server cannot reach its database; nothing of the batch was stored');
    }
    // A hello cannot be checked: -32603, then close 1011 with the reason.
    const b = await TestClient.open(t.url);
    const hello = await b.request('agent.hello', helloParams(other.host_id, other.token));
    expect(hello.error?.code).toBe(-32603);
    expect(await b.closed).toEqual({ code: 1011, reason: 'server database unavailable' });
    // The admin API says so instead of an empty 500.
    const admin = await fetch(`${httpBase(t)}/admin/agents`);
    expect(admin.status).toBe(503);
    expect(admin.headers.get('retry-after')).toBe('5');
    expect(((await admin.json()) as { error: { code: number; message: string } }).error).toEqual({ code: 503, message: 'the server cannot reach its database; try again shortly (the server log says why)' });
    const metrics = await t.server.metrics!.text();
    expect(metricValue(metrics, 'cortex_database_up')).toBe(0);
    expect(metricValue(metrics, 'cortex_ingest_commit_failures_total', { reason: 'db_unreachable' })).toBe(3);
    const msgs = () => t!.log.records().map((r) => r['msg']);
    expect(msgs().filter((m) => typeof m === 'string' && m.startsWith('database out of reach'))).toHaveLength(1);
    expect(msgs()).not.toContain('ingest commit failed (-32007)');
    expect(msgs()).not.toContain('hello failed with an internal error');
    expect(msgs()).not.toContain('HTTP handler failed');

    await relay.open();
    // The agent resends after retry_after_ms; the pool connects again.
    await waitFor(async () => (await a.client.request('logs.push', { seq_start: 101, entries: logEntries(101, 100) })).result?.up_to_seq === 200, 15_000);
    expect(await countRows(t, a.host_id)).toBe(200);
    await waitFor(() => msgs().includes('database reachable again'));
    const back = t.log.records().find((r) => r['msg'] === 'database reachable again')!;
    expect(back['failed_operations']).toMatchObject({ ingest: expect.any(Number), hello: 1, 'admin API': 1 });
    expect(metricValue(await t.server.metrics!.text(), 'cortex_database_up')).toBe(1);
    a.client.ws.close();
    await a.client.closed;
  });

  it("this server's login refused (its password rotated, the role altered): one log line, pushes -32007 saying so, cortex_database_up 0; once it logs in again, every entry stored once (G21)", async () => {
    const { role, url, su, kick, drop } = await ownRole('cx_login');
    try {
      t = await startTestServer({ db: url }, { dialect: 'postgres', controlPollMs: 100 });
      const a = await enroll(t);
      expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 100) })).result.up_to_seq).toBe(100);
      // New connections are refused from now on (28000), open ones are ended.
      await su.query(`alter role ${role} nologin`);
      await kick();
      const push = () => a.client.request('logs.push', { seq_start: 101, entries: logEntries(101, 100) });
      const refusedLogin = "commit failed: the server's database refused its login; nothing of the batch was stored";
      await waitFor(async () => (await push()).error?.data?.reason === refusedLogin, 15_000);
      for (let i = 0; i < 5; i++) expect((await push()).error?.data.reason).toBe(refusedLogin);
      const told = t.log.records().filter((r) => typeof r['msg'] === 'string' && r['msg'].startsWith("database unusable: PostgreSQL refused this server's login"));
      expect(told).toHaveLength(1);
      expect(String(told[0]?.['err'])).toMatch(/^28000: role .* is not permitted to log in/);
      expect(t.log.records().map((r) => r['msg'])).not.toContain('ingest commit failed (-32007)');
      expect(t.log.records().map((r) => r['msg'])).not.toContain('control watcher: database read failed; retrying');
      expect(metricValue(await t.server.metrics!.text(), 'cortex_database_up')).toBe(0);
      // a load balancer's health check sends agents elsewhere meanwhile
      const health = await fetch(`${httpBase(t)}/healthz`);
      expect([health.status, ((await health.json()) as { database: string }).database]).toEqual([503, 'login_refused']);
      // the admin API says what it is, not "cannot reach": waiting alone will not end it
      const admin = await adminAnswer(t);
      expect(admin.status).toBe(503);
      expect(admin.message).toBe("the server's database refused its login: an operator has to mend its credentials (the server log says why); try again after");
      await su.query(`alter role ${role} login`);
      await waitFor(async () => (await push()).result?.up_to_seq === 200, 15_000);
      expect(await countRows(t, a.host_id)).toBe(200);
      a.client.ws.close();
      await a.client.closed;
    } finally {
      await t?.close();
      t = undefined;
      await drop();
    }
  });

  it('the database dropped under the server (3D000 for every new connection): one log line naming it, pushes -32007 saying so, /healthz "missing"; once it exists again, one line (G29)', async () => {
    const name = `cx_gone_${process.pid}_${Date.now().toString(36)}`;
    const su = new pg.Client({ connectionString: PG_TEST_URL });
    await su.connect();
    await su.query(`create database ${name}`);
    const url = new URL(PG_TEST_URL);
    url.search = '';
    url.pathname = `/${name}`;
    try {
      t = await startTestServer({ db: url.toString() }, { dialect: 'postgres', controlPollMs: 100 });
      const a = await enroll(t);
      expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 100) })).result.up_to_seq).toBe(100);
      await su.query(`drop database ${name} with (force)`);
      const push = () => a.client.request('logs.push', { seq_start: 101, entries: logEntries(101, 100) });
      const missing = "commit failed: the server's database does not exist any more; nothing of the batch was stored";
      await waitFor(async () => (await push()).error?.data?.reason === missing, 15_000);
      for (let i = 0; i < 5; i++) expect((await push()).error?.data.reason).toBe(missing);
      const records = () => t!.log.records().filter((r) => typeof r['msg'] === 'string');
      const told = records().filter((r) => String(r['msg']).startsWith(`database unusable: PostgreSQL has no database "${name}" any more (dropped or renamed`));
      expect(told).toHaveLength(1);
      expect(String(told[0]?.['msg'])).toMatch(/— restore or recreate it \(cortex-server migrate makes the tables; serve goes on by itself once it answers\), or point --db at the right database$/);
      const msgs = records().map((r) => r['msg']);
      for (const noisy of ['ingest commit failed (-32007)', 'control watcher: database read failed; retrying', 'forwarded probes: database read failed; retrying']) expect(msgs).not.toContain(noisy);
      expect(metricValue(await t.server.metrics!.text(), 'cortex_database_up')).toBe(0);
      const health = await fetch(`${httpBase(t)}/healthz`);
      expect([health.status, ((await health.json()) as { database: string }).database]).toEqual([503, 'missing']);
      const admin = await adminAnswer(t);
      expect(admin.status).toBe(503);
      expect(admin.message).toBe("the server's database does not exist any more: an operator has to restore or recreate it (the server log says why); try again after");
      // Recreated and migrated (empty): the outage ends.
      await su.query(`create database ${name}`);
      const fresh = await openStorage(url.toString(), { poolSize: 2 });
      await migrateToLatest(fresh);
      await fresh.close();
      await waitFor(() => records().some((r) => r['msg'] === 'database exists again'), 15_000);
      a.client.ws.close();
      await a.client.closed;
    } finally {
      await t?.close();
      t = undefined;
      await su.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
      await su.end();
    }
  });

  it('a database that turns read-only (a standby after a failover): pushes -32007 "read-only", one log line however long it lasts, admin writes 503; once it takes writes, every entry stored once (G21)', async () => {
    const { role, url, su, kick, drop } = await ownRole('cx_ro');
    try {
      t = await startTestServer({ db: url }, { dialect: 'postgres', controlPollMs: 100 });
      const a = await enroll(t);
      expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 100) })).result.up_to_seq).toBe(100);

      // The failover: every connection dropped, the new ones land on a read-only database.
      await su.query(`alter role ${role} set default_transaction_read_only = on`);
      await kick();
      const push = () => a.client.request('logs.push', { seq_start: 101, entries: logEntries(101, 100) });
      const readOnly = 'commit failed: the server\'s database is read-only; nothing of the batch was stored';
      await waitFor(async () => (await push()).error?.data?.reason === readOnly, 15_000);
      // Reads still work meanwhile (the control watcher's, every 100 ms here): they must not
      // end the account, or each failed push would start it again with an error line.
      const until = Date.now() + 1500;
      let refused = 1;
      while (Date.now() < until) {
        const r = await push();
        expect(r.error?.code).toBe(-32007);
        expect(r.error?.data.reason).toBe(readOnly);
        expect(r.error?.data.retry_after_ms).toBeGreaterThanOrEqual(1000);
        refused++;
      }
      expect(refused).toBeGreaterThan(3);
      const msgs = () => t!.log.records().map((r) => r['msg']);
      const told = t.log.records().filter((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('database refuses writes: it is read-only'));
      expect(told).toHaveLength(1);
      expect(String(told[0]?.['err'])).toMatch(/^25006: cannot execute .* in a read-only transaction/);
      expect(told[0]?.['msg']).toMatch(/point --db at the primary, or lift the read-only setting$/);
      expect(msgs()).not.toContain('ingest commit failed (-32007)');
      expect(msgs()).not.toContain('database takes writes again');
      // An admin write says why; the database still answers, so cortex_database_up stays 1.
      const issue = await httpRequest(`${httpBase(t)}/admin/agents`, { body: { hostname: 'web-9' } });
      expect(issue.status).toBe(503);
      expect(issue.body.error.message).toBe('the database refuses writes (it is read-only); try again once it takes them (the server log says why)');
      const metrics = await t.server.metrics!.text();
      expect(metricValue(metrics, 'cortex_ingest_commit_failures_total', { reason: 'read_only' })).toBeGreaterThanOrEqual(refused);
      expect(metricValue(metrics, 'cortex_database_up')).toBe(1);
      // `select 1` works on a read-only database, but this server can store nothing: /healthz says so
      const health = await fetch(`${httpBase(t)}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ status: 'degraded', database: 'read_only' });

      // Back to a primary.
      await su.query(`alter role ${role} reset default_transaction_read_only`);
      await kick();
      await waitFor(async () => (await push()).result?.up_to_seq === 200, 15_000);
      expect(await countRows(t, a.host_id)).toBe(200);
      await waitFor(() => msgs().includes('database takes writes again'));
      const healthy = await fetch(`${httpBase(t)}/healthz`);
      expect([healthy.status, ((await healthy.json()) as { database: string }).database]).toEqual([200, 'ok']);
      a.client.ws.close();
      await a.client.closed;
    } finally {
      await t?.close();
      t = undefined;
      await drop();
    }
  });

  it('a lock held on logs (neither stored nor refused): a warning with what to look at, /healthz 503 "stalled", the wait gauge; once the lock ends, the push acked and the end logged (H45)', async () => {
    t = await startTestServer({}, { dialect: 'postgres', commitStallMs: 300 });
    const a = await enroll(t);
    const health = async () => {
      const r = await fetch(`${httpBase(t!)}/healthz`);
      return { status: r.status, body: (await r.json()) as { status: string; database: string; commit_wait_s?: number } };
    };
    expect(await health()).toMatchObject({ status: 200, body: { database: 'ok' } });
    const msgs = () => t!.log.records().map((r) => r['msg']);
    const locker = new pg.Client({ connectionString: t.dbPath });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table logs in access exclusive mode');
      const push = a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 10) });
      await waitFor(() => msgs().some((m) => typeof m === 'string' && m.startsWith('ingest commits held up')));
      const warned = t.log.records().find((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('ingest commits held up'))!;
      expect(warned['level']).toBe('warn');
      expect(warned['commits_waiting']).toBeGreaterThanOrEqual(1);
      expect(warned['msg']).toContain('pg_blocking_pids(pid)');
      const stalled = await health();
      expect(stalled).toMatchObject({ status: 503, body: { status: 'degraded', database: 'stalled' } });
      expect(metricValue(await t.server.metrics!.text(), 'cortex_ingest_commit_wait_seconds')).toBeGreaterThanOrEqual(0.3);
      await locker.query('commit');
      expect((await push).result?.up_to_seq).toBe(10);
    } finally {
      await locker.end();
    }
    await waitFor(() => msgs().includes('ingest commits go through again'));
    expect(await health()).toMatchObject({ status: 200, body: { database: 'ok' } });
    expect(metricValue(await t.server.metrics!.text(), 'cortex_ingest_commit_wait_seconds')).toBe(0);
    expect(await countRows(t, a.host_id)).toBe(10);
    a.client.ws.close();
    await a.client.closed;
  });
});
