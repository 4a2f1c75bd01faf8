// The admin API against hostile or unlucky clients (DECISIONS H41): a live tail outliving its
// credential or failing after its headers, a PostgreSQL password in GET /admin/settings, a
// body cut short by its client, seqs beyond 2^53, control characters in query parameters, a
// malformed %-escape in a group name, audit rows of refused requests, and HEAD.
//
// PostgreSQL-specific defects are the reason for the dialect loop: this file is not one of the
// storage suites the "postgres" project runs (test/support/postgres-project.ts), so it starts
// a server on each dialect itself (PostgreSQL when one answers; under CI=true one must).
import http from 'node:http';
import net from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAudit } from '../../server/security/audit.js';
import { SESSION_COOKIE } from '../../server/admin/session.js';
import type { DialectName } from '../../server/db/storage.js';
import { postgresProject } from '../support/postgres-project.js';
import { newTestDb } from '../support/dialects.js';
import { httpBase, httpRequest, metricValue } from './control-helpers.js';
import { entries } from './helpers.js';
import { startTestServer, waitFor, type TestServer } from './wire.js';

const DIALECTS: DialectName[] = (await postgresProject()) === undefined ? ['sqlite'] : ['sqlite', 'postgres'];

const OLD_TOKEN = 'adm-old-' + 'A'.repeat(32);
const NEW_TOKEN = 'adm-new-' + 'B'.repeat(32);
const auth = (token = OLD_TOKEN): Record<string, string> => ({ Authorization: `Bearer ${token}` });

/** An open SSE response: its text so far, and a promise settled when the server ends or cuts it. */
interface Stream {
  res: http.IncomingMessage;
  text: () => string;
  ended: Promise<void>;
}

function openStream(url: string, headers: Record<string, string>): Promise<Stream> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        const ended = new Promise<void>((done) => {
          res.on('end', done);
          res.on('close', done);
          res.on('error', () => done());
        });
        resolve({ res, text: () => text, ended });
      })
      .on('error', reject);
  });
}

/** `p`, or a failure naming `what` after `ms` (a stream that never ends is the defect). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** The session cookie of a console sign-in with `token`. */
async function signIn(base: string, token: string): Promise<string> {
  const r = await httpRequest(`${base}/admin/session`, { method: 'POST', body: { token } });
  expect(r.status).toBe(200);
  const set = ([] as string[]).concat(r.headers['set-cookie'] ?? []);
  const cookie = set.map((c) => c.split(';')[0] as string).find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  expect(cookie).toBeDefined();
  return cookie as string;
}

function noAdminTokenLogged(t: TestServer): void {
  for (const line of t.log.lines) {
    expect(line).not.toContain(OLD_TOKEN);
    expect(line).not.toContain(NEW_TOKEN);
  }
}

describe.each(DIALECTS)('%s', (dialect) => {
  describe('one server with an admin token', () => {
    let t: TestServer;
    let base: string;
    let host: string;
    beforeAll(async () => {
      t = await startTestServer({ admin_token: OLD_TOKEN }, { dialect });
      base = httpBase(t);
      host = (await t.issue('hostile-1')).host_id;
      await t.server.storage.ingest.commitBatch(host, entries(1, 5), new Date().toISOString());
    });
    afterAll(async () => {
      noAdminTokenLogged(t);
      await t.close();
    });

    it('a cursor or Last-Event-ID beyond 2^53 - 1 is 400 naming it (PostgreSQL: was a 500, and a stream that hung after its headers)', async () => {
      const logs = `${base}/admin/agents/${host}/logs`;
      const huge = await httpRequest(`${logs}?cursor=99999999999999999999999`, { headers: auth() });
      expect(huge.status).toBe(400);
      expect(huge.body.error.message).toContain('cursor must be the next_cursor of a previous page');
      expect((await httpRequest(`${logs}?cursor=9007199254740992`, { headers: auth() })).status).toBe(400);
      const edge = await httpRequest(`${logs}?cursor=9007199254740991`, { headers: auth() });
      expect(edge.status).toBe(200);
      expect(edge.body.entries ?? edge.body.rows ?? edge.body).toBeDefined();

      for (const id of ['9'.repeat(400), '99999999999999999999', '9007199254740992']) {
        const r = await httpRequest(`${logs}/stream`, { headers: { ...auth(), 'Last-Event-ID': id } });
        expect(r.status, id.slice(0, 20)).toBe(400);
        expect(r.body.error.message).toContain('Last-Event-ID must be a seq');
      }
      // The largest one is a seq like any other: the stream opens and sends nothing older.
      const ok = await openStream(`${logs}/stream`, { ...auth(), 'Last-Event-ID': '9007199254740991' });
      expect(ok.res.statusCode).toBe(200);
      ok.res.destroy();
    });

    it('a control character in a query parameter is 400 naming it (PostgreSQL: was a 500; SQLite: q=%00zzz matched every agent)', async () => {
      for (const path of ['/admin/agents?q=%00', '/admin/agents?q=%00zzz', `/admin/agents/${host}/logs?q=%00`, `/admin/agents/${host}/logs?source=%00`, `/admin/agents/${host}/metrics?name=%00`, `/admin/agents/${host}/logs?q=a%0Db`]) {
        const r = await httpRequest(`${base}${path}`, { headers: auth() });
        expect(r.status, path).toBe(400);
        expect(r.body.error.code).toBe(-32602);
        expect(r.body.error.message, path).toMatch(/query parameter (q|source|name) contains a control character/);
      }
      // a tab is text a search may hold
      expect((await httpRequest(`${base}/admin/agents/${host}/logs?q=a%09b`, { headers: auth() })).status).toBe(200);
    });

    it('a malformed %-escape in a group name is 400 on GET, PUT and DELETE, and writes no audit row (was 500, PUT/DELETE audited first)', async () => {
      const before = (await listAudit(t.server.storage.db)).length;
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const r = await httpRequest(`${base}/admin/groups/%ZZ/config`, { method, headers: auth(), ...(method === 'PUT' ? { body: { config: {} } } : {}) });
        expect(r.status, method).toBe(400);
        expect(r.body.error.message).toContain('not valid percent-encoding');
      }
      expect((await listAudit(t.server.storage.db)).length).toBe(before);
    });

    it('the audit trail holds what was done: refused requests write no row, a raw path is never stored, a done action is recorded before its answer', async () => {
      const before = (await listAudit(t.server.storage.db)).length;
      const unknown = await httpRequest(`${base}/admin/agents/00000000-0000-0000-0000-000000000000/revoke`, { method: 'POST', headers: auth() });
      expect(unknown.status).toBe(404);
      const long = await httpRequest(`${base}/admin/agents/NOT%20A%20UUID%20${'x'.repeat(3000)}/revoke`, { method: 'POST', headers: auth() });
      expect(long.status).toBe(400);
      const grace = await httpRequest(`${base}/admin/agents/${host}/rotate`, { method: 'POST', headers: auth(), body: { grace_secs: -1 } });
      expect(grace.status).toBe(400);
      expect(await listAudit(t.server.storage.db)).toHaveLength(before);

      const done = await httpRequest(`${base}/admin/agents/${host}/rotate`, { method: 'POST', headers: auth(), body: { grace_secs: 60 } });
      expect(done.status).toBe(200);
      const rows = await listAudit(t.server.storage.db);
      expect(rows).toHaveLength(before + 1);
      expect(rows.find((r) => r.action === 'agent.rotate')).toMatchObject({ host_id: host, detail: { via: 'admin-api' } });
      for (const r of rows) expect((r.host_id ?? '').length).toBeLessThanOrEqual(36);
    });

    it('HEAD is answered wherever GET is, without a body; /healthz and /metrics answer other methods 405 with Allow', async () => {
      const head = (path: string, headers: Record<string, string> = {}) => httpRequest(`${base}${path}`, { method: 'HEAD', headers });
      const health = await head('/healthz');
      expect(health.status).toBe(200);
      expect(health.text).toBe('');
      expect(health.headers['content-type']).toBe('application/json');
      expect((await head('/metrics', auth())).status).toBe(200);
      for (const path of ['/healthz', '/metrics']) {
        const post = await httpRequest(`${base}${path}`, { method: 'POST', headers: auth(), raw: '' });
        expect(post.status, path).toBe(405);
        expect(post.headers['allow']).toBe('GET, HEAD');
      }
      const agents = await head('/admin/agents', auth());
      expect(agents.status).toBe(200);
      expect(agents.text).toBe('');
      expect(agents.headers['x-total-count']).toBe('1');
      expect((await head('/admin/agents')).status).toBe(401); // HEAD is no way around the token
      const stream = await within(head(`/admin/agents/${host}/logs/stream`, auth()), 5000, 'HEAD of the live tail');
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toContain('text/event-stream');
      const put = await httpRequest(`${base}/admin/agents`, { method: 'PUT', headers: auth(), raw: '' });
      expect(put.status).toBe(405);
      expect(put.headers['allow']).toBe('GET, POST'); // the routes' own methods, as the OpenAPI document lists them
    });

    it('an admin request body cut short by its client (reset mid-body) is no database outage', async () => {
      const marks = t.log.lines.length;
      const socket = net.connect(t.server.port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      // Expect: 100-continue: the server says when it has the head and runs the handler.
      socket.write(`POST /admin/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${OLD_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n`);
      await new Promise<void>((resolve) => socket.once('data', () => resolve()));
      socket.write('{"hostn');
      socket.resetAndDestroy();
      const after = (): Record<string, unknown>[] => t.log.records().slice(marks);
      // How the server took it: the request's "admin request" line (or, before, an error line).
      await waitFor(() => after().some((r) => r['msg'] === 'admin request' || r['level'] === 50 || r['level'] === 'error'), 10_000);
      expect(after().filter((r) => typeof r['msg'] === 'string' && /^database|HTTP handler failed/.test(r['msg'] as string))).toEqual([]);
      expect(after().find((r) => r['msg'] === 'admin request')).toMatchObject({ admin: 'POST /admin/agents', status: 400 });
      expect(metricValue(await t.server.metrics.text(), 'cortex_database_up')).toBe(1);
    });
  });

  it('a live tail ends when the admin token it was opened with is changed (SIGHUP), and so does one of a console session signed with it; one opened with the new token goes on', async () => {
    const t = await startTestServer({ admin_token: OLD_TOKEN }, { dialect });
    try {
      const base = httpBase(t);
      const host = (await t.issue('tailed')).host_id;
      const url = `${base}/admin/agents/${host}/logs/stream?backlog=0`;
      const cookie = await signIn(base, OLD_TOKEN);
      const bearer = await openStream(url, auth());
      const console_ = await openStream(url, { Cookie: cookie });
      expect([bearer.res.statusCode, console_.res.statusCode]).toEqual([200, 200]);
      await waitFor(() => bearer.text().includes('retry:') && console_.text().includes('retry:'));

      expect(t.server.setAdminToken(NEW_TOKEN)).toBe(true); // what SIGHUP does with a changed --admin-token-file
      await within(Promise.all([bearer.ended, console_.ended]), 10_000, 'the old-token streams ended');
      expect(t.log.records().filter((r) => r['msg'] === 'live tail closed: the admin token it was opened with was changed, or its console session ended')).toHaveLength(2);

      // A stream of the new token is not touched: it gets what comes next.
      const fresh = await openStream(url, auth(NEW_TOKEN));
      expect(fresh.res.statusCode).toBe(200);
      await waitFor(() => fresh.text().includes('retry:'));
      await t.server.storage.ingest.commitBatch(host, entries(1, 1), new Date().toISOString());
      await waitFor(() => fresh.text().includes('event: log'));
      expect(fresh.res.complete).toBe(false);
      fresh.res.destroy();
      expect(bearer.text()).not.toContain('event: log');
      noAdminTokenLogged(t);
    } finally {
      await t.close();
    }
  });

  it('a live tail whose poll fails after its headers is cut (the client resumes with Last-Event-ID), not left open and silent', async () => {
    const t = await startTestServer({}, { dialect });
    try {
      const host = (await t.issue('broken')).host_id;
      const stream = await openStream(`${httpBase(t)}/admin/agents/${host}/logs/stream?backlog=0`, {});
      expect(stream.res.statusCode).toBe(200);
      await waitFor(() => stream.text().includes('retry:'));
      // The next poll fails: its table is gone (any error after the headers does the same).
      await sql`alter table logs rename to logs_gone`.execute(t.server.storage.db);
      try {
        await within(stream.ended, 10_000, 'the failed stream ended');
      } finally {
        await sql`alter table logs_gone rename to logs`.execute(t.server.storage.db);
      }
      expect(t.log.records().some((r) => r['msg'] === 'live tail cut by an error (the client resumes with Last-Event-ID)' && r['host_id'] === host)).toBe(true);
    } finally {
      await t.close();
    }
  });

  if (dialect === 'postgres') {
    it('GET /admin/settings masks the password of a PostgreSQL --db URL', async () => {
      const target = await newTestDb('postgres');
      const u = new URL(target.db);
      u.password = 'S3cretPW-in-url';
      const t = await startTestServer({ db: u.toString() }, { dialect });
      try {
        const r = await httpRequest(`${httpBase(t)}/admin/settings`);
        expect(r.status).toBe(200);
        expect(r.text).not.toContain('S3cretPW-in-url');
        expect(r.body.db).toContain(':***@');
      } finally {
        await t.close();
        await target.drop();
      }
    });
  }
});
