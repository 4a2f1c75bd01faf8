// Issue 16: the peer validates what it sends (handler results too, and a probe output
// against its probe's schema), on by default except under NODE_ENV=production; RpcError's
// message carries a one-line summary of its data while the wire keeps the short message.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  BackpressureError,
  InvalidParamsError,
  RpcError,
  createAgentPeer,
  createServerPeer,
  errorFromWire,
  registerServerHandlers,
  type Frame,
  type PeerEvent,
  type Transport,
} from '@cortex/agent-protocol';
import { checkProbeOutput, summarizeData } from '@cortex/agent-protocol/runtime';

function scripted() {
  const sent: string[] = [];
  let onFrame: ((f: Frame) => void) | undefined;
  const transport: Transport = {
    send: (t) => void sent.push(t),
    close: () => undefined,
    onFrame: (l) => (onFrame = l),
    onClose: () => undefined,
  };
  return { transport, sent, receive: (o: unknown) => onFrame!({ kind: 'text', text: JSON.stringify(o) }), last: () => JSON.parse(sent.at(-1)!) as Record<string, unknown> };
}

const flush = () => new Promise((r) => setImmediate(r));

afterEach(() => vi.unstubAllEnvs());

describe('outgoing validation', () => {
  it('a handler result that fails its schema is answered with -32603 and reported, not sent', async () => {
    const s = scripted();
    const events: PeerEvent[] = [];
    const peer = createServerPeer(s.transport, { onEvent: (e) => events.push(e) });
    // logs.push result needs up_to_seq (integer >= 0): this handler returns a string
    registerServerHandlers(peer, { 'logs.push': () => ({ up_to_seq: 'seven' }) as never });
    s.receive({ jsonrpc: '2.0', id: 1, method: 'logs.push', params: { seq_start: 1, entries: [{ seq: 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'm', source: 'journald' }] } });
    await flush();
    expect(s.last()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'InternalError' } });
    const ev = events.find((e) => e.type === 'invalid_outgoing_result');
    expect(ev).toMatchObject({ type: 'invalid_outgoing_result', method: 'logs.push', id: 1 });
    expect(JSON.stringify(ev)).toContain('/up_to_seq');
  });

  it('the agent peer checks a probe output against that probe\'s output schema', async () => {
    const s = scripted();
    const events: PeerEvent[] = [];
    const peer = createAgentPeer(s.transport, { onEvent: (e) => events.push(e) });
    let output: unknown = { uptime_secs: 'long' };
    peer.onRequest('probe.request', () => ({ output, duration_ms: 1, exit_code: 0, stderr: null }));
    s.receive({ jsonrpc: '2.0', id: 7, method: 'probe.request', params: { probe: 'sys.uptime', args: {}, timeout_ms: 1000 } });
    await flush();
    expect(s.last()).toMatchObject({ id: 7, error: { code: -32603 } });
    const ev = events.find((e) => e.type === 'invalid_outgoing_result') as { issues: { path: string }[] } | undefined;
    expect(ev?.issues[0]?.path.startsWith('/output')).toBe(true);

    const valid = { uptime_secs: 12.5, boot_time: '2026-05-16T19:42:50.123Z' };
    expect(checkProbeOutput('probe.request', { probe: 'sys.uptime' }, { output: valid })).toBeUndefined();
    output = valid;
    s.receive({ jsonrpc: '2.0', id: 8, method: 'probe.request', params: { probe: 'sys.uptime', args: {}, timeout_ms: 1000 } });
    await flush();
    expect(s.last()).toMatchObject({ id: 8, result: { output: valid } });
  });

  it('is off by default under NODE_ENV=production, and validateOutgoing: true keeps it on', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    const off = scripted();
    const quiet = createServerPeer(off.transport);
    expect(quiet.validatesOutgoing).toBe(false);
    registerServerHandlers(quiet, { 'logs.push': () => ({ up_to_seq: 'seven' }) as never });
    off.receive({ jsonrpc: '2.0', id: 1, method: 'logs.push', params: { seq_start: 1, entries: [{ seq: 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'm', source: 'journald' }] } });
    await flush();
    expect(off.last()).toEqual({ jsonrpc: '2.0', id: 1, result: { up_to_seq: 'seven' } });
    expect(createServerPeer(scripted().transport, { validateOutgoing: true }).validatesOutgoing).toBe(true);
    vi.unstubAllEnvs();
    vi.stubEnv('NODE_ENV', 'development');
    expect(createServerPeer(scripted().transport).validatesOutgoing).toBe(true);
  });
});

describe('RpcError message', () => {
  it('says name, code and a one-line summary of data; the wire keeps the short message', () => {
    const e = new BackpressureError({ retry_after_ms: 500 });
    expect(e.message).toBe('Backpressure (-32020): retry_after_ms=500');
    expect(e.toJSON()).toEqual({ code: -32020, message: 'Backpressure', data: { retry_after_ms: 500 } });
    const ip = new InvalidParamsError({ method: 'logs.push', errors: [{ path: '/entries/0/seq', message: 'must be integer' }] } as never, 'InvalidParams');
    expect(ip.message).toBe('InvalidParams (-32602): method=logs.push, errors: /entries/0/seq must be integer');
    const fromWire = errorFromWire({ code: -32011, message: 'ProbeExecutionFailed', data: { stderr: 'line one\nline two', exit_code: 3 } });
    expect(fromWire.message).toBe('ProbeExecutionFailed (-32011): stderr="line one\\nline two", exit_code=3');
    expect(fromWire.message).not.toContain('\n');
    expect(new RpcError(-32603, 'InternalError').message).toBe('InternalError (-32603)');
    expect(summarizeData({ text: 'x'.repeat(500) }).length).toBe(200);
  });
});
