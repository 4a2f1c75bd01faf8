// The dialect-neutral storage handle. A dialect module (./dialect.ts for SQLite,
// ./postgres.ts for PostgreSQL; ./open.ts picks one from --db) implements it; everything else in the server talks to these interfaces and to
// kysely, never to a driver.
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** One log entry as it arrives in logs.push (structurally the contract's LogBatchEntry). */
export interface IngestLogEntry {
  seq: number;
  ts: string;
  severity: string;
  facility?: string | null;
  app_name?: string | null;
  process_id?: string | null;
  message: string;
  source: string;
  metadata?: object | null;
}

/** One metric sample as it arrives in metrics.push (the contract's MetricSample). */
export interface IngestMetricSample {
  name: string;
  value: number;
  labels?: Record<string, string>;
}

export interface CommitResult {
  /** The host's accepted_seq after the commit (the ack's up_to_seq). */
  accepted_seq: number;
  /** accepted_seq before the commit (lets the caller count gaps). */
  previous_accepted_seq: number;
  /** Rows inserted by this commit (entries with seq <= previous accepted_seq are dropped). */
  inserted: number;
}

/**
 * The ingest hot path. Implementations use prepared statements directly instead of the
 * kysely builder (MEASURED.md: the builder runs at ≈0.55× a prepared statement because it
 * prepares every query), and serialize with the kysely instance's own connection use:
 * never call these from inside a kysely transaction callback.
 */
export interface IngestWriter {
  /**
   * In ONE transaction: inserts the entries with seq > the host's accepted_seq, sets
   * accepted_seq = max(accepted_seq, highest seq of the batch) and last_seen = received_at
   * (the server time of the commit, an RFC 3339 UTC string: PostgreSQL partitions logs by
   * its day).
   * Either all of it is committed or nothing is.
   *
   * With `session_id`, the commit applies only while agents.session_id still is that
   * session: a session that a newer hello (on this or another server) replaced gets
   * SessionSupersededError and nothing is stored, so no push of the old session is acked
   * after the new session's hello was answered.
   * @throws UnknownHostError when the host row does not exist (answer -32004)
   * @throws SessionSupersededError when another session holds the host now
   * @throws any other error when the commit failed (answer -32007; nothing was stored)
   */
  commitBatch(
    host_id: string,
    entries: readonly IngestLogEntry[],
    received_at: string,
    session_id?: string,
  ): Promise<CommitResult>;
  /**
   * Stores metric samples in one transaction and moves last_seen to `received_at`
   * (default: now). Returns the number of rows stored.
   * @throws UnknownHostError when the host row does not exist
   */
  insertMetrics(
    host_id: string,
    ts: string,
    samples: readonly IngestMetricSample[],
    received_at?: string,
  ): Promise<number>;
}

/**
 * Database notifications between server processes (PostgreSQL LISTEN/NOTIFY). A
 * notification is delivered to every listener on the database, only after the
 * transaction that sent it committed.
 */
export interface NotifyBus {
  listen(channel: string, fn: (payload: string) => void): Promise<void>;
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Marks this process as present under `name` for as long as its listening connection lasts,
   * and again on each connection after a reconnect (PostgreSQL: a session advisory lock on that
   * connection, which PostgreSQL lets go as soon as the process is gone; DECISIONS G42).
   */
  holdPresence?(name: string): void;
  /** Whether a process is marked present under `name` now (holdPresence). */
  presenceHeld?(name: string): Promise<boolean>;
}

export type DialectName = 'sqlite' | 'postgres';

export interface Storage {
  readonly dialect: DialectName;
  readonly db: Kysely<Database>;
  readonly ingest: IngestWriter;
  /**
   * True when usedBytes() is a scan (PostgreSQL), so a size-cap loop plans its deletes
   * from one measurement instead of measuring after every batch.
   */
  readonly usedBytesIsCostly: boolean;
  /**
   * A connection of its own for this server's lease renewal (PostgreSQL): a pool whose every
   * connection is busy (ingest commits, a burst of hellos, slow admin queries) cannot hold the
   * renewal back until the other servers take this live one for dead (DECISIONS G47). Absent
   * (SQLite): the renewal uses `db`.
   */
  readonly leaseDb?: Kysely<Database>;
  /** The cross-server notification bus, where the dialect has one (PostgreSQL). */
  notifyBus?(): NotifyBus;
  /**
   * Where logs are partitioned by day (PostgreSQL): creates the partitions ahead of `now`
   * and, with `dropBefore` (an ISO time), drops every whole day before it. Returns the
   * partitions created and dropped (with the rows each held).
   */
  maintainPartitions?(now: Date, dropBefore: string | null): Promise<{ created: string[]; dropped: { name: string; rows: number }[] }>;
  /**
   * Runs `fn` unless another process on the database is running the job of the same
   * `name` (PostgreSQL: a session advisory lock held on its own connection while `fn`
   * runs); resolves undefined when it was skipped. Without it (SQLite) the caller runs `fn`.
   */
  exclusiveJob?<T>(name: string, fn: () => Promise<T>): Promise<T | undefined>;
  /**
   * The database server's clock (ms since the epoch), read on `on` (default: the pool),
   * where the database runs on a machine of its own (PostgreSQL: clock_timestamp()).
   * Servers on one database keep their leases by it, not by their own clocks (DECISIONS
   * G20). Without it (SQLite: the processes on one file share one machine's clock) the
   * local clock is the database's.
   */
  clockMs?(on?: Kysely<Database>): Promise<number>;
  /**
   * Runs `fn` holding the database-wide migration lock, so that several server processes
   * starting on one database migrate it once. `fn` gets a kysely instance bound to the
   * locked connection and must use only that one. `onWait` is told who holds the lock when
   * it is taken (PostgreSQL: another process migrating or starting, or a session left
   * holding it), before this waits for it.
   */
  withMigrationLock<T>(fn: (db: Kysely<Database>) => Promise<T>, onWait?: (holder: string) => void): Promise<T>;
  /**
   * SQLite: the database file's path, and a consistent copy of the open database written to
   * `to` (SQLite's backup API, through this process's connection): what rescues the data when
   * the file was deleted or replaced under the running server (DECISIONS H20).
   */
  file?: string;
  rescueCopy?(to: string): Promise<void>;
  /**
   * Bytes the database's live data occupies (free pages not counted), for the size cap of
   * the retention purge.
   */
  usedBytes(): Promise<number>;
  /** Whether released pages go back to the file system (auto_vacuum INCREMENTAL). */
  fileShrinks(): boolean;
  /**
   * Hands up to maxPages free pages back to the file system (the file shrinks at the next
   * WAL checkpoint); returns the bytes released, 0 when there were none or the database
   * was created with auto_vacuum NONE.
   */
  releaseFreePages(maxPages: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * Rows whose change one operation (an admin request) had committed, as its database's driver
 * counts them: a statement outside a transaction that changed rows, and a transaction's rows once
 * its COMMIT succeeded (rows of a transaction rolled back are not counted). Only the SQLite
 * dialect counts (./dialect.ts): there a request that meets another process's lock after an
 * earlier write of its own committed must not say "nothing was done" (DECISIONS J19); with
 * PostgreSQL `changes` stays 0.
 */
export class CommitTally {
  changes = 0;
}

/** The tally of each query made through a `tallied` kysely instance (by its queryId object). */
const tallies = new WeakMap<object, CommitTally>();

/** `db`, with each query it makes counted in `tally` (see CommitTally). */
export function tallied(db: Kysely<Database>, tally: CommitTally): Kysely<Database> {
  return db.withPlugin({
    transformQuery({ node, queryId }) {
      tallies.set(queryId, tally);
      return node;
    },
    transformResult: ({ result }) => Promise.resolve(result),
  });
}

/** The dialect's side: the tally a query (its CompiledQuery.queryId) counts for, if any. */
export function tallyOf(queryId: object): CommitTally | undefined {
  return tallies.get(queryId);
}

/**
 * Now, by the database's clock where it has one of its own (PostgreSQL), else this machine's:
 * for what an admin command run on another machine writes and compares with what servers
 * wrote (an enrollment token's expiry, DECISIONS G39).
 */
export async function databaseNow(storage: Pick<Storage, 'clockMs'>): Promise<Date> {
  return new Date(storage.clockMs === undefined ? Date.now() : await storage.clockMs());
}

/** The host row does not exist (anymore). Maps to -32004 UnknownHost on the wire. */
export class UnknownHostError extends Error {
  readonly code = 'UNKNOWN_HOST' as const;
  constructor(readonly host_id: string) {
    super(`unknown host_id ${host_id}`);
    this.name = 'UnknownHostError';
  }
}

/** Another session (a newer hello, on any server) holds the host now: nothing was stored. */
export class SessionSupersededError extends Error {
  readonly code = 'SESSION_SUPERSEDED' as const;
  constructor(readonly host_id: string) {
    super(`host ${host_id} is held by a newer session`);
    this.name = 'SessionSupersededError';
  }
}

/**
 * The ingest writer (a writer thread) stopped before it answered: the commit may or may
 * not have happened. Maps to -32007 on the wire; the resend settles it (stored seqs are
 * dropped as duplicates and acked).
 */
export class WriterStoppedError extends Error {
  readonly code = 'INGEST_WRITER_STOPPED' as const;
  constructor(message: string) {
    super(message);
    this.name = 'WriterStoppedError';
  }
}

/** An admin operation that a Revoked host cannot take (rotate, decommission, config). */
export class HostRevokedError extends Error {
  readonly code = 'HOST_REVOKED' as const;
  constructor(readonly host_id: string) {
    super(`host ${host_id} is revoked`);
    this.name = 'HostRevokedError';
  }
}
