// The agent with its real probe registry and real log sources wired in (issue 6):
// supported_probes, probe.request through the registry, probe_concurrency live, log
// sources started/stopped/restarted by config.update, status per source.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ErrorCode, PROBES, ProbeExecutionFailedError, type RpcError, validateFsDiskUsageOutput, validateProbeRequestResult, type AgentConfig, type LogBatchEntry } from '@cortex/agent-protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { BasicSourceManager, sourceKey, type RunningSource } from '../../agent/sources.js';
import { sourceFactories } from '../../agent/sources/index.js';
import { makeAgent, ROTATED, TOKEN, type Harness, stopAfterEach } from './helpers/agent-harness.js';
import { startAgent } from '../../agent/index.js';
import { createCapturingLogger } from '../../agent/log.js';
import { writeAgentSettings, writeHostId } from '../../agent/state-dir.js';
import { writeToken } from '../../agent/token-store.js';
import { FakeServer, TEST_CONFIG } from './helpers/fake-server.js';
import { testProbe } from './probes/helpers.js';
import { until } from '../support/procs.js';

const { agents, servers } = stopAfterEach();
const tmp: string[] = [];

async function server(): Promise<FakeServer> {
  const s = await FakeServer.start();
  servers.push(s);
  return s;
}

async function agentFor(s: FakeServer, opts: Parameters<typeof makeAgent>[1] = {}): Promise<Harness> {
  const h = await makeAgent(s.url, opts);
  agents.push(h.agent);
  return h;
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'cortex-wiring-'));
  tmp.push(d);
  return d;
}


/** Every entry the fake server received (first copy of each seq), in seq order. */
function received(s: FakeServer): LogBatchEntry[] {
  const bySeq = new Map<number, LogBatchEntry>();
  for (const p of s.pushes) for (const e of p.entries) if (!bySeq.has(e.seq)) bySeq.set(e.seq, e);
  return [...bySeq.entries()].sort((a, b) => a[0] - b[0]).map(([, e]) => e);
}

afterAll(() => {
  for (const d of tmp.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('probes wired into the agent', () => {
  it('hello lists exactly the registry in capabilities.supported_probes', async () => {
    const s = await server();
    const { agent } = await agentFor(s);
    agent.start();
    await agent.waitForState('Active');
    expect(s.current!.hello!.capabilities.supported_probes).toEqual(agent.probes.names());
    expect(agent.probes.names()).toEqual(PROBES.map((p) => p.name));
  });

  it('runs fs.disk_usage through the registry and passes its typed errors through', async () => {
    const s = await server();
    const { agent } = await agentFor(s);
    agent.start();
    await agent.waitForState('Active');
    const client = s.current!.client;
    const out = await client.probeRequest({ probe: 'fs.disk_usage', args: { path: '/' }, timeout_ms: 5000 });
    expect(validateProbeRequestResult(out)).toBe(true);
    expect(validateFsDiskUsageOutput(out.output)).toBe(true);
    expect((out.output as { total_bytes: number }).total_bytes).toBeGreaterThan(0);

    const code = async (p: Promise<unknown>) => ((await p.then(() => null, (e: unknown) => e)) as { code: number; data?: unknown } | null);
    expect((await code(client.probeRequest({ probe: 'no.such', args: {}, timeout_ms: 1000 })))?.code).toBe(ErrorCode.ProbeUnavailable);
    const bad = await code(client.probeRequest({ probe: 'exec.systemctl_status', args: { unit: '--help' }, timeout_ms: 1000 }));
    expect(bad?.code).toBe(-32602);
    expect(JSON.stringify(bad?.data)).toContain('/args/unit');
    // file.tail outside the allowed paths (default /var/log) is refused as invalid params
    const outside = await code(client.probeRequest({ probe: 'file.tail', args: { path: '/etc/passwd', lines: 5 }, timeout_ms: 1000 }));
    expect(outside?.code).toBe(-32602);
  });

  it('file.tail reads inside the configured allowed paths (agent.json probe_file_tail_paths)', async () => {
    const s = await server();
    const dir = tempDir();
    const f = join(dir, 'app.log');
    writeFileSync(f, 'one\ntwo\nthree\n');
    const { agent } = await agentFor(s, { probeFileTailPaths: [dir] });
    agent.start();
    await agent.waitForState('Active');
    const out = await s.current!.client.probeRequest({ probe: 'file.tail', args: { path: f, lines: 2 }, timeout_ms: 5000 });
    expect(JSON.stringify(out.output)).toContain('three');
    expect(JSON.stringify(out.output)).not.toContain('one');
  });

  it('a probe whose handler has a bug is answered -32603 InternalError over the wire and logged at error level; a reported failure stays -32011', async () => {
    const s = await server();
    const broken = testProbe('site.broken', async (a: { settings: { level: string } }) => ({ output: a.settings.level }));
    const failing = testProbe('site.failing', async () => {
      throw new ProbeExecutionFailedError({ stderr: 'queue is down', exit_code: 2 });
    });
    const h = await agentFor(s, { probes: { extraProbes: [broken, failing] } });
    h.agent.start();
    await h.agent.waitForState('Active');
    const client = s.current!.client;
    const err = (await client.probeRequest({ probe: 'site.broken', args: {}, timeout_ms: 2000 }).then(() => null, (e: unknown) => e)) as RpcError | null;
    expect(err?.code).toBe(-32603);
    expect(err?.data).toMatchObject({ probe: 'site.broken', reason: 'exception', message: expect.stringMatching(/^probe site\.broken threw TypeError: /) });
    expect(h.logs.lines).toContainEqual(expect.objectContaining({ level: 'error', probe: 'site.broken', reason: 'exception', host_id: h.hostId }));
    const failed = (await client.probeRequest({ probe: 'site.failing', args: {}, timeout_ms: 2000 }).then(() => null, (e: unknown) => e)) as RpcError | null;
    expect(failed?.code).toBe(-32011);
    expect(failed?.data).toEqual({ stderr: 'queue is down', exit_code: 2, probe: 'site.failing' });
  });

  it('startAgent with probes: { extraProbes } (a site build) keeps agent.json\'s probe_file_tail_paths', async () => {
    const s = await server();
    const logDir = tempDir();
    const f = join(logDir, 'app.log');
    writeFileSync(f, 'one\ntwo\n');
    const state = tempDir();
    await writeToken(state, TOKEN);
    await writeHostId(state, randomUUID());
    await writeAgentSettings(state, { server_url: s.url, allow_insecure: true, probe_file_tail_paths: [logDir] });
    const agent = await startAgent({ stateDir: state, logger: createCapturingLogger('debug').logger, sourceFactories: [], metricsIntervalMs: 0, probes: { extraProbes: [testProbe('site.echo', async (a) => ({ output: a }))] } });
    agents.push(agent);
    await agent.waitForState('Active');
    expect(s.current!.hello!.capabilities.supported_probes).toContain('site.echo');
    const out = await s.current!.client.probeRequest({ probe: 'file.tail', args: { path: f, lines: 1 }, timeout_ms: 5000 });
    expect(JSON.stringify(out.output)).toContain('two');
  });

  it('enforces probe_concurrency from HelloResult.config and applies config.update live', async () => {
    const s = await server();
    s.config = { ...TEST_CONFIG, probe_concurrency: 2 };
    let running = 0;
    let max = 0;
    const gates: (() => void)[] = [];
    const gate = testProbe('test.gate', async () => {
      running++;
      max = Math.max(max, running);
      await new Promise<void>((r) => gates.push(r));
      running--;
      return { output: { ok: true } };
    });
    const { agent } = await agentFor(s, { probes: { extraProbes: [gate] } });
    agent.start();
    await agent.waitForState('Active');
    expect(s.current!.hello!.capabilities.supported_probes).toContain('test.gate');
    const client = s.current!.client;
    const run = (n: number) => Promise.all(Array.from({ length: n }, () => client.probeRequest({ probe: 'test.gate', args: {}, timeout_ms: 10_000 })));
    /** Releases one running probe every 30 ms until all calls are answered. */
    const drain = async (calls: Promise<unknown>) => {
      let done = false;
      void calls.finally(() => (done = true));
      while (!done) {
        await new Promise((r) => setTimeout(r, 30));
        gates.shift()?.();
      }
      await calls;
    };

    const first = run(4);
    await until('two probes running', () => running === 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(agent.probes.stats()).toMatchObject({ concurrency: 2, running: 2, waiting: 2 });
    await drain(first);
    expect(max).toBe(2);

    const applied = new Promise((r) => agent.once('config_applied', r));
    client.configUpdate({ config: { ...s.config, probe_concurrency: 1 } });
    await applied;
    expect(agent.probes.stats().concurrency).toBe(1);
    max = 0;
    await drain(run(3));
    expect(max).toBe(1);
  });

  it('answers a probe only after a rotated token is persisted', async () => {
    const s = await server();
    s.rotatedToken = ROTATED;
    const order: string[] = [];
    const probe = testProbe('test.order', async () => {
      order.push(`probe token=${readFileSync(join(h.dir, 'token'), 'utf8').trim() === ROTATED ? 'rotated' : 'old'}`);
      return { output: {} };
    });
    const h = await agentFor(s, { probes: { extraProbes: [probe] } });
    h.agent.start();
    // ask as soon as the hello arrives (before the agent has persisted the rotated token)
    const sent = await until('hello', () => s.current?.hello ?? undefined);
    expect(sent).toBeTruthy();
    await s.current!.client.probeRequest({ probe: 'test.order', args: {}, timeout_ms: 5000 });
    expect(order).toEqual(['probe token=rotated']);
  });
});

describe('log sources wired into the agent', () => {
  it('sourceKey is the whole config: labels or extra fields change it, key order does not', () => {
    const a = sourceKey({ kind: 'file', path: '/x', labels: { a: '1', b: '2' } });
    expect(sourceKey({ labels: { b: '2', a: '1' }, path: '/x', kind: 'file' })).toBe(a);
    expect(sourceKey({ kind: 'file', path: '/x', labels: { a: '1', b: '3' } })).not.toBe(a);
    expect(sourceKey({ kind: 'file', path: '/x', labels: { a: '1', b: '2' }, extra: true })).not.toBe(a);
    expect(sourceKey({ kind: 'file', path: '/x' })).not.toBe(a);
  });

  it('a restarted source starts only after its predecessor has stopped', async () => {
    const events: string[] = [];
    let n = 0;
    const slowStop = {
      kind: 'file' as const,
      start(): RunningSource {
        const id = ++n;
        events.push(`start ${id}`);
        return {
          kind: 'file',
          key: `file:/x#${id}`,
          start: () => undefined,
          pause: () => undefined,
          resume: () => undefined,
          stop: () => new Promise<void>((r) => setTimeout(() => (events.push(`stopped ${id}`), r()), 50)),
          status: () => ({ position: null, last_error: null }),
        };
      },
    };
    const m = new BasicSourceManager({ append: () => ({ count: 0 }) as never, position: () => null }, [slowStop]);
    m.apply([{ kind: 'file', path: '/x', labels: { v: '1' } }]);
    m.apply([{ kind: 'file', path: '/x', labels: { v: '2' } }]);
    expect(m.status()).toEqual([expect.objectContaining({ kind: 'file', path: '/x', state: 'starting', labels: { v: '2' } })]);
    await m.settled();
    expect(events).toEqual(['start 1', 'stopped 1', 'start 2']);
    // unchanged config: nothing restarts
    m.apply([{ kind: 'file', labels: { v: '2' }, path: '/x' }]);
    await m.settled();
    expect(events).toEqual(['start 1', 'stopped 1', 'start 2']);
    await m.close();
    expect(events).toEqual(['start 1', 'stopped 1', 'start 2', 'stopped 2']);
  });

  it('tails a configured file, restarts it on a labels-only change without loss or duplicates, stops it when removed', async () => {
    const s = await server();
    const dir = tempDir();
    const log = join(dir, 'app.log');
    writeFileSync(log, 'a1\na2\n');
    const cfg = (extra: Partial<AgentConfig> = {}, labels?: Record<string, string>): AgentConfig => ({
      ...TEST_CONFIG,
      log_sources: [{ kind: 'file', path: log, ...(labels ? { labels } : {}) }],
      ...extra,
    });
    s.config = cfg({}, { v: '1' });
    const { agent } = await agentFor(s, { sourceFactories: sourceFactories({ pollMs: 30 }) });
    agent.start();
    await agent.waitForState('Active');
    expect(s.current!.hello!.capabilities.sources).toEqual(expect.arrayContaining(['custom', 'file', 'journald']));
    await until('a1, a2 delivered', () => received(s).length === 2);

    // status: kind, path, position, last_error
    await until('position in status', () => {
      const st = agent.status().sources.find((x) => x.kind === 'file' && x.path === log);
      return st !== undefined && st.position !== null;
    });
    const st = agent.status().sources.find((x) => x.path === log)!;
    expect(st).toMatchObject({ kind: 'file', path: log, last_error: null, key: `file:${log}`, lines_read: 2 });
    expect(agent.status().sources.filter((x) => x.path === log)).toHaveLength(1);
    expect(st.position).toMatchObject({ offset: 6 });

    // labels-only change: the source restarts (new labels on new lines), resumes from its offset
    const applied = new Promise((r) => agent.once('config_applied', r));
    s.current!.client.configUpdate({ config: cfg({}, { v: '2' }) });
    await applied;
    appendFileSync(log, 'b1\nb2\n');
    await until('b1, b2 delivered', () => received(s).length === 4);
    const got = received(s);
    expect(got.map((e) => e.message)).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(got.map((e) => (e.metadata as { labels?: Record<string, string> } | undefined)?.labels?.['v'] ?? (e.metadata as Record<string, string> | undefined)?.['v'])).toEqual(['1', '1', '2', '2']);

    // removed: nothing more is read
    const removed = new Promise((r) => agent.once('config_applied', r));
    s.current!.client.configUpdate({ config: { ...TEST_CONFIG, log_sources: [] } });
    await removed;
    await new Promise((r) => setTimeout(r, 100));
    appendFileSync(log, 'c1\n');
    await new Promise((r) => setTimeout(r, 300));
    expect(received(s).map((e) => e.message)).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(agent.status().sources.filter((x) => x.path === log && x.state !== undefined)).toEqual([]);
  });
});
