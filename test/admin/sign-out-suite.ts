// Sign-out ends a console session on the server (DECISIONS J14), for one dialect: sign in,
// copy the cookie, sign out, and the copy gets the 401 of an expired session on the server
// that signed out and on another server of the same database; every route refuses it; a live
// tail opened with it closes; old rows are purged. Run by sign-out.test.ts (SQLite) and
// sign-out.pg.test.ts (PostgreSQL).
import http from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../../server/admin.js';
import { SESSION_TTL_MS, SessionKeys } from '../../server/admin/session.js';
import { deleteEndedSessionsBefore, endedSessionsCutoff, isSessionEnded } from '../../server/db/sessions.repository.js';
import { Retention } from '../../server/control/retention.js';
import { ServerMetrics } from '../../server/metrics.js';
import { createCapturingLogger } from '../../server/log.js';
import type { DialectName } from '../../server/db/storage.js';
import { httpBase, httpRequest, type HttpReply } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';

const TOKEN = 'sign-out-admin-token-5d2c8b6e';

interface Session {
  cookie: string;
  csrf: string;
}

export function signOutSuite(dialect: DialectName): void {
  describe(`sign-out ends the session on every server of the database (${dialect})`, () => {
    let a: TestServer;
    let b: TestServer;

    beforeAll(async () => {
      a = await startTestServer({ admin_token: TOKEN }, { dialect });
      b = await startTestServer({ admin_token: TOKEN }, { dialect, sameDbAs: a });
    }, 60_000);
    afterAll(async () => {
      await b?.close();
      await a?.close();
    });

    const req = (t: TestServer, path: string, opts: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<HttpReply> =>
      httpRequest(`${httpBase(t)}${path}`, opts);

    async function signIn(t: TestServer): Promise<Session> {
      const res = await req(t, '/admin/session', { method: 'POST', body: { token: TOKEN } });
      expect(res.status).toBe(200);
      const set = res.headers['set-cookie']?.[0] ?? '';
      return { cookie: set.split(';')[0] as string, csrf: res.body.csrf_token as string };
    }
    const signOut = (t: TestServer, s: Session) => req(t, '/admin/session', { method: 'DELETE', headers: { Cookie: s.cookie, 'X-CSRF-Token': s.csrf } });

    it('a copy of the cookie is refused after sign-out, on this server and another on the database, as an expired one', async () => {
      const s = await signIn(a);
      for (const t of [a, b]) expect((await req(t, '/admin/agents', { headers: { Cookie: s.cookie } })).status).toBe(200);
      const out = await signOut(a, s);
      expect(out.status).toBe(200);
      expect(out.headers['set-cookie']?.[0]).toMatch(/^cortex_session=; .*Max-Age=0/);

      // the 401 of a cookie that expired, word for word
      const expired = `cortex_session=${new SessionKeys(TOKEN).issue(Date.now() - SESSION_TTL_MS - 1000).cookie}`;
      const asExpired = await req(b, '/admin/agents', { headers: { Cookie: expired } });
      expect(asExpired.status).toBe(401);
      for (const t of [a, b]) {
        const res = await req(t, '/admin/agents', { headers: { Cookie: s.cookie } });
        expect([res.status, res.body, res.headers['www-authenticate']]).toEqual([401, asExpired.body, asExpired.headers['www-authenticate']]);
        const change = await req(t, '/admin/agents', { method: 'POST', body: { hostname: 'after-sign-out' }, headers: { Cookie: s.cookie, 'X-CSRF-Token': s.csrf } });
        expect(change.status).toBe(401);
        expect((await req(t, '/admin/session', { headers: { Cookie: s.cookie } })).body).toEqual({ authenticated: false, mode: 'token', via: 'none' });
      }
      expect((await req(a, '/admin/agents?q=after-sign-out', { headers: { Authorization: `Bearer ${TOKEN}` } })).body).toEqual([]);
      // signing out again is harmless; a new sign-in works; the bearer token is untouched
      expect((await signOut(b, s)).status).toBe(200);
      const again = await signIn(b);
      for (const t of [a, b]) expect((await req(t, '/admin/agents', { headers: { Cookie: again.cookie } })).status).toBe(200);
      expect((await req(b, '/admin/agents', { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
      // the cookie and its nonce stay out of the logs
      const nonce = (JSON.parse(Buffer.from(s.cookie.slice('cortex_session='.length).split('.')[0] as string, 'base64url').toString()) as { n: string }).n;
      expect(await isSessionEnded(a.server.storage.db, nonce)).toBe(true);
      for (const t of [a, b]) for (const line of t.log.lines) expect(line.includes(s.cookie.slice(15)) || line.includes(nonce)).toBe(false);
      expect(a.log.lines.some((l) => l.includes('console sign-out: session ended on every server of this database'))).toBe(true);
    });

    it('every route of the admin API refuses the signed-out cookie (401)', async () => {
      const s = await signIn(b);
      const { host_id } = await a.issue('route-sweep');
      await signOut(b, s);
      const checked: string[] = [];
      for (const route of ADMIN_ROUTES) {
        if (route.public === true) continue;
        const path = route.path.replace('{host_id}', host_id).replace('{name}', 'sweep');
        const res = await req(a, path, {
          method: route.method,
          headers: { Cookie: s.cookie, 'X-CSRF-Token': s.csrf, ...(route.method === 'GET' ? {} : { 'Content-Type': 'application/json' }) },
          ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }),
        });
        expect(res.status, `${route.method} ${route.path}`).toBe(401);
        checked.push(`${route.method} ${route.path}`);
      }
      expect(checked.length).toBeGreaterThan(20);
      expect((await req(a, '/admin/agents', { headers: { Authorization: `Bearer ${TOKEN}` } })).body.some((r: { hostname: string }) => r.hostname === 'route-sweep')).toBe(true);
    });

    it('a live tail opened with the session closes once it is signed out on another server', async () => {
      const s = await signIn(a);
      const { host_id } = await a.issue('tailed');
      const closed = await new Promise<number>((resolve, reject) => {
        const started = Date.now();
        const stream = http.get(`${httpBase(a)}/admin/agents/${host_id}/logs/stream`, { headers: { Cookie: s.cookie, Accept: 'text/event-stream' } }, (res) => {
          expect(res.statusCode).toBe(200);
          res.resume();
          res.once('close', () => resolve(Date.now() - started));
          void signOut(b, s);
        });
        stream.on('error', reject);
        setTimeout(() => reject(new Error('the tail was still open 10 s after sign-out')), 10_000).unref();
      });
      expect(closed).toBeLessThan(5000);
      expect(a.log.lines.some((l) => l.includes('live tail closed') && l.includes('console session ended'))).toBe(true);
    });

    it('rows of sessions whose cookie expired a day ago are purged (at sign-out, and by deleteEndedSessionsBefore)', async () => {
      const db = a.server.storage.db;
      const table = sql.table('ended_sessions');
      const now = Date.now();
      const day = 24 * 3600 * 1000;
      const iso = (ms: number) => new Date(ms).toISOString();
      await sql`insert into ${table} (nonce, expires_at, ended_at) values ('long-gone', ${iso(now - day - 60_000)}, ${iso(now - 2 * day)}), ('recent', ${iso(now - 60_000)}, ${iso(now - day / 2)})`.execute(db);
      await signOut(b, await signIn(b));
      const nonces = async () => (await sql<{ nonce: string }>`select nonce from ${table} order by nonce`.execute(db)).rows.map((r) => r.nonce);
      expect(await nonces()).not.toContain('long-gone');
      expect(await nonces()).toContain('recent'); // expired, but kept a day for servers whose clock runs behind
      await sql`insert into ${table} (nonce, expires_at, ended_at) values ('old-2', ${iso(now - 3 * day)}, ${iso(now - 3 * day)})`.execute(db);
      expect(await deleteEndedSessionsBefore(db, endedSessionsCutoff(new Date(now)), 500)).toBe(1);
      expect(await nonces()).toContain('recent');
      expect(await deleteEndedSessionsBefore(db, endedSessionsCutoff(new Date(now + 2 * day)), 500)).toBeGreaterThanOrEqual(1);
      expect(await nonces()).not.toContain('recent');
      // and the retention pass purges them, whatever retention_days says (0: keep every log)
      await sql`insert into ${table} (nonce, expires_at, ended_at) values ('old-3', ${iso(now - 3 * day)}, ${iso(now - 3 * day)})`.execute(db);
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      await new Retention(a.server.storage, createCapturingLogger().logger, metrics, { retentionDays: 0, maxDbBytes: null, batchRows: 500, pauseMs: 0 }).run(new Date(now));
      expect(await nonces()).not.toContain('old-3');
    });
  });

  describe(`sign-out without an admin token (loopback mode, ${dialect})`, () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer({}, { dialect });
    }, 60_000);
    afterAll(async () => {
      await t?.close();
    });

    it('a signed-out cookie gives no session: a page may no longer change state with it (as with an expired one)', async () => {
      const page = { Origin: httpBase(t), Host: new URL(httpBase(t)).host };
      const res = await httpRequest(`${httpBase(t)}/admin/session`, { method: 'POST', body: {}, headers: page });
      const cookie = (res.headers['set-cookie']?.[0] ?? '').split(';')[0] as string;
      const csrf = res.body.csrf_token as string;
      const issue = () => httpRequest(`${httpBase(t)}/admin/agents`, { method: 'POST', body: { hostname: 'loopback-page' }, headers: { ...page, Cookie: cookie, 'X-CSRF-Token': csrf } });
      expect((await issue()).status).toBe(201);
      expect((await httpRequest(`${httpBase(t)}/admin/session`, { method: 'DELETE', headers: { ...page, Cookie: cookie, 'X-CSRF-Token': csrf } })).status).toBe(200);
      const refused = await issue();
      expect([refused.status, refused.body.error.message]).toEqual([403, 'a web page may change state only in a console session: sign in (POST /admin/session) and send its X-CSRF-Token header']);
      expect((await httpRequest(`${httpBase(t)}/admin/session`, { headers: { ...page, Cookie: cookie } })).body).toEqual({ authenticated: true, mode: 'loopback', via: 'loopback' });
    });
  });
}
