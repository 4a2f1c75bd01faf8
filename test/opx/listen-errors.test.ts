// `serve` on a listen address it cannot have says what to do (E_CONFIG, exit 2): a port another
// process holds, an address that is not this machine's, a privileged port. All three printed
// E_INTERNAL "this is a bug" before.
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { requireServerCli } from '../server/spawn.js';
import { SERVER_CLI_BUNDLE } from '../support/cli-bundles.js';
import { server, tmp } from './helpers.js';

beforeAll(() => requireServerCli(), 120_000);

it('a port in use: E_CONFIG naming it and how to find who holds it', async () => {
  const holder = net.createServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  const port = (holder.address() as net.AddressInfo).port;
  try {
    const r = server(['serve', '--db', join(tmp(), 'c.db'), '--listen', `127.0.0.1:${port}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`cortex-server: error[E_CONFIG]: cannot listen on 127.0.0.1:${port} (EADDRINUSE): another process listens on it (another cortex-server? \`ss -ltnp 'sport = :${port}'\` shows which): stop it, or give this server another --listen port`);
  } finally {
    holder.close();
  }
});

it('an address that is not this machine\'s: E_CONFIG saying so', () => {
  const r = server(['serve', '--db', join(tmp(), 'c.db'), '--listen', '192.0.2.10:3100', '--allow-insecure']); // TEST-NET-1
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('cortex-server: error[E_CONFIG]: cannot listen on 192.0.2.10:3100 (EADDRNOTAVAIL): 192.0.2.10 is not an address of this machine');
});

it('a port below 1024 without the right to it: E_CONFIG naming CAP_NET_BIND_SERVICE', () => {
  if (process.getuid?.() !== 0) {
    console.warn('listen errors: needs root to run serve as another user; not run');
    return;
  }
  const dir = tmp();
  spawnSync('chmod', ['0777', dir]);
  const r = spawnSync(process.execPath, [SERVER_CLI_BUNDLE, 'serve', '--db', join(dir, 'c.db'), '--listen', '127.0.0.1:81'], { uid: 65534, gid: 65534, encoding: 'utf8', timeout: 30_000 });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('cortex-server: error[E_CONFIG]: cannot listen on 127.0.0.1:81 (EACCES): ports below 1024 need root or the capability CAP_NET_BIND_SERVICE');
});
