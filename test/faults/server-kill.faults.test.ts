// SIGKILL the server at random moments while 3 real agent processes stream through the
// proxy; after the last restart every seq 1..N of every agent is in `logs` exactly once.
// Short form: 3 × 4,000 entries at 1,200/s each, 3 kills. FAULTS_FULL=1: 3 × 100,000 entries, 10 kills.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TcpProxy } from '../support/tcp-proxy.js';
import {
  FULL,
  assertNoTokenLeaks,
  expectExactlyOnce,
  cleanupTempDirs,
  enroll,
  issueAgent,
  rememberStateToken,
  requireDist,
  startAgentRunner,
  startServer,
  tempDir,
  type AgentProc,
  type ServerProc,
} from '../support/procs.js';
import { recordFigure } from '../support/figures.js';

const AGENTS = 3;
const N = FULL ? 100_000 : 4_000;
const KILLS = FULL ? 10 : 3;
const RATE = FULL ? 0 : 1_200; // entries/s per agent (0: as fast as it goes)
const SERVER_ARGS = ['--ping-interval-ms', '500', '--missed-pongs', '3', '--hello-timeout-ms', '3000'];

beforeAll(() => requireDist());
afterAll(() => cleanupTempDirs());

it(`SIGKILL of the server at random moments: ${AGENTS} agents × ${N} entries arrive exactly once`, async () => {
  const dir = tempDir();
  const db = join(dir, 'server.db');
  let server: ServerProc = await startServer(db, SERVER_ARGS);
  const proxy = await TcpProxy.start({ targetPort: server.port });
  const agents: AgentProc[] = [];
  const hosts: string[] = [];
  try {
    for (let i = 0; i < AGENTS; i++) {
      const issued = issueAgent(db, `kill-${i}`);
      const stateDir = join(dir, `agent-${i}`);
      await enroll(proxy.url(), issued, stateDir);
      hosts.push(issued.host_id);
      agents.push(startAgentRunner({ stateDir, total: N, rate: RATE, chunk: 100, pingWatchdogMs: 2000, backoffBaseMs: 100, backoffCapMs: 1000 }));
    }
    await Promise.all(agents.map((a) => a.waitFor((e) => e.ev === 'state' && e.to === 'Active', 15_000)));

    const killsMidStream: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      // a random moment: 150..900 ms after the (re)start, while the streams run
      await new Promise((r) => setTimeout(r, 150 + Math.floor(Math.random() * 750)));
      const inFlight = agents.filter((a) => !a.events.some((e) => e.ev === 'done')).length;
      killsMidStream.push(inFlight);
      await server.kill();
      server = await startServer(db, SERVER_ARGS);
      proxy.setTarget(server.port);
    }
    const timeout = FULL ? 240_000 : 60_000;
    await Promise.all(agents.map((a) => a.waitFor((e) => e.ev === 'done', timeout)));
    await Promise.all(agents.map((a) => a.kill('SIGTERM')));
    expect(await server.stop()).toBe(0);

    const { lost, duplicates: dups } = expectExactlyOnce(db, hosts, N, { maxSeq: N });
    for (const a of agents) rememberStateToken(a.stateDir);
    recordFigure('server_kill', { agents: AGENTS, entries_per_agent: N, kills: KILLS, kills_mid_stream: killsMidStream.filter((n) => n > 0).length, lost, duplicates: dups, proxy_attempts: proxy.attempts.length, upstream_refused: proxy.faults.upstream_refused });
    // at least one kill landed while entries were still streaming
    expect(killsMidStream.some((n) => n > 0)).toBe(true);
    assertNoTokenLeaks();
  } finally {
    await Promise.all(agents.map((a) => a.kill('SIGKILL')));
    await server.kill();
    await proxy.close();
  }
}, FULL ? 600_000 : 120_000);
