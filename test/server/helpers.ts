// Shared helpers for server storage tests: real SQLite files in a temp dir, or a fresh
// PostgreSQL schema (test/support/dialects.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { openStorage } from '../../server/db/open.js';
import { testDialect } from '../support/dialects.js';
import type { DialectName, Storage } from '../../server/db/storage.js';
import type { IngestLogEntry } from '../../server/db/storage.js';

export interface TempDb {
  dir: string;
  /** The --db value: the SQLite file, or the postgres:// URL of the fresh schema. */
  path: string;
  dialect: DialectName;
  storage: Storage;
  cleanup(): Promise<void>;
}

const madeDirs: string[] = [];
// Registered on the suite of the test file that imports this module (each file has its own
// module instance): the folders it made are removed after its tests, its servers stopped by then.
afterAll(() => {
  for (const d of madeDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temporary folder, removed after the test file that made it. */
export function makeTempDir(prefix = 'cortex-server-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  madeDirs.push(dir);
  return dir;
}

/**
 * A migrated database: SQLite in a fresh temp dir (in a sub-folder, to check it is
 * created), or PostgreSQL in a fresh schema.
 */
export async function openTempDb(dialect: DialectName = testDialect()): Promise<TempDb> {
  if (dialect === 'postgres') {
    const { newTestDb } = await import('../support/dialects.js');
    const target = await newTestDb('postgres');
    const storage = await openStorage(target.db, { poolSize: 4 });
    try {
      await migrateToLatest(storage);
    } catch (error) {
      await storage.close();
      await target.drop();
      throw error;
    }
    return {
      dir: target.dir,
      path: target.db,
      dialect,
      storage,
      async cleanup() {
        await storage.close();
        await target.drop();
      },
    };
  }
  const dir = makeTempDir();
  const path = join(dir, 'data', 'cortex.db');
  const storage = await openStorage(path);
  await migrateToLatest(storage);
  return {
    dir,
    path,
    dialect,
    storage,
    async cleanup() {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function entries(from: number, to: number, extra: Partial<IngestLogEntry> = {}): IngestLogEntry[] {
  const out: IngestLogEntry[] = [];
  for (let seq = from; seq <= to; seq++) {
    out.push({
      seq,
      ts: new Date(Date.UTC(2026, 4, 16, 19, 42, 50) + seq).toISOString(),
      severity: 'info',
      message: `message ${seq}`,
      source: 'journald',
      ...extra,
    });
  }
  return out;
}
