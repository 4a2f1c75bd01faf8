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
  SelectQueryNode,
  SqliteAdapter,
  SqliteDriver,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  type DatabaseConnection,
  type Dialect,
  type QueryResult,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import type { Database as Schema } from './schema.js';
import { SqliteThreadWriter, WRITER_AUTOCHECKPOINT_PAGES, locateWriterWorker } from './sqlite-writer.js';
import { WriteGate } from './write-gate.js';
import { ADVANCE_ACCEPTED, INSERT_LOG, INSERT_METRIC, LOG_ROWS_PER_INSERT, LogRowInserter, SELECT_ACCEPTED, TOUCH_LAST_SEEN, insertLogRowsSql } from './sqlite-ingest-sql.js';
import {
  SessionSupersededError,
  UnknownHostError,
  tallyOf,
  type CommitResult,
  type CommitTally,
  type IngestLogEntry,
  type IngestMetricSample,
  type IngestWriter,
  type Storage,
} from './storage.js';

export interface SqliteStorageOptions {
  /** Database file; its folder is created. ':memory:' works for throwaway use (no WAL). */
  path: string;
  /**
   * How long a statement or transaction waits for another connection's write lock (several
   * server processes may share one database; a sqlite3 shell, a backup tool) before failing
   * with SQLITE_BUSY. Default 5000 ms. On this thread the wait never blocks the event loop: it
   * is asynchronous (MAIN_BUSY_TIMEOUT_MS, retryBusy). Opening the database (its pragmas) and
   * the writer threads' connections wait in SQLite's busy handler, off the event loop but for
   * the open.
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
  const db = new Kysely<Schema>({ dialect: immediateSqliteDialect(sqlite, withStatementCache(sqlite), busyTimeoutMs, gate) });
  const ingest = threaded
    ? new SqliteThreadWriter({ path: file, busyTimeoutMs, gate, ...(workerUrl !== undefined ? { workerUrl } : {}) })
    : new SqliteIngestWriter(db, sqlite, busyTimeoutMs);
  // With the writer thread the WAL is mostly past SQLite's default 1000 pages: this
  // connection's own small writes (hellos, heartbeats) would each run a checkpoint, fsync
  // included, on the event loop. The checkpointer thread does that work; this only bounds
  // the WAL (as on the writer's connection) should it not run.
  if (threaded) sqlite.pragma(`wal_autocheckpoint = ${WRITER_AUTOCHECKPOINT_PAGES}`);
  // From here on SQLite never sleeps this thread waiting for a lock: the driver and retryBusy
  // wait asynchronously, up to busyTimeoutMs (see MAIN_BUSY_TIMEOUT_MS).
  sqlite.pragma(`busy_timeout = ${MAIN_BUSY_TIMEOUT_MS}`);
  /** `work` on the connection, tried again while another connection holds the lock; `write`: in a WriteGate turn. */
  const onConnection = <T>(work: () => T, write = false): Promise<T> =>
    retryBusy(async () => {
      if (write) await gate?.acquire();
      try {
        return await db.connection().execute(async () => work());
      } finally {
        if (write) gate?.release();
      }
    }, busyTimeoutMs);

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
      // makes a second process wait (up to busyTimeoutMs, the driver's retries) and then find
      // the migrations done; SQLite DDL is transactional, so a failed migration leaves nothing behind.
      return db.connection().execute(async (locked) => {
        await sql`BEGIN IMMEDIATE`.execute(locked);
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
      onConnection(() => {
        const pageSize = sqlite.pragma('page_size', { simple: true }) as number;
        const pages = sqlite.pragma('page_count', { simple: true }) as number;
        const free = sqlite.pragma('freelist_count', { simple: true }) as number;
        return (pages - free) * pageSize;
      }),
    fileShrinks: () => (sqlite.pragma('auto_vacuum', { simple: true }) as number) === 2,
    releaseFreePages: (maxPages: number) =>
      onConnection(() => {
        if ((sqlite.pragma('auto_vacuum', { simple: true }) as number) !== 2) return 0;
        const pageSize = sqlite.pragma('page_size', { simple: true }) as number;
        const before = sqlite.pragma('freelist_count', { simple: true }) as number;
        if (before === 0) return 0;
        // a write outside a transaction: a SQLITE_BUSY leaves it undone, tried again whole
        sqlite.pragma(`incremental_vacuum(${Math.max(1, Math.floor(maxPages))})`);
        const after = sqlite.pragma('freelist_count', { simple: true }) as number;
        return (before - after) * pageSize;
      }, true),
    async close() {
      // The threads answer what they were asked first (a shutdown drain's last commits).
      if (ingest instanceof SqliteThreadWriter) await ingest.close();
      await db.destroy();
    },
  };
}

/**
 * The main connection's busy timeout once it is open: 0, so that SQLite never sleeps this
 * thread in its busy handler. better-sqlite3 is synchronous: with busy_timeout 5000 a write that
 * met another process's lock (a sqlite3 shell in BEGIN EXCLUSIVE, a backup tool) held the event
 * loop for up to 5 s — /healthz, /metrics, every agent's WebSocket, the admin API — and each
 * blocked write after it did again. Such a write now fails at once with SQLITE_BUSY, and the
 * caller waits asynchronously and tries again (retryBusy) until busyTimeoutMs has passed.
 */
const MAIN_BUSY_TIMEOUT_MS = 0;

/**
 * The pauses (ms) between the attempts of a statement or transaction that met another
 * connection's lock: short at first (another server process's commit lasts milliseconds), then
 * every 50 ms, so that a write goes on within 50 ms of the lock's release.
 */
const BUSY_PAUSES_MS: readonly number[] = [1, 2, 5, 10, 20, 50];

/** SQLITE_BUSY and its extended codes (_SNAPSHOT, _RECOVERY, _TIMEOUT): another connection's lock. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** How long to pause before the next attempt, or undefined: give up (not a lock, or past the deadline). */
function busyPause(error: unknown, attempt: number, deadline: number): number | undefined {
  if (!isBusy(error)) return undefined;
  const left = deadline - performance.now();
  if (left <= 0) return undefined;
  return Math.min(BUSY_PAUSES_MS[Math.min(attempt, BUSY_PAUSES_MS.length - 1)] as number, Math.ceil(left));
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `attempt()` again after a short pause, for as long as it fails with SQLITE_BUSY and `timeoutMs`
 * has not passed; then its last error (as busy_timeout's SQLITE_BUSY was). Only for work that a
 * SQLITE_BUSY leaves undone as a whole: a statement outside a transaction (SQLite rolls its
 * implicit transaction back), BEGIN, a better-sqlite3 transaction function (it rolls back
 * whatever failed inside it, COMMIT included). Never for one statement inside an open
 * transaction: the transaction's earlier statements may be gone with it.
 */
async function retryBusy<T>(attempt: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      const ms = busyPause(error, n, deadline);
      if (ms === undefined) throw error;
      await pause(ms);
    }
  }
}

/**
 * kysely's SQLite dialect, with transactions that start with BEGIN IMMEDIATE: the write
 * lock is taken up front, so a transaction that reads before it writes cannot fail with
 * SQLITE_BUSY_SNAPSHOT when another connection (the writer thread, another server process)
 * committed in between, and inside it no statement waits for another connection. Every kysely
 * transaction of the server writes.
 *
 * Waiting for another connection's lock never blocks the event loop (see MAIN_BUSY_TIMEOUT_MS):
 * see ImmediateSqliteDriver. With a writer thread (`gate`), every write statement and every
 * transaction on this connection first takes its turn through the WriteGate (./write-gate.ts),
 * also waited for asynchronously.
 */
function immediateSqliteDialect(sqlite: Database.Database, statements: SqliteDatabase, busyTimeoutMs: number, gate?: WriteGate): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ImmediateSqliteDriver(sqlite, statements, busyTimeoutMs, gate),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

/** kysely's connection mutex (one connection, one user at a time). */
class ConnectionLock {
  private held: Promise<void> | undefined;
  private free: (() => void) | undefined;

  async lock(): Promise<void> {
    while (this.held !== undefined) await this.held;
    this.held = new Promise((resolve) => (this.free = resolve));
  }

  unlock(): void {
    const free = this.free;
    this.held = undefined;
    this.free = undefined;
    free?.();
  }
}

type Statement = SqliteStatement & { readonly readonly: boolean };

/**
 * kysely's SqliteDriver, waiting for other connections' locks without blocking:
 *
 * - A statement outside a transaction, and BEGIN IMMEDIATE, that meet the lock (SQLITE_BUSY:
 *   nothing was done, SQLite says they may be tried again) are tried again after a short pause
 *   (retryBusy's), up to busyTimeoutMs from the first attempt, and then fail with SQLITE_BUSY as
 *   before. During each pause the connection is let go, so other statements — a /healthz `select
 *   1`, a read — and transactions run meanwhile; nothing is let go inside a transaction.
 * - Inside a transaction nothing is tried again: it began IMMEDIATE, so it holds the write lock
 *   and (WAL) its statements and its COMMIT need no other connection's: the checkpoint that may
 *   follow a COMMIT is PASSIVE (its SQLITE_BUSY is dropped, the commit done), and starting the WAL
 *   over at the first write is skipped while a reader uses it. Should SQLITE_BUSY come anyway, it
 *   fails the transaction (kysely rolls it back: nothing was done), it is not repeated: the
 *   transaction's earlier statements may be gone with it.
 * - Waiting for the writer thread's turn (WriteGate) also lets the connection go: that thread
 *   may itself be waiting (on its own thread) for another process's lock.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  private readonly lock = new ConnectionLock();
  private readonly connection: DatabaseConnection;
  /** The open transaction holds a WriteGate turn. */
  private txGate = false;
  /** Rows the open transaction's statements changed, by the tally they count for (storage.ts CommitTally). */
  private txTallies: Map<CommitTally, number> | undefined;

  constructor(
    private readonly sqlite: Database.Database,
    private readonly statements: SqliteDatabase,
    private readonly busyTimeoutMs: number,
    private readonly gate: WriteGate | undefined,
  ) {
    super({ database: statements });
    this.connection = {
      executeQuery: <R>(query: CompiledQuery) => this.execute<R>(query, performance.now() + this.busyTimeoutMs),
      streamQuery: <R>(query: CompiledQuery) => this.stream<R>(query),
    };
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock.lock();
    return this.connection;
  }

  override async releaseConnection(): Promise<void> {
    this.lock.unlock();
  }

  /** `work` with the connection let go (the caller holds it, outside a transaction), then taken back. */
  private async letGo(work: Promise<void>): Promise<void> {
    this.lock.unlock();
    try {
      await work;
    } finally {
      await this.lock.lock();
    }
  }

  /** A WriteGate turn for a write outside a transaction or a transaction; false without a writer thread. */
  private async takeGate(): Promise<boolean> {
    const gate = this.gate;
    if (gate === undefined) return false;
    if (!gate.tryAcquire()) await this.letGo(gate.acquire());
    return true;
  }

  private async execute<R>(query: CompiledQuery, deadline: number): Promise<QueryResult<R>> {
    // (a cached statement: preparing it costs a Map lookup)
    let stmt = this.statements.prepare(query.sql) as Statement;
    if (this.sqlite.inTransaction) {
      const result = run<R>(stmt, query.parameters);
      const tally = result.numAffectedRows !== undefined && result.numAffectedRows > 0n ? tallyOf(query.queryId) : undefined;
      if (tally !== undefined) {
        this.txTallies ??= new Map();
        this.txTallies.set(tally, (this.txTallies.get(tally) ?? 0) + Number(result.numAffectedRows));
      }
      return result;
    }
    // (BEGIN is read-only to SQLite: beginTransaction took the turn)
    const gated = this.gate !== undefined && !stmt.readonly && (await this.takeGate());
    try {
      for (let n = 0; ; n++) {
        try {
          const result = run<R>(stmt, query.parameters);
          if (result.numAffectedRows !== undefined && result.numAffectedRows > 0n) {
            const tally = tallyOf(query.queryId);
            if (tally !== undefined) tally.changes += Number(result.numAffectedRows);
          }
          return result;
        } catch (error) {
          const ms = busyPause(error, n, deadline);
          if (ms === undefined) throw error;
          await this.letGo(pause(ms));
          stmt = this.statements.prepare(query.sql) as Statement;
        }
      }
    } finally {
      if (gated) this.gate?.release();
    }
  }

  private async *stream<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(query.query)) throw new Error('Sqlite driver only supports streaming of select queries');
    for (const row of this.statements.prepare(query.sql).iterate(query.parameters)) yield { rows: [row as R] };
  }

  private releaseTxGate(): void {
    if (!this.txGate) return;
    this.txGate = false;
    this.gate?.release();
  }

  override async beginTransaction(): Promise<void> {
    const deadline = performance.now() + this.busyTimeoutMs;
    // While this waits (the turn, BEGIN's retries) the connection is let go: another transaction
    // may begin and end meanwhile, so the turn becomes the transaction's only once BEGIN succeeded
    // (from then on the connection stays held until COMMIT or ROLLBACK).
    const gated = await this.takeGate();
    try {
      await this.execute(CompiledQuery.raw('begin immediate'), deadline);
    } catch (error) {
      if (gated) this.gate?.release();
      throw error;
    }
    this.txGate = gated;
    this.txTallies = undefined;
  }

  override async commitTransaction(): Promise<void> {
    try {
      await this.execute(CompiledQuery.raw('commit'), 0);
      if (this.txTallies !== undefined) for (const [tally, changes] of this.txTallies) tally.changes += changes;
      this.txTallies = undefined;
    } finally {
      // a COMMIT that failed with the transaction still open: kysely rolls it back next
      if (!this.sqlite.inTransaction) this.releaseTxGate();
    }
  }

  override async rollbackTransaction(): Promise<void> {
    this.txTallies = undefined;
    try {
      // SQLite may have rolled it back already (some errors do): ROLLBACK would then fail and
      // hide the error that ended the transaction
      if (this.sqlite.inTransaction) await this.execute(CompiledQuery.raw('rollback'), 0);
    } finally {
      this.releaseTxGate();
    }
  }
}

/** kysely's SqliteConnection.executeQuery, on a statement already prepared. */
function run<R>(stmt: SqliteStatement, parameters: readonly unknown[]): QueryResult<R> {
  if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
  const { changes, lastInsertRowid } = stmt.run(parameters);
  return {
    numAffectedRows: changes !== undefined && changes !== null ? BigInt(changes) : undefined,
    insertId: lastInsertRowid !== undefined && lastInsertRowid !== null ? BigInt(lastInsertRowid) : undefined,
    rows: [],
  };
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
    private readonly busyTimeoutMs: number,
  ) {}

  private statements(): PreparedIngest {
    this.prepared ??= prepareIngest(this.sqlite);
    return this.prepared;
  }

  // Both methods run inside kysely's connection lock, so a write here never lands in the
  // middle of a kysely transaction on the same connection (better-sqlite3 would nest it
  // as a savepoint, and a rollback there would take acked rows with it). IMMEDIATE takes
  // the write lock up front, so another process's lock stops it at BEGIN rather than on a
  // lock upgrade. A SQLITE_BUSY anywhere in it (BEGIN, a statement, COMMIT) leaves the whole
  // transaction undone (better-sqlite3 rolls back what failed inside it): it is tried again
  // whole after a pause, the connection let go meanwhile (retryBusy): one try/catch per
  // transaction, nothing per entry.
  commitBatch(
    host_id: string,
    entries: readonly IngestLogEntry[],
    received_at: string,
    session_id?: string,
  ): Promise<CommitResult> {
    return retryBusy(
      () => this.db.connection().execute(async () => this.statements().commitTx.immediate(host_id, entries, received_at, session_id)),
      this.busyTimeoutMs,
    );
  }

  insertMetrics(
    host_id: string,
    ts: string,
    samples: readonly IngestMetricSample[],
    received_at?: string,
  ): Promise<number> {
    const seen = received_at ?? new Date().toISOString();
    return retryBusy(() => this.db.connection().execute(async () => this.statements().metricsTx.immediate(host_id, ts, samples, seen)), this.busyTimeoutMs);
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
