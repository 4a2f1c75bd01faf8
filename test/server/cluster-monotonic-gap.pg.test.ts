// PostgreSQL only: a server's own clock stepped while it runs (`date -s`, an NTP step, a wrong
// hardware clock "fixed") is no gap between its lease renewals, and no time passing for a
// forwarded probe (DECISIONS G45). The registry measured the time between two renewals with
// Date.now(): a clock stepped 60 days ahead logged "lease renewed after a gap" with
// since_last_renewal_ms ≈ 5184000000 and held the sweep of dead servers for a lease; stepped
// ahead and back, it held the sweep for the 60 days; stepped back, a real gap went unseen and
// the first server back swept the others at once (G10's mass reconnect). A forwarded probe's
// wait, also on Date.now(), answered "went away" at once after a step ahead and waited for good
// after a step back. The lease times stay in the database's time (G20).
//
// The registry's clock is the `clock` option (as in clock-skew.pg.test.ts); the forwarder's
// waits read the global Date.now, stepped here with a spy (the registries captured the real
// Date.now when they were made).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getAgent } from '../../server/db/agents.repository.js';
import { connectAgent, httpBase, httpRequest, nextProbe } from './control-helpers.js';
import { startTestServer, waitFor, type TestServer } from './wire.js';

const open: TestServer[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  // the first server drops the shared database: close it last
  for (const s of open.splice(0).reverse()) await s.close();
});

const DAY = 86_400_000;
const GAP_MSG = 'lease renewed after a gap: other servers get one lease to renew theirs before any counts as dead';
const gaps = (t: TestServer) => t.log.records().filter((r) => r['msg'] === GAP_MSG);
const sweptBy = (t: TestServer, dead: string) => t.log.records().some((r) => r['msg'] === 'server lease expired: its sessions marked Disconnected' && r['dead_server_id'] === dead);

/** A `servers` row with no process behind it, its lease run out a second ago, holding one Active agent. */
async function deadServer(t: TestServer, server_id: string): Promise<string> {
  const db = t.server.storage.db;
  const { host_id } = await t.issue();
  await db.insertInto('servers').values({ server_id, url: null, started_at: new Date().toISOString(), lease_until: new Date(Date.now() - 1000).toISOString(), settings_json: null }).execute();
  await db.updateTable('agents').set({ connection_state: 'Active', server_id, session_id: `session-of-${server_id}` }).where('host_id', '=', host_id).execute();
  return host_id;
}

describe('a lease renewal after this machine\'s clock was stepped (PostgreSQL)', () => {
  it('60 days ahead, then back: no "renewed after a gap", and a server whose lease ran out is swept at each renewal', async () => {
    let step = 0;
    // a lease of a minute: no renewal of its own between the test's (every 20 s)
    const a = await startTestServer({}, { dialect: 'postgres', serverId: 'server-a', leaseMs: 60_000, clock: () => Date.now() + step });
    open.push(a);
    const db = a.server.storage.db;
    await a.server.registry.tick();

    step = 60 * DAY;
    const first = await deadServer(a, 'ghost-1');
    await a.server.registry.tick();
    expect(gaps(a)).toEqual([]);
    expect(sweptBy(a, 'ghost-1')).toBe(true);
    expect(await getAgent(db, first)).toMatchObject({ connection_state: 'Disconnected', server_id: null, last_disconnect_reason: '1006 server ghost-1 lease expired' });
    // the lease it wrote is in the database's time, not 60 days ahead
    const lease = await db.selectFrom('servers').select('lease_until').where('server_id', '=', 'server-a').executeTakeFirstOrThrow();
    expect(Math.abs(Date.parse(lease.lease_until) - (Date.now() + 60_000))).toBeLessThan(5000);

    // set right again: a sweep held "until 60 days from now" by the step ahead would hold it now
    step = 0;
    const second = await deadServer(a, 'ghost-2');
    await a.server.registry.tick();
    expect(gaps(a)).toEqual([]);
    expect(sweptBy(a, 'ghost-2')).toBe(true);
    expect(await getAgent(db, second)).toMatchObject({ connection_state: 'Disconnected', server_id: null });
  });

  it('stepped 60 days ahead while the renewal reads the database\'s clock: the offset is the whole step — no live server swept, its own lease not written 30 days ahead', async () => {
    let step = 0;
    const a = await startTestServer({}, { dialect: 'postgres', serverId: 'server-a', leaseMs: 60_000, clock: () => Date.now() + step });
    open.push(a);
    const db = a.server.storage.db;
    // a live server: its lease has 20 s left, its agent is Active
    const { host_id } = await a.issue();
    await db.insertInto('servers').values({ server_id: 'server-b', url: null, started_at: new Date().toISOString(), lease_until: new Date(Date.now() + 20_000).toISOString(), settings_json: null }).execute();
    await db.updateTable('agents').set({ connection_state: 'Active', server_id: 'server-b', session_id: 'session-of-b' }).where('host_id', '=', host_id).execute();
    const storage = a.server.storage as { clockMs: (on?: unknown) => Promise<number> };
    const read = storage.clockMs.bind(storage);
    vi.spyOn(storage, 'clockMs').mockImplementation(async (on?: unknown) => {
      const ms = await read(on);
      step = 60 * DAY; // the step lands while the answer is on its way
      return ms;
    });
    await a.server.registry.tick();
    expect(Math.abs(a.server.registry.clockOffsetMs - 60 * DAY)).toBeLessThan(5000);
    expect(sweptBy(a, 'server-b')).toBe(false);
    expect(await getAgent(db, host_id)).toMatchObject({ connection_state: 'Active', server_id: 'server-b' });
    const lease = await db.selectFrom('servers').select('lease_until').where('server_id', '=', 'server-a').executeTakeFirstOrThrow();
    expect(Math.abs(Date.parse(lease.lease_until) - (Date.now() + 60_000))).toBeLessThan(5000);
  });

  it('a real gap while the clock was stepped 60 days back is still one: the others get a lease to renew theirs (G10)', async () => {
    let step = 0;
    const leaseMs = 3000;
    const a = await startTestServer({}, { dialect: 'postgres', serverId: 'server-a', leaseMs, clock: () => Date.now() + step });
    open.push(a);
    const db = a.server.storage.db;
    // A cannot write its lease for more than half a lease (renewals every leaseMs / 3), as when
    // the database is out of reach for every server alike
    // (the renewal runs on the lease's own connection, DECISIONS G47)
    const down = vi.spyOn(a.server.storage.leaseDb!, 'updateTable').mockImplementation(() => {
      throw new Error('simulated: the servers table cannot be written');
    });
    await waitFor(() => down.mock.calls.filter((c) => c[0] === 'servers').length >= 2, 10_000);
    step = -60 * DAY;
    down.mockRestore();
    // another server's lease ran out meanwhile, as it would have (it could not renew either)
    const other = await deadServer(a, 'server-b');
    await a.server.registry.tick();
    const [gap] = gaps(a);
    expect(gap?.['since_last_renewal_ms']).toBeGreaterThan(leaseMs / 2);
    expect(gap?.['since_last_renewal_ms']).toBeLessThan(60_000);
    expect(sweptBy(a, 'server-b')).toBe(false);
    expect(await getAgent(db, other)).toMatchObject({ connection_state: 'Active', server_id: 'server-b' });
  });
});

describe('a forwarded probe while the asking server\'s clock is stepped (PostgreSQL)', () => {
  async function pairWithProbe(timeout_ms: number) {
    const a = await startTestServer({}, { dialect: 'postgres', serverId: 'server-a', probeGraceMs: 150 });
    open.push(a);
    const b = await startTestServer({}, { dialect: 'postgres', serverId: 'server-b', probeGraceMs: 150, sameDbAs: a });
    open.push(b);
    const onA = await connectAgent(a, ['acme.custom']);
    const asked = Date.now();
    const reply = httpRequest(`${httpBase(b)}/admin/agents/${onA.host_id}/probe`, { body: { probe: 'acme.custom', args: {}, timeout_ms } });
    await nextProbe(onA.client); // A took it up: it runs there, B waits for its answer
    return { a, b, onA, reply, asked };
  }

  it('60 days ahead: the probe is still waited for (504 at its timeout), not answered "went away" at once', async () => {
    const { reply, onA } = await pairWithProbe(3000);
    const real = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => real() + 60 * DAY);
    const r = await reply;
    vi.restoreAllMocks();
    expect(r.body.error?.data?.reason ?? '').not.toMatch(/went away/);
    expect(r.status).toBe(504);
    expect(r.body.error).toMatchObject({ code: -32012 });
    onA.client.ws.close();
    await onA.client.closed;
  });

  it('60 days back: the probe whose answer never comes is answered 504 at its deadline, not waited for as long as the step', async () => {
    const timeout_ms = 1000;
    const { a, reply, onA, asked } = await pairWithProbe(timeout_ms);
    // A cannot store its answer (its own timeout's 504): only B's deadline ends the wait
    const update = a.server.storage.db.updateTable.bind(a.server.storage.db);
    vi.spyOn(a.server.storage.db, 'updateTable').mockImplementation(((table: string) => {
      if (table === 'probe_requests') throw new Error('simulated: the answer cannot be stored');
      return update(table as never);
    }) as never);
    const real = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => real() - 60 * DAY);
    let bound: ReturnType<typeof setTimeout> | undefined;
    const r = await Promise.race([reply, new Promise<undefined>((resolve) => (bound = setTimeout(() => resolve(undefined), 15_000)))]);
    clearTimeout(bound);
    vi.restoreAllMocks();
    expect(r, 'no answer within 15 s: the wait follows the stepped clock').toBeDefined();
    expect(r?.status).toBe(504);
    expect(r?.body.error).toMatchObject({ code: -32012 });
    // timeout + grace + FORWARD_SLACK_MS, and a poll
    expect(Date.now() - asked).toBeLessThan(timeout_ms + 150 + 1000 + 3000);
    onA.client.ws.close();
    await onA.client.closed;
  });
});
