// Issue 18, the running agent under conditions an operator has to fix: a server whose
// accepted_seq for this host is beyond max_seq (DECISIONS H1), and a buffer found damaged
// while running (DECISIONS H5).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openHealing } from '../../agent/buffer/heal.js';
import { BufferStorageError } from '../../agent/buffer/errors.js';
import { dirs, entries, makeAgent, stopAfterEach } from '../agent/helpers/agent-harness.js';
import { FakeServer } from '../agent/helpers/fake-server.js';

const { agents, servers } = stopAfterEach();

describe('agent run', () => {
  it('an accepted_seq beyond max_seq: no streaming against it, last_error names agent reset-seq, reconnects; streams once the server is repaired', async () => {
    const server = await FakeServer.start();
    servers.push(server);
    server.accepted = 2 ** 60;
    const h = await makeAgent(server.url);
    agents.push(h.agent);
    h.agent.ingest(entries(3));
    h.agent.start();
    await new Promise<void>((resolve) => {
      const check = () => (server.sessions.length >= 2 ? resolve() : setTimeout(check, 20));
      check();
    });
    expect(h.agent.status().last_error).toContain(`cortex-server agent reset-seq ${h.hostId}`);
    expect(h.agent.status().acked_seq).toBe(0);
    server.accepted = 0; // the operator ran reset-seq
    await h.agent.waitForAck(3, 10_000);
    expect(h.agent.status().next_seq).toBe(4);
  });

  it('an accepted_seq a few below max_seq is taken (a valid value), but no entry is ever numbered past max_seq: the append is refused naming reset-seq (H53)', async () => {
    const server = await FakeServer.start();
    servers.push(server);
    server.accepted = Number.MAX_SAFE_INTEGER - 3;
    const h = await makeAgent(server.url);
    agents.push(h.agent);
    h.agent.start();
    await h.agent.waitForState('Active');
    expect(h.agent.status().next_seq).toBe(Number.MAX_SAFE_INTEGER - 2);
    h.agent.ingest(entries(3)); // max_seq - 2 .. max_seq
    expect(h.agent.status().next_seq).toBe(Number.MAX_SAFE_INTEGER + 1);
    let refused: unknown;
    try {
      h.agent.ingest(entries(1));
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(BufferStorageError);
    expect(refused).toMatchObject({ kind: 'seq_exhausted' });
    expect(h.agent.status().last_error).toContain('cortex-server agent reset-seq');
    await h.agent.waitForAck(Number.MAX_SAFE_INTEGER, 10_000); // the three are sent and acked, none past max_seq
  });

  it('a buffer found damaged at run time is announced as buffer_corrupt (cortex-agent run restarts and heals on it)', async () => {
    const server = await FakeServer.start();
    servers.push(server);
    const h = await makeAgent(server.url);
    agents.push(h.agent);
    const seen = new Promise<BufferStorageError>((r) => h.agent.once('buffer_corrupt', r));
    const damaged = new BufferStorageError('corrupt', 'append', 'buffer.db', 'SQLITE_CORRUPT');
    (h.agent.buffer as unknown as { append: () => never }).append = () => {
      throw damaged;
    };
    expect(() => h.agent.ingest(entries(1))).toThrow(BufferStorageError);
    expect(await seen).toBe(damaged);
    expect(h.agent.status().sources_paused).toBe(true);
  });
});

describe('a healed buffer in the running agent', () => {
  it('status says degraded, metrics.push reports the lost range, and degraded ends once the server acked past it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cortex-healed-'));
    dirs.push(dir);
    const first = openHealing(dir, { synchronous: 'NORMAL', reserveBytes: 0 });
    first.buffer.append(entries(20));
    first.buffer.close();
    writeFileSync(join(dir, 'buffer.db'), Buffer.alloc(8192, 0x42)); // not a database any more
    const server = await FakeServer.start();
    servers.push(server);
    const metrics = new Promise<{ name: string; value: number }[]>((resolve) => server.on('metrics', (p: { samples: { name: string; value: number }[] }) => resolve(p.samples)));
    const h = await makeAgent(server.url, {}, dir);
    agents.push(h.agent);
    const degraded = h.agent.status().degraded;
    expect(degraded).toMatchObject({ lost_from: 1, salvaged_entries: 0 });
    h.agent.start();
    const samples = await metrics;
    expect(samples.find((x) => x.name === 'buffer_recovery_lost_entries')?.value).toBe(degraded!.lost_to! - degraded!.lost_from! + 1);
    h.agent.ingest(entries(1));
    await h.agent.waitForAck(degraded!.next_seq, 10_000);
    expect(h.agent.status().degraded).toBeUndefined();
  });
});
