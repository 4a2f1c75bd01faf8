// A server that sends without reading what the agent sends (DECISIONS H24): every frame it
// sends earns an answer (a 1-byte malformed frame a ~100-byte -32700), which the agent would
// hold without bound. Past 1 MiB queued the agent reads nothing more until the socket drained;
// a server that never reads again is left by the ping watchdog, and the agent reconnects.
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../agent/agent.js';
import { OUTBOUND_HIGH_WATER_BYTES } from '../../common/read-hold.js';
import { entries, makeAgent, stopAfterEach } from '../agent/helpers/agent-harness.js';
import { FakeServer } from '../agent/helpers/fake-server.js';
import { until } from '../support/procs.js';

const { agents, servers } = stopAfterEach();


/** What the agent has queued towards the server (its socket's bufferedAmount). */
function agentQueued(agent: Agent): number {
  const session = (agent as unknown as { session: { conn: { ws: { bufferedAmount: number } } | null } }).session;
  return session.conn?.ws.bufferedAmount ?? 0;
}

function serverSocket(s: FakeServer): Socket {
  return (s.current!.ws as unknown as { _socket: Socket })._socket;
}

const HELD = 'the server does not read what the agent sends: nothing more is read from it until it does (the connection is ended when no ping arrives in time)';

describe('a server that does not read what the agent sends (DECISIONS H24)', () => {
  it('the agent stops reading past 1 MiB queued, and carries on once the server reads again', async () => {
    const s = await FakeServer.start();
    servers.push(s);
    const { agent, logs } = await makeAgent(s.url);
    agents.push(agent);
    agent.start();
    await until('active', () => agent.state === 'Active');
    serverSocket(s).pause();
    // 200,000 malformed frames: 20 MB of -32700 answers had the agent read them all.
    const ws = s.current!.ws;
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 20_000; i++) ws.send('{');
      await new Promise((r) => setTimeout(r, 20));
    }
    // Until the agent reads no more of them (all read, or reads held).
    let last = -1;
    while (ws.bufferedAmount !== last) {
      last = ws.bufferedAmount;
      await new Promise((r) => setTimeout(r, 300));
    }
    const queued = agentQueued(agent);
    expect(queued).toBeGreaterThan(OUTBOUND_HIGH_WATER_BYTES);
    expect(queued).toBeLessThan(8 * OUTBOUND_HIGH_WATER_BYTES);
    expect(logs.lines.filter((l) => l['msg'] === HELD)).toHaveLength(1);
    expect(agent.state).toBe('Active');

    // The server reads again: the answers drain, the agent reads again, entries are delivered.
    serverSocket(s).resume();
    agent.ingest(entries(5, 'after'));
    await until('entries delivered after the flood', () => s.stored.size === 5, 30_000);
    expect([...s.stored.values()]).toEqual(['after0', 'after1', 'after2', 'after3', 'after4']);
    expect(s.sessions).toHaveLength(1);
  }, 60_000);

  it('a server that never reads again is left at the ping watchdog, and the agent reconnects', async () => {
    const s = await FakeServer.start();
    servers.push(s);
    const { agent, logs } = await makeAgent(s.url, { pingWatchdogMs: 1500 });
    agents.push(agent);
    agent.start();
    await until('active', () => agent.state === 'Active');
    const flooded = s.current!;
    serverSocket(s).pause();
    // The server keeps sending: an agent that read it all would never find it silent.
    const flood = setInterval(() => {
      if (flooded.ws.readyState === flooded.ws.OPEN) for (let i = 0; i < 2000; i++) flooded.ws.send('{');
    }, 5);
    try {
      await until('a second session', () => s.sessions.length >= 2 && s.current!.hello !== null, 20_000);
    } finally {
      clearInterval(flood);
    }
    expect(logs.lines.filter((l) => l['msg'] === HELD)).toHaveLength(1);
    expect(logs.lines.some((l) => l['msg'] === 'the server still does not read what the agent sends; ending the connection to reconnect')).toBe(true);
    await until('active again', () => agent.state === 'Active');
  }, 60_000);
});
