// The typed error every buffer operation throws when storage fails. On any of them the
// caller (the source manager) pauses its sources — nothing is read that cannot be
// stored — and retries later if `retryable`. A failed operation changes nothing: its
// transaction is rolled back in full, and the buffer stays usable.

import { isDiskFullCode } from '../../common/errors.js';

export type BufferErrorKind =
  | 'disk_full' // SQLITE_FULL, ENOSPC, SQLITE_IOERR_SHMSIZE: free space (or raise the page limit) and retry
  | 'io' // SQLITE_IOERR_*: the disk or filesystem failed a read or write
  | 'read_only' // SQLITE_READONLY_*, EROFS, EACCES/EPERM: the file or folder is not writable
  | 'busy' // SQLITE_BUSY/LOCKED: another process holds the database
  | 'corrupt' // SQLITE_CORRUPT/NOTADB: the file is damaged or not a buffer
  | 'cannot_open' // SQLITE_CANTOPEN, ENOENT: the path cannot be opened
  | 'schema' // the file is a database of another (newer) buffer layout
  | 'seq_exhausted' // the next seq would pass max_seq (DECISIONS H53)
  | 'other';

const REMEDY: Record<BufferErrorKind, string> = {
  disk_full: 'the disk (or the buffer page limit) is full; free space and the agent resumes',
  io: 'the disk reported an I/O error; check the device and filesystem',
  read_only: 'the buffer file or its folder is not writable; fix permissions or the mount',
  busy: 'another process holds the buffer database locked; is a second agent running on this state dir?',
  corrupt: 'the buffer file is damaged or not a buffer database; move it aside (unsent entries in it are lost)',
  cannot_open: 'the buffer file cannot be opened; check the state dir path and permissions',
  schema: 'the buffer file was written by a newer agent; use that version or move the file aside',
  seq_exhausted:
    "this host's next seq would pass max_seq (2^53 - 1), where seqs stop being exact: a server's accepted_seq set it there (a damaged or hand-edited server database); repair the host on the server (cortex-server agent reset-seq), stop the agent and move buffer.db aside (its unsent entries are lost with it)",
  other: 'unexpected storage error',
};

/** Opening needs a little room (buffer.ts open gives back the reserve first); `run` waits for it (DECISIONS H12). */
const OPEN_DISK_FULL = 'the disk is full; free space on it (df shows it): cortex-agent run waits and starts once there is room (nothing buffered is lost)';

export class BufferStorageError extends Error {
  override readonly name = 'BufferStorageError';
  /** What failed, as a category the caller can act on. */
  readonly kind: BufferErrorKind;
  /** SQLite extended code (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`, ...) or Node errno code. */
  readonly code: string | undefined;
  /** Which buffer operation failed (`append`, `ack`, `open`, ...). */
  readonly operation: string;
  /**
   * True when the condition can clear while the agent runs (space freed, device back,
   * lock released): the caller pauses its sources and retries later. False when only
   * an operator can fix it (damaged file, newer layout).
   */
  readonly retryable: boolean;
  /**
   * A write refused at the low-water mark (`LOW_DISK_SPACE`): the estimated bytes it would
   * have written, which a retry must find room for (the storage probe waits for that much).
   */
  readonly bytes: number | undefined;
  /** The file the operation could not read or write (buffer.db; seq.json for an open that could not reserve seqs). */
  readonly path: string;

  constructor(kind: BufferErrorKind, operation: string, path: string, code: string | undefined, cause?: unknown, bytes?: number) {
    const detail = cause instanceof Error && cause.message ? `: ${cause.message}` : '';
    super(
      `buffer ${path}: ${operation} failed${detail}${code ? ` (${code})` : ''} — ${kind === 'disk_full' && operation === 'open' ? OPEN_DISK_FULL : REMEDY[kind]}; nothing from this ${operation} was stored`,
      cause === undefined ? undefined : { cause },
    );
    this.kind = kind;
    this.code = code;
    this.operation = operation;
    this.retryable = kind === 'disk_full' || kind === 'io' || kind === 'read_only' || kind === 'busy' || kind === 'other';
    this.bytes = bytes;
    this.path = path;
  }
}

/**
 * A row of `entries` whose text does not split into its `n` entries (a damaged byte that added
 * or removed a line feed: SQLite keeps no checksum of a row, so quick_check passes). The buffer
 * sets such a row aside where it meets it and goes on (DurableBuffer, DECISIONS P22): this
 * error leaves the buffer only when setting it aside failed too.
 */
export class DamagedRowError extends BufferStorageError {
  constructor(
    /** The row's first seq (its key). */
    readonly rowSeq: number,
    operation: string,
    path: string,
    cause: Error,
  ) {
    super('corrupt', operation, path, undefined, cause);
  }
}

/** Maps an error code to a kind; undefined when the error is not a storage error. */
export function classifyStorageCode(code: string): BufferErrorKind | undefined {
  if (isDiskFullCode(code)) return 'disk_full'; // SQLITE_IOERR_SHMSIZE included: the WAL index could not grow
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') return 'io';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS' || code === 'EACCES' || code === 'EPERM') return 'read_only';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'corrupt';
  if (code.startsWith('SQLITE_CANTOPEN') || code === 'ENOENT' || code === 'ENOTDIR') return 'cannot_open';
  if (code.startsWith('SQLITE_')) return 'other';
  return undefined;
}

/** Wraps a storage failure in BufferStorageError; returns any other error unchanged. */
export function toBufferError(err: unknown, operation: string, path: string): unknown {
  if (err instanceof BufferStorageError) return err;
  const code = typeof err === 'object' && err !== null && 'code' in err ? (err as { code: unknown }).code : undefined;
  if (typeof code !== 'string') return err;
  const kind = classifyStorageCode(code);
  if (kind === undefined) return err;
  return new BufferStorageError(kind, operation, path, code, err);
}
