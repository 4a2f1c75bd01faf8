// Sessions the server closes while authenticated (DECISIONS H74): a takeover (a newer hello
// of the host), a frame the session cannot take (binary: 1003), a revocation, a rotation, a
// shutdown after its drain. Once the server has sent its close frame nothing the peer sends
// reaches a handler (a metrics.push after it is not stored, a logs.push not queued), and a
// peer that never answers the close is ended within about a second — ws alone waited 30 s,
// dispatching whatever came meanwhile. As for unauthenticated sockets (H63).
import { afterEach, expect, it } from 'vitest';
import { RawWs } from '../support/raw-ws.js';
import { metricValue } from './control-helpers.js';
import { authedRaw, helloParams, logEntries, startTestServer, TestClient, type TestServer } from './wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** After the server's close frame the peer sends a metrics.push and a logs.push; then ms until the TCP connection is gone. */
async function afterClose(ws: RawWs): Promise<{ code: number | null; ms: number }> {
  const code = await ws.closed(5000);
  const at = Date.now();
  ws.text(JSON.stringify({ jsonrpc: '2.0', id: 'm', method: 'metrics.push', params: { ts: new Date().toISOString(), samples: [{ name: 'after_close', value: 1 }] } }));
  ws.text(JSON.stringify({ jsonrpc: '2.0', id: 'l', method: 'logs.push', params: { seq_start: 1, entries: logEntries(1, 5) } }));
  await Promise.race([ws.ended, new Promise((r) => setTimeout(r, 5000))]);
  return { code, ms: Date.now() - at };
}

async function metricsStored(s: TestServer, host_id: string): Promise<number> {
  return (await s.server.storage.db.selectFrom('metrics').select('name').where('host_id', '=', host_id).execute()).length;
}

it('a session replaced by a newer one (takeover) that never answers the close: ended within ~1 s, and what it sent after the close frame reaches no handler', async () => {
  t = await startTestServer();
  const h = await t.issue();
  const old = await authedRaw(t, h);
  const pushesBefore = metricValue(await t.server.metrics!.text(), 'cortex_frames_in_total', { method: 'logs.push' });
  const newer = await TestClient.open(t.url);
  expect((await newer.request('agent.hello', helloParams(h.host_id, h.token))).result).toBeDefined();
  const r = await afterClose(old);
  old.destroy();
  expect(r.code).toBe(1000);
  expect(r.ms, `${r.ms} ms from the close frame to the end (ws alone: 30 s)`).toBeLessThan(2500);
  expect(await metricsStored(t, h.host_id)).toBe(0);
  const pushesAfter = metricValue(await t.server.metrics!.text(), 'cortex_frames_in_total', { method: 'logs.push' });
  expect(Number.isNaN(pushesAfter) ? 0 : pushesAfter).toBe(Number.isNaN(pushesBefore) ? 0 : pushesBefore);
  expect(old.messages().filter((m) => ['m', 'l'].includes(String((m as { id?: unknown }).id)))).toEqual([]);
  newer.ws.close();
  await newer.closed;
});

it('a session closed for a frame it cannot take (binary, 1003) that never answers the close: ended within ~1 s, nothing after the close dispatched', async () => {
  t = await startTestServer();
  const h = await t.issue();
  const ws = await authedRaw(t, h);
  ws.send(2, Buffer.from([1, 2, 3]));
  const r = await afterClose(ws);
  ws.destroy();
  expect(r.code).toBe(1003);
  expect(r.ms, `${r.ms} ms from the close frame to the end (ws alone: 30 s)`).toBeLessThan(2500);
  expect(await metricsStored(t, h.host_id)).toBe(0);
});

it('the shutdown drain still takes pushes and acks them until the close is sent (agent.shutdown ServerReload, then 1001)', async () => {
  t = await startTestServer();
  const h = await t.issue();
  const c = await TestClient.open(t.url);
  expect((await c.request('agent.hello', helloParams(h.host_id, h.token))).result).toBeDefined();
  const stopping = t.server.shutdown(1);
  // told to go; it pushes during the drain and is acked
  const push = await c.request('logs.push', { seq_start: 1, entries: logEntries(1, 5) });
  expect(push.result?.up_to_seq).toBe(5);
  const metrics = await c.request('metrics.push', { ts: new Date().toISOString(), samples: [{ name: 'during_drain', value: 1 }] });
  expect(metrics.result).toEqual({ accepted: 1, dropped: 0 });
  expect(await metricsStored(t, h.host_id)).toBe(1);
  await stopping;
  expect((await c.closed).code).toBe(1001);
});
