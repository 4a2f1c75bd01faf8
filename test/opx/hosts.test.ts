// Hosts and identity: the label given at `agent issue --host` stays, the agent's own
// hostname is shown beside it; agent delete; an Active host's last disconnect is an earlier
// session's (shown with its time, marked "earlier"); Decommissioned told from Revoked.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireServerCli } from '../server/spawn.js';
import { connectAgent } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';
import { server } from './helpers.js';

let t: TestServer;
beforeAll(async () => {
  requireServerCli();
  t = await startTestServer({}, { controlPollMs: 50 });
}, 120_000);
afterAll(async () => {
  await t.close();
});

interface Row { host_id: string; hostname: string; agent_hostname: string | null; state: string; connection_state: string }
const list = (): Row[] => JSON.parse(server(['agent', 'list', '--json', '--db', t.dbPath]).stdout) as Row[];

it('label and agent hostname side by side; an earlier session\'s disconnect is marked with its time; decommissioned vs revoked', async () => {
  const h = await t.issue('db-primary');
  const first = await connectAgent(t, ['sys.uptime'], h); // helloParams reports its own hostname
  let row = list().find((r) => r.host_id === h.host_id) as Row;
  expect(row.hostname).toBe('db-primary');
  expect(row.agent_hostname).not.toBeNull();
  expect(row.agent_hostname).not.toBe('db-primary');
  first.client.ws.close(1000, 'bye');
  await first.client.closed;
  // wait for the server to record the close
  for (let i = 0; i < 200 && list().find((r) => r.host_id === h.host_id)?.connection_state !== 'Disconnected'; i++) await new Promise((r) => setTimeout(r, 25));
  const second = await connectAgent(t, ['sys.uptime'], { host_id: h.host_id, token: first.token });
  const human = server(['agent', 'list', '--db', t.dbPath]).stdout;
  const line = human.split('\n').find((l) => l.startsWith(h.host_id)) as string;
  expect(line).toContain('db-primary');
  expect(line).toContain(row.agent_hostname as string);
  expect(line).toMatch(/Active .* earlier: 1000 \S* ?at \d{4}-\d\d-\d\dT/);
  expect(human.split('\n')[0]).toMatch(/HOST_ID +LABEL +AGENT_HOSTNAME +GROUP +STATE/);

  // decommission a connected host: Draining, then Decommissioned; a plain revoke says Revoked
  const other = await t.issue('old-box');
  expect(server(['agent', 'revoke', other.host_id, '--db', t.dbPath]).code).toBe(0);
  expect(server(['agent', 'decommission', h.host_id, '--drain-secs', '0', '--db', t.dbPath]).code).toBe(0);
  await second.client.closed;
  for (let i = 0; i < 200 && list().find((r) => r.host_id === h.host_id)?.connection_state !== 'Revoked'; i++) await new Promise((r) => setTimeout(r, 25));
  row = list().find((r) => r.host_id === h.host_id) as Row;
  expect(row.state).toBe('Decommissioned');
  expect(list().find((r) => r.host_id === other.host_id)?.state).toBe('Revoked');
  expect(server(['agent', 'list', '--db', t.dbPath]).stdout).toMatch(/old-box .*Revoked/);
}, 120_000); // CLI runs: about 0.5 s each, more under load

it('agent delete: a revoked or never-connected host goes, its rows stay unless --purge; a connected one is refused', async () => {
  const db = t.server.storage.db;
  const never = await t.issue('never');
  const gone = await t.issue('gone');
  const live = await t.issue('live');
  const conn = await connectAgent(t, ['sys.uptime'], live);
  const now = new Date().toISOString();
  await t.server.storage.ingest.commitBatch(gone.host_id, [{ seq: 1, ts: now, severity: 'info', message: 'x', source: 'custom:x' }], now);
  await t.server.storage.ingest.commitBatch(never.host_id, [{ seq: 1, ts: now, severity: 'info', message: 'y', source: 'custom:x' }], now);
  const refused = server(['agent', 'delete', live.host_id, '--db', t.dbPath]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('only a revoked or never-connected host can be deleted');
  expect(server(['agent', 'revoke', gone.host_id, '--db', t.dbPath]).code).toBe(0);
  const kept = server(['agent', 'delete', gone.host_id, '--db', t.dbPath]);
  expect(kept.code, kept.stderr).toBe(0);
  expect(kept.stdout).toContain('kept');
  const purged = server(['agent', 'delete', never.host_id, '--purge', '--db', t.dbPath]);
  expect(purged.stdout).toContain('with its 1 log');
  const left = await db.selectFrom('logs').select('host_id').execute();
  expect(left.map((r) => r.host_id)).toContain(gone.host_id);
  expect(left.map((r) => r.host_id)).not.toContain(never.host_id);
  expect(list().map((r) => r.host_id)).not.toContain(gone.host_id);
  expect(server(['agent', 'delete', gone.host_id, '--db', t.dbPath]).code).toBe(2);
  conn.client.ws.close();
}, 120_000); // CLI runs: about 0.5 s each, more under load

it('migration 0020 keeps an existing host config as the host\'s own, and undoes cleanly', async () => {
  const { openSqliteStorage } = await import('../../server/db/dialect.js');
  const { migrations } = await import('../../server/db/migrations/index.js');
  const { Migrator } = await import('kysely');
  const { tmp } = await import('./helpers.js');
  const s = openSqliteStorage({ path: `${tmp()}/m.db` });
  const migrator = new Migrator({ db: s.db, provider: { getMigrations: async () => ({ ...migrations }) } });
  expect((await migrator.migrateTo('0002-retention-indexes')).error).toBeUndefined();
  await s.db.insertInto('agents').values({ host_id: '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', hostname: 'h', connection_state: 'NeverConnected', created_at: new Date().toISOString(), agent_config_json: '{"x":1}', config_apply_after: '2030-01-01T00:00:00.000Z' } as never).execute();
  expect((await migrator.migrateToLatest()).error).toBeUndefined();
  const row = await s.db.selectFrom('agents').selectAll().executeTakeFirstOrThrow();
  expect(row).toMatchObject({ host_config_json: '{"x":1}', host_config_apply_after: '2030-01-01T00:00:00.000Z', agent_config_json: '{"x":1}', group_name: null, agent_hostname: null });
  expect((await migrator.migrateTo('0002-retention-indexes')).error).toBeUndefined();
  expect((await s.db.introspection.getTables()).map((t) => t.name)).not.toContain('agent_groups');
  await s.close();
}, 120_000); // CLI runs: about 0.5 s each, more under load
