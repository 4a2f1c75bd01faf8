// DIR/config.json: the config last in force applies at the next start until the server's
// arrives (DECISIONS F9), so an agent started while no server answers still reads its logs.
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentConfig, LogBatchEntry } from '@cortex/agent-protocol';
import { describe, expect, it } from 'vitest';
import { CONFIG_FILE, ConfigStore } from '../../agent/config-store.js';
import { createCapturingLogger } from '../../agent/log.js';
import { sourceFactories } from '../../agent/sources/index.js';
import { makeAgent, stopAfterEach, tempDir } from './helpers/agent-harness.js';
import { FakeServer, TEST_CONFIG } from './helpers/fake-server.js';
import { until } from '../support/procs.js';

const { agents, servers } = stopAfterEach();


function received(s: FakeServer): LogBatchEntry[] {
  const bySeq = new Map<number, LogBatchEntry>();
  for (const p of s.pushes) for (const e of p.entries) if (!bySeq.has(e.seq)) bySeq.set(e.seq, e);
  return [...bySeq.entries()].sort((a, b) => a[0] - b[0]).map(([, e]) => e);
}

/** TEST_CONFIG without metrics_interval_secs (absent: every 60 s), reading `log`. */
const config = (log: string, extra: Partial<AgentConfig> = {}): AgentConfig => {
  const { metrics_interval_secs: _absent, ...rest } = TEST_CONFIG;
  return { ...rest, log_sources: [{ kind: 'file', path: log }], ...extra };
};

describe('the config last in force, kept for the next start (DECISIONS F9)', () => {
  it('an agent started while its server is down reads what its last config says, and sends it once the server is back', async () => {
    const dir = tempDir();
    const log = join(dir, 'app.log');
    writeFileSync(log, 'a1\na2\n');
    const s = await FakeServer.start();
    servers.push(s);
    s.config = config(log);
    const first = await makeAgent(s.url, { sourceFactories: sourceFactories({ pollMs: 20 }) }, dir);
    first.agent.start();
    await until('a1, a2 delivered', () => received(s).length === 2);
    await first.agent.stop();
    const stored = JSON.parse(readFileSync(join(dir, CONFIG_FILE), 'utf8')) as { config: AgentConfig; applied_at: string };
    expect(stored.config).toEqual(config(log));
    expect(statSync(join(dir, CONFIG_FILE)).mode & 0o777).toBe(0o600);

    // The server goes away; the host restarts the agent; lines keep coming.
    const url = s.url;
    await s.close();
    servers.splice(servers.indexOf(s), 1);
    appendFileSync(log, 'b1\nb2\nb3\n');
    const second = await makeAgent(url, { sourceFactories: sourceFactories({ pollMs: 20 }), hostId: first.hostId }, dir);
    agents.push(second.agent);
    second.agent.start();
    await until('b1-b3 buffered with no server', () => second.agent.buffer.stats().queueDepth === 3);
    expect(second.agent.state).not.toBe('Active');
    const applied = second.logs.lines.find((r) => r['msg'] === "the config last in force (config.json) applies until the server's arrives");
    // the interval in force: absent is 60 s (null would say "none", F11)
    expect(stored.config.metrics_interval_secs).toBeUndefined();
    expect(applied?.['config']).toMatchObject({ metrics_interval_secs: 60, log_sources: 1 });
    expect(second.agent.status().sources.find((x) => x.path === log)).toMatchObject({ kind: 'file', lines_read: 3 });

    // The server is back (same port): what was read meanwhile is sent, exactly once.
    const back = await FakeServer.start({ port: Number(new URL(url).port) });
    servers.push(back);
    back.config = config(log);
    await until('b1-b3 delivered', () => received(back).map((e) => e.message).join() === 'b1,b2,b3');
    // The fake server records a push before its ack reaches the agent: wait for the ack.
    await until('b1-b3 acked', () => second.agent.buffer.stats().queueDepth === 0);
    expect(received(back)).toHaveLength(3);
  });

  it("the server's config replaces the stored one at the hello: a removed source stops, the new config is stored", async () => {
    const dir = tempDir();
    const oldLog = join(dir, 'old.log');
    const newLog = join(dir, 'new.log');
    writeFileSync(oldLog, 'o1\n');
    writeFileSync(newLog, 'n1\n');
    const store = new ConfigStore(dir, createCapturingLogger('debug').logger);
    await store.store(config(oldLog));
    const s = await FakeServer.start();
    servers.push(s);
    s.config = config(newLog, { probe_concurrency: 3 });
    const { agent } = await makeAgent(s.url, { sourceFactories: sourceFactories({ pollMs: 20 }) }, dir);
    agents.push(agent);
    agent.start();
    await until('n1 delivered', () => received(s).some((e) => e.message === 'n1'));
    await until('the new config stored', () => readFileSync(join(dir, CONFIG_FILE), 'utf8').includes('new.log'));
    expect(agent.currentConfig).toEqual(config(newLog, { probe_concurrency: 3 }));
    expect(agent.status().sources.filter((x) => x.state !== undefined).map((x) => x.path)).toEqual([newLog]);
    // old.log was read under the stored config until the hello: its line is sent too, once
    expect(received(s).map((e) => e.message).sort()).toEqual(['n1', 'o1']);
  });

  it('a stored config that is not JSON or not a valid config is ignored and said; the agent waits for the server', async () => {
    const dir = tempDir();
    for (const [text, said] of [
      ['{"config": {"heartbeat_interval_secs": 30', 'the stored config is not JSON: ignored'],
      [JSON.stringify({ config: { ...TEST_CONFIG, heartbeat_interval_secs: 0 } }), 'the stored config is not a valid config: ignored'],
    ] as const) {
      writeFileSync(join(dir, CONFIG_FILE), text);
      const logs = createCapturingLogger('debug');
      expect(new ConfigStore(dir, logs.logger).read()).toBeNull();
      expect(logs.lines.find((r) => String(r['msg']).startsWith(said))).toBeDefined();
    }
    const { agent, logs } = await makeAgent('ws://127.0.0.1:9/ws/agent', {}, dir);
    agents.push(agent);
    agent.start();
    expect(agent.currentConfig.log_sources).toEqual([]);
    expect(logs.lines.some((r) => String(r['msg']).startsWith('the stored config is not a valid config'))).toBe(true);
  });

  it('an unchanged config is not written again; a revoked host forgets it', async () => {
    const dir = tempDir();
    const store = new ConfigStore(dir, createCapturingLogger('debug').logger);
    await store.store(config('/var/log/a.log'));
    const written = statSync(join(dir, CONFIG_FILE));
    await store.store(config('/var/log/a.log'));
    expect(statSync(join(dir, CONFIG_FILE)).ino).toBe(written.ino);
    await store.store(config('/var/log/b.log'));
    expect(new ConfigStore(dir, createCapturingLogger('debug').logger).read()).toEqual(config('/var/log/b.log'));

    const s = await FakeServer.start();
    servers.push(s);
    s.config = config('/var/log/b.log');
    const { agent } = await makeAgent(s.url, {}, dir);
    agents.push(agent);
    agent.start();
    await agent.waitForState('Active');
    s.current!.client.agentShutdown({ reason: 'Revoked', drain_seconds: 0 });
    await agent.done;
    expect(() => statSync(join(dir, CONFIG_FILE))).toThrow(/ENOENT/);
  });
});
