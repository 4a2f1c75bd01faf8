// Issue 18, the running agent under conditions an operator has to fix: a server whose
// accepted_seq for this host is beyond max_seq (DECISIONS H1), and a buffer found damaged
// while running (DECISIONS H5).
import { describe, expect, it } from 'vitest';
import { BufferStorageError } from '../../agent/buffer/errors.js';
import { entries, makeAgent, stopAfterEach } from '../agent/helpers/agent-harness.js';
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
