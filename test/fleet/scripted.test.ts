// Simulated agents against scripted servers: a config.update written in the same TCP write
// as the hello's answer (so the agent reads both in one chunk) is applied after the hello's
// config, not overwritten by it; a server that never answers the upgrade or the hello is a
// transient failure, labelled and retried without end.
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { SUBPROTOCOL, type AgentConfig } from '@cortex/agent-protocol';
import { Fleet, type FleetOptions } from '../../fleet/fleet.js';
import { FLEET_PROBES } from '../../fleet/probes.js';

const HOST = '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01';
const helloConfig: AgentConfig = { heartbeat_interval_secs: 30, max_batch_entries: 1000, flush_interval_ms: 200, metrics_interval_secs: 60, probe_concurrency: 4, log_sources: [] };
const newer: AgentConfig = { ...helloConfig, heartbeat_interval_secs: 90, max_batch_entries: 10 };

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

function options(url: string): FleetOptions {
  return {
    identities: [{ host_id: HOST, token: 't'.repeat(43) }],
    workers: 0,
    url,
    ratePerAgent: 0,
    backoff: { baseMs: 20, capMs: 50, resetAfterMs: 60_000 },
    connectTimeoutMs: 150,
    helloTimeoutMs: 150,
    requestTimeoutMs: 5000,
    window: 4,
    maxBatchEntries: 1000,
    messageBytes: 10,
    probes: [...FLEET_PROBES],
    agentVersion: '1.0.0',
    startConcurrency: 1,
  };
}

it('times out an upgrade that is never answered and a hello that is never answered, and keeps retrying', async () => {
  // a TCP server that accepts and says nothing
  const silent = createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const held: Socket[] = [];
  silent.on('connection', (c) => held.push(c));
  cleanup.push(async () => {
    for (const c of held) c.destroy();
    await new Promise((r) => silent.close(r));
  });
  const a = await Fleet.start(options(`ws://127.0.0.1:${(silent.address() as AddressInfo).port}/ws/agent`));
  cleanup.push(() => a.stop());
  const sa = await a.waitFor((x) => x.errors.get('connect_timeout') >= 3, 10_000, 50);
  expect(sa.attempts.between(0, Date.now() + 1)).toBeGreaterThanOrEqual(3);
  expect(sa.gaveUp.toJSON()).toEqual({});

  // a WebSocket server that upgrades and never answers agent.hello
  const mute = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => SUBPROTOCOL });
  await new Promise((r) => mute.once('listening', r));
  cleanup.push(() => new Promise((r) => mute.close(r)));
  const b = await Fleet.start(options(`ws://127.0.0.1:${(mute.address() as AddressInfo).port}/ws/agent`));
  cleanup.push(() => b.stop());
  const sb = await b.waitFor((x) => x.errors.get('hello_timeout') >= 3, 10_000, 50);
  expect(sb.errors.get('connect_timeout')).toBe(0);
  expect(sb.states.FatalAuth + sb.states.Revoked).toBe(0);
});

it('applies a config.update that arrives in the same read as the hello answer after the hello config', async () => {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => SUBPROTOCOL });
  await new Promise((r) => wss.once('listening', r));
  cleanup.push(() => new Promise((r) => wss.close(r)));
  wss.on('connection', (ws: WebSocket) => {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { id?: number; method?: string };
      if (m.method !== 'agent.hello') return;
      // one write for both frames: the agent parses them from one chunk
      const socket = (ws as unknown as { _socket: Socket })._socket;
      socket.cork();
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { server_version: '0', server_time: new Date().toISOString(), accepted_seq: 0, session_id: randomUUID(), config: helloConfig } }));
      ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'config.update', params: { config: newer } }));
      process.nextTick(() => socket.uncork());
    });
  });
  const fleet = await Fleet.start(options(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws/agent`));
  cleanup.push(() => fleet.stop());
  const info = await fleet.waitForAgent(HOST, (a) => a.config_updates === 1, 5000);
  expect(info.state).toBe('Active');
  expect(info.config).toEqual(newer);
});
