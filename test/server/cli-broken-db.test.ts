// The server CLI on a SQLite database an operator (or a disk) broke: a file that is no
// database, one cut to 0 bytes, one another process holds locked, one on a full disk. Each is
// said as what it is (E_DB_OPEN / E_DISK_FULL, what to do), never E_INTERNAL "this is a bug",
// and a read-only admin command writes nothing into a file that is not a cortex database.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireServerCli, CLI, ROOT } from './spawn.js';
import { fillDisk, releaseSmallDisks, smallDisk } from '../support/small-disk.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'cortex-brokendb-'));
  dirs.push(d);
  return d;
}
afterEach(releaseSmallDisks);
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

let good = '';
beforeAll(() => {
  requireServerCli();
  good = join(tmp(), 'good.db');
  const r = run(['agent', 'issue', '--host', 'web-1', '--db', good, '--json']);
  if (r.code !== 0) throw new Error(r.stderr);
}, 120_000);

function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** run(), without blocking: for commands that wait (on a lock) side by side. */
function runAsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, timeout: 30_000 });
    let stdout = '', stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function noInternal(r: { stderr: string }, what: string): void {
  expect(r.stderr, what).not.toContain('E_INTERNAL');
  expect(r.stderr, what).not.toMatch(/this is a bug|\n\s+at /);
}

/** A copy of the good database in a folder of its own. */
function copy(dir = tmp()): string {
  const db = join(dir, 'cortex.db');
  copyFileSync(good, db);
  return db;
}

describe('backup of a file that is no cortex database', () => {
  it('garbage, truncated, a folder, 0 bytes: E_DB_OPEN exit 2 (garbage and truncated were E_INTERNAL SQLITE_NOTADB/CORRUPT), no copy written', () => {
    const dir = tmp();
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, Buffer.alloc(8192, 0x5a));
    const truncated = join(dir, 'truncated.db');
    writeFileSync(truncated, readFileSync(good).subarray(0, 50_000));
    const folder = join(dir, 'folder.db');
    mkdirSync(folder);
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    for (const [db, says] of [
      [garbage, 'is not a cortex database (SQLITE_NOTADB'],
      [truncated, 'is not a cortex database (SQLITE_CORRUPT'],
      [folder, 'is a folder, not a database file'],
      [empty, 'is empty (0 bytes): it is not a cortex database'],
    ] as const) {
      const to = join(dir, `copy-of-${db.split('/').pop()!}`);
      const r = run(['backup', '--db', db, '--to', to]);
      expect(r.code, db).toBe(2);
      expect(r.stderr, db).toContain('cortex-server: error[E_DB_OPEN]: ');
      expect(r.stderr, db).toContain(says);
      noInternal(r, db);
      expect(existsSync(to), db).toBe(false);
    }
  });
});

describe('a database another process holds locked (sqlite3 in BEGIN EXCLUSIVE)', () => {
  it('migrate, serve and agent list: E_DB_OPEN "locked by another process", how long it waited, how to find it (migrate and serve were E_INTERNAL SQLITE_BUSY)', async () => {
    const db = copy();
    const holder = new Database(db);
    try {
      holder.exec('BEGIN EXCLUSIVE');
      holder.prepare('SELECT count(*) FROM agents').get();
      // the three side by side: each waits out its lock timeout
      const commands = [['migrate'], ['serve', '--listen', '127.0.0.1:0'], ['agent', 'list']];
      const results = await Promise.all(commands.map((args) => runAsync([...args, '--db', db])));
      for (const [k, args] of commands.entries()) {
        const r = results[k]!;
        const what = args.join(' ');
        expect(r.code, `${what}: ${r.stderr}`).toBe(2);
        expect(r.stderr, what).toMatch(new RegExp(`cortex-server: error\\[E_DB_OPEN\\]: the database ${db.replace(/[.]/g, '\\.')} is locked by another process \\(SQLITE_BUSY\\): waited \\d+(\\.\\d)? s for its lock; nothing was changed — find the process that holds it \\(fuser -v `));
        noInternal(r, what);
      }
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  }, 90_000);
});

describe('admin commands on a full disk', () => {
  it('agent list, agent tokens, audit, agent issue: E_DISK_FULL exit 1, not E_DB_OPEN "give --db" exit 2', () => {
    const dir = smallDisk(1024 * 1024, 'cortex-brokendb-full-');
    if (dir === null) {
      console.warn('a full disk: needs a tmpfs mount (root); not run');
      return;
    }
    const db = copy(dir);
    fillDisk(dir);
    for (const args of [['agent', 'list'], ['agent', 'tokens'], ['audit'], ['agent', 'issue', '--host', 'web-2']]) {
      const r = run([...args, '--db', db]);
      const what = args.join(' ');
      expect(r.code, `${what}: ${r.stderr}`).toBe(1);
      expect(r.stderr, what).toContain(`cortex-server: error[E_DISK_FULL]: cannot use the database ${db}: its disk is full (`);
      expect(r.stderr, what).not.toContain('give --db');
    }
  });
});

describe('a database file of 0 bytes (cut short)', () => {
  it('read-only admin commands refuse it (E_DB_OPEN exit 2) and write nothing to it; a SQLite file without a table is refused the same way', () => {
    const dir = tmp();
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    for (const args of [['agent', 'list'], ['agent', 'list', '--json'], ['audit'], ['agent', 'tokens'], ['agent', 'issue', '--host', 'web-1']]) {
      const r = run([...args, '--db', empty]);
      const what = args.join(' ');
      expect(r.code, what).toBe(2);
      // --json: the error is also one JSON value on stdout (DECISIONS I31); else stdout stays empty
      if (args.includes('--json')) expect((JSON.parse(r.stdout) as { error: { code: string; message: string } }).error, what).toMatchObject({ code: 'E_DB_OPEN', message: expect.stringContaining(`${empty} is empty (0 bytes)`) as unknown });
      else expect(r.stdout, what).toBe('');
      expect(r.stderr, what).toContain(`cortex-server: error[E_DB_OPEN]: ${empty} is empty (0 bytes): it is not a cortex database`);
      expect(r.stderr, what).toContain('restore the latest `cortex-server backup` copy');
      expect(statSync(empty).size, what).toBe(0);
      expect(existsSync(`${empty}-wal`), what).toBe(false);
    }
    const noTables = join(dir, 'no-tables.db');
    const d = new Database(noTables);
    d.pragma('user_version = 7');
    d.close();
    const before = readFileSync(noTables);
    const r = run(['agent', 'list', '--db', noTables]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${noTables} is a SQLite file without a single table: it is not a cortex database`);
    expect(readFileSync(noTables).equals(before)).toBe(true);
  });

  it('migrate makes a new database in it, as at a path with no file, and says that it was empty', () => {
    const empty = join(tmp(), 'empty.db');
    writeFileSync(empty, '');
    const r = run(['migrate', '--db', empty, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`cortex-server: note: the database file ${empty} is empty (0 bytes): a new, empty database is made in it. If it held the server's data`);
    expect(JSON.parse(r.stdout)).toMatchObject({ dialect: 'sqlite' });
    expect(run(['agent', 'list', '--db', empty, '--json']).stdout.trim()).toBe('[]');
  });
});
