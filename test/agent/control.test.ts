import { EventEmitter } from 'node:events';
import { ProbeUnavailableError, type AgentConfig, type CallContext, type ProbeOutput, type ProbeRequestParams } from '@cortex/agent-protocol';
import { describe, expect, it, vi } from 'vitest';
import { Control, DEFAULT_CONFIG, type ControlConn, type ControlSession } from '../../agent/control.js';
import { createLogger } from '../../agent/log.js';

/** A control over fakes; `s` records what it asked of the session and the parts. */
function controlFor(opts: { state?: 'Active' | 'Draining' | 'Authenticating'; nextSeq?: number; ackedSeq?: number } = {}) {
  const s = {
    state: opts.state ?? 'Active',
    current: null as ControlConn | null,
    buffer: { nextSeq: opts.nextSeq ?? 1, ackedSeq: opts.ackedSeq ?? 0 },
    revoked: 0,
    drained: 0,
    pumps: 0,
    statusWrites: 0,
    rescheduled: [] as [AgentConfig, AgentConfig][],
    applied: [] as unknown[],
    rejected: [] as string[],
    sources: [] as unknown[],
    concurrency: [] as number[],
    invoked: [] as ProbeRequestParams[],
    probe: async (p: ProbeRequestParams): Promise<ProbeOutput> => ({ probe: p.probe, exit_code: 0, duration_ms: 1, output: {} }) as ProbeOutput,
  };
  const events = new EventEmitter();
  const session: ControlSession = {
    isCurrent: (c) => c === s.current,
    sending: () => s.state === 'Active' || s.state === 'Draining',
    draining: () => s.state === 'Draining',
    revokedByServer: () => void s.revoked++,
    beginDrain: () => (s.state === 'Active' ? ((s.state = 'Draining'), true) : false),
    drained: () => {
      s.drained++;
      s.state = 'Active';
      events.emit('test_drained');
    },
  };
  events.on('config_applied', (c) => s.applied.push(c));
  events.on('config_rejected', (w: string) => s.rejected.push(w));
  const control = new Control({
    log: createLogger({ level: 'silent' }),
    buffer: s.buffer,
    probes: {
      invoke: (p, o) => (s.invoked.push(p), o?.signal?.aborted ? Promise.reject(new Error('aborted')) : s.probe(p)),
      setConcurrency: (n) => void s.concurrency.push(n),
    },
    sources: { apply: (l) => void s.sources.push(l) },
    session,
    pump: () => void s.pumps++,
    reschedule: (a, b) => void s.rescheduled.push([a, b]),
    writeStatus: () => void s.statusWrites++,
    events,
  });
  return { control, s: Object.assign(s, { events }) };
}

function conn(): ControlConn & { done: () => void } {
  let done!: () => void;
  return { helloDone: new Promise<void>((r) => (done = r)), probeAbort: new AbortController(), done: () => done() };
}

const tick = () => new Promise((r) => setImmediate(r));
const CTX: CallContext = { method: 'test', id: undefined, frameLength: 0 };
/** Calls a registered handler as the peer would. */
function call<P, R>(handler: ((params: P, ctx: CallContext) => R) | undefined, params: P): R {
  return handler!(params, CTX);
}

describe('control: config', () => {
  it("the hello's config is applied: sources, probe concurrency, intervals, status; emitted", () => {
    const { control, s } = controlFor();
    const config = { ...DEFAULT_CONFIG, heartbeat_interval_secs: 10, probe_concurrency: 4 };
    control.applyConfig(config, 'hello');
    expect(control.config).toBe(config);
    expect(s.sources).toEqual([[]]);
    expect(s.concurrency).toEqual([4]); // from the hello even if unchanged
    expect(s.rescheduled).toEqual([[DEFAULT_CONFIG, config]]);
    expect(s.pumps).toBe(1);
    expect(s.applied).toEqual([config]);
    expect(s.statusWrites).toBe(1);
    // an update with the same concurrency does not set it again
    control.applyConfig({ ...config, max_batch_entries: 5 }, 'update');
    expect(s.concurrency).toEqual([4]);
  });

  it('config.update waits for the hello outcome, is ignored for a connection no longer current, and applies at apply_after', async () => {
    const { control, s } = controlFor();
    const c = conn();
    s.current = c;
    const h = control.handlersFor(c);
    call(h['config.update'], { config: { ...DEFAULT_CONFIG, max_batch_entries: 9 } });
    await tick();
    expect(s.applied).toHaveLength(0); // hello not handled yet
    c.done();
    await tick();
    expect(control.config.max_batch_entries).toBe(9);
    // staged: applied when apply_after comes
    const later = new Date(Date.now() + 40).toISOString();
    const staged = new Promise((r) => s.events.once('config_applied', r));
    call(h['config.update'], { config: { ...DEFAULT_CONFIG, max_batch_entries: 3 }, apply_after: later });
    await tick();
    expect(control.config.max_batch_entries).toBe(9);
    await staged;
    expect(control.config.max_batch_entries).toBe(3);
    // not current any more: ignored
    s.current = null;
    call(h['config.update'], { config: { ...DEFAULT_CONFIG, max_batch_entries: 1 } });
    await tick();
    expect(control.config.max_batch_entries).toBe(3);
  });

  it('an apply_after beyond a Node.js timer (2^31 − 1 ms, ~24.8 days) is kept: not applied after 1 ms, nor at 24.8 days, but at apply_after', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-12-01T00:00:00Z') });
    try {
      const { control, s } = controlFor();
      const c = conn();
      s.current = c;
      c.done();
      const h = control.handlersFor(c);
      await vi.advanceTimersByTimeAsync(0);
      const day = 24 * 3600 * 1000;
      call(h['config.update'], { config: { ...DEFAULT_CONFIG, max_batch_entries: 7 }, apply_after: new Date(Date.now() + 30 * day).toISOString() });
      await vi.advanceTimersByTimeAsync(10);
      expect(s.applied).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(25 * day); // past 2^31 − 1 ms
      expect(s.applied).toHaveLength(0);
      expect(control.config.max_batch_entries).toBe(DEFAULT_CONFIG.max_batch_entries);
      await vi.advanceTimersByTimeAsync(5 * day - 100);
      expect(s.applied).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(200);
      expect(s.applied).toHaveLength(1);
      expect(control.config.max_batch_entries).toBe(7);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an invalid config.update is rejected (emitted) and changes nothing; a staged one is cancelled on stop', async () => {
    const { control, s } = controlFor();
    const c = conn();
    s.current = c;
    c.done();
    const h = control.handlersFor(c);
    call(h['config.update'], { config: { max_batch_entries: 'lots' } } as never);
    await tick();
    expect(s.rejected).toHaveLength(1);
    expect(control.config).toBe(DEFAULT_CONFIG);
    call(h['config.update'], { config: { ...DEFAULT_CONFIG, max_batch_entries: 2 }, apply_after: new Date(Date.now() + 20).toISOString() });
    await tick();
    control.stop();
    // a later update proves the cancelled one never fires in between
    const seen: unknown[] = [];
    s.events.on('config_applied', (cfg) => seen.push(cfg));
    await new Promise((r) => setTimeout(r, 40));
    expect(seen).toEqual([]);
    expect(control.config).toBe(DEFAULT_CONFIG);
  });

  it('a config.update the peer refused (invalid params) is a rejected config', () => {
    const { control, s } = controlFor();
    control.onPeerEvent({ type: 'invalid_params', method: 'config.update', issues: [{ path: '/config', message: 'bad' }] } as never);
    expect(s.rejected).toHaveLength(1);
  });
});

describe('control: agent.shutdown', () => {
  it('Revoked ends the session for good through the session', async () => {
    const { control, s } = controlFor();
    const c = conn();
    s.current = c;
    c.done();
    call(control.handlersFor(c)['agent.shutdown'], { reason: 'Revoked', drain_seconds: 0 });
    await tick();
    expect(s.revoked).toBe(1);
    expect(s.state).toBe('Active'); // no drain
  });

  it('ServerReload drains: the pump runs until everything ingested before it is acked, then the session ends', async () => {
    const { control, s } = controlFor({ nextSeq: 11, ackedSeq: 4 });
    const c = conn();
    s.current = c;
    c.done();
    call(control.handlersFor(c)['agent.shutdown'], { reason: 'ServerReload', drain_seconds: 30 });
    await tick();
    expect(s.state).toBe('Draining');
    expect(s.pumps).toBe(1);
    s.buffer.ackedSeq = 9;
    expect(control.afterAck()).toBe(false);
    s.buffer.ackedSeq = 10;
    expect(control.afterAck()).toBe(true);
    expect(s.drained).toBe(1);
    expect(control.afterAck()).toBe(false); // not draining any more
  });

  it('an empty buffer finishes the drain at once; drain_seconds bounds it otherwise', async () => {
    const empty = controlFor({ nextSeq: 5, ackedSeq: 4 });
    const c = conn();
    empty.s.current = c;
    c.done();
    call(empty.control.handlersFor(c)['agent.shutdown'], { reason: 'Decommission', drain_seconds: 30 });
    await tick();
    expect(empty.s.drained).toBe(1);

    const slow = controlFor({ nextSeq: 100, ackedSeq: 0 });
    const c2 = conn();
    slow.s.current = c2;
    c2.done();
    call(slow.control.handlersFor(c2)['agent.shutdown'], { reason: 'ServerReload', drain_seconds: 0.02 });
    await new Promise((r) => slow.s.events.once('test_drained', r)); // drain_seconds elapsed
    expect(slow.s.drained).toBe(1);
  });
});

describe('control: probe.request', () => {
  it('runs through the registry once the hello is handled, and passes its RpcErrors on', async () => {
    const { control, s } = controlFor();
    const c = conn();
    const h = control.handlersFor(c);
    const answer = call(h['probe.request'], { probe: 'uptime', args: {}, timeout_ms: 1000 } as ProbeRequestParams);
    await tick();
    expect(s.invoked).toHaveLength(0);
    c.done();
    await expect(answer).resolves.toMatchObject({ probe: 'uptime', exit_code: 0 });
    s.probe = async () => {
      throw new ProbeUnavailableError({ probe: 'nope' } as never);
    };
    await expect(call(h['probe.request'], { probe: 'nope', args: {}, timeout_ms: 1000 } as ProbeRequestParams)).rejects.toBeInstanceOf(ProbeUnavailableError);
  });
});
