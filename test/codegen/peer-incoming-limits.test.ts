// The generated peer's rules on what it receives (DECISIONS F14, C16), whatever the transport:
// a text frame over the frame limit is not parsed, the connection is closed 1009 (Message Too
// Big, PROTOCOL.md close codes); a request whose integer id is beyond ±(2^53 − 1) is answered
// -32600 with id null (JSON.parse reads 9007199254740993 as 9007199254740992: echoing it
// would name an id the sender never used), also when the envelope validator passed it; and
// describeIssues names each distinct issue once.
import { describe, expect, it } from 'vitest';
import {
  LIMITS,
  createAgentPeer,
  createServerPeer,
  describeIssues,
  memoryTransportPair,
  registerAgentHandlers,
  toIssues,
  validateJsonRpcMessage,
  type Frame,
  type PeerEvent,
  type Transport,
} from '@cortex/agent-protocol';
import { Peer, WIRE_METHODS, type Validator } from '@cortex/agent-protocol/runtime';

/** A transport whose frames the test delivers itself (as text or as UTF-8 bytes) and whose sends and closes it reads. */
function scriptedTransport() {
  const sent: string[] = [];
  const closes: { code: number | undefined; reason: string | undefined }[] = [];
  let frameListener: ((f: Frame) => void) | undefined;
  const transport: Transport = {
    send: (text) => void sent.push(text),
    close: (code, reason) => void closes.push({ code, reason }),
    onFrame: (l) => (frameListener = l),
    onClose: () => undefined,
  };
  return {
    transport,
    sent,
    closes,
    receive: (frame: Frame) => frameListener!(frame),
    answers: () => sent.map((t) => JSON.parse(t) as { id: unknown; error?: { code: number; data?: { reason?: string } } }),
  };
}

const probeRequest = (padding: string, id: number | string = 1) => JSON.stringify({ jsonrpc: '2.0', id, method: 'probe.request', params: { probe: 'sys.uptime', args: {}, timeout_ms: 1000, pad: padding } });
/** A probe.request frame of exactly `bytes` UTF-8 bytes (its params fail the schema: the peer answers -32602 when it parses it). */
function frameOf(bytes: number, filler = 'x'): string {
  const bare = probeRequest('');
  const fill = Buffer.byteLength(filler);
  const n = (bytes - Buffer.byteLength(bare)) / fill;
  if (!Number.isInteger(n) || n < 0) throw new Error(`cannot make a frame of ${bytes} bytes from ${JSON.stringify(filler)}`);
  const text = probeRequest(filler.repeat(n));
  expect(Buffer.byteLength(text)).toBe(bytes);
  return text;
}

describe('peer: an incoming frame over the frame limit closes the connection with 1009', () => {
  it.each([
    ['a text frame of ASCII', (t: string): Frame => ({ kind: 'text', text: t }), 'x'],
    ['a text frame of 3-byte characters (under the limit in UTF-16 code units)', (t: string): Frame => ({ kind: 'text', text: t }), '€'],
    ['a utf8 frame (the bytes a transport hands over undecoded)', (t: string): Frame => ({ kind: 'utf8', bytes: new TextEncoder().encode(t) }), 'x'],
  ] as const)('%s: one byte over is refused (1009, frame_too_large event, nothing parsed or answered); exactly the limit is read', (_name, asFrame, filler) => {
    const limit = LIMITS.max_frame_bytes;
    const over = scriptedTransport();
    const events: PeerEvent[] = [];
    let handled = 0;
    const peer = createAgentPeer(over.transport, { onEvent: (e) => events.push(e) });
    registerAgentHandlers(peer, { 'probe.request': () => (handled++, { output: {}, exit_code: 0, stderr: null, duration_ms: 0 }) });
    // 3-byte characters: a frame of limit + 3 bytes, the nearest one over the limit they make
    const overBytes = filler === 'x' ? limit + 1 : limit + 3 - ((limit - Buffer.byteLength(probeRequest(''))) % 3);
    over.receive(asFrame(frameOf(overBytes, filler)));
    expect(over.closes).toEqual([{ code: 1009, reason: `frame of ${overBytes} bytes exceeds the ${limit}-byte limit` }]);
    expect(events).toEqual([{ type: 'frame_too_large', byteLength: overBytes, limit }]);
    expect(over.sent).toEqual([]);
    expect(handled).toBe(0);

    const at = scriptedTransport();
    createAgentPeer(at.transport);
    const atBytes = filler === 'x' ? limit : overBytes - 3;
    at.receive(asFrame(frameOf(atBytes, filler)));
    expect(at.closes).toEqual([]);
    // parsed and checked: the padding is not a probe.request param
    expect(at.answers().map((a) => a.error?.code)).toEqual([-32602]);
  });

  it('the limit is maxFrameBytes when given, for both directions (a server peer too)', () => {
    const s = scriptedTransport();
    const peer = createServerPeer(s.transport, { maxFrameBytes: 200 });
    s.receive({ kind: 'text', text: frameOf(201) });
    expect(s.closes.map((c) => c.code)).toEqual([1009]);
    expect(() => peer.notify('config.update', { config: { heartbeat_interval_secs: 30, max_batch_entries: 100, flush_interval_ms: 200, probe_concurrency: 1, log_sources: [{ kind: 'file', path: `/${'p'.repeat(300)}` }] } })).toThrow(/exceeds the 200-byte frame limit/);
  });

  it('over an in-memory pair (no WebSocket library in front): the sender of an oversize frame sees close 1009', async () => {
    const [a, b] = memoryTransportPair();
    createAgentPeer(a);
    const closed = new Promise<number>((resolve) => b.onClose((code) => resolve(code)));
    b.onFrame(() => undefined);
    b.send(probeRequest('x'.repeat(LIMITS.max_frame_bytes)));
    expect(await closed).toBe(1009);
  });
});

describe('peer: request ids beyond ±(2^53 − 1)', () => {
  it('the contract envelope refuses them; the safe bounds pass', () => {
    const msg = (id: number) => ({ jsonrpc: '2.0', id, method: 'agent.heartbeat', params: {} });
    expect(validateJsonRpcMessage(msg(Number.MAX_SAFE_INTEGER))).toBe(true);
    expect(validateJsonRpcMessage(msg(-Number.MAX_SAFE_INTEGER))).toBe(true);
    expect(validateJsonRpcMessage(msg(2 ** 53))).toBe(false);
    expect(validateJsonRpcMessage(msg(-(2 ** 53)))).toBe(false);
    expect(validateJsonRpcMessage({ jsonrpc: '2.0', id: 2 ** 60, result: {} })).toBe(false);
  });

  it.each([
    ['9007199254740993 (read as 9007199254740992)', '9007199254740993'],
    ['2^60 (exact, but beyond the interoperable range)', '1152921504606846976'],
    ['-9007199254740993', '-9007199254740993'],
  ])('a request with id %s is answered -32600 InvalidRequest with id null, and its handler does not run', (_name, idText) => {
    const s = scriptedTransport();
    let handled = 0;
    const peer = createAgentPeer(s.transport);
    registerAgentHandlers(peer, { 'probe.request': () => (handled++, { output: {}, exit_code: 0, stderr: null, duration_ms: 0 }) });
    s.receive({ kind: 'text', text: `{"jsonrpc":"2.0","id":${idText},"method":"probe.request","params":{"probe":"sys.uptime","args":{},"timeout_ms":1000}}` });
    const [answer] = s.answers();
    expect(s.answers()).toHaveLength(1);
    expect(answer!.id).toBeNull();
    expect(answer!.error?.code).toBe(-32600);
    expect(answer!.error?.data?.reason).toMatch(/id must be a string or an integer within ±9007199254740991/);
    expect(handled).toBe(0);
  });

  it('also when the envelope validator lets it through (a fast path that checks Number.isInteger only)', () => {
    const s = scriptedTransport();
    const passAll = ((v: unknown): v is unknown => (void v, true)) as Validator;
    let handled = 0;
    const peer = new Peer(s.transport, { methods: WIRE_METHODS, side: 'server', validateEnvelope: passAll });
    peer.onNotification('agent.heartbeat' as never, (() => void handled++) as never);
    peer.onRequest('logs.push' as never, (() => (handled++, { up_to_seq: 1, received_at: '2026-05-16T19:42:50.123Z' })) as never);
    s.receive({ kind: 'text', text: '{"jsonrpc":"2.0","id":9007199254740993,"method":"logs.push","params":{"seq_start":1,"entries":[{"seq":1,"ts":"2026-05-16T19:42:50.123Z","severity":"info","message":"m","source":"journald"}]}}' });
    expect(s.answers().map((a) => [a.id, a.error?.code])).toEqual([[null, -32600]]);
    expect(handled).toBe(0);
    // the largest safe id is answered with itself
    s.receive({ kind: 'text', text: '{"jsonrpc":"2.0","id":9007199254740991,"method":"logs.push","params":{"seq_start":1,"entries":[{"seq":1,"ts":"2026-05-16T19:42:50.123Z","severity":"info","message":"m","source":"journald"}]}}' });
    expect(s.answers()[1]!.id).toBe(Number.MAX_SAFE_INTEGER);
    expect(handled).toBe(1);
  });

  it('a response with such an id is not answered (no loop between peers) and settles nothing', () => {
    const s = scriptedTransport();
    const events: PeerEvent[] = [];
    createAgentPeer(s.transport, { onEvent: (e) => events.push(e) });
    s.receive({ kind: 'text', text: '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}' });
    expect(s.sent).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(['invalid_request']);
  });
});

describe('describeIssues', () => {
  it('names each distinct issue once (an envelope oneOf reports the same problem per branch) and counts only distinct ones left out', () => {
    expect(validateJsonRpcMessage({ id: 1, method: 'logs.push', params: {} })).toBe(false);
    const envelope = describeIssues(toIssues(validateJsonRpcMessage.errors));
    expect(envelope).not.toMatch(/(\/jsonrpc is required).*\1/);
    expect(envelope.match(/\/jsonrpc is required/g)).toHaveLength(1);
    expect(validateJsonRpcMessage([{ jsonrpc: '2.0', method: 'x' }])).toBe(false);
    const array = describeIssues(toIssues(validateJsonRpcMessage.errors));
    expect(array.match(/\(root\) must be object/g)).toHaveLength(1);
    expect(array).not.toMatch(/more\)/);
    const issues = [
      { path: '/a', message: 'is required' },
      { path: '/a', message: 'is required' },
      { path: '/b', message: 'is required' },
      { path: '/c', message: 'must be integer' },
      { path: '/a', message: 'is required' },
      { path: '/d', message: 'must be string' },
      { path: '/d', message: 'must be string' },
    ];
    expect(describeIssues(issues)).toBe('/a is required; /b is required; /c must be integer (+1 more)');
    expect(describeIssues(issues, 5)).toBe('/a is required; /b is required; /c must be integer; /d must be string');
  });
});
