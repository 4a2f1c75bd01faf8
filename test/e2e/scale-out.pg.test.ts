// Scale-out end to end (PostgreSQL only: the "postgres" vitest project): two `serve`
// processes on one PostgreSQL database, three real agent processes behind one address (a
// TCP proxy standing in for the load balancer; it sends new connections to server A until
// A dies, then to B, as a health-checking balancer would). Server A is SIGKILLed
// mid-stream; the agents reconnect to B and replay; every (host_id, seq) is stored exactly
// once. A probe is asked on B for an agent held by A; after the move a revoke made on the
// database and a probe asked on a third server C reach agents held by B.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { TcpProxy } from '../support/tcp-proxy.js';
import { newTestDb, pgQuery, type TestDbTarget } from '../support/dialects.js';
import {
  assertNoTokenLeaks,
  cleanupTempDirs,
  cliSync,
  enroll,
  issueAgent,
  rememberStateToken,
  requireDist,
  SERVER_CLI,
  startAgentRunner,
  startServer,
  tempDir,
  type AgentProc,
  type ServerProc,
} from '../support/procs.js';

const AGENTS = 3;
const N = 20_000;
const RATE = 2_000; // entries/s per agent: about 10 s of production each
const SERVER_ARGS = ['--ping-interval-ms', '1000', '--missed-pongs', '5', '--hello-timeout-ms', '3000', '--lease-secs', '6', '--db-pool', '4'];

let db: TestDbTarget;
beforeAll(async () => {
  requireDist();
  db = await newTestDb('postgres');
});
afterAll(async () => {
  cleanupTempDirs();
  await db.drop();
});

const query = <T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> => pgQuery<T>(db.db, text, values);

async function probe(server: ServerProc, host_id: string): Promise<{ status: number; body: { output?: unknown; error?: { code: number } } }> {
  const res = await fetch(`${server.http}/admin/agents/${host_id}/probe`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ probe: 'sys.uptime', args: {}, timeout_ms: 3000 }) });
  return { status: res.status, body: (await res.json()) as { output?: unknown; error?: { code: number } } };
}

it(`2 servers on one PostgreSQL database, ${AGENTS} agents: SIGKILL of one mid-stream moves them to the other, each seq stored once; probe and revoke across servers`, async () => {
  const dir = tempDir('cortex-scaleout-');
  const a = await startServer(db.db, ['--server-id', 'server-a', ...SERVER_ARGS]);
  const b = await startServer(db.db, ['--server-id', 'server-b', ...SERVER_ARGS]);
  let c: ServerProc | undefined;
  const proxy = await TcpProxy.start({ targetPort: a.port });
  const agents: AgentProc[] = [];
  const hosts: string[] = [];
  try {
    for (let i = 0; i < AGENTS; i++) {
      const issued = issueAgent(db.db, `scale-${i}`);
      const stateDir = `${dir}/agent-${i}`;
      await enroll(proxy.url(), issued, stateDir);
      hosts.push(issued.host_id);
      agents.push(startAgentRunner({ stateDir, total: N, rate: RATE, chunk: 100, pingWatchdogMs: 6000, backoffBaseMs: 100, backoffCapMs: 1000 }));
    }
    await Promise.all(agents.map((x) => x.waitFor((e) => e.ev === 'state' && e.to === 'Active', 15_000)));
    const held = await query<{ host_id: string; server_id: string }>('select host_id, server_id from agents order by host_id');
    expect(held.map((r) => r.server_id)).toEqual(['server-a', 'server-a', 'server-a']);
    // `agent list --json` shows the holder too
    const listed = JSON.parse(cliSync(SERVER_CLI, ['agent', 'list', '--json', '--db', db.db]).stdout) as { server_id: string }[];
    expect(listed.map((r) => r.server_id)).toEqual(['server-a', 'server-a', 'server-a']);

    // a probe asked on B for an agent held by A
    const viaB = await probe(b, hosts[0] as string);
    expect(viaB.status, JSON.stringify(viaB.body)).toBe(200);
    expect(viaB.body.output).toBeTypeOf('object');

    // SIGKILL A mid-stream; the balancer sends new connections to B
    await agents[0]!.waitFor((e) => e.ev === 'progress' && Number(e['acked']) > 500, 20_000);
    const inFlight = agents.filter((x) => !x.events.some((e) => e.ev === 'done')).length;
    const acked = await query<{ n: number }>('select count(*)::int as n from logs');
    const killedAt = Date.now();
    await a.kill();
    proxy.setTarget(b.port);
    expect(inFlight).toBeGreaterThan(0); // streams were running when A died
    expect(acked[0]!.n).toBeLessThan(AGENTS * N);

    // each agent is Active again (on B), then finishes its stream
    await Promise.all(agents.map((x) => x.waitFor((e) => e.ev === 'state' && e.to === 'Active' && Number(e['t']) > killedAt, 60_000)));
    await Promise.all(agents.map((x) => x.waitFor((e) => e.ev === 'done', 60_000)));
    const counts = await query<{ host_id: string; n: number; d: number; lo: number; hi: number }>(
      'select host_id, count(*)::int as n, count(distinct seq)::int as d, min(seq)::int as lo, max(seq)::int as hi from logs group by host_id order by host_id',
    );
    expect(counts).toEqual([...hosts].sort().map((host_id) => ({ host_id, n: N, d: N, lo: 1, hi: N })));
    const moved = await query<{ server_id: string }>('select server_id from agents order by host_id');
    expect(moved.map((r) => r.server_id)).toEqual(['server-b', 'server-b', 'server-b']);

    // B notices A's expired lease (6 s) and removes its row
    // (already in its output, or still to come: checked and subscribed in the same tick)
    if (!b.stderr().includes('"dead_server_id":"server-a"')) {
      await b.waitForLog((r) => r['msg'] === 'server lease expired: its sessions marked Disconnected' && r['dead_server_id'] === 'server-a', 20_000);
    }
    expect((await query<{ server_id: string }>('select server_id from servers order by server_id')).map((r) => r.server_id)).toEqual(['server-b']);

    // a third server: a probe asked there for an agent held by B; a revoke (CLI on the
    // database) closes a session held by B within 2 s
    c = await startServer(db.db, ['--server-id', 'server-c', ...SERVER_ARGS]);
    const viaC = await probe(c, hosts[1] as string);
    expect(viaC.status, JSON.stringify(viaC.body)).toBe(200);
    const revokedAt = Date.now();
    expect(cliSync(SERVER_CLI, ['agent', 'revoke', hosts[2] as string, '--db', db.db]).code).toBe(0);
    await b.waitForLog((r) => r['msg'] === 'session revoked: agent.shutdown Revoked, closing 4002' && r['host_id'] === hosts[2], 5_000);
    expect(Date.now() - revokedAt).toBeLessThan(2_000 + 1_000); // 2 s bound, plus the CLI's own start
    const revoked = await query<{ connection_state: string }>('select connection_state from agents where host_id = $1', [hosts[2]]);
    expect(revoked[0]?.connection_state).toBe('Revoked');

    await Promise.all(agents.map((x) => x.kill('SIGTERM')));
    expect(await b.stop()).toBe(0);
    expect(await c.stop()).toBe(0);
    for (const x of agents) rememberStateToken(x.stateDir);
    assertNoTokenLeaks();
  } finally {
    await Promise.all(agents.map((x) => x.kill('SIGKILL')));
    await a.kill();
    await b.kill();
    await c?.kill();
    await proxy.close();
  }
}, 120_000);
