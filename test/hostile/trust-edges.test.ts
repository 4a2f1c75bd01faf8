// Issue 18, trust edges of the server (DECISIONS H6, H7, H10): forwarding headers on the
// admin API and /metrics, the failed-hello throttle, browser Origins, the admin token from a
// file or the environment, a malformed %-escape, a hello without protocol_version, and the
// audit row of an admin API action.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../../server/security/audit.js';
import { makeTempDir } from '../server/helpers.js';
import { requireServerCli, serve } from '../server/spawn.js';
import { openSocket } from '../../agent/socket.js';
import { connectHint } from '../../agent/cli-main.js';
import { TestClient, helloParams, startTestServer, type TestServer } from '../server/wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const http = (t: TestServer) => t.url.replace(/^ws/, 'http').replace(/\/ws\/agent$/, '');

describe('admin API and /metrics behind a proxy', () => {
  it('refuses a loopback request carrying any forwarding header (X-Real-IP alone included); serves one without', async () => {
    t = await startTestServer();
    const base = http(t);
    expect((await fetch(`${base}/admin/agents`)).status).toBe(200);
    for (const h of ['X-Real-IP', 'X-Forwarded-Host', 'X-Client-IP', 'True-Client-IP', 'X-Forwarded-For', 'Forwarded', 'CF-Connecting-IP']) {
      const r = await fetch(`${base}/admin/agents`, { headers: { [h]: h === 'Forwarded' ? 'for=203.0.113.7' : '203.0.113.7' } });
      expect(r.status, h).toBe(403);
      expect(((await r.json()) as { error: { message: string } }).error.message).toContain('--admin-token');
    }
  });

  it('a trusted proxy may vouch for a loopback client through X-Forwarded-For, never for a remote one', async () => {
    t = await startTestServer({ trusted_proxies: ['127.0.0.1'] });
    const base = http(t);
    expect((await fetch(`${base}/admin/agents`, { headers: { 'X-Forwarded-For': '127.0.0.1' } })).status).toBe(200);
    expect((await fetch(`${base}/admin/agents`, { headers: { 'X-Forwarded-For': '198.51.100.4, 127.0.0.1' } })).status).toBe(403);
    expect((await fetch(`${base}/admin/agents`, { headers: { 'X-Forwarded-For': '127.0.0.1', 'X-Real-IP': '198.51.100.4' } })).status).toBe(403);
  });

  it('/metrics follows the same rule unless metrics_public (--metrics-public)', async () => {
    t = await startTestServer();
    expect((await fetch(`${http(t)}/metrics`)).status).toBe(200);
    expect((await fetch(`${http(t)}/metrics`, { headers: { 'X-Real-IP': '203.0.113.7' } })).status).toBe(403);
    await t.close();
    t = await startTestServer({ metrics_public: true });
    expect((await fetch(`${http(t)}/metrics`, { headers: { 'X-Real-IP': '203.0.113.7' } })).status).toBe(200);
  });

  it('a malformed %-escape in an admin URL is 400, not 500', async () => {
    t = await startTestServer();
    const r = await fetch(`${http(t)}/admin/agents/%E0%A4%A/probe`, { method: 'POST', body: '{"probe":"os.release"}' });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain('percent-encoding');
  });

  it('an admin API probe is audited with actor loopback', async () => {
    t = await startTestServer();
    const r = await fetch(`${http(t)}/admin/agents/2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01/probe`, { method: 'POST', body: '{"probe":"os.release"}' });
    expect(r.status).toBe(404);
    const rows = await listAudit(t.server.storage.db);
    expect(rows).toMatchObject([{ actor: 'loopback', action: 'probe', host_id: '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', detail: { via: 'admin-api' } }]);
  });
});

describe('failed hellos and browser origins', () => {
  it('wrong-token hellos from loopback are throttled: from the 5th on, the upgrade gets 429; counted in /metrics', async () => {
    t = await startTestServer();
    const h = await t.issue();
    let refused: { status?: number } | undefined;
    for (let i = 0; i < 8 && refused === undefined; i++) {
      try {
        const c = await TestClient.open(t.url);
        const r = await c.request('agent.hello', helloParams(h.host_id, 'wrong-token-' + 'x'.repeat(40)));
        expect(r.error?.code).toBe(-32001);
        await c.closed;
      } catch (err) {
        refused = err as { status?: number };
        expect(i).toBe(5);
      }
    }
    expect(refused?.status).toBe(429);
    const metrics = await (await fetch(`${http(t)}/metrics`)).text();
    expect(metrics).toMatch(/cortex_hello_auth_failures_total 5/);
    expect(metrics).toMatch(/cortex_upgrades_refused_total\{reason="failed_hellos"\} 1/);
    // the agent says it is throttled, with the wait, instead of "check that the server runs"
    // (in-process, at once: the throttle's first wait is 1 s)
    const upgrade = await openSocket(t.url).then(
      () => '',
      (err: unknown) => (err as Error).message,
    );
    expect(upgrade).toMatch(/^server refused the WebSocket upgrade: HTTP 429 Too Many Requests \(Retry-After \d+ s\)$/);
    expect(connectHint(upgrade, false, t.url)).toMatch(/^the server throttles this address: .* check the token/);
  });

  it('an upgrade with an Origin header is refused 403 unless the origin is allowed', async () => {
    t = await startTestServer({ allowed_origins: ['https://console.example'] });
    await expect(TestClient.open(t.url, { headers: { Origin: 'https://evil.example' } })).rejects.toMatchObject({ status: 403 });
    const ok = await TestClient.open(t.url, { headers: { Origin: 'https://console.example' } });
    ok.ws.close();
    await ok.closed;
    const plain = await TestClient.open(t.url);
    plain.ws.close();
    await plain.closed;
  });

  it('a hello without protocol_version is -32602, not -32003', async () => {
    t = await startTestServer();
    const h = await t.issue();
    const c = await TestClient.open(t.url);
    const p = helloParams(h.host_id, h.token) as unknown as Record<string, unknown>;
    delete p['protocol_version'];
    const r = await c.request('agent.hello', p);
    expect(r.error?.code).toBe(-32602);
    expect(JSON.stringify(r.error?.data)).toContain('/protocol_version');
    await c.closed;
  });
});

describe('serve: the admin token from a file or the environment', () => {
  beforeAll(() => requireServerCli(), 60_000);

  for (const mode of ['file', 'env'] as const) {
    it(`--admin-token-file / CORTEX_ADMIN_TOKEN (${mode})`, async () => {
      const dir = makeTempDir();
      const token = 'file-admin-token-' + 'z'.repeat(30);
      const file = join(dir, 'admin-token');
      writeFileSync(file, `${token}\n`, { mode: 0o600 });
      const args = ['--db', join(dir, 'c.db'), ...(mode === 'file' ? ['--admin-token-file', file] : [])];
      const s = await serve(args, mode === 'env' ? { CORTEX_ADMIN_TOKEN: token } : {});
      try {
        const base = `http://127.0.0.1:${s.port}`;
        expect((await fetch(`${base}/admin/agents`)).status).toBe(401);
        expect((await fetch(`${base}/admin/agents`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
        expect(s.stderr()).not.toContain(token);
      } finally {
        s.child.kill('SIGTERM');
        await s.exited;
      }
    });
  }
});
