// A client that resets its connection right after sending an upgrade request must not take
// the server down. Node's HTTP server removes its own error listener from the socket it
// hands to 'upgrade'; the reference server used to have none while it wrote a refusal
// (404 path, missing subprotocol) or the 101, and one ECONNRESET killed the process.
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeTempDir } from './helpers.js';
import { requireServerCli, serve, type ServeProcess } from './spawn.js';

let s: ServeProcess | undefined;
beforeAll(() => requireServerCli(), 60_000);
afterAll(() => {
  s?.child.kill('SIGKILL');
});

function upgradeThenReset(port: number, path: string, protocol: string | null): Promise<void> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => {
      sock.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n` +
          (protocol === null ? '' : `Sec-WebSocket-Protocol: ${protocol}\r\n`) +
          '\r\n',
      );
      // RST as soon as the request is on its way, while the server answers
      setImmediate(() => {
        sock.resetAndDestroy();
        resolve();
      });
    });
    sock.on('error', () => resolve());
  });
}

it('survives hundreds of upgrade requests reset mid-answer (refused and accepted alike)', async () => {
  const dir = makeTempDir('cortex-upgrade-reset-');
  s = await serve(['--db', join(dir, 'c.db'), '--upgrades-per-minute', '0']);
  const kinds: Array<[string, string | null]> = [
    ['/nope', 'cortex.v1'], // 404
    ['/ws/agent', null], // 400: no subprotocol
    ['/ws/agent', 'cortex.v1'], // 101, then the hello timer
  ];
  for (let round = 0; round < 40; round++) {
    await Promise.all(Array.from({ length: 15 }, (_, i) => upgradeThenReset(s!.port, ...kinds[i % kinds.length]!)));
  }
  // still serving
  const health = await fetch(`http://127.0.0.1:${s.port}/healthz`);
  expect(health.status).toBe(200);
  expect(s.child.exitCode).toBeNull();
  expect(s.stderr()).not.toMatch(/Unhandled 'error' event|uncaught/i);
}, 60_000);
