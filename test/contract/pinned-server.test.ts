// Rules of the seed that held on main with nothing to notice if they broke (issue 15), each
// pinned on the reference server with a test that fails when the behaviour goes. The rule
// ids are the ones in contract/rules.json.
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { LIMITS, SUBPROTOCOL } from '@cortex/agent-protocol';
import { resolveSettings } from '../../server/settings.js';
import { enroll, helloParams, logEntries, startTestServer, TestClient, type TestServer } from '../server/wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** The seed's (and DESIGN's) numbers, written out here so that a drifted limits.json shows. */
const SEED = {
  hello_timeout_ms: 5000,
  ping_interval_ms: 20_000,
  missed_pongs: 3,
  ack_flush_entries: 100,
  ack_flush_ms: 200,
  upgrades_per_minute: 10,
  agent_rate_entries_per_s: 50_000,
  rotation_grace_secs: 300,
  shutdown_drain_secs: 10,
  decommission_drain_secs: 30,
  backoff_base_s: 1,
  backoff_cap_s: 60,
  backoff_reset_after_active_s: 60,
  max_frame_bytes: 1_048_576,
  pre_hello_bytes: 1024,
  ingest_queue_min_batches: 16,
  server_max_batch_entries: 1000,
} as const;

async function metricValue(t: TestServer, name: string, labels: string): Promise<number> {
  const text = await (await fetch(t.url.replace(/^ws/, 'http').replace(LIMITS.ws_path, '/metrics'))).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('R-DEF-01 default constants: contract/limits.json holds the seed\'s numbers and the server uses them when nothing is configured', () => {
  it('limits.json equals the seed', () => {
    for (const [k, v] of Object.entries(SEED)) expect(LIMITS[k as keyof typeof LIMITS], k).toBe(v);
  });

  it('the server settings with no config file and no flags', () => {
    const s = resolveSettings({}, {});
    expect(s.hello_timeout_ms).toBe(SEED.hello_timeout_ms);
    expect(s.ping_interval_ms).toBe(SEED.ping_interval_ms);
    expect(s.missed_pongs).toBe(SEED.missed_pongs);
    expect(s.upgrades_per_minute).toBe(SEED.upgrades_per_minute);
    expect(s.agent_rate_entries_per_s).toBe(SEED.agent_rate_entries_per_s);
    expect(s.rotation_grace_secs).toBe(SEED.rotation_grace_secs);
    expect(s.shutdown_drain_secs).toBe(SEED.shutdown_drain_secs);
    expect(s.ingest_queue_batches).toBe(SEED.ingest_queue_min_batches);
    expect(s.max_batch_entries).toBe(SEED.server_max_batch_entries);
    expect(s.required_protocol_version).toBe(1);
    expect(s.default_agent_config).toEqual({ heartbeat_interval_secs: 30, max_batch_entries: 1000, flush_interval_ms: 200, metrics_interval_secs: 60, probe_concurrency: 4, log_sources: [] });
  });

  it('a running server started without ingest options flushes at K=100 / T=200 ms', async () => {
    t = await startTestServer();
    expect(t.server.ingest.flushEntries).toBe(SEED.ack_flush_entries);
    expect(t.server.ingest.flushMs).toBe(SEED.ack_flush_ms);
  });
});

describe('R-ING-06 the K=100 ack trigger on its own (T set far away)', () => {
  it('99 pending entries are not acked; the 100th triggers the commit and both acks at once', async () => {
    t = await startTestServer({}, { flushMs: 60_000 });
    const a = await enroll(t);
    const first = a.client.fire('logs.push', { seq_start: 1, entries: logEntries(1, 99) });
    // metrics.push is answered on its own: once it is, the 99 have been seen and are still pending
    const barrier = await a.client.request('metrics.push', { ts: new Date().toISOString(), samples: [{ name: 'barrier', value: 1 }] });
    expect(barrier.result).toBeDefined();
    expect(a.client.messages.some((m) => m.id === first)).toBe(false);
    const t0 = performance.now();
    const second = a.client.fire('logs.push', { seq_start: 100, entries: logEntries(100, 1) });
    const [r1, r2] = await Promise.all([a.client.response(first), a.client.response(second)]);
    // T is 60 s: an answer now can only come from K
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r1.result.up_to_seq).toBe(100);
    expect(r2.result.up_to_seq).toBe(100);
    a.client.ws.close();
    await a.client.closed;
  }, 20_000);
});

describe('R-VER-03 the version floor: required_protocol_version in the -32003 data', () => {
  it('a server whose floor is 2 refuses protocol_version 1 with -32003 {required_protocol_version: 2, current: 1}, close 4001', async () => {
    t = await startTestServer({ required_protocol_version: 2 });
    const h = await t.issue();
    const c = await TestClient.open(t.url);
    const r = await c.request('agent.hello', helloParams(h.host_id, h.token));
    expect(r.error?.code).toBe(-32003);
    expect(r.error?.data).toEqual({ required_protocol_version: 2, current: 1 });
    expect((await c.closed).code).toBe(4001);
  });

  it('the default floor (1) accepts protocol_version 1; protocol_version 2 is refused naming the floor 1', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    a.client.ws.close();
    await a.client.closed;
    const c = await TestClient.open(t.url);
    const r = await c.request('agent.hello', helloParams(a.host_id, a.token, { protocol_version: 2 }));
    expect(r.error?.code).toBe(-32003);
    expect(r.error?.data).toMatchObject({ required_protocol_version: 1 });
    expect((await c.closed).code).toBe(4001);
  });
});

describe('R-SEQ-05 resume_from_seq greater than accepted_seq (database restored from an older copy)', () => {
  it('the hello succeeds with the server\'s accepted_seq; the lost range is logged and counted', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 5) })).result.up_to_seq).toBe(5);
    a.client.ws.close();
    await a.client.closed;
    const c = await TestClient.open(t.url);
    const r = await c.request('agent.hello', helloParams(a.host_id, a.token, { resume_from_seq: 42 }));
    expect(r.result.accepted_seq).toBe(5);
    const line = t.log.lines.find((l) => l.includes('range lost'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!)).toMatchObject({ host_id: a.host_id, resume_from_seq: 42, accepted_seq: 5, lost: 37 });
    expect(await metricValue(t, 'cortex_gap_entries_total', 'kind="lost"')).toBe(37);
    // resume_from_seq at or below accepted_seq is no loss
    c.ws.close();
    await c.closed;
    const d = await TestClient.open(t.url);
    await d.request('agent.hello', helloParams(a.host_id, a.token, { resume_from_seq: 5 }));
    expect(await metricValue(t, 'cortex_gap_entries_total', 'kind="lost"')).toBe(37);
    d.ws.close();
    await d.closed;
  });
});

describe('R-SEQ-05 under a running session: the database goes back to an older copy (restored while the server ran)', () => {
  it('the range this session had acked and the database lost is logged as lost, not as entries the agent evicted', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 5) })).result.up_to_seq).toBe(5);
    // What a restore of a copy taken after seq 2 leaves: rows 3..5 gone, accepted_seq 2.
    const db = t.server.storage.db;
    await db.deleteFrom('logs').where('host_id', '=', a.host_id).where('seq', '>', 2).execute();
    await db.updateTable('agents').set({ accepted_seq: 2 }).where('host_id', '=', a.host_id).execute();
    // The agent carries on from what it had acked.
    expect((await a.client.request('logs.push', { seq_start: 6, entries: logEntries(6, 3) })).result.up_to_seq).toBe(8);
    const line = t.log.lines.find((l) => l.includes('range lost'));
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      level: 'warn',
      host_id: a.host_id,
      from: 3,
      to: 5,
      lost: 3,
      msg: 'the database holds less than this server acked (restored from an older copy, or rows deleted by hand?): range lost',
    });
    expect(t.log.lines.some((l) => l.includes('sequence gap'))).toBe(false);
    expect(await metricValue(t, 'cortex_gap_entries_total', 'kind="lost"')).toBe(3);
    expect(await metricValue(t, 'cortex_gap_entries_total', 'kind="evicted"')).toBe(0);
    // The next push is no gap at all.
    await a.client.request('logs.push', { seq_start: 9, entries: logEntries(9, 2) });
    expect(t.log.lines.filter((l) => l.includes('range lost'))).toHaveLength(1);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('R-SEQ-04 the eviction gap: a seq_start beyond accepted_seq + 1 is accepted and the gap counted exactly', () => {
  it('entries 6..15 missing: acked, counted as 10 evicted entries in one gap, logged with the range', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 5) });
    const r = await a.client.request('logs.push', { seq_start: 16, entries: logEntries(16, 3) });
    expect(r.result.up_to_seq).toBe(18);
    expect(await metricValue(t, 'cortex_gaps_seen_total', 'kind="evicted"')).toBe(1);
    expect(await metricValue(t, 'cortex_gap_entries_total', 'kind="evicted"')).toBe(10);
    const line = t.log.lines.find((l) => l.includes('sequence gap'));
    expect(JSON.parse(line!)).toMatchObject({ host_id: a.host_id, from: 6, to: 15 });
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('R-WIRE-05 no permessage-deflate (server)', () => {
  it('a client offering permessage-deflate gets no extension back', async () => {
    t = await startTestServer();
    const ws = new WebSocket(t.url, SUBPROTOCOL, { perMessageDeflate: true });
    const headers = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) => {
      ws.once('upgrade', (res) => resolve(res.headers));
      ws.once('error', reject);
    });
    await new Promise<void>((r) => (ws.readyState === ws.OPEN ? r() : ws.once('open', () => r())));
    expect(headers['sec-websocket-extensions']).toBeUndefined();
    expect(ws.extensions).toBe('');
    ws.close();
  });
});

describe('R-HS-01 the endpoint is /ws/agent: an upgrade on any other path gets HTTP 404', () => {
  it('other paths 404, /ws/agent upgrades', async () => {
    t = await startTestServer();
    const base = t.url.replace(LIMITS.ws_path, '');
    for (const path of ['/', '/ws', '/ws/agent/x', '/ws/agents', '/WS/AGENT', '/healthz']) {
      await expect(TestClient.open(`${base}${path}`), path).rejects.toMatchObject({ status: 404 });
    }
    const ok = await TestClient.open(t.url);
    ok.ws.close();
    await ok.closed;
  });
});
