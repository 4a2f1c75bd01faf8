// An admin request that cannot get the SQLite database's lock — another process holds it (a
// sqlite3 shell in BEGIN EXCLUSIVE, a copy or backup tool) past the busy timeout — is answered
// 503 with Retry-After and a JSON message saying so (nothing was done, try again, how to find the
// holder), on every route alike; before, POST /admin/agents answered 500 "an internal error".
// Once the lock is released the same request succeeds.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import type { Storage } from '../../server/db/storage.js';
import { httpBase, httpRequest } from '../server/control-helpers.js';
import { makeTempDir } from '../server/helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';
import { undocumented } from './openapi-check.js';

const TOKEN = 'db-locked-token-5e2a91c4';
/** The server's busy timeout here (5 s by default): each locked write waits this long (asynchronously since J20). */
const BUSY_MS = 300;
const CONFIG = { heartbeat_interval_secs: 15, max_batch_entries: 500, flush_interval_ms: 100, metrics_interval_secs: 30, probe_concurrency: 2, log_sources: [] };

describe('an admin request on a SQLite database another process holds locked', () => {
  let t: TestServer;
  let storage: Storage;
  let file: string;
  let base: string;
  // a connection of its own for each request (before J20 the server's event loop slept in SQLite's
  // busy handler meanwhile, and a keep-alive connection it closed in between reset the next one)
  const bearer = { Authorization: `Bearer ${TOKEN}`, Connection: 'close' };

  beforeAll(async () => {
    file = join(makeTempDir('cortex-db-locked-'), 'cortex.db');
    storage = openSqliteStorage({ path: file, busyTimeoutMs: BUSY_MS });
    await migrateToLatest(storage);
    t = await startTestServer({ admin_token: TOKEN, db: file }, { dialect: 'sqlite', storage });
    base = httpBase(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await storage?.close();
  });

  it('is 503 with Retry-After and "locked by another process", nothing done, on each route; once released the same request succeeds', async () => {
    const host = await t.issue('locked-host');
    const signIn = await httpRequest(`${base}/admin/session`, { method: 'POST', body: { token: TOKEN }, headers: { Connection: 'close' } });
    expect(signIn.status, signIn.text).toBe(200);
    const session = { Cookie: (signIn.headers['set-cookie']?.[0] ?? '').split(';')[0] as string, 'X-CSRF-Token': signIn.body.csrf_token as string, Connection: 'close' };
    const holder = new Database(file);
    let held = true;
    try {
      holder.exec('BEGIN EXCLUSIVE');
      const count = () => (holder.prepare('SELECT count(*) AS n FROM agents').get() as { n: number }).n;
      const before = count();

      const issue = await httpRequest(`${base}/admin/agents`, { method: 'POST', headers: bearer, body: { hostname: 'blocked-1' } });
      expect(issue.status, issue.text).toBe(503);
      expect(issue.headers['content-type']).toBe('application/json');
      expect(issue.headers['retry-after']).toBe('5');
      expect(issue.body.error.code).toBe(503);
      const message = issue.body.error.message as string;
      expect(message).toMatch(new RegExp(`^the database ${file.replace(/[.]/g, '\\.')} is locked by another process \\(SQLITE_BUSY\\): waited \\d+(\\.\\d)? s for its lock; nothing was done; try again`));
      expect(message).toContain(`find the process that holds it (fuser -v ${file} ${file}-wal, or lsof ${file})`);
      expect(message).not.toContain('internal error');
      expect(issue.body.error.data).toEqual({ reason: 'database_locked' });
      expect(undocumented('/admin/agents', 'POST', 503, issue.body)).toEqual([]);

      // the other writes answer alike (they waited, or failed 500, by route)
      const cases: [string, string, unknown, string][] = [
        ['POST', `/admin/agents/${host.host_id}/revoke`, undefined, '/admin/agents/{host_id}/revoke'],
        ['PUT', `/admin/agents/${host.host_id}/config`, { config: CONFIG }, '/admin/agents/{host_id}/config'],
        ['POST', `/admin/agents/${host.host_id}/token`, undefined, '/admin/agents/{host_id}/token'],
      ];
      for (const [method, path, body, documented] of cases) {
        const r = await httpRequest(`${base}${path}`, { method, headers: bearer, ...(body !== undefined ? { body } : {}) });
        expect(r.status, `${method} ${path}: ${r.text}`).toBe(503);
        expect(r.headers['retry-after']).toBe('5');
        expect(r.body.error.message).toContain(`the database ${file} is locked by another process (SQLITE_BUSY)`);
        expect(undocumented(documented, method, 503, r.body)).toEqual([]);
      }

      // a sign-out the database cannot record: the same 503 (it was 500), no cookie cleared
      const signOut = await httpRequest(`${base}/admin/session`, { method: 'DELETE', headers: session });
      expect(signOut.status, signOut.text).toBe(503);
      expect(signOut.headers['retry-after']).toBe('5');
      expect(signOut.headers['set-cookie']).toBeUndefined();
      expect(signOut.body.error.message).toContain('is locked by another process (SQLITE_BUSY)');
      expect(undocumented('/admin/session', 'DELETE', 503, signOut.body)).toEqual([]);

      // nothing was done
      expect(count()).toBe(before);
      expect(holder.prepare("SELECT count(*) AS n FROM agents WHERE hostname = 'blocked-1'").get()).toEqual({ n: 0 });
      expect(holder.prepare('SELECT connection_state, config_version FROM agents WHERE host_id = ?').get(host.host_id)).toEqual({ connection_state: 'NeverConnected', config_version: 0 });
      expect(t.log.lines.some((l) => l.includes('HTTP handler failed'))).toBe(false);
      expect(t.log.lines.some((l) => l.includes('the database is locked by another process'))).toBe(true);

      holder.exec('ROLLBACK');
      held = false;
      const again = await httpRequest(`${base}/admin/agents`, { method: 'POST', headers: bearer, body: { hostname: 'blocked-1' } });
      expect(again.status, again.text).toBe(201);
      t.tokens.push(again.body.token as string);
      expect(again.body.hostname).toBe('blocked-1');
      const revoked = await httpRequest(`${base}/admin/agents/${host.host_id}/revoke`, { method: 'POST', headers: bearer });
      expect(revoked.status, revoked.text).toBe(200);
      const signedOut = await httpRequest(`${base}/admin/session`, { method: 'DELETE', headers: session });
      expect(signedOut.status, signedOut.text).toBe(200);
    } finally {
      if (held) holder.exec('ROLLBACK');
      holder.close();
    }
  }, 20_000);
});
