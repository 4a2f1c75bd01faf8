// Every admin API error is JSON that says what went wrong and what to do: a handler that fails
// (500), a sign-out the database refuses (500, still signed in), a request head over Node's
// limit (431), a body over 1 MiB (413). A cross-origin sign-in names the proxy fix only when a
// proxy forwarded it. Without an admin token, two servers on one machine set session cookies
// of their own (the port in the name), so a browser keeps both sessions.
import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { undocumented } from './openapi-check.js';
import { httpBase, httpRequest } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';

const TOKEN = 'admin-errors-token-8c1f2e7a';

/** One raw HTTP exchange (fetch refuses to send a request head this large). */
function rawRequest(port: number, head: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), headers: text.slice(0, split), body: text.slice(split + 4) });
    });
  });
}

describe('admin API errors are JSON with a message', () => {
  let t: TestServer;
  let base: string;
  const bearer = { Authorization: `Bearer ${TOKEN}` };

  beforeAll(async () => {
    t = await startTestServer({ admin_token: TOKEN });
    base = httpBase(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('a query string over 16 KiB is 431 with a JSON message (not an empty body)', async () => {
    const r = await rawRequest(t.server.port, `GET /admin/agents?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    expect(r.status).toBe(431);
    expect(r.headers).toMatch(/Content-Type: application\/json/i);
    const body = JSON.parse(r.body) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(431);
    expect(body.error.message).toContain('shorten the query string');
    // a malformed request is still Node's plain 400
    const bad = await rawRequest(t.server.port, 'GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n');
    expect(bad.status).toBe(400);
  });

  it('a body over 1 MiB is 413 (not 400) with a JSON message, as documented', async () => {
    const r = await httpRequest(`${base}/admin/agents`, { method: 'POST', headers: { ...bearer, 'Content-Type': 'application/json' }, body: { hostname: 'a'.repeat(2_000_000) } });
    expect(r.status).toBe(413);
    expect(r.body.error).toMatchObject({ code: 413 });
    expect(r.body.error.message).toContain('larger than 1048576 bytes');
    expect(undocumented('/admin/agents', 'POST', 413, r.body)).toEqual([]);
  });

  it('a handler that fails answers 500 with a JSON message naming the request and the log line, as documented', async () => {
    // the host's row cannot be written: an error no route expects
    const db = t.server.storage.db;
    await sql`create trigger cx_refuse_audit before insert on agents begin select raise(abort, 'simulated insert failure'); end`.execute(db);
    try {
      const r = await httpRequest(`${base}/admin/agents`, { method: 'POST', headers: bearer, body: { hostname: 'audit-refused' } });
      expect(r.status).toBe(500);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body.error.code).toBe(500);
      expect(r.body.error.message).toContain('the server failed on POST /admin/agents');
      expect(r.body.error.message).toContain('HTTP handler failed');
      expect(r.body.error.message).not.toContain('simulated'); // the database's words stay in the log
      expect(undocumented('/admin/agents', 'POST', 500, r.body)).toEqual([]);
    } finally {
      await sql`drop trigger cx_refuse_audit`.execute(db);
    }
  });

  it('a sign-out the database refuses is 500 saying the session goes on, and it does', async () => {
    const res = await httpRequest(`${base}/admin/session`, { method: 'POST', body: { token: TOKEN } });
    const cookie = (res.headers['set-cookie']?.[0] ?? '').split(';')[0] as string;
    const csrf = res.body.csrf_token as string;
    const db = t.server.storage.db;
    await sql`create trigger cx_refuse_end before insert on ended_sessions begin select raise(abort, 'simulated write failure'); end`.execute(db);
    try {
      const out = await httpRequest(`${base}/admin/session`, { method: 'DELETE', headers: { Cookie: cookie, 'X-CSRF-Token': csrf } });
      expect(out.status).toBe(500);
      expect(out.headers['set-cookie']).toBeUndefined();
      expect(out.body.error.message).toContain('sign-out failed');
      expect(out.body.error.message).toContain('you are still signed in');
      expect(undocumented('/admin/session', 'DELETE', 500, out.body)).toEqual([]);
      expect((await httpRequest(`${base}/admin/agents`, { headers: { Cookie: cookie } })).status).toBe(200);
    } finally {
      await sql`drop trigger cx_refuse_end`.execute(db);
    }
    expect((await httpRequest(`${base}/admin/session`, { method: 'DELETE', headers: { Cookie: cookie, 'X-CSRF-Token': csrf } })).status).toBe(200);
    expect((await httpRequest(`${base}/admin/agents`, { headers: { Cookie: cookie } })).status).toBe(401);
  });

  it('a cross-origin sign-in names the reverse-proxy fix only when a proxy forwarded it', async () => {
    // 127.0.0.1 is a trusted proxy by default: a request straight from it is no proxy's
    const direct = await httpRequest(`${base}/admin/session`, { method: 'POST', body: { token: TOKEN }, headers: { Origin: 'http://192.0.2.7:8080' } });
    expect(direct.status).toBe(403);
    expect(direct.body.error.message).not.toContain('X-Forwarded-Host');
    expect(direct.body.error.message).toContain(`open the console from the server's own address (http://${new URL(base).host}/ui/)`);
    const proxied = await httpRequest(`${base}/admin/session`, { method: 'POST', body: { token: TOKEN }, headers: { Origin: 'https://cortex.example', 'X-Forwarded-For': '192.0.2.7', 'X-Forwarded-Proto': 'https' } });
    expect(proxied.status).toBe(403);
    expect(proxied.body.error.message).toContain('have it send X-Forwarded-Host');
  });
});

describe('loopback mode: each server has a session cookie of its own', () => {
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    a = await startTestServer({});
    b = await startTestServer({}, { sameDbAs: a });
  }, 60_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('two servers on one machine set cookies of two names, so a browser keeps both sessions; a stale one is refused with a reason the console acts on', async () => {
    // A browser keeps cookies per host and path, not per port: this jar does the same.
    const jar = new Map<string, string>();
    const cookieHeader = (): string => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const page = (t: TestServer) => ({ Origin: httpBase(t), Host: new URL(httpBase(t)).host });
    const sessions = new Map<TestServer, string>();
    for (const t of [a, b]) {
      const res = await httpRequest(`${httpBase(t)}/admin/session`, { method: 'POST', body: {}, headers: { ...page(t), Cookie: cookieHeader() } });
      expect(res.status).toBe(200);
      const [pair, ...attrs] = (res.headers['set-cookie']?.[0] ?? '').split(';');
      expect(pair).toMatch(new RegExp(`^cortex_session_${t.server.port}=`));
      expect(attrs.join(';')).toContain('HttpOnly; SameSite=Strict; Path=/');
      const eq = (pair as string).indexOf('=');
      jar.set((pair as string).slice(0, eq), (pair as string).slice(eq + 1));
      sessions.set(t, res.body.csrf_token as string);
    }
    expect(jar.size).toBe(2);
    for (const t of [a, b]) {
      const issued = await httpRequest(`${httpBase(t)}/admin/agents`, { method: 'POST', body: { hostname: `from-${t.server.port}` }, headers: { ...page(t), Cookie: cookieHeader(), 'X-CSRF-Token': sessions.get(t) as string } });
      expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    }
    // a page of A holding B's CSRF token: refused, CSRF still checked, with the reason
    const wrong = await httpRequest(`${httpBase(a)}/admin/agents`, { method: 'POST', body: { hostname: 'wrong-csrf' }, headers: { ...page(a), Cookie: cookieHeader(), 'X-CSRF-Token': sessions.get(b) as string } });
    expect([wrong.status, wrong.body.error.data]).toEqual([403, { reason: 'csrf_mismatch' }]);
    // without a session of A (only B's cookie): refused, the console starts one
    const none = await httpRequest(`${httpBase(a)}/admin/agents`, { method: 'POST', body: { hostname: 'no-session' }, headers: { ...page(a), Cookie: `cortex_session_${b.server.port}=${jar.get(`cortex_session_${b.server.port}`) ?? ''}` } });
    expect([none.status, none.body.error.data]).toEqual([403, { reason: 'session_required' }]);
    expect(undocumented('/admin/agents', 'POST', 403, none.body)).toEqual([]);
  });
});
