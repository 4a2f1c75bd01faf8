// SIGKILL of an agent process with unacked entries: after a restart every committed
// entry is replayed, none lost, no seq reused (a reused seq would arrive with another
// message and show up as a conflict in the fake server).
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Agent } from '../../agent/agent.js';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { createLogger } from '../../agent/log.js';
import { writeToken } from '../../agent/token-store.js';
import { bundleChild } from './fixtures/bundle.js';
import { pause, randomInt, spawnNodeChild } from './fixtures/child.js';
import { TOKEN, cleanupDirs, tempDir } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';

afterAll(cleanupDirs);

describe('agent SIGKILL with unacked entries', () => {
  it('replays everything after a restart; no loss, no seq reuse', async () => {
    const server = await FakeServer.start();
    // Slow acks, committed in frame order like a real server.
    let chain: Promise<unknown> = Promise.resolve();
    server.push = (p) => {
      const r = chain.then(async () => {
        await pause(randomInt(30));
        return server.store(p);
      });
      chain = r.catch(() => undefined);
      return r;
    };
    const dir = tempDir();
    const hostId = randomUUID();
    await writeToken(dir, TOKEN);
    const script = await bundleChild(new URL('./fixtures/agent-ingest-child.ts', import.meta.url).pathname, dir, 'agent-child');
    try {
      for (let round = 0; round < 3; round++) {
        const c = spawnNodeChild(script, [dir, server.url, hostId, String(round)]);
        await c.ready;
        await pause(50 + randomInt(250)); // a random kill moment
        c.child.kill('SIGKILL');
        await c.exited;
      }
      const snapshot = DurableBuffer.open(`${dir}/buffer.db`);
      const committedUpTo = snapshot.nextSeq - 1;
      const unacked = snapshot.stats().queueDepth;
      snapshot.close();
      expect(committedUpTo).toBeGreaterThan(0);
      const agent = new Agent({
        stateDir: dir,
        serverUrl: server.url,
        hostId,
        allowInsecure: true,
        logger: createLogger({ level: 'silent' }),
        metricsIntervalMs: 0,
      });
      agent.start();
      await agent.waitForAck(committedUpTo, 20_000);
      await agent.stop();
      const seqs = [...server.stored.keys()].sort((a, b) => a - b);
      expect(seqs).toEqual(Array.from({ length: committedUpTo }, (_, i) => i + 1));
      expect(server.conflicts).toEqual([]);
      expect(unacked).toBeGreaterThan(0); // the kill really left unacked entries behind
    } finally {
      await server.close();
    }
  });
});
