// Optimistic concurrency of config edits (DECISIONS J13), for one dialect: GET answers the
// config's version as an ETag, PUT and DELETE take it back in If-Match and are refused with
// 412 (nothing stored) when someone changed the config since; without If-Match a write is
// unconditional, as before. Two servers on one database, with many writers at once holding
// the same version: exactly one write wins. Run by config-concurrency.test.ts (SQLite) and
// config-concurrency.pg.test.ts (PostgreSQL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../server/db/storage.js';
import { httpBase, httpRequest, type HttpReply } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';
import { undocumented } from './openapi-check.js';

const TOKEN = 'config-concurrency-admin-token-3c9e1f7a';
const AUTH = { Authorization: `Bearer ${TOKEN}` };

const config = (over: Record<string, unknown> = {}) => ({
  heartbeat_interval_secs: 30,
  max_batch_entries: 500,
  flush_interval_ms: 200,
  metrics_interval_secs: 60,
  probe_concurrency: 4,
  log_sources: [],
  ...over,
});

export function configConcurrencySuite(dialect: DialectName): void {
  describe(`config edits under If-Match (${dialect}, two servers on one database)`, () => {
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

    /** A request whose answer must be the one the OpenAPI document gives for (template, method, status). */
    async function call(t: TestServer, template: string, method: string, url: string, opts: { body?: unknown; headers?: Record<string, string> } = {}): Promise<HttpReply> {
      const res = await httpRequest(`${httpBase(t)}${url}`, { method, ...opts, headers: { ...AUTH, ...(opts.headers ?? {}) } });
      expect(undocumented(template, method, res.status, res.body), `${method} ${url} -> ${res.status} ${res.text.slice(0, 300)}`).toEqual([]);
      return res;
    }
    const AGENT = '/admin/agents/{host_id}/config';
    const GROUP = '/admin/groups/{name}/config';

    it('a host: GET gives the version as ETag; a PUT with the version read wins, a second one with it is 412 and stores nothing', async () => {
      const { host_id } = await a.issue('edited-twice');
      const path = `/admin/agents/${host_id}/config`;
      const read = await call(a, AGENT, 'GET', path);
      expect([read.headers['etag'], read.body.config_version]).toEqual(['"0"', 0]);
      // two operators read version 0; the first save wins (on server A) ...
      const first = await call(a, AGENT, 'PUT', path, { body: { config: config({ heartbeat_interval_secs: 10 }) }, headers: { 'If-Match': read.headers['etag'] as string } });
      expect([first.status, first.headers['etag'], first.body.config_version]).toEqual([200, '"1"', 1]);
      // ... the second, with the version it read (on server B), is refused
      const second = await call(b, AGENT, 'PUT', path, { body: { config: config({ probe_concurrency: 8 }) }, headers: { 'If-Match': '"0"' } });
      expect(second.status).toBe(412);
      expect(second.body.error).toEqual({
        code: 412,
        message: `the config of host ${host_id} changed since you read it (If-Match "0"; it is at version 1 now): nothing was stored; reload it (GET /admin/agents/${host_id}/config), make your change again on what it holds now, and send it with If-Match "1"`,
        data: { reason: 'config_changed', config_version: 1, etag: '"1"' },
      });
      const now = await call(b, AGENT, 'GET', path);
      expect([now.headers['etag'], now.body.stored]).toEqual(['"1"', config({ heartbeat_interval_secs: 10 })]);
      // reloaded, the change made again with the new version: stored
      const again = await call(b, AGENT, 'PUT', path, { body: { config: config({ heartbeat_interval_secs: 10, probe_concurrency: 8 }) }, headers: { 'If-Match': '"1"' } });
      expect([again.status, again.headers['etag']]).toEqual([200, '"2"']);
      // a clear (DELETE) with a stale version is refused too; with the current one it clears
      expect((await call(a, AGENT, 'DELETE', path, { headers: { 'If-Match': '"1"' } })).status).toBe(412);
      expect((await call(a, AGENT, 'GET', path)).body.stored).toEqual(config({ heartbeat_interval_secs: 10, probe_concurrency: 8 }));
      const cleared = await call(a, AGENT, 'DELETE', path, { headers: { 'If-Match': '"2"' } });
      expect([cleared.status, cleared.headers['etag'], cleared.body.stored]).toEqual([200, '"3"', null]);
    });

    it('If-Match forms: none and * are unconditional, a list matches any of its versions, a weak tag never matches, a malformed one is 400', async () => {
      const { host_id } = await a.issue('if-match-forms');
      const path = `/admin/agents/${host_id}/config`;
      const put = (headers: Record<string, string>) => call(a, AGENT, 'PUT', path, { body: { config: config() }, headers });
      expect((await put({})).status).toBe(200); // scripts and the CLI send none: as before
      expect((await put({ 'If-Match': '*' })).status).toBe(200);
      expect((await put({ 'If-Match': '"7", "2"' })).status).toBe(200); // version 2 now
      const weak = await put({ 'If-Match': 'W/"3"' });
      expect([weak.status, weak.body.error.data.config_version]).toEqual([412, 3]);
      expect((await put({ 'If-Match': '"abc"' })).status).toBe(412);
      for (const bad of ['3', '"3', '"3" x']) {
        const res = await put({ 'If-Match': bad });
        expect([res.status, res.body.error.code], bad).toEqual([400, -32602]);
        expect(res.body.error.message).toContain('If-Match must be "*" or the ETag a GET gave');
      }
      expect((await call(a, AGENT, 'GET', path)).body.config_version).toBe(3);
      // an unknown host is still 404, a revoked one still 409, whatever If-Match says
      const unknown = '00000000-0000-4000-8000-000000000000';
      expect((await call(a, AGENT, 'PUT', `/admin/agents/${unknown}/config`, { body: { config: config() }, headers: { 'If-Match': '"0"' } })).status).toBe(404);
      expect((await httpRequest(`${httpBase(a)}/admin/agents/${host_id}/revoke`, { method: 'POST', headers: AUTH })).status).toBe(200);
      expect((await call(a, AGENT, 'PUT', path, { body: { config: config() }, headers: { 'If-Match': '"3"' } })).status).toBe(409);
    });

    it('a group: GET gives the version as ETag; a stale PUT or DELETE is 412 and leaves the group and its members as they were', async () => {
      const path = '/admin/groups/web-edit/config';
      // If-Match names a version of a group that does not exist: 412, nothing created
      const missing = await call(a, GROUP, 'PUT', path, { body: { config: config() }, headers: { 'If-Match': '*' } });
      expect([missing.status, missing.body.error.data]).toEqual([412, { reason: 'config_changed', config_version: null, etag: null }]);
      expect(missing.body.error.message).toContain('send the request without If-Match to create it');
      expect((await httpRequest(`${httpBase(a)}${path}`, { headers: AUTH })).status).toBe(404);
      const created = await call(a, GROUP, 'PUT', path, { body: { config: config() } });
      expect([created.status, created.headers['etag'], created.body.config_version]).toEqual([200, '"1"', 1]);
      const { host_id } = await a.issue('web-member');
      expect((await httpRequest(`${httpBase(a)}/admin/agents/${host_id}/group`, { method: 'PUT', headers: AUTH, body: { group: 'web-edit' } })).status).toBe(200);
      const member = async () => (await call(b, AGENT, 'GET', `/admin/agents/${host_id}/config`)).body as { config_version: number; effective: unknown };
      const memberBefore = await member();
      expect(memberBefore.effective).toEqual(config());

      const first = await call(a, GROUP, 'PUT', path, { body: { config: config({ heartbeat_interval_secs: 10 }) }, headers: { 'If-Match': '"1"' } });
      expect([first.status, first.headers['etag']]).toEqual([200, '"2"']);
      const second = await call(b, GROUP, 'PUT', path, { body: { config: config({ probe_concurrency: 8 }) }, headers: { 'If-Match': '"1"' } });
      expect(second.status).toBe(412);
      expect(second.body.error.message).toBe(
        'the config of group web-edit changed since you read it (If-Match "1"; it is at version 2 now): nothing was stored; reload it (GET /admin/groups/web-edit/config), make your change again on what it holds now, and send it with If-Match "2"',
      );
      const cleared = await call(b, GROUP, 'DELETE', path, { headers: { 'If-Match': '"1"' } });
      expect(cleared.status).toBe(412);
      const group = await call(b, GROUP, 'GET', path);
      expect([group.headers['etag'], group.body.config_version, group.body.stored]).toEqual(['"2"', 2, config({ heartbeat_interval_secs: 10 })]);
      // the member got the first change only (one version more), nothing of the refused ones
      const memberAfter = await member();
      expect(memberAfter.effective).toEqual(config({ heartbeat_interval_secs: 10 }));
      expect(memberAfter.config_version).toBe(memberBefore.config_version + 1);
      const listed = (await call(a, '/admin/groups', 'GET', '/admin/groups')).body as { name: string; config_version: number }[];
      expect(listed.find((g) => g.name === 'web-edit')?.config_version).toBe(2);
    });

    it('a group config changed by a writer that leaves config_version as it was (a server of an earlier version during a rolling upgrade, a hand edit) still moves the ETag: a PUT with the old one is 412 (H55)', async () => {
      const path = '/admin/groups/old-writer/config';
      const created = await call(a, GROUP, 'PUT', path, { body: { config: config() } });
      const etag = created.headers['etag'] as string;
      // what an earlier version's setGroupConfig writes: the config and updated_at, no version
      await a.server.storage.db
        .updateTable('agent_groups')
        .set({ agent_config_json: JSON.stringify(config({ metrics_interval_secs: 99 })), updated_at: new Date().toISOString() })
        .where('name', '=', 'old-writer')
        .execute();
      const read = await call(b, GROUP, 'GET', path);
      expect(read.headers['etag']).not.toBe(etag);
      const stale = await call(b, GROUP, 'PUT', path, { body: { config: config({ heartbeat_interval_secs: 10 }) }, headers: { 'If-Match': etag } });
      expect(stale.status).toBe(412);
      expect((await call(a, GROUP, 'GET', path)).body.stored).toEqual(config({ metrics_interval_secs: 99 }));
      // this version's own writes bump it once, not twice
      const next = await call(a, GROUP, 'PUT', path, { body: { config: config() }, headers: { 'If-Match': read.headers['etag'] as string } });
      expect(next.status).toBe(200);
      expect(Number(JSON.parse(next.headers['etag'] as string))).toBe(Number(JSON.parse(read.headers['etag'] as string)) + 1);
    });

    it('twenty writers holding the same version, on two servers at once: exactly one write wins, the others are 412', async () => {
      const { host_id } = await a.issue('raced');
      for (const [template, path] of [[AGENT, `/admin/agents/${host_id}/config`], [GROUP, '/admin/groups/raced/config']] as const) {
        if (template === GROUP) await call(a, GROUP, 'PUT', path, { body: { config: config() } });
        const read = await call(a, template, 'GET', path);
        const etag = `"${read.body.config_version}"`; // the version read, as If-Match takes it
        // (without J13 each of these PUTs was stored, the last one silently over all the others)
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            httpRequest(`${httpBase(i % 2 === 0 ? a : b)}${path}`, { method: 'PUT', headers: { ...AUTH, 'If-Match': etag }, body: { config: config({ probe_concurrency: i + 1 }) } }),
          ),
        );
        const statuses = answers.map((r) => r.status).sort();
        expect(statuses, path).toEqual([200, ...Array<number>(19).fill(412)]);
        const winner = answers.findIndex((r) => r.status === 200);
        const now = await call(b, template, 'GET', path);
        expect(now.body.config_version, path).toBe(Number(JSON.parse(etag)) + 1);
        expect(now.body.stored.probe_concurrency, path).toBe(winner + 1);
        expect(read.headers['etag'], path).toBe(etag);
      }
    }, 30_000);
  });
}
