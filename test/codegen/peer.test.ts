import { describe, expect, it } from 'vitest';
import {
  AgentClient,
  BackpressureError,
  PeerError,
  RpcError,
  ServerClient,
  createAgentPeer,
  createServerPeer,
  memoryTransportPair,
  registerServerHandlers,
  type Frame,
  type PeerEvent,
  type Transport,
  type LogsPushParams,
} from '@cortex/agent-protocol';

/** A transport whose frames the test writes and reads directly. */
function scriptedTransport() {
  const sent: string[] = [];
  let frameListener: ((f: Frame) => void) | undefined;
  let closeListener: ((code: number, reason: string) => void) | undefined;
  const closes: { code?: number; reason?: string }[] = [];
  const transport: Transport = {
    send: (text) => void sent.push(text),
    close: (code, reason) => {
      closes.push({ code, reason });
      closeListener?.(code ?? 1005, reason ?? '');
    },
    onFrame: (l) => (frameListener = l),
    onClose: (l) => (closeListener = l),
  };
  return {
    transport,
    sent,
    closes,
    receive: (text: string) => frameListener!({ kind: 'text', text }),
    receiveBinary: (n: number) => frameListener!({ kind: 'binary', byteLength: n }),
    remoteClose: (code: number, reason = '') => closeListener?.(code, reason),
    lastJson: () => JSON.parse(sent[sent.length - 1]!) as Record<string, unknown>,
  };
}

const push = (seq: number): LogsPushParams => ({
  seq_start: seq,
  entries: [{ seq, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: `m${seq}`, source: 'journald' }],
});

describe('peer runtime', () => {
  it('correlates responses by id, also when they arrive out of order', async () => {
    const s = scriptedTransport();
    const agent = new AgentClient(createAgentPeer(s.transport));
    const a = agent.logsPush(push(1));
    const b = agent.logsPush(push(2));
    const [first, second] = s.sent.map((t) => JSON.parse(t) as { id: number });
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: second!.id, result: { up_to_seq: 2 } }));
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: first!.id, result: { up_to_seq: 1 } }));
    await expect(a).resolves.toEqual({ up_to_seq: 1 });
    await expect(b).resolves.toEqual({ up_to_seq: 2 });
  });

  it('answers malformed JSON with -32700 and id null', () => {
    const s = scriptedTransport();
    createServerPeer(s.transport);
    s.receive('{"jsonrpc": "2.0", "method": ');
    expect(s.lastJson()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'ParseError' } });
  });

  it('rejects a top-level array (JSON-RPC batch) with -32600', () => {
    const s = scriptedTransport();
    createServerPeer(s.transport);
    s.receive(JSON.stringify([{ jsonrpc: '2.0', method: 'agent.heartbeat', params: {} }]));
    expect(s.lastJson()).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it('rejects a wrong envelope with -32600 and keeps the id it could read', () => {
    const s = scriptedTransport();
    createServerPeer(s.transport);
    s.receive(JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'logs.push', params: {} }));
    expect(s.lastJson()).toMatchObject({ id: 7, error: { code: -32600, data: { reason: 'jsonrpc must be "2.0"' } } });
  });

  it('answers an unknown method with -32601 and stays silent for an unknown notification', () => {
    const events: PeerEvent[] = [];
    const s = scriptedTransport();
    createServerPeer(s.transport, { onEvent: (e) => events.push(e) });
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'logs.delete', params: {} }));
    expect(s.lastJson()).toMatchObject({ id: 3, error: { code: -32601, data: { method: 'logs.delete' } } });
    s.receive(JSON.stringify({ jsonrpc: '2.0', method: 'logs.delete', params: {} }));
    expect(s.sent).toHaveLength(1);
    expect(events.map((e) => e.type)).toEqual(['unknown_method', 'unknown_method']);
  });

  it('answers a method of the other direction with -32601 (a server does not take probe.request)', () => {
    const s = scriptedTransport();
    createServerPeer(s.transport);
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'probe.request', params: { probe: 'x', args: {}, timeout_ms: 5 } }));
    expect(s.lastJson()).toMatchObject({ id: 4, error: { code: -32601 } });
  });

  it('answers invalid params with -32602 naming the failing path', () => {
    const s = scriptedTransport();
    const peer = createServerPeer(s.transport);
    registerServerHandlers(peer, { 'logs.push': () => ({ up_to_seq: 0 }) });
    const bad = push(1) as unknown as { entries: Record<string, unknown>[] };
    bad.entries[0]!['severity'] = 'loud';
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'logs.push', params: bad }));
    const reply = s.lastJson() as { error: { code: number; data: { errors: { path: string; message: string }[] } } };
    expect(reply.error.code).toBe(-32602);
    expect(reply.error.data.errors[0]!.path).toBe('/entries/0/severity');
    expect(reply.error.data.errors[0]!.message).toContain('must be one of');
  });

  it('drops a notification with invalid params without answering (heartbeat rule)', () => {
    const events: PeerEvent[] = [];
    const s = scriptedTransport();
    const peer = createServerPeer(s.transport, { onEvent: (e) => events.push(e) });
    let calls = 0;
    registerServerHandlers(peer, { 'agent.heartbeat': () => void calls++ });
    s.receive(JSON.stringify({ jsonrpc: '2.0', method: 'agent.heartbeat', params: { ts: 'yesterday' } }));
    expect(s.sent).toHaveLength(0);
    expect(calls).toBe(0);
    expect(events[0]).toMatchObject({ type: 'invalid_params', method: 'agent.heartbeat' });
    s.receive(JSON.stringify({ jsonrpc: '2.0', method: 'agent.heartbeat', params: { ts: '2026-05-16T19:42:41.002Z', queue_depth: 0, buffer_bytes: 0 } }));
    expect(calls).toBe(1);
    expect(s.sent).toHaveLength(0);
  });

  it('turns a thrown RpcError into its wire form and anything else into -32603 without leaking the message', async () => {
    const s = scriptedTransport();
    const peer = createServerPeer(s.transport);
    let n = 0;
    registerServerHandlers(peer, {
      'logs.push': () => {
        n++;
        if (n === 1) throw new BackpressureError({ retry_after_ms: 250 });
        throw new Error('secret internal detail');
      },
    });
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logs.push', params: push(1) }));
    expect(s.lastJson()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32020, message: 'Backpressure', data: { retry_after_ms: 250 } } });
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'logs.push', params: push(2) }));
    expect(s.lastJson()).toEqual({ jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'InternalError' } });
    expect(s.sent.join('')).not.toContain('secret');
  });

  it('rejects with the typed error class of the code the other side answered', async () => {
    const s = scriptedTransport();
    const agent = new AgentClient(createAgentPeer(s.transport));
    const p = agent.logsPush(push(1));
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32020, message: 'Backpressure', data: { retry_after_ms: 250 } } }));
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackpressureError);
    expect((err as BackpressureError).data?.retry_after_ms).toBe(250);
  });

  it('times out a request with a local PeerError and drops the late answer', async () => {
    const events: PeerEvent[] = [];
    const s = scriptedTransport();
    const agent = new AgentClient(createAgentPeer(s.transport, { onEvent: (e) => events.push(e) }));
    const err = await agent.logsPush(push(1), { timeoutMs: 20 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PeerError);
    expect((err as PeerError).code).toBe('timeout');
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { up_to_seq: 1 } }));
    expect(events).toContainEqual({ type: 'unknown_response', id: 1 });
  });

  it('rejects a result that fails the result schema', async () => {
    const s = scriptedTransport();
    const agent = new AgentClient(createAgentPeer(s.transport));
    const p = agent.logsPush(push(1));
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { up_to_seq: -1 } }));
    const err = (await p.catch((e: unknown) => e)) as PeerError;
    expect(err.code).toBe('invalid_result');
    expect(err.message).toContain('/up_to_seq');
  });

  it('fails every pending request at once when the connection closes', async () => {
    const s = scriptedTransport();
    const agent = new AgentClient(createAgentPeer(s.transport, { requestTimeoutMs: 0 }));
    const a = agent.logsPush(push(1));
    const b = agent.metricsPush({ ts: '2026-05-16T19:43:00.000Z', samples: [{ name: 'load1', value: 1 }] });
    s.remoteClose(1011, 'missed pongs');
    for (const p of [a, b]) {
      const err = (await p.catch((e: unknown) => e)) as PeerError;
      expect(err.code).toBe('closed');
      expect(err.message).toContain('1011');
    }
  });

  it('closes with 1003 on a binary frame', () => {
    const s = scriptedTransport();
    createServerPeer(s.transport);
    s.receiveBinary(10);
    expect(s.closes).toEqual([{ code: 1003, reason: 'binary frames are not supported in V1' }]);
    expect(s.sent).toHaveLength(0);
  });

  it('never answers a notification, even one its handler throws in', () => {
    const s = scriptedTransport();
    const peer = createServerPeer(s.transport);
    registerServerHandlers(peer, {
      'agent.heartbeat': () => {
        throw new Error('boom');
      },
    });
    s.receive(JSON.stringify({ jsonrpc: '2.0', method: 'agent.heartbeat', params: { ts: '2026-05-16T19:42:41.002Z', queue_depth: 1, buffer_bytes: 2 } }));
    expect(s.sent).toHaveLength(0);
  });

  it('answers -32600 when a notification method is sent with an id', () => {
    const s = scriptedTransport();
    createServerPeer(s.transport);
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'agent.heartbeat', params: {} }));
    expect(s.lastJson()).toMatchObject({ id: 5, error: { code: -32600 } });
  });

  it('refuses to send invalid params or an oversize frame, sending nothing', async () => {
    const s = scriptedTransport();
    const agent = new AgentClient(createAgentPeer(s.transport));
    const bad = (await agent.logsPush({ seq_start: 1, entries: [] }).catch((e: unknown) => e)) as PeerError;
    expect(bad.code).toBe('invalid_params');
    const big = 'x'.repeat(60_000);
    const entries = Array.from({ length: 20 }, (_, i) => ({ seq: i + 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info' as const, message: big, source: 'journald' as const }));
    const tooBig = (await agent.logsPush({ seq_start: 1, entries }).catch((e: unknown) => e)) as PeerError;
    expect(tooBig.code).toBe('frame_too_large');
    expect(s.sent).toHaveLength(0);
  });

  it('lets the intercept hook refuse calls before params are validated', () => {
    const s = scriptedTransport();
    const peer = createServerPeer(s.transport, {
      intercept: (call) => (call.method === 'agent.hello' ? undefined : new RpcError(-32000, 'AuthRequired')),
    });
    registerServerHandlers(peer, { 'logs.push': () => ({ up_to_seq: 0 }) });
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logs.push', params: { not: 'valid' } }));
    expect(s.lastJson()).toMatchObject({ id: 1, error: { code: -32000, message: 'AuthRequired' } });
  });

  it('requestSerialized sends pre-serialized params as they are and validates the result', async () => {
    const s = scriptedTransport();
    const agent = createAgentPeer(s.transport);
    const paramsJson = '{"seq_start":5,"entries":[{"seq":5,"ts":"2026-05-16T19:42:50.123Z","severity":"info","message":"m5","source":"journald"}]}';
    const p = agent.requestSerialized('logs.push', paramsJson);
    expect(s.sent[0]).toBe(`{"jsonrpc":"2.0","id":1,"method":"logs.push","params":${paramsJson}}`);
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { up_to_seq: 5 } }));
    await expect(p).resolves.toEqual({ up_to_seq: 5 });
    const bad = agent.requestSerialized('logs.push', paramsJson);
    s.receive(JSON.stringify({ jsonrpc: '2.0', id: 2, result: { up_to_seq: 'five' } }));
    await expect(bad).rejects.toMatchObject({ code: 'invalid_result' });
  });

  it('rejects at once, sending nothing, when the abort signal has already fired', async () => {
    const s = scriptedTransport();
    const agent = new AgentClient(createAgentPeer(s.transport, { requestTimeoutMs: 0 }));
    const err = (await agent.logsPush(push(1), { signal: AbortSignal.abort() }).catch((e: unknown) => e)) as PeerError;
    expect(err.code).toBe('timeout');
    expect(s.sent).toHaveLength(0);
  });

  it('works end to end over an in-memory pair: typed request, typed notification, handler result', async () => {
    const [a, b] = memoryTransportPair();
    const agentPeer = createAgentPeer(a);
    const serverPeer = createServerPeer(b);
    const beats: number[] = [];
    registerServerHandlers(serverPeer, {
      'logs.push': async (p) => ({ up_to_seq: p.seq_start + p.entries.length - 1, received_at: '2026-05-16T19:42:50.612Z' }),
      'agent.heartbeat': (p) => void beats.push(p.queue_depth),
    });
    const agent = new AgentClient(agentPeer);
    agent.agentHeartbeat({ ts: '2026-05-16T19:42:41.002Z', queue_depth: 17, buffer_bytes: 4096 });
    await expect(agent.logsPush(push(42118))).resolves.toEqual({ up_to_seq: 42118, received_at: '2026-05-16T19:42:50.612Z' });
    expect(beats).toEqual([17]);
    const server = new ServerClient(serverPeer);
    const probe = server.probeRequest({ probe: 'fs.disk_usage', args: { path: '/' }, timeout_ms: 1000 });
    // No agent handler registered: the agent answers -32601.
    await expect(probe).rejects.toMatchObject({ code: -32601 });
    const closed = new Promise<number>((resolve) => agentPeer.onClose((code) => resolve(code)));
    serverPeer.close(1000, 'final_seq=42118');
    await expect(closed).resolves.toBe(1000);
  });
});
