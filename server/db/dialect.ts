// The SQLite dialect: the ONLY module that knows SQLite and better-sqlite3.
//
// It opens the database file, sets the connection pragmas, and returns a `Storage`
// (./storage.ts): a Kysely<Database> for everything that is not the hot path, plus an
// `IngestWriter` that uses prepared statements. The PostgreSQL dialect (./postgres.ts)
// implements the same `Storage` interface.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  SqliteAdapter,
  SqliteDriver,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type QueryResult,
  type SqliteDatabase,
  type SqliteDialectConfig,
} from 'kysely';
import type { Database as Schema } from './schema.js';
import { SqliteThreadWriter, WRITER_AUTOCHECKPOINT_PAGES, locateWriterWorker } from './sqlite-writer.js';
import { WriteGate } from './write-gate.js';
import { ADVANCE_ACCEPTED, INSERT_LOG, INSERT_METRIC, LOG_ROWS_PER_INSERT, LogRowInserter, SELECT_ACCEPTED, TOUCH_LAST_SEEN, insertLogRowsSql } from './sqlite-ingest-sql.js';
import {
  SessionSupersededError,
  UnknownHostError,
  type CommitResult,
  type IngestLogEntry,
  type IngestMetricSample,
  type IngestWriter,
  type Storage,
} from './storage.js';

export interface SqliteStorageOptions {
  /** Database file; its folder is created. ':memory:' works for throwaway use (no WAL). */
  path: string;
  /**
   * How long a statement waits for another connection's write lock (several server
   * processes may share one database) before failing with SQLITE_BUSY. Default 5000 ms.
   * better-sqlite3 is synchronous, so the wait blocks this process's event loop.
   */
  busyTimeoutMs?: number;
  /**
   * Open an existing database only: no folder or file is created, and a missing file is
   * an error (better-sqlite3 `fileMustExist`). The admin commands use this.
   */
  mustExist?: boolean;
  /**
   * Where the ingest transactions run. 'thread' (the default when the compiled worker file
   * is there and the database is a file): a writer thread with a connection of its own,
   * started on the first commit, plus a checkpointer thread (./sqlite-writer.ts).
   * 'inline': on this thread, on the kysely connection (the single-thread path; the
   * bench's ceiling, and what runs from the TypeScript sources).
   */
  writer?: 'thread' | 'inline';
  /** The compiled writer-thread file (default: found beside this module; tests pass dist's). */
  writerWorker?: URL;
}

/** chmod 0600 when the file grants more; a missing file or one this user does not own is left as it is. */
function tightenToOwner(path: string): void {
  try {
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  } catch {
    // missing, or not ours to change: SQLite opens it as it is
  }
}

/** How long a connection waits for another's lock before SQLITE_BUSY (SqliteStorageOptions.busyTimeoutMs's default). */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5000;

export function openSqliteStorage(options: SqliteStorageOptions): Storage {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS;
  const inMemory = options.path === ':memory:';
  const file = inMemory ? options.path : resolve(options.path);
  if (!inMemory && options.mustExist !== true) {
    // Log contents and token hashes: the folder (when we create it) is 0700 and the file 0600;
    // SQLite gives -wal and -shm the mode of the database file (DECISIONS H11).
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  }
  // An existing file with a wider mode (a copy restored with cp under a 022 umask kept the live
  // database world-readable) is tightened to 0600, with its -wal and -shm, as the agent does its
  // buffer (DECISIONS H11, H47). Not the folder: --db may name a file in a shared one.
  if (!inMemory) for (const f of [file, `${file}-wal`, `${file}-shm`]) tightenToOwner(f);

  const sqlite = new Database(file, { timeout: busyTimeoutMs, fileMustExist: options.mustExist === true });
  try {
    // busy_timeout first: switching to WAL needs a lock another process may hold.
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    // Takes effect only on a new database (before its first table): retention can then hand
    // the pages of deleted rows back to the file system (incremental_vacuum), so the file
    // shrinks with the data. A database created before this keeps auto_vacuum NONE.
    sqlite.pragma('auto_vacuum = INCREMENTAL');
    sqlite.pragma('journal_mode = WAL');
    // NORMAL in WAL mode: a commit survives a process crash (SIGKILL); only an OS
    // crash/power loss can lose the last transactions. That is the ack guarantee we give.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
  } catch (error) {
    sqlite.close();
    throw error;
  }

  const workerUrl = options.writerWorker ?? locateWriterWorker();
  // CORTEX_SQLITE_WRITER=inline|thread overrides the default (an operator's way back to the
  // single-thread path; the benches compare both).
  const fromEnv = process.env['CORTEX_SQLITE_WRITER'];
  const wanted = options.writer ?? (fromEnv === 'inline' || fromEnv === 'thread' ? fromEnv : undefined);
  const threaded = !inMemory && (wanted ?? (workerUrl !== undefined ? 'thread' : 'inline')) === 'thread';
  const gate = threaded ? new WriteGate() : undefined;
  const db = new Kysely<Schema>({ dialect: immediateSqliteDialect(withStatementCache(sqlite), gate) });
  const ingest = threaded
    ? new SqliteThreadWriter({ path: file, busyTimeoutMs, gate, ...(workerUrl !== undefined ? { workerUrl } : {}) })
    : new SqliteIngestWriter(db, sqlite);
  // With the writer thread the WAL is mostly past SQLite's default 1000 pages: this
  // connection's own small writes (hellos, heartbeats) would each run a checkpoint, fsync
  // included, on the event loop. The checkpointer thread does that work; this only bounds
  // the WAL (as on the writer's connection) should it not run.
  if (threaded) sqlite.pragma(`wal_autocheckpoint = ${WRITER_AUTOCHECKPOINT_PAGES}`);

  return {
    dialect: 'sqlite',
    db,
    ingest,
    usedBytesIsCostly: false,
    ...(inMemory ? {} : { file }),
    async rescueCopy(to: string) {
      await sqlite.backup(to);
    },
    withMigrationLock<T>(fn: (locked: Kysely<Schema>) => Promise<T>): Promise<T> {
      // kysely's SqliteAdapter takes no lock and runs migrations outside a transaction.
      // Holding one connection and a BEGIN IMMEDIATE transaction around the whole run
      // makes a second process wait (busy_timeout) and then find the migrations done;
      // SQLite DDL is transactional, so a failed migration leaves nothing behind.
      return db.connection().execute(async (locked) => {
        sqlite.exec('BEGIN IMMEDIATE');
        try {
          const result = await fn(locked);
          sqlite.exec('COMMIT');
          return result;
        } catch (error) {
          if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
          throw error;
        }
      });
    },
    usedBytes: () =>
      db.connection().execute(async () => {
        const pageSize = sqlite.pragma('page_size', { simple: true }) as number;
        const pages = sqlite.pragma('page_count', { simple: true }) as number;
        const free = sqlite.pragma('freelist_count', { simple: true }) as number;
        return (pages - free) * pageSize;
      }),
    fileShrinks: () => (sqlite.pragma('auto_vacuum', { simple: true }) as number) === 2,
    releaseFreePages: (maxPages: number) =>
      db.connection().execute(async () => {
        if ((sqlite.pragma('auto_vacuum', { simple: true }) as number) !== 2) return 0;
        const pageSize = sqlite.pragma('page_size', { simple: true }) as number;
        const before = sqlite.pragma('freelist_count', { simple: true }) as number;
        if (before === 0) return 0;
        sqlite.pragma(`incremental_vacuum(${Math.max(1, Math.floor(maxPages))})`);
        const after = sqlite.pragma('freelist_count', { simple: true }) as number;
        return (before - after) * pageSize;
      }),
    async close() {
      // The threads answer what they were asked first (a shutdown drain's last commits).
      if (ingest instanceof SqliteThreadWriter) await ingest.close();
      await db.destroy();
    },
  };
}

/**
 * kysely's SQLite dialect, with transactions that start with BEGIN IMMEDIATE: the write
 * lock is taken up front (waiting through busy_timeout), so a transaction that reads
 * before it writes cannot fail with SQLITE_BUSY_SNAPSHOT when another connection (the
 * writer thread, another server process) committed in between. Every kysely transaction
 * of the server writes.
 *
 * With a writer thread (`gate`), every write statement and every transaction on this
 * connection first takes its turn through the WriteGate (./write-gate.ts), waiting
 * asynchronously instead of in SQLite's busy handler, which would sleep the event loop.
 */
function immediateSqliteDialect(database: SqliteDatabase, gate?: WriteGate): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ImmediateSqliteDriver({ database }, database, gate),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

class ImmediateSqliteDriver extends SqliteDriver {
  constructor(
    config: SqliteDialectConfig,
    private readonly database: SqliteDatabase,
    private readonly gate: WriteGate | undefined,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    const gate = this.gate;
    if (gate === undefined) return connection;
    const database = this.database;
    return {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        // (a cached statement: preparing it here costs a Map lookup)
        if (gate.held || (database.prepare(query.sql) as unknown as { readonly: boolean }).readonly) return connection.executeQuery<R>(query);
        await gate.acquire();
        try {
          return await connection.executeQuery<R>(query);
        } finally {
          gate.release();
        }
      },
      streamQuery: <R>(query: CompiledQuery, chunkSize?: number) => connection.streamQuery<R>(query, chunkSize),
    };
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.gate?.acquire();
    try {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    } catch (error) {
      this.gate?.release();
      throw error;
    }
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('commit'));
    } finally {
      this.gate?.release();
    }
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw('rollback'));
    } finally {
      this.gate?.release();
    }
  }
}

type Bind = unknown[];

/**
 * The ingest hot path. It bypasses the kysely builder on purpose: MEASURED.md puts
 * kysely's `insertInto().values([...1000])` at ≈0.55× a prepared statement (it compiles
 * and prepares every query); here each statement is prepared once and reused.
 *
 * Rows are written with `INSERT ... ON CONFLICT(host_id, seq) DO NOTHING`, not
 * `INSERT OR IGNORE`: OR IGNORE would also silently skip rows that break NOT NULL or
 * CHECK constraints (a bug must fail the commit, not lose entries that we then ack),
 * while ON CONFLICT ... DO NOTHING ignores only a duplicate (host_id, seq) and is the
 * same statement on PostgreSQL. Duplicates are rare anyway: entries with
 * seq <= accepted_seq are filtered out before the insert, in the same transaction.
 */
class SqliteIngestWriter implements IngestWriter {
  // Prepared on first use: the tables exist only after the migrations ran.
  private prepared: PreparedIngest | undefined;

  constructor(
    private readonly db: Kysely<Schema>,
    private readonly sqlite: Database.Database,
  ) {}

  private statements(): PreparedIngest {
    this.prepared ??= prepareIngest(this.sqlite);
    return this.prepared;
  }

  // Both methods run inside kysely's connection lock, so a write here never lands in the
  // middle of a kysely transaction on the same connection (better-sqlite3 would nest it
  // as a savepoint, and a rollback there would take acked rows with it). IMMEDIATE takes
  // the write lock up front, so waiting for another process goes through busy_timeout
  // instead of failing with SQLITE_BUSY on a lock upgrade.
  commitBatch(
    host_id: string,
    entries: readonly IngestLogEntry[],
    received_at: string,
    session_id?: string,
  ): Promise<CommitResult> {
    return this.db
      .connection()
      .execute(async () => this.statements().commitTx.immediate(host_id, entries, received_at, session_id));
  }

  insertMetrics(
    host_id: string,
    ts: string,
    samples: readonly IngestMetricSample[],
    received_at?: string,
  ): Promise<number> {
    const seen = received_at ?? new Date().toISOString();
    return this.db
      .connection()
      .execute(async () => this.statements().metricsTx.immediate(host_id, ts, samples, seen));
  }
}

/**
 * kysely's SQLite driver prepares every query anew (about a third of a hello's database
 * time). This hands it the statements it prepared before, least recently used dropped
 * past `max` entries. A statement still being iterated (busy) is never handed out twice:
 * such a query gets a fresh statement of its own. SQLite re-prepares a cached statement
 * by itself after a schema change (migrations).
 */
export function withStatementCache(sqlite: Database.Database, max = 256): SqliteDatabase {
  const cache = new Map<string, Database.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      const hit = cache.get(sql);
      if (hit !== undefined && !hit.busy) {
        cache.delete(sql); // re-insert: most recently used last
        cache.set(sql, hit);
        return hit;
      }
      const stmt = sqlite.prepare(sql);
      if (hit === undefined) {
        cache.set(sql, stmt);
        if (cache.size > max) cache.delete(cache.keys().next().value as string);
      }
      return stmt;
    },
  };
}

interface PreparedIngest {
  commitTx: Database.Transaction<
    (host_id: string, entries: readonly IngestLogEntry[], received_at: string, session_id?: string) => CommitResult
  >;
  metricsTx: Database.Transaction<
    (host_id: string, ts: string, samples: readonly IngestMetricSample[], seen: string) => number
  >;
}

function prepareIngest(sqlite: Database.Database): PreparedIngest {
  const selectAccepted = sqlite.prepare<Bind, { accepted_seq: number; session_id: string | null }>(SELECT_ACCEPTED);
  const rowsOut = new LogRowInserter(sqlite.prepare<Bind>(INSERT_LOG), sqlite.prepare<Bind>(insertLogRowsSql(LOG_ROWS_PER_INSERT)));
  const advanceAccepted = sqlite.prepare<Bind>(ADVANCE_ACCEPTED);
  const insertMetric = sqlite.prepare<Bind>(INSERT_METRIC);
  const touchLastSeen = sqlite.prepare<Bind>(TOUCH_LAST_SEEN);

  const commitTx = sqlite.transaction(
    (host_id: string, entries: readonly IngestLogEntry[], received_at: string, session_id?: string): CommitResult => {
      const row = selectAccepted.get(host_id);
      if (row === undefined) throw new UnknownHostError(host_id);
      if (session_id !== undefined && row.session_id !== session_id) throw new SessionSupersededError(host_id);
      const previous = row.accepted_seq;
      let highest = previous;
      rowsOut.begin(host_id, received_at);
      for (const e of entries) {
        if (e.seq <= previous) continue; // already accepted: dropped, still acked
        rowsOut.add(
          e.seq,
          e.ts,
          e.severity,
          e.facility ?? null,
          e.app_name ?? null,
          e.process_id ?? null,
          e.message,
          e.source,
          e.metadata == null ? null : JSON.stringify(e.metadata),
        );
        if (e.seq > highest) highest = e.seq;
      }
      const inserted = rowsOut.finish();
      advanceAccepted.run(highest, received_at, host_id);
      return { accepted_seq: highest, previous_accepted_seq: previous, inserted };
    },
  );

  const metricsTx = sqlite.transaction(
    (host_id: string, ts: string, samples: readonly IngestMetricSample[], seen: string): number => {
      if (touchLastSeen.run(seen, host_id).changes === 0) throw new UnknownHostError(host_id);
      for (const s of samples) {
        const labels = s.labels == null ? null : JSON.stringify(s.labels);
        insertMetric.run(host_id, ts, s.name, s.value, labels, seen);
      }
      return samples.length;
    },
  );

  return { commitTx, metricsTx };
}
