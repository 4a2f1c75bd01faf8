// Shared helpers for server storage tests: real SQLite files in a temp dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import type { Storage } from '../../server/db/storage.js';
import type { IngestLogEntry } from '../../server/db/storage.js';

export interface TempDb {
  dir: string;
  path: string;
  storage: Storage;
  cleanup(): Promise<void>;
}

export function makeTempDir(prefix = 'cortex-server-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A migrated database in a fresh temp dir (in a sub-folder, to check it is created). */
export async function openTempDb(): Promise<TempDb> {
  const dir = makeTempDir();
  const path = join(dir, 'data', 'cortex.db');
  const storage = openSqliteStorage({ path });
  await migrateToLatest(storage);
  return {
    dir,
    path,
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
