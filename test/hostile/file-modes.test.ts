// Issue 18, files with log contents or credentials are private (DECISIONS H11): the server's
// SQLite database and its -wal/-shm are created 0600 in a 0700 folder; an agent state dir
// that already exists with a wider mode is tightened to 0700 (and buffer.db to 0600).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureStateDir } from '../../agent/state-dir.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';

const root = mkdtempSync(join(tmpdir(), 'cortex-modes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (p: string) => statSync(p).mode & 0o777;

describe('file modes', () => {
  it('the server database, -wal and -shm are 0600 in a new 0700 folder, whatever the umask allows', async () => {
    const old = process.umask(0o022);
    try {
      const db = join(root, 'data', 'cortex.db');
      const s = openSqliteStorage({ path: db });
      await migrateToLatest(s);
      expect(mode(join(root, 'data'))).toBe(0o700);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) {
        expect(existsSync(f), f).toBe(true);
        expect(mode(f), f).toBe(0o600);
      }
      await s.close();
    } finally {
      process.umask(old);
    }
  });

  it('an existing 0755 agent state dir is tightened to 0700, a 0644 buffer.db to 0600', async () => {
    const dir = join(root, 'state');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'buffer.db'), '', { mode: 0o644 });
    chmodSync(join(dir, 'buffer.db'), 0o644);
    await ensureStateDir(dir);
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, 'buffer.db'))).toBe(0o600);
  });
});
