// Issue 18, "one bad input must not stop a host or a source" (server side): a seq beyond
// 2^53 - 1, metadata nested too deep or too large, lone surrogates and NUL in a message.
// Each case first reproduced what went wrong, then the fix made it pass.
import { afterEach, describe, expect, it } from 'vitest';
import { LIMITS } from '@cortex/agent-protocol';
import { getAgent } from '../../server/db/agents.repository.js';
import { enroll, logEntries, startTestServer, type TestServer } from '../server/wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** `{"a":{"a":...{}}}` nested `levels` deep (the outer object is level 1). */
function nested(levels: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let cur = root;
  for (let i = 1; i < levels; i++) {
    const next: Record<string, unknown> = {};
    cur['a'] = next;
    cur = next;
  }
  return root;
}

describe('seq beyond 2^53 - 1', () => {
  it('a logs.push with seq_start 1e300 is -32602 and leaves accepted_seq an integer; the host keeps streaming', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    const ok = await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 3) });
    expect(ok.result.up_to_seq).toBe(3);
    const huge = logEntries(1, 1).map((e) => ({ ...e, seq: 1e300 }));
    const bad = await a.client.request('logs.push', { seq_start: 1e300, entries: huge });
    expect(bad.error?.code).toBe(-32602);
    expect(JSON.stringify(bad.error?.data)).toContain(String(LIMITS.max_seq));
    const edge = LIMITS.max_seq; // 2^53 - 1 itself is allowed, one more is not
    const over = await a.client.request('logs.push', { seq_start: edge, entries: [{ ...logEntries(1, 1)[0]!, seq: edge }, { ...logEntries(1, 1)[0]!, seq: edge + 1 }] });
    expect(over.error?.code, JSON.stringify(over)).toBe(-32602);
    const row = await getAgent(t.server.storage.db, a.host_id);
    expect(Number(row?.accepted_seq)).toBe(3);
    const next = await a.client.request('logs.push', { seq_start: 4, entries: logEntries(4, 2) });
    expect(next.result.up_to_seq).toBe(5);
    a.client.ws.close();
    await a.client.closed;
  });

  it('a hello with resume_from_seq beyond 2^53 - 1 is -32602', async () => {
    t = await startTestServer();
    const h = await t.issue();
    const { TestClient, helloParams } = await import('../server/wire.js');
    const c = await TestClient.open(t.url);
    const r = await c.request('agent.hello', helloParams(h.host_id, h.token, { resume_from_seq: 2 ** 60 }));
    expect(r.error?.code).toBe(-32602);
    await c.closed;
  });
});

describe('metadata caps', () => {
  it('metadata 6,000 levels deep is -32602 (not the retryable -32007); the next push is stored', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    // 6,000 levels, as a log line would carry them (JSON.stringify itself overflows on it).
    const entry = JSON.stringify(logEntries(1, 1)[0]).slice(0, -1);
    const deep = `${entry},"metadata":${'{"a":'.repeat(5999)}{}${'}'.repeat(5999)}}`;
    a.client.send(`{"jsonrpc":"2.0","id":"deep","method":"logs.push","params":{"seq_start":1,"entries":[${deep}]}}`);
    const r = await a.client.response('deep');
    expect(r.error?.code).toBe(-32602);
    expect(JSON.stringify(r.error?.data)).toContain('/entries/0/metadata');
    const fine = await a.client.request('logs.push', { seq_start: 1, entries: [{ ...logEntries(1, 1)[0]!, metadata: nested(LIMITS.metadata_max_depth) }] });
    expect(fine.result.up_to_seq).toBe(1);
    a.client.ws.close();
    await a.client.closed;
  });

  it('metadata one level past the cap, or past metadata_max_bytes, is -32602', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    const deeper = await a.client.request('logs.push', { seq_start: 1, entries: [{ ...logEntries(1, 1)[0]!, metadata: nested(LIMITS.metadata_max_depth + 1) }] });
    expect(deeper.error?.code).toBe(-32602);
    const big = await a.client.request('logs.push', { seq_start: 1, entries: [{ ...logEntries(1, 1)[0]!, metadata: { blob: 'x'.repeat(LIMITS.metadata_max_bytes) } }] });
    expect(big.error?.code).toBe(-32602);
    expect(JSON.stringify(big.error?.data)).toContain('metadata_max_bytes');
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('lone surrogates and NUL (DECISIONS H3)', () => {
  it('are stored as U+FFFD, one per bad code unit, and SQL length() agrees with the message', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    const message = `a\ud800b\u0000c\udc00`;
    const e = { ...logEntries(1, 1)[0]!, message, app_name: 'x\u0000y' };
    const r = await a.client.request('logs.push', { seq_start: 1, entries: [e] });
    expect(r.result.up_to_seq).toBe(1);
    const row = await t.server.storage.db
      .selectFrom('logs')
      .select(['message', 'app_name', (eb) => eb.fn<number>('length', ['message']).as('len')])
      .where('host_id', '=', a.host_id)
      .executeTakeFirstOrThrow();
    expect(row.message).toBe('a\ufffdb\ufffdc\ufffd');
    expect(row.app_name).toBe('x\ufffdy');
    expect(Number(row.len)).toBe(row.message.length);
    expect(t.log.lines.some((l) => l.includes('replaced') && l.includes('"chars":4'))).toBe(true);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('duplicate request ids (DECISIONS H10)', () => {
  it('a second request with an id still in flight gets -32600 at once; the first is answered normally', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    const frame = (seq: number) => JSON.stringify({ jsonrpc: '2.0', id: 'dup', method: 'logs.push', params: { seq_start: seq, entries: logEntries(seq, 1) } });
    a.client.send(frame(1));
    a.client.send(frame(2));
    const first = await a.client.next((m) => m.id === 'dup' && m.error !== undefined);
    expect(first.error?.code).toBe(-32600);
    const ok = await a.client.next((m) => m.id === 'dup' && m.result !== undefined);
    expect(ok.result.up_to_seq).toBe(1);
    expect(a.client.messages.filter((m) => m.id === 'dup')).toHaveLength(2);
    a.client.ws.close();
    await a.client.closed;
  });
});
