// Several servers on one database (DECISIONS G): the session registry across servers,
// leases, cross-server probes and control, settings agreement. Two in-process servers on
// one database (a fresh PostgreSQL schema in the "postgres" run, one SQLite file in the
// "sqlite" run); the multi-process end-to-end run is test/e2e/scale-out.pg.test.ts.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi, type TestContext } from 'vitest';
import { getAgent, requestDecommission, requestRotation, revoke, setAgentConfig } from '../../server/db/agents.repository.js';
import { getSetting } from '../../server/db/settings.repository.js';
import { SettingsConflictError } from '../../server/cluster/settings-agreement.js';
import { ServerIdInUseError } from '../../server/cluster/registry.js';
import { answer, answerError, connectAgent, httpBase, httpRequest, nextProbe } from './control-helpers.js';
import { countRows, logEntries, startTestServer, waitFor, type TestServer } from './wire.js';
import { Slots } from '../support/scli-pool.js';

/** The servers the test of `ctx` starts (push them as they start), closed when it ends: the last first (the first one drops the shared database). */
function opened(ctx: TestContext): TestServer[] {
  const open: TestServer[] = [];
  ctx.onTestFinished(async () => {
    for (const s of open.splice(0).reverse()) await s.close();
  });
  return open;
}

// The pairs' tests run side by side, three at a time: most of their time is waiting
// (the migration lock, a lease, a drain), and each pair holds about a dozen PostgreSQL
// connections (PostgreSQL allows 100 to the whole suite).
const pairs = new Slots(3);

/** Two servers on one database for the test of `ctx`, closed when it ends (the second first: the first one drops the shared database). */
async function pair(ctx: TestContext, config = {}, extra = {}): Promise<[TestServer, TestServer]> {
  await pairs.acquire();
  const mine: TestServer[] = [];
  ctx.onTestFinished(async () => {
    try {
      for (const s of mine.splice(0).reverse()) await s.close();
    } finally {
      pairs.release();
    }
  });
  const a = await startTestServer(config, { serverId: 'server-a', probeGraceMs: 150, ...extra });
  mine.push(a);
  const b = await startTestServer(config, { serverId: 'server-b', probeGraceMs: 150, sameDbAs: a, ...extra });
  mine.push(b);
  return [a, b];
}

const probeUrl = (t: TestServer, host: string) => `${httpBase(t)}/admin/agents/${host}/probe`;

describe.concurrent('one database, two servers', () => {
  it('each server has a lease row; agents show the server holding their session (agent list JSON, GET /admin/agents)', async (ctx) => {
    const [a, b] = await pair(ctx);
    const rows = await b.server.storage.db.selectFrom('servers').select(['server_id', 'lease_until']).orderBy('server_id').execute();
    expect(rows.map((r) => r.server_id)).toEqual(['server-a', 'server-b']);
    for (const r of rows) expect(r.lease_until > new Date().toISOString()).toBe(true);
    const agent = await connectAgent(a);
    const list = await httpRequest(`${httpBase(b)}/admin/agents`);
    expect(list.status).toBe(200);
    const seen = (list.body as { host_id: string; server_id: string | null; connection_state: string }[]).find((x) => x.host_id === agent.host_id);
    expect(seen).toMatchObject({ connection_state: 'Active', server_id: 'server-a' });
    agent.client.ws.close();
    await agent.client.closed;
    await waitFor(async () => (await getAgent(b.server.storage.db, agent.host_id))?.connection_state === 'Disconnected');
    expect((await getAgent(b.server.storage.db, agent.host_id))?.server_id).toBeNull();
  });

  it('a newer hello on B closes the older session on A; the old session gets nothing acked after it', async (ctx) => {
    const [a, b] = await pair(ctx, {}, { controlPollMs: 60_000 }); // only NOTIFY (PostgreSQL) or the commit check can act
    const first = await connectAgent(a);
    const second = await connectAgent(b, undefined, { host_id: first.host_id, token: first.token });
    expect(second.hello.session_id).not.toBe(first.hello.session_id);
    // A push on the old session after the new hello was answered: refused, nothing stored.
    const res = await Promise.race([
      first.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 1000) }),
      first.client.closed.then(() => undefined),
    ]);
    if (res !== undefined) {
      expect(res.result).toBeUndefined();
      expect(res.error?.code).toBe(-32007);
    }
    expect(await countRows(b, first.host_id)).toBe(0);
    const row = await getAgent(b.server.storage.db, first.host_id);
    expect(row).toMatchObject({ connection_state: 'Active', server_id: 'server-b', session_id: second.hello.session_id });
    // the new session ingests normally
    const ok = await second.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 10) });
    expect(ok.result?.up_to_seq).toBe(10);
    second.client.ws.close();
    await second.client.closed;
    first.client.ws.close();
  });

  it('a probe asked on B for an agent held by A: answer, agent error, unlisted probe and timeout as for a local probe', async (ctx) => {
    const [a, b] = await pair(ctx);
    const agent = await connectAgent(a, ['sys.uptime', 'acme.custom']);
    const output = { output: { up: 42 }, exit_code: 0, stderr: null, duration_ms: 3 };
    const pending = httpRequest(probeUrl(b, agent.host_id), { body: { probe: 'acme.custom', args: { x: 1 }, timeout_ms: 3000 } });
    const req = await nextProbe(agent.client);
    expect(req.params).toEqual({ probe: 'acme.custom', args: { x: 1 }, timeout_ms: 3000 });
    answer(agent.client, req.id, output);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body).toEqual(output);

    const failing = httpRequest(probeUrl(b, agent.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 3000 } });
    const req2 = await nextProbe(agent.client, new Set([req.id]));
    answerError(agent.client, req2.id, { code: -32011, message: 'ProbeExecutionFailed', data: { stderr: 'boom', exit_code: 3 } });
    const failed = await failing;
    expect(failed.status).toBe(502);
    expect(failed.body).toEqual({ error: { code: -32011, message: 'ProbeExecutionFailed', data: { stderr: 'boom', exit_code: 3 } } });

    const unlisted = await httpRequest(probeUrl(b, agent.host_id), { body: { probe: 'exec.systemctl_status', args: {}, timeout_ms: 3000 } });
    expect(unlisted.status).toBe(422);
    expect(unlisted.body.error.code).toBe(-32010);

    const started = Date.now();
    const late = await httpRequest(probeUrl(b, agent.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 200 } });
    expect(late.status).toBe(504);
    expect(late.body.error).toMatchObject({ code: -32012, data: { probe: 'sys.uptime', timeout_ms: 200 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200 + 150);
    const left = await b.server.storage.db.selectFrom('probe_requests').select('request_id').execute();
    expect(left).toEqual([]); // the waiting side removes its request whatever the outcome
    agent.client.ws.close();
    await agent.client.closed;
  });

  it('decommission and rotation requested through B act on the session held by A', async (ctx) => {
    const [a, b] = await pair(ctx, {}, { rotationCloseGraceMs: 60_000 });
    const rot = await connectAgent(a);
    await requestRotation(b.server.storage.db, rot.host_id, 60);
    expect((await rot.client.next((m) => m.method === 'agent.shutdown')).params).toEqual({ reason: 'ServerReload', drain_seconds: 0 });
    rot.client.ws.close();
    await rot.client.closed;
    // its next hello (here: on B) gets the new token
    const again = await connectAgent(b, undefined, { host_id: rot.host_id, token: rot.token });
    expect(again.hello.rotated_token).toBeTypeOf('string');
    again.client.ws.close();
    await again.client.closed;

    const dec = await connectAgent(a);
    await requestDecommission(b.server.storage.db, dec.host_id, 1);
    expect((await dec.client.next((m) => m.method === 'agent.shutdown')).params).toEqual({ reason: 'Decommission', drain_seconds: 1 });
    // still acked during the drain, then revoked by A
    const push = await dec.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 5) });
    expect(push.result?.up_to_seq).toBe(5);
    expect((await dec.client.closed).code).toBe(4002);
    expect((await getAgent(b.server.storage.db, dec.host_id))?.connection_state).toBe('Revoked');
  });

  it('SIGTERM drain of A: its agents are told to reconnect (ServerReload), still acked, and resume on B', async (ctx) => {
    const [a, b] = await pair(ctx);
    const agent = await connectAgent(a);
    const draining = a.server.shutdown(5);
    expect((await agent.client.next((m) => m.method === 'agent.shutdown')).params).toEqual({ reason: 'ServerReload', drain_seconds: 5 });
    const acked = await agent.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 20) });
    expect(acked.result?.up_to_seq).toBe(20);
    agent.client.ws.close();
    await agent.client.closed;
    await draining;
    const moved = await connectAgent(b, undefined, { host_id: agent.host_id, token: agent.token });
    expect(moved.hello.accepted_seq).toBe(20);
    expect((await getAgent(b.server.storage.db, agent.host_id))?.server_id).toBe('server-b');
    // A left the cluster: its lease row is gone
    expect((await b.server.storage.db.selectFrom('servers').select('server_id').execute()).map((r) => r.server_id)).toEqual(['server-b']);
    moved.client.ws.close();
    await moved.client.closed;
  });

  it('a server whose lease expired is swept by a live one: its sessions become Disconnected and detached', async (ctx) => {
    const [a, b] = await pair(ctx);
    const agent = await connectAgent(a);
    const db = b.server.storage.db;
    // A's process "dies": its lease is in the past and nobody renews it.
    await db.updateTable('servers').set({ lease_until: '2000-01-01T00:00:00.000Z' }).where('server_id', '=', 'server-a').execute();
    // before the sweep: a probe asked on B is not forwarded to a server without a live lease
    const probe = await httpRequest(probeUrl(b, agent.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 1000 } });
    expect(probe.status).toBe(404);
    expect(probe.body.error).toMatchObject({ code: -32004, data: { reason: expect.stringMatching(/no live server on this database holds its session/) } });
    await b.server.registry.tick();
    const row = await getAgent(db, agent.host_id);
    expect(row).toMatchObject({ connection_state: 'Disconnected', server_id: null, session_id: null, last_disconnect_reason: '1006 server server-a lease expired' });
    // A, still running, sees its session detached and closes it; its pushes are refused
    const closed = await agent.client.closed;
    expect(closed.code).toBe(1000);
    expect(await countRows(b, agent.host_id)).toBe(0);
    // and A re-registers at its next renewal
    await a.server.registry.tick();
    expect((await db.selectFrom('servers').select('server_id').orderBy('server_id').execute()).map((r) => r.server_id)).toEqual(['server-a', 'server-b']);
  });

  it('after the database was out of reach, the first server back gives the others one lease to renew before it sweeps them (G10)', async (ctx) => {
    const leaseMs = 3000;
    const [a, b] = await pair(ctx, {}, { leaseMs });
    const agent = await connectAgent(b);
    // Neither server can write its lease (as when the database is out of reach; an error of
    // its own here, so that each failed renewal is logged as one).
    const outage = () => new Error('simulated: the servers table cannot be written');
    // (on the lease's own connection where there is one: PostgreSQL, DECISIONS G47)
    const aDown = vi.spyOn(a.server.storage.leaseDb ?? a.server.storage.db, 'updateTable').mockImplementation(() => {
      throw outage();
    });
    const bDown = vi.spyOn(b.server.storage.leaseDb ?? b.server.storage.db, 'updateTable').mockImplementation(() => {
      throw outage();
    });
    // (logged once: the same failure again within a minute is only counted, G30)
    const failures = () => aDown.mock.calls.filter((c) => c[0] === 'servers').length;
    // A misses two renewals (every leaseMs / 3): more than half a lease without one
    await waitFor(() => failures() >= 2, 10_000);
    expect(a.log.records().filter((r) => r['msg'] === 'lease renewal failed; retrying')).toHaveLength(1);
    // meanwhile B's lease ran out, as it would have (it could not renew either)
    const db = a.server.storage.db;
    aDown.mockRestore();
    await db.updateTable('servers').set({ lease_until: '2000-01-01T00:00:00.000Z' }).where('server_id', '=', 'server-b').execute();
    const back = Date.now();
    await a.server.registry.tick();
    // B is not declared dead at once: its agent keeps its session
    expect(await getAgent(db, agent.host_id)).toMatchObject({ connection_state: 'Active', server_id: 'server-b' });
    expect(a.log.records().some((r) => r['msg'] === 'lease renewed after a gap: other servers get one lease to renew theirs before any counts as dead')).toBe(true);
    // B stays out of reach (it is dead after all): swept once the lease of grace has passed
    await waitFor(async () => {
      await a.server.registry.tick();
      return (await getAgent(db, agent.host_id))?.connection_state === 'Disconnected';
    }, 15_000);
    expect(Date.now() - back).toBeGreaterThanOrEqual(leaseMs - 50);
    expect(await getAgent(db, agent.host_id)).toMatchObject({ server_id: null, last_disconnect_reason: '1006 server server-b lease expired' });
    bDown.mockRestore();
  });
});

// Timed (the 2 s the change may take): alone, not beside the other pairs' work in this process.
describe('one database, two servers: timed', () => {
  it('revoke and config made through B reach the session on A within 2 s', async (ctx) => {
    const [a, b] = await pair(ctx);
    const agent = await connectAgent(a);
    const cfg = { heartbeat_interval_secs: 45, max_batch_entries: 500, flush_interval_ms: 250, metrics_interval_secs: 30, probe_concurrency: 2, log_sources: [] };
    const t0 = Date.now();
    await setAgentConfig(b.server.storage.db, agent.host_id, JSON.stringify(cfg));
    const update = await agent.client.next((m) => m.method === 'config.update');
    expect(update.params).toEqual({ config: cfg, apply_after: null });
    await revoke(b.server.storage.db, agent.host_id);
    const shutdown = await agent.client.next((m) => m.method === 'agent.shutdown');
    expect(shutdown.params).toEqual({ reason: 'Revoked', drain_seconds: 0 });
    expect((await agent.client.closed).code).toBe(4002);
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});

describe.concurrent('settings of servers on one database (DECISIONS G5)', () => {
  it('a second server with another cluster-wide setting is refused, naming it; per-server settings may differ', async (ctx) => {
    const open = opened(ctx);
    const a = await startTestServer({ max_batch_entries: 800, retention_days: 7 }, { serverId: 'server-a' });
    open.push(a);
    const refused = await startTestServer({ max_batch_entries: 500, retention_days: 7 }, { serverId: 'server-b', sameDbAs: a }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SettingsConflictError);
    expect(String((refused as Error).message)).toMatch(/running server\(s\) server-a .*max_batch_entries is 800 there, 500 here.*start it with the same values/);
    // the record still says 800: the admin CLI validates against the running cluster
    expect(await getSetting(a.server.storage.db, 'max_batch_entries')).toBe(800);
    const perServer = await startTestServer({ max_batch_entries: 800, retention_days: 7, ingest_queue_batches: 64, shutdown_drain_secs: 3 }, { serverId: 'server-c', sameDbAs: a });
    open.push(perServer);
    const rows = await a.server.storage.db.selectFrom('servers').select(['server_id', 'settings_json']).where('server_id', '=', 'server-c').execute();
    expect(JSON.parse(rows[0]?.settings_json ?? '{}')).toMatchObject({ ingest_queue_batches: 64, shutdown_drain_secs: 3 });
  });

  it('with no other live server the starting one records its values (how a cluster setting changes)', async (ctx) => {
    const open = opened(ctx);
    // A long lease: A renews it every 20 s, not while B starts (the tests beside this one may keep B waiting for the migration lock)
    const a = await startTestServer({ max_batch_entries: 800 }, { serverId: 'server-a', leaseMs: 60_000 });
    open.push(a);
    const db = a.dbPath;
    // stop A's lease from counting: it is the only server; then a server with 500 may start
    await a.server.storage.db.updateTable('servers').set({ lease_until: '2000-01-01T00:00:00.000Z' }).where('server_id', '=', 'server-a').execute();
    const b = await startTestServer({ max_batch_entries: 500 }, { serverId: 'server-b', sameDbAs: a });
    open.push(b);
    expect(b.dbPath).toBe(db);
    expect(await getSetting(b.server.storage.db, 'max_batch_entries')).toBe(500);
  });

  it('a restart under the same server id releases the sessions its previous process left Active', async (ctx) => {
    const open = opened(ctx);
    const a = await startTestServer({}, { serverId: 'server-a' });
    open.push(a);
    const issued = await a.issue('left-behind');
    await a.server.storage.db.updateTable('agents').set({ connection_state: 'Active', session_id: 'old', server_id: 'server-x' }).where('host_id', '=', issued.host_id).execute();
    const again = await startTestServer({}, { serverId: 'server-x', sameDbAs: a });
    open.push(again);
    expect(await getAgent(a.server.storage.db, issued.host_id)).toMatchObject({ connection_state: 'Disconnected', server_id: null, last_disconnect_reason: '1006 server server-x restarted' });
  });
});

describe.concurrent('one server id, two processes (DECISIONS G23)', () => {
  it('a second live process under the same server id is refused; the first keeps its sessions', async (ctx) => {
    const open = opened(ctx);
    const a = await startTestServer({}, { serverId: 'server-a', leaseMs: 1500 });
    open.push(a);
    const agent = await connectAgent(a);
    const refused = await startTestServer({}, { serverId: 'server-a', sameDbAs: a, leaseMs: 1500 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ServerIdInUseError);
    expect(String((refused as Error).message)).toMatch(/^another live cortex-server uses the server id server-a \(started .*, listening at ws:\/\/127\.0\.0\.1:\d+\/ws\/agent; it renewed its lease while this one waited\): give each server its own --server-id/);
    expect(await getAgent(a.server.storage.db, agent.host_id)).toMatchObject({ connection_state: 'Active', server_id: 'server-a', session_id: agent.hello.session_id });
    const ok = await agent.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 5) });
    expect(ok.result?.up_to_seq).toBe(5);
    agent.client.ws.close();
    await agent.client.closed;
  });

  it("a live lease that nobody renews (a process that died) is waited out once, then its sessions are taken over", async (ctx) => {
    const open = opened(ctx);
    const a = await startTestServer({}, { serverId: 'server-a' });
    open.push(a);
    const db = a.server.storage.db;
    const issued = await a.issue('left-behind');
    await db.insertInto('servers').values({ server_id: 'server-x', url: null, started_at: new Date(Date.now() - 60_000).toISOString(), lease_until: new Date(Date.now() + 60_000).toISOString(), settings_json: null }).execute();
    await db.updateTable('agents').set({ connection_state: 'Active', session_id: 'old', server_id: 'server-x' }).where('host_id', '=', issued.host_id).execute();
    const started = Date.now();
    const again = await startTestServer({}, { serverId: 'server-x', sameDbAs: a, leaseMs: 1500 });
    open.push(again);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // one renewal period (500 ms) and 500 ms more
    expect(again.log.records().some((r) => r['msg'] === 'a live lease holds this server id: waiting one renewal period to tell a process that died from one that runs')).toBe(true);
    expect(await getAgent(db, issued.host_id)).toMatchObject({ connection_state: 'Disconnected', server_id: null, last_disconnect_reason: '1006 server server-x restarted' });
  });

  it('a live lease left by a process of this machine that no longer runs (a crash, then the restart) is taken over at once', async (ctx) => {
    const open = opened(ctx);
    const a = await startTestServer({}, { serverId: 'server-a' });
    open.push(a);
    const db = a.server.storage.db;
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => gone.once('exit', r));
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const settings_json = JSON.stringify({ listen: '127.0.0.1:0', process: { boot, pid: gone.pid } });
    await db.insertInto('servers').values({ server_id: 'server-y', url: null, started_at: new Date(Date.now() - 60_000).toISOString(), lease_until: new Date(Date.now() + 60_000).toISOString(), settings_json }).execute();
    const again = await startTestServer({}, { serverId: 'server-y', sameDbAs: a, leaseMs: 60_000 });
    open.push(again);
    // no wait of a renewal period (20 s with this lease)
    expect(again.log.records().some((r) => r['msg'] === 'a live lease holds this server id: waiting one renewal period to tell a process that died from one that runs')).toBe(false);
    const row = await db.selectFrom('servers').select(['settings_json']).where('server_id', '=', 'server-y').executeTakeFirstOrThrow();
    expect(JSON.parse(row.settings_json ?? '{}')).toMatchObject({ process: { boot, pid: process.pid } });
  });

  it('a running process whose id another one took over stops, says why, and leaves that one\'s row and sessions alone', async (ctx) => {
    const open = opened(ctx);
    let fatal: string | undefined;
    const a = await startTestServer({}, { serverId: 'server-a', onFatal: (m) => (fatal = m) });
    open.push(a);
    const agent = await connectAgent(a);
    const b = await startTestServer({}, { serverId: 'server-b', sameDbAs: a });
    open.push(b);
    const db = b.server.storage.db; // A closes its own
    // what another process's join under the same id writes (as from a race at start)
    await db.updateTable('servers').set({ started_at: '2026-01-01T00:00:00.000Z', url: 'wss://twin.example:3100/ws/agent' }).where('server_id', '=', 'server-a').execute();
    await a.server.registry.tick();
    await waitFor(() => fatal !== undefined);
    expect(fatal).toMatch(/^another cortex-server process took over the server id server-a \(started 2026-01-01T00:00:00\.000Z, listening at wss:\/\/twin\.example:3100\/ws\/agent\): two processes must not share one id; this one stops/);
    expect(a.log.records().some((r) => r['level'] === 'error' && r['msg'] === fatal)).toBe(true);
    expect((await agent.client.closed).code).toBe(1001); // the server closed
    // the other process's row stays; the session row was not released by this one's leave
    expect(await db.selectFrom('servers').select(['server_id', 'started_at']).where('server_id', '=', 'server-a').execute()).toEqual([{ server_id: 'server-a', started_at: '2026-01-01T00:00:00.000Z' }]);
  });
});
