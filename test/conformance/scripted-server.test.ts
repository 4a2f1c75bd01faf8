// The agent suite's scripted server refuses upgrades (HTTP 503) to measure backoff; an
// agent that resets its connection meanwhile must not crash the runner (Node's HTTP server
// hands 'upgrade' a socket with no error listener).
import net from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { ScriptedServer } from '../../conformance/scripted-server.js';

const server = new ScriptedServer();
afterAll(() => server.stop());

function upgradeThenReset(port: number): Promise<void> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => {
      sock.write('GET /ws/agent HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: cortex.v1\r\n\r\n');
      setImmediate(() => {
        sock.resetAndDestroy();
        resolve();
      });
    });
    sock.on('error', () => resolve());
  });
}

it('survives upgrade requests reset while it refuses them with 503', async () => {
  await server.start();
  const port = Number(new URL(server.url.replace(/^ws/, 'http')).port);
  server.refuseBudget = 600;
  for (let round = 0; round < 30; round++) await Promise.all(Array.from({ length: 20 }, () => upgradeThenReset(port)));
  // (a reset that lands before the request is parsed is no attempt)
  expect(server.attempts.length).toBeGreaterThan(100);
  // still answering
  server.refuseBudget = 1000;
  const res = await new Promise<string>((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write('GET /ws/agent HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: cortex.v1\r\n\r\n'));
    sock.once('data', (d) => {
      resolve(d.toString('latin1'));
      sock.destroy();
    });
    sock.on('error', reject);
  });
  expect(res).toMatch(/^HTTP\/1\.1 503/);
});
