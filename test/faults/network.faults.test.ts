// Network faults between real agent processes and the real server, injected by the proxy
// while the agents stream: cuts, a half-open link (the proxy stops forwarding without
// closing — detected by the server's ping/pong and the agent's ping watchdog within the
// contract's bound, scaled to short intervals), 2 s stalls, resets mid-frame in both
// directions and per-chunk delay. At the end every seq 1..N is in `logs` exactly once.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordFigure } from '../support/figures.js';
import {
  AGENT_CLI,
  FULL,
  assertNoTokenLeaks,
  captured,
  cliSync,
  expectExactlyOnce,
  cleanupTempDirs,
  enroll,
  issueAgent,
  openDbReadOnly,
  rememberStateToken,
  requireDist,
  startAgentRunner,
  startServer,
  tempDir,
  until,
  type AgentProc,
  type RunnerEvent,
} from '../support/procs.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const AGENTS = 2;
const PING_MS = 400;
const MISSED = 3;
const WATCHDOG_MS = 1500;
const N = FULL ? 60_000 : 8_000;
const RATE = FULL ? 2_000 : 700;
const ROUNDS = FULL ? 4 : 1;

beforeAll(() => requireDist());
afterAll(() => cleanupTempDirs());


/** Resolves once every agent has a state event to `to` after time `since`. */
function allReach(agents: AgentProc[], to: string, since: number, timeoutMs: number): Promise<RunnerEvent[]> {
  return Promise.all(agents.map((a) => a.waitFor((e) => e.ev === 'state' && e.to === to && (e['t'] as number) >= since, timeoutMs)));
}

it(`cuts, half-open links, 2 s stalls, resets mid-frame and delays: ${AGENTS} × ${N} entries exactly once`, async () => {
  const dir = tempDir();
  const db = join(dir, 'server.db');
  const server = await startServer(db, ['--ping-interval-ms', String(PING_MS), '--missed-pongs', String(MISSED)]);
  const proxy = await TcpProxy.start({ targetPort: server.port });
  const agents: AgentProc[] = [];
  const hosts: string[] = [];
  const detection = { server_ms: [] as number[], agent_ms: [] as number[] };
  try {
    for (let i = 0; i < AGENTS; i++) {
      const issued = issueAgent(db, `net-${i}`);
      const stateDir = join(dir, `agent-${i}`);
      await enroll(proxy.url(), issued, stateDir);
      hosts.push(issued.host_id);
      agents.push(startAgentRunner({ stateDir, total: N, rate: RATE, chunk: 50, pingWatchdogMs: WATCHDOG_MS, backoffBaseMs: 100, backoffCapMs: 800, requestTimeoutMs: 4000 }));
    }
    await allReach(agents, 'Active', 0, 20_000);
    // server-side bound: missed_pongs unanswered pings, detected at the next sweep
    const serverBound = PING_MS * (MISSED + 1) + 1000;
    const agentBound = WATCHDOG_MS + 1000;

    // every agent Active with its link through the proxy (so a fault hits every agent)
    const settled = () =>
      until('all agents Active through the proxy', () => proxy.connections >= AGENTS && agents.every((a) => [...a.events].reverse().find((e) => e.ev === 'state')?.['to'] === 'Active'), 20_000);
    for (let round = 0; round < ROUNDS; round++) {
      // 1. cut
      await settled();
      let t = Date.now();
      proxy.cut();
      await allReach(agents, 'Reconnecting', t, 10_000);
      await allReach(agents, 'Active', t, 20_000);

      // 2. half-open: nothing flows, nothing closes
      await settled();
      t = Date.now();
      const serverSaw = server.waitForLog((r) => r['msg'] === 'missed pongs: closing 1011', serverBound + 2000);
      proxy.stall();
      const reconnecting = await allReach(agents, 'Reconnecting', t, agentBound + 2000);
      const srv = await serverSaw;
      const srvAt = typeof srv['time'] === 'number' ? srv['time'] : Date.parse(String(srv['time']));
      detection.server_ms.push(srvAt - t);
      for (const e of reconnecting) detection.agent_ms.push((e['t'] as number) - t);
      expect(srvAt - t).toBeLessThanOrEqual(serverBound);
      for (const e of reconnecting) expect((e['t'] as number) - t).toBeLessThanOrEqual(agentBound);
      t = Date.now();
      proxy.resume();
      await allReach(agents, 'Active', t, 20_000);

      // 3. a 2 s stall (longer than the short ping bound: detected or survived, never lost)
      const resumed = new Promise((r) => proxy.once('resumed', r));
      proxy.stall(2000);
      await resumed;
      await until('all agents Active after the stall', () => agents.every((a) => [...a.events].reverse().find((e) => e.ev === 'state')?.['to'] === 'Active'), 20_000);

      // 4. resets mid-frame, agent → server (mid logs.push) and server → agent (mid ack)
      for (const direction of ['to_server', 'to_client', 'to_server'] as const) {
        t = Date.now();
        proxy.resetMidFrame(direction, 5 + Math.floor(Math.random() * 60));
        await until('the armed reset to fire', () => !proxy.resetArmed, 10_000, 20);
        await until('all agents Active after the reset', () => agents.every((a) => [...a.events].reverse().find((e) => e.ev === 'state')?.['to'] === 'Active'), 20_000);
      }

      // 5. per-chunk delay for a while (entries keep flowing)
      proxy.delay(40);
      const before = agents.map((a) => [...a.events].reverse().find((e) => e.ev === 'progress')?.['acked'] as number | undefined ?? 0);
      await until('acks to advance under delay', () => agents.every((a, i) => a.events.some((e) => e.ev === 'done') || ((([...a.events].reverse().find((e) => e.ev === 'progress')?.['acked'] as number | undefined) ?? 0) > before[i]!)), 15_000);
      proxy.delay(0);
    }

    await Promise.all(agents.map((a) => a.waitFor((e) => e.ev === 'done', FULL ? 300_000 : 60_000)));
    // heartbeats kept last_seen moving for every host
    const rdb = openDbReadOnly(db);
    const rows = rdb.prepare('SELECT host_id, connection_state, last_seen FROM agents').all() as { host_id: string; connection_state: string; last_seen: string | null }[];
    rdb.close();
    for (const r of rows) {
      expect(r.connection_state).toBe('Active');
      expect(Date.now() - Date.parse(r.last_seen ?? '1970-01-01T00:00:00Z')).toBeLessThan(10_000);
    }
    // status output and /metrics are checked for tokens too (with everything else captured)
    for (const a of agents) {
      const st = cliSync(AGENT_CLI, ['status', '--state-dir', a.stateDir, '--json']);
      expect(st.code).toBe(0);
      // running, in a live (non-terminal) state; it may still be reconnecting after the last fault
      const status = JSON.parse(st.stdout) as { state: string; running: boolean; next_seq: number; acked_seq: number };
      expect(status.running).toBe(true);
      expect(['Active', 'Reconnecting', 'Connecting', 'Authenticating', 'Draining']).toContain(status.state);
      expect(status.acked_seq).toBe(N);
    }
    captured.push(await fetch(`${server.http}/metrics`).then((r) => r.text()));
    await Promise.all(agents.map((a) => a.kill('SIGTERM')));
    expect(await server.stop()).toBe(0);
    const { lost, duplicates: dups } = expectExactlyOnce(db, hosts, N);
    for (const a of agents) rememberStateToken(a.stateDir);
    recordFigure('network', {
      agents: AGENTS,
      entries_per_agent: N,
      faults: proxy.faults,
      half_open_detect_server_ms: detection.server_ms,
      half_open_detect_agent_ms: detection.agent_ms,
      bound_server_ms: serverBound,
      bound_agent_ms: agentBound,
      lost,
      duplicates: dups,
    });
    assertNoTokenLeaks();
  } finally {
    await Promise.all(agents.map((a) => a.kill('SIGKILL')));
    await server.kill();
    await proxy.close();
  }
}, FULL ? 600_000 : 150_000);
