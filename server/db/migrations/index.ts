// Schema migrations through kysely's Migrator, with an in-code provider (an object map,
// not FileMigrationProvider) so the compiled JavaScript carries its migrations with it.
// Names sort in the order they must run; add new ones with the next number.
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResult } from 'kysely';
import type { Storage } from '../storage.js';
import { initial } from './0001-initial.js';
import { retentionIndexes } from './0002-retention-indexes.js';
import { servers } from './0003-servers.js';
import { logsPartitions } from './0004-logs-partitions.js';
import { audit } from './0010-audit.js';
import { enrollmentExpiry } from './0011-enrollment-expiry.js';
import { hostLabelsAndGroups } from './0020-host-labels-and-groups.js';
import { sqliteLogsInsertionOrder } from './0030-sqlite-logs-insertion-order.js';
import { metricsReceivedAt } from './0031-metrics-received-at.js';
import { groupConfigVersion } from './0032-group-config-version.js';
import { endedSessions } from './0033-ended-sessions.js';

// One history for both dialects: a migration that differs per dialect asks isPostgres()
// (./dialect-of.ts) itself. Names 0001/0002 are kept: databases created before migrate on.
export const migrations: Readonly<Record<string, Migration>> = {
  '0001-initial': initial,
  '0002-retention-indexes': retentionIndexes,
  '0003-servers': servers,
  '0004-logs-partitions': logsPartitions,
  '0010-audit': audit,
  '0011-enrollment-expiry': enrollmentExpiry,
  '0020-host-labels-and-groups': hostLabelsAndGroups,
  '0030-sqlite-logs-insertion-order': sqliteLogsInsertionOrder,
  '0031-metrics-received-at': metricsReceivedAt,
  '0032-group-config-version': groupConfigVersion,
  '0033-ended-sessions': endedSessions,
};

const provider: MigrationProvider = {
  getMigrations: async () => ({ ...migrations }),
};

export class MigrationError extends Error {
  constructor(
    message: string,
    readonly results: readonly MigrationResult[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/**
 * A migration run waits: for the migration lock (another cortex-server starting or migrating,
 * DECISIONS G25), or for a lock on its tables another session holds (PostgreSQL: a pg_dump, a
 * forgotten BEGIN; H55). `holder` says who, as one line.
 */
export interface MigrationWait {
  lock: 'migration' | 'tables';
  holder: string;
}

/** What `serve` logs and an admin command prints when a migration run waits. */
export function migrationLockWaitMessage(wait: MigrationWait): string {
  const { lock, holder } = wait;
  if (lock === 'tables') {
    return (
      `database migration waits for a lock on its tables, held by ${holder}; ` +
      'it tries again every second (other sessions are not held up meanwhile): let it finish (a pg_dump) or end it (select pg_terminate_backend(PID))'
    );
  }
  return (
    `waiting for the database's migration lock, held by ${holder}: another cortex-server starting or migrating holds it for seconds; ` +
    'if the wait goes on, that session is stuck: stop its process, or end the session (select pg_terminate_backend(PID))'
  );
}

/** A database this cortex-server will not migrate (the user's to fix, exit 2): nothing changed. */
export class DatabaseRefusedError extends Error {}

/** The database was migrated by a newer cortex-server: refused, nothing changed. */
export class SchemaTooNewError extends DatabaseRefusedError {
  readonly code = 'SCHEMA_TOO_NEW' as const;
  constructor(readonly unknown: readonly string[]) {
    super(
      `the database schema is newer than this cortex-server knows (migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')} ` +
        'applied by a newer version); run the newer cortex-server, or point --db at another database',
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * An admin command on a database an older cortex-server made (DECISIONS H55): admin commands do
 * not migrate one (`agent list --db` after installing the new version migrated the database
 * under the old servers still running on it, which then could not restart, and going back was
 * no longer possible). A new database is still created by them.
 */
export class SchemaTooOldError extends DatabaseRefusedError {
  readonly code = 'SCHEMA_TOO_OLD' as const;
  constructor(readonly pending: readonly string[]) {
    super(
      `the database schema is older than this cortex-server (not applied yet: ${pending.join(', ')}); admin commands do not migrate a database: ` +
        'run cortex-server migrate with the same --db (or start this version\'s serve) once no older server uses it, or use the older cortex-server for this command',
    );
    this.name = 'SchemaTooOldError';
  }
}

/**
 * The database holds another application's tables and none of cortex-server's (DECISIONS H33):
 * `--db` names the wrong database. Refused before anything is created in it: migrating would
 * have added a dozen tables to, say, another program's SQLite file.
 */
export class ForeignDatabaseError extends DatabaseRefusedError {
  readonly code = 'FOREIGN_DATABASE' as const;
  constructor(readonly tables: readonly string[], readonly otherMigrations: readonly string[]) {
    const shown = (names: readonly string[]) => `${names.slice(0, 5).join(', ')}${names.length > 5 ? `, … (${names.length} in all)` : ''}`;
    super(
      (otherMigrations.length > 0
        ? `the database holds another application's migration history (${shown(otherMigrations)}) and none of cortex-server's`
        : `the database holds tables of another application (${shown(tables)}) and none of cortex-server's`) +
        ': give --db the database serve uses, or a new one (an empty SQLite file path; for PostgreSQL CREATE DATABASE cortex); nothing was changed',
    );
    this.name = 'ForeignDatabaseError';
  }
}

/** Tables of the database (PostgreSQL: of the connection's schema), kysely's own history tables left out. */
async function userTables(db: Kysely<any>, dialect: Storage['dialect']): Promise<string[]> {
  const rows =
    dialect === 'postgres'
      ? await sql<{ name: string }>`select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition order by 1`.execute(db)
      : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite!_%' escape '!' order by 1`.execute(db);
  return rows.rows.map((r) => r.name).filter((n) => n !== 'kysely_migration' && n !== 'kysely_migration_lock');
}

/** The applied migration names, or null when there is no migration table yet (a new database). */
async function appliedMigrations(db: Kysely<any>): Promise<string[] | null> {
  try {
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    return rows.rows.map((r) => r.name);
  } catch (error) {
    // No history table: a new database (or another application's). Anything else, such as a
    // user without the rights on tables another user created (42501), is said as itself: taken
    // as "no history", it was told as another application's database (DECISIONS G32).
    if (isRelationGone(error) || /no such table/i.test(String((error as { message?: unknown } | null)?.message))) return null;
    throw error;
  }
}

/** Applied migration names this build does not know (empty: the schema is not newer). */
export async function unknownMigrations(db: Kysely<any>): Promise<string[]> {
  return unknownOf((await appliedMigrations(db)) ?? []);
}

function unknownOf(applied: readonly string[]): string[] {
  return applied.filter((n) => !(n in migrations)).sort();
}

/**
 * The applied history is exactly this build's (every migration, none unknown): then there is
 * nothing to run and the Migrator need not be built at all.
 */
function isCurrent(applied: readonly string[]): boolean {
  const done = new Set(applied);
  return done.size === Object.keys(migrations).length && Object.keys(migrations).every((n) => done.has(n));
}

/** PostgreSQL's "undefined_table": a relation named in a query was dropped meanwhile. */
function isRelationGone(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '42P01';
}

/** Attempts of the Migrator's own set-up before giving up (see migrateToLatest). */
const SETUP_ATTEMPTS = 5;

/**
 * Brings the database to the latest schema. Safe to call on every start and from several
 * processes at once (the dialect's migration lock serializes them). Returns the names of
 * the migrations this call applied (empty when the database was already current).
 *
 * A current database is recognised from its history table alone (every CLI command and
 * every start passes here). Only otherwise is kysely's Migrator built: its set-up lists the
 * tables of EVERY schema of the database through the introspector, whose query resolves
 * each table by name (pg_get_serial_sequence), so a table dropped meanwhile by anyone (a
 * server's retention dropping a day partition, which does not take the migration lock,
 * or another application's schema) fails it with 42P01 before any migration ran. That
 * set-up is tried again (a migration that ran and failed is never retried).
 */
export interface MigrateOptions {
  /** Said when the run waits for the migration lock, or for a table lock another session holds (PostgreSQL). */
  onWait?: (wait: MigrationWait) => void;
  /** false: a database with cortex-server's history and migrations pending is refused (SchemaTooOldError), not migrated; a new one is still created. */
  upgrade?: boolean;
}

/** How long a migration statement waits for a table lock before the run is rolled back and tried again (PostgreSQL). */
const MIGRATION_LOCK_TIMEOUT_MS = 2000;
/** Pause between two such tries: the sessions queued behind the migration's lock request get through meanwhile. */
const MIGRATION_RETRY_PAUSE_MS = 1000;
/** At most one "waits for a table lock" line this often. */
const TABLE_LOCK_SAY_EVERY_MS = 60_000;

/**
 * Sessions of other clients holding a lock on a table of this schema in a transaction open for
 * over a second (pg_dump, a forgotten BEGIN; a server's own statements are shorter), as one line.
 */
async function tableLockHolders(db: Kysely<any>): Promise<string> {
  const rows = await sql<{ pid: number; app: string; secs: number; query: string }>`
    select distinct a.pid, coalesce(nullif(a.application_name, ''), a.usename::text, '?') as app,
           extract(epoch from now() - a.xact_start)::int as secs, left(regexp_replace(a.query, '[[:space:]]+', ' ', 'g'), 100) as query
    from pg_locks l
    join pg_stat_activity a on a.pid = l.pid
    join pg_class c on c.oid = l.relation
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and l.granted and l.pid <> pg_backend_pid() and a.xact_start < now() - interval '1 second'
    order by 3 desc limit 5`.execute(db);
  if (rows.rows.length === 0) return 'a session that ended meanwhile, or one this user cannot see';
  return rows.rows.map((r) => `pid ${r.pid} (${r.app}, transaction open ${r.secs} s: ${r.query})`).join('; ');
}

/** PostgreSQL's lock_not_available: a statement waited longer than lock_timeout. */
function isLockTimeout(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '55P03';
}

export async function migrateToLatest(storage: Storage, onWaitOrOptions?: ((wait: MigrationWait) => void) | MigrateOptions): Promise<string[]> {
  const options: MigrateOptions = typeof onWaitOrOptions === 'function' ? { onWait: onWaitOrOptions } : (onWaitOrOptions ?? {});
  const onWait = options.onWait;
  return storage.withMigrationLock(async (db) => {
    // Refuse before the Migrator sees it (it would call the history "corrupted").
    // One read of the history: refused if newer, done if current.
    const applied = (await appliedMigrations(db)) ?? [];
    const unknown = unknownOf(applied);
    // None of the history is ours (another kysely application's), or no history and tables: another application's database.
    if (unknown.length > 0 && unknown.length === applied.length) throw new ForeignDatabaseError(await userTables(db, storage.dialect), unknown);
    if (unknown.length > 0) throw new SchemaTooNewError(unknown);
    if (applied.length === 0) {
      const tables = await userTables(db, storage.dialect);
      if (tables.length > 0) throw new ForeignDatabaseError(tables, []);
    }
    if (isCurrent(applied)) return [];
    if (options.upgrade === false && applied.length > 0) {
      const done = new Set(applied);
      throw new SchemaTooOldError(Object.keys(migrations).filter((n) => !done.has(n)).sort());
    }
    // PostgreSQL: name the schema, or kysely finds a migration table of ANOTHER schema
    // (its existence check looks at every schema) and skips creating ours.
    const schema = storage.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s : undefined;
    const migrator = new Migrator({ db, provider, ...(schema !== undefined ? { migrationTableSchema: schema } : {}) });
    // PostgreSQL: a migration's ALTER waits for every lock on its table — a pg_dump's for the
    // whole dump — and every other session's statement on that table queues behind the waiting
    // ALTER (an old server's group queries hung). So a statement waits at most 2 s for a lock;
    // then the run is rolled back, said with who holds the lock, and tried again a second later
    // (DECISIONS H55). A migration that fails otherwise is never retried.
    if (storage.dialect === 'postgres') await sql.raw(`set lock_timeout = ${MIGRATION_LOCK_TIMEOUT_MS}`).execute(db);
    let saidAt = -Infinity;
    try {
      for (let attempt = 1; ; attempt++) {
        const { error, results } = await migrator.migrateToLatest();
        if (error === undefined) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
        // `results` undefined: the failure came before any migration ran (the set-up).
        if (results === undefined && isRelationGone(error) && attempt < SETUP_ATTEMPTS) continue;
        if (storage.dialect === 'postgres' && isLockTimeout(error)) {
          if (performance.now() - saidAt >= TABLE_LOCK_SAY_EVERY_MS) {
            saidAt = performance.now();
            onWait?.({ lock: 'tables', holder: await tableLockHolders(db).catch((e: unknown) => `a session this user cannot see (${(e as Error).message})`) });
          }
          await new Promise((resolve) => setTimeout(resolve, MIGRATION_RETRY_PAUSE_MS));
          attempt = 0;
          continue;
        }
        const all = results ?? [];
        const failed = all.find((r) => r.status === 'Error')?.migrationName;
        const reason = error instanceof Error ? error.message : String(error);
        throw new MigrationError(`database migration ${failed ?? ''} failed: ${reason}`.replace('  ', ' '), all, { cause: error });
      }
    } finally {
      if (storage.dialect === 'postgres') await sql.raw('reset lock_timeout').execute(db).catch(() => undefined);
    }
  }, onWait && ((holder) => onWait({ lock: 'migration', holder })));
}
