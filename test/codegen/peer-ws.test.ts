// The same peer runtime over a real WebSocket (the `ws` package) on loopback.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { AgentClient, SUBPROTOCOL, createAgentPeer, createServerPeer, registerServerHandlers, webSocketTransport, type ServerPeer } from '@cortex/agent-protocol';

let server: WebSocketServer | undefined;
afterEach(async () => {
  for (const c of server?.clients ?? []) c.terminate();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function listen(onPeer: (peer: ServerPeer) => void): Promise<string> {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, handleProtocols: (p) => (p.has(SUBPROTOCOL) ? SUBPROTOCOL : false) });
  server.on('connection', (ws) => onPeer(createServerPeer(webSocketTransport(ws))));
  await once(server, 'listening');
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('peer over ws', () => {
  it('round-trips a typed request and a notification', async () => {
    const beats: number[] = [];
    const url = await listen((peer) =>
      registerServerHandlers(peer, {
        'logs.push': (p) => ({ up_to_seq: p.entries[p.entries.length - 1]!.seq }),
        'agent.heartbeat': (p) => void beats.push(p.buffer_bytes),
      }),
    );
    const ws = new WebSocket(url, SUBPROTOCOL);
    await once(ws, 'open');
    expect(ws.protocol).toBe(SUBPROTOCOL);
    const agent = new AgentClient(createAgentPeer(webSocketTransport(ws)));
    agent.agentHeartbeat({ ts: '2026-05-16T19:42:41.002Z', queue_depth: 0, buffer_bytes: 4096 });
    const ack = await agent.logsPush({ seq_start: 7, entries: [{ seq: 7, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'héllo ✓', source: 'custom:test' }] });
    expect(ack).toEqual({ up_to_seq: 7 });
    expect(beats).toEqual([4096]);
    ws.close(1000, 'final_seq=7');
    await once(ws, 'close');
  });

  it('closes with 1003 when a binary frame arrives', async () => {
    const url = await listen(() => undefined);
    const ws = new WebSocket(url, SUBPROTOCOL);
    await once(ws, 'open');
    ws.send(Buffer.from([1, 2, 3]), { binary: true });
    const [code] = (await once(ws, 'close')) as [number, Buffer];
    expect(code).toBe(1003);
  });

  it('answers malformed JSON with -32700 over the wire', async () => {
    const url = await listen(() => undefined);
    const ws = new WebSocket(url, SUBPROTOCOL);
    await once(ws, 'open');
    ws.send('{nope');
    const [data] = (await once(ws, 'message')) as [Buffer];
    expect(JSON.parse(data.toString())).toMatchObject({ id: null, error: { code: -32700 } });
    ws.close();
  });
});
