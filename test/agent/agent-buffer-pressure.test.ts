// Buffer caps, storage failures and secret hygiene in the running agent.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Agent } from '../../agent/agent.js';
import { BufferStorageError } from '../../agent/buffer/errors.js';
import { ROTATED, TOKEN, cleanupDirs, entries, makeAgent } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(cleanupDirs);

async function setup(opts: Parameters<typeof makeAgent>[1] = {}): Promise<{ s: FakeServer; agent: Agent; h: Awaited<ReturnType<typeof makeAgent>> }> {
  const s = await FakeServer.start();
  const h = await makeAgent(s.url, opts);
  cleanups.push(() => s.close(), () => h.agent.stop());
  return { s, agent: h.agent, h };
}

describe('hard cap eviction', () => {
  it('drops the oldest entries and reports them via metrics.push and a log line', async () => {
    const { s, agent, h } = await setup({ bufferOptions: { softCapBytes: 2000, hardCapBytes: 4000 } });
    s.push = () => new Promise(() => undefined); // nothing gets acked
    agent.start();
    await agent.waitForState('Active');
    const metrics = s.next<{ samples: { name: string; value: number }[] }>('metrics', (m: { samples: { name: string }[] }) =>
      m.samples.some((x) => x.name === 'buffer_evicted_entries'),
    );
    agent.ingest(entries(200, 'e', 50));
    const m = await metrics;
    const byName = Object.fromEntries(m.samples.map((x) => [x.name, x.value]));
    expect(byName.buffer_evicted_entries).toBeGreaterThan(0);
    expect(byName.buffer_evicted_oldest_seq).toBe(1);
    expect(h.logs.lines.some((l) => l.level === 'warn' && String(l.msg).includes('hard cap'))).toBe(true);
    expect(agent.status().buffer_bytes).toBeLessThanOrEqual(4000);
  });
});

describe('storage failure', () => {
  it('a full buffer pauses sources with a clear error; recovery when space returns', async () => {
    const { agent } = await setup();
    agent.start();
    await agent.waitForState('Active');
    agent.ingest(entries(5));
    const pageCount = Number(((agent.buffer as unknown as { db: { pragma(s: string, o: object): unknown } }).db).pragma('page_count', { simple: true }));
    agent.buffer.setMaxPageCount(pageCount);
    const err = (() => {
      try {
        agent.ingest(entries(2000, 'big', 500));
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(BufferStorageError);
    expect((err as BufferStorageError).kind).toBe('disk_full');
    expect(agent.status()).toMatchObject({ sources_paused: true, last_error: expect.stringMatching(/full/) });
    const recovered = new Promise((r) => agent.once('storage_recovered', r));
    agent.buffer.setMaxPageCount(1_000_000);
    agent.ingest(entries(3));
    await recovered;
    expect(agent.status().sources_paused).toBe(false);
    await agent.waitForAck(8);
  });

  it('rejects invalid entries without storing anything', async () => {
    const { agent } = await setup();
    expect(() => agent.ingest([{ ts: 'yesterday', severity: 'loud', message: 'x', source: 'custom:t' } as never])).toThrow(TypeError);
    expect(agent.status().next_seq).toBe(1);
  });
});

describe('secrets', () => {
  it('tokens never appear in logs, status or status.json (rotation, errors, reconnects)', async () => {
    const { s, agent, h } = await setup({ pingWatchdogMs: 200 });
    s.rotatedToken = ROTATED;
    agent.start();
    await agent.waitForState('Active');
    s.rotatedToken = null;
    agent.ingest(entries(3));
    await agent.waitForAck(3);
    await agent.waitForState('Reconnecting'); // watchdog (no pings)
    await agent.waitForState('Active');
    const all = h.logs.raw.join('\n') + JSON.stringify(agent.status()) + readFileSync(join(h.dir, 'status.json'), 'utf8');
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(ROTATED);
    expect(s.sessions[1]!.hello!.token).toBe(ROTATED);
  });
});

describe('flushing and heartbeat timing', () => {
  it('under the soft cap a partial batch waits for flush_interval_ms; at the soft cap it is sent at once', async () => {
    const s = await FakeServer.start();
    s.config = { ...s.config, flush_interval_ms: 60_000 };
    const h = await makeAgent(s.url, { bufferOptions: { softCapBytes: 1000, hardCapBytes: 1_000_000 } });
    cleanups.push(() => s.close(), () => h.agent.stop());
    h.agent.start();
    await h.agent.waitForState('Active');
    h.agent.ingest(entries(2)); // far below a full batch and below the soft cap
    h.agent.ingest(entries(20, 'p', 60)); // now above the soft cap: eager
    // sent without waiting for the flush interval (60 s), in one push or, when the second append
    // came while the first one's background fsync ran, in two (DECISIONS P16)
    let sent = 0;
    while (sent < 22) sent += (await s.next<{ entries: unknown[] }>('push')).entries.length;
    expect(sent).toBe(22);
  });

  it('heartbeat delay is interval ± 5 s jitter and never below 1 s', async () => {
    const { heartbeatDelayMs } = await import('../../agent/agent.js');
    expect(heartbeatDelayMs(30_000, 5000, 1000, 0)).toBe(25_000);
    expect(heartbeatDelayMs(30_000, 5000, 1000, 0.5)).toBe(30_000);
    expect(heartbeatDelayMs(30_000, 5000, 1000, 0.9999999)).toBe(35_000);
    expect(heartbeatDelayMs(5000, 5000, 1000, 0)).toBe(1000);
  });
});
