// DECISIONS P16: the agent commits appends without waiting for their fsync, and sends an entry
// only once the background fdatasync covering it has returned.
import { describe, expect, it } from 'vitest';
import type { BufferOptions } from '../../agent/buffer/buffer.js';
import { entries, makeAgent, stopAfterEach } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';
import { until } from '../support/procs.js';

const { agents, servers } = stopAfterEach();

describe('agent: entries are sent once on disk (background fsync)', () => {
  it('nothing is sent while the fsync is held, everything once it returns; a failed fsync is logged and FULL commits take over', async () => {
    const s = await FakeServer.start();
    servers.push(s);
    const pending: Array<(err: NodeJS.ErrnoException | null) => void> = [];
    const bufferOptions: BufferOptions = { hooks: { syncWal: (_fd, done) => void pending.push(done) } };
    const h = await makeAgent(s.url, { bufferOptions });
    agents.push(h.agent);
    h.agent.start();
    await h.agent.waitForState('Active');
    h.agent.ingest(entries(5, 'held'));
    await until('the background fsync is asked for', () => pending.length === 1);
    expect(h.agent.buffer.syncedSeq).toBe(0);
    expect(h.agent.buffer.readBatch(1, 100)).toBeNull(); // what the pump reads from (the stop below shows it sends nothing)
    pending.shift()!(null);
    await h.agent.waitForAck(5);
    expect([...s.stored.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);

    h.agent.ingest(entries(3, 'eio'));
    await until('the background fsync is asked for', () => pending.length === 1);
    pending.shift()!(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await h.agent.waitForAck(8); // made durable by a FULL commit, then sent
    expect(h.logs.lines.some((l) => l.level === 'error' && /cannot fsync .*buffer\.db-wal \(EIO.*synchronous=FULL.*check the disk/.test(String(l.msg)))).toBe(true);
    h.agent.ingest(entries(2, 'full'));
    await h.agent.waitForAck(10);
    expect(pending).toEqual([]); // no background sync any more
    expect(s.stored.size).toBe(10);
  });

  it('entries not yet on disk at stop stay in the buffer and are sent after a restart', async () => {
    const s = await FakeServer.start();
    servers.push(s);
    const pending: Array<(err: NodeJS.ErrnoException | null) => void> = [];
    const first = await makeAgent(s.url, { bufferOptions: { hooks: { syncWal: (_fd, done) => void pending.push(done) } } });
    first.agent.start();
    await first.agent.waitForState('Active');
    first.agent.ingest(entries(4, 'x'));
    await until('the background fsync is asked for', () => pending.length === 1);
    await first.agent.stop(); // a stop sends what it may and waits up to stopFlushMs for acks: here nothing
    expect(s.pushes).toEqual([]);
    pending.shift()!(null); // the sync returns after the close: its descriptor is closed then
    const again = await makeAgent(s.url, {}, first.dir);
    agents.push(again.agent);
    again.agent.start();
    await again.agent.waitForAck(4); // synced at open, sent at once
    expect([...s.stored.values()]).toEqual(['x0', 'x1', 'x2', 'x3']);
  });
});
