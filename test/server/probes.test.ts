// Probe router and admin HTTP API (seed 4.6-4.7, 8; DESIGN.md section 3) with a real server
// on 127.0.0.1:0, a real SQLite file and scripted WebSocket agents.
import { execFile } from 'node:child_process';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAdminAuth } from '../../server/admin.js';
import { answer, answerError, connectAgent, httpBase, httpRequest, metricValue, nextProbe } from './control-helpers.js';
import { requireServerCli, CLI, ROOT } from './spawn.js';
import { startTestServer, type TestServer } from './wire.js';

/** The compiled CLI, asynchronously (the in-process server must keep answering). */
function cliAsync(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

let t: TestServer;
let base: string;
beforeAll(async () => {
  requireServerCli();
  t = await startTestServer({}, { probeGraceMs: 150 });
  base = httpBase(t);
}, 60_000);
afterAll(async () => {
  await t.close();
});

const probeUrl = (host: string) => `${base}/admin/agents/${host}/probe`;

describe('probe router through POST /admin/agents/{host_id}/probe', () => {
  it('round trip: the agent gets probe.request, its ProbeOutput comes back verbatim (any output shape: only the envelope is checked)', async () => {
    const a = await connectAgent(t, ['sys.uptime', 'acme.custom']);
    const pending = httpRequest(probeUrl(a.host_id), { body: { probe: 'acme.custom', args: { x: [1, 2] }, timeout_ms: 3000 } });
    const req = await nextProbe(a.client);
    expect(req.params).toEqual({ probe: 'acme.custom', args: { x: [1, 2] }, timeout_ms: 3000 });
    const output = { output: { anything: ['goes', { here: true }] }, exit_code: 0, stderr: null, duration_ms: 12 };
    answer(a.client, req.id, output);
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body).toEqual(output);
    a.client.ws.close();
    await a.client.closed;
  });

  it('out-of-order responses are correlated by id', async () => {
    const a = await connectAgent(t);
    const seen = new Set<unknown>();
    const p1 = httpRequest(probeUrl(a.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 3000 } });
    const r1 = await nextProbe(a.client, seen);
    const p2 = httpRequest(probeUrl(a.host_id), { body: { probe: 'exec.systemctl_status', args: { unit: 'nginx.service' }, timeout_ms: 3000 } });
    const r2 = await nextProbe(a.client, seen);
    expect(r1.id).not.toBe(r2.id);
    answer(a.client, r2.id, { output: { which: 2 }, duration_ms: 2 });
    answer(a.client, r1.id, { output: { which: 1 }, duration_ms: 1 });
    const [o1, o2] = await Promise.all([p1, p2]);
    expect(o1.body.output).toEqual({ which: 1 });
    expect(o2.body.output).toEqual({ which: 2 });
    a.client.ws.close();
    await a.client.closed;
  });

  it('the agent\'s own errors pass through unchanged as 502 (-32011 with stderr/exit_code, -32010, -32602, -32012)', async () => {
    const a = await connectAgent(t);
    const seen = new Set<unknown>();
    const errors = [
      { code: -32011, message: 'ProbeExecutionFailed', data: { stderr: 'Unit nginx.service could not be found.', exit_code: 4 } },
      { code: -32010, message: 'ProbeUnavailable', data: { probe: 'sys.uptime' } },
      { code: -32602, message: 'InvalidParams', data: { errors: [{ path: '/args/unit', message: 'is required' }] } },
      { code: -32012, message: 'ProbeTimeout', data: { probe: 'sys.uptime', timeout_ms: 3000 } },
    ];
    for (const e of errors) {
      const pending = httpRequest(probeUrl(a.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 3000 } });
      const req = await nextProbe(a.client, seen);
      answerError(a.client, req.id, e);
      const res = await pending;
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ error: e });
    }
    a.client.ws.close();
    await a.client.closed;
  });

  it('unlisted probe: 422 -32010 and nothing is sent', async () => {
    const a = await connectAgent(t, ['sys.uptime']);
    const res = await httpRequest(probeUrl(a.host_id), { body: { probe: 'fs.disk_usage', args: { path: '/' }, timeout_ms: 1000 } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe(-32010);
    expect(res.body.error.data.probe).toBe('fs.disk_usage');
    // a listed probe afterwards is the first probe.request the agent ever saw
    const pending = httpRequest(probeUrl(a.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 1000 } });
    const req = await nextProbe(a.client);
    expect(req.params.probe).toBe('sys.uptime');
    expect(a.client.messages.filter((m) => m.method === 'probe.request')).toHaveLength(1);
    answer(a.client, req.id, { output: 1, duration_ms: 1 });
    expect((await pending).status).toBe(200);
    a.client.ws.close();
    await a.client.closed;
  });

  it('timeout: 504 -32012 at timeout_ms + grace; the late answer is dropped and counted', async () => {
    const a = await connectAgent(t);
    const seen = new Set<unknown>();
    const before = metricValue(await (await fetch(`${base}/metrics`)).text(), 'cortex_probe_late_answers_total');
    const started = Date.now();
    const pending = httpRequest(probeUrl(a.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 300 } });
    const req = await nextProbe(a.client, seen);
    const res = await pending;
    const took = Date.now() - started;
    expect(res.status).toBe(504);
    expect(res.body).toEqual({ error: { code: -32012, message: 'ProbeTimeout', data: { probe: 'sys.uptime', timeout_ms: 300 } } });
    expect(took).toBeGreaterThanOrEqual(440);
    expect(took).toBeLessThan(2000);
    answer(a.client, req.id, { output: 'late', duration_ms: 900 });
    let after = NaN;
    const end = Date.now() + 2000;
    while (Date.now() < end) {
      after = metricValue(await (await fetch(`${base}/metrics`)).text(), 'cortex_probe_late_answers_total');
      if (after === before + 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(after).toBe(before + 1);
    // the session is unaffected
    const p2 = httpRequest(probeUrl(a.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 1000 } });
    const r2 = await nextProbe(a.client, seen);
    answer(a.client, r2.id, { output: 'ok', duration_ms: 1 });
    expect((await p2).status).toBe(200);
    a.client.ws.close();
    await a.client.closed;
  });

  it('session closed mid-probe: 503 -32603 at once', async () => {
    const a = await connectAgent(t);
    const started = Date.now();
    const pending = httpRequest(probeUrl(a.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 20_000 } });
    await nextProbe(a.client);
    a.client.ws.close(1000, 'final_seq=0');
    const res = await pending;
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe(-32603);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('400 -32602 for bad bodies with a clear message; 404 -32004 for unknown and unconnected hosts', async () => {
    const a = await connectAgent(t);
    for (const raw of ['not json', '[1]', '{"args": {}}', '{"probe": "", "args": {}}', '{"probe": "sys.uptime", "timeout_ms": 0}', '{"probe": "sys.uptime", "timeout_ms": "5"}', '{"probe": "sys.uptime", "extra": 1}']) {
      const res = await httpRequest(probeUrl(a.host_id), { raw });
      expect(res.status, raw).toBe(400);
      expect(res.body.error.code).toBe(-32602);
      expect(res.body.error.data.reason.length).toBeGreaterThan(10);
    }
    const unknown = await httpRequest(probeUrl('2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01'), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 100 } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe(-32004);
    const issued = await t.issue('never-connected');
    const off = await httpRequest(probeUrl(issued.host_id), { body: { probe: 'sys.uptime', args: {}, timeout_ms: 100 } });
    expect(off.status).toBe(404);
    expect(off.body.error.code).toBe(-32004);
    expect(off.body.error.data.reason).toMatch(/not connected/);
    a.client.ws.close();
    await a.client.closed;
  });

  it('GET /admin/agents lists agents without token hashes', async () => {
    const a = await connectAgent(t);
    const res = await httpRequest(`${base}/admin/agents`);
    expect(res.status).toBe(200);
    const row = (res.body as any[]).find((r) => r.host_id === a.host_id);
    expect(row.connection_state).toBe('Active');
    expect(row.connected_here).toBe(true);
    expect(res.text).not.toMatch(/token_hash/);
    expect(res.text).not.toContain(a.token);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('probe CLI', () => {
  it('prints the ProbeOutput JSON; on a JSON-RPC error prints it and exits 1', async () => {
    const a = await connectAgent(t);
    const seen = new Set<unknown>();
    const run = cliAsync(['probe', a.host_id, 'exec.systemctl_status', '--args', '{"unit":"nginx.service"}', '--timeout-ms', '3000', '--url', base]);
    const req = await nextProbe(a.client, seen);
    expect(req.params).toEqual({ probe: 'exec.systemctl_status', args: { unit: 'nginx.service' }, timeout_ms: 3000 });
    answer(a.client, req.id, { output: { active: true, substate: 'running' }, exit_code: 0, stderr: null, duration_ms: 142 });
    const ok = await run;
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ output: { active: true, substate: 'running' }, exit_code: 0, stderr: null, duration_ms: 142 });
    // a probe that could not run (exit_code null): stderr names why, and no advice about --server or the token
    const failing = cliAsync(['probe', a.host_id, 'exec.systemctl_status', '--args', '{"unit":"nginx.service"}', '--url', base]);
    const freq = await nextProbe(a.client, seen);
    a.client.ws.send(JSON.stringify({ jsonrpc: '2.0', id: freq.id, error: { code: -32011, message: 'ProbeExecutionFailed', data: { probe: 'exec.systemctl_status', exit_code: null, stderr: 'systemctl could not be run: ENOENT' } } }));
    const failed = await failing;
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^cortex-server: error\[E_ADMIN_API\]: HTTP 502: -32011 .*: systemctl could not be run: ENOENT — the probe ran on the host and failed: see the reason$/m);
    // the agent refusing the arguments is not "the probe ran and failed"
    const badArgs = cliAsync(['probe', a.host_id, 'exec.systemctl_status', '--args', '{"bad":1}', '--url', base]);
    const breq = await nextProbe(a.client, seen);
    a.client.ws.send(JSON.stringify({ jsonrpc: '2.0', id: breq.id, error: { code: -32602, message: 'InvalidParams', data: { reason: "args must have required property 'unit'" } } }));
    const refused = await badArgs;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/HTTP 502: -32602 .*args must have required property 'unit' — the host's agent refused --args: see the reason for what is wrong/m);
    expect(refused.stderr).not.toContain('the probe ran on the host');
    const bad = await cliAsync(['probe', a.host_id, 'not.listed', '--url', t.url]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).error.code).toBe(-32010);
    const usage = await cliAsync(['probe', a.host_id, 'sys.uptime']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--server is required \(or \$CORTEX_SERVER; --url is its older name\)/);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('admin auth', () => {
  it('without a token: loopback only, never through a proxy (403 with X-Forwarded-For or Forwarded)', async () => {
    for (const headers of [{ 'X-Forwarded-For': '203.0.113.7' }, { Forwarded: 'for=203.0.113.7' }] as Record<string, string>[]) {
      const res = await httpRequest(`${base}/admin/agents`, { headers });
      expect(res.status).toBe(403);
      const probe = await httpRequest(probeUrl('2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01'), { body: { probe: 'x' }, headers });
      expect(probe.status).toBe(403);
    }
    expect(checkAdminAuth({ headers: {}, socket: { remoteAddress: '10.1.2.3' } }, undefined)).toMatchObject({ ok: false, status: 403 });
    expect(checkAdminAuth({ headers: {}, socket: { remoteAddress: '::ffff:127.0.0.1' } }, undefined)).toEqual({ ok: true });
    expect(checkAdminAuth({ headers: {}, socket: { remoteAddress: '::1' } }, undefined)).toEqual({ ok: true });
  });

  it('a non-loopback peer is refused (403) when the server listens on a non-loopback address', async () => {
    const ext = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal);
    if (!ext) return; // no non-loopback interface on this machine: covered by the checkAdminAuth unit above
    const s = await startTestServer({ listen: '0.0.0.0:0', allow_insecure: true });
    try {
      const res = await httpRequest(`http://${ext.address}:${s.server.port}/admin/agents`);
      expect(res.status).toBe(403);
      const local = await httpRequest(`http://127.0.0.1:${s.server.port}/admin/agents`);
      expect(local.status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('with a token: 401 without or with a wrong bearer, 200 with it (also from behind a proxy)', async () => {
    const s = await startTestServer({ admin_token: 'admin-secret-token-1234567890' });
    try {
      const b = httpBase(s);
      const none = await httpRequest(`${b}/admin/agents`);
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toMatch(/Bearer/);
      expect((await httpRequest(`${b}/admin/agents`, { headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
      expect((await httpRequest(`${b}/admin/agents`, { headers: { Authorization: 'Basic admin-secret-token-1234567890' } })).status).toBe(401);
      const ok = await httpRequest(`${b}/admin/agents`, { headers: { Authorization: 'Bearer admin-secret-token-1234567890', 'X-Forwarded-For': '203.0.113.7' } });
      expect(ok.status).toBe(200);
      expect(Array.isArray(ok.body)).toBe(true);
      const probe = await httpRequest(`${b}/admin/agents/2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01/probe`, { body: { probe: 'x', args: {}, timeout_ms: 10 } });
      expect(probe.status).toBe(401);
      for (const line of s.log.lines) expect(line).not.toContain('admin-secret-token-1234567890');
    } finally {
      await s.close();
    }
  });
});

describe('/metrics and /healthz', () => {
  it('Prometheus text with the control-plane and ingest metrics; no token in it', async () => {
    const a = await connectAgent(t);
    const r = await a.client.request('logs.push', { seq_start: 1, entries: [{ seq: 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'm', source: 'custom:t' }] });
    expect(r.result.up_to_seq).toBe(1);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    const text = await res.text();
    expect(metricValue(text, 'cortex_connections_active')).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_handshakes_total', { result: 'enrolled' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_frames_in_total', { method: 'logs.push' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_frames_out_total', { method: 'logs.push' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_frames_out_total', { method: 'probe.request' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_logs_pushed_entries_total')).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_ack_lag_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_probe_requests_total', { probe: 'sys.uptime', result: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_probe_requests_total', { result: 'timeout' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_probe_requests_total', { result: 'unlisted' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_probe_requests_total', { result: 'session_closed' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_probe_duration_seconds_count', { probe: 'sys.uptime' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_disconnects_total', { code: '1000' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(text, 'cortex_ingest_queue_depth_entries')).toBe(0);
    expect(text).toContain('cortex_gaps_seen_total');
    expect(text).toContain('cortex_retention_purged_rows_total');
    expect(text).toContain('cortex_probe_late_answers_total');
    for (const token of t.tokens) expect(text).not.toContain(token);
    const health = await httpRequest(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', database: 'ok' });
    a.client.ws.close();
    await a.client.closed;
  });
});
