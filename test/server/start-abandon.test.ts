// A server start that fails once the server listens (DECISIONS G48): the database lost while it
// LISTENs for control changes or reads its first figures. The start used to leave its port
// held, its lease row in the servers table and its timers running: `serve --db-wait-secs`,
// which starts again in the same process, then said EADDRINUSE instead of trying again.
import net from 'node:net';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { openStorage } from '../../server/db/open.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import type { NotifyBus, Storage } from '../../server/db/storage.js';
import { createCapturingLogger } from '../../server/log.js';
import { startServer } from '../../server/server.js';
import { resolveSettings } from '../../server/settings.js';
import { makeTempDir } from './helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Whether something can listen on `port` now. */
async function canListen(port: number): Promise<boolean> {
  const s = net.createServer();
  const ok = await new Promise<boolean>((resolve) => {
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (ok) await new Promise<void>((resolve) => s.close(() => resolve()));
  return ok;
}

it('a start that fails after it listened gives back its port and its lease row, and the next start on that port succeeds', async () => {
  const dir = makeTempDir('cortex-abandon-');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'cortex.db');
  const storage = await openStorage(db);
  cleanups.push(() => storage.close());
  await migrateToLatest(storage);
  // The LISTEN for control changes fails: the connection to the database lost at that moment.
  let listens = 0;
  const bus: NotifyBus = {
    listen: () => {
      listens++;
      return Promise.reject(Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }));
    },
    notify: () => Promise.resolve(),
  };
  const losing: Storage = { ...storage, notifyBus: () => bus };
  const port = await freePort();
  const settings = resolveSettings({ listen: `127.0.0.1:${port}`, db });
  const log = createCapturingLogger({ name: 'test-server' });

  await expect(startServer({ settings, logger: log.logger, storage: losing, serverId: 'server-a' })).rejects.toThrow('Connection terminated unexpectedly');
  expect(listens).toBe(1); // it had listened and joined before it failed
  expect(await canListen(port), 'the port after the failed start').toBe(true);
  expect(await storage.db.selectFrom('servers').select('server_id').execute()).toEqual([]);

  // what serve --db-wait-secs does next: start again, in the same process, on the same port
  const again = await startServer({ settings, logger: log.logger, storage, serverId: 'server-a' });
  try {
    expect(again.port).toBe(port);
    expect(await storage.db.selectFrom('servers').select('server_id').execute()).toEqual([{ server_id: 'server-a' }]);
  } finally {
    await again.close();
  }
});
