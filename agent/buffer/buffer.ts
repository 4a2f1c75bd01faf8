// The agent's durable buffer, `buffer.db` (seed 7, DESIGN.md 5.4 and 5.9).
//
// Every entry a source reads is committed here, with its seq, before it counts as
// read: the source's position is written in the same transaction as the entries read
// up to it, so after a crash either both are there or neither is, and the source
// re-reads exactly what was not stored. The sender reads batches from here and deletes
// rows only when the server acks them.
//
// Durability: WAL with synchronous=FULL. WAL+NORMAL survives a process crash (the
// commit is in the OS page cache) but not a power loss or kernel panic: the last
// transactions before the next checkpoint can roll back. That would put next_seq
// back to a value the server may already have accepted, so the same seqs would be
// assigned again to different entries (the seed forbids reusing a seq, and the server
// silently drops seq <= accepted_seq), and a source position could move backwards
// while its entries had already been acked. FULL fsyncs the WAL on every commit, so a
// committed append is on disk before it returns. The cost is one fdatasync (~300 µs
// here, MEASURED.md) per transaction, not per entry: appends are grouped (a source
// commits everything one read produced in one call), and measured throughput stays
// well above 100k entries/s for batches of a few hundred entries.
// The agent runs the same guarantee without waiting (BufferOptions.syncInBackground,
// DECISIONS P16): commits are NORMAL, the WAL is fdatasynced on libuv's thread pool, and
// readBatch stops at the last seq that fsync covered. A power loss can then take only a
// tail of WAL frames no one has seen (WAL recovery keeps a prefix: checksums chain the
// frames), with the source positions committed in the same transactions: the source reads
// those lines again, and the seqs they had were never sent.
//
// Layout (schema 2; DECISIONS P21, runs.ts):
//   entries(seq INTEGER PRIMARY KEY, bytes, json, n)  — a run of n entries with the seqs
//     seq .. seq + n - 1 that one append stored together (at most RUN_MAX_BYTES of text a
//     row): json is their complete LogBatchEntry texts including "seq", joined by "\n", each
//     ready to splice into a logs.push frame (see frame.ts); bytes is their summed UTF-8
//     length. One row per append instead of one per entry halves what SQLite does per entry.
//     A schema 1 file (one entry a row) is a file of runs of one: open() adds the column.
//   meta(single row): next_seq (first seq never assigned; starts at 1), acked_seq
//     (highest seq the server acked; 0 = none), queue_depth and buffer_bytes (entries above
//     acked_seq and their summed bytes, maintained in the same transactions), eviction counters.
//   source_positions(source PRIMARY KEY, position JSON, updated_at).
//
// Invariants (every one maintained inside a single transaction):
//   - the rows' seqs above acked_seq are exactly the seqs in (acked_seq, next_seq) minus
//     evicted ones; no row lies wholly at or below acked_seq (an ack deletes a row once all
//     of it is acked, so at most one row, the oldest, straddles acked_seq);
//   - next_seq and acked_seq never decrease; next_seq > acked_seq;
//   - queue_depth/buffer_bytes count the entries above acked_seq and their bytes.
// Caps count entry bytes (the payload), not the file size; SQLite's page overhead
// adds roughly 10-30% on disk.

import { chmodSync, closeSync, existsSync, fdatasync, fdatasyncSync, openSync, rmSync, statSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { appendDurably, writeDurably } from './durable.js';
import type BetterSqlite3 from 'better-sqlite3';
import { LIMITS } from '@cortex/agent-protocol';
import { nestedDeeperThan, storableText } from '@cortex/agent-protocol/runtime';
import { BufferStorageError, DamagedRowError, toBufferError } from './errors.js';
import { SerializedEntry, type BufferEntry, type JsonValue, type NewLogEntry } from './entry.js';
import { Database } from '../cjs.js';
import { RUN_SEPARATOR, partsBytes, splitRun } from './runs.js';

export const DEFAULT_SOFT_CAP_BYTES = 256 * 1024 * 1024;
export const DEFAULT_HARD_CAP_BYTES = 512 * 1024 * 1024;
/**
 * Text of the newest committed rows kept in memory for readBatch (the rest is read from SQLite).
 * 16 MiB since 2026-12-03 (DECISIONS P10; 4 MiB before): a burst the sender is behind on is
 * read from memory (~0.8 µs per entry against ~2 µs from SQLite). Held only while unacked.
 */
export const TAIL_MAX_BYTES = 16 * 1024 * 1024;
/**
 * Batch byte budget (entries and their commas) keeping a logs.push frame under
 * agent_frame_target_bytes (128 KiB, MEASURED.md): the rest of the frame (jsonrpc, id,
 * method, seq_start: under 130 bytes with 16-digit numbers) fits in the 1 KiB left.
 * 100 KiB until 2026-12-03 (DECISIONS P8): ~25% more entries per frame, fewer acks.
 */
export const DEFAULT_BATCH_MAX_BYTES = LIMITS.agent_frame_target_bytes - 1024;
/** 2 since 2026-12-07 (DECISIONS P21): rows are runs of entries (the column `n`); 1 before. */
const SCHEMA_VERSION = 2;
const MIB = 1024 * 1024;
/**
 * Page size of a new buffer file (SQLite's default is 4 KiB; an existing file keeps its own).
 * An append's cost follows the pages it fills more than the bytes (DECISIONS P14): with 16 KiB
 * pages, 1000-entry appends take 20-35 % less CPU, and entries of ~390 B (RFC 5424 lines
 * with structured data) cost 1.2-1.3 × entries of ~250 B instead of 1.5-1.6 ×.
 */
export const BUFFER_PAGE_SIZE = 16384;
/** WAL size between automatic checkpoints (SQLite's default: 1000 pages of 4 KiB), and while space is short. */
const WAL_CHECKPOINT_BYTES = 4 * MIB;
const WAL_CHECKPOINT_BYTES_LOW = 256 * 1024;
/**
 * Live data up to which open() rebuilds a file made with another page size (an agent before
 * P14 made 4 KiB pages): VACUUM writes the live pages once more, well under a second here.
 */
const PAGE_SIZE_REBUILD_MAX_BYTES = 16 * MIB;
/**
 * Suffix of the file (`buffer.db.rebuild`) that exists while a page size rebuild has the buffer
 * out of WAL mode (adoptPageSize). A start that finds no -wal but this file knows the WAL went
 * away in a full checkpoint, not in a crash that lost commits (heal.ts).
 */
export const PAGE_SIZE_REBUILD_MARK = '.rebuild';
/** Free pages from which a drained buffer gives its space back (DurableBuffer.reclaim). */
export const RECLAIM_MIN_FREE_BYTES = 64 * MIB;
/** Live data up to which reclaim rebuilds the file. */
export const RECLAIM_MAX_LIVE_BYTES = 16 * MIB;
/** Default size of the reserve file (BufferOptions.reserveBytes). */
export const DEFAULT_RESERVE_BYTES = MIB;
/** Rows deleted per transaction when an ack has to be applied in steps (full disk). */
const ACK_STEP_ROWS = 256;
/**
 * Text of one run (one row of `entries`) at most, in bytes: an append is stored as runs of up
 * to this much (a single larger entry is a run of its own). About one logs.push batch, so that
 * a batch read back from SQLite reads one or two rows (DECISIONS P21).
 */
export const RUN_MAX_BYTES = 128 * 1024;
/** Damaged rows one buffer call sets aside before it gives up and throws (DECISIONS P22). */
export const MAX_DAMAGED_ROWS_A_CALL = 64;

/**
 * Beside buffer.db: the texts of damaged rows the buffer set aside (DECISIONS P22), one JSON
 * line each ({"at","seq","n","bytes","acked_seq","json"}), appended and fsynced before the row
 * is deleted. Kept for the operator; the agent never reads it.
 */
export const DAMAGED_ROWS_SUFFIX = '.damaged-rows';

/** A damaged row set aside (DurableBuffer.setDamagedRowListener). */
export interface DamagedRowReport {
  /** The row's seqs. */
  rowSeq: number;
  rowEnd: number;
  /** The row's seqs above acked_seq, which will never be sent (the server sees an eviction gap); null when none was. */
  lostFrom: number | null;
  lostTo: number | null;
  /** Where its text was kept. */
  file: string;
  /** What was wrong with it. */
  reason: string;
}

export interface BufferOptions {
  /** At or above this many entry bytes, `pressure` is true: the sender flushes eagerly. Default 256 MiB. */
  softCapBytes?: number;
  /**
   * Text of the newest committed rows kept in memory so that the sender reads them without a
   * query (default TAIL_MAX_BYTES). Held only while rows are unacked: an idle agent holds none.
   */
  tailMaxBytes?: number;
  /** Above this many entry bytes, the oldest entries are dropped in the append that crossed it. Default 512 MiB. */
  hardCapBytes?: number;
  /** SQLite synchronous level; FULL (default) is what the durability argument above needs. */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * The fsync off the caller's thread (DECISIONS P16; the agent sets it): commits run with
   * synchronous=NORMAL and return once SQLite has written the WAL, and an fdatasync of the
   * WAL then runs on libuv's thread pool (one at a time; appends made meanwhile share the
   * next). `syncedSeq` is the last seq known to be on disk, and readBatch returns nothing
   * past it, so an entry reaches the server only once it survives a power loss: a lost
   * tail of the WAL can only take entries (and, in the same transactions, the positions of
   * the sources they were read from) that no one has seen. `synchronous` is ignored.
   */
  syncInBackground?: boolean;
  /**
   * Acks commit with synchronous=NORMAL (default true): losing an ack's commit in a
   * power failure only makes acked_seq go back, so the entries are resent and the server
   * drops them as duplicates — nothing is lost or reused. WAL frames are ordered, so the
   * next FULL commit (any append) makes earlier NORMAL commits durable too. An ack that
   * would move next_seq (upToSeq >= next_seq) still commits FULL.
   */
  relaxedAcks?: boolean;
  /**
   * SQLite max_page_count for this connection: the file cannot grow past it, and a
   * write that needs more pages fails exactly like a full disk (SQLITE_FULL). Tests use
   * it to simulate ENOSPC; see also setMaxPageCount().
   */
  maxPageCount?: number;
  /** Test hooks, called inside transactions; a throw rolls the whole transaction back. */
  hooks?: BufferTestHooks;
  /**
   * Low-water mark of free disk space (DECISIONS H4): an append that would leave less than
   * this free on the buffer's filesystem is refused as disk_full (sources pause) before the
   * disk is actually full, so acks and deletes still find room. Default: 5% of the
   * filesystem, at least 1 MiB and at most 64 MiB. 0 turns the check off.
   */
  minFreeBytes?: number;
  /**
   * Size of the reserve file `<buffer>.reserve`, kept while space allows and deleted when an
   * ack, a position write or a checkpoint finds the disk full (another program filled it),
   * so that write succeeds; recreated once space is back. Default 1 MiB; 0: no reserve.
   */
  reserveBytes?: number;
  /** Free and total bytes of the buffer's filesystem (test hook; default statfs of its folder). */
  diskSpace?: () => { free: number; total: number };
  /**
   * Called before an append would assign seqs at or beyond the last reserved bound, with the
   * next_seq after it; returns the new bound. Keeps a seq reservation outside buffer.db
   * (agent/buffer/heal.ts, DECISIONS H5). Its throw fails the append (nothing stored).
   */
  onSeqReserve?: (upTo: number) => number;
}

/** Told when background syncs (BufferOptions.syncInBackground) complete or fail. */
export interface SyncListener {
  /** syncedSeq moved up: more entries may be sent. */
  synced(syncedSeq: number): void;
  /** An fdatasync failed: the buffer went back to synchronous=FULL commits (nothing is sent past syncedSeq until one succeeds). */
  failed(err: Error): void;
}

export interface BufferTestHooks {
  /** Called after all writes of an append/ack/applyAccepted, just before COMMIT. */
  beforeCommit?: (operation: 'append' | 'ack' | 'applyAccepted' | 'setSourcePosition') => void;
  /** Replaces the background fdatasync of the WAL (syncInBackground): hold it, fail it. */
  syncWal?: (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;
}

/** A source's resume point (file offset + identity, journald cursor, ...), stored as JSON. */
export interface SourcePositionUpdate {
  source: string;
  position: JsonValue;
}

export interface SourcePositionRecord extends SourcePositionUpdate {
  /** RFC 3339 UTC time of the transaction that stored it. */
  updatedAt: string;
}

export interface EvictionReport {
  /** Entries dropped by this operation (oldest first). */
  entries: number;
  bytes: number;
  fromSeq: number;
  toSeq: number;
}

export interface AppendResult {
  /** First seq assigned; when count is 0, firstSeq = lastSeq + 1 = next_seq. */
  firstSeq: number;
  lastSeq: number;
  count: number;
  /** Set when this append crossed the hard cap and dropped the oldest entries. */
  evicted: EvictionReport | null;
  /**
   * What this append changed so that the entries could be stored and sent at all
   * (DECISIONS H2, H3): entries whose metadata broke a contract cap (replaced by the
   * marker {"cortex_metadata_dropped": kind}), and lone surrogates / NUL replaced by U+FFFD.
   * Absent when nothing was changed.
   */
  degraded?: { metadata: number; chars: number };
}

export interface BufferBatch {
  /** seq of entries[0]; entries are contiguous: entries[i] has seq seqStart + i. */
  seqStart: number;
  seqEnd: number;
  /** Each element is one complete LogBatchEntry JSON text (with its seq). */
  entries: string[];
  /** Sum of the entries' UTF-8 byte lengths (without separators). */
  bytes: number;
}

export interface AckResult {
  /** acked_seq after the operation (never lower than before). */
  ackedSeq: number;
  /** Rows deleted by this operation. */
  deleted: number;
  deletedBytes: number;
  /**
   * True when next_seq was <= the acked/accepted seq and jumped to it + 1: the buffer
   * was lost or restored from an old copy. The caller logs a warning.
   */
  jumped: boolean;
  /** next_seq before and after (they differ only when jumped). */
  previousNextSeq: number;
  nextSeq: number;
}

export interface BufferStats {
  /** The next seq to assign. */
  nextSeq: number;
  /** Highest seq acked by the server (0 = none). */
  ackedSeq: number;
  /** Rows waiting to be acked. */
  queueDepth: number;
  /** Summed entry bytes of those rows. */
  bufferBytes: number;
  /** Lowest seq still buffered, null when empty. */
  oldestSeq: number | null;
  /** next_seq - 1 - acked_seq: seqs assigned but not acked (includes evicted ones). */
  pushLagSeq: number;
  /** bufferBytes >= softCapBytes: flush eagerly. */
  pressure: boolean;
  softCapBytes: number;
  hardCapBytes: number;
  /** Cumulative entries dropped at the hard cap (buffer_evicted_entries). */
  evictedEntries: number;
  /** Oldest / newest seq dropped by the most recent eviction (buffer_evicted_oldest_seq); null if never. */
  evictedOldestSeq: number | null;
  evictedNewestSeq: number | null;
}

interface MetaRow {
  schema_version: number;
  next_seq: number;
  acked_seq: number;
  queue_depth: number;
  buffer_bytes: number;
  evicted_entries: number;
  evicted_oldest_seq: number | null;
  evicted_newest_seq: number | null;
}

const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS entries (
  seq   INTEGER PRIMARY KEY,
  bytes INTEGER NOT NULL,
  json  TEXT    NOT NULL,
  n     INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS meta (
  id                 INTEGER PRIMARY KEY CHECK (id = 1),
  schema_version     INTEGER NOT NULL,
  next_seq           INTEGER NOT NULL,
  acked_seq          INTEGER NOT NULL,
  queue_depth        INTEGER NOT NULL,
  buffer_bytes       INTEGER NOT NULL,
  evicted_entries    INTEGER NOT NULL,
  evicted_oldest_seq INTEGER,
  evicted_newest_seq INTEGER
);
CREATE TABLE IF NOT EXISTS source_positions (
  source     TEXT PRIMARY KEY,
  position   TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
INSERT OR IGNORE INTO meta VALUES (1, ${SCHEMA_VERSION}, 1, 0, 0, 0, 0, NULL, NULL);
`;

/** The tables of a SQLite file that has some but no `meta` (not a buffer: another program's), listed; null otherwise. */
export function foreignTables(db: BetterSqlite3.Database): string | null {
  const names = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").all().map((r) => r.name);
  if (names.length === 0 || names.includes('meta')) return null;
  return `${names.slice(0, 5).join(', ')}${names.length > 5 ? `, … (${names.length} in all)` : ''}`;
}

const META_COLUMNS =
  'schema_version, next_seq, acked_seq, queue_depth, buffer_bytes, evicted_entries, evicted_oldest_seq, evicted_newest_seq';

export class DurableBuffer {
  readonly path: string;
  readonly softCapBytes: number;
  private readonly tailMaxBytes: number;
  readonly hardCapBytes: number;

  private readonly db: BetterSqlite3.Database;
  private readonly hooks: BufferTestHooks | undefined;
  private readonly relaxAcks: boolean;
  /** BufferOptions.syncInBackground: readBatch stops at `synced`. */
  private readonly capped: boolean;
  /** BufferOptions.syncInBackground, until an fdatasync fails (then FULL commits for good). */
  private background: boolean;
  /** Seqs up to this one are on disk (with syncInBackground; else next_seq - 1 after every commit). */
  private synced = 0;
  private walFd: number | null = null;
  private syncing = false;
  private syncAgain = false;
  private syncRetry: NodeJS.Timeout | null = null;
  private syncListener: SyncListener | null = null;
  private damagedRowListener: ((report: DamagedRowReport) => void) | null = null;
  private closed = false;
  private readonly diskSpace: () => { free: number; total: number };
  private readonly minFreeOption: number | undefined;
  private readonly reserveBytes: number;
  private readonly reservePath: string;
  private reserveHeld = false;
  private readonly onSeqReserve: ((upTo: number) => number) | undefined;
  private seqReservedUpTo = 0;
  /** True while space is short: the WAL is checkpointed every 256 KiB (see shrinkWal). */
  private smallWal = false;
  /** The file's page size (BUFFER_PAGE_SIZE for a file this version created). */
  private readonly pageSize: number;
  private lastSpace: { at: number; free: number; total: number } | undefined;
  // In-memory mirror of the meta row; assigned only after a transaction committed.
  private meta: MetaRow;
  /**
   * The newest committed rows, as stored (seqs tailFirst, tailFirst + 1, ... contiguous), so
   * that readBatch serves what was just appended without a query: updated only after a
   * commit, trimmed from the front by every delete (ack, replay, eviction), at most
   * TAIL_MAX_BYTES of text; past that budget it keeps its older rows and is closed (see
   * addTail), so it is then not the newest. A read outside it goes to SQLite.
   */
  private tailFirst = 0;
  private tailHead = 0;
  private tailJson: string[] = [];
  private tailSize: number[] = [];
  private tailBytes = 0;
  /** The tail reached its budget and appends skip it until acks have emptied it (addTail). */
  private tailClosed = false;
  /** Entries readBatch returned from the in-memory tail and from SQLite, since open (bench figures). */
  readonly readCounts = { tail: 0, sqlite: 0 };

  private readonly insertRun: BetterSqlite3.Statement<[number, number, string, number]>;
  /** Rows from the one holding a seq (or the first after it) on, oldest first: [seq, n, bytes, json]. Bound (seq × 4, limit). */
  private readonly selectRunsFrom: BetterSqlite3.Statement<[number, number, number, number, number], [number, number, number, string]>;
  /** The last run split (readBatch's next batch usually continues in it): its seq, n and texts; ascii: each text's length is its UTF-8 size. */
  private lastRun: { seq: number; n: number; parts: string[]; ascii: boolean } | null = null;
  /** Average text bytes of the rows readBatch read (sizes the next query's LIMIT). */
  private readAvgRunBytes = 64 * 1024;
  private readonly selectOldest: BetterSqlite3.Statement<[], { seq: number; n: number; bytes: number; json: string }>;
  private readonly selectMinSeq: BetterSqlite3.Statement<[], { seq: number | null }>;
  /** Rows with an entry in (acked, upTo], oldest first (without their text). Bound (upTo, acked). */
  private readonly selectOverlap: BetterSqlite3.Statement<[number, number], { seq: number; n: number; bytes: number }>;
  private readonly selectRowJson: BetterSqlite3.Statement<[number], { json: string }>;
  private readonly selectRow: BetterSqlite3.Statement<[number], { n: number; bytes: number; json: string }>;
  private readonly sumRowBytes: BetterSqlite3.Statement<[], { b: number }>;
  /** Deletes the rows wholly at or below a seq (bound twice). */
  private readonly deleteUpTo: BetterSqlite3.Statement<[number, number]>;
  private readonly deleteRow: BetterSqlite3.Statement<[number]>;
  private readonly selectMeta: BetterSqlite3.Statement<[], MetaRow>;
  private readonly updateMeta: BetterSqlite3.Statement<[number, number, number, number, number, number | null, number | null]>;
  private readonly upsertPosition: BetterSqlite3.Statement<[string, string, string]>;
  private readonly selectPosition: BetterSqlite3.Statement<[string], { position: string }>;
  private readonly selectPositions: BetterSqlite3.Statement<[], { source: string; position: string; updated_at: string }>;
  private readonly deletePosition: BetterSqlite3.Statement<[string]>;

  private readonly appendTx: (entries: readonly BufferEntry[], position: SourcePositionUpdate | undefined) => {
    result: AppendResult;
    meta: MetaRow;
    texts: string[];
    sizes: number[];
  };
  private readonly advanceTx: (target: number, operation: 'ack' | 'applyAccepted') => { result: AckResult; meta: MetaRow };
  private readonly positionTx: (position: SourcePositionUpdate) => void;

  private constructor(path: string, db: BetterSqlite3.Database, options: BufferOptions) {
    this.path = path;
    this.db = db;
    this.hooks = options.hooks;
    this.capped = this.background = options.syncInBackground === true;
    this.relaxAcks = !this.background && options.relaxedAcks !== false && options.synchronous !== 'NORMAL';
    this.softCapBytes = options.softCapBytes ?? DEFAULT_SOFT_CAP_BYTES;
    this.tailMaxBytes = options.tailMaxBytes ?? TAIL_MAX_BYTES;
    this.hardCapBytes = options.hardCapBytes ?? DEFAULT_HARD_CAP_BYTES;
    this.diskSpace = diskSpaceOf(path, options);
    this.minFreeOption = options.minFreeBytes;
    this.reserveBytes = Math.max(0, Math.floor(options.reserveBytes ?? DEFAULT_RESERVE_BYTES));
    this.reservePath = `${path}.reserve`;
    this.onSeqReserve = options.onSeqReserve;
    this.pageSize = Number(db.pragma('page_size', { simple: true }));
    db.pragma(`wal_autocheckpoint = ${this.walCheckpointPages(false)}`);

    this.insertRun = db.prepare('INSERT INTO entries (seq, bytes, json, n) VALUES (?, ?, ?, ?)');
    this.selectRunsFrom = db
      .prepare<[number, number, number, number, number], [number, number, number, string]>(
        // the row with the highest seq at or below the one asked for, when it holds it; else the rows after it
        'SELECT seq, n, bytes, json FROM entries WHERE seq >= COALESCE((SELECT CASE WHEN seq + n > ? THEN seq ELSE ? END FROM entries WHERE seq <= ? ORDER BY seq DESC LIMIT 1), ?) ORDER BY seq LIMIT ?',
      )
      .raw(true);
    this.selectOldest = db.prepare('SELECT seq, n, bytes, json FROM entries ORDER BY seq');
    this.selectMinSeq = db.prepare('SELECT MIN(seq) AS seq FROM entries');
    this.selectOverlap = db.prepare('SELECT seq, n, bytes FROM entries WHERE seq <= ? AND seq + n - 1 > ? ORDER BY seq');
    this.selectRowJson = db.prepare('SELECT json FROM entries WHERE seq = ?');
    this.selectRow = db.prepare('SELECT n, bytes, json FROM entries WHERE seq = ?');
    this.sumRowBytes = db.prepare('SELECT COALESCE(SUM(bytes), 0) AS b FROM entries');
    this.deleteUpTo = db.prepare('DELETE FROM entries WHERE seq <= ? AND seq + n - 1 <= ?');
    this.deleteRow = db.prepare('DELETE FROM entries WHERE seq = ?');
    this.selectMeta = db.prepare(`SELECT ${META_COLUMNS} FROM meta WHERE id = 1`);
    this.updateMeta = db.prepare(
      'UPDATE meta SET next_seq = ?, acked_seq = ?, queue_depth = ?, buffer_bytes = ?, evicted_entries = ?, evicted_oldest_seq = ?, evicted_newest_seq = ? WHERE id = 1',
    );
    this.upsertPosition = db.prepare(
      'INSERT INTO source_positions (source, position, updated_at) VALUES (?, ?, ?) ON CONFLICT (source) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at',
    );
    this.selectPosition = db.prepare('SELECT position FROM source_positions WHERE source = ?');
    this.selectPositions = db.prepare('SELECT source, position, updated_at FROM source_positions ORDER BY source');
    this.deletePosition = db.prepare('DELETE FROM source_positions WHERE source = ?');

    this.meta = this.readMeta();
    if (this.background) this.openWalForSync();
    this.synced = this.meta.next_seq - 1;
    // BEGIN IMMEDIATE: take the write lock up front, so a reader in another process
    // (`status`) can never turn a write into SQLITE_BUSY halfway through.
    this.appendTx = db.transaction((entries: readonly BufferEntry[], position: SourcePositionUpdate | undefined) =>
      this.appendInTx(entries, position),
    ).immediate;
    this.advanceTx = db.transaction((target: number, operation: 'ack' | 'applyAccepted') => this.advanceInTx(target, operation)).immediate;
    this.positionTx = db.transaction((position: SourcePositionUpdate) => {
      this.upsertPosition.run(position.source, JSON.stringify(position.position), new Date().toISOString());
      this.hooks?.beforeCommit?.('setSourcePosition');
    }).immediate;
  }

  /** Opens (creating if needed) the buffer at `path`. Throws BufferStorageError. */
  static open(path: string, options: BufferOptions = {}): DurableBuffer {
    try {
      return DurableBuffer.openOnce(path, options);
    } catch (err) {
      // Started on a full disk (another program filled it while the agent was stopped):
      // opening needs a little room (the WAL index, -shm), which is what the reserve is for.
      // It is taken again once space is back (keepReserve). DECISIONS H12.
      if (!(err instanceof BufferStorageError && err.kind === 'disk_full') || !existsSync(`${path}.reserve`)) throw err;
      try {
        unlinkSync(`${path}.reserve`);
      } catch {
        throw err;
      }
      return DurableBuffer.openOnce(path, options);
    }
  }

  private static openOnce(path: string, options: BufferOptions): DurableBuffer {
    const soft = options.softCapBytes ?? DEFAULT_SOFT_CAP_BYTES;
    const hard = options.hardCapBytes ?? DEFAULT_HARD_CAP_BYTES;
    if (!(hard > 0) || !(soft > 0) || soft > hard) {
      throw new RangeError('buffer caps must be positive with softCapBytes <= hardCapBytes');
    }
    let db: BetterSqlite3.Database | undefined;
    try {
      // A new buffer is private from its first byte: SQLite would create it with the umask's
      // mode (0644 after enroll until run tightened it); -wal and -shm take the file's (H49).
      if (path !== ':memory:' && !existsSync(path)) closeSync(openSync(path, 'a', 0o600));
      db = new Database(path);
      // Another program's SQLite file put at this path (tables, none of them the buffer's meta)
      // is not made into a buffer (its tables were written into it): it is refused as not a
      // buffer ('corrupt'), so the agent moves it aside, kept, as it does a damaged file. Read
      // before anything is written; a file without tables (a new one) is initialised below.
      const foreign = foreignTables(db);
      if (foreign !== null) {
        throw new BufferStorageError('corrupt', 'open', path, undefined, new Error(`not a buffer database: it holds tables of another application (${foreign}) and not the buffer's meta table`));
      }
      // Takes effect only when this creates the file (before its first page is written).
      db.pragma(`page_size = ${BUFFER_PAGE_SIZE}`);
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new BufferStorageError('other', 'open', path, undefined, new Error(`journal_mode is ${String(mode)}, WAL required`));
      db.pragma(`synchronous = ${options.synchronous === 'NORMAL' || options.syncInBackground === true ? 'NORMAL' : 'FULL'}`);
      db.pragma('busy_timeout = 5000');
      // After a checkpoint the WAL is cut back to 4 MiB: a WAL that once grew large does not
      // keep that disk space (DECISIONS H4).
      db.pragma('journal_size_limit = 4194304');
      if (options.maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.floor(options.maxPageCount)}`);
      db.exec(`BEGIN IMMEDIATE; ${SCHEMA_SQL} COMMIT;`);
      let version = db.prepare<[], { v: number }>('SELECT schema_version AS v FROM meta WHERE id = 1').get()?.v;
      if (version === 1) {
        // A buffer of an agent before 2026-12-07: its rows are runs of one entry. Adding the
        // column with its default rewrites no row (SQLite stores the default in the schema).
        db.exec(`BEGIN IMMEDIATE; ALTER TABLE entries ADD COLUMN n INTEGER NOT NULL DEFAULT 1; UPDATE meta SET schema_version = ${SCHEMA_VERSION} WHERE id = 1; COMMIT;`);
        version = SCHEMA_VERSION;
      }
      if (version !== SCHEMA_VERSION) {
        throw new BufferStorageError('schema', 'open', path, undefined, new Error(`schema_version ${String(version)}`));
      }
      adoptPageSize(db, path, options);
      const buffer = new DurableBuffer(path, db, options);
      buffer.keepReserve();
      return buffer;
    } catch (err) {
      try {
        if (db?.inTransaction) db.exec('ROLLBACK');
        db?.close();
      } catch {
        // the original error is the one to report
      }
      const typed = toBufferError(err, 'open', path);
      // better-sqlite3 reports some open failures (missing folder) as a plain TypeError
      throw typed instanceof BufferStorageError ? typed : new BufferStorageError('cannot_open', 'open', path, undefined, typed);
    }
  }

  /**
   * Commits `entries` with seqs next_seq, next_seq+1, ... and, in the same
   * transaction, the position of the source they were read from. One transaction, one
   * fsync. When the append takes the buffer over the hard cap, the oldest entries are
   * dropped in the same transaction (see AppendResult.evicted). An empty `entries` with
   * a position just moves the position. Throws BufferStorageError (nothing stored).
   */
  append(entries: readonly BufferEntry[], position?: SourcePositionUpdate): AppendResult {
    return this.repairing(() => this.appendOnce(entries, position));
  }

  private appendOnce(entries: readonly BufferEntry[], position?: SourcePositionUpdate): AppendResult {
    if (entries.length === 0 && position === undefined) {
      const next = this.meta.next_seq;
      return { firstSeq: next, lastSeq: next - 1, count: 0, evicted: null };
    }
    if (entries.length > 0) this.assertSpace('append', estimateBytes(entries));
    const upTo = this.meta.next_seq + entries.length;
    if (this.onSeqReserve !== undefined && upTo > this.seqReservedUpTo) {
      try {
        this.seqReservedUpTo = this.onSeqReserve(upTo);
      } catch (err) {
        const typed = toBufferError(err, 'append', this.path);
        throw typed instanceof BufferStorageError ? typed : new BufferStorageError('other', 'append', this.path, undefined, err);
      }
    }
    const { result, meta, texts, sizes } = this.write('append', () => this.appendTx(entries, position));
    this.meta = meta;
    this.addTail(result.firstSeq, texts, sizes);
    // the eviction deleted the oldest rows (possibly some of this append's)
    if (result.evicted) this.trimTail(result.evicted.toSeq);
    if (this.background) this.requestSync();
    else this.synced = meta.next_seq - 1; // FULL: the commit fsynced the WAL, every earlier frame with it
    return result;
  }

  /**
   * Throws BufferStorageError disk_full when an append of about `bytes` would leave less
   * than the low-water mark free (see BufferOptions.minFreeBytes). The agent's storage probe
   * calls it (`probe`: a fresh reading, and nothing counted as used) with the size of the
   * write that was refused, to decide whether sources may resume.
   */
  assertSpace(operation = 'append', bytes = 0, probe = false): void {
    let space = this.space(bytes === 0 || probe);
    if (space === undefined) return;
    const floor = this.minFreeBytes(space.total);
    if (floor === 0) return;
    // Near the mark the WAL is checkpointed and cut back first, and kept small from then on
    // (256 KiB), so the WAL and a checkpoint into the main file (which reuses the pages of
    // acked rows) cannot take much more than the entries themselves.
    // The entries go into the WAL, and a checkpoint copies them into the main file, which
    // grows by what the free pages of acked rows cannot hold.
    let need = 2 * bytes;
    if (space.free - need < 2 * floor) {
      this.shrinkWal(true);
      space = this.space(true) ?? space;
      need = bytes + Math.max(0, bytes - this.freePageBytes());
    } else if (this.smallWal && space.free > 8 * floor) this.shrinkWal(false);
    if (space.free - need < floor) {
      const why =
        space.free < floor
          ? `${space.free} bytes free on the buffer's filesystem, below the low-water mark of ${floor} bytes`
          : `${space.free} bytes free on the buffer's filesystem: this ${operation} needs about ${need} of them and the low-water mark keeps ${floor} free`;
      throw new BufferStorageError('disk_full', operation, this.path, 'LOW_DISK_SPACE', new Error(why), bytes);
    }
    // The cached figure ages: count what this append will use against it.
    if (!probe && this.lastSpace !== undefined) this.lastSpace.free -= need;
  }

  /** Free space, the low-water mark, and whether the reserve file is held. */
  diskStatus(): { freeBytes: number | null; minFreeBytes: number; reserveHeld: boolean } {
    const space = this.space(true);
    return { freeBytes: space?.free ?? null, minFreeBytes: space === undefined ? 0 : this.minFreeBytes(space.total), reserveHeld: this.reserveHeld };
  }

  /**
   * Up to maxEntries contiguous entries starting at the first buffered seq >= fromSeq,
   * stopping before the byte total would exceed maxBytes (at least one entry is always
   * returned) and at the first gap (evicted seqs), since a logs.push batch must be
   * contiguous. null when nothing is buffered at or after fromSeq.
   */
  readBatch(fromSeq: number, maxEntries: number, maxBytes: number = DEFAULT_BATCH_MAX_BYTES): BufferBatch | null {
    return this.repairing(() => this.readBatchOnce(fromSeq, maxEntries, maxBytes));
  }

  private readBatchOnce(fromSeq: number, maxEntries: number, maxBytes: number): BufferBatch | null {
    // Nothing past syncedSeq: an entry not yet on disk is not sent (BufferOptions.syncInBackground).
    const last = this.capped ? this.synced : Number.MAX_SAFE_INTEGER;
    if (fromSeq > last) return null;
    maxEntries = Math.min(maxEntries, last - fromSeq + 1); // a batch is contiguous from a seq >= fromSeq
    if (maxEntries < 1) return null;
    const cached = this.readTail(fromSeq, maxEntries, maxBytes);
    if (cached !== null) {
      this.readCounts.tail += cached.entries.length;
      return cached;
    }
    const entries: string[] = [];
    let seqStart = 0;
    let bytes = 0;
    try {
      // Row by row (a row is a run of entries, runs.ts): the run split last when the batch
      // starts in it, else as many rows a query as the byte budget needs by the rows seen so far.
      // The rule per entry is the tail's: contiguous, at least one, then within the byte budget.
      // entries at or below acked_seq are not buffered, though the oldest row can still hold some
      let next = Math.max(fromSeq, this.meta.acked_seq + 1);
      let rows: [number, number, number, string][] = [];
      let r = 0;
      let more = true;
      outer: for (;;) {
        let run = this.lastRun;
        if (run === null || next < run.seq || next >= run.seq + run.n) {
          if (r >= rows.length) {
            if (!more) break;
            const limit = Math.max(1, Math.min(256, 1 + Math.floor((maxBytes - bytes) / this.readAvgRunBytes)));
            rows = this.selectRunsFrom.all(next, next, next, next, limit);
            r = 0;
            more = rows.length === limit;
            if (rows.length === 0) break;
          }
          const [seq, n, rowBytes, json] = rows[r++]!;
          this.readAvgRunBytes = Math.max(64, Math.round((this.readAvgRunBytes * 3 + rowBytes) / 4));
          run = this.splitRow(seq, n, rowBytes, json);
          if (seq + n <= next) continue; // (the query returns none: a row that ends below the seq asked for)
        }
        const { seq, n, parts, ascii } = run;
        for (let k = Math.max(0, next - seq); k < n; k++) {
          const s = seq + k;
          const count = entries.length;
          if (s > last) break outer; // beyond what is on disk
          const size = ascii ? parts[k]!.length : Buffer.byteLength(parts[k]!, 'utf8');
          if (count === 0) {
            seqStart = s;
          } else if (s !== seqStart + count || bytes + count + size > maxBytes) {
            break outer; // a gap (evicted seqs), or the entry and its separating comma would not fit
          }
          entries.push(parts[k]!);
          bytes += size;
          if (entries.length >= maxEntries) break outer;
        }
        next = seq + n;
      }
    } catch (err) {
      throw toBufferError(err, 'readBatch', this.path);
    }
    if (entries.length === 0) return null;
    this.readCounts.sqlite += entries.length;
    return { seqStart, seqEnd: seqStart + entries.length - 1, entries, bytes };
  }

  /**
   * The server acked everything <= upToSeq: acked_seq = max(acked_seq, upToSeq) and
   * the entries <= it are dropped (a row once all of it is), in one transaction. A stale (lower) ack changes nothing.
   * If upToSeq >= next_seq (should not happen within a session) next_seq jumps as in
   * applyAccepted.
   */
  ack(upToSeq: number): AckResult {
    return this.advance(upToSeq, 'ack');
  }

  /**
   * Replay after hello (seed 7): acked_seq = max(local, acceptedSeq), entries <= it
   * deleted, and if next_seq <= acceptedSeq (buffer lost or restored from an old copy)
   * next_seq jumps to acceptedSeq + 1 with `jumped` set, so no new entry reuses a seq
   * the server would silently drop. Streaming then resumes at readBatch(ackedSeq + 1).
   */
  applyAccepted(acceptedSeq: number): AckResult {
    return this.advance(acceptedSeq, 'applyAccepted');
  }

  /** Stores a source position without entries (e.g. a rotation was followed). */
  setSourcePosition(position: SourcePositionUpdate): void {
    this.write('setSourcePosition', () => this.positionTx(position));
  }

  /** The stored position of `source`, or null. */
  getSourcePosition(source: string): JsonValue | null {
    const row = this.read('getSourcePosition', () => this.selectPosition.get(source));
    return row === undefined ? null : (JSON.parse(row.position) as JsonValue);
  }

  sourcePositions(): SourcePositionRecord[] {
    return this.read('sourcePositions', () => this.selectPositions.all()).map((r) => ({
      source: r.source,
      position: JSON.parse(r.position) as JsonValue,
      updatedAt: r.updated_at,
    }));
  }

  /** Forgets a source (removed from the config). */
  deleteSourcePosition(source: string): void {
    this.write('deleteSourcePosition', () => this.deletePosition.run(source));
  }

  stats(): BufferStats {
    const min = this.meta.queue_depth === 0 ? null : this.read('stats', () => this.selectMinSeq.get()?.seq ?? null);
    return statsFrom(this.meta, min, this.softCapBytes, this.hardCapBytes);
  }

  get nextSeq(): number {
    return this.meta.next_seq;
  }

  /** The last seq on disk: readBatch returns nothing past it (next_seq - 1 unless BufferOptions.syncInBackground). */
  get syncedSeq(): number {
    return this.capped ? this.synced : this.meta.next_seq - 1;
  }

  /** Who hears of a damaged row set aside (one listener; null removes it). */
  setDamagedRowListener(listener: ((report: DamagedRowReport) => void) | null): void {
    this.damagedRowListener = listener;
  }

  /** Whose `synced` and `failed` hear of background syncs (one listener; null removes it). */
  setSyncListener(listener: SyncListener | null): void {
    this.syncListener = listener;
  }

  get ackedSeq(): number {
    return this.meta.acked_seq;
  }

  /** Entry bytes queued (stats().bufferBytes without stats()'s query of the oldest seq). */
  get bufferBytes(): number {
    return this.meta.buffer_bytes;
  }

  get queueDepth(): number {
    return this.meta.queue_depth;
  }

  /** True at or above the soft cap. */
  get pressure(): boolean {
    return this.meta.buffer_bytes >= this.softCapBytes;
  }

  /** SQLite's quick_check: 'ok', or what is wrong. */
  quickCheck(): string {
    try {
      return (this.db.pragma('quick_check(5)') as { quick_check: string }[]).map((r) => r.quick_check).join('; ');
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** Moves next_seq up to `next` (never down): seqs below it are never assigned again. */
  raiseNextSeq(next: number): void {
    if (next <= this.meta.next_seq) return;
    const meta = { ...this.meta, next_seq: next };
    this.write('raiseNextSeq', () => this.writeMeta(meta));
    this.meta = meta;
    if (this.background) this.requestSync();
  }

  /**
   * Gives the file's free pages back to the filesystem once a backlog has drained. SQLite reuses
   * the pages of acked rows but never returns them: after an outage the file kept the size the
   * backlog grew it to (126 MB for 120 MB of entries, up to the hard cap's ~600 MB) with nothing
   * queued. When the free pages are at least RECLAIM_MIN_FREE_BYTES and more than the live data,
   * the live data is at most RECLAIM_MAX_LIVE_BYTES (the rebuild writes it once more: well under
   * a second) and the disk has room for that copy above the low-water mark, the file is rebuilt
   * (VACUUM, in WAL mode: one transaction — every row and position, or the file as it was) and
   * the WAL checkpointed, which truncates it. Returns the bytes given back (0: nothing done;
   * a reader holding the WAL defers the truncation to a later checkpoint).
   */
  reclaim(): number {
    let before: number;
    try {
      const pages = Number(this.db.pragma('page_count', { simple: true }));
      const free = Number(this.db.pragma('freelist_count', { simple: true })) * this.pageSize;
      const live = pages * this.pageSize - free;
      if (free < RECLAIM_MIN_FREE_BYTES || free <= live || live > RECLAIM_MAX_LIVE_BYTES) return 0;
      const space = this.space(true);
      if (space === undefined || space.free < this.minFreeBytes(space.total) + 2 * live) return 0;
      before = statSync(this.path).size;
      this.db.exec('VACUUM'); // rows keep their seqs and text: the in-memory tail stays right
      this.db.pragma('wal_checkpoint(TRUNCATE)');
      return Math.max(0, before - statSync(this.path).size);
    } catch {
      return 0; // a full disk, a reader in the way: the next call tries again
    }
  }

  /** Changes the page limit (see BufferOptions.maxPageCount); returns the effective limit. */
  setMaxPageCount(pages: number): number {
    return Number(this.db.pragma(`max_page_count = ${Math.floor(pages)}`, { simple: true }));
  }

  /**
   * Copies the open database (every entry, position and meta row committed) to `target` with
   * SQLite's backup API, mode 0600: buffer.db deleted or replaced under the agent (DECISIONS H25).
   */
  async copyTo(target: string): Promise<void> {
    await this.db.backup(target);
    chmodSync(target, 0o600);
  }

  close(): void {
    this.trimTail(Number.MAX_SAFE_INTEGER);
    this.closed = true;
    if (this.syncRetry !== null) clearTimeout(this.syncRetry);
    this.syncRetry = null;
    // SQLite's close checkpoints the WAL, syncing it first; an fdatasync still running keeps its fd until it returns
    if (this.db.open) this.db.close();
    if (!this.syncing) this.closeWalFd();
  }

  // ---- internals -------------------------------------------------------------

  /**
   * syncInBackground: opens buffer.db-wal for the fdatasyncs (any descriptor of the file syncs
   * it) and syncs it once now: what an earlier process committed without a sync (it crashed, the
   * page cache kept it) is on disk before it is sent. Without a WAL to sync: FULL commits.
   */
  private openWalForSync(): void {
    try {
      this.walFd = openSync(`${this.path}-wal`, 'r');
      fdatasyncSync(this.walFd);
    } catch {
      this.closeWalFd();
      this.toFullCommits();
    }
  }

  private closeWalFd(): void {
    if (this.walFd === null) return;
    try {
      closeSync(this.walFd);
    } catch {
      // already gone
    }
    this.walFd = null;
  }

  /** After a background commit: fdatasync the WAL on the thread pool (one at a time; later commits wait for the next). */
  private requestSync(): void {
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    const fd = this.walFd;
    const target = this.meta.next_seq - 1;
    if (fd === null || this.closed || target <= this.synced) return;
    this.syncing = true;
    this.syncAgain = false;
    const sync = this.hooks?.syncWal ?? fdatasync;
    sync(fd, (err) => {
      this.syncing = false;
      if (this.closed) {
        this.closeWalFd();
        return;
      }
      if (err) {
        this.syncListener?.failed(err);
        this.toFullCommits();
        return;
      }
      if (target > this.synced) {
        this.synced = target;
        this.syncListener?.synced(target);
      }
      if (this.syncAgain) this.requestSync();
    });
  }

  /**
   * Background syncs end (an fdatasync failed, or no WAL to sync): from now on every commit is
   * FULL, and one is made now (the meta row as it is) so that every earlier frame is synced with
   * it; retried every second until it succeeds.
   */
  private toFullCommits(): void {
    this.background = false;
    this.closeWalFd();
    this.syncRetry = null;
    if (this.closed || this.synced >= this.meta.next_seq - 1) return;
    try {
      this.db.pragma('synchronous = FULL');
      const meta = this.meta;
      this.write('sync', () => this.db.transaction(() => this.writeMeta(meta)).immediate());
      this.synced = Math.max(this.synced, meta.next_seq - 1);
      this.syncListener?.synced(this.synced);
    } catch (err) {
      this.syncListener?.failed(err instanceof Error ? err : new Error(String(err)));
      this.syncRetry = setTimeout(() => this.toFullCommits(), 1000);
      this.syncRetry.unref();
    }
  }

  /**
   * COUNT(*) and SUM(bytes) of the rows in (ackedSeq, upTo] from the committed tail, when the
   * tail starts right after ackedSeq (so no row below it is left) and reaches upTo; else
   * null (SQLite then counts). The tail holds exactly the committed rows of its seqs.
   */
  private tailSum(ackedSeq: number, upTo: number): { n: number; b: number } | null {
    const live = this.tailJson.length - this.tailHead;
    if (upTo <= ackedSeq || live === 0 || this.tailFirst !== ackedSeq + 1 || upTo >= this.tailFirst + live) return null;
    const n = upTo - ackedSeq;
    let b = 0;
    for (let i = this.tailHead, end = this.tailHead + n; i < end; i++) b += this.tailSize[i]!;
    return { n, b };
  }

  /** readBatch from the committed tail, or null when `fromSeq` is not in it (SQLite then answers). */
  private readTail(fromSeq: number, maxEntries: number, maxBytes: number): BufferBatch | null {
    const live = this.tailJson.length - this.tailHead;
    if (live === 0 || fromSeq < this.tailFirst || fromSeq >= this.tailFirst + live) return null;
    const from = this.tailHead + (fromSeq - this.tailFirst);
    const end = Math.min(this.tailJson.length, from + maxEntries);
    let bytes = this.tailSize[from]!;
    let i = from + 1;
    // the same rule as the query: at least one entry, then stop before the byte budget
    for (; i < end; i++) {
      const size = this.tailSize[i]!;
      if (bytes + (i - from) + size > maxBytes) break;
      bytes += size;
    }
    // A closed tail is not the newest rows: a batch that would stop at its end goes to SQLite,
    // which continues past it.
    if (this.tailClosed && i === this.tailJson.length && i - from < maxEntries) return null;
    return { seqStart: fromSeq, seqEnd: fromSeq + (i - from) - 1, entries: this.tailJson.slice(from, i), bytes };
  }

  private addTail(firstSeq: number, texts: string[], sizes: number[]): void {
    if (texts.length === 0) return;
    let added = 0;
    for (let i = 0; i < sizes.length; i++) added += sizes[i]!;
    const live = this.tailJson.length - this.tailHead;
    // Over the budget (the sender is behind): keep the older rows, which the sender reads
    // next, and leave these to SQLite; the tail stays closed until acks have emptied it, then
    // starts again at the next append (DECISIONS P8; until 2026-12-03 it started over with
    // the newest rows, so a sender behind by more than the budget read everything from SQLite).
    if (live > 0 && (this.tailClosed || (firstSeq === this.tailFirst + live && this.tailBytes + added > this.tailMaxBytes))) {
      this.tailClosed = true;
      return;
    }
    this.tailClosed = false;
    // Not contiguous with what is held (a raised next_seq, a reopened buffer): start over with
    // this append's rows; the older ones are read from SQLite.
    if (live === 0 || firstSeq !== this.tailFirst + live) {
      this.tailJson = [];
      this.tailSize = [];
      this.tailHead = 0;
      this.tailBytes = 0;
      this.tailFirst = firstSeq;
      if (added > this.tailMaxBytes) return;
    }
    for (let i = 0; i < texts.length; i++) {
      this.tailJson.push(texts[i]!);
      this.tailSize.push(sizes[i]!);
    }
    this.tailBytes += added;
  }

  /**
   * Runs `op`; where it meets a damaged row (DamagedRowError: its text does not split into its
   * `n` entries), sets the row aside and runs `op` again, so that one damaged byte costs the
   * entries of its row and not the sending of everything after it (DECISIONS P22). `op` changed
   * nothing when it threw (its transaction rolled back). Throws the error when setting aside
   * fails, or after MAX_DAMAGED_ROWS_A_CALL rows.
   */
  private repairing<T>(op: () => T): T {
    for (let setAside = 0; ; setAside++) {
      try {
        return op();
      } catch (err) {
        if (!(err instanceof DamagedRowError) || setAside >= MAX_DAMAGED_ROWS_A_CALL || this.closed) throw err;
        try {
          this.setAsideDamagedRow(err);
        } catch (cause) {
          // (a full disk for the side file, a read-only folder: the caller's storage error handling)
          const typed = toBufferError(cause, 'set aside a damaged row', this.path);
          throw typed instanceof BufferStorageError ? typed : err;
        }
      }
    }
  }

  /**
   * Sets a damaged row aside: its text is appended to buffer.db.damaged-rows (fsynced), then,
   * in one transaction, the row is deleted and queue_depth and buffer_bytes lose what it counted.
   * Its seqs above acked_seq are lost (the server sees a gap, as after an eviction). A row that
   * is gone, or reads whole again, is left as it is.
   */
  private setAsideDamagedRow(err: DamagedRowError): void {
    const seq = err.rowSeq;
    const row = this.selectRow.get(seq);
    this.lastRun = null;
    if (row === undefined || splitRun(row.json, row.n) !== null) return;
    const m = this.meta;
    const rowEnd = seq + row.n - 1;
    const from = Math.max(seq, m.acked_seq + 1);
    const lost = Math.max(0, rowEnd - from + 1);
    const reason = `row ${seq}..${rowEnd} of entries does not hold its ${row.n} entries (a damaged byte in buffer.db)`;
    const file = `${this.path}${DAMAGED_ROWS_SUFFIX}`;
    appendDurably(file, `${JSON.stringify({ at: new Date().toISOString(), seq, n: row.n, bytes: row.bytes, acked_seq: m.acked_seq, json: row.json })}\n`);
    const meta = this.write('set aside a damaged row', () =>
      this.db
        .transaction((): MetaRow => {
          this.deleteRow.run(seq);
          // Only the oldest row can straddle acked_seq: when it is this one, every row left is
          // wholly live, and their bytes are what buffer_bytes counts.
          const bytes = lost === 0 ? m.buffer_bytes : from === seq ? m.buffer_bytes - row.bytes : this.sumRowBytes.get()!.b;
          const next: MetaRow = { ...m, queue_depth: Math.max(0, m.queue_depth - lost), buffer_bytes: Math.max(0, bytes) };
          this.writeMeta(next);
          return next;
        })
        .immediate(),
    );
    this.meta = meta;
    // the tail holds exactly the committed rows of its seqs: it starts again at the next append
    if (this.tailJson.length - this.tailHead > 0 && this.tailFirst <= rowEnd) this.trimTail(Number.MAX_SAFE_INTEGER);
    this.damagedRowListener?.({ rowSeq: seq, rowEnd, lostFrom: lost > 0 ? from : null, lostTo: lost > 0 ? rowEnd : null, file, reason });
  }

  /** Splits a row into its entries' texts and keeps it as lastRun (a row's text never changes: a seq is never reused). Throws DamagedRowError for a damaged row. */
  private splitRow(seq: number, n: number, bytes: number, json: string, operation = 'readBatch'): { seq: number; n: number; parts: string[]; ascii: boolean } {
    const cached = this.lastRun;
    if (cached !== null && cached.seq === seq && cached.n === n) return cached;
    const parts = splitRun(json, n);
    if (parts === null) throw new DamagedRowError(seq, operation, this.path, new Error(`row ${seq} of entries does not hold its ${n} entries`));
    const run = { seq, n, parts, ascii: bytes === json.length - (n - 1) };
    this.lastRun = run;
    return run;
  }

  /** Rows <= upToSeq were deleted (or the buffer closes): drop them from the tail. */
  private trimTail(upToSeq: number): void {
    while (this.tailHead < this.tailJson.length && this.tailFirst <= upToSeq) this.dropTailHead();
    this.compactTail();
  }

  private dropTailHead(): void {
    this.tailBytes -= this.tailSize[this.tailHead]!;
    this.tailJson[this.tailHead] = '';
    this.tailHead++;
    this.tailFirst++;
  }

  private compactTail(): void {
    if (this.tailHead === this.tailJson.length) {
      this.tailJson = [];
      this.tailSize = [];
      this.tailHead = 0;
      this.tailBytes = 0;
    } else if (this.tailHead > 4096 && this.tailHead * 2 > this.tailJson.length) {
      this.tailJson = this.tailJson.slice(this.tailHead);
      this.tailSize = this.tailSize.slice(this.tailHead);
      this.tailHead = 0;
    }
  }

  private appendInTx(entries: readonly BufferEntry[], position: SourcePositionUpdate | undefined): { result: AppendResult; meta: MetaRow; texts: string[]; sizes: number[] } {
    const m = this.meta;
    const firstSeq = m.next_seq;
    let seq = firstSeq;
    let added = 0;
    const degraded = { metadata: 0, chars: 0 };
    const n = entries.length;
    // Never a seq past max_seq: above 2^53 - 1 they round onto each other (every append then
    // failed with a UNIQUE constraint, and a push of one was refused -32602 for good: H53).
    // Compared without adding to firstSeq: past 2^53 the sum itself rounds.
    if (n > 0 && firstSeq > LIMITS.max_seq - (n - 1)) throw new BufferStorageError('seq_exhausted', 'append', this.path, undefined);
    const texts = new Array<string>(n);
    const sizes = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const entry = entries[i]!;
      if (entry instanceof SerializedEntry) {
        // already the entry's JSON text, after its opening brace (DECISIONS P18)
        const prefix = `{"seq":${seq + i},`;
        if (!entry.rest.includes(RUN_SEPARATOR)) {
          texts[i] = prefix + entry.rest;
          sizes[i] = prefix.length + entry.bytes;
        } else {
          // a raw line feed can only be whitespace in JSON text: written again without it (runs.ts)
          const json = JSON.stringify(JSON.parse(prefix + entry.rest));
          texts[i] = json;
          sizes[i] = Buffer.byteLength(json, 'utf8');
        }
        added += sizes[i]!;
        continue;
      }
      const body = entryBody(entry, degraded);
      // Put "seq" first; body is an object literal ("{...}") from the entry.
      const json = body.length > 2 ? `{"seq":${seq + i},${body.slice(1)}` : `{"seq":${seq + i}}`;
      // The UTF-8 length of the flat body plus the ASCII seq prefix: byteLength of the
      // concatenated text would first flatten it (three times the cost, DECISIONS P8).
      const size = body.length > 2 ? Buffer.byteLength(body, 'utf8') + (json.length - body.length) : json.length;
      texts[i] = json;
      sizes[i] = size;
      added += size;
    }
    // Runs of up to RUN_MAX_BYTES of text, one row each (DECISIONS P21).
    for (let i = 0; i < n; ) {
      let runBytes = sizes[i]!;
      let j = i + 1;
      while (j < n && runBytes + sizes[j]! <= RUN_MAX_BYTES) runBytes += sizes[j++]!;
      if (j === i + 1) {
        this.insertRun.run(seq + i, runBytes, texts[i]!, 1);
      } else {
        const run = texts.slice(i, j).join(RUN_SEPARATOR);
        this.insertRun.run(seq + i, runBytes, run, j - i);
        // The texts the in-memory tail keeps become slices of the run (one small object each,
        // over one flat string) instead of each entry's own strings: those then die young, and
        // what survives until the ack is not copied by every scavenge (DECISIONS P21).
        for (let k = i, at = 0; k < j; k++) {
          const len = texts[k]!.length;
          texts[k] = run.slice(at, at + len);
          at += len + 1;
        }
      }
      i = j;
    }
    seq += n;
    if (position !== undefined) {
      this.upsertPosition.run(position.source, JSON.stringify(position.position), new Date().toISOString());
    }
    const meta: MetaRow = {
      ...m,
      next_seq: seq,
      queue_depth: m.queue_depth + entries.length,
      buffer_bytes: m.buffer_bytes + added,
    };
    let evicted: EvictionReport | null = null;
    if (meta.buffer_bytes > this.hardCapBytes) {
      evicted = this.evictInTx(meta.buffer_bytes - this.hardCapBytes);
      meta.queue_depth -= evicted.entries;
      meta.buffer_bytes -= evicted.bytes;
      meta.evicted_entries += evicted.entries;
      meta.evicted_oldest_seq = evicted.fromSeq;
      meta.evicted_newest_seq = evicted.toSeq;
    }
    this.writeMeta(meta);
    this.hooks?.beforeCommit?.('append');
    const result: AppendResult = { firstSeq, lastSeq: seq - 1, count: entries.length, evicted };
    if (degraded.metadata > 0 || degraded.chars > 0) result.degraded = degraded;
    return { result, meta, texts, sizes };
  }

  /**
   * Drops the oldest entries above acked_seq until at least `excess` bytes are freed: whole
   * rows, and of the row where it stops the entries up to there (the row is written again
   * with the rest, from its first kept seq).
   */
  private evictInTx(excess: number): EvictionReport {
    const acked = this.meta.acked_seq;
    let freed = 0;
    let count = 0;
    let fromSeq = 0;
    let toSeq = 0;
    let wholeUpTo = 0; // rows wholly dropped: every row at or below this seq
    let cut: { seq: number; n: number; parts: string[]; k: number } | null = null;
    // Read first, write after: better-sqlite3 runs no other statement while an iterator is open.
    for (const row of this.selectOldest.iterate()) {
      const first = Math.max(0, acked + 1 - row.seq); // index of the row's first entry above acked_seq
      if (first === 0 && freed + row.bytes < excess) {
        if (count === 0) fromSeq = row.seq;
        toSeq = row.seq + row.n - 1;
        freed += row.bytes;
        count += row.n;
        wholeUpTo = toSeq;
        continue;
      }
      const { parts } = this.splitRow(row.seq, row.n, row.bytes, row.json, 'append');
      let k = first;
      for (; k < row.n && freed < excess; k++) {
        if (count === 0) fromSeq = row.seq + k;
        toSeq = row.seq + k;
        freed += Buffer.byteLength(parts[k]!, 'utf8');
        count++;
      }
      if (k < row.n) {
        cut = { seq: row.seq, n: row.n, parts, k }; // its entries from k on stay
        break;
      }
      wholeUpTo = row.seq + row.n - 1;
      if (freed >= excess) break;
    }
    if (wholeUpTo > 0) this.deleteUpTo.run(wholeUpTo, wholeUpTo);
    if (cut !== null) {
      this.deleteRow.run(cut.seq);
      const { seq, n, parts, k } = cut;
      this.insertRun.run(seq + k, partsBytes(parts, k, n), parts.slice(k).join(RUN_SEPARATOR), n - k);
    }
    this.lastRun = null; // it may hold evicted entries
    return { entries: count, bytes: freed, fromSeq, toSeq };
  }

  private advance(target: number, operation: 'ack' | 'applyAccepted'): AckResult {
    return this.repairing(() => this.advanceOnce(target, operation));
  }

  private advanceOnce(target: number, operation: 'ack' | 'applyAccepted'): AckResult {
    if (!Number.isSafeInteger(target) || target < 0) throw new RangeError(`${operation}: seq must be a non-negative integer`);
    const m = this.meta;
    if (target <= m.acked_seq && target < m.next_seq) {
      return { ackedSeq: m.acked_seq, deleted: 0, deletedBytes: 0, jumped: false, previousNextSeq: m.next_seq, nextSeq: m.next_seq };
    }
    const relax = this.relaxAcks && operation === 'ack' && target < m.next_seq;
    if (relax) this.db.pragma('synchronous = NORMAL');
    try {
      let step: { result: AckResult; meta: MetaRow };
      try {
        step = this.write(operation, () => this.advanceTx(target, operation));
      } catch (err) {
        if (!(err instanceof BufferStorageError && err.kind === 'disk_full')) throw err;
        return this.advanceInSteps(target, operation);
      }
      const { result, meta } = step;
      this.meta = meta;
      this.trimTail(meta.acked_seq);
      if (result.jumped && this.background) this.requestSync();
      if (result.deleted > 0 && (!this.reserveHeld || (this.lastSpace !== undefined && this.lastSpace.free < 2 * this.minFreeBytes(this.lastSpace.total)))) this.afterDelete();
      return result;
    } finally {
      if (relax) this.db.pragma('synchronous = FULL');
    }
  }

  /**
   * The same advance as one transaction would do, in steps of ACK_STEP_ROWS rows, the WAL
   * cut back after each: deleting a large range needs WAL space for every page it touches,
   * which a full disk does not have (DECISIONS H4). Every step keeps the invariants.
   */
  private advanceInSteps(target: number, operation: 'ack' | 'applyAccepted'): AckResult {
    const first = this.meta;
    let deleted = 0;
    let deletedBytes = 0;
    let last: AckResult | undefined;
    for (let upTo = Math.min(target, this.meta.acked_seq + ACK_STEP_ROWS); ; upTo = Math.min(target, upTo + ACK_STEP_ROWS)) {
      const { result, meta } = this.write(operation, () => this.advanceTx(upTo, operation));
      this.meta = meta;
      this.trimTail(meta.acked_seq);
      deleted += result.deleted;
      deletedBytes += result.deletedBytes;
      last = result;
      this.shrinkWal(true);
      if (upTo >= target) break;
    }
    this.afterDelete();
    return { ...last, deleted, deletedBytes, previousNextSeq: first.next_seq };
  }

  private advanceInTx(target: number, operation: 'ack' | 'applyAccepted'): { result: AckResult; meta: MetaRow } {
    const m = this.meta;
    const ackedSeq = Math.max(m.acked_seq, target);
    const sum = this.tailSum(m.acked_seq, ackedSeq) ?? this.sumBetween(m.acked_seq, ackedSeq, operation);
    if (sum.n > 0) this.deleteUpTo.run(ackedSeq, ackedSeq);
    const jumped = m.next_seq <= ackedSeq;
    const meta: MetaRow = {
      ...m,
      acked_seq: ackedSeq,
      next_seq: jumped ? ackedSeq + 1 : m.next_seq,
      queue_depth: m.queue_depth - sum.n,
      buffer_bytes: m.buffer_bytes - sum.b,
    };
    this.writeMeta(meta);
    this.hooks?.beforeCommit?.(operation);
    return {
      result: { ackedSeq, deleted: sum.n, deletedBytes: sum.b, jumped, previousNextSeq: m.next_seq, nextSeq: meta.next_seq },
      meta,
    };
  }

  /** COUNT and summed bytes of the entries in (ackedSeq, upTo], from the rows (the tail could not say). */
  private sumBetween(ackedSeq: number, upTo: number, operation: string): { n: number; b: number } {
    let n = 0;
    let b = 0;
    if (upTo <= ackedSeq) return { n, b };
    const rows = this.selectOverlap.all(upTo, ackedSeq);
    for (const row of rows) {
      const from = Math.max(row.seq, ackedSeq + 1);
      const to = Math.min(row.seq + row.n - 1, upTo);
      n += to - from + 1;
      if (from === row.seq && to === row.seq + row.n - 1) {
        b += row.bytes; // wholly inside
        continue;
      }
      // a row cut by acked_seq or upTo: its entries' sizes, from the run split last when it is this one
      const cached = this.lastRun;
      const run =
        cached !== null && cached.seq === row.seq && cached.n === row.n
          ? cached
          : this.splitRow(row.seq, row.n, row.bytes, this.selectRowJson.get(row.seq)?.json ?? '', operation);
      b += run.ascii ? charsBetween(run.parts, from - row.seq, to - row.seq + 1) : partsBytes(run.parts, from - row.seq, to - row.seq + 1);
    }
    return { n, b };
  }

  private writeMeta(m: MetaRow): void {
    this.updateMeta.run(m.next_seq, m.acked_seq, m.queue_depth, m.buffer_bytes, m.evicted_entries, m.evicted_oldest_seq, m.evicted_newest_seq);
  }

  private readMeta(): MetaRow {
    const row = this.selectMeta.get();
    if (row === undefined) throw new BufferStorageError('corrupt', 'open', this.path, undefined, new Error('meta row missing'));
    return row;
  }

  /** Runs a write; on failure re-reads the meta row (the transaction rolled back) and throws a typed error. */
  private write<T>(operation: string, fn: () => T): T {
    try {
      return this.tryWrite(fn);
    } catch (err) {
      const typed = toBufferError(err, operation, this.path);
      // An ack, a delete or a position must not fail for lack of space: give the reserve back
      // to the filesystem and try once more (appends are refused by the low-water mark instead).
      if (typed instanceof BufferStorageError && typed.kind === 'disk_full' && operation !== 'append' && this.releaseReserve()) {
        return this.write(operation, fn);
      }
      throw typed;
    }
  }

  private tryWrite<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      this.lastRun = null;
      try {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        this.meta = this.readMeta();
      } catch {
        // keep the mirror; it still matches the last committed state
      }
      throw err;
    }
  }

  private minFreeBytes(total: number): number {
    return minFreeFor(this.minFreeOption, total);
  }

  /** statfs at most every 250 ms (unless `fresh`); undefined when the filesystem cannot say. */
  private space(fresh: boolean): { free: number; total: number } | undefined {
    const now = Date.now();
    if (!fresh && this.lastSpace !== undefined && now - this.lastSpace.at < 250) return this.lastSpace;
    try {
      const s = this.diskSpace();
      this.lastSpace = { at: now, ...s };
      return this.lastSpace;
    } catch {
      return undefined;
    }
  }

  private freePageBytes(): number {
    try {
      return Number(this.db.pragma('freelist_count', { simple: true })) * Number(this.db.pragma('page_size', { simple: true }));
    } catch {
      return 0;
    }
  }

  /** WAL pages between automatic checkpoints: WAL_CHECKPOINT_BYTES, or WAL_CHECKPOINT_BYTES_LOW while space is short. */
  private walCheckpointPages(low: boolean): number {
    return Math.max(8, Math.round((low ? WAL_CHECKPOINT_BYTES_LOW : WAL_CHECKPOINT_BYTES) / this.pageSize));
  }

  /** low: checkpoint and truncate the WAL, then checkpoint every 256 KiB; else every 4 MiB. */
  private shrinkWal(low: boolean): void {
    try {
      if (low) this.db.pragma('wal_checkpoint(TRUNCATE)');
      if (low !== this.smallWal) this.db.pragma(`wal_autocheckpoint = ${this.walCheckpointPages(low)}`);
      this.smallWal = low;
    } catch {
      // a reader holds the WAL: the next attempt does it
    }
  }

  /** Creates the reserve file when it is missing and space allows. Best effort. */
  private keepReserve(): void {
    if (this.reserveBytes === 0 || this.reserveHeld) return;
    try {
      if (statSync(this.reservePath).size >= this.reserveBytes) {
        this.reserveHeld = true;
        return;
      }
    } catch {
      // not there yet
    }
    // Taken only where it leaves twice the low-water mark free: taken back at the mark itself, it
    // would leave appends too little room above the mark to store anything while the storage
    // probe (which asks for the mark) keeps resuming the sources.
    const space = this.space(true);
    if (space !== undefined && space.free - this.reserveBytes < 2 * this.minFreeBytes(space.total)) return;
    let fd: number | undefined;
    try {
      fd = openSync(this.reservePath, 'w', 0o600);
      const chunk = Buffer.alloc(Math.min(this.reserveBytes, 64 * 1024), 0);
      for (let done = 0; done < this.reserveBytes; ) done += writeSync(fd, chunk, 0, Math.min(chunk.length, this.reserveBytes - done));
      closeSync(fd);
      fd = undefined;
      this.reserveHeld = true;
    } catch {
      if (fd !== undefined) closeSync(fd);
      try {
        unlinkSync(this.reservePath);
      } catch {
        // nothing to remove
      }
    }
  }

  /** Deletes the reserve file; true when that freed space. */
  private releaseReserve(): boolean {
    if (!this.reserveHeld) return false;
    this.reserveHeld = false;
    this.lastSpace = undefined;
    try {
      unlinkSync(this.reservePath);
      return true;
    } catch {
      return false;
    }
  }

  /** After rows were deleted: cut the WAL back when space is short, and take the reserve again when it is back. */
  private afterDelete(): void {
    const space = this.space(true);
    if (space === undefined) return;
    const floor = this.minFreeBytes(space.total);
    if (space.free < floor + this.reserveBytes) {
      try {
        this.db.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // a reader holds the WAL; the next checkpoint does it
      }
    }
    if (!this.reserveHeld) this.keepReserve();
  }

  private read<T>(operation: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw toBufferError(err, operation, this.path);
    }
  }
}

/**
 * Rebuilds a buffer file made with another page size with BUFFER_PAGE_SIZE (DECISIONS P14) when
 * its live data is at most PAGE_SIZE_REBUILD_MAX_BYTES and the disk has room for the rebuild
 * (the low-water mark plus three times the live data: the copy and its journal). SQLite changes
 * the page size only by a VACUUM outside WAL mode, so the file goes to rollback-journal mode for
 * it and back. VACUUM is one transaction: the file has the new size and every row, or the old
 * one. Anything that stops it (another process reading the file, a full disk) leaves the page
 * size as it was; only failing to get back to WAL mode fails the open. While the file is out of
 * WAL mode, `buffer.db.rebuild` (PAGE_SIZE_REBUILD_MARK) exists: the WAL was checkpointed whole
 * before it went, so a start after a crash in that time has lost nothing (heal.ts); it is removed
 * once the file is in WAL mode again and its -wal exists.
 */
function adoptPageSize(db: BetterSqlite3.Database, path: string, options: BufferOptions): void {
  const mark = `${path}${PAGE_SIZE_REBUILD_MARK}`;
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  const rebuild = pageSize !== BUFFER_PAGE_SIZE && options.maxPageCount === undefined && rebuildFits(db, pageSize, path, options);
  if (rebuild) {
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      // Before the -wal goes away: a crash from here until WAL mode is back must not read as a lost WAL.
      writeDurably(mark, `page size rebuild of ${path} started ${new Date().toISOString()}\n`);
      if (db.pragma('journal_mode = DELETE', { simple: true }) === 'delete') {
        db.pragma(`page_size = ${BUFFER_PAGE_SIZE}`);
        db.exec('VACUUM');
      }
    } catch {
      // the page size stays as it was
    }
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new BufferStorageError('other', 'open', path, undefined, new Error(`journal_mode is ${String(mode)} after the page size rebuild, WAL required`));
  }
  // The mark of this rebuild, or of one a crash cut short, goes only once the -wal exists again:
  // SQLite creates it at the first read after the switch back to WAL mode.
  if (!existsSync(mark)) return;
  db.prepare('SELECT schema_version FROM meta WHERE id = 1').get();
  rmSync(mark, { force: true });
}

/** A file of `pageSize` pages holds at most PAGE_SIZE_REBUILD_MAX_BYTES of live data and the disk has room to rebuild it. */
function rebuildFits(db: BetterSqlite3.Database, pageSize: number, path: string, options: BufferOptions): boolean {
  const live = (Number(db.pragma('page_count', { simple: true })) - Number(db.pragma('freelist_count', { simple: true }))) * pageSize;
  if (live > PAGE_SIZE_REBUILD_MAX_BYTES) return false;
  try {
    const space = diskSpaceOf(path, options)();
    return space.free >= minFreeFor(options.minFreeBytes, space.total) + 3 * live;
  } catch {
    return false; // the filesystem cannot say: do not risk it
  }
}

/** The low-water mark of free space on a filesystem of `total` bytes (BufferOptions.minFreeBytes, else 5 %, 1 to 64 MiB). */
function minFreeFor(option: number | undefined, total: number): number {
  if (option !== undefined) return Math.max(0, option);
  return defaultMinFreeBytes(total);
}

/** The default low-water mark on a filesystem of `total` bytes: 5 %, at least 1 MiB, at most 64 MiB (DECISIONS H4). */
export function defaultMinFreeBytes(total: number): number {
  return Math.min(64 * MIB, Math.max(MIB, Math.floor(total * 0.05)));
}

/** How the buffer at `path` reads its filesystem's free space (BufferOptions.diskSpace, else statfs). */
function diskSpaceOf(path: string, options: BufferOptions): () => { free: number; total: number } {
  return options.diskSpace ?? (() => statfsFree(dirname(path)));
}

/** Free (for this user) and total bytes of the filesystem holding `dir`. */
export function statfsFree(dir: string): { free: number; total: number } {
  const s = statfsSync(dir);
  return { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
}

/** Summed lengths of parts[from .. to) (their UTF-8 sizes when every text is ASCII). */
function charsBetween(parts: readonly string[], from: number, to: number): number {
  let c = 0;
  for (let i = from; i < to; i++) c += parts[i]!.length;
  return c;
}

/** A cheap estimate of the bytes an append writes (the JSON text of its entries, ASCII assumed). */
function estimateBytes(entries: readonly BufferEntry[]): number {
  let n = 0;
  for (const e of entries) n += e instanceof SerializedEntry ? 24 + e.bytes : 160 + e.message.length + (e.metadata == null ? 0 : 256);
  return n;
}

const METADATA_DROPPED = 'cortex_metadata_dropped';
const TEXT_FIELDS = ['message', 'facility', 'app_name', 'process_id', 'source'] as const;

/**
 * The entry as JSON text, made storable and sendable whatever a source produced: text
 * fields without lone surrogates or NUL, metadata within the contract's caps (else the
 * marker). An entry never makes an append fail, so a source never retries a line that
 * could never be stored (DECISIONS H2). Counts what it changed into `degraded`.
 */
function entryBody(entry: NewLogEntry, degraded: { metadata: number; chars: number }): string {
  // Fast path (DECISIONS P8): JSON.stringify escapes NUL and every lone surrogate as a
  // backslash-u sequence, so a text without one has neither in any field. One can also be
  // another escaped control character or an escaped backslash before a "u": then the full
  // path decides, as it did for every entry before.
  const meta0 = entry.metadata;
  if (meta0 == null || !nestedDeeperThan(meta0, LIMITS.metadata_max_depth)) {
    let body: string | undefined;
    try {
      body = JSON.stringify(entry);
    } catch {
      body = undefined; // the full path reports it
    }
    if (body !== undefined && !body.includes('\\u')) {
      if (meta0 == null || body.length * 3 <= LIMITS.metadata_max_bytes || Buffer.byteLength(JSON.stringify(meta0)) <= LIMITS.metadata_max_bytes) return body;
    }
  }
  return entryBodyChecked(entry, degraded);
}

function entryBodyChecked(entry: NewLogEntry, degraded: { metadata: number; chars: number }): string {
  let e = entry;
  for (const k of TEXT_FIELDS) {
    const v = e[k];
    if (typeof v !== 'string') continue;
    const r = storableText(v);
    if (r.replaced > 0) {
      if (e === entry) e = { ...entry };
      (e as unknown as Record<string, string>)[k] = r.text;
      degraded.chars += r.replaced;
    }
  }
  const meta = e.metadata;
  let dropped: string | undefined;
  if (meta != null && nestedDeeperThan(meta, LIMITS.metadata_max_depth)) dropped = 'depth';
  let body: string | undefined;
  if (dropped === undefined) {
    try {
      body = JSON.stringify(e);
    } catch {
      dropped = 'unserializable'; // a cycle, a BigInt: a source bug, but never a stuck source
    }
  }
  // Only an entry this long can carry metadata past the byte cap (a UTF-16 unit is at most 3 bytes).
  if (body !== undefined && meta != null && body.length * 3 > LIMITS.metadata_max_bytes && Buffer.byteLength(JSON.stringify(meta)) > LIMITS.metadata_max_bytes) {
    dropped = 'size';
  }
  if (dropped === undefined) return body as string;
  degraded.metadata++;
  return JSON.stringify({ ...e, metadata: { [METADATA_DROPPED]: dropped } });
}

/** `minRowSeq`: the lowest row's seq (null: no row). That row can start at or below acked_seq (a run acked in part): its first live entry is then acked_seq + 1. */
function statsFrom(m: MetaRow, minRowSeq: number | null, softCapBytes: number, hardCapBytes: number): BufferStats {
  const oldestSeq = minRowSeq === null ? null : Math.max(minRowSeq, m.acked_seq + 1);
  return {
    nextSeq: m.next_seq,
    ackedSeq: m.acked_seq,
    queueDepth: m.queue_depth,
    bufferBytes: m.buffer_bytes,
    oldestSeq,
    pushLagSeq: Math.max(0, m.next_seq - 1 - m.acked_seq),
    pressure: m.buffer_bytes >= softCapBytes,
    softCapBytes,
    hardCapBytes,
    evictedEntries: m.evicted_entries,
    evictedOldestSeq: m.evicted_oldest_seq,
    evictedNewestSeq: m.evicted_newest_seq,
  };
}

export interface BufferSnapshot {
  stats: BufferStats;
  sources: SourcePositionRecord[];
}

/**
 * Reads the buffer's state from another process (the `status` command while `run` is
 * running) through a read-only connection; never writes. Caps are not stored in the
 * file, so pass the ones the agent runs with to get `pressure` right.
 */
export function readBufferSnapshot(path: string, caps: { softCapBytes?: number; hardCapBytes?: number } = {}): BufferSnapshot {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 2000');
    const read = db.transaction(() => {
      const meta = db!.prepare<[], MetaRow>(`SELECT ${META_COLUMNS} FROM meta WHERE id = 1`).get();
      if (meta === undefined) throw new BufferStorageError('corrupt', 'readBufferSnapshot', path, undefined);
      const oldest = meta.queue_depth === 0 ? null : (db!.prepare<[], { seq: number | null }>('SELECT MIN(seq) AS seq FROM entries').get()?.seq ?? null);
      const sources = db!
        .prepare<[], { source: string; position: string; updated_at: string }>('SELECT source, position, updated_at FROM source_positions ORDER BY source')
        .all()
        .map((r) => ({ source: r.source, position: JSON.parse(r.position) as JsonValue, updatedAt: r.updated_at }));
      return { meta, oldest, sources };
    });
    const { meta, oldest, sources } = read();
    return {
      stats: statsFrom(meta, oldest, caps.softCapBytes ?? DEFAULT_SOFT_CAP_BYTES, caps.hardCapBytes ?? DEFAULT_HARD_CAP_BYTES),
      sources,
    };
  } catch (err) {
    const typed = toBufferError(err, 'readBufferSnapshot', path);
    throw typed instanceof BufferStorageError ? typed : new BufferStorageError('cannot_open', 'readBufferSnapshot', path, undefined, typed);
  } finally {
    db?.close();
  }
}
