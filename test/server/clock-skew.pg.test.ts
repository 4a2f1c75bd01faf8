// PostgreSQL only: servers on one database keep their leases by the database's clock, not
// by their own (DECISIONS G20). Before, a server whose clock ran 30 s ahead found every
// other server's lease expired at each renewal and disconnected all their agents, every
// 5 s; one running behind kept a dead server's agents for as long as it lagged. Three
// in-process servers share one database: A with the right time, B a minute ahead, C a
// minute behind (their `clock` option); "ghost" rows in `servers` stand for servers with no
// process behind them, so that no renewal interferes with a lease the test set.
import { afterEach, describe, expect, it } from 'vitest';
import { getAgent } from '../../server/db/agents.repository.js';
import { answer, connectAgent, httpBase, httpRequest, metricValue, nextProbe } from './control-helpers.js';
import { startTestServer, type TestServer } from './wire.js';

const open: TestServer[] = [];
afterEach(async () => {
  // the first server drops the shared database: close it last
  for (const s of open.splice(0).reverse()) await s.close();
});

const MINUTE = 60_000;

async function trio(skewB: () => number): Promise<[TestServer, TestServer, TestServer]> {
  const a = await startTestServer({}, { dialect: 'postgres', serverId: 'server-a', probeGraceMs: 150 });
  open.push(a);
  const b = await startTestServer({}, { dialect: 'postgres', serverId: 'server-b', probeGraceMs: 150, sameDbAs: a, clock: () => Date.now() + skewB() });
  open.push(b);
  const c = await startTestServer({}, { dialect: 'postgres', serverId: 'server-c', probeGraceMs: 150, sameDbAs: a, clock: () => Date.now() - MINUTE });
  open.push(c);
  return [a, b, c];
}

const skewWarnings = (t: TestServer) => t.log.records().filter((r) => typeof r['msg'] === 'string' && r['msg'].startsWith("this server's clock is "));
const sweptBy = (t: TestServer, dead: string) => t.log.records().some((r) => r['msg'] === 'server lease expired: its sessions marked Disconnected' && r['dead_server_id'] === dead);

/** A `servers` row with no process behind it, holding one Active agent. */
async function ghost(t: TestServer, server_id: string, leaseFromNowMs: number): Promise<string> {
  const db = t.server.storage.db;
  const { host_id } = await t.issue();
  await db.insertInto('servers').values({ server_id, url: null, started_at: new Date().toISOString(), lease_until: new Date(Date.now() + leaseFromNowMs).toISOString(), settings_json: null }).execute();
  await db.updateTable('agents').set({ connection_state: 'Active', server_id, session_id: `session-of-${server_id}` }).where('host_id', '=', host_id).execute();
  return host_id;
}

describe('servers whose clocks disagree (PostgreSQL)', () => {
  it('a minute ahead or behind, no server sweeps a live one; a probe crosses from the fast server; each skewed server says so once, and /metrics has the offset', async () => {
    const [a, b, c] = await trio(() => MINUTE);
    const onA = await connectAgent(a, ['acme.custom']);
    const onC = await connectAgent(c);
    for (let round = 0; round < 3; round++) for (const s of [b, c, a]) await s.server.registry.tick();
    const db = a.server.storage.db;
    expect(await getAgent(db, onA.host_id)).toMatchObject({ connection_state: 'Active', server_id: 'server-a', session_id: onA.hello.session_id });
    expect(await getAgent(db, onC.host_id)).toMatchObject({ connection_state: 'Active', server_id: 'server-c', session_id: onC.hello.session_id });
    expect((await db.selectFrom('servers').select('server_id').orderBy('server_id').execute()).map((r) => r.server_id)).toEqual(['server-a', 'server-b', 'server-c']);
    for (const s of [a, b, c]) expect(s.log.records().some((r) => r['msg'] === "this server's lease had expired and was swept; re-registering")).toBe(false);

    // B (a minute ahead) still finds A's lease live: the probe is forwarded, not "not connected"
    const pending = httpRequest(`${httpBase(b)}/admin/agents/${onA.host_id}/probe`, { body: { probe: 'acme.custom', args: {}, timeout_ms: 3000 } });
    const req = await nextProbe(onA.client);
    answer(onA.client, req.id, { output: { ok: true }, exit_code: 0, stderr: null, duration_ms: 1 });
    expect((await pending).status).toBe(200);

    expect(skewWarnings(a)).toEqual([]);
    const [warnB, ...moreB] = skewWarnings(b);
    expect(moreB).toEqual([]); // told once, not at every renewal
    expect(warnB?.['level']).toBe('warn');
    expect(String(warnB?.['msg'])).toMatch(/^this server's clock is 60\.\d s ahead of the database's: leases, retention, received_at, last_seen and token grace are kept in the database's time.*synchronize its clock \(NTP/);
    expect(Math.abs(Number(warnB?.['clock_offset_ms']) - MINUTE)).toBeLessThan(1000);
    const [warnC, ...moreC] = skewWarnings(c);
    expect(moreC).toEqual([]);
    expect(String(warnC?.['msg'])).toMatch(/^this server's clock is 60\.\d s behind the database's/);
    expect(Math.abs(metricValue(await b.server.metrics!.text(), 'cortex_server_clock_offset_seconds') - 60)).toBeLessThan(1);
    expect(Math.abs(metricValue(await c.server.metrics!.text(), 'cortex_server_clock_offset_seconds') + 60)).toBeLessThan(1);
    expect(Math.abs(metricValue(await a.server.metrics!.text(), 'cortex_server_clock_offset_seconds'))).toBeLessThan(1);
    onA.client.ws.close();
    onC.client.ws.close();
    await Promise.all([onA.client.closed, onC.client.closed]);
  });

  it('a lease that ran out a moment ago is swept by the fast and by the slow server; one with seconds left by neither', async () => {
    const [a, b, c] = await trio(() => MINUTE);
    const db = a.server.storage.db;
    const fresh = await ghost(a, 'ghost-fresh', 8000);
    const deadForB = await ghost(a, 'ghost-dead-1', -1000);
    await b.server.registry.tick();
    expect(sweptBy(b, 'ghost-dead-1')).toBe(true);
    expect(await getAgent(db, deadForB)).toMatchObject({ connection_state: 'Disconnected', server_id: null, last_disconnect_reason: '1006 server ghost-dead-1 lease expired' });
    const deadForC = await ghost(a, 'ghost-dead-2', -1000);
    await c.server.registry.tick();
    expect(sweptBy(c, 'ghost-dead-2')).toBe(true);
    expect(await getAgent(db, deadForC)).toMatchObject({ connection_state: 'Disconnected', server_id: null });
    // the lease with seconds left: neither skewed server took it for expired
    expect(sweptBy(b, 'ghost-fresh') || sweptBy(c, 'ghost-fresh')).toBe(false);
    expect(await getAgent(db, fresh)).toMatchObject({ connection_state: 'Active', server_id: 'ghost-fresh' });
  });

  it('a clock set right again is told once', async () => {
    let skew = MINUTE;
    const [, b] = await trio(() => skew);
    await b.server.registry.tick();
    expect(skewWarnings(b)).toHaveLength(1);
    skew = 0;
    await b.server.registry.tick();
    await b.server.registry.tick();
    const back = b.log.records().filter((r) => r['msg'] === "this server's clock agrees with the database's again");
    expect(back).toHaveLength(1);
    expect(Math.abs(Number(back[0]?.['clock_offset_ms']))).toBeLessThan(1000);
    expect(skewWarnings(b)).toHaveLength(1);
  });
});
