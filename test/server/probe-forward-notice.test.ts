// A forwarded probe's claim that throws where nobody awaits it (a NOTIFY, the poll) is logged,
// never an unhandled rejection: `serve` exits on one (common/process.ts logCrashes). Seen in a
// run of test/server/cluster.test.ts, whose G10 case makes the database's updateTable throw.
import { describe, expect, it } from 'vitest';
import { ProbeForwarder } from '../../server/cluster/probe-forward.js';
import { createCapturingLogger } from '../../server/log.js';
import type { Storage } from '../../server/db/storage.js';
import type { ProbeRouter } from '../../server/control/probes.js';
import type { HeldSession, SessionRegistry } from '../../server/cluster/registry.js';

describe('ProbeForwarder', () => {
  it('a notice whose claim throws is logged once as a warning; no unhandled rejection', async () => {
    let notice: ((payload: string) => void) | undefined;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const storage = {
      db: {
        updateTable: () => {
          throw new Error('simulated: probe_requests cannot be written');
        },
      },
      notifyBus: () => ({ listen: async (_channel: string, fn: (payload: string) => void) => void (notice = fn), notify: async () => undefined }),
    } as unknown as Storage;
    const registry = { serverId: 'server-a' } as unknown as SessionRegistry<HeldSession>;
    const log = createCapturingLogger({ level: 'debug' });
    const f = new ProbeForwarder(storage, registry, {} as ProbeRouter, log.logger, 1000);
    try {
      await f.start();
      expect(notice).toBeDefined();
      notice!(JSON.stringify({ t: 'req', id: 'r-1', target: 'server-a' }));
      await new Promise<void>((resolve) => setImmediate(resolve)); // the rejection, if unhandled, is reported after this turn
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      const warned = log.records().filter((r) => r['msg'] === 'forwarded probe: could not claim it; the poll tries again');
      expect(warned).toHaveLength(1);
      expect(String(warned[0]?.['err'])).toContain('simulated: probe_requests cannot be written');
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await f.stop();
    }
  });
});
