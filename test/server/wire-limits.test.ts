import { afterEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import { getAgent } from '../../server/db/agents.repository.js';
import { enroll, helloParams, startTestServer, TestClient, waitFor, type TestServer } from './wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return TestClient.open(url, { headers, protocol: headers['sec-websocket-protocol'] === undefined ? undefined : null }).then(
    (c) => {
      c.ws.terminate();
      return 101;
    },
    (e: { status?: number }) => e.status ?? -1,
  );
}

describe('wire rules', () => {
  it('subprotocol other than cortex.v1 (or none) → HTTP 400 before the upgrade', async () => {
    t = await startTestServer();
    await expect(TestClient.open(t.url, { protocol: 'cortex.v2' })).rejects.toMatchObject({ status: 400 });
    await expect(TestClient.open(t.url, { protocol: null })).rejects.toMatchObject({ status: 400 });
    const ok = await TestClient.open(t.url);
    expect(ok.ws.protocol).toBe('cortex.v1');
    ok.ws.terminate();
  });

  it('GET /healthz → 200 JSON with database reachability', async () => {
    t = await startTestServer();
    const port = t.server.port;
    const body = await new Promise<{ status: number; json: any }>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
        let s = '';
        res.on('data', (d) => (s += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(s) }));
      }).on('error', reject);
    });
    expect(body.status).toBe(200);
    expect(body.json.database).toBe('ok');
  });

  it('upgrade rate limit: 10/min per forwarded client address → 429; other addresses and unforwarded loopback unaffected', async () => {
    t = await startTestServer({ upgrades_per_minute: 10 });
    const xff = { 'x-forwarded-for': '203.0.113.7' };
    for (let i = 0; i < 10; i++) expect(await upgradeStatus(t.url, xff)).toBe(101);
    expect(await upgradeStatus(t.url, xff)).toBe(429);
    expect(await upgradeStatus(t.url, { 'x-forwarded-for': '203.0.113.8' })).toBe(101);
    for (let i = 0; i < 12; i++) expect(await upgradeStatus(t.url, {})).toBe(101);
  });

  it('X-Forwarded-For is ignored from an untrusted peer (the peer address is limited)', async () => {
    t = await startTestServer({ upgrades_per_minute: 2, trusted_proxies: ['10.9.9.9'] });
    expect(await upgradeStatus(t.url, { 'x-forwarded-for': '1.1.1.1' })).toBe(101);
    expect(await upgradeStatus(t.url, { 'x-forwarded-for': '2.2.2.2' })).toBe(101);
    expect(await upgradeStatus(t.url, { 'x-forwarded-for': '3.3.3.3' })).toBe(429);
  });

  it('binary frame → close 1003', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    a.client.ws.send(Buffer.from([1, 2, 3]));
    expect((await a.client.closed).code).toBe(1003);
    await waitFor(async () => (await getAgent(t!.server.storage.db, a.host_id))?.connection_state === 'Disconnected');
    expect((await getAgent(t.server.storage.db, a.host_id))?.last_disconnect_reason).toMatch(/^1003 /);
  });

  it('frame over 1 MiB → close 1009 and last_disconnect_reason "1009 oversize"', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    a.client.send('x'.repeat(1_048_577));
    expect((await a.client.closed).code).toBe(1009);
    await waitFor(async () => (await getAgent(t!.server.storage.db, a.host_id))?.connection_state === 'Disconnected');
    expect((await getAgent(t.server.storage.db, a.host_id))?.last_disconnect_reason).toBe('1009 oversize');
  });

  it('pre-hello: hello frame over 64 KiB → 1009, no message, no row touched', async () => {
    t = await startTestServer();
    const h = await t.issue();
    const before = await getAgent(t.server.storage.db, h.host_id);
    const c = await TestClient.open(t.url);
    const p = helloParams(h.host_id, h.token, { capabilities: { supported_probes: Array.from({ length: 4000 }, (_, i) => `probe.number_${i}`), sources: [], max_batch_entries: 1000, compression: [] } });
    c.send({ jsonrpc: '2.0', id: 1, method: 'agent.hello', params: p });
    expect((await c.closed).code).toBe(1009);
    expect(c.messages).toEqual([]);
    expect(await getAgent(t.server.storage.db, h.host_id)).toEqual(before);
  });

  it('pre-hello: a 40 KiB hello is fine (only the hello frame may exceed 1 KiB)', async () => {
    t = await startTestServer();
    const h = await t.issue();
    const c = await TestClient.open(t.url);
    const p = helloParams(h.host_id, h.token, { capabilities: { supported_probes: Array.from({ length: 2000 }, (_, i) => `probe.n${i}`), sources: [], max_batch_entries: 1000, compression: [] } });
    expect(JSON.stringify(p).length).toBeGreaterThan(20_000);
    const res = await c.request('agent.hello', p);
    expect(res.result?.session_id).toBeDefined();
    t.tokens.push(res.result.rotated_token);
    c.ws.close();
    await c.closed;
  });

  it('pre-hello: more than 1 KiB outside the hello frame (pings) → 1009, no message', async () => {
    t = await startTestServer();
    const c = await TestClient.open(t.url);
    c.ws.ping(Buffer.alloc(125));
    for (let i = 0; i < 10; i++) c.ws.ping(Buffer.alloc(125));
    expect((await c.closed).code).toBe(1009);
    expect(c.messages).toEqual([]);
  });

  it('pre-hello: a 2 KiB non-hello frame → 1009', async () => {
    t = await startTestServer();
    const c = await TestClient.open(t.url);
    c.send({ jsonrpc: '2.0', id: 1, method: 'logs.push', params: { pad: 'p'.repeat(2048) } });
    expect((await c.closed).code).toBe(1009);
  });

  it('missed pongs → close 1011 and recorded', async () => {
    t = await startTestServer({ ping_interval_ms: 60, missed_pongs: 3, hello_timeout_ms: 5000 });
    const h = await t.issue();
    const c = await TestClient.open(t.url, { autoPong: false });
    const res = await c.request('agent.hello', helloParams(h.host_id, h.token));
    t.tokens.push(res.result.rotated_token);
    const started = Date.now();
    expect((await c.closed).code).toBe(1011);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    await waitFor(async () => (await getAgent(t!.server.storage.db, h.host_id))?.connection_state === 'Disconnected');
    expect((await getAgent(t.server.storage.db, h.host_id))?.last_disconnect_reason).toBe('1011 missed pongs');
  });

  it('a client that answers pings stays connected', async () => {
    t = await startTestServer({ ping_interval_ms: 40, missed_pongs: 2 });
    const a = await enroll(t);
    let pings = 0;
    a.client.ws.on('ping', () => pings++);
    await waitFor(() => pings >= 6);
    expect(a.client.ws.readyState).toBe(a.client.ws.OPEN);
    a.client.ws.close();
    await a.client.closed;
  });
});
