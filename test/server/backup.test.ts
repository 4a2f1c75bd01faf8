// cortex-server backup --to FILE (issue 16): a consistent copy of a SQLite database that
// another process keeps writing, committed transactions still in the WAL included; bad
// input exits 2 and changes nothing; a PostgreSQL URL is told to use pg_dump.
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT, SERVER_CLI, cleanupTempDirs, cliSync, exitOf, issueAgent, requireDist, tempDir } from '../support/procs.js';

beforeAll(() => requireDist());
afterAll(() => cleanupTempDirs());

// Commits batches of 100 rows into t(batch, i) forever with automatic checkpoints off,
// so everything committed stays in the WAL (a plain copy of the main file would miss it).
// Prints "ready <batches>" after 20 batches, then keeps writing until stdin closes.
const WRITER = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1], { timeout: 5000 });
db.pragma('journal_mode = WAL');
db.pragma('wal_autocheckpoint = 0');
db.exec('CREATE TABLE IF NOT EXISTS t (batch INTEGER NOT NULL, i INTEGER NOT NULL)');
const ins = db.prepare('INSERT INTO t (batch, i) VALUES (?, ?)');
const batch = db.transaction((b) => { for (let i = 0; i < 100; i++) ins.run(b, i); });
let b = 0, stop = false;
process.stdin.on('close', () => { stop = true; });
process.stdin.resume();
const tick = () => {
  if (stop) { db.close(); return; }
  batch(++b);
  if (b === 20) process.stdout.write('ready ' + b + '\\n');
  setImmediate(tick);
};
tick();
`;

it('copies a database another process is writing: one consistent snapshot, WAL content included, passes integrity_check', async () => {
  const dir = tempDir('cortex-backup-');
  const db = join(dir, 'server.db');
  const issued = issueAgent(db, 'backup-host'); // the server's schema and one agent row

  const writer = spawn(process.execPath, ['-e', WRITER, db], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let werr = '';
  writer.stderr!.on('data', (d: Buffer) => (werr += d.toString()));
  await new Promise<void>((resolve, reject) => {
    writer.stdout!.on('data', (d: Buffer) => (d.toString().includes('ready') ? resolve() : undefined));
    writer.once('exit', (code) => reject(new Error(`writer exited ${code}: ${werr}`)));
  });

  const to = join(dir, 'backups', 'copy.db'); // folder created by the command
  // under a umask that lets everyone read what it creates, as on a stock Debian shell
  const child = spawn('/bin/sh', ['-c', 'umask 022 && exec "$@"', 'sh', process.execPath, SERVER_CLI, 'backup', '--db', db, '--to', to, '--json'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = await exitOf(child);
  writer.stdin!.end();
  await exitOf(writer);
  expect(code, err).toBe(0);

  const result = JSON.parse(out) as { db: string; to: string; bytes: number; pages: number };
  expect(result.to).toBe(to);
  expect(result.bytes).toBeGreaterThan(0);
  expect(result.pages * 4096).toBe(result.bytes);
  // one self-contained file: no -wal/-shm and no partial left beside it
  expect(readdirSync(join(dir, 'backups'))).toEqual(['copy.db']);
  // private like the database (logs, token hashes), whatever the umask (H47; was 0755 / 0644)
  expect(statSync(join(dir, 'backups')).mode & 0o777).toBe(0o700);
  expect(statSync(to).mode & 0o777).toBe(0o600);

  const copy = new Database(to, { readonly: true, fileMustExist: true });
  try {
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(copy.prepare('SELECT host_id FROM agents').all()).toEqual([{ host_id: issued.host_id }]);
    const { n, batches, maxBatch } = copy.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT batch) AS batches, MAX(batch) AS maxBatch FROM t').get() as {
      n: number;
      batches: number;
      maxBatch: number;
    };
    // the 20 batches committed before the backup started are there (they were only in the WAL)
    expect(maxBatch).toBeGreaterThanOrEqual(20);
    // a snapshot: whole transactions only, none missing in the middle
    expect(n).toBe(batches * 100);
    expect(batches).toBe(maxBatch);
  } finally {
    copy.close();
  }
}, 30_000);

it('bad input exits 2 and changes nothing: no --to, a missing database, an existing target, a PostgreSQL URL', () => {
  const dir = tempDir('cortex-backup-');
  const db = join(dir, 'server.db');
  issueAgent(db, 'h');

  const noTo = cliSync(SERVER_CLI, ['backup', '--db', db]);
  expect(noTo.code).toBe(2);
  expect(noTo.stderr).toContain('--to FILE is required');

  const missing = cliSync(SERVER_CLI, ['backup', '--db', join(dir, 'nope.db'), '--to', join(dir, 'x.db')]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('no database at');
  expect(existsSync(join(dir, 'nope.db'))).toBe(false); // not created by the attempt
  expect(existsSync(join(dir, 'x.db'))).toBe(false);

  const existing = join(dir, 'existing.db');
  writeFileSync(existing, 'keep me');
  const over = cliSync(SERVER_CLI, ['backup', '--db', db, '--to', existing]);
  expect(over.code).toBe(2);
  expect(over.stderr).toContain('already exists');
  expect(readFileSync(existing, 'utf8')).toBe('keep me');
  expect(readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);

  const pg = cliSync(SERVER_CLI, ['backup', '--db', 'postgres://postgres@127.0.0.1:5432/test', '--to', join(dir, 'pg.db')]);
  expect(pg.code).toBe(2);
  expect(pg.stderr).toContain('pg_dump');
  expect(existsSync(join(dir, 'pg.db'))).toBe(false);

  const self = cliSync(SERVER_CLI, ['backup', '--db', db, '--to', db]);
  expect(self.code).toBe(2);
});

it('a database restored with cp (mode 0644 under a 022 umask) is made private again when the server opens it (H47)', () => {
  const dir = tempDir('cortex-backup-');
  const db = join(dir, 'server.db');
  issueAgent(db, 'h');
  const restored = join(dir, 'restored.db');
  copyFileSync(db, restored);
  chmodSync(restored, 0o644);
  chmodSync(dir, 0o755);
  const list = cliSync(SERVER_CLI, ['agent', 'list', '--json', '--db', restored]);
  expect(list.code, list.stderr).toBe(0);
  expect(statSync(restored).mode & 0o777).toBe(0o600);
  // the folder it lives in is left as it is (--db may name a file in a shared one)
  expect(statSync(dir).mode & 0o777).toBe(0o755);
});
