// The peer over a WHATWG WebSocket: Node 20 has one behind --experimental-websocket
// (undici's), so a child process runs the client half with it against a `ws` server here.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { BackpressureError, ErrorCode, SUBPROTOCOL, createServerPeer, registerServerHandlers, webSocketTransport } from '@cortex/agent-protocol';

const CLIENT = fileURLToPath(new URL('./fixtures/whatwg-client.mjs', import.meta.url));
let server: WebSocketServer | undefined;
afterEach(async () => {
  for (const c of server?.clients ?? []) c.terminate();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

it('round-trips a request, a notification, an error and the close code over a WHATWG WebSocket', async () => {
  const beats: number[] = [];
  server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, handleProtocols: (p) => (p.has(SUBPROTOCOL) ? SUBPROTOCOL : false) });
  server.on('connection', (ws) => {
    const peer = createServerPeer(webSocketTransport(ws));
    registerServerHandlers(peer, {
      'logs.push': (p) => {
        if (p.seq_start === 8) {
          setTimeout(() => ws.close(4001, 'enough'), 20);
          throw new BackpressureError({ retry_after_ms: 250 }, 'Backpressure');
        }
        return { up_to_seq: p.entries[p.entries.length - 1]!.seq };
      },
      'agent.heartbeat': (p) => void beats.push(p.buffer_bytes),
    });
  });
  await once(server, 'listening');
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/agent`;
  const { stdout } = await new Promise<{ stdout: string }>((resolve, reject) =>
    execFile(process.execPath, ['--experimental-websocket', '--no-warnings', CLIENT, url], { timeout: 20_000 }, (err, out, errOut) =>
      err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve({ stdout: out }),
    ),
  );
  const got = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  expect(got['error']).toBeUndefined();
  expect(got).toEqual({
    protocol: SUBPROTOCOL,
    ack: { up_to_seq: 7 },
    rejected: { name: 'BackpressureError', code: ErrorCode.Backpressure, data: { retry_after_ms: 250 } },
    close: { code: 4001, reason: 'enough' },
  });
  expect(beats).toEqual([4096]);
});
