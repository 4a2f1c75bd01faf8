import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest, migrations } from '../../server/db/migrations/index.js';
import type { Storage } from '../../server/db/storage.js';
import { makeTempDir } from './helpers.js';

const dirs: string[] = [];
const open: Storage[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fresh(): { path: string } {
  const dir = makeTempDir();
  dirs.push(dir);
  return { path: join(dir, 'nested', 'folder', 'cortex.db') };
}

function openAt(path: string): Storage {
  const s = openSqliteStorage({ path });
  open.push(s);
  return s;
}

describe('migrations', () => {
  it('create every table on a fresh database (creating its folder) and are idempotent', async () => {
    const { path } = fresh();
    const storage = openAt(path);
    expect(await migrateToLatest(storage)).toEqual(Object.keys(migrations));
    expect(await migrateToLatest(storage)).toEqual([]);

    const tables = (await storage.db.introspection.getTables()).map((t) => t.name).sort();
    expect(tables).toEqual(['agent_groups', 'agents', 'audit', 'enrollment_tokens', 'logs', 'metrics', 'server_settings']);
    const logs = (await storage.db.introspection.getTables()).find((t) => t.name === 'logs');
    expect(logs?.columns.map((c) => c.name)).toEqual([
      'host_id', 'seq', 'ts', 'received_at', 'severity', 'facility', 'app_name',
      'process_id', 'message', 'source', 'metadata_json',
    ]);
    const agents = (await storage.db.introspection.getTables()).find((t) => t.name === 'agents');
    const agentColumns = agents?.columns.map((c) => c.name) ?? [];
    for (const c of [
      'host_id', 'hostname', 'agent_version', 'platform_json', 'capabilities_json',
      'token_hash', 'token_hash_prev', 'token_rotated_at', 'connection_state', 'session_id',
      'accepted_seq', 'first_seen', 'last_handshake', 'last_seen', 'last_disconnect',
      'last_disconnect_reason',
    ]) {
      expect(agentColumns).toContain(c);
    }
    const metrics = (await storage.db.introspection.getTables()).find((t) => t.name === 'metrics');
    expect(metrics?.columns.map((c) => c.name)).toEqual(['host_id', 'ts', 'name', 'value', 'labels_json']);
  });

  it('leave an existing, populated database alone when reopened', async () => {
    const { path } = fresh();
    const first = openAt(path);
    await migrateToLatest(first);
    await first.db
      .insertInto('server_settings')
      .values({ key: 'k', value_json: '1', updated_at: new Date().toISOString() })
      .execute();
    await first.close();
    open.splice(open.indexOf(first), 1);

    const second = openAt(path);
    expect(await migrateToLatest(second)).toEqual([]);
    const rows = await second.db.selectFrom('server_settings').selectAll().execute();
    expect(rows).toHaveLength(1);
  });

  it('open the database in WAL mode with foreign keys and a busy timeout', async () => {
    const { path } = fresh();
    const storage = openAt(path);
    const pragma = async (name: string) =>
      (await sql<Record<string, unknown>>`${sql.raw(`pragma ${name}`)}`.execute(storage.db)).rows[0];
    expect(await pragma('journal_mode')).toEqual({ journal_mode: 'wal' });
    expect(await pragma('synchronous')).toEqual({ synchronous: 1 }); // NORMAL
    expect(await pragma('foreign_keys')).toEqual({ foreign_keys: 1 });
    expect(await pragma('busy_timeout')).toEqual({ timeout: 5000 });
  });

  it('enforce UNIQUE(host_id, seq) on logs', async () => {
    const { path } = fresh();
    const storage = openAt(path);
    await migrateToLatest(storage);
    const row = {
      host_id: 'h', seq: 1, ts: 't', received_at: 'r', severity: 'info', message: 'm', source: 'journald',
    };
    await storage.db.insertInto('logs').values(row).execute();
    await expect(storage.db.insertInto('logs').values(row).execute()).rejects.toThrow(/UNIQUE/);
  });

  it('roll a failed migration back completely', async () => {
    const { path } = fresh();
    const storage = openAt(path);
    const { Migrator } = await import('kysely');
    await expect(
      storage.withMigrationLock(async (db) => {
        const migrator = new Migrator({
          db,
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
    const tables = (await storage.db.introspection.getTables()).map((t) => t.name);
    expect(tables).toEqual([]);
    expect(await migrateToLatest(storage)).toEqual(Object.keys(migrations));
  });
});
