// Access to the admin API and console sessions: Bearer token, sign-in cookie (HttpOnly,
// SameSite=Strict) with a CSRF token for state-changing requests, and the loopback mode's
// protection against web pages (cross-site POSTs, DNS rebinding).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpBase, httpRequest } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';

const ADMIN_TOKEN = 'console-test-admin-token-0123456789';

function cookieOf(setCookie: string[] | undefined): string {
  const line = (setCookie ?? [])[0] ?? '';
  return line.split(';')[0] as string;
}

describe('with an admin token', () => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer({ admin_token: ADMIN_TOKEN, max_batch_entries: 200 });
    t.tokens.push(ADMIN_TOKEN);
    base = httpBase(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses a request without credentials (401 with WWW-Authenticate) and serves one with the Bearer token', async () => {
    const no = await httpRequest(`${base}/admin/agents`);
    expect(no.status).toBe(401);
    expect(no.headers['www-authenticate']).toContain('Bearer');
    expect(no.body.error.code).toBe(401);
    const wrong = await httpRequest(`${base}/admin/agents`, { headers: { Authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const ok = await httpRequest(`${base}/admin/agents`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(ok.status).toBe(200);
  });

  it('sign-in with a wrong or missing token is refused and sets no cookie; the error never echoes the token', async () => {
    for (const body of [{ token: 'wrong-token-value' }, {}]) {
      const res = await httpRequest(`${base}/admin/session`, { body });
      expect(res.status).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.text).not.toContain('wrong-token-value');
    }
    const state = await httpRequest(`${base}/admin/session`);
    expect(state.body).toEqual({ authenticated: false, mode: 'token', via: 'none' });
  });

  it('sign-in sets an HttpOnly SameSite=Strict cookie; reads work with it; a change needs the session CSRF token', async () => {
    const res = await httpRequest(`${base}/admin/session`, { body: { token: ADMIN_TOKEN } });
    expect(res.status).toBe(200);
    const set = (res.headers['set-cookie'] ?? [])[0] as string;
    expect(set).toMatch(/^cortex_session=[^;]+; HttpOnly; SameSite=Strict; Path=\//);
    expect(set).not.toContain(ADMIN_TOKEN);
    const cookie = cookieOf(res.headers['set-cookie']);
    const csrf = res.body.csrf_token as string;
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const read = await httpRequest(`${base}/admin/agents`, { headers: { Cookie: cookie } });
    expect(read.status).toBe(200);
    const again = await httpRequest(`${base}/admin/session`, { headers: { Cookie: cookie } });
    expect(again.body).toEqual({ authenticated: true, mode: 'token', via: 'cookie', csrf_token: csrf });

    const noCsrf = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'csrf-less' }, headers: { Cookie: cookie } });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error.message).toContain('X-CSRF-Token');
    const wrongCsrf = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'csrf-wrong' }, headers: { Cookie: cookie, 'X-CSRF-Token': `${csrf.slice(0, -2)}xx` } });
    expect(wrongCsrf.status).toBe(403);
    const listed = await httpRequest(`${base}/admin/agents?q=csrf-`, { headers: { Cookie: cookie } });
    expect(listed.body).toEqual([]);
    const withCsrf = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'csrf-ok' }, headers: { Cookie: cookie, 'X-CSRF-Token': csrf } });
    expect(withCsrf.status).toBe(201);
    t.tokens.push(withCsrf.body.token);
  });

  it('a forged or tampered cookie is not a session (401, "sign in again")', async () => {
    const res = await httpRequest(`${base}/admin/session`, { body: { token: ADMIN_TOKEN } });
    const cookie = cookieOf(res.headers['set-cookie']);
    const [payload, mac] = cookie.slice('cortex_session='.length).split('.') as [string, string];
    const longer = Buffer.from(JSON.stringify({ exp: Date.now() + 1e12, n: 'x' })).toString('base64url');
    for (const forged of [`cortex_session=${longer}.${mac}`, `cortex_session=${payload}.${mac.slice(1)}A`, 'cortex_session=garbage']) {
      const r = await httpRequest(`${base}/admin/agents`, { headers: { Cookie: forged } });
      expect(r.status).toBe(401);
      expect(r.body.error.message).toContain('sign in again');
    }
  });

  it('a sign-in posted by a page of another origin is refused', async () => {
    const res = await httpRequest(`${base}/admin/session`, { body: { token: ADMIN_TOKEN }, headers: { Origin: 'http://evil.example' } });
    expect(res.status).toBe(403);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('behind a trusted reverse proxy (loopback here): the page origin is X-Forwarded-Host, X-Forwarded-Proto https makes the cookie Secure, the enroll command names the proxy URL (I26)', async () => {
    const proxied = { Origin: 'https://logs.example.com:8443', 'X-Forwarded-Host': 'logs.example.com:8443', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Prefix': '/cortex/', 'X-Forwarded-For': '203.0.113.7' };
    const res = await httpRequest(`${base}/admin/session`, { body: { token: ADMIN_TOKEN }, headers: proxied });
    expect(res.status, res.text).toBe(200);
    expect((res.headers['set-cookie'] ?? [])[0]).toMatch(/; Secure$/);
    const out = await httpRequest(`${base}/admin/session`, { method: 'DELETE', headers: proxied });
    expect((out.headers['set-cookie'] ?? [])[0]).toMatch(/Max-Age=0; Secure$/);
    const issued = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'proxied-host' }, headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, ...proxied } });
    expect(issued.status, issued.text).toBe(201);
    t.tokens.push(issued.body.token as string);
    expect(issued.body.server_url).toBe('wss://logs.example.com:8443/cortex/ws/agent');
    expect(issued.body.enroll_command).not.toContain('--allow-insecure');
    // a proxy that rewrites Host and does not say X-Forwarded-Host: refused, saying what to add
    const rewritten = await httpRequest(`${base}/admin/session`, { body: { token: ADMIN_TOKEN }, headers: { Origin: 'https://logs.example.com', 'X-Forwarded-Proto': 'https' } });
    expect(rewritten.status).toBe(403);
    expect(rewritten.body.error.message).toMatch(/page is at logs\.example\.com, this server was asked for 127\.0\.0\.1:\d+\); behind a reverse proxy, have it send X-Forwarded-Host/);
    // plain requests keep the old behaviour: no Secure without TLS, the listen address in the command
    const plain = await httpRequest(`${base}/admin/session`, { body: { token: ADMIN_TOKEN } });
    expect((plain.headers['set-cookie'] ?? [])[0]).not.toContain('Secure');
    const direct = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'direct-host' }, headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    t.tokens.push(direct.body.token as string);
    expect(direct.body.server_url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws\/agent$/);
  });

  it("PUT config refuses a max_batch_entries above the server's (200 here)", async () => {
    const issued = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'cap-host' }, headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    t.tokens.push(issued.body.token);
    const cfg = { heartbeat_interval_secs: 15, max_batch_entries: 500, flush_interval_ms: 100, metrics_interval_secs: 30, probe_concurrency: 2, log_sources: [] };
    const res = await httpRequest(`${base}/admin/agents/${issued.body.host_id}/config`, { method: 'PUT', body: { config: cfg }, headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("server's max_batch_entries (200)");
    const ok = await httpRequest(`${base}/admin/agents/${issued.body.host_id}/config`, { method: 'PUT', body: { config: { ...cfg, max_batch_entries: 200 } }, headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.body.max_batch_entries_cap).toBe(200);
  });

  it('GET /admin/settings never shows the admin token', async () => {
    const res = await httpRequest(`${base}/admin/settings`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.body.admin_token_set).toBe(true);
    expect(res.text).not.toContain(ADMIN_TOKEN);
  });
});

describe('X-Forwarded-* from a peer that is not a trusted proxy (trusted_proxies 10.9.9.9)', () => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer({ admin_token: ADMIN_TOKEN, trusted_proxies: ['10.9.9.9'] });
    t.tokens.push(ADMIN_TOKEN);
    base = httpBase(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('mean nothing: the origin must match Host, no Secure cookie, the enroll command keeps the listen address', async () => {
    const forged = { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Prefix': '/x' };
    const res = await httpRequest(`${base}/admin/session`, { body: { token: ADMIN_TOKEN }, headers: { Origin: 'https://evil.example', ...forged } });
    expect(res.status).toBe(403);
    expect(res.body.error.message).not.toContain('X-Forwarded-Host'); // no proxy hint for a peer that is no proxy
    const ok = await httpRequest(`${base}/admin/session`, { body: { token: ADMIN_TOKEN }, headers: forged });
    expect(ok.status).toBe(200);
    expect((ok.headers['set-cookie'] ?? [])[0]).not.toContain('Secure');
    const issued = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'h' }, headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, ...forged } });
    t.tokens.push(issued.body.token as string);
    expect(issued.body.server_url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws\/agent$/);
  });
});

describe('without an admin token (loopback mode)', () => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer();
    base = httpBase(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('scripts keep the old rule: a loopback POST without Origin needs no session', async () => {
    const res = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'script-host' } });
    expect(res.status).toBe(201);
    t.tokens.push(res.body.token);
  });

  it('a web page (Origin / Sec-Fetch-Site) may read but not change state without a session and its CSRF token', async () => {
    const read = await httpRequest(`${base}/admin/agents`, { headers: { 'Sec-Fetch-Site': 'same-origin' } });
    expect(read.status).toBe(200);
    const post = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'page-host' }, headers: { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' } });
    expect(post.status).toBe(403);
    expect(post.body.error.message).toContain('console session');
    const form = await httpRequest(`${base}/admin/agents/00000000-0000-4000-8000-000000000000/revoke`, { method: 'POST', headers: { Origin: 'null' } });
    expect(form.status).toBe(403);
  });

  it('a loopback sign-in without a token gives a session; with its CSRF token a page may change state', async () => {
    const s = await httpRequest(`${base}/admin/session`, { body: {}, headers: { 'Sec-Fetch-Site': 'same-origin' } });
    expect(s.status).toBe(200);
    expect(s.body.mode).toBe('loopback');
    const cookie = cookieOf(s.headers['set-cookie']);
    const headers = { Cookie: cookie, 'Sec-Fetch-Site': 'same-origin', Origin: base };
    const noCsrf = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'page-host' }, headers });
    expect(noCsrf.status).toBe(403);
    const ok = await httpRequest(`${base}/admin/agents`, { body: { hostname: 'page-host' }, headers: { ...headers, 'X-CSRF-Token': s.body.csrf_token } });
    expect(ok.status).toBe(201);
    t.tokens.push(ok.body.token);
    const textPlain = await httpRequest(`${base}/admin/agents`, { raw: '{"hostname":"form-host"}', headers: { ...headers, 'X-CSRF-Token': s.body.csrf_token, 'Content-Type': 'text/plain' } });
    expect(textPlain.status).toBe(415);
  });

  it('a page reached under a foreign Host name (DNS rebinding) is refused even for reads', async () => {
    const res = await httpRequest(`${base}/admin/agents`, { headers: { Host: 'evil.example:3100', 'Sec-Fetch-Site': 'same-origin' } });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('Host header');
  });

  it('a proxied request is refused as before (403)', async () => {
    const res = await httpRequest(`${base}/admin/agents`, { headers: { 'X-Forwarded-For': '203.0.113.9' } });
    expect(res.status).toBe(403);
    const signIn = await httpRequest(`${base}/admin/session`, { body: {}, headers: { 'X-Forwarded-For': '203.0.113.9' } });
    expect(signIn.status).toBe(403);
  });
});

describe('console session cookies (SessionKeys)', () => {
  it('a session expires after its TTL; another admin token does not accept it', async () => {
    const { SessionKeys, SESSION_TTL_MS } = await import('../../server/admin/session.js');
    const keys = new SessionKeys('token-one-0123456789');
    const { cookie, session } = keys.issue(1_000);
    expect(keys.verify(cookie, 1_000 + SESSION_TTL_MS - 1)?.csrfToken).toBe(session.csrfToken);
    expect(keys.verify(cookie, 1_000 + SESSION_TTL_MS)).toBeUndefined();
    expect(new SessionKeys('token-two-0123456789').verify(cookie, 2_000)).toBeUndefined();
  });
});
