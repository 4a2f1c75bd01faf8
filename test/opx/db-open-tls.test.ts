// TLS between cortex-server and PostgreSQL, as the operator meets it setting up `sslmode` and
// a managed database's CA (DECISIONS G27). Each printed E_INTERNAL "this is a bug" before
// (E_FILE_ACCESS for a CA file that is not there). A fake PostgreSQL answers the SSLRequest:
// 'N' (no TLS), or 'S' and a TLS handshake with a self-signed certificate for 127.0.0.1.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireServerCli } from '../server/spawn.js';
import { serverAsync } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'cortex-pg-tls-'));
const cert = join(dir, 'cert.pem');
const key = join(dir, 'key.pem');
const servers: Server[] = [];

/** A fake PostgreSQL on 127.0.0.1 that answers an SSLRequest with `answer` (and then does TLS for 'S'). */
function fakePostgres(answer: 'N' | 'S'): Promise<number> {
  const server = createServer((socket: Socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => {
      socket.write(answer);
      if (answer === 'N') return; // the client gives up: it asked for TLS
      const tls = new TLSSocket(socket, { isServer: true, cert: readFileSync(cert), key: readFileSync(key) });
      tls.on('error', () => undefined);
      tls.on('secure', () => tls.destroy()); // a trusted handshake is not what these cases test
    });
  });
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

beforeAll(async () => {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  await requireServerCli();
}, 120_000);

afterAll(() => {
  for (const s of servers) s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('TLS to PostgreSQL: what the operator gets wrong is E_DB_OPEN saying what to do', () => {
  it('the URL asks for TLS and PostgreSQL has none', async () => {
    const port = await fakePostgres('N');
    const r = await serverAsync(['agent', 'list', '--db', `postgres://cortex@127.0.0.1:${port}/cortex?sslmode=verify-full`]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^cortex-server: error\[E_DB_OPEN\]: PostgreSQL at 127\.0\.0\.1:\d+ does not accept TLS connections, and the URL asks for one \(sslmode=verify-full\) \(--db .*\) — turn ssl on in its postgresql\.conf/m);
  });

  it('a certificate signed by a CA this machine does not know: give it with sslrootcert (sslmode=require verifies here)', async () => {
    const port = await fakePostgres('S');
    for (const [mode, command] of [
      ['require', ['agent', 'list']],
      ['verify-full', ['serve', '--listen', '127.0.0.1:0']],
    ] as const) {
      const r = await serverAsync([...command, '--db', `postgres://cortex@127.0.0.1:${port}/cortex?sslmode=${mode}`]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(
        /^cortex-server: error\[E_DB_OPEN\]: PostgreSQL at 127\.0\.0\.1:\d+ presented a TLS certificate this machine does not trust: self[- ]signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\) \(--db .*\) — give the CA that signed it in the URL: sslrootcert=\/path\/to\/ca\.pem/m,
      );
    }
  });

  it('a host name the certificate does not name', async () => {
    const port = await fakePostgres('S');
    const r = await serverAsync(['agent', 'list', '--db', `postgres://cortex@localhost:${port}/cortex?sslmode=verify-full&sslrootcert=${cert}`]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^cortex-server: error\[E_DB_OPEN\]: PostgreSQL at localhost:\d+ presented a TLS certificate this machine does not trust: .*\(ERR_TLS_CERT_ALTNAME_INVALID\) .* — connect by a host name its certificate names/m);
  });

  it('a CA file the URL names that is not there', async () => {
    const r = await serverAsync(['agent', 'list', '--db', `postgres://cortex@127.0.0.1:5999/cortex?sslmode=verify-full&sslrootcert=${join(dir, 'nope.pem')}`]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^cortex-server: error\[E_DB_OPEN\]: cannot read .*nope\.pem, the URL's sslrootcert: ENOENT .* — give sslrootcert the path of a PEM file this user \(\S+\) may read/m);
  });
});
