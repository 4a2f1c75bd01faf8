// The admin HTTP API (DESIGN.md sections 3 and 6, server/admin/openapi.json) against a real
// in-process server, a real SQLite file and scripted WebSocket agents. Every answer checked
// here is also checked against the schema the document gives for it.
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectAgent, httpBase, httpRequest, type HttpReply } from '../server/control-helpers.js';
import { startTestServer, waitFor, type TestServer } from '../server/wire.js';
import { undocumented } from './openapi-check.js';

let t: TestServer;
let base: string;
beforeAll(async () => {
  t = await startTestServer({}, { controlPollMs: 50 });
  base = httpBase(t);
});
afterAll(async () => {
  await t.close();
});

/** A request whose answer must match the documented schema for (template, method, status). */
async function call(template: string, method: string, url: string, opts: { body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<HttpReply> {
  const res = await httpRequest(`${base}${url}`, { method, ...opts });
  expect(undocumented(template, method, res.status, res.body), `${method} ${url} -> ${res.status} ${res.text.slice(0, 300)}`).toEqual([]);
  return res;
}

const config = (over: Record<string, unknown> = {}) => ({
  heartbeat_interval_secs: 15,
  max_batch_entries: 500,
  flush_interval_ms: 100,
  metrics_interval_secs: 30,
  probe_concurrency: 2,
  log_sources: [],
  ...over,
});

describe('agents', () => {
  it('POST /admin/agents issues a host and its one-time token with the exact enroll command; the token works for a hello', async () => {
    const res = await call('/admin/agents', 'POST', '/admin/agents', { body: { hostname: 'issued-1' } });
    expect(res.status).toBe(201);
    t.tokens.push(res.body.token);
    expect(res.body.enroll_command).toBe(
      `cortex-agent enroll --server ${t.url} --host-id ${res.body.host_id} --token ${res.body.token} --state-dir /var/lib/cortex-agent --allow-insecure`,
    );
    const a = await connectAgent(t, [], { host_id: res.body.host_id, token: res.body.token });
    expect(a.hello.session_id).toBeTypeOf('string');
    a.client.ws.close();
    await a.client.closed;
  });

  it('a bad issue body is 400 -32602 naming the problem; nothing is created', async () => {
    const before = (await call('/admin/agents', 'GET', '/admin/agents')).body.length;
    for (const body of [{}, { hostname: '' }, { hostname: 'a b' }, { hostname: 'x', extra: 1 }]) {
      const res = await call('/admin/agents', 'POST', '/admin/agents', { body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32602);
      expect(res.body.error.message).toMatch(/IssueRequest/);
      expect(res.body.error.data.errors.length).toBeGreaterThan(0);
    }
    const notJson = await call('/admin/agents', 'POST', '/admin/agents', { raw: '{hostname', headers: { 'Content-Type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.message).toMatch(/not valid JSON/);
    expect((await call('/admin/agents', 'GET', '/admin/agents')).body.length).toBe(before);
  });

  it('GET /admin/agents keeps its array shape and filters by state and text, sorts, pages; X-Total-Count counts the matches', async () => {
    const ids: string[] = [];
    for (const name of ['zeta-list', 'alpha-list', 'mid-list']) ids.push((await t.issue(name)).host_id);
    const a = await connectAgent(t); // its hello names it web-1
    const all = await call('/admin/agents', 'GET', '/admin/agents?q=-LIST');
    expect(Array.isArray(all.body)).toBe(true);
    expect(all.body.map((r: { hostname: string }) => r.hostname)).toEqual(['alpha-list', 'mid-list', 'zeta-list']);
    expect(all.headers['x-total-count']).toBe('3');
    expect(all.body.every((r: Record<string, unknown>) => !('token_hash' in r) && !('token_hash_prev' in r))).toBe(true);
    const desc = await call('/admin/agents', 'GET', '/admin/agents?q=list&sort=hostname&order=desc&limit=2');
    expect(desc.body.map((r: { hostname: string }) => r.hostname)).toEqual(['zeta-list', 'mid-list']);
    expect(desc.headers['x-total-count']).toBe('3');
    const page2 = await call('/admin/agents', 'GET', '/admin/agents?q=list&sort=hostname&order=desc&limit=2&offset=2');
    expect(page2.body.map((r: { hostname: string }) => r.hostname)).toEqual(['alpha-list']);
    expect((await call('/admin/agents', 'GET', '/admin/agents?q=list&state=Active')).body).toEqual([]);
    const active = await call('/admin/agents', 'GET', `/admin/agents?state=Active&q=${a.host_id.slice(0, 13).toUpperCase()}`);
    expect(active.body.map((r: { host_id: string; connected_here: boolean }) => [r.host_id, r.connected_here])).toEqual([[a.host_id, true]]);
    const two = await call('/admin/agents', 'GET', '/admin/agents?q=list&state=Active,NeverConnected');
    expect(two.headers['x-total-count']).toBe('3');
    expect(ids.sort()).toEqual(two.body.map((r: { host_id: string }) => r.host_id).sort());
    // LIKE wildcards in the text are taken literally
    expect((await call('/admin/agents', 'GET', '/admin/agents?q=%25')).body).toEqual([]);
    const fleet = await call('/admin/fleet', 'GET', '/admin/fleet');
    expect(fleet.body.by_state.Active).toBeGreaterThanOrEqual(1);
    expect(fleet.body.total).toBe(Object.values(fleet.body.by_state as Record<string, number>).reduce((x, y) => x + y, 0));
    a.client.ws.close();
    await a.client.closed;
  });

  it('bad list parameters are 400 -32602 naming the parameter', async () => {
    for (const [q, word] of [['state=Sleeping', 'state'], ['sort=token_hash', 'sort'], ['limit=0', 'limit'], ['order=up', 'order']] as const) {
      const res = await call('/admin/agents', 'GET', `/admin/agents?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(-32602);
      expect(res.body.error.message).toContain(word);
    }
  });

  it('GET /admin/agents/{host_id}: parsed platform and capabilities; 404 -32004 unknown; 400 not a UUID', async () => {
    const a = await connectAgent(t, ['sys.uptime']);
    const res = await call('/admin/agents/{host_id}', 'GET', `/admin/agents/${a.host_id.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.body.capabilities.supported_probes).toEqual(['sys.uptime']);
    expect(res.body.platform.os).toBe('linux');
    expect(res.body.connection_state).toBe('Active');
    expect(res.body.buffer).toBe(null);
    a.client.notify('agent.heartbeat', { ts: new Date().toISOString(), queue_depth: 12, buffer_bytes: 3400 });
    await waitFor(async () => (await call('/admin/agents/{host_id}', 'GET', `/admin/agents/${a.host_id}`)).body.buffer?.queue_depth === 12);
    const listed = await call('/admin/agents', 'GET', `/admin/agents?q=${a.host_id}`);
    expect(listed.body[0].buffer).toMatchObject({ queue_depth: 12, buffer_bytes: 3400 });
    const unknown = await call('/admin/agents/{host_id}', 'GET', '/admin/agents/00000000-0000-4000-8000-000000000000');
    expect([unknown.status, unknown.body.error.code]).toEqual([404, -32004]);
    const bad = await call('/admin/agents/{host_id}', 'GET', '/admin/agents/not-a-uuid');
    expect([bad.status, bad.body.error.code]).toEqual([400, -32602]);
    a.client.ws.close();
    await a.client.closed;
  });

  it('revoke closes the live session with 4002; rotate on a revoked host is 409; a new token takes it back', async () => {
    const a = await connectAgent(t);
    const res = await call('/admin/agents/{host_id}/revoke', 'POST', `/admin/agents/${a.host_id}/revoke`);
    expect(res.status).toBe(200);
    expect(res.body.connection_state).toBe('Revoked');
    expect((await a.client.closed).code).toBe(4002);
    const logged = t.log.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => r['msg'] === 'admin request' && r['host_id'] === a.host_id);
    expect(logged).toMatchObject({ admin: 'POST /admin/agents/{host_id}/revoke', status: 200, via: 'loopback' });
    const rotate = await call('/admin/agents/{host_id}/rotate', 'POST', `/admin/agents/${a.host_id}/rotate`);
    expect(rotate.status).toBe(409);
    expect(rotate.body.error.message).toContain(`/admin/agents/${a.host_id}/token`);
    const again = await call('/admin/agents/{host_id}/token', 'POST', `/admin/agents/${a.host_id}/token`);
    expect(again.status).toBe(201);
    t.tokens.push(again.body.token);
    const b = await connectAgent(t, [], { host_id: a.host_id, token: again.body.token });
    expect(b.hello.session_id).toBeTypeOf('string');
    b.client.ws.close();
    await b.client.closed;
  });

  it('rotate asks a connected agent to reconnect and records the grace; a bad body is 400', async () => {
    const a = await connectAgent(t);
    const bad = await call('/admin/agents/{host_id}/rotate', 'POST', `/admin/agents/${a.host_id}/rotate`, { body: { grace_secs: -1 } });
    expect(bad.status).toBe(400);
    const res = await call('/admin/agents/{host_id}/rotate', 'POST', `/admin/agents/${a.host_id}/rotate`, { body: { grace_secs: 42 } });
    expect(res.status).toBe(200);
    const row = await call('/admin/agents/{host_id}', 'GET', `/admin/agents/${a.host_id}`);
    expect(row.body.rotation_grace_secs).toBe(42);
    expect(row.body.rotate_requested_at).toBeTypeOf('string');
    a.client.ws.close();
    await a.client.closed;
  });

  it('decommission of a host not connected revokes it at once; of a connected one, drains then revokes', async () => {
    const idle = await t.issue('idle-host');
    const res = await call('/admin/agents/{host_id}/decommission', 'POST', `/admin/agents/${idle.host_id}/decommission`);
    expect(res.body.connection_state).toBe('Revoked');
    const a = await connectAgent(t);
    const live = await call('/admin/agents/{host_id}/decommission', 'POST', `/admin/agents/${a.host_id}/decommission`, { body: { drain_secs: 0 } });
    expect(live.body.connection_state).toBe('Active');
    const shutdown = await a.client.next((m) => m.method === 'agent.shutdown');
    expect(shutdown.params.reason).toBe('Decommission');
    await waitFor(async () => (await call('/admin/agents/{host_id}', 'GET', `/admin/agents/${a.host_id}`)).body.connection_state === 'Revoked');
    a.client.ws.close();
  });
});

describe('config', () => {
  it('PUT validates with the generated AgentConfig validator (400 with the failing path, nothing stored)', async () => {
    const a = await t.issue('cfg-bad');
    const res = await call('/admin/agents/{host_id}/config', 'PUT', `/admin/agents/${a.host_id}/config`, { body: { config: config({ probe_concurrency: 'four' }) } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(-32602);
    expect(res.body.error.data.errors[0].path).toBe('/config/probe_concurrency');
    const incomplete = await call('/admin/agents/{host_id}/config', 'PUT', `/admin/agents/${a.host_id}/config`, { body: { config: { heartbeat_interval_secs: 5 } } });
    expect(incomplete.status).toBe(400);
    const view = await call('/admin/agents/{host_id}/config', 'GET', `/admin/agents/${a.host_id}/config`);
    expect(view.body).toMatchObject({ config_version: 0, stored: null, source: 'default' });
  });

  it('PUT reaches the connected agent as config.update with exactly that config; GET shows it; DELETE returns to the default', async () => {
    const a = await connectAgent(t);
    const cfg = config({ heartbeat_interval_secs: 7 });
    const res = await call('/admin/agents/{host_id}/config', 'PUT', `/admin/agents/${a.host_id}/config`, { body: { config: cfg } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stored: cfg, effective: cfg, source: 'host' });
    const upd = await a.client.next((m) => m.method === 'config.update');
    expect(upd.params.config).toEqual(cfg);
    const cleared = await call('/admin/agents/{host_id}/config', 'DELETE', `/admin/agents/${a.host_id}/config`);
    expect(cleared.body.source).toBe('default');
    expect(cleared.body.stored).toBe(null);
    const second = await a.client.next((m) => m.method === 'config.update' && m !== upd);
    expect(second.params.config).toEqual(cleared.body.effective);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('logs and metrics', () => {
  it('query: newest first, severity at least, source, text, time range, cursor paging', async () => {
    const a = await connectAgent(t);
    const sev = ['info', 'err', 'debug', 'warning', 'crit'];
    const entries = Array.from({ length: 10 }, (_, i) => ({
      seq: i + 1,
      ts: new Date(Date.UTC(2026, 4, 16, 12, 0, i)).toISOString(),
      severity: sev[i % 5],
      message: i === 7 ? 'Disk FULL on /var' : `line ${i + 1}`,
      source: i % 2 === 0 ? 'custom:a' : 'custom:b',
    }));
    const ack = await a.client.request('logs.push', { seq_start: 1, entries });
    expect(ack.error).toBeUndefined();
    const u = `/admin/agents/${a.host_id}/logs`;
    const T = '/admin/agents/{host_id}/logs';
    const all = await call(T, 'GET', u);
    expect(all.body.items.map((r: { seq: number }) => r.seq)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(all.body.next_cursor).toBe(null);
    const severe = await call(T, 'GET', `${u}?severity=err`);
    expect(severe.body.items.map((r: { severity: string }) => r.severity).sort()).toEqual(['crit', 'crit', 'err', 'err']);
    const source = await call(T, 'GET', `${u}?source=custom:b&severity=warning`);
    expect(source.body.items.map((r: { seq: number }) => r.seq)).toEqual([10, 4, 2]);
    const text = await call(T, 'GET', `${u}?q=disk%20full`);
    expect(text.body.items.map((r: { seq: number }) => r.seq)).toEqual([8]);
    const range = await call(T, 'GET', `${u}?from=2026-05-16T12:00:02Z&to=2026-05-16T12:00:05Z`);
    expect(range.body.items.map((r: { seq: number }) => r.seq)).toEqual([5, 4, 3]);
    const p1 = await call(T, 'GET', `${u}?limit=4`);
    expect(p1.body.items.map((r: { seq: number }) => r.seq)).toEqual([10, 9, 8, 7]);
    const p2 = await call(T, 'GET', `${u}?limit=4&cursor=${p1.body.next_cursor}`);
    expect(p2.body.items.map((r: { seq: number }) => r.seq)).toEqual([6, 5, 4, 3]);
    const p3 = await call(T, 'GET', `${u}?limit=4&cursor=${p2.body.next_cursor}`);
    expect(p3.body.items.map((r: { seq: number }) => r.seq)).toEqual([2, 1]);
    expect(p3.body.next_cursor).toBe(null);
    for (const bad of ['severity=loud', 'from=yesterday', 'limit=5000', 'cursor=abc', 'from=2026-05-16T12:00:05Z&to=2026-05-16T12:00:01Z']) {
      const res = await call(T, 'GET', `${u}?${bad}`);
      expect(res.status, bad).toBe(400);
    }
    a.client.ws.close();
    await a.client.closed;
  });

  it('live tail (SSE): backlog, then new rows as they commit; Last-Event-ID resumes after that seq; filters apply', async () => {
    const a = await connectAgent(t);
    const push = (from: number, n: number, severity = 'info') =>
      a.client.request('logs.push', {
        seq_start: from,
        entries: Array.from({ length: n }, (_, i) => ({ seq: from + i, ts: new Date().toISOString(), severity, message: `tail ${from + i}`, source: 'custom:t' })),
      });
    await push(1, 3);
    const first = openStream(`/admin/agents/${a.host_id}/logs/stream?backlog=2`);
    await first.until((ev) => ev.length >= 2);
    expect(first.events.map((e) => e.id)).toEqual(['2', '3']);
    expect(first.contentType).toMatch(/^text\/event-stream/);
    await push(4, 2);
    await first.until((ev) => ev.length >= 4);
    expect(first.events.map((e) => [e.id, JSON.parse(e.data).message])).toEqual([['2', 'tail 2'], ['3', 'tail 3'], ['4', 'tail 4'], ['5', 'tail 5']]);
    first.close();
    await push(6, 2);
    const resumed = openStream(`/admin/agents/${a.host_id}/logs/stream`, { 'Last-Event-ID': '5' });
    await resumed.until((ev) => ev.length >= 2);
    expect(resumed.events.map((e) => e.id)).toEqual(['6', '7']);
    resumed.close();
    const filtered = openStream(`/admin/agents/${a.host_id}/logs/stream?backlog=0&severity=err`);
    await filtered.opened;
    await push(8, 2, 'info');
    await push(10, 1, 'err');
    await filtered.until((ev) => ev.length >= 1);
    expect(filtered.events.map((e) => e.id)).toEqual(['10']);
    filtered.close();
    const unknown = await httpRequest(`${base}/admin/agents/00000000-0000-4000-8000-000000000000/logs/stream`);
    expect([unknown.status, unknown.body.error.code]).toEqual([404, -32004]);
    a.client.ws.close();
    await a.client.closed;
  });

  it('metrics: names of a host, then one name over a range, oldest first', async () => {
    const a = await connectAgent(t);
    for (let i = 0; i < 3; i++) {
      const ts = new Date(Date.now() - (3 - i) * 60_000).toISOString();
      const r = await a.client.request('metrics.push', { ts, samples: [{ name: 'cpu.load1', value: i + 0.5 }, { name: 'mem.used_bytes', value: 1000 * i }] });
      expect(r.error).toBeUndefined();
    }
    const T = '/admin/agents/{host_id}/metrics';
    const names = await call(T, 'GET', `/admin/agents/${a.host_id}/metrics`);
    expect(names.body.names).toEqual(['cpu.load1', 'mem.used_bytes']);
    const series = await call(T, 'GET', `/admin/agents/${a.host_id}/metrics?name=cpu.load1`);
    expect(series.body.samples.map((s: { value: number }) => s.value)).toEqual([0.5, 1.5, 2.5]);
    const limited = await call(T, 'GET', `/admin/agents/${a.host_id}/metrics?name=cpu.load1&limit=2`);
    expect(limited.body.samples.map((s: { value: number }) => s.value)).toEqual([1.5, 2.5]);
    expect(limited.body.truncated).toBe(true);
    const from = new Date(Date.now() - 150_000).toISOString();
    const ranged = await call(T, 'GET', `/admin/agents/${a.host_id}/metrics?name=cpu.load1&from=${from}`);
    expect(ranged.body.samples.map((s: { value: number }) => s.value)).toEqual([1.5, 2.5]);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('server', () => {
  it('GET /admin/settings: the effective settings, read-only', async () => {
    const res = await call('/admin/settings', 'GET', '/admin/settings');
    expect(res.body).toMatchObject({ admin_token_set: false, max_batch_entries: 1000, listen: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
    expect(res.body).not.toHaveProperty('admin_token');
    const put = await httpRequest(`${base}/admin/settings`, { method: 'PUT', body: {} });
    expect([put.status, put.headers['allow']]).toEqual([405, 'GET']);
  });

  it('GET /admin/probes: every probe of the registry with its args schema', async () => {
    const res = await call('/admin/probes', 'GET', '/admin/probes');
    const disk = res.body.find((p: { name: string }) => p.name === 'fs.disk_usage');
    expect(disk.args_schema.required).toEqual(['path']);
    // each schema is the package's schemas/probes/ file (less its @generated comment), served from data
    const dir = join(dirname(fileURLToPath(import.meta.url)), '../../generated/schemas/probes');
    const file = (f: string): unknown => {
      const { $comment: _generated, ...schema } = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>;
      return schema;
    };
    const names = readdirSync(dir).filter((f) => f.endsWith('.args.json')).map((f) => f.slice(0, -'.args.json'.length)).sort();
    expect(res.body.map((p: { name: string }) => p.name).sort()).toEqual(names);
    for (const p of res.body as { name: string; args_schema: unknown; output_schema: unknown }[]) {
      expect(p.args_schema, p.name).toEqual(file(`${p.name}.args.json`));
      expect(p.output_schema, p.name).toEqual(file(`${p.name}.output.json`));
    }
  });

  it('an unknown admin path is 404 pointing at the document', async () => {
    const res = await httpRequest(`${base}/admin/nothing`);
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('/admin/openapi.json');
  });
});

interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

function openStream(path: string, headers: Record<string, string> = {}) {
  const events: SseEvent[] = [];
  const waiters: (() => void)[] = [];
  let contentType = '';
  let req!: http.ClientRequest;
  const opened = new Promise<void>((resolve, reject) => {
    req = http.get(`${base}${path}`, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
      contentType = String(res.headers['content-type']);
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev: SseEvent = { id: undefined, event: undefined, data: '' };
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) ev.id = line.slice(4);
            else if (line.startsWith('event: ')) ev.event = line.slice(7);
            else if (line.startsWith('data: ')) ev.data += line.slice(6);
          }
          if (ev.event === 'log') events.push(ev);
        }
        for (const w of waiters.splice(0)) w();
      });
      res.on('error', () => undefined);
      resolve();
    });
    req.on('error', reject);
  });
  return {
    events,
    opened,
    get contentType() {
      return contentType;
    },
    async until(pred: (ev: SseEvent[]) => boolean): Promise<void> {
      await opened;
      while (!pred(events)) await new Promise<void>((r) => waiters.push(r));
    },
    close() {
      req.destroy();
    },
  };
}
