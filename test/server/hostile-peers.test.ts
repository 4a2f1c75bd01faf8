// Hostile WebSocket peers against the in-process server (a helper's hx1 findings, DECISIONS
// H63-H71): unauthenticated sockets that never answer the close, refused hellos with long
// reasons, tokens where they do not belong, reconnects against the per-agent rate, probe
// answers that are no JSON-RPC response or are nested 5,000 deep, frames ws refuses, ping
// floods, and a protocol_version of the wrong type.
import { afterEach, describe, expect, it } from 'vitest';
import { PeerError, ServerClient, type Frame, type PeerEvent, type Transport } from '@cortex/agent-protocol';
import { getAgent } from '../../server/db/agents.repository.js';
import { AgentBuckets } from '../../server/ingest.js';
import { closeReason, loggableHostId, peerText, REDACTED } from '../../server/ws/peer-text.js';
import { createSessionPeer } from '../../server/ws/session-peer.js';
import { RawWs, encodeFrame } from '../support/raw-ws.js';
import { connectAgent, httpBase, httpRequest, metricValue, nextProbe } from './control-helpers.js';
import { authedRaw, enroll, helloParams, logEntries, startTestServer, TestClient, waitFor, type TestServer } from './wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A server whose failed hellos are not throttled (these tests fail hellos on purpose). */
function server(config: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  return startTestServer({ failed_hellos_before_throttle: 0, ...config });
}

function helloFrame(params: unknown, id: number | string = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'agent.hello', params });
}

async function disconnectReason(s: TestServer, host_id: string): Promise<string | null | undefined> {
  await waitFor(async () => (await getAgent(s.server.storage.db, host_id))?.connection_state === 'Disconnected');
  return (await getAgent(s.server.storage.db, host_id))?.last_disconnect_reason;
}

/** ms from the server's close frame until the TCP connection is gone (the peer never answers the close). */
async function closeToEnd(ws: RawWs, timeoutMs: number): Promise<{ code: number | null; ms: number }> {
  const code = await ws.closed(timeoutMs);
  const at = Date.now();
  await Promise.race([ws.ended, new Promise((r) => setTimeout(r, 5000))]);
  return { code, ms: Date.now() - at };
}

describe('an unauthenticated socket being closed is bounded (H63)', () => {
  it('a refused hello, a timed-out hello, a binary first frame, a non-hello first frame: the TCP connection is gone within ~1 s of the close frame, though the peer never answers it', async () => {
    t = await server({ hello_timeout_ms: 300 });
    const h = await t.issue();
    const cases: [string, number, (ws: RawWs) => void][] = [
      ['wrong token', 4001, (ws) => ws.text(helloFrame(helloParams(h.host_id, 'w'.repeat(43))))],
      ['no hello (timer)', 4000, () => undefined],
      ['binary first frame', 1003, (ws) => ws.send(2, Buffer.from([1, 2, 3]))],
      ['logs.push first', 4001, (ws) => ws.text(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logs.push', params: {} }))],
    ];
    const seen = await Promise.all(
      cases.map(async ([name, , act]) => {
        const ws = await RawWs.connect(t!.server.port);
        act(ws);
        const r = await closeToEnd(ws, 5000);
        ws.destroy();
        return [name, r] as const;
      }),
    );
    for (const [i, [name, r]] of seen.entries()) {
      expect(r.code, name).toBe(cases[i]![1]);
      expect(r.ms, `${name}: ${r.ms} ms from the close frame to the end (ws alone: 30 s)`).toBeLessThan(2500);
    }
  });

  it('what the peer sends after the close is not read: a flood stops at what TCP buffers, and the socket is ended', async () => {
    t = await server();
    const h = await t.issue();
    const ws = await RawWs.connect(t.server.port);
    ws.text(helloFrame(helloParams(h.host_id, 'w'.repeat(43))));
    expect(await ws.closed(5000)).toBe(4001);
    const frame = encodeFrame(1, Buffer.alloc(1024 * 1024, 0x20));
    const started = Date.now();
    let written = 0;
    while (!ws.socket.destroyed && Date.now() - started < 5000) {
      written += frame.length;
      if (!ws.socket.write(frame)) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 200);
          ws.socket.once('drain', () => (clearTimeout(timer), resolve()));
        });
      }
    }
    await Promise.race([ws.ended, new Promise((r) => setTimeout(r, 1000))]);
    const ms = Date.now() - started;
    ws.destroy();
    // Read and parsed until ws's own close timer (30 s): 8 GiB in the helper's run. Now 1 KiB
    // after the close frame is read, then nothing: the rest is what the two socket buffers hold.
    expect(written, `${(written / 1048576).toFixed(0)} MiB taken after the close`).toBeLessThan(48 * 1024 * 1024);
    expect(ms).toBeLessThan(3000);
  });

  it('a well-behaved client that answers the close is closed at once with the code (no wait for the timer)', async () => {
    t = await server();
    const h = await t.issue();
    const c = await TestClient.open(t.url);
    const res = await c.request('agent.hello', helloParams(h.host_id, 'w'.repeat(43)));
    const at = Date.now();
    expect(res.error?.code).toBe(-32001);
    expect((await c.closed).code).toBe(4001);
    expect(Date.now() - at).toBeLessThan(500);
  });
});

describe('close reasons fit a close frame (H64)', () => {
  it('a refused hello whose message is longer than 123 bytes is closed 4001 (was aborted 1006), its reason cut', async () => {
    t = await server({ min_agent_version: '0.1.0' });
    const h = await t.issue();
    const caps = { supported_probes: [], sources: ['syslog'], max_batch_entries: 1000, compression: [] };
    const long = '0.0.1-alpha.very.long.prerelease.tag.that.goes.on.and.on.and.on.and.on.for.a.while+build.metadata.also.long';
    const cases: [number, unknown][] = [
      [-32602, helloParams(h.host_id, h.token, { capabilities: caps } as never)],
      [-32003, helloParams(h.host_id, h.token, { agent_version: long })],
      [-32003, helloParams(h.host_id, h.token, { agent_version: `0.0.1 ${'é '.repeat(80)}` })],
    ];
    for (const [code, params] of cases) {
      const c = await TestClient.open(t.url);
      const res = await c.request('agent.hello', params);
      expect(res.error?.code).toBe(code);
      const closed = await c.closed;
      expect(closed.code, `${code}: closed with ${closed.code} ${closed.reason}`).toBe(4001);
      expect(Buffer.byteLength(closed.reason)).toBeLessThanOrEqual(123);
      expect(closed.reason).toMatch(/^(InvalidParams \(-32602\)|AgentVersionUnsupported \(-32003\)): /);
    }
  });

  it('closeReason cuts at 123 bytes of UTF-8 without splitting a character', () => {
    expect(closeReason('short')).toBe('short');
    expect(closeReason('x'.repeat(123))).toBe('x'.repeat(123));
    for (const ch of ['é', '€', '😀', 'x']) {
      const cut = closeReason(`ab${ch.repeat(200)}`);
      expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(123);
      expect(cut).not.toContain('\ufffd');
      expect(cut.endsWith('…')).toBe(true);
      expect(Buffer.from(cut, 'utf8').toString('utf8')).toBe(cut);
    }
  });
});

describe('no token in a log line, a metric or a row, wherever a peer puts it (H65)', () => {
  it('host_id swapped with the token, the token as a property name, as agent_version, as a response id, in logs.push params, as the close reason', async () => {
    t = await server({ min_agent_version: '0.1.0' });
    const a = await enroll(t);
    const tok = a.token;
    const hellos: unknown[] = [
      helloParams(tok, a.host_id),
      helloParams(tok, tok),
      { ...helloParams(a.host_id, tok), [tok]: 1 },
      helloParams(a.host_id, tok, { agent_version: tok }),
      helloParams(`${tok}${'x'.repeat(60_000)}`, tok),
    ];
    for (const params of hellos) {
      const c = await TestClient.open(t.url);
      const res = await c.request('agent.hello', params);
      expect(res.error).toBeDefined();
      await c.closed;
    }
    const s = await TestClient.open(t.url);
    const ok = await s.request('agent.hello', helloParams(a.host_id, tok));
    expect(ok.result?.session_id).toBeDefined();
    s.send({ jsonrpc: '2.0', id: tok, result: {} });
    await s.request('logs.push', { seq_start: 1, [tok]: 1, entries: [] });
    s.ws.close(1000, tok.slice(0, 40));
    await s.closed;
    const reason = await disconnectReason(t, a.host_id);
    const metrics = await fetch(`${httpBase(t)}/metrics`).then((r) => r.text());
    const lines = t.log.lines.join('\n');
    for (const [where, text] of [
      ['log', lines],
      ['/metrics', metrics],
      ['last_disconnect_reason', String(reason)],
    ] as const) {
      expect(text.includes(tok), `token in ${where}`).toBe(false);
      expect(text.includes(tok.slice(0, 40)), `token's first 40 characters in ${where}`).toBe(false);
    }
    expect(reason).toBe(`1000 ${REDACTED}`);
    // what the lines say instead
    const refused = t.log.records().filter((r) => String(r['msg']).startsWith('hello refused'));
    expect(refused.map((r) => r['host_id'])).toContain('(malformed, 43 characters)');
    expect(refused.map((r) => r['host_id'])).toContain('(malformed, 60043 characters)');
    expect(refused.some((r) => String(r['msg']).includes(`/${REDACTED} is not allowed`))).toBe(true);
    expect(refused.some((r) => String(r['msg']).includes(`agent_version=${REDACTED}`))).toBe(true);
    expect(t.log.records().some((r) => r['msg'] === 'response with an unknown id dropped' && r['id'] === REDACTED)).toBe(true);
    // the handshakes metric is labelled by the error's name: one series per outcome, not per message
    expect(metricValue(metrics, 'cortex_handshakes_total', { result: 'AuthFailed' })).toBe(3);
    expect(metricValue(metrics, 'cortex_handshakes_total', { result: 'InvalidParams' })).toBe(1);
    expect(metricValue(metrics, 'cortex_handshakes_total', { result: 'AgentVersionUnsupported' })).toBe(1);
  });

  it('peerText keeps ordinary text and UUIDs, redacts words of 32+ characters, strips control characters, bounds the length', () => {
    const uuid = '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01';
    const tok = 'A'.repeat(43);
    expect(peerText('final_seq=9007199254740991')).toBe('final_seq=9007199254740991');
    expect(peerText(`host ${uuid} gone`)).toBe(`host ${uuid} gone`);
    expect(peerText(`errors: /capabilities/supported_probes/0 is bad, /${tok} is not allowed`)).toBe(`errors: /capabilities/supported_probes/0 is bad, /${REDACTED} is not allowed`);
    expect(peerText(`agent_version=${tok}`)).toBe(`agent_version=${REDACTED}`);
    expect(peerText(`a\nb\u0000c`)).toBe('a\ufffdb\ufffdc');
    expect(peerText('y '.repeat(10_000)).length).toBeLessThanOrEqual(200);
    // a token cut by the bound is not left in pieces
    expect(peerText(`${'z '.repeat(215)}${tok}`)).not.toContain('AAAA');
    expect(loggableHostId(uuid.toUpperCase())).toBe(uuid);
    expect(loggableHostId(tok)).toBe('(malformed, 43 characters)');
    expect(loggableHostId(7)).toBe('(not a string: number)');
  });
});

describe('the per-agent rate holds across reconnects (H66)', () => {
  it('a reconnect does not refill the bucket: a push of the next session within the second is refused -32030', async () => {
    t = await server({ agent_rate_entries_per_s: 200 });
    const a = await enroll(t);
    const first = await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 200) });
    expect(first.result?.up_to_seq).toBe(200);
    a.client.ws.close();
    await a.client.closed;
    const again = await TestClient.open(t.url);
    const hello = await again.request('agent.hello', helloParams(a.host_id, a.token));
    expect(hello.result?.accepted_seq).toBe(200);
    const second = await again.request('logs.push', { seq_start: 201, entries: logEntries(201, 200) });
    expect(second.error?.code, JSON.stringify(second)).toBe(-32030);
    expect(second.error?.data.retry_after_ms).toBeGreaterThan(0);
    again.ws.close();
    await again.closed;
  });

  it('AgentBuckets: one bucket per host, shared; drained ones are dropped', () => {
    const b = new AgentBuckets(100, 0);
    expect(b.get('h1', 0).take(100, 0)).toBe(0);
    expect(b.get('h1', 10).take(50, 10)).toBeGreaterThan(0); // the same bucket, still full
    expect(b.get('h2', 10).take(100, 10)).toBe(0); // another host's is its own
    expect(b.size).toBe(2);
    b.get('h3', 20_000); // 20 s later: h1 and h2 drained long ago and are swept
    expect(b.size).toBe(1);
  });
});

describe('probe answers the admin API cannot pass on are a prompt 502 (H67, H68)', () => {
  it('the peer runtime fails a pending request at once when its answer is no JSON-RPC response (nothing is sent back); other ids are left alone', async () => {
    const sent: string[] = [];
    let deliver: ((f: Frame) => void) | undefined;
    const transport: Transport = { send: (text) => void sent.push(text), close: () => undefined, onFrame: (l) => (deliver = l), onClose: () => undefined };
    const events: PeerEvent[] = [];
    const client = new ServerClient(createSessionPeer(transport, { onEvent: (e) => events.push(e) }));
    const problems: [object, string][] = [
      [{ result: { output: 1, duration_ms: 1 }, error: { code: -32011, message: 'x' } }, 'it has both result and error (a response has exactly one)'],
      [{ error: { code: -32010 } }, 'error.message must be a string'],
      [{ error: { message: 'x' } }, 'error.code must be an integer'],
      [{ jsonrpc: '1.0', result: { output: 1, duration_ms: 1 } }, 'jsonrpc must be "2.0"'],
    ];
    for (const [body, why] of problems) {
      const pending = client.probeRequest({ probe: 'sys.uptime', args: {}, timeout_ms: 60_000 }, { timeoutMs: 2000 });
      const { id } = JSON.parse(sent[sent.length - 1]!) as { id: number };
      deliver!({ kind: 'text', text: JSON.stringify({ jsonrpc: '2.0', id, ...body }) });
      const err = (await pending.catch((e: unknown) => e)) as PeerError;
      expect(err).toBeInstanceOf(PeerError);
      expect(err.code).toBe('invalid_response');
      expect(err.message).toBe(`the answer to probe.request is not a valid JSON-RPC response: ${why}`);
    }
    // a broken answer to no request of ours: nothing failed, nothing answered
    const pending = client.probeRequest({ probe: 'sys.uptime', args: {}, timeout_ms: 60_000 }, { timeoutMs: 2000 });
    const { id } = JSON.parse(sent[sent.length - 1]!) as { id: number };
    const before = sent.length;
    deliver!({ kind: 'text', text: JSON.stringify({ jsonrpc: '2.0', id: id + 1, error: { code: 1 } }) });
    expect(sent.length).toBe(before);
    deliver!({ kind: 'text', text: JSON.stringify({ jsonrpc: '2.0', id, result: { output: 'up', duration_ms: 1 } }) });
    await expect(pending).resolves.toEqual({ output: 'up', duration_ms: 1 });
    expect(events.filter((e) => e.type === 'invalid_request')).toHaveLength(problems.length + 1);
  });

  const probe = (s: TestServer, host: string) =>
    httpRequest(`${httpBase(s)}/admin/agents/${host}/probe`, { body: { probe: 'sys.uptime', args: {}, timeout_ms: 5000 } });

  it('an answer with both result and error, or an error without message: 502 at once (was 504 after the timeout)', async () => {
    t = await server();
    const a = await connectAgent(t, ['sys.uptime']);
    const seen = new Set<unknown>();
    const bodies = [
      (id: unknown) => ({ jsonrpc: '2.0', id, result: { output: 1, duration_ms: 1 }, error: { code: -32011, message: 'x' } }),
      (id: unknown) => ({ jsonrpc: '2.0', id, error: { code: -32010 } }),
    ];
    for (const body of bodies) {
      const started = Date.now();
      const pending = probe(t, a.host_id);
      const req = await nextProbe(a.client, seen);
      a.client.send(body(req.id));
      const res = await pending;
      expect(res.status, res.text).toBe(502);
      expect(res.body.error.code).toBe(-32603);
      expect(res.body.error.data.reason).toContain('not a valid JSON-RPC response');
      expect(Date.now() - started).toBeLessThan(2000);
    }
    // the session is fine
    const pending = probe(t, a.host_id);
    const req = await nextProbe(a.client, seen);
    a.client.send({ jsonrpc: '2.0', id: req.id, result: { output: 'up', duration_ms: 1 } });
    expect((await pending).status).toBe(200);
    a.client.ws.close();
    await a.client.closed;
  });

  it('an output nested 5,000 levels deep: 502 naming the answer invalid (was 500, a stack overflow in JSON.stringify)', async () => {
    t = await server();
    const a = await connectAgent(t, ['sys.uptime']);
    const pending = probe(t, a.host_id);
    const req = await nextProbe(a.client);
    const n = 5000;
    a.client.send(`{"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":{"duration_ms":1,"output":${'['.repeat(n)}${']'.repeat(n)}}}`);
    const res = await pending;
    expect(res.status, res.text).toBe(502);
    expect(res.body.error.data.reason).toMatch(/answer is not a ProbeOutput: .*nested deeper than 256 levels/);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('frames ws refuses: the close code on the wire is a contract code and is what is recorded (H69)', () => {
  it('a frame header declaring more than 2^53 - 1 bytes: 1009 on the wire, "1009 oversize" recorded (was "1002 protocol error")', async () => {
    t = await server();
    const host = await t.issue();
    const ws = await authedRaw(t, host);
    const head = Buffer.alloc(10);
    head[0] = 0x81;
    head[1] = 0xff;
    head.writeBigUInt64BE(1n << 62n, 2);
    ws.writeRaw(head);
    expect(await ws.closed(5000)).toBe(1009);
    ws.destroy();
    expect(await disconnectReason(t, host.host_id)).toBe('1009 oversize');
  });

  it('one message in 20,000 empty fragments: 1009 on the wire (ws says 1008, not a contract code), recorded as oversize', async () => {
    t = await server();
    const host = await t.issue();
    const ws = await authedRaw(t, host);
    const first = encodeFrame(1, Buffer.alloc(0), { fin: false });
    const more = encodeFrame(0, Buffer.alloc(0), { fin: false });
    ws.writeRaw(Buffer.concat([first, ...Array.from({ length: 20_000 }, () => more)]));
    expect(await ws.closed(5000)).toBe(1009);
    ws.destroy();
    expect(await disconnectReason(t, host.host_id)).toBe('1009 oversize (too many message fragments)');
  });
});

describe('a ping flood says so (H70)', () => {
  it('200 pings at once from an authenticated agent: ws ends the socket; the row and the log say "ping flood" (was "1006 abnormal")', async () => {
    t = await server();
    const host = await t.issue();
    const ws = await authedRaw(t, host);
    const ping = encodeFrame(9, Buffer.alloc(10, 0x61));
    ws.writeRaw(Buffer.concat(Array.from({ length: 200 }, () => ping)));
    await Promise.race([ws.ended, new Promise((r) => setTimeout(r, 5000))]);
    ws.destroy();
    expect(await disconnectReason(t, host.host_id)).toBe('1006 ping flood (60 pongs not yet written)');
    const said = t.log.records().find((r) => String(r['msg']).startsWith('ping flood'));
    expect(said?.['host_id']).toBe(host.host_id);
  });
});
