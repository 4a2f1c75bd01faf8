// The PostgreSQL dialect: the ONLY module that knows PostgreSQL and `pg`.
//
// It opens a `pg` pool, hands kysely's PostgresDialect the same pool for everything that is
// not the hot path, and implements the `Storage` interface of ./storage.ts like the SQLite
// dialect (./dialect.ts) does:
//   - the ingest hot path is ONE statement per batch (a data-modifying CTE, a named
//     prepared statement, the rows passed as arrays through unnest): the agent row is read
//     FOR UPDATE (so commits of one host serialize and read the latest accepted_seq), the
//     entries with seq > accepted_seq are inserted, accepted_seq moves to GREATEST(...).
//     Autocommit: when the statement returns, the transaction is committed (ack after
//     commit; synchronous_commit stays on).
//   - migrations run holding a session-level advisory lock on one pinned connection, so
//     servers starting together on one database migrate it once.
//   - usedBytes() counts the bytes of the live rows of logs and metrics (a scan), scaled
//     by each table's pg_total_relation_size / heap size (its indexes and TOAST), plus
//     pg_total_relation_size of the small tables. A DELETE leaves dead tuples that
//     autovacuum makes reusable but that pg_total_relation_size keeps counting, so that
//     alone would let the size cap delete everything; the statistics (n_dead_tup) lag by
//     up to a second. This measure is exact right after a commit, and costly (the
//     retention pass plans its deletes from one measurement: usedBytesIsCostly).
//   - LISTEN/NOTIFY on a dedicated client carries the cross-server control plane.
//   - a network path that stops answering (packets dropped, not refused) does not hold a
//     statement for TCP's ~15 minutes: SilenceGuard (below) looks into every statement left
//     unanswered and closes its connection unless PostgreSQL says it is working on it, and the
//     LISTEN connection is pinged (DECISIONS G43).
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import pg from 'pg';
import { DatabaseSilentError, isSilence, noteWaited, outageKind, secondsOf } from './outage.js';
import { defaultPostgresUser } from './pg-user.js';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { dayOf, dropPartitionsBefore, ensureDayPartition, ensurePartitionsAround } from './pg-partitions.js';
import type { Database as Schema } from './schema.js';
import {
  SessionSupersededError,
  UnknownHostError,
  type CommitResult,
  type IngestLogEntry,
  type IngestMetricSample,
  type IngestWriter,
  type NotifyBus,
  type Storage,
} from './storage.js';

export interface PostgresStorageOptions {
  /** postgres:// or postgresql:// connection URL (may carry ?options=-c search_path=...). */
  url: string;
  /** Pool size (default 10, at least 2). */
  poolSize?: number;
  /** Batches (hosts) one ingest statement commits together (default 256; 1: a statement per batch). */
  maxGroupHosts?: number;
  /**
   * A statement left unanswered this long is looked into: its connection is closed unless
   * PostgreSQL, asked on another connection, says it is still working on it (ms, default
   * 10,000; 0: never). Also how long a goodbye, the LISTEN connection's ping and that question
   * itself may go unanswered (DECISIONS G43).
   */
  silentMs?: number;
  /** How long opening a connection may take before it counts as failed (ms, default 10,000). */
  connectTimeoutMs?: number;
  /** How often the LISTEN connection is pinged when idle (ms, default silentMs). */
  listenPingMs?: number;
}

/** Default of PostgresStorageOptions.silentMs. */
const DEFAULT_SILENT_MS = 10_000;
/** Default of PostgresStorageOptions.connectTimeoutMs. */
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/**
 * TCP keepalive on every connection, first probe after this long idle: a connection whose
 * peer is gone is found dead while it waits for an answer with nothing of its own unsent (a
 * long statement, LISTEN). How soon after depends on the kernel's probe interval and count
 * (Linux: 75 s × 9), so the statements' own bound (SilenceGuard) is what the server relies on.
 */
const KEEPALIVE_IDLE_MS = 10_000;

/** How long the migration lock is waited for before who holds it is said (a server starting holds it for less). */
const MIGRATION_LOCK_QUIET_MS = 5000;

/** Key of the migration advisory lock (any constant; "cortex" in ASCII). */
const MIGRATION_LOCK_KEY = 0x636f72746578;

/** bigint (int8) and numeric as JS numbers: our counters stay far below 2^53. */
const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * The database user when `--db` names none: PGUSER, else this process's user, as libpq (psql)
 * takes it (DECISIONS G36). node-postgres reads $USER instead, which cron, `env -i`, a
 * container's or a service's environment often lack: it then sent no user at all and
 * PostgreSQL refused it ("no PostgreSQL user name specified in startup packet") where psql
 * with the same URL connects.
 */
function defaultUser(): void {
  if (!pg.defaults.user) pg.defaults.user = defaultPostgresUser(); // node-postgres reads $PGUSER before it
}

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, release: (release?: unknown) => void) => void;

/**
 * A failure to get a connection of `pool` (a new one that timed out or was refused, none come
 * free in the pool's wait) notes how long its caller waited (noteWaited): the outage account
 * tells by it whether the caller began before the database came back (DECISIONS G46). Both of
 * pg-pool's forms: a promise, and the callback its own `query` uses.
 */
function timeConnects(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as unknown as (cb?: ConnectCallback) => Promise<pg.PoolClient> | undefined;
  const timed = (cb?: ConnectCallback): Promise<pg.PoolClient> | undefined => {
    const began = performance.now();
    if (typeof cb === 'function') return connect((err, client, release) => cb(err === undefined || err === null ? err : noteWaited(err, performance.now() - began), client, release));
    return (connect() as Promise<pg.PoolClient>).catch((err: unknown) => {
      throw noteWaited(err, performance.now() - began);
    });
  };
  pool.connect = timed as unknown as pg.Pool['connect'];
}

/** What every connection of the server uses: the pool's, a job's, the LISTEN client's, the guard's. */
function clientConfig(url: string, applicationName: string, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS): pg.ClientConfig {
  defaultUser();
  return {
    connectionString: url,
    types,
    // A connection attempt that hangs (firewall) fails instead of stalling the server.
    connectionTimeoutMillis: connectTimeoutMs,
    application_name: applicationName,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
  };
}

export function openPostgresStorage(options: PostgresStorageOptions): Storage {
  const max = Math.max(2, options.poolSize ?? 10);
  const connectTimeoutMs = Math.max(1, options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
  const guard = new SilenceGuard(options.url, Math.max(0, options.silentMs ?? DEFAULT_SILENT_MS), connectTimeoutMs);
  // Before a new connection of a pool is handed out.
  const onConnect = async (client: pg.ClientBase): Promise<void> => {
    // Not the process down for a checked-out client's error: pg emits 'error' on a client
    // whose connection ends unexpectedly (a TCP reset, PostgreSQL killed, the network cut)
    // even while a query of it is running, which gets the same error; the pool listens only
    // while the client is idle, and kysely not at all, so a connection lost mid-query was an
    // uncaught exception that ended the server (DECISIONS G11). The query's caller handles
    // the failure; the pool drops the client when it comes back (it is no longer queryable).
    client.on('error', () => undefined);
    guard.guard(client as pg.Client, 'checked');
    await guard.learnBackend(client as pg.Client);
  };
  const pool = new pg.Pool({
    ...clientConfig(options.url, 'cortex-server', connectTimeoutMs),
    max,
    // Idle connections beyond these close after 10 s. A connection opened while the acks wait
    // costs them its start (backend start, the first plan of the ingest statement): kept warm,
    // a burst or a background job finds one ready.
    min: Math.min(3, max),
    onConnect,
  });
  // An idle client's error (the server restarted) must not take the process down; the
  // pool drops that client and the next query opens a new one.
  pool.on('error', () => undefined);
  timeConnects(pool);

  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  // The lease renewal's own connection (DECISIONS G47), opened at its first use and guarded as
  // the pool's are. Named as the pool is: it is one of the server's working connections.
  const leasePool = new pg.Pool({
    ...clientConfig(options.url, 'cortex-server', connectTimeoutMs),
    max: 1,
    onConnect,
  });
  leasePool.on('error', () => undefined);
  timeConnects(leasePool);
  const leaseDb = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: leasePool }) });
  const ingest = new PostgresIngestWriter(pool, (day) => ensureDayPartition(db, day), Math.max(1, Math.floor(max / 2)), options.maxGroupHosts ?? DEFAULT_GROUP_MAX_HOSTS);
  let bus: PostgresNotifyBus | undefined;
  let sessionChecked: Promise<void> | undefined;

  return {
    dialect: 'postgres',
    db,
    leaseDb,
    ingest,
    usedBytesIsCostly: true,
    async withMigrationLock<T>(fn: (locked: Kysely<Schema>) => Promise<T>, onWait?: (holder: string) => void): Promise<T> {
      return db.connection().execute(async (locked) => {
        // Before the first lock: behind a pooler that shares sessions, the lock would be taken
        // in one session and released in another, and stay held there (DECISIONS G24).
        sessionChecked ??= refuseSessionSharingPooler(locked, pool)
          .then(() => refuseNoSchema(locked))
          .catch((error: unknown) => {
            // A verdict stays; a failure to ask (the database out of reach) is asked again next time.
            if (!(error instanceof SessionSharingPoolerError || error instanceof NoSchemaError)) sessionChecked = undefined;
            throw error;
          });
        await sessionChecked;
        // Held for a moment by another server starting or migrating: waited for quietly. Held
        // longer: who holds it is said before waiting on, so a wait that does not end has a
        // name (DECISIONS G25).
        const tryLock = async () => (await sql<{ ok: boolean }>`select pg_try_advisory_lock(${MIGRATION_LOCK_KEY}) as ok`.execute(locked)).rows[0]?.ok === true;
        const quietUntil = performance.now() + MIGRATION_LOCK_QUIET_MS; // (no wall-clock step shortens or stretches it, G45)
        let got = await tryLock();
        while (!got && performance.now() < quietUntil) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          got = await tryLock();
        }
        if (!got) {
          onWait?.(await migrationLockHolder(locked).catch((err: unknown) => `a session this user cannot see (${(err as Error).message})`));
          await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(locked);
        }
        let result: T;
        try {
          result = await fn(locked);
        } catch (error) {
          // The unlock's own failure must not replace what went wrong: on a connection that was
          // cut (G43's silence, a reset) it fails with "Client was closed and is not queryable"
          // and hid the CORTEX_DB_SILENT or ECONNRESET that says why (G44). A closed session
          // has released its lock anyway.
          await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(locked).catch(() => undefined);
          throw error;
        }
        await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(locked);
        return result;
      });
    },
    async clockMs(on = db) {
      const r = await sql<{ ms: number }>`select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms`.execute(on);
      return Number(r.rows[0]?.ms);
    },
    async usedBytes() {
      // 28 bytes a row: tuple header (23, aligned to 24) and its line pointer (4). logs is
      // partitioned: its sizes are the sums over its partitions.
      const r = await sql<{ bytes: number | string | null }>`
        with parts as (
          select relid from pg_partition_tree('logs') where isleaf
        ), live as (
          select coalesce(sum(pg_column_size(l.*) + 28), 0)::float8 as b,
                 (select coalesce(sum(pg_total_relation_size(relid)), 0) from parts)::float8 as total,
                 (select coalesce(sum(pg_relation_size(relid)), 0) from parts)::float8 as heap
          from logs l
          union all
          select coalesce(sum(pg_column_size(m.*) + 28), 0)::float8,
                 pg_total_relation_size('metrics')::float8, pg_relation_size('metrics')::float8
          from metrics m
        )
        select (
          select coalesce(sum(live.b * greatest(1, live.total / greatest(1, live.heap))), 0) from live
        ) + (
          select coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8
          from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = current_schema() and c.relkind in ('r', 'p') and c.relispartition = false
            and c.relname not in ('logs', 'metrics')
        ) as bytes`.execute(db);
      return Math.round(Number(r.rows[0]?.bytes ?? 0));
    },
    // PostgreSQL reuses the space of deleted rows (autovacuum); dropped partitions give
    // it back to the file system at once. Nothing to hand back page by page.
    fileShrinks: () => true,
    releaseFreePages: async () => 0,
    async exclusiveJob<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
      // The lock is held on a connection of its own for the whole job, not on one of the pool:
      // a pool connection held that long is one the ingest path must then open anew while its
      // acks wait (35-90 ms of stalled acks at the start of most retention passes, 2026-12-04,
      // bench retention --db postgres). The session lock goes with the connection at the end.
      const locked = new pg.Client(clientConfig(options.url, `cortex-server ${name}`, connectTimeoutMs));
      locked.on('error', () => undefined);
      guard.guard(locked, 'plain'); // its statements are instant (the job's own run on the pool)
      await locked.connect();
      try {
        // Advisory locks are database-wide: the key names the schema, so that deployments in
        // schemas of their own on one database (search_path) do not skip each other's jobs.
        const key = jobLockKey(name, (await locked.query<{ s: string | null }>('select current_schema() as s')).rows[0]?.s ?? null);
        const got = await locked.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtext($1)::bigint) as ok', [key]);
        if (got.rows[0]?.ok !== true) return undefined;
        try {
          return await fn();
        } finally {
          await locked.query('select pg_advisory_unlock(hashtext($1)::bigint)', [key]).catch(() => undefined);
        }
      } finally {
        await locked.end().catch(() => undefined);
      }
    },
    async maintainPartitions(now: Date, dropBefore: string | null) {
      const created = await ensurePartitionsAround(db, now);
      const dropped = dropBefore === null ? [] : await dropPartitionsBefore(db, dropBefore);
      return { created, dropped };
    },
    notifyBus() {
      bus ??= new PostgresNotifyBus(options.url, pool, guard, options.listenPingMs ?? guard.silentMs, connectTimeoutMs);
      return bus;
    },
    async close() {
      await bus?.close();
      await db.destroy(); // ends the pool
      await leaseDb.destroy();
      await guard.close();
    },
  };
}

/** The text whose hashtext() keys the advisory lock of job `name` in `schema` (exclusiveJob). */
export function jobLockKey(name: string, schema: string | null): string {
  return `cortex-job:${name}:${schema ?? ''}`;
}

/** Who holds the migration lock, as told to an operator waiting for it. */
async function migrationLockHolder(on: Kysely<Schema>): Promise<string> {
  // A bigint key is (classid, objid) = its high and low 32 bits, objsubid 1.
  const hi = Math.floor(MIGRATION_LOCK_KEY / 2 ** 32);
  const lo = MIGRATION_LOCK_KEY % 2 ** 32;
  const r = await sql<{ pid: number; app: string | null; addr: string | null; state: string | null; secs: number | null; query: string | null }>`
    select a.pid, a.application_name as app, host(a.client_addr) as addr, a.state,
           extract(epoch from clock_timestamp() - coalesce(a.state_change, a.backend_start))::float8 as secs,
           left(a.query, 120) as query
    from pg_locks l join pg_stat_activity a on a.pid = l.pid
    where l.locktype = 'advisory' and l.granted and l.database = (select oid from pg_database where datname = current_database())
      and l.classid = ${hi}::oid and l.objid = ${lo}::oid and l.objsubid = 1`.execute(on);
  const h = r.rows[0];
  if (h === undefined) return 'a session that has just let it go';
  const parts = [h.app ? `"${h.app}"` : null, h.addr ? `from ${h.addr}` : null, h.state ? `${h.state}${h.secs !== null ? ` for ${Math.round(Number(h.secs))} s` : ''}` : null];
  if (h.state !== null && h.state !== 'active' && h.query) parts.push(`last query: ${JSON.stringify(h.query)}`);
  const known = parts.filter((p) => p !== null);
  return `PostgreSQL backend pid ${h.pid}${known.length > 0 ? ` (${known.join(', ')})` : ''}`;
}

/** Thrown when the connection's search_path names no schema that exists: nowhere to create the tables. */
export class NoSchemaError extends Error {
  readonly code = 'CORTEX_NO_SCHEMA';
  constructor(readonly searchPath: string) {
    super(`the database has no schema to keep cortex-server's tables in: search_path is ${searchPath}, and no schema of it exists`);
    this.name = 'NoSchemaError';
  }
}

/**
 * Refuses a search_path that names no existing schema (`?options=-c search_path=cortex` before
 * `create schema cortex`): kysely's Migrator then failed on its own lock table, E_INTERNAL
 * "this is a bug" (DECISIONS G26).
 */
async function refuseNoSchema(on: Kysely<Schema>): Promise<void> {
  const r = await sql<{ schema: string | null; path: string }>`select current_schema() as schema, current_setting('search_path') as path`.execute(on);
  const row = r.rows[0];
  if (row !== undefined && row.schema === null) throw new NoSchemaError(row.path);
}

/** Thrown by `serve` when its user may not act as the owner of `logs` (DECISIONS G32). */
export class NotTableOwnerError extends Error {
  readonly code = 'CORTEX_NOT_OWNER';
  constructor(
    readonly user: string,
    readonly owner: string,
  ) {
    super(
      `the user "${user}" does not own the table logs (its owner is "${owner}"): a server adds a partition of logs for each day and drops the ones retention is done with, ` +
        `which PostgreSQL lets only the owner do, so with GRANTs alone it would store logs until the partitions made in advance run out (in a few days) and then refuse every push`,
    );
    this.name = 'NotTableOwnerError';
  }
}

/**
 * Refuses to serve as a user that is neither the owner of `logs` nor a member of the owner's
 * role (a superuser counts as one): tables migrated by one user and served by another with
 * GRANTs worked for days, then failed at the first day without a partition (DECISIONS G32).
 */
export async function refuseNotTableOwner(db: Kysely<Schema>): Promise<void> {
  const r = await sql<{ user: string; owner: string; owns: boolean }>`
    select current_user as user, pg_get_userbyid(c.relowner) as owner, pg_has_role(current_user, c.relowner, 'USAGE') as owns
    from pg_class c where c.oid = to_regclass('logs')`.execute(db);
  const row = r.rows[0];
  if (row !== undefined && !row.owns) throw new NotTableOwnerError(row.user, row.owner);
}

/** Thrown when --db leads to a pooler that runs one connection's statements in different PostgreSQL sessions. */
export class SessionSharingPoolerError extends Error {
  readonly code = 'CORTEX_POOLED_SESSIONS';
  constructor(readonly evidence: string) {
    super(
      `the connection goes through a pooler that shares PostgreSQL sessions between its clients (PgBouncer with pool_mode = transaction or statement, ` +
        `or a managed database's pooled port): ${evidence}. cortex-server needs each of its connections to keep one session ` +
        '(advisory locks, LISTEN/NOTIFY, prepared statements)',
    );
    this.name = 'SessionSharingPoolerError';
  }
}

/** The session setting the pooler check marks its pinned connection's session with. */
const SESSION_MARK = 'cortex.session_check';
/** Rounds of the pooler check's second part (see refuseSessionSharingPooler). */
const SESSION_CHECK_ROUNDS = 3;

/**
 * Refuses a pooler in transaction or statement mode (DECISIONS G24, G40). `locked` is one
 * pinned connection: it marks its session with a value of its own (a session-level setting,
 * set_config(…, false): it stays in that session, and PostgreSQL shows it to no other). Then:
 *   1. another connection opens a transaction (statement mode refuses it) and reads the mark
 *      and its backend pid, and `locked` reads its own while that transaction holds its
 *      session;
 *   2. a few times over, the other connection and `locked` read them again, each statement a
 *      transaction of its own (so a transaction-mode pooler hands sessions out again between
 *      them).
 * PostgreSQL itself, or a pooler in session mode, gives a connection one session for its
 * life: the mark is seen by `locked` every time and by the other connection never. A pooler
 * that shares sessions gives `locked`'s session to the other connection (PgBouncer's default
 * reuses the session freed last: the other connection sees the mark), or `locked` another one
 * (with server_round_robin = 1 the session idle longest: the mark is gone) — one of the two
 * within the rounds whichever order its sessions are handed out in. The backend pid alone was
 * not enough: with server_round_robin = 1 and two warm sessions, `locked` got its own back
 * while the transaction held the other, and the check passed (G40).
 */
async function refuseSessionSharingPooler(locked: Kysely<Schema>, pool: pg.Pool): Promise<void> {
  const token = randomUUID();
  const read = async (on: Kysely<Schema> | pg.PoolClient): Promise<{ pid: number; mark: string | null }> => {
    const text = `select pg_backend_pid() as pid, current_setting('${SESSION_MARK}', true) as mark`;
    const row = on instanceof Kysely ? (await sql<{ pid: number; mark: string | null }>`${sql.raw(text)}`.execute(on)).rows[0] : (await on.query<{ pid: number; mark: string | null }>(text)).rows[0];
    return { pid: Number(row?.pid), mark: row?.mark ?? null };
  };
  const p1 = Number((await sql<{ pid: number }>`select pg_backend_pid() as pid, set_config(${SESSION_MARK}, ${token}, false) as mark`.execute(locked)).rows[0]?.pid);
  const sawMark = (pid: number, found = true) =>
    new SessionSharingPoolerError(`a second connection ran in the session the first had used (backend pid ${pid})${found ? ': it found a setting the first had made there' : ''}`);
  const lostMark = (pid: number) =>
    new SessionSharingPoolerError(`one connection's statements ran in two sessions (backend pids ${p1} and ${pid}): a setting it had made in its session was gone`);
  const other = await pool.connect();
  let broken: Error | undefined;
  try {
    try {
      await other.query('begin');
    } catch (err) {
      broken = err as Error;
      if (/statement pooling/i.test(broken.message)) throw new SessionSharingPoolerError(`it refused a transaction (${broken.message})`);
      throw err;
    }
    const p2 = await read(other);
    // The mark (or p1) seen in the transaction settles it; asking again would wait for a session the transaction holds.
    const p3 = p2.mark === token || p2.pid === p1 ? undefined : await read(locked);
    await other.query('rollback');
    if (p3 === undefined) throw sawMark(p2.pid, p2.mark === token);
    if (p3.mark !== token) throw lostMark(p3.pid);
    for (let i = 0; i < SESSION_CHECK_ROUNDS; i++) {
      const o = await read(other);
      if (o.mark === token) throw sawMark(o.pid);
      const l = await read(locked);
      if (l.mark !== token) throw lostMark(l.pid);
    }
    // The mark goes: nothing else reads it, and the session is the pool's from now on.
    await sql`select set_config(${SESSION_MARK}, '', false)`.execute(locked);
  } catch (err) {
    broken ??= err as Error;
    throw err;
  } finally {
    // A connection left in a transaction or an error state is not given back to the pool.
    other.release(broken);
  }
}

type Row = Record<string, unknown>;

/**
 * PostgreSQL's answer to one of this server's named statements that says the session is not the
 * one the connection prepared it in: 42P05 (prepared statement "…" already exists: prepared
 * by another client of a pooler, in the session this connection got now) or 26000 (prepared
 * statement "…" does not exist: this connection prepared it in another session). On a
 * connection of its own this never happens.
 */
export class PooledSessionError extends Error {
  readonly code = 'CORTEX_POOLED_SESSIONS';
  constructor(
    readonly sqlstate: string,
    options: { cause: unknown },
  ) {
    // One text for every statement and both SQLSTATEs: told once (a minute) however many
    // commits fail so (DatabaseOutage.shouldLog keys on it).
    super(
      "this server's prepared statements were found missing from, or already in, the PostgreSQL sessions of its connections (SQLSTATE 42P05/26000): " +
        '--db most likely leads to a pooler in transaction mode (PgBouncer pool_mode = transaction, or a managed database\'s pooled port) that hands sessions to other clients between statements, ' +
        'which also breaks the advisory locks and LISTEN/NOTIFY this server relies on — point --db at PostgreSQL itself (or a session-mode pooler) and restart the server',
      options,
    );
    this.name = 'PooledSessionError';
  }
}

/** pool.query of a named statement; a sign of a pooler that shares sessions becomes PooledSessionError (DECISIONS G40). */
async function namedQuery(pool: pg.Pool, query: pg.QueryConfig): Promise<pg.QueryResult<Row>> {
  try {
    return await pool.query<Row>(query);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if ((code === '42P05' || code === '26000') && typeof query.name === 'string' && (error as Error).message.includes(`"${query.name}"`)) {
      throw new PooledSessionError(code, { cause: error });
    }
    throw error;
  }
}

/**
 * One statement per batch (see the file comment). `$12` is the session that must still
 * hold the host (NULL: any): a push of a session that a newer hello (on any server)
 * replaced is refused, so nothing of the old session is acked after the new hello was
 * answered (that hello's UPDATE took the same row lock).
 */
const COMMIT_SQL = `
with a as (
  select accepted_seq, session_id from agents where host_id = $1 for update
), ok as (
  select accepted_seq from a where $12::text is null or a.session_id = $12::text
), ins as (
  insert into logs (host_id, seq, ts, received_at, severity, facility, app_name, process_id, message, source, metadata_json)
  select $1, u.seq, u.ts, $2, u.severity, u.facility, u.app_name, u.process_id, u.message, u.source, u.metadata_json
  from unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
    as u(seq, ts, severity, facility, app_name, process_id, message, source, metadata_json), ok
  where u.seq > ok.accepted_seq
  on conflict do nothing
  returning 1
), upd as (
  update agents set accepted_seq = greatest(agents.accepted_seq, $13::bigint), last_seen = $2
  from ok where agents.host_id = $1
  returning agents.accepted_seq
)
select (select accepted_seq from a) as prev,
       (select session_id from a) as session_id,
       (select accepted_seq from upd) as now,
       (select count(*) from ins)::int as inserted`;

/**
 * COMMIT_SQL for several hosts at once (one batch each): $1 hosts, $2 their sessions (NULL:
 * any), $3 their batches' highest seq, $4 their received_at; $5 each row's host, then the
 * row columns. The host rows are locked in host_id order, as every grouped statement of
 * every server locks them, so two of them never wait on each other in a cycle. One result
 * row per host: prev NULL = no host row, now NULL = the session was replaced.
 */
const COMMIT_GROUP_SQL = `
with h as (
  select * from unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) as h(host_id, session_id, max_seq, received_at)
), a as (
  select agents.host_id, agents.accepted_seq, agents.session_id from agents
  where agents.host_id = any($1::text[])
  order by agents.host_id
  for update
), ok as (
  select a.host_id, a.accepted_seq, h.max_seq, h.received_at from a join h on h.host_id = a.host_id
  where h.session_id is null or a.session_id = h.session_id
), ins as (
  insert into logs (host_id, seq, ts, received_at, severity, facility, app_name, process_id, message, source, metadata_json)
  select u.host_id, u.seq, u.ts, ok.received_at, u.severity, u.facility, u.app_name, u.process_id, u.message, u.source, u.metadata_json
  from unnest($5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
    as u(host_id, seq, ts, severity, facility, app_name, process_id, message, source, metadata_json)
    join ok on ok.host_id = u.host_id
  where u.seq > ok.accepted_seq
  on conflict do nothing
  returning host_id
), upd as (
  update agents set accepted_seq = greatest(agents.accepted_seq, ok.max_seq), last_seen = ok.received_at
  from ok where agents.host_id = ok.host_id
  returning agents.host_id, agents.accepted_seq
), n as (
  select host_id, count(*)::int as inserted from ins group by host_id
)
select h.host_id, a.accepted_seq as prev, upd.accepted_seq as now, coalesce(n.inserted, 0) as inserted
from h
left join a on a.host_id = h.host_id
left join upd on upd.host_id = h.host_id
left join n on n.host_id = h.host_id`;

const METRICS_SQL = `
with t as (
  update agents set last_seen = $3 where host_id = $1 returning 1
), ins as (
  insert into metrics (host_id, ts, name, value, labels_json, received_at)
  select $1, $2, u.name, u.value, u.labels_json, $3
  from unnest($4::text[], $5::float8[], $6::text[]) as u(name, value, labels_json)
  where exists (select 1 from t)
  returning 1
)
select (select count(*) from t)::int as found, (select count(*) from ins)::int as n`;

/** The column arrays of a commit statement's rows (passed through unnest). */
class Columns {
  readonly seq: number[];
  readonly ts: string[];
  readonly severity: string[];
  readonly facility: (string | null)[];
  readonly app: (string | null)[];
  readonly pid: (string | null)[];
  readonly message: string[];
  readonly source: string[];
  readonly meta: (string | null)[];
  private n = 0;

  constructor(rows: number) {
    this.seq = new Array<number>(rows);
    this.ts = new Array<string>(rows);
    this.severity = new Array<string>(rows);
    this.facility = new Array<string | null>(rows);
    this.app = new Array<string | null>(rows);
    this.pid = new Array<string | null>(rows);
    this.message = new Array<string>(rows);
    this.source = new Array<string>(rows);
    this.meta = new Array<string | null>(rows);
  }

  /** Appends the entries' rows; returns their highest seq (0 for none). */
  add(entries: readonly IngestLogEntry[]): number {
    let max = 0;
    for (let j = 0; j < entries.length; j++) {
      const e = entries[j] as IngestLogEntry;
      const i = this.n++;
      this.seq[i] = e.seq;
      if (e.seq > max) max = e.seq;
      this.ts[i] = e.ts;
      this.severity[i] = e.severity;
      this.facility[i] = e.facility ?? null;
      this.app[i] = e.app_name ?? null;
      this.pid[i] = e.process_id ?? null;
      this.message[i] = e.message;
      this.source[i] = e.source;
      this.meta[i] = e.metadata == null ? null : JSON.stringify(e.metadata);
    }
    return max;
  }
}

/** A commit statement's row of one host: its result, or why nothing of its batch was stored. */
function commitResult(host_id: string, row: Row): CommitResult {
  if (row['prev'] === null || row['prev'] === undefined) throw new UnknownHostError(host_id);
  if (row['now'] === null || row['now'] === undefined) throw new SessionSupersededError(host_id);
  return { accepted_seq: Number(row['now']), previous_accepted_seq: Number(row['prev']), inserted: Number(row['inserted']) };
}

/** A commitBatch call waiting for its statement (see PostgresIngestWriter). */
interface QueuedCommit {
  host_id: string;
  entries: readonly IngestLogEntry[];
  received_at: string;
  session_id: string | undefined;
  resolve: (r: CommitResult) => void;
  reject: (e: unknown) => void;
}

/** Rows of one grouped statement: a batch larger than this still goes, alone. */
const GROUP_MAX_ROWS = 4000;
/** Hosts of one grouped statement. */
const DEFAULT_GROUP_MAX_HOSTS = 256;

/**
 * Group commit across hosts (DECISIONS G13). A commit is one transaction, and a transaction
 * costs PostgreSQL a WAL flush and a backend round of its own: one statement per push held
 * one server to ~2,200 pushes/s, so a fleet of 3,000 hosts shipping 2 lines/s each (one or two
 * entries a push) got -32020 and acks seconds late, and its hellos waited behind the pushes
 * for a pool connection. Now at most `maxInFlight` ingest statements run at once (half the
 * pool: the other half stays free for hellos, heartbeats, the control plane); a commitBatch
 * arriving while they are all busy waits, and the next statement takes every waiting batch
 * (up to GROUP_MAX_ROWS rows and maxGroupHosts hosts, one batch per host) in one transaction.
 * At low load a batch goes at once, as before; under load the waiting time is what one
 * statement takes, and it buys every waiting host one shared commit.
 * What a batch gets is unchanged: its own accepted_seq, UnknownHostError or
 * SessionSupersededError from its own host row, and nothing acked before COMMIT. A grouped
 * statement that fails for another reason than a lost database is run again batch by batch,
 * so one batch PostgreSQL refuses fails alone, not every host that shared its statement.
 */
class PostgresIngestWriter implements IngestWriter {
  private queue: QueuedCommit[] = [];
  private inFlight = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly ensurePartition: (day: string) => Promise<boolean>,
    private readonly maxInFlight: number,
    private readonly maxGroupHosts: number,
  ) {}

  commitBatch(
    host_id: string,
    entries: readonly IngestLogEntry[],
    received_at: string,
    session_id?: string,
  ): Promise<CommitResult> {
    return new Promise<CommitResult>((resolve, reject) => {
      this.queue.push({ host_id, entries, received_at, session_id, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const group = this.takeGroup();
      this.inFlight++;
      void this.run(group).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  /** The waiting batches of the next statement, in arrival order; a host's second batch waits for the next one. */
  private takeGroup(): QueuedCommit[] {
    const group: QueuedCommit[] = [];
    const hosts = new Set<string>();
    const rest: QueuedCommit[] = [];
    let rows = 0;
    let i = 0;
    for (; i < this.queue.length; i++) {
      const c = this.queue[i] as QueuedCommit;
      if (group.length > 0 && (rows + c.entries.length > GROUP_MAX_ROWS || group.length >= this.maxGroupHosts)) break;
      if (hosts.has(c.host_id)) {
        rest.push(c);
        continue;
      }
      hosts.add(c.host_id);
      group.push(c);
      rows += c.entries.length;
    }
    this.queue = i === this.queue.length && rest.length === 0 ? [] : rest.concat(this.queue.slice(i));
    return group;
  }

  private async run(group: QueuedCommit[]): Promise<void> {
    if (group.length === 1) {
      const c = group[0] as QueuedCommit;
      await this.commitAlone(c.host_id, c.entries, c.received_at, c.session_id).then(c.resolve, (error: unknown) => {
        c.reject(error);
        this.failWaiting(error);
      });
      return;
    }
    let rows: Map<string, Row>;
    try {
      rows = await this.withPartitions(group.map((c) => c.received_at), () => this.commitGroup(group));
    } catch (error) {
      // Out of reach, its login refused, read-only or its disk full: every batch alone would fail the same way.
      if (outageKind(error) !== undefined) {
        for (const c of group) c.reject(error);
        this.failWaiting(error);
        return;
      }
      // Nothing of the group was stored: each batch alone, so only the one at fault fails.
      for (const c of group) await this.commitAlone(c.host_id, c.entries, c.received_at, c.session_id).then(c.resolve, c.reject);
      return;
    }
    for (const c of group) {
      try {
        c.resolve(commitResult(c.host_id, rows.get(c.host_id) ?? {}));
      } catch (error) {
        c.reject(error);
      }
    }
  }

  /**
   * A statement found the path to the database silent (cut for want of an answer, or a new
   * connection that got none): the batches waiting for a statement fail with it now. Each
   * would otherwise wait for a statement of its own to be cut in turn, and the agents' requests
   * time out (30 s) with nothing said instead of getting -32007 with the reason (DECISIONS G43).
   * Refusing a waiting batch never reorders a host's commits: it is resent.
   */
  private failWaiting(error: unknown): void {
    if (!isSilence(error) || this.queue.length === 0) return;
    const waiting = this.queue;
    this.queue = [];
    for (const c of waiting) c.reject(error);
  }

  /** fn(), and once more after creating the day partitions of `days` when there was none (clock past the days created ahead). */
  private async withPartitions<T>(days: readonly string[], fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if ((error as { code?: string }).code !== '23514' || !/no partition/.test((error as Error).message)) throw error;
      for (const day of new Set(days.map(dayOf))) await this.ensurePartition(day);
      return fn();
    }
  }

  private commitAlone(host_id: string, entries: readonly IngestLogEntry[], received_at: string, session_id: string | undefined): Promise<CommitResult> {
    return this.withPartitions([received_at], () => this.commitOnce(host_id, entries, received_at, session_id));
  }

  private async commitOnce(
    host_id: string,
    entries: readonly IngestLogEntry[],
    received_at: string,
    session_id?: string,
  ): Promise<CommitResult> {
    const c = new Columns(entries.length);
    const max = c.add(entries);
    const r = await namedQuery(this.pool, {
      name: 'cortex_commit_batch',
      text: COMMIT_SQL,
      values: [host_id, received_at, c.seq, c.ts, c.severity, c.facility, c.app, c.pid, c.message, c.source, c.meta, session_id ?? null, max],
    });
    return commitResult(host_id, r.rows[0] as Row);
  }

  /** The batches of `group` (one per host) in one statement; its result row of each host, by host_id. */
  private async commitGroup(group: readonly QueuedCommit[]): Promise<Map<string, Row>> {
    let rows = 0;
    for (const g of group) rows += g.entries.length;
    const c = new Columns(rows);
    const hosts = group.map((g) => g.host_id);
    const rowHost = new Array<string>(rows);
    const maxSeq = new Array<number>(group.length);
    let k = 0;
    group.forEach((g, i) => {
      for (let j = 0; j < g.entries.length; j++) rowHost[k++] = g.host_id;
      maxSeq[i] = c.add(g.entries);
    });
    const r = await namedQuery(this.pool, {
      name: 'cortex_commit_group',
      text: COMMIT_GROUP_SQL,
      values: [hosts, group.map((g) => g.session_id ?? null), maxSeq, group.map((g) => g.received_at), rowHost, c.seq, c.ts, c.severity, c.facility, c.app, c.pid, c.message, c.source, c.meta],
    });
    return new Map(r.rows.map((row) => [String(row['host_id']), row]));
  }

  async insertMetrics(
    host_id: string,
    ts: string,
    samples: readonly IngestMetricSample[],
    received_at?: string,
  ): Promise<number> {
    const r = await namedQuery(this.pool, {
      name: 'cortex_insert_metrics',
      text: METRICS_SQL,
      values: [
        host_id,
        ts,
        received_at ?? new Date().toISOString(),
        samples.map((s) => s.name),
        samples.map((s) => s.value),
        samples.map((s) => (s.labels == null ? null : JSON.stringify(s.labels))),
      ],
    });
    const row = r.rows[0] as Row;
    if (Number(row['found']) === 0) throw new UnknownHostError(host_id);
    return Number(row['n']);
  }
}

/**
 * LISTEN/NOTIFY on one dedicated client (a pooled connection cannot LISTEN: it is shared).
 * Reconnects after an error (listeners stay registered) and re-LISTENs; while it is down
 * the callers' polling fallbacks carry the control plane.
 */
class PostgresNotifyBus implements NotifyBus {
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private readonly listeners = new Map<string, Set<(payload: string) => void>>();
  private retry: ReturnType<typeof setTimeout> | undefined;
  /** The name this process is present under (holdPresence), and whether the current client holds it. */
  private presence: string | undefined;
  private presenceHeldBy: pg.Client | undefined;
  private presenceRetry: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly url: string,
    private readonly pool: pg.Pool,
    private readonly guard: SilenceGuard,
    private readonly pingMs: number,
    private readonly connectTimeoutMs: number,
  ) {}

  async listen(channel: string, fn: (payload: string) => void): Promise<void> {
    let set = this.listeners.get(channel);
    const first = set === undefined;
    if (set === undefined) this.listeners.set(channel, (set = new Set()));
    set.add(fn);
    await this.connect();
    if (first && this.client !== undefined) await this.client.query(`LISTEN ${quoteIdent(channel)}`);
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.pool.query('select pg_notify($1, $2)', [channel, payload]);
  }

  holdPresence(name: string): void {
    this.presence = name;
    void this.connect()
      .then(() => this.takePresence())
      .catch(() => this.scheduleRetry());
  }

  async presenceHeld(name: string): Promise<boolean> {
    // A shared lock on the key is refused while a process holds it (exclusively); got, it goes
    // at the end of this statement's transaction. Cheaper than reading pg_locks (every lock of
    // the cluster); a process taking its presence meanwhile tries again a second later.
    const r = await this.pool.query<{ free: boolean }>(`select pg_try_advisory_xact_lock_shared($1, ${PRESENCE_KEY_SQL}) as free`, [PRESENCE_LOCK_CLASS, name]);
    return r.rows[0]?.free === false;
  }

  /**
   * The presence lock on the current client, once. Not got: the session of an earlier
   * connection of this process that PostgreSQL has not found closed yet still holds it (or a
   * process under the same name: refused at start, G23): tried again every second.
   */
  private async takePresence(): Promise<void> {
    clearTimeout(this.presenceRetry);
    const client = this.client;
    const name = this.presence;
    if (client === undefined || name === undefined || this.presenceHeldBy === client || this.closed) return;
    const r = await client.query<{ ok: boolean }>(`select pg_try_advisory_lock($1, ${PRESENCE_KEY_SQL}) as ok`, [PRESENCE_LOCK_CLASS, name]).catch(() => undefined);
    if (r?.rows[0]?.ok === true) {
      if (this.client === client) this.presenceHeldBy = client;
      return;
    }
    if (this.closed || this.client !== client) return; // a new client takes it when it connects
    this.presenceRetry = setTimeout(() => void this.takePresence(), 1000);
    this.presenceRetry.unref();
  }

  private connect(): Promise<void> {
    if (this.client !== undefined || this.closed) return Promise.resolve();
    this.connecting ??= (async () => {
      const client = new pg.Client(clientConfig(this.url, 'cortex-server-listen', this.connectTimeoutMs));
      client.on('notification', (m) => {
        const set = this.listeners.get(m.channel);
        if (set !== undefined) for (const fn of set) fn(m.payload ?? '');
      });
      client.on('error', () => this.drop(client));
      client.on('end', () => this.drop(client));
      this.guard.guard(client, 'plain'); // LISTEN, the presence lock, the ping: instant statements
      try {
        await client.connect();
        for (const channel of this.listeners.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
      } catch (error) {
        void client.end().catch(() => undefined); // not left open beside the next attempt's
        throw error;
      }
      this.client = client;
      this.ping(client);
      await this.takePresence();
    })().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  /**
   * Pings the LISTEN connection every pingMs. It only ever waits for notifications, so on a
   * path that went silent (packets dropped: nothing refused, nothing reset) it would wait for
   * good, the control plane and forwarded probes reduced to their polls, and the presence
   * lock (G42) lost with the session on PostgreSQL's side without this process knowing. A
   * ping left unanswered for silentMs makes the guard close it ('end'): it is dropped and
   * opened again, once a second, until the path answers (DECISIONS G43).
   */
  private ping(client: pg.Client): void {
    if (this.pingMs <= 0 || this.guard.silentMs <= 0) return;
    let waiting = false;
    const timer = setInterval(() => {
      if (this.client !== client) {
        clearInterval(timer);
        return;
      }
      if (waiting) return;
      waiting = true;
      void client
        .query('select 1')
        .catch(() => undefined)
        .finally(() => (waiting = false));
    }, this.pingMs);
    timer.unref();
    client.once('end', () => clearInterval(timer));
  }

  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    if (this.closed) return;
    this.retry = setTimeout(() => void this.connect().catch(() => this.scheduleRetry()), 1000);
    this.retry.unref();
  }

  private scheduleRetry(): void {
    if (this.closed) return;
    this.retry = setTimeout(() => void this.connect().catch(() => this.scheduleRetry()), 1000);
    this.retry.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    clearTimeout(this.presenceRetry);
    await this.connecting?.catch(() => undefined);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}

/** How a connection's statements are watched: looked into before being cut (the pool's), or cut at once (statements that are always instant). */
type Watch = 'checked' | 'plain';

/** One statement under watch. */
interface Watched {
  settled: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The connection's bytes read when its timer was armed: anything arriving since is no silence. */
  bytes: number;
  /** Set when the guard cut the statement's connection: what its caller gets. */
  cut: Error | undefined;
  /** performance.now() when the statement was sent. */
  began: number;
}

/** Bytes a connection's socket has read so far (a large answer still arriving is not silence). */
function bytesRead(client: pg.Client): number {
  return (client.connection.stream as Partial<Socket>).bytesRead ?? 0;
}

/** How long the guard's own connection stays open without a question to ask. */
const GUARD_IDLE_CLOSE_MS = 30_000;

/**
 * Bounds every statement of this storage on a network path that stops answering (DECISIONS
 * G43). With packets dropped (a firewall's DROP, a partition, a proxy or host that hangs)
 * nothing is refused or reset, and a statement on a connection opened before waited for TCP to
 * give up, about 15 minutes: an agent's push (its request timed out at 30 s, nothing said), the
 * lease renewal, the control watcher, /healthz's check, everything queued behind them.
 *
 * A fixed timeout would also cut statements that are slow, not silent: a retention pass's
 * DETACH … CONCURRENTLY waiting for a pg_dump's snapshot, a migration's index build or its
 * wait for the migration lock, the size scan of a large database, an admin search over a
 * host's rows, a commit waiting on a lock (told as held up by H45, not cut), a large answer
 * over a slow link. So none is cut for its length: a statement left unanswered for silentMs,
 * with nothing read on its connection meanwhile, is looked into. PostgreSQL is asked, on a
 * connection of the guard's own, whether that connection's backend is working on a
 * statement (pg_stat_activity: active, and not waiting on the network itself). If it says
 * so, the statement is let run and looked into again silentMs later. If it says the backend
 * is idle or gone, or does not answer within silentMs either, the connection is closed: its
 * statement fails with DatabaseSilentError (the outage account's "database not answering")
 * and the pool opens a new connection for the next one (pg-pool drops a client that ended).
 * A statement of a connection whose statements are always instant (LISTEN, the job lock,
 * the guard's own question, the first statement of a new connection) is cut at silentMs
 * without asking. A connection's goodbye (end) is given silentMs too. Cost: one timer per
 * statement; a question only for a statement that runs past silentMs.
 */
class SilenceGuard {
  /** Each pool connection's backend pid as PostgreSQL itself names it (a session-mode pooler gives the driver a pid of its own). */
  private readonly backends = new WeakMap<pg.Client, number>();
  private own: pg.Client | undefined;
  private ownOpening: Promise<pg.Client> | undefined;
  private ownIdle: ReturnType<typeof setTimeout> | undefined;
  /** The pids waiting for a verdict, and who waits for each. */
  private readonly asked = new Map<number, ((busy: boolean) => void)[]>();
  private asking = false;
  private closed = false;

  constructor(
    private readonly url: string,
    readonly silentMs: number,
    private readonly connectTimeoutMs: number,
  ) {}

  /** Watches `client`'s statements (and its goodbye) from now on. */
  guard(client: pg.Client, how: Watch): void {
    if (this.silentMs <= 0) return;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const end = client.end.bind(client) as (...args: unknown[]) => unknown;
    Object.assign(client, {
      query: (...args: unknown[]): unknown => {
        // A Submittable (a cursor, a stream) runs for as long as its reader takes: not watched (the server uses none).
        if (typeof (args[0] as { submit?: unknown } | null | undefined)?.submit === 'function') return query(...args);
        const w = this.watch(client, how);
        const last = args.length - 1;
        const callback = args[last];
        if (typeof callback === 'function') {
          args[last] = (err: unknown, res: unknown) => {
            this.settle(w);
            (callback as (e: unknown, r: unknown) => void)(err === undefined || err === null ? err : this.failure(w, err), res);
          };
          return query(...args);
        }
        return (query(...args) as Promise<unknown>).then(
          (res) => {
            this.settle(w);
            return res;
          },
          (err: unknown) => {
            this.settle(w);
            throw this.failure(w, err);
          },
        );
      },
      // A goodbye on a silent path waits for an answer that never comes (pg waits for the socket to close).
      end: (...args: unknown[]): unknown => {
        const timer = setTimeout(() => client.connection.stream.destroy(), this.silentMs);
        timer.unref();
        client.once('end', () => clearTimeout(timer));
        return end(...args);
      },
    });
  }

  /** Reads a new pool connection's backend pid (its first statement, cut at silentMs like any other). */
  async learnBackend(client: pg.Client): Promise<void> {
    if (this.silentMs <= 0) return;
    const r = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const pid = Number(r.rows[0]?.pid);
    if (Number.isInteger(pid) && pid > 0) this.backends.set(client, pid);
  }

  private watch(client: pg.Client, how: Watch): Watched {
    const w: Watched = { settled: false, timer: undefined, bytes: 0, cut: undefined, began: performance.now() };
    const arm = (): void => {
      w.bytes = bytesRead(client);
      w.timer = setTimeout(() => void this.unanswered(client, how, w, arm), this.silentMs);
      w.timer.unref();
    };
    arm();
    return w;
  }

  /** What the caller of a failed statement gets: the guard's cut or its own error, with how long it waited (the outage account's G46). */
  private failure(w: Watched, err: unknown): unknown {
    return noteWaited(w.cut ?? err, performance.now() - w.began);
  }

  private settle(w: Watched): void {
    w.settled = true;
    clearTimeout(w.timer);
  }

  /** A statement unanswered for silentMs: let run if bytes arrived meanwhile or PostgreSQL works on it, else its connection closed. */
  private async unanswered(client: pg.Client, how: Watch, w: Watched, rearm: () => void): Promise<void> {
    if (w.settled) return;
    // Part of a large answer came (a slow link, a busy reader): the path answers.
    const before = bytesRead(client);
    if (before !== w.bytes) return rearm();
    const pid = how === 'checked' ? this.backends.get(client) : undefined;
    const busy = pid !== undefined && (await this.busy(pid));
    if (w.settled) return;
    // (read meanwhile: what waited unread while this process was too busy to read it)
    if (busy || bytesRead(client) !== before) return rearm();
    w.cut = new DatabaseSilentError(
      `a statement got no answer from PostgreSQL within ${secondsOf(this.silentMs)}${pid !== undefined ? ', nor did PostgreSQL say it was working on it' : ''}: ` +
        'the network path to the database drops packets (a firewall, a partition) or its host hangs; that connection was closed',
    );
    // pg closes the socket at once when a statement is still running (a graceful goodbye would wait for the silent peer).
    void client.end().catch(() => undefined);
    client.connection.stream.destroy();
  }

  /**
   * Whether PostgreSQL says backend `pid` is working on a statement. False when it says it is
   * not (idle, gone, or waiting on the network: ClientRead/ClientWrite) or does not answer
   * within silentMs; true also when PostgreSQL answers with an error of its own (no slot left,
   * starting up): the path answers, so the statement is not cut for silence.
   */
  private busy(pid: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waiting = this.asked.get(pid);
      if (waiting !== undefined) waiting.push(resolve);
      else this.asked.set(pid, [resolve]);
      void this.ask();
    });
  }

  /** Asks for every pid waiting, one question at a time on the guard's connection. */
  private async ask(): Promise<void> {
    if (this.asking) return;
    this.asking = true;
    try {
      while (this.asked.size > 0) {
        const batch = new Map(this.asked);
        this.asked.clear();
        const busy = await this.askOnce([...batch.keys()]);
        for (const [pid, waiting] of batch) for (const resolve of waiting) resolve(busy === 'answered-error' || (busy instanceof Set && busy.has(pid)));
      }
    } finally {
      this.asking = false;
    }
  }

  private async askOnce(pids: number[]): Promise<Set<number> | 'answered-error' | 'silent'> {
    clearTimeout(this.ownIdle);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'silent'>((resolve) => {
      timer = setTimeout(() => resolve('silent'), this.silentMs);
      timer.unref();
    });
    const question = (async () => {
      const own = await this.ownClient();
      const r = await own.query<{ pid: number; state: string | null; wait: string | null }>(
        'select pid, state, wait_event_type as wait from pg_stat_activity where pid = any($1::int[])',
        [pids],
      );
      return new Set(r.rows.filter((row) => row.state === 'active' && row.wait !== 'Client').map((row) => Number(row.pid)));
    })();
    try {
      const verdict = await Promise.race([question, late]);
      if (verdict === 'silent') this.dropOwn();
      return verdict;
    } catch (error) {
      this.dropOwn();
      return error instanceof pg.DatabaseError ? 'answered-error' : 'silent';
    } finally {
      clearTimeout(timer);
      question.catch(() => undefined);
      if (!this.closed) {
        this.ownIdle = setTimeout(() => this.dropOwn(), GUARD_IDLE_CLOSE_MS);
        this.ownIdle.unref();
      }
    }
  }

  private ownClient(): Promise<pg.Client> {
    if (this.own !== undefined) return Promise.resolve(this.own);
    this.ownOpening ??= (async () => {
      const client = new pg.Client(clientConfig(this.url, 'cortex-server watchdog', Math.min(this.connectTimeoutMs, this.silentMs)));
      client.on('error', () => undefined);
      client.on('end', () => {
        if (this.own === client) this.own = undefined;
      });
      this.guard(client, 'plain');
      await client.connect();
      if (this.closed) {
        void client.end().catch(() => undefined);
        throw new Error('the storage is closed');
      }
      this.own = client;
      return client;
    })().finally(() => (this.ownOpening = undefined));
    return this.ownOpening;
  }

  private dropOwn(): void {
    clearTimeout(this.ownIdle);
    const own = this.own;
    this.own = undefined;
    void own?.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.ownIdle);
    await this.ownOpening?.catch(() => undefined);
    const own = this.own;
    this.own = undefined;
    await own?.end().catch(() => undefined);
  }
}

/** First key of the presence locks (two-key advisory locks: "cxpr"); the second is PRESENCE_KEY_SQL. */
const PRESENCE_LOCK_CLASS = 0x63787072;
/** The presence lock's second key for the name in $2: the schema in it, as jobLockKey does (deployments in schemas of their own on one database). */
const PRESENCE_KEY_SQL = `hashtext('cortex-presence:' || coalesce(current_schema(), '') || ':' || $2::text)`;

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
