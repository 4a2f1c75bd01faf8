import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  InternalError,
  InvalidParamsError,
  PROBES,
  ProbeExecutionFailedError,
  ProbeTimeoutError,
  ProbeUnavailableError,
  validateFsDiskUsageOutput,
  validateProbeRequestResult,
} from '@cortex/agent-protocol';
import { createProbeRegistry, FifoLimiter } from '../../../agent/probes/index.js';
import { MAX_PROBES_WAITING } from '../../../agent/probes/registry.js';
import { createCapturingLogger } from '../../../agent/log.js';
import { probeRegistryFor } from '../../../agent/options.js';
import { deferred, fakeRunner, processGone, processGroup, rpcError, testProbe, waitFor } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(os.tmpdir(), 'cortex-probes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('probe registry: names and dispatch', () => {
  it('registers exactly the contract probes, in contract order (capabilities.supported_probes)', () => {
    const r = createProbeRegistry();
    expect(r.names()).toEqual(PROBES.map((p) => p.name));
    expect(r.names()).toEqual((JSON.parse(readFileSync(join(import.meta.dirname, '../../../contract/probes/probes.json'), 'utf8')) as { probes: { name: string }[] }).probes.map((p) => p.name));
    expect(r.has('fs.disk_usage')).toBe(true);
    expect(r.has('nope')).toBe(false);
    // names() is a copy
    r.names().push('x');
    expect(r.names()).not.toContain('x');
  });

  it('can be limited to some built-ins and extended with extra probes', () => {
    const r = createProbeRegistry({ only: ['sys.uptime'], extraProbes: [testProbe('test.echo', async (a) => ({ output: a }))] });
    expect(r.names()).toEqual(['sys.uptime', 'test.echo']);
    expect(() => createProbeRegistry({ only: ['no.such'] })).toThrow(/unknown built-in/);
    expect(() => createProbeRegistry({ extraProbes: [testProbe('fs.disk_usage', async () => ({ output: 1 }))] })).toThrow(/already registered/);
  });

  it('answers -32010 ProbeUnavailable for a probe not in the registry', async () => {
    const r = createProbeRegistry({ only: ['sys.uptime'] });
    for (const probe of ['no.such_probe', 'fs.disk_usage', '__proto__', 'constructor', 'toString']) {
      const err = await rpcError(r.invoke({ probe, args: {}, timeout_ms: 1000 }));
      expect(err).toBeInstanceOf(ProbeUnavailableError);
      expect(err.code).toBe(ErrorCode.ProbeUnavailable);
      expect(err.code).toBe(-32010);
      expect(err.toJSON()).toEqual({ code: -32010, message: 'ProbeUnavailable', data: { probe } });
    }
  });

  it('answers -32602 for params that fail probe.request params (timeout_ms out of range, missing args)', async () => {
    const r = createProbeRegistry();
    const e1 = await rpcError(r.invoke({ probe: 'sys.uptime', args: {}, timeout_ms: 0 }));
    expect(e1).toBeInstanceOf(InvalidParamsError);
    expect(e1.data.errors[0].path).toBe('/timeout_ms');
    const e2 = await rpcError(r.invoke({ probe: 'sys.uptime', timeout_ms: 1000 } as never));
    expect(e2.code).toBe(-32602);
    expect(e2.data.errors[0].path).toBe('/args');
  });

  it('returns a ProbeOutput envelope valid against probe.request result, with duration_ms measured', async () => {
    const r = createProbeRegistry({
      extraProbes: [testProbe('test.slow', async (_a, ctx) => {
        await ctx.sleep(120);
        return { output: { ok: true } };
      })],
    });
    const out = await r.invoke({ probe: 'test.slow', args: {}, timeout_ms: 5000 });
    expect(validateProbeRequestResult(out)).toBe(true);
    expect(out).toMatchObject({ output: { ok: true }, exit_code: null, stderr: null });
    expect(out.duration_ms).toBeGreaterThanOrEqual(100);
    expect(out.duration_ms).toBeLessThan(3000);
  });
});

describe('probe registry: failures', () => {
  it('validates output with the generated validator; output that fails it is a probe bug: -32603 naming the probe, logged at error level', async () => {
    const logged: { fields: Record<string, unknown>; message: string }[] = [];
    const r = createProbeRegistry({
      extraProbes: [testProbe('test.bad_output', async () => ({ output: { path: '/', total_bytes: -1 } }), { validateOutput: validateFsDiskUsageOutput })],
      logger: { error: (fields, message) => void logged.push({ fields, message }) },
    });
    const err = await rpcError(r.invoke({ probe: 'test.bad_output', args: {}, timeout_ms: 1000 }));
    expect(err).toBeInstanceOf(InternalError);
    expect(err.code).toBe(ErrorCode.InternalError);
    expect(err.code).toBe(-32603);
    expect(err.message).toMatch(/invalid probe output/);
    expect(err.data).toMatchObject({ probe: 'test.bad_output', reason: 'invalid_output' });
    expect(err.data.message).toMatch(/^probe test\.bad_output produced output that does not match its schema/);
    expect(err.data.message).toMatch(/total_bytes|used_bytes/);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.fields).toMatchObject({ probe: 'test.bad_output', reason: 'invalid_output' });
    expect(logged[0]!.message).toMatch(/-32603/);
  });

  it('turns an exception thrown by a probe\'s handler (not an RpcError: a bug) into -32603 naming the probe, message cut to 4 KiB, logged at error level', async () => {
    const logged: { fields: Record<string, unknown>; message: string }[] = [];
    const r = createProbeRegistry({
      extraProbes: [
        testProbe('test.throws', async () => {
          throw new Error('boom: ' + 'x'.repeat(100_000));
        }),
        testProbe('test.type_error', async (a: { n: { m: number } }) => ({ output: a.n.m })),
        testProbe('test.throws_string', async () => {
          throw 'a string';
        }),
      ],
      logger: { error: (fields, message) => void logged.push({ fields, message }) },
    });
    const err = await rpcError(r.invoke({ probe: 'test.throws', args: {}, timeout_ms: 1000 }));
    expect(err).toBeInstanceOf(InternalError);
    expect(err.code).toBe(-32603);
    expect(err.data).toMatchObject({ probe: 'test.throws', reason: 'exception' });
    expect(err.data.message).toMatch(/^probe test\.throws threw Error: boom: x+/);
    expect(err.data.message.length).toBeLessThanOrEqual(4096);
    expect(err.data.message).toMatch(/\[truncated/);
    expect(JSON.stringify(err.toJSON()).length).toBeLessThan(4096 + 200);

    const typeError = await rpcError(r.invoke({ probe: 'test.type_error', args: {}, timeout_ms: 1000 }));
    expect(typeError.toJSON()).toMatchObject({ code: -32603, data: { probe: 'test.type_error', reason: 'exception', message: expect.stringMatching(/^probe test\.type_error threw TypeError: /) } });
    const thrownString = await rpcError(r.invoke({ probe: 'test.throws_string', args: {}, timeout_ms: 1000 }));
    expect(thrownString.data).toMatchObject({ probe: 'test.throws_string', reason: 'exception', message: 'probe test.throws_string threw a non-Error value: a string' });

    expect(logged.map((l) => [l.fields['probe'], l.fields['reason']])).toEqual([['test.throws', 'exception'], ['test.type_error', 'exception'], ['test.throws_string', 'exception']]);
    expect(logged[1]!.fields['stack']).toMatch(/TypeError/);
  });

  it('the agent logs a probe bug at error level through its own logger', async () => {
    const { logger, lines } = createCapturingLogger('info');
    const r = probeRegistryFor({ probes: { extraProbes: [testProbe('test.throws', async () => {
      throw new RangeError('bad index');
    })] } }, 1, logger);
    const err = await rpcError(r.invoke({ probe: 'test.throws', args: {}, timeout_ms: 1000 }));
    expect(err.code).toBe(-32603);
    expect(lines).toEqual([expect.objectContaining({ level: 'error', probe: 'test.throws', reason: 'exception', err: 'probe test.throws threw RangeError: bad index' })]);
  });

  it('keeps -32011 for failures a probe reports (ProbeExecutionFailedError) and passes its other RpcErrors through', async () => {
    const logged: unknown[] = [];
    const r = createProbeRegistry({
      extraProbes: [
        testProbe('test.reports_failure', async () => {
          throw new ProbeExecutionFailedError({ stderr: 'the thing is down', exit_code: 3 });
        }),
        testProbe('test.invalid', async () => {
          throw new InvalidParamsError({ method: 'probe.request', errors: [{ path: '/args/x', message: 'no', keyword: 'custom' }] });
        }),
      ],
      logger: { error: (fields) => void logged.push(fields) },
    });
    const failed = await rpcError(r.invoke({ probe: 'test.reports_failure', args: {}, timeout_ms: 1000 }));
    expect(failed.toJSON()).toEqual({ code: -32011, message: 'ProbeExecutionFailed', data: { stderr: 'the thing is down', exit_code: 3, probe: 'test.reports_failure' } });
    const invalid = await rpcError(r.invoke({ probe: 'test.invalid', args: {}, timeout_ms: 1000 }));
    expect(invalid).toBeInstanceOf(InvalidParamsError);
    expect(invalid.data.errors[0].path).toBe('/args/x');
    expect(logged).toEqual([]);
  });

  it('a tool that cannot be spawned (not ENOENT/EACCES) is -32011 naming the tool, not -32603', async () => {
    const runner = async () => {
      throw Object.assign(new Error('spawn E2BIG'), { code: 'E2BIG' });
    };
    const r = createProbeRegistry({ commandRunner: runner });
    const err = await rpcError(r.invoke({ probe: 'exec.systemctl_status', args: { unit: 'x.service' }, timeout_ms: 1000 }));
    expect(err).toBeInstanceOf(ProbeExecutionFailedError);
    expect(err.data).toEqual({ stderr: 'systemctl could not be run: spawn E2BIG', exit_code: null, probe: 'exec.systemctl_status' });
  });

  it('systemctl output without ActiveState/SubState is -32011 (the tool\'s answer), not -32603', async () => {
    const { runner } = fakeRunner(() => ({ exitCode: 0, stdout: 'Foo=bar\n' }));
    const r = createProbeRegistry({ commandRunner: runner });
    const err = await rpcError(r.invoke({ probe: 'exec.systemctl_status', args: { unit: 'x.service' }, timeout_ms: 1000 }));
    expect(err).toBeInstanceOf(ProbeExecutionFailedError);
    expect(err.data).toMatchObject({ exit_code: 0, probe: 'exec.systemctl_status', stderr: expect.stringMatching(/unexpected systemctl show output/) });
  });

  it('passes a failing command\'s stderr (cut to 4 KiB) and exit_code through as -32011', async () => {
    const { runner } = fakeRunner(() => ({ exitCode: 4, stderr: 'Unit x.service could not be found.\n' + 'e'.repeat(20_000) }));
    const r = createProbeRegistry({ commandRunner: runner });
    const err = await rpcError(r.invoke({ probe: 'exec.systemctl_status', args: { unit: 'x.service' }, timeout_ms: 1000 }));
    expect(err).toBeInstanceOf(ProbeExecutionFailedError);
    expect(err.data.exit_code).toBe(4);
    expect(err.data.probe).toBe('exec.systemctl_status');
    expect(err.data.stderr.startsWith('Unit x.service could not be found.')).toBe(true);
    expect(err.data.stderr.length).toBeLessThanOrEqual(4096);
  });
});

describe('probe registry: timeout', () => {
  it('answers -32012 at timeout_ms and SIGKILLs the child\'s whole process group (child and grandchild)', async () => {
    // The child (sh) starts a grandchild (sleep 30) in the background and waits; both are in the
    // child's process group, which the runner created with detached:true.
    const script = 'sleep 30 & echo $! > "$1/grandchild.pid"; echo $$ > "$1/child.pid"; wait';
    const r = createProbeRegistry({
      extraProbes: [testProbe('test.sleepy', async (_a, ctx) => {
        await ctx.runTool('sh', ['-c', script, 'sh', dir]);
        return { output: 'finished' };
      })],
    });
    const started = Date.now();
    const pending = r.invoke({ probe: 'test.sleepy', args: {}, timeout_ms: 1500 });
    pending.catch(() => undefined);
    const childFile = join(dir, 'child.pid');
    const grandFile = join(dir, 'grandchild.pid');
    await waitFor(() => existsSync(childFile) && existsSync(grandFile) && readFileSync(grandFile, 'utf8').trim() !== '' && readFileSync(childFile, 'utf8').trim() !== '', 5000, 'pid files');
    const child = Number(readFileSync(childFile, 'utf8'));
    const grandchild = Number(readFileSync(grandFile, 'utf8'));
    expect(processGone(child)).toBe(false);
    expect(processGone(grandchild)).toBe(false);
    expect(processGroup(child)).toBe(child); // its own group leader
    expect(processGroup(grandchild)).toBe(child); // in the child's group
    expect(processGroup(child)).not.toBe(processGroup(process.pid));

    const err = await rpcError(pending);
    const elapsed = Date.now() - started;
    expect(err).toBeInstanceOf(ProbeTimeoutError);
    expect(err.toJSON()).toEqual({ code: -32012, message: 'ProbeTimeout', data: { probe: 'test.sleepy', timeout_ms: 1500 } });
    expect(elapsed).toBeGreaterThanOrEqual(1400);
    expect(elapsed).toBeLessThan(5000);
    await waitFor(() => processGone(child) && processGone(grandchild), 3000, 'child and grandchild to die');
    await waitFor(() => r.stats().running === 0, 3000, 'slot release');
  });

  it('counts time spent waiting for a slot: a request that times out while queued never runs', async () => {
    const gate = deferred();
    const ran: string[] = [];
    const r = createProbeRegistry({
      concurrency: 1,
      extraProbes: [testProbe('test.gate', async (a: { id: string }) => {
        ran.push(a.id);
        await gate.promise;
        return { output: a.id };
      })],
    });
    const first = r.invoke({ probe: 'test.gate', args: { id: 'a' }, timeout_ms: 10_000 });
    const second = r.invoke({ probe: 'test.gate', args: { id: 'b' }, timeout_ms: 150 });
    const err = await rpcError(second);
    expect(err.code).toBe(-32012);
    expect(r.stats()).toEqual({ concurrency: 1, running: 1, waiting: 0 });
    gate.resolve();
    await expect(first).resolves.toMatchObject({ output: 'a' });
    expect(ran).toEqual(['a']);
  });

  it('kills the child and rejects with the caller\'s reason when the caller aborts (session closed)', async () => {
    const r = createProbeRegistry({
      extraProbes: [testProbe('test.sleepy', async (_a, ctx) => {
        await ctx.runTool('sh', ['-c', 'echo $$ > "$1/child.pid"; exec sleep 30', 'sh', dir]);
        return { output: 1 };
      })],
    });
    const ac = new AbortController();
    const pending = r.invoke({ probe: 'test.sleepy', args: {}, timeout_ms: 60_000 }, { signal: ac.signal });
    pending.catch(() => undefined);
    await waitFor(() => existsSync(join(dir, 'child.pid')) && readFileSync(join(dir, 'child.pid'), 'utf8').trim() !== '', 5000, 'pid file');
    const child = Number(readFileSync(join(dir, 'child.pid'), 'utf8'));
    const reason = new Error('session closed');
    ac.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await waitFor(() => processGone(child), 3000, 'child to die');
  });
});

describe('probe registry: probe_concurrency', () => {
  function gated(concurrency: number) {
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    const started: string[] = [];
    const r = createProbeRegistry({
      concurrency,
      extraProbes: [testProbe('test.gate', async (a: { id: string }) => {
        started.push(a.id);
        const g = deferred();
        gates.set(a.id, g);
        await g.promise;
        return { output: a.id };
      })],
    });
    const call = (id: string) => r.invoke({ probe: 'test.gate', args: { id }, timeout_ms: 30_000 });
    const open = async (id: string) => {
      await waitFor(() => gates.has(id), 2000, `probe ${id} to start`);
      gates.get(id)!.resolve();
    };
    return { r, started, call, open };
  }
  const tick = () => new Promise((res) => setTimeout(res, 30));

  it('runs at most N probes; the N+1th waits until one finishes, and waiters start in FIFO order', async () => {
    const { r, started, call, open } = gated(2);
    const ps = ['a', 'b', 'c', 'd', 'e'].map(call);
    await tick();
    expect(started).toEqual(['a', 'b']);
    expect(r.stats()).toEqual({ concurrency: 2, running: 2, waiting: 3 });
    await open('b');
    await expect(ps[1]).resolves.toMatchObject({ output: 'b' });
    await waitFor(() => started.length === 3);
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    await open('a');
    await waitFor(() => started.length === 4);
    await open('c');
    await waitFor(() => started.length === 5);
    expect(started).toEqual(['a', 'b', 'c', 'd', 'e']);
    await open('d');
    await open('e');
    const outs = await Promise.all(ps);
    expect(outs.map((o) => o.output)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(r.stats()).toEqual({ concurrency: 2, running: 0, waiting: 0 });
  });

  it('at most MAX_PROBES_WAITING wait for a slot: one more is refused at once (-32011, not run) and the others run as before (H57)', async () => {
    const { r, started, call, open } = gated(1);
    const ps = Array.from({ length: 1 + MAX_PROBES_WAITING }, (_, i) => call(`p${i}`));
    await tick();
    expect(r.stats()).toEqual({ concurrency: 1, running: 1, waiting: MAX_PROBES_WAITING });
    const refused = call('one-more');
    await expect(refused).rejects.toBeInstanceOf(ProbeExecutionFailedError);
    await expect(refused).rejects.toMatchObject({ code: ErrorCode.ProbeExecutionFailed, data: { probe: 'test.gate', exit_code: null } });
    await expect(refused).rejects.toMatchObject({ data: { stderr: expect.stringContaining(`not run: ${MAX_PROBES_WAITING} probes already wait`) } });
    expect(started).not.toContain('one-more');
    for (let i = 0; i <= MAX_PROBES_WAITING; i++) await open(`p${i}`);
    expect((await Promise.all(ps)).length).toBe(1 + MAX_PROBES_WAITING);
  });

  it('applies setConcurrency live: raising starts waiters at once, lowering holds new ones back', async () => {
    const { r, started, call, open } = gated(1);
    const ps = ['a', 'b', 'c', 'd'].map(call);
    await tick();
    expect(started).toEqual(['a']);
    r.setConcurrency(3);
    await waitFor(() => started.length === 3);
    expect(started).toEqual(['a', 'b', 'c']);
    r.setConcurrency(1);
    await open('a');
    await open('b');
    await tick();
    expect(started).toEqual(['a', 'b', 'c']); // c still runs, so d waits
    await open('c');
    await waitFor(() => started.length === 4);
    await open('d');
    await Promise.all(ps);
    expect(() => r.setConcurrency(0)).toThrow(RangeError);
    expect(() => r.setConcurrency(1.5)).toThrow(RangeError);
  });

  it('a failing, buggy or timed-out probe frees its slot', async () => {
    const r = createProbeRegistry({
      concurrency: 1,
      killGraceMs: 200,
      extraProbes: [
        testProbe('test.fail', async () => {
          throw new ProbeExecutionFailedError({ stderr: 'nope', exit_code: 1 });
        }),
        testProbe('test.bug', async () => {
          throw new Error('a bug');
        }),
        testProbe('test.stuck', () => new Promise(() => undefined)), // ignores its signal entirely
        testProbe('test.ok', async () => ({ output: 'ok' })),
      ],
    });
    await expect(r.invoke({ probe: 'test.fail', args: {}, timeout_ms: 1000 })).rejects.toMatchObject({ code: -32011 });
    await expect(r.invoke({ probe: 'test.bug', args: {}, timeout_ms: 1000 })).rejects.toMatchObject({ code: -32603 });
    await expect(r.invoke({ probe: 'test.stuck', args: {}, timeout_ms: 100 })).rejects.toMatchObject({ code: -32012 });
    // A probe that ignores its signal holds the slot for at most killGraceMs after the timeout.
    await expect(r.invoke({ probe: 'test.ok', args: {}, timeout_ms: 2000 })).resolves.toMatchObject({ output: 'ok' });
  });

  it('FifoLimiter: a waiter that aborts leaves the queue', async () => {
    const l = new FifoLimiter(1);
    const rel = await l.acquire();
    const ac = new AbortController();
    const w = l.acquire(ac.signal);
    const w2 = l.acquire();
    expect(l.waiting).toBe(2);
    ac.abort(new Error('gone'));
    await expect(w).rejects.toThrow('gone');
    expect(l.waiting).toBe(1);
    rel();
    rel(); // idempotent
    const rel2 = await w2;
    expect(l.running).toBe(1);
    rel2();
    expect(l.running).toBe(0);
  });
});

describe('built-in probes load at their first run (idle RSS, DECISIONS P17)', () => {
  it('the registry imports no probe module up front, each one at its first run; every built-in still runs', async () => {
    const src = readFileSync(new URL('../../../agent/probes/registry.ts', import.meta.url), 'utf8');
    expect(src).not.toMatch(/^import [^;]*from '\.\/[a-z-]+\.probe\.js';/m);
    expect(src.match(/import\('\.\/[a-z-]+\.probe\.js'\)/g)).toHaveLength(8);
    const r = createProbeRegistry({ allowedTailPaths: [] });
    const out = await r.invoke({ probe: 'sys.uptime', args: {}, timeout_ms: 5000 });
    expect(out.output).toHaveProperty('uptime_secs');
  });
});
