// Which file a file source is reading: positions, fingerprints and finding a file again
// after rotation or copytruncate (DESIGN.md 5.12, DECISIONS.md D5–D7, D10).
//
// A position {dev, ino, fp, fp_len, offset, part} names a file by its identity (dev,
// ino) and the hash `fp` of its first fp_len = min(offset, 1024) bytes — bytes already
// read, which an appended file never changes — so a reused inode is caught even for
// short files. Everything here is synchronous file-system reads; no source state.

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { JsonValue } from '../../buffer/entry.js';

export const FINGERPRINT_BYTES = 1024;

export interface FilePosition {
  [k: string]: JsonValue;
  dev: number;
  ino: number;
  /** sha256 (hex, 32 chars) of the first fp_len bytes; null when fp_len is 0. */
  fp: string | null;
  fp_len: number;
  /** First byte not yet committed. */
  offset: number;
  /** Parts of the current (over-long) line already committed at `offset`; 0 at a line start. */
  part: number;
}

export interface Identity {
  dev: number;
  ino: number;
}

export function isFilePosition(v: JsonValue | null | undefined): v is FilePosition {
  return (
    typeof v === 'object' && v !== null && !Array.isArray(v) &&
    typeof v.dev === 'number' && typeof v.ino === 'number' && typeof v.offset === 'number' && typeof v.fp_len === 'number'
  );
}

export function fingerprint(buf: Buffer): string | null {
  return buf.length === 0 ? null : createHash('sha256').update(buf).digest('hex').slice(0, 32);
}

/** The first `len` bytes of an open file (fewer when it is shorter). */
export function readPrefix(fd: number, len: number): Buffer {
  const b = Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const n = fs.readSync(fd, b, got, len - got, got);
    if (n === 0) break;
    got += n;
  }
  return b.subarray(0, got);
}

/** The open file starts with the bytes the position fingerprinted. */
export function prefixMatches(p: FilePosition, fd: number): boolean {
  if (p.fp_len === 0) return true;
  return fingerprint(readPrefix(fd, p.fp_len)) === p.fp;
}

/** The open file (with its stats) is the one the position was taken in: same identity, long enough, same first bytes. */
export function sameFile(p: FilePosition, st: fs.Stats, fd: number): boolean {
  return p.dev === st.dev && p.ino === st.ino && p.offset <= st.size && prefixMatches(p, fd);
}

/**
 * Opens a regular file for reading, checked on the descriptor itself: `path` may have become a
 * FIFO since it was looked at (a rename onto it), and a blocking open of a FIFO waits for a
 * writer with the agent's one thread (DECISIONS H39). O_NONBLOCK makes that open return at once;
 * reads of a regular file ignore it. Throws notRegular() for anything else (descriptor closed).
 */
export function openRegular(path: string): { fd: number; st: fs.Stats } {
  const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  let st: fs.Stats;
  try {
    st = fs.fstatSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  if (!st.isFile()) {
    fs.closeSync(fd);
    throw notRegular(st);
  }
  return { fd, st };
}

/**
 * A path that is not a regular file: a file source never reads it (a FIFO would block the
 * read, /dev/zero never ends). Says what it is and what to configure instead.
 */
export function notRegular(st: fs.Stats): Error {
  if (st.isDirectory()) return Object.assign(new Error('is a directory, not a file: give a file, or a glob such as DIR/*.log'), { code: 'EISDIR' });
  const what = st.isFIFO() ? 'a FIFO (named pipe)' : st.isSocket() ? 'a socket' : st.isCharacterDevice() ? 'a character device' : st.isBlockDevice() ? 'a block device' : 'not a regular file';
  return Object.assign(new Error(`is ${what}: a file source reads regular files only (for a stream, use a custom source: a command or a socket)`), { code: 'EINVAL' });
}

/** stat(path), or null when nothing is there. */
export function statOrNull(path: string): fs.Stats | null {
  try {
    return fs.statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw err;
  }
}

/**
 * A file in the folder of `path` that is the position's file (rotated away while the
 * agent was stopped): same dev/ino, at least `offset` long, same first bytes. Returned
 * open; the caller owns the descriptor.
 */
export function findByIdentity(path: string, p: FilePosition): { path: string; st: fs.Stats; fd: number } | null {
  let names: string[];
  try {
    names = fs.readdirSync(dirname(path));
  } catch {
    return null;
  }
  for (const name of names) {
    const full = join(dirname(path), name);
    try {
      const st = fs.statSync(full);
      if (st.ino !== p.ino || st.dev !== p.dev || !st.isFile() || st.size < p.offset) continue;
      const opened = openRegular(full);
      if (opened.st.ino === p.ino && opened.st.dev === p.dev && prefixMatches(p, opened.fd)) return { path: full, st: opened.st, fd: opened.fd };
      fs.closeSync(opened.fd);
    } catch {
      // raced with a rename; skip
    }
  }
  return null;
}

/**
 * The copy logrotate's copytruncate made of the file at `path` (a name starting with its
 * name, another inode, at least `offset` long, the same first fpLen bytes): what it holds
 * beyond `offset` (bytes, and lines counted up to 64 MiB; a last line without its newline
 * counts), or null when no copy is found.
 */
export function findCopy(path: string, ino: number | null, offset: number, fpLen: number, fp: string | null): { bytes: number; lines: number } | null {
  const dir = dirname(path);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return null;
  }
  const base = basename(path);
  for (const name of names) {
    if (name === base || !name.startsWith(base)) continue;
    const full = join(dir, name);
    let fd: number | null = null;
    try {
      const st = fs.statSync(full);
      if (!st.isFile() || st.ino === ino || st.size < offset) continue;
      fd = openRegular(full).fd;
      if (fingerprint(readPrefix(fd, fpLen)) !== fp) continue;
      const bytes = st.size - offset;
      let lines = 0;
      const b = Buffer.allocUnsafe(1 << 20);
      let pos = offset;
      let last = 10;
      while (pos < st.size && pos - offset < 64 * 1024 * 1024) {
        const n = fs.readSync(fd, b, 0, b.length, pos);
        if (n === 0) break;
        for (let i = b.indexOf(10, 0); i >= 0 && i < n; i = b.indexOf(10, i + 1)) lines++;
        last = b[n - 1]!;
        pos += n;
      }
      if (bytes > 0 && last !== 10) lines++;
      return { bytes, lines };
    } catch {
      // skip
    } finally {
      if (fd !== null) fs.closeSync(fd);
    }
  }
  return null;
}

/**
 * start_at "end": the offset after the last complete line of an open file of `size`
 * bytes (looking at its last 64 KiB); 0 for a file of one line still being written (it
 * is read whole). A file whose last 64 KiB hold no newline ends there.
 */
export function endOfLastLine(fd: number, size: number): number {
  let offset = size;
  if (size > 0) {
    const len = Math.min(size, 64 * 1024);
    const tail = Buffer.alloc(len);
    const n = fs.readSync(fd, tail, 0, len, size - len);
    const nl = tail.subarray(0, n).lastIndexOf(0x0a);
    if (nl >= 0) offset = size - len + nl + 1;
    else if (size <= len) offset = 0; // one line, still being written: read it whole
  }
  return offset;
}

/**
 * Descriptors the file sources may hold open at once: the process's open-file limit
 * (RLIMIT_NOFILE, soft: /proc/self/limits) less a reserve for everything else — the buffer's
 * files, the connection, status.json, a journald or docker source, Node's own. A glob over more
 * files than the limit took every descriptor, and the agent then could not read its token to
 * reconnect nor write status.json (DECISIONS H40). Null: no limit known (not Linux, unlimited).
 */
export interface FileBudget {
  /** The soft open-file limit. */
  limit: number;
  /** Kept for the rest of the agent. */
  reserve: number;
  /** What the file sources may hold: limit − reserve. */
  files: number;
}

let budget: FileBudget | null | undefined;
let held = 0;

/** The open-file limit's share for file sources (read once). */
export function fileBudget(): FileBudget | null {
  if (budget === undefined) {
    budget = null;
    try {
      const m = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
      if (m !== null && m[1] !== 'unlimited') budget = budgetFor(Number(m[1]));
    } catch {
      // no /proc: no limit known
    }
  }
  return budget;
}

/** limit − a reserve of an eighth of it, at least 64 and at most 256. */
export function budgetFor(limit: number): FileBudget {
  const reserve = Math.min(limit - 1, Math.max(64, Math.min(256, Math.floor(limit / 8))));
  return { limit, reserve, files: limit - reserve };
}

/** For tests: another budget (null: none; undefined: read the process's again). */
export function setFileBudgetForTests(b: FileBudget | null | undefined): void {
  budget = b;
}

let budgetSaidAt = -Infinity;

/** A budget refusal is logged at most once a minute for the whole agent (a glob of thousands would log each file's). */
export function budgetRefusalToSay(now: number): boolean {
  if (now - budgetSaidAt < 60_000) return false;
  budgetSaidAt = now;
  return true;
}

/**
 * Rotated files a tailer keeps open for late writes (./tailer.ts, DECISIONS D6), oldest first: each
 * with the call that reads what is there and closes it. Their descriptors count in the budget like
 * any other; when the budget is full, checkFileBudget closes them first.
 */
const lingering = new Set<() => void>();

/** Registers a rotated file kept open (`giveBack` reads it to its end and closes it); returns the call that unregisters it. */
export function holdLingering(giveBack: () => void): () => void {
  lingering.add(giveBack);
  return () => void lingering.delete(giveBack);
}

/** Descriptors the file sources hold now. */
export function heldFileDescriptors(): number {
  return held;
}

/**
 * Throws when the file sources already hold all the descriptors their budget allows: the
 * tailer says so (as its error, with the fix) and tries again at its next poll, and the
 * descriptors the rest of the agent needs stay free.
 */
export function checkFileBudget(): void {
  const b = fileBudget();
  if (b === null) return;
  // a rotated file kept open for late writes never takes the place of a file to read
  for (const giveBack of lingering) {
    if (held < b.files) break;
    giveBack();
  }
  if (held < b.files) return;
  throw Object.assign(
    new Error(
      `not opened: the file sources hold ${b.files} files open, all that the agent's open-file limit allows them (ulimit -n ${b.limit}, less ${b.reserve} kept for its buffer and connection); ` +
        'raise LimitNOFILE in the cortex-agent unit (or ulimit -n) and restart the agent, or match fewer files',
    ),
    { code: 'EMFILE' },
  );
}

/** The file a tailer has open and where it is in it: what its position records. */
export class FileCursor {
  fd: number | null = null;
  ident: Identity | null = null;
  /** First byte not yet committed. */
  offset = 0;
  /** Parts of the current (over-long) line already committed at `offset`. */
  part = 0;
  fpLen = 0;
  fp: string | null = null;
  /** Size seen at the last read (copytruncate loss estimate). */
  lastSize = 0;

  /** Now reading `fd` (with stats `st`) from its start. */
  openAt(st: fs.Stats, fd: number): void {
    this.close();
    this.fd = fd;
    held++;
    this.ident = { dev: st.dev, ino: st.ino };
    this.lastSize = st.size;
    this.rewind();
  }

  /**
   * A cursor holding this one's file and place; this one is left without a file. The descriptor
   * is not closed and stays counted (held): it moved (a rotated file kept open, ./tailer.ts).
   */
  handOver(): FileCursor {
    const c = new FileCursor();
    c.fd = this.fd;
    c.ident = this.ident;
    c.offset = this.offset;
    c.part = this.part;
    c.fpLen = this.fpLen;
    c.fp = this.fp;
    c.lastSize = this.lastSize;
    this.fd = null;
    return c;
  }

  /** Back to the start of the file: offset 0, nothing fingerprinted. */
  rewind(): void {
    this.offset = 0;
    this.part = 0;
    this.fpLen = 0;
    this.fp = null;
  }

  resumeAt(p: FilePosition): void {
    this.offset = p.offset;
    this.part = p.part ?? 0;
    this.fpLen = p.fp_len;
    this.fp = p.fp;
  }

  position(): FilePosition {
    return { dev: this.ident!.dev, ino: this.ident!.ino, fp: this.fp, fp_len: this.fpLen, offset: this.offset, part: this.part };
  }

  /** Sets fp/fpLen for the current file and offset (first min(offset, 1 KiB) bytes). */
  updateFingerprint(): void {
    const want = Math.min(this.offset, FINGERPRINT_BYTES);
    if (want <= this.fpLen || this.fd === null) return;
    const pre = readPrefix(this.fd, want);
    this.fpLen = pre.length;
    this.fp = fingerprint(pre);
  }

  /** The first bytes fingerprinted are no longer what the file starts with (copytruncate and rewritten). */
  prefixChanged(): boolean {
    return this.fpLen > 0 && fingerprint(readPrefix(this.fd!, this.fpLen)) !== this.fp;
  }

  /** Is the file at the path (stats `st`, null: none) still the open one? */
  isAt(st: fs.Stats | null): boolean {
    return st !== null && st.ino === this.ident!.ino && st.dev === this.ident!.dev;
  }

  close(): void {
    if (this.fd !== null) {
      held--;
      try {
        fs.closeSync(this.fd);
      } catch {
        // already closed
      }
    }
    this.fd = null;
  }
}

/**
 * What a copytruncate lost: the lines and bytes the copy holds beyond the cursor's
 * offset when the copy is found, else the bytes seen beyond it at the last read and a
 * line count estimated from the average line length read so far (100 bytes before any).
 */
export function truncationLoss(path: string, cur: FileCursor, linesRead: number, bytesRead: number): { bytes: number; lines: number; estimated: boolean } {
  const copy = cur.fpLen > 0 ? findCopy(path, cur.ident?.ino ?? null, cur.offset, cur.fpLen, cur.fp) : null;
  if (copy !== null) return { ...copy, estimated: false };
  const bytes = Math.max(0, cur.lastSize - cur.offset);
  if (bytes === 0) return { bytes, lines: 0, estimated: true };
  const avg = linesRead > 0 ? Math.max(1, bytesRead / linesRead) : 100;
  return { bytes, lines: Math.max(1, Math.round(bytes / avg)), estimated: true };
}
