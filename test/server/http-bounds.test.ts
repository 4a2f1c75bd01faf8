// Before the upgrade the hello timer is not running yet: the HTTP request head and the TLS
// handshake have bounds of their own, so a slow client cannot hold a socket for long.
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { makeTempDir } from './helpers.js';
import { startTestServer, type TestServer } from './wire.js';

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

/** Opens a TCP socket to `port`, runs `feed` on it, resolves with ms until the server closed it. */
function closedAfter(port: number, feed: (s: net.Socket) => () => void): Promise<{ ms: number; reply: string }> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const s = net.connect(port, '127.0.0.1');
    let reply = '';
    let stop = () => undefined as void;
    s.on('connect', () => (stop = feed(s)));
    s.on('data', (d) => (reply += d.toString('latin1')));
    s.on('error', () => undefined); // a reset counts as closed
    s.on('close', () => {
      stop();
      resolve({ ms: Date.now() - t0, reply });
    });
    setTimeout(() => reject(new Error('the server kept the socket open for 10 s')), 10_000).unref();
  });
}

it('a request head trickled byte by byte is cut off at the headers timeout (408), and the server stays healthy', async () => {
  const t = await startTestServer({}, { headersTimeoutMs: 800 });
  servers.push(t);
  const port = t.server.port;
  const r = await closedAfter(port, (s) => {
    s.write('GET /ws/agent HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const timer = setInterval(() => s.writable && s.write('X'), 100); // a header line that never ends
    return () => clearInterval(timer);
  });
  expect(r.ms).toBeGreaterThanOrEqual(700);
  expect(r.ms).toBeLessThan(800 + 2500); // the timeout plus Node's check interval (≤ 1 s) and slack
  expect(r.reply).toMatch(/^HTTP\/1\.1 408/);
  const health = await fetch(`http://127.0.0.1:${port}/healthz`);
  expect(health.status).toBe(200);
});

it('a TLS client that never finishes its handshake is dropped at the same bound', async () => {
  const dir = makeTempDir('cortex-tls-bounds-');
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'], { stdio: 'ignore' });
  const t = await startTestServer({ tls_cert: cert, tls_key: key }, { headersTimeoutMs: 800 });
  servers.push(t);
  const r = await closedAfter(t.server.port, () => () => undefined); // connects, says nothing
  expect(r.ms).toBeGreaterThanOrEqual(700);
  expect(r.ms).toBeLessThan(800 + 2500);
});
