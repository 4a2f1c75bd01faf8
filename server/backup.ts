// `cortex-server backup --to FILE`: a consistent copy of the server's SQLite database,
// made while the server keeps running (SQLite's online backup API through better-sqlite3:
// the copy is one snapshot, committed transactions still in the WAL included). On a
// PostgreSQL database it says to use pg_dump. The copy is written beside FILE under a
// temporary name and renamed into place when complete, so a failed or interrupted backup
// leaves no partial FILE.
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { DEFAULT_DB, UsageError } from './settings.js';
import { emptyDbError, sqliteAccessError, sqliteBusyError, sqliteDiskFullError, sqliteNotADbError } from './cli-db.js';
import { notASqliteFileError } from './cli/sqlite-path.js';

export const BACKUP_HELP = `Usage: cortex-server backup --to FILE [--db PATH] [--json]

  Copies the SQLite database at --db (default $CORTEX_DB, then ${DEFAULT_DB}) to FILE with SQLite's online
  backup API: safe while the server runs (the copy is one consistent snapshot, including
  transactions not yet checkpointed from the WAL). FILE must not exist; its folder is
  created. The copy is checked (PRAGMA quick_check) before it is renamed into place.
  For a PostgreSQL database (--db postgres://...) use pg_dump instead.
  --to FILE   where to write the copy
  --db PATH   the server's database
  --json      print {"db", "to", "bytes", "pages"} as one JSON object
`;

export interface BackupResult {
  db: string;
  to: string;
  bytes: number;
  pages: number;
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** Copies the SQLite database `dbPath` to `to` (which must not exist). Throws UsageError on bad input. */
export async function backupSqlite(dbPath: string, to: string): Promise<BackupResult> {
  if (POSTGRES_URL.test(dbPath)) {
    throw new UsageError(
      'backup copies SQLite databases only; for PostgreSQL use pg_dump, e.g. pg_dump --format=custom --file=cortex.dump "$DATABASE_URL" (restore with pg_restore)',
    );
  }
  const source = resolve(dbPath);
  const target = resolve(to);
  if (!existsSync(source)) throw new UsageError(`no database at ${source}: pass the server's --db PATH`, { code: 'E_DB_OPEN' });
  const st = statSync(source);
  const notAFile = notASqliteFileError(source, st, `--db ${source}`, "pass the server's --db PATH");
  if (notAFile !== undefined) throw notAFile;
  if (st.size === 0) throw emptyDbError(source);
  if (source === target) throw new UsageError('--to names the database itself: choose another file');
  if (existsSync(target)) throw new UsageError(`${target} already exists: remove it or choose another --to FILE (a backup never overwrites)`, { code: 'E_FILE_EXISTS' });
  // The copy holds every log and the token hashes: private like the database (DECISIONS H47).
  // Folders it creates are 0700, and the copy is made in a file created 0600 before anything
  // is written to it (SQLite's own create would take the umask's 0644).
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });

  const partial = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  // fileMustExist: never create an empty database at a mistyped --db. Not read-only: a
  // read-only connection cannot open a WAL database whose -shm file is gone (server stopped).
  // A file that is no cortex database (garbage, truncated), a full disk, a lock held by another
  // process, no permission: said as such (they printed E_INTERNAL SQLITE_NOTADB "this is a bug").
  const since = Date.now();
  const classified = (error: unknown): unknown =>
    sqliteNotADbError(error, source) ?? sqliteDiskFullError(error, source) ?? sqliteBusyError(error, source, Date.now() - since) ?? sqliteAccessError(error, source) ?? error;
  const db = (() => {
    let opened: Database.Database | undefined;
    try {
      opened = new Database(source, { fileMustExist: true, timeout: 5000 });
      // the header is read at the first statement, not at the open
      opened.prepare('SELECT count(*) FROM sqlite_master').get();
      return opened;
    } catch (error) {
      opened?.close();
      throw classified(error);
    }
  })();
  try {
    let pages = 0;
    closeSync(openSync(partial, 'wx', 0o600));
    await db.backup(partial, {
      progress: ({ totalPages }) => {
        pages = totalPages;
        // Everything in one step, i.e. one read transaction: in WAL mode it does not block
        // the server's writers, and a backup done in steps restarts whenever another
        // connection writes between two steps (a busy server would keep it from finishing).
        return 0x7fffffff;
      },
    });
    const copy = new Database(partial, { fileMustExist: true });
    try {
      // One self-contained file (the server switches a restored copy back to WAL).
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`the copy failed PRAGMA quick_check (${String(check)}); the source may be damaged: nothing written to ${target}`);
      pages = Number(copy.pragma('page_count', { simple: true }));
    } finally {
      copy.close();
    }
    renameSync(partial, target);
    return { db: source, to: target, bytes: statSync(target).size, pages };
  } catch (error) {
    for (const f of [partial, `${partial}-wal`, `${partial}-shm`, `${partial}-journal`]) rmSync(f, { force: true });
    throw classified(error);
  } finally {
    db.close();
  }
}

export async function backupCommand(args: string[]): Promise<void> {
  let values: { to?: string; db?: string; json?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: { to: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${BACKUP_HELP}`);
  }
  if (values.help) {
    process.stdout.write(BACKUP_HELP);
    return;
  }
  if (!values.to) throw new UsageError(`--to FILE is required\n\n${BACKUP_HELP}`);
  const result = await backupSqlite(values.db ?? (process.env['CORTEX_DB'] || DEFAULT_DB), values.to);
  process.stdout.write(
    values.json ? `${JSON.stringify(result)}\n` : `backed up ${result.db} to ${result.to} (${result.bytes} bytes, ${result.pages} pages)\n`,
  );
}
