// Runs on both dialects (vitest projects "sqlite" and "postgres"); a few cases are about
// one dialect's own mechanics and say so.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { PostgresIntrospector, SqliteIntrospector, sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { migrateToLatest, migrationLockWaitMessage, migrations, SchemaTooNewError, SchemaTooOldError, type MigrationWait } from '../../server/db/migrations/index.js';
import { openStorage } from '../../server/db/open.js';
import type { Storage } from '../../server/db/storage.js';
import { itOn, newTestDb, testDialect } from '../support/dialects.js';
import { makeTempDir } from './helpers.js';

const dialect = testDialect();
const dirs: string[] = [];
const drops: (() => Promise<void>)[] = [];
const open: Storage[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  for (const d of drops.splice(0)) await d();
});

async function fresh(): Promise<{ path: string }> {
  if (dialect === 'postgres') {
    const t = await newTestDb('postgres');
    drops.push(t.drop);
    return { path: t.db };
  }
  const dir = makeTempDir();
  dirs.push(dir);
  return { path: join(dir, 'nested', 'folder', 'cortex.db') };
}

async function openAt(path: string): Promise<Storage> {
  const s = await openStorage(path, { poolSize: 2 });
  open.push(s);
  return s;
}

/** Takes `names` back (the last one first): each migration's down, and its row of the history. */
async function rollBack(storage: Storage, names: readonly string[]): Promise<void> {
  for (const name of [...names].reverse()) {
    await storage.withMigrationLock((db) => migrations[name]!.down!(db));
    await sql`delete from kysely_migration where name = ${name}`.execute(storage.db);
  }
}

/** This database's tables (PostgreSQL: of its own schema only). */
async function tablesOf(storage: Storage) {
  const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(storage.db)).rows[0]?.s : undefined;
  // under the migration lock: another test file dropping its schema meanwhile would fail the listing
  const all = await storage.withMigrationLock((db) => db.introspection.getTables());
  return all.filter((t) => (schema === undefined || t.schema === schema) && !/^logs_p\d{8}$/.test(t.name));
}

describe('migrations', () => {
  it('create every table on a fresh database (creating its folder) and are idempotent', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    expect(await migrateToLatest(storage)).toEqual(Object.keys(migrations));
    expect(await migrateToLatest(storage)).toEqual([]);

    const tables = (await tablesOf(storage)).map((t) => t.name).sort();
    expect(tables).toEqual(['agent_groups', 'agents', 'audit', 'ended_sessions', 'enrollment_tokens', 'logs', 'metrics', 'probe_requests', 'server_settings', 'servers']);
    const logs = (await tablesOf(storage)).find((t) => t.name === 'logs');
    expect(logs?.columns.map((c) => c.name)).toEqual([
      'host_id', 'seq', 'ts', 'received_at', 'severity', 'facility', 'app_name',
      'process_id', 'message', 'source', 'metadata_json',
    ]);
    const agents = (await tablesOf(storage)).find((t) => t.name === 'agents');
    const agentColumns = agents?.columns.map((c) => c.name) ?? [];
    for (const c of [
      'host_id', 'hostname', 'agent_version', 'platform_json', 'capabilities_json',
      'token_hash', 'token_hash_prev', 'token_rotated_at', 'connection_state', 'session_id',
      'accepted_seq', 'first_seen', 'last_handshake', 'last_seen', 'last_disconnect',
      'last_disconnect_reason', 'server_id',
    ]) {
      expect(agentColumns).toContain(c);
    }
    const metrics = (await tablesOf(storage)).find((t) => t.name === 'metrics');
    expect(metrics?.columns.map((c) => c.name)).toEqual(['host_id', 'ts', 'name', 'value', 'labels_json', 'received_at']);
  });

  it('leave an existing, populated database alone when reopened', async () => {
    const { path } = await fresh();
    const first = await openAt(path);
    await migrateToLatest(first);
    await first.db
      .insertInto('server_settings')
      .values({ key: 'k', value_json: '1', updated_at: new Date().toISOString() })
      .execute();
    await first.close();
    open.splice(open.indexOf(first), 1);

    const second = await openAt(path);
    expect(await migrateToLatest(second)).toEqual([]);
    const rows = await second.db.selectFrom('server_settings').selectAll().execute();
    expect(rows).toHaveLength(1);
  });

  // busy_timeout 0 on the main connection: it waits for another connection's lock asynchronously,
  // never in SQLite's busy handler, which would sleep the event loop (DECISIONS J20)
  itOn('sqlite')('open the SQLite database in WAL mode with foreign keys and no busy handler on the main connection', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    const pragma = async (name: string) =>
      (await sql<Record<string, unknown>>`${sql.raw(`pragma ${name}`)}`.execute(storage.db)).rows[0];
    expect(await pragma('journal_mode')).toEqual({ journal_mode: 'wal' });
    expect(await pragma('synchronous')).toEqual({ synchronous: 1 }); // NORMAL
    expect(await pragma('foreign_keys')).toEqual({ foreign_keys: 1 });
    expect(await pragma('busy_timeout')).toEqual({ timeout: 0 });
  });

  // PostgreSQL: each day partition has its own UNIQUE (host_id, seq); across days the
  // ingest statement keeps seqs unique (test/server/partitions.pg.test.ts).
  itOn('sqlite')('enforce UNIQUE(host_id, seq) on logs', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    await migrateToLatest(storage);
    const row = {
      host_id: 'h', seq: 1, ts: 't', received_at: 'r', severity: 'info', message: 'm', source: 'journald',
    };
    await storage.db.insertInto('logs').values(row).execute();
    await expect(storage.db.insertInto('logs').values(row).execute()).rejects.toThrow(/UNIQUE|unique/);
  });

  it('roll a failed migration back completely', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    const { Migrator } = await import('kysely');
    const schema = dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(storage.db)).rows[0]?.s : undefined;
    await expect(
      storage.withMigrationLock(async (db) => {
        const migrator = new Migrator({
          db,
          ...(schema !== undefined ? { migrationTableSchema: schema } : {}),
          provider: {
            getMigrations: async () => ({
              ...migrations,
              '0002-broken': { up: async () => { throw new Error('boom'); } },
            }),
          },
        });
        const { error } = await migrator.migrateToLatest();
        if (error) throw error;
      }),
    ).rejects.toThrow('boom');
    const tables = (await tablesOf(storage)).map((t) => t.name).filter((n) => !n.startsWith('kysely_'));
    expect(tables).toEqual([]);
    expect(await migrateToLatest(storage)).toEqual(Object.keys(migrations));
  });

  it('refuse a database migrated by a newer version, changing nothing', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    await migrateToLatest(storage);
    await sql`insert into kysely_migration (name, timestamp) values ('0099-from-the-future', '2030-01-01T00:00:00.000Z')`.execute(storage.db);
    const before = (await tablesOf(storage)).map((t) => t.name).sort();
    const error = await migrateToLatest(storage).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(String((error as Error).message)).toMatch(/newer than this cortex-server knows.*0099-from-the-future.*run the newer cortex-server/);
    expect((await tablesOf(storage)).map((t) => t.name).sort()).toEqual(before);
  });

  // kysely's Migrator lists the tables of every schema of the database before it runs,
  // and that listing fails when any table is dropped meanwhile (42P01): a day partition
  // dropped by a server's retention, which does not take the migration lock, failed an
  // `agent issue` of another process that way.
  const introspector = dialect === 'postgres' ? PostgresIntrospector : SqliteIntrospector;

  it('take a current database as it is, without listing the tables of the database', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    await migrateToLatest(storage);
    const listing = vi.spyOn(introspector.prototype, 'getTables').mockRejectedValue(Object.assign(new Error('relation "logs_p20260506" does not exist'), { code: '42P01' }));
    expect(await migrateToLatest(storage)).toEqual([]);
    expect(listing).not.toHaveBeenCalled();
  });

  it('still run the migrations a database lacks (the history short of the last one)', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    await migrateToLatest(storage);
    const last = Object.keys(migrations).at(-1)!;
    await rollBack(storage, [last]);
    expect(await migrateToLatest(storage)).toEqual([last]);
  });

  it('0031 gives metrics a received_at: rows stored before keep theirs empty (retention ages them by ts), new rows are indexed by it', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    await migrateToLatest(storage);
    // back to before 0031 (the migrations after it first, last one first)
    const names = Object.keys(migrations);
    const since = names.slice(names.indexOf('0031-metrics-received-at'));
    await rollBack(storage, since);
    await sql`insert into metrics (host_id, ts, name, value, labels_json) values ('h', '2026-01-01T00:00:00.000Z', 'cpu', 1, null)`.execute(storage.db);
    expect(await migrateToLatest(storage)).toEqual(since);
    const rows = await storage.db.selectFrom('metrics').selectAll().execute();
    expect(rows).toEqual([{ host_id: 'h', ts: '2026-01-01T00:00:00.000Z', name: 'cpu', value: 1, labels_json: null, received_at: null }]);
    const indexes =
      dialect === 'postgres'
        ? (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = 'metrics' order by 1`.execute(storage.db)).rows
        : (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'metrics' order by name`.execute(storage.db)).rows;
    expect(indexes.map((r) => r.name)).toEqual(['metrics_host_id_ts_idx', 'metrics_legacy_ts_idx', 'metrics_received_at_idx']);
  });

  it('an admin command (upgrade: false) refuses a database an older version made, changing nothing; a new one it creates (H55)', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    await migrateToLatest(storage);
    const names = Object.keys(migrations);
    const lastTwo = names.slice(-2);
    await rollBack(storage, lastTwo);
    await expect(migrateToLatest(storage, { upgrade: false })).rejects.toThrow(SchemaTooOldError);
    await expect(migrateToLatest(storage, { upgrade: false })).rejects.toThrow(`not applied yet: ${lastTwo.join(', ')}); admin commands do not migrate a database: run cortex-server migrate`);
    const history = async () => (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(storage.db)).rows.map((r) => r.name);
    expect(await history()).toEqual(names.slice(0, -2));
    expect(await migrateToLatest(storage)).toEqual(lastTwo);
    // a new database: created with the whole schema even so
    const other = await fresh();
    expect(await migrateToLatest(await openAt(other.path), { upgrade: false })).toEqual(names);
  });

  itOn('sqlite')('serve says which migrations it applied at start (it said nothing) (H55)', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    await migrateToLatest(storage);
    const last = Object.keys(migrations).at(-1)!;
    await rollBack(storage, [last]);
    await storage.close();
    open.splice(open.indexOf(storage), 1);
    const { startTestServer } = await import('./wire.js');
    const t = await startTestServer({ db: path });
    try {
      expect(t.log.records().find((r) => typeof r['msg'] === 'string' && r['msg'].startsWith("database migrated to this version's schema"))).toMatchObject({ level: 'info', applied: [last] });
    } finally {
      await t.close();
    }
  });

  itOn('postgres')('a migration that waits for a table lock (a pg_dump, an open transaction) says who holds it, holds no one else up, and finishes once it is free (H55)', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    await migrateToLatest(storage);
    const name = '0032-group-config-version';
    const after = Object.keys(migrations).slice(Object.keys(migrations).indexOf(name));
    await rollBack(storage, after);
    const pg = (await import('pg')).default;
    const holder = new pg.Client({ connectionString: path, application_name: 'pg_dump' });
    await holder.connect();
    const reader = new pg.Client({ connectionString: path });
    await reader.connect();
    try {
      await holder.query('begin');
      await holder.query('select count(*) from agent_groups'); // an AccessShare lock until commit, as pg_dump holds
      const waits: MigrationWait[] = [];
      let saidWait: () => void = () => undefined;
      const said = new Promise<void>((resolve) => (saidWait = resolve));
      const migrating = migrateToLatest(storage, (h) => {
        waits.push(h);
        saidWait();
      });
      await said;
      expect(waits[0]!.lock).toBe('tables');
      expect(waits[0]!.holder).toMatch(/^pid \d+ \(pg_dump, transaction open \d+ s: select count\(\*\) from agent_groups\)/);
      expect(migrationLockWaitMessage(waits[0]!)).toMatch(/^database migration waits for a lock on its tables, held by pid \d+ \(pg_dump/);
      // another session reads the table while the migration waits: not queued behind it for long
      const started = performance.now();
      await reader.query('select count(*) from agent_groups');
      expect(performance.now() - started).toBeLessThan(5000);
      await holder.query('commit');
      expect(await migrating).toEqual(after);
    } finally {
      await holder.end().catch(() => undefined);
      await reader.end().catch(() => undefined);
    }
  });

  itOn('postgres')("try the Migrator's set-up again when a table it listed was dropped meanwhile (42P01), and nothing else", async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    const original = PostgresIntrospector.prototype.getTables;
    let calls = 0;
    vi.spyOn(PostgresIntrospector.prototype, 'getTables').mockImplementation(function (this: PostgresIntrospector, ...args) {
      calls++;
      if (calls <= 2) return Promise.reject(Object.assign(new Error('relation "logs_p20260506" does not exist'), { code: '42P01' }));
      return original.apply(this, args);
    });
    expect(await migrateToLatest(storage)).toEqual(Object.keys(migrations));
    expect(calls).toBeGreaterThan(2);

    // another error of the set-up is not taken for a race: it fails at once, naming itself
    const other = await fresh();
    const second = await openAt(other.path);
    calls = 0;
    vi.spyOn(PostgresIntrospector.prototype, 'getTables').mockImplementation(() => {
      calls++;
      return Promise.reject(Object.assign(new Error('permission denied for schema locked_away'), { code: '42501' }));
    });
    await expect(migrateToLatest(second)).rejects.toThrow(/database migration failed: permission denied for schema locked_away/);
    expect(calls).toBe(1);
  });

  itOn('sqlite')('leave logs without a (received_at) index on SQLite (retention reads the rowid order), and put it back going down', async () => {
    const { path } = await fresh();
    const storage = await openAt(path);
    await migrateToLatest(storage);
    const indexes = async () => (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'logs' and name not like 'sqlite_autoindex%' order by name`.execute(storage.db)).rows.map((r) => r.name);
    expect(await indexes()).toEqual(['logs_host_id_ts_idx']);
    await storage.withMigrationLock((db) => migrations['0030-sqlite-logs-insertion-order']!.down!(db));
    expect(await indexes()).toEqual(['logs_host_id_ts_idx', 'logs_received_at_idx']);
  });

  // SQLite: test/server/multi-process.test.ts (in one process better-sqlite3 would block
  // the event loop waiting for the other connection's lock).
  itOn('postgres')('several connections migrating one database at once: exactly one applies the migrations', async () => {
    const { path } = await fresh();
    const storages = await Promise.all([1, 2, 3, 4].map(() => openAt(path)));
    const applied = await Promise.all(storages.map((s) => migrateToLatest(s)));
    expect(applied.filter((a) => a.length > 0)).toEqual([Object.keys(migrations)]);
  });
});
