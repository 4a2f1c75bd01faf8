// The database side of the CLI: which database --db / CORTEX_DB names, opening and
// migrating it for an admin command, and `cortex-server migrate`. Kept out of ./cli.ts so
// the command table there only gains small hooks.
import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { currentUserName } from '../common/process.js';
import { shellQuote } from '../common/shell-quote.js';
import { dirname, resolve } from 'node:path';
import { DEFAULT_DB_POOL, DbTargetError, parseDbTarget, redactDbUrl } from './db/open.js';
import Database from 'better-sqlite3';
import { DEFAULT_SQLITE_BUSY_TIMEOUT_MS } from './db/dialect.js';
import { defaultPostgresUser } from './db/pg-user.js';
import type { Storage } from './db/storage.js';
import type { KyselyPlugin, RootOperationNode } from 'kysely';
import { isDiskFullCode, isUnreachableCode } from '../common/errors.js';
import { NO_SLOT_HINT, READ_ONLY_DB_HINT, isDatabaseUnreachable, noConnectionSlot, secondsOf } from './db/outage.js';
import { DEFAULT_DB, UsageError } from './settings.js';
import { notASqliteFileError } from './cli/sqlite-path.js';

/** --db, else $CORTEX_DB, else the default SQLite file. */
export function dbArg(value: string | undefined): string {
  const v = value ?? process.env['CORTEX_DB'];
  return v === undefined || v === '' ? DEFAULT_DB : v;
}

/** Checks a --db value (exit 2 on a URL we cannot open); returns it. */
export function checkDbArg(value: string): string {
  let target: ReturnType<typeof parseDbTarget>;
  try {
    target = parseDbTarget(value);
  } catch (error) {
    if (error instanceof DbTargetError) throw new UsageError(error.message, { code: 'E_DB_OPEN' });
    throw error;
  }
  if (target.dialect === 'sqlite') {
    // A device, a pipe or a socket (`--db /dev/null`): SQLite opens it and fails at its first
    // sync (SQLITE_IOERR_FSYNC), which serve and migrate printed as E_INTERNAL "a bug".
    let st: Stats | undefined;
    try {
      st = statSync(target.path, { throwIfNoEntry: false });
    } catch {
      st = undefined; // ENOTDIR, EACCES: said where the file is opened
    }
    const notAFile = st === undefined ? undefined : notASqliteFileError(target.path, st, `--db ${target.path}`, 'give the path of a SQLite database file');
    if (notAFile !== undefined) throw notAFile;
  }
  return value;
}

/** Node's codes for a TLS peer certificate it does not accept. */
const TLS_TRUST_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** A query parameter of a postgres:// URL, or undefined. */
function sslParam(db: string, name: string): string | undefined {
  try {
    return new URL(db).searchParams.get(name) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Where a postgres:// URL leads, as messages name it: HOST:PORT, or a Unix socket's path; the redacted URL when it cannot be read. */
function postgresWhere(db: string): string {
  try {
    const u = new URL(db);
    // a Unix socket: ?host=/dir, or the folder percent-encoded as the host (postgresql://%2Fdir/db)
    const socketDir = u.searchParams.get('host') ?? (decodeURIComponent(u.hostname).startsWith('/') ? decodeURIComponent(u.hostname) : null);
    return socketDir !== null && socketDir.startsWith('/') ? `${socketDir.replace(/\/$/, '')}/.s.PGSQL.${u.port || '5432'}` : `${u.hostname}:${u.port || '5432'}`;
  } catch {
    return redactDbUrl(db); // parseDbTarget accepted it; shown redacted
  }
}

/**
 * An error that says a connection to PostgreSQL was open and then went: cut by the silence guard
 * (CORTEX_DB_SILENT, DECISIONS G43: it watches only connections that were opened), ended by
 * PostgreSQL under its session (57P01 terminated, 57P02 another backend crashed), node-postgres
 * refusing a statement on a connection that had closed or failed under an earlier one, or kysely
 * refusing one on a connection whose ROLLBACK failed — what reaches the caller when a ROLLBACK
 * or an unlock in a `finally` ran after the statement that was cut (kysely's transaction, the
 * migration lock) and took the place of its error.
 */
function wasOpenThenLost(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e?.code === 'CORTEX_DB_SILENT' || e?.code === '57P01' || e?.code === '57P02') return true;
  return typeof e?.message === 'string' && /^(Client (was closed|has encountered a connection error) and is not queryable|Postgres connection has been discarded)/.test(e.message);
}

/** What a PostgreSQL admin command has done on its database so far (watchDbUse). */
export interface DbUse {
  /** When the command opened the database (performance.now(): a step of the wall clock does not move it). */
  readonly since: number;
  /** Whether it has sent a statement that may change something (anything but a select). */
  wrote: boolean;
}

/** Whether a statement may change something: everything but a select (one with a WITH may hold a write) and a raw select or show. */
function mayWrite(node: RootOperationNode): boolean {
  if (node.kind === 'SelectQueryNode') return node.with !== undefined;
  if (node.kind === 'RawNode') return !/^\s*(select|show)\b/i.test(node.sqlFragments[0] ?? '');
  return true;
}

/**
 * `storage` with its `db` watched for what the command sends (DbUse), so that a connection lost
 * in the middle can say whether the command's change may have been made. Statements of the
 * storage's own (its clock) and transactions' BEGIN and COMMIT are not seen: they change
 * nothing by themselves.
 */
export function watchDbUse(storage: Storage): { storage: Storage; use: DbUse } {
  const use: DbUse = { since: performance.now(), wrote: false };
  const plugin: KyselyPlugin = {
    transformQuery({ node }) {
      if (mayWrite(node)) use.wrote = true;
      return node;
    },
    transformResult: ({ result }) => Promise.resolve(result),
  };
  const db = storage.db.withPlugin(plugin);
  return { storage: new Proxy(storage, { get: (target, key) => (key === 'db' ? db : Reflect.get(target, key, target)) }), use };
}

/**
 * Where postgresLostError was: `since` and `use.since` are performance.now() readings (the time
 * this process has seen pass, which a step of the wall clock does not move).
 *  - 'open': while an admin command checked the schema (the migration lock held), before its
 *    own work;
 *  - 'command': after the open, any loss (`use` says whether it had written);
 *  - 'migrate': `cortex-server migrate`'s run (its migrations commit together);
 *  - 'start': `serve`'s start-up — its schema check and migration, then joining the servers on
 *    the database (DECISIONS G45).
 */
export type DbLostDuring = { phase: 'open' | 'migrate' | 'start'; since: number } | { phase: 'command'; use: DbUse };

/**
 * PostgreSQL that answered this command and then stopped answering (the silence guard's
 * CORTEX_DB_SILENT: packets dropped on the way, or its host hangs) or lost its connection (a
 * reset, PostgreSQL restarted or stopped) in the middle of it, as E_DB_LOST (exit 1): not a
 * --db to fix. It was said as E_DB_OPEN "cannot reach PostgreSQL … is PostgreSQL running there?
 * check the host and port in the URL" (the URL is right: it answered), as E_CONNECT "check that
 * the server runs" or as E_INTERNAL "this is a bug". Says how long in, whether the command's
 * change may have been made, and what to do.
 * What counts (DbLostDuring): after an admin command's open, any loss; before it, and during
 * `migrate` or `serve`'s start-up, only errors that show the connection had been open (a reset
 * there may as well have come at the connection's start, and is told as E_DB_OPEN) — among them
 * any out-of-reach error of the migrator (MigrationError): it runs on the connection that took
 * the migration lock and read the history, so PostgreSQL had answered.
 * Undefined for anything else (no slot left is said by postgresOpenError).
 */
export function postgresLostError(error: unknown, db: string, during: DbLostDuring): Error | undefined {
  if (!/^postgres(ql)?:\/\//i.test(db)) return undefined;
  const ofMigrator = (error as { name?: unknown } | null)?.name === 'MigrationError';
  if (typeof (error as { code?: unknown } | null)?.code !== 'string' && error instanceof Error && error.cause !== undefined && !wasOpenThenLost(error)) error = error.cause;
  const outOfReach = isDatabaseUnreachable(error) && !noConnectionSlot(error);
  if (!(wasOpenThenLost(error) || (outOfReach && (ofMigrator || during.phase === 'command')))) return undefined;
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const where = postgresWhere(db);
  const wrote = during.phase === 'command' && during.use.wrote;
  const after = secondsOf(performance.now() - (during.phase === 'command' ? during.use.since : during.since));
  const when =
    during.phase === 'open'
      ? `while the command was opening the database (checking its schema), ${after} after it began`
      : during.phase === 'migrate'
        ? `in the middle of the migration, ${after} after it began`
        : during.phase === 'start'
          ? ofMigrator
            ? `in the middle of the start-up migration, ${after} after the server began starting`
            : `while the server was starting (checking and migrating the schema, or joining the servers on the database), ${after} after it began`
          : `in the middle of the command, ${after} after it had opened the database`;
  const what =
    code === 'CORTEX_DB_SILENT'
      ? `PostgreSQL at ${where} stopped answering ${when} (it had answered until then: the URL is right): ${message} (CORTEX_DB_SILENT)`
      : `the connection to PostgreSQL at ${where} was lost ${when} (it had answered until then: the URL is right): ${
          /not queryable|has been discarded/.test(message) ? `its connection had closed under it (${message})` : isUnreachableCode(code) ? code : code === '' || message.startsWith(code) ? message : `${code} ${message}`
        }`;
  const change =
    during.phase === 'open'
      ? 'The command had not begun its own work: nothing of it was done'
      : during.phase === 'migrate' || during.phase === 'start'
        ? 'Any migration it was applying may or may not have been applied: they commit together, and PostgreSQL may have carried out their COMMIT without its answer coming back'
        : wrote
          ? "The command's change may or may not have been made: PostgreSQL may have carried out a statement, or the COMMIT, whose answer never came back"
          : 'Nothing was changed: the command had only read';
  const why =
    code === 'CORTEX_DB_SILENT'
      ? 'check the network path from this host to the database (a firewall dropping packets, a route, a VPN or proxy) and that its host responds'
      : 'PostgreSQL restarted or was stopped, the database stopped answering, or something on the way (a firewall, a proxy, a NAT) cut the connection: check that PostgreSQL runs and the network path to it';
  const next =
    during.phase === 'migrate'
      ? 'then run cortex-server migrate again: it applies whatever is missing'
      : during.phase === 'start'
        ? 'then start serve again (or run cortex-server migrate): either applies whatever is missing'
        : wrote
          ? 'then see whether the change was made (cortex-server agent list, with the same --db) before running the command again, which could do it twice'
          : 'then run the command again';
  return Object.assign(new Error(`${what}. ${change} (--db ${redactDbUrl(db)})`), { code: 'E_DB_LOST', hint: `${why}; ${next}` });
}

/**
 * A PostgreSQL database that cannot be used, as the user's error to fix (exit 2, E_DB_OPEN),
 * naming what is wrong: not reachable, the user refused, no such database, no rights. Without
 * it these printed as E_CONNECT "check that the server runs" (which server?) or as E_INTERNAL
 * "this is a bug" (SQLSTATE 28000). Undefined for anything else. The password never shows.
 */
export function postgresOpenError(error: unknown, db: string): UsageError | undefined {
  if (!/^postgres(ql)?:\/\//i.test(db)) return undefined;
  // A migration's failure (MigrationError) carries PostgreSQL's error as its cause.
  if (typeof (error as { code?: unknown } | null)?.code !== 'string' && error instanceof Error && error.cause !== undefined) error = error.cause;
  const e = error as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const where = postgresWhere(db);
  let user = '';
  let database = '';
  try {
    const u = new URL(db);
    user = decodeURIComponent(u.username);
    database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  } catch {
    // parseDbTarget accepted it; show it redacted
  }
  const fail = (problem: string, hint: string): UsageError => new UsageError(`${problem} (--db ${redactDbUrl(db)})`, { code: 'E_DB_OPEN', hint });
  // The same test as the running server's (server/db/outage.ts): `serve --db-wait-secs` waits on
  // exactly these, and names them so when it gives up (PostgreSQL still starting: 57P03).
  if (noConnectionSlot(error)) return fail(`PostgreSQL at ${where} has no connection slot left: ${code} ${message}`, NO_SLOT_HINT);
  if (isDatabaseUnreachable(error)) {
    return fail(`cannot reach PostgreSQL at ${where}: ${isUnreachableCode(code) ? code : code !== '' ? `${code} ${message}` : message}`, 'is PostgreSQL running there? check the host and port in the URL');
  }
  if (code === '28000' || code === '28P01') {
    // no user in the URL: the one PGUSER or this process's user gave (server/db/postgres.ts defaultUser)
    const from = user !== '' ? '' : process.env['PGUSER'] ? ' (from PGUSER; the URL names none)' : ' (this process\'s user; the URL names none)';
    if (user === '') user = defaultPostgresUser() ?? '';
    return fail(`PostgreSQL refused the user ${JSON.stringify(user)}${from}: ${message}`, 'check the user and password in the URL, and pg_hba.conf');
  }
  if (code === '3D000') return fail(`PostgreSQL has no database ${JSON.stringify(database)}: ${message}`, `create it (createdb ${database}) or fix the URL`);
  if (code === '25006') return fail(`PostgreSQL at ${where} takes no writes: ${message}`, READ_ONLY_DB_HINT);
  // TLS to PostgreSQL (DECISIONS G27). pg takes sslmode=require as verify-full: a certificate
  // signed by a CA the system does not know (a managed database's) is refused.
  if (/does not support SSL connections/i.test(message)) {
    return fail(`PostgreSQL at ${where} does not accept TLS connections, and the URL asks for one (sslmode=${sslParam(db, 'sslmode') ?? 'on'})`, 'turn ssl on in its postgresql.conf (ssl = on, with a certificate and key), or leave sslmode out of the URL where the network is trusted');
  }
  if (TLS_TRUST_CODES.has(code)) {
    const hint =
      code === 'ERR_TLS_CERT_ALTNAME_INVALID'
        ? 'connect by a host name its certificate names (the URL\'s host), or use a certificate that names this one'
        : code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID'
          ? 'renew the certificate on the PostgreSQL server (or check this machine\'s clock)'
          : 'give the CA that signed it in the URL: sslrootcert=/path/to/ca.pem (a managed database publishes its CA bundle). Note that sslmode=require verifies the certificate here, as verify-full does';
    return fail(`PostgreSQL at ${where} presented a TLS certificate this machine does not trust: ${message} (${code})`, hint);
  }
  const file = (error as { path?: unknown } | null)?.path;
  const sslFile = typeof file === 'string' ? (['sslrootcert', 'sslcert', 'sslkey'] as const).find((k) => sslParam(db, k) === file) : undefined;
  if (sslFile !== undefined && typeof file === 'string') {
    return fail(`cannot read ${file}, the URL's ${sslFile}: ${code} ${message.replace(/^\w+: /, '')}`, `give ${sslFile} the path of a PEM file this user (${currentUserName()}) may read`);
  }
  // A setting the URL's ?options= passes at connection start that PostgreSQL refuses (an unknown
  // parameter, a value it cannot parse: -c search_path="two words" split at the space).
  if ((code === '22023' || code === '42704') && /parameter/i.test(message)) {
    return fail(`PostgreSQL refused a setting of the connection: ${code} ${message}`, 'check the ?options= of the URL: each setting as -c NAME=VALUE, the settings separated by %20 (a space inside a value as %5C%20)');
  }
  if (code === 'CORTEX_NO_SCHEMA') {
    const named = /search_path is (.*), and no schema/.exec(message)?.[1]?.split(',')[0]?.trim().replace(/^"|"$/g, '') ?? 'NAME';
    const schema = /^[a-z_][a-z0-9_]*$/.test(named) ? named : 'NAME';
    return fail(message, `create the schema first (create schema ${schema} authorization ${user === '' ? 'USER' : user}), or name one that exists in the URL (?options=-c%20search_path%3D${schema}) or for the user (alter role ${user === '' ? 'USER' : user} set search_path = ${schema})`);
  }
  if (code === 'CORTEX_NOT_OWNER') {
    const owner = (error as { owner?: unknown }).owner;
    return fail(message, `run serve as "${String(owner)}" (the user that ran migrate), or as a member of that role (GRANT ${String(owner)} TO ${user}, when it is a role made for cortex-server); the admin commands may keep a user with GRANTs only`);
  }
  if (code === 'CORTEX_POOLED_SESSIONS') {
    return fail(message, 'point --db at PostgreSQL itself (a managed database\'s direct or session-mode connection string), or set pool_mode = session for this database in pgbouncer.ini');
  }
  if (code === '42501') {
    // Named by PostgreSQL: "permission denied for schema public", "… for table agents".
    const schema = /permission denied for schema (\S+)/.exec(message)?.[1];
    if (schema !== undefined) {
      return fail(`the user ${JSON.stringify(user)} may not create tables in the schema ${schema}: ${message}`, `let it (as the schema's owner: GRANT CREATE, USAGE ON SCHEMA ${schema} TO ${user}), give it a schema of its own (CREATE SCHEMA cortex AUTHORIZATION ${user}, and ?options=-c%20search_path%3Dcortex in the URL), or run as the database's owner`);
    }
    const table = /permission denied for (?:table|relation|sequence) (\S+)/.exec(message)?.[1];
    if (table !== undefined) {
      return fail(`the user ${JSON.stringify(user)} may not use the table ${table}: another user created the tables here (${message})`, `run serve as the user that owns the tables (migrate created them: serve adds and drops partitions, which takes the owner, not only GRANTs); an admin command may also run as a user granted SELECT, INSERT, UPDATE and DELETE on them`);
    }
    return fail(`the user ${JSON.stringify(user)} may not create or change the tables: ${message}`, 'run as the user that owns the database and its tables');
  }
  return undefined;
}

/** Any of the database-opening errors below as the user's error (E_DB_OPEN), or undefined. */
export function dbOpenError(error: unknown, db: string): UsageError | undefined {
  return postgresOpenError(error, db) ?? sqliteNotADbError(error, db) ?? sqliteBusyError(error, db) ?? sqlitePathError(error, db) ?? sqliteAccessError(error, db);
}

/** The SQLite code of `error` or of its cause ('' when none). */
function sqliteCode(error: unknown): string {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof e?.code === 'string' ? e.code : e?.cause?.code;
  return typeof code === 'string' ? code : '';
}

/**
 * A SQLite database another process holds locked (SQLITE_BUSY after the busy timeout, or
 * SQLITE_LOCKED: a sqlite3 shell in BEGIN EXCLUSIVE, a tool with a write transaction left
 * open), as the user's error (E_DB_OPEN: it could not be opened; nothing was changed) saying so,
 * how long it waited, and how to find the holder; undefined for anything else. `serve` and
 * `migrate` printed E_INTERNAL SQLITE_BUSY "this is a bug", the admin commands "give --db".
 */
export function sqliteBusyError(error: unknown, path: string, waitedMs: number = DEFAULT_SQLITE_BUSY_TIMEOUT_MS): UsageError | undefined {
  if (/^postgres(ql)?:\/\//i.test(path)) return undefined;
  const code = sqliteCode(error);
  if (!code.startsWith('SQLITE_BUSY') && !code.startsWith('SQLITE_LOCKED')) return undefined;
  path = resolve(path);
  return new UsageError(
    `the database ${path} is locked by another process (${code}): waited ${Math.round(waitedMs / 100) / 10} s for its lock; nothing was changed`,
    {
      code: 'E_DB_OPEN',
      hint: `find the process that holds it (fuser -v ${shellQuote(path)} ${shellQuote(`${path}-wal`)}, or lsof ${shellQuote(path)}) — a sqlite3 shell in a transaction, a copy or backup tool; a running cortex-server holds it open without locking others out — end or stop it, then run the command again`,
    },
  );
}

/**
 * A SQLite database on a full disk (SQLITE_FULL, ENOSPC, SQLITE_IOERR_SHMSIZE: no room for its
 * -shm index), as E_DISK_FULL (exit 1: the path is right, the disk is full); undefined for
 * anything else. The admin commands said E_DB_OPEN "give --db with the database file that serve uses".
 */
export function sqliteDiskFullError(error: unknown, path: string): Error | undefined {
  if (/^postgres(ql)?:\/\//i.test(path)) return undefined;
  const code = sqliteCode(error);
  if (!isDiskFullCode(code)) return undefined;
  path = resolve(path);
  return Object.assign(new Error(`cannot use the database ${path}: its disk is full (${code}${code === 'SQLITE_IOERR_SHMSIZE' ? ': SQLite could not make its -shm index beside it' : ''}); nothing was changed`), {
    code: 'E_DISK_FULL',
    hint: `free space on the disk of ${path} (df ${dirname(path)}), then run the command again; nothing already stored is lost`,
  });
}

/**
 * A SQLite path with a file where a folder must be (`--db data.db/cortex.db`: the folder cannot
 * be made, EEXIST or ENOTDIR), as the user's error (E_DB_OPEN); undefined for anything else.
 * `serve` and `migrate` printed E_INTERNAL "this is a bug".
 */
export function sqlitePathError(error: unknown, path: string): UsageError | undefined {
  if (/^postgres(ql)?:\/\//i.test(path)) return undefined;
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'EEXIST' && code !== 'ENOTDIR') return undefined;
  return new UsageError(`--db ${path}: a part of the path is a file, not a folder (${code})`, {
    code: 'E_DB_OPEN',
    hint: 'give --db the database file in a folder, e.g. /var/lib/cortex-server/cortex.db',
  });
}

/**
 * A SQLite database `serve` may not open for writing (SQLITE_CANTOPEN, SQLITE_READONLY…,
 * EACCES: run as another user than the files'), as the user's error (E_DB_OPEN) naming what
 * this user cannot write; undefined for anything else. It printed E_INTERNAL "this is a bug".
 */
export function sqliteAccessError(error: unknown, path: string): UsageError | undefined {
  if (/^postgres(ql)?:\/\//i.test(path)) return undefined;
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = String(e?.code ?? e?.cause?.code ?? '');
  if (code !== 'SQLITE_CANTOPEN' && !code.startsWith('SQLITE_READONLY') && code !== 'EACCES' && code !== 'EPERM') return undefined;
  const blocked: string[] = [];
  for (const [what, p, mode] of [
    ['the folder', dirname(path), constants.W_OK | constants.X_OK],
    ['the file', path, constants.R_OK | constants.W_OK],
  ] as const) {
    try {
      accessSync(p, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') blocked.push(`${what} ${p} (${(err as NodeJS.ErrnoException).code})`);
    }
  }
  return new UsageError(
    `cannot open the database ${path} for reading and writing (${code})${blocked.length > 0 ? `: this user (${currentUserName()}) may not write ${blocked.join(' nor ')}` : ''}; serve writes the file and, beside it, its -wal and -shm files`,
    { code: 'E_DB_OPEN', hint: 'run serve as the user that owns them (cortex-server for the packaged unit), or give that user the folder (chown -R)' },
  );
}

/**
 * A SQLite file that is not a database of ours (another kind of file, or damaged), as the
 * user's error (E_DB_OPEN); undefined for anything else. `serve` printed it as E_INTERNAL
 * "this is a bug".
 */
export function sqliteNotADbError(error: unknown, path: string): UsageError | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CORRUPT') return undefined;
  return new UsageError(`${path} is not a cortex database (${code}: another kind of file, or a damaged one); give --db with the database file that serve uses`, {
    code: 'E_DB_OPEN',
    hint: 'a damaged database: restore the latest `cortex-server backup` copy (docs/operations.md), or move the file aside to start with an empty one',
  });
}

/**
 * An existing SQLite file with nothing of a database in it: 'empty' (0 bytes: a database cut
 * short — a truncated copy, a disk that filled while it was written — or a file made by
 * mistake) or 'no_schema' (a SQLite file without a single table); null otherwise, or when it
 * cannot be told here (the open that follows says why). Read only: nothing is written to it.
 */
export function sqliteEmptiness(path: string): 'empty' | 'no_schema' | null {
  let size: number;
  try {
    size = statSync(path).size;
  } catch {
    return null;
  }
  if (size === 0) return 'empty';
  let db: InstanceType<typeof Database> | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const row = db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number };
    return row.n === 0 ? 'no_schema' : null;
  } catch {
    return null;
  } finally {
    db?.close();
  }
}

/** What an admin command says of a file sqliteEmptiness finds empty (E_DB_OPEN, exit 2; nothing written to it). */
export function emptyDbError(path: string, kind: 'empty' | 'no_schema' = 'empty'): UsageError {
  return new UsageError(
    `${path} ${kind === 'empty' ? 'is empty (0 bytes)' : 'is a SQLite file without a single table'}: it is not a cortex database — perhaps one cut short (a truncated copy, a disk that filled); nothing was written to it`,
    {
      code: 'E_DB_OPEN',
      hint: 'restore the latest `cortex-server backup` copy (docs/operations.md), or give --db the database file that serve uses; serve and migrate create a new database at a path where no file exists',
    },
  );
}

export function poolArg(value: string | undefined): number {
  if (value === undefined) return DEFAULT_DB_POOL;
  if (!/^\d+$/.test(value) || Number(value) < 2 || Number(value) > 1000) {
    throw new UsageError(`--db-pool must be an integer 2..1000 (PostgreSQL connections of this process; one is held by the retention pass), got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/**
 * Opens the database for an admin command: a new one is created with this version's schema;
 * one an older version made is not migrated but refused (SchemaTooOldError: `migrate` or this
 * version's `serve` does that, once no older server uses it — DECISIONS H55), as is one a newer
 * version migrated, with exit 2 and nothing changed.
 */
export async function openDbForCli(value: string, poolSize = 2): Promise<Storage> {
  checkDbArg(value);
  const [{ openStorage }, { migrateToLatest, migrationLockWaitMessage, DatabaseRefusedError }] = await Promise.all([
    import('./db/open.js'),
    import('./db/migrations/index.js'),
  ]);
  const storage = await openStorage(value, { poolSize }).catch((error: unknown) => {
    throw postgresOpenError(error, value) ?? error;
  });
  const since = performance.now();
  try {
    await migrateToLatest(storage, { upgrade: false, onWait: (wait) => process.stderr.write(`cortex-server: ${migrationLockWaitMessage(wait)}\n`) });
  } catch (error) {
    await storage.close().catch(() => undefined);
    // the refusal says what to do: no generic "check the --db path" after it
    if (error instanceof DatabaseRefusedError) throw new UsageError(error.message, { code: 'E_DB_OPEN', hint: '' });
    throw postgresLostError(error, value, { phase: 'open', since }) ?? postgresOpenError(error, value) ?? error;
  }
  return storage;
}

/**
 * What serve and migrate say when the SQLite file they are to use exists and is empty (0
 * bytes, or no table): they make a new database in it (a file made beforehand with the owner
 * and mode wanted), but it may be the server's database cut short. Null otherwise.
 */
export function sqliteFileEmptyText(db: string, emptiness: (path: string) => 'empty' | 'no_schema' | null): string | null {
  if (/^postgres(ql)?:\/\//i.test(db)) return null;
  const kind = emptiness(db);
  if (kind === null) return null;
  return `the database file ${db} ${kind === 'empty' ? 'is empty (0 bytes)' : 'has no table'}: a new, empty database is made in it. If it held the server's data (a copy cut short, a disk that filled), stop the server and restore the latest \`cortex-server backup\` copy instead`;
}

export const MIGRATE_HELP = `Usage: cortex-server migrate [--db PATH|URL] [--json]

  Brings the database to this version's schema and exits (serve does the same at start).
  Several servers starting together migrate once (a database-wide lock). A database whose
  schema is newer than this version knows is refused (exit 2, nothing changed).
  --db PATH|URL   SQLite file or postgres://USER@HOST:PORT/DATABASE (default $CORTEX_DB, then ${DEFAULT_DB})
  --json          print {"dialect", "applied": [names]} as one JSON object
`;

/** `cortex-server migrate`: returns what to print on stdout. */
export async function migrateCommand(values: { db?: string | undefined; json?: boolean | undefined }): Promise<string> {
  const db = checkDbArg(dbArg(values.db));
  const emptyFile = parseDbTarget(db).dialect === 'sqlite' ? sqliteFileEmptyText(db, sqliteEmptiness) : null;
  if (emptyFile !== null) process.stderr.write(`cortex-server: note: ${emptyFile}\n`);
  const [{ openStorage }, { migrateToLatest, migrationLockWaitMessage, DatabaseRefusedError }] = await Promise.all([
    import('./db/open.js'),
    import('./db/migrations/index.js'),
  ]);
  const storage = await openStorage(db, { poolSize: 1 }).catch((error: unknown) => {
    throw dbOpenError(error, db) ?? sqliteDiskFullError(error, db) ?? error;
  });
  const since = performance.now();
  try {
    const applied = await migrateToLatest(storage, (wait) => process.stderr.write(`cortex-server: ${migrationLockWaitMessage(wait)}\n`));
    if (values.json) return JSON.stringify({ dialect: storage.dialect, applied });
    return applied.length === 0
      ? `the ${storage.dialect} database is up to date; nothing applied`
      : `applied ${applied.length} migration(s) to the ${storage.dialect} database: ${applied.join(', ')}`;
  } catch (error) {
    if (error instanceof DatabaseRefusedError) throw new UsageError(error.message, { code: 'E_DB_OPEN', hint: '' });
    throw postgresLostError(error, db, { phase: 'migrate', since }) ?? dbOpenError(error, db) ?? sqliteDiskFullError(error, db) ?? error;
  } finally {
    await storage.close();
  }
}
