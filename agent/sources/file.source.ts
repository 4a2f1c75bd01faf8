// The `file` log source (DESIGN.md 5.12, DECISIONS.md D5–D12).
//
// One FileTailer follows one path under one buffer key. Its position
//   {dev, ino, fp, fp_len, offset, part}
// is committed with the entries read up to `offset` in the same buffer transaction, so
// after a crash the file is re-read from exactly the first byte not stored. `fp` is a
// hash of the file's first fp_len = min(offset, 1024) bytes — bytes already read, which
// an appended file never changes — so a reused inode is caught even for short files.
//
// Reading is synchronous and chunked: each tick reads 256 KiB chunks from `offset`,
// turns the complete lines of a chunk into entries and commits them with one append.
// A trailing partial line is not consumed: the next read starts at it again (so nothing
// is held in memory across ticks; a crash loses nothing). A line longer than 65536 code
// points is cut into parts of exactly 65536 code points, committed as they arrive
// (`part` in the position counts parts already committed of the current line).
//
// Rotation: each tick stats the path. If it names another file (or none), the open
// descriptor is drained to EOF; once it has stopped growing for one poll, a held
// partial line is flushed as a line, the descriptor closed and the new file at the
// path read from offset 0. Copytruncate (same identity, size < offset, or the first
// bytes changed): reading restarts at 0; bytes the copy holds beyond our offset are
// counted as lost (from the copy when found in the folder, else estimated).

import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { LIMITS, type LogSourceConfig } from '@cortex/agent-protocol';
import { BufferStorageError } from '../buffer/errors.js';
import type { JsonValue, NewLogEntry } from '../buffer/entry.js';
import { METADATA_DROPPED, parseLine } from './syslog-parse.js';
import {
  SourceConfigError,
  type LogSourceRunner,
  type SourceDeps,
  type SourceLogger,
  type SourceRunnerStatus,
  type SourceSink,
  silentLogger,
  sinkFromBuffer,
} from './types.js';

/** last_error prefix of lines sent degraded (kept until the next error: it is not cleared by a good read). */
const DEGRADED = 'degraded:';

export const MAX_MESSAGE_CODE_POINTS = 65536;
export const FINGERPRINT_BYTES = 1024;
const DEFAULT_CHUNK = 256 * 1024;
/** A full read buffer must always hold more than one maximal part (65536 four-byte code points). */
const MIN_READ = MAX_MESSAGE_CODE_POINTS * 4 + 16;
const MAX_CHUNKS_PER_TICK = 8;

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

export function isFilePosition(v: JsonValue | null | undefined): v is FilePosition {
  return (
    typeof v === 'object' && v !== null && !Array.isArray(v) &&
    typeof v.dev === 'number' && typeof v.ino === 'number' && typeof v.offset === 'number' && typeof v.fp_len === 'number'
  );
}

function fingerprint(buf: Buffer): string | null {
  return buf.length === 0 ? null : createHash('sha256').update(buf).digest('hex').slice(0, 32);
}

function readPrefix(fd: number, len: number): Buffer {
  const b = Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const n = fs.readSync(fd, b, got, len - got, got);
    if (n === 0) break;
    got += n;
  }
  return b.subarray(0, got);
}

/**
 * Byte index after up to `max` code points of s[a, b), as a WHATWG UTF-8 decoder would
 * count them at most (an invalid byte counts as one). Stops before an incomplete sequence
 * at `b`. Returns [end, codePoints].
 */
export function utf8Advance(s: Buffer, a: number, b: number, max: number): [number, number] {
  let i = a;
  let n = 0;
  while (i < b && n < max) {
    const c = s[i]!;
    let len = 1;
    if (c >= 0x80) {
      let lo = 0x80, hi = 0xbf;
      if (c >= 0xc2 && c <= 0xdf) len = 2;
      else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c === 0xe0) lo = 0xa0;
        else if (c === 0xed) hi = 0x9f;
      } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c === 0xf0) lo = 0x90;
        else if (c === 0xf4) hi = 0x8f;
      } else len = 0; // invalid lead byte
      if (len > 0) {
        if (i + len > b) {
          // possibly incomplete at the end: check what is there
          let ok = true;
          for (let k = 1; i + k < b; k++) {
            const d = s[i + k]!;
            if (k === 1 ? d < lo || d > hi : d < 0x80 || d > 0xbf) ok = false;
          }
          if (ok) break;
          len = 1;
        } else {
          for (let k = 1; k < len; k++) {
            const d = s[i + k]!;
            if (k === 1 ? d < lo || d > hi : d < 0x80 || d > 0xbf) {
              len = 1;
              break;
            }
          }
        }
      } else len = 1;
    }
    i += len;
    n++;
  }
  return [i, n];
}

/** Splits a string into pieces of at most `max` code points. */
export function splitCodePoints(s: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        if (count === max) {
          out.push(s.slice(start, i));
          start = i;
          count = 0;
        }
        i++;
        count++;
        continue;
      }
    }
    if (count === max) {
      out.push(s.slice(start, i));
      start = i;
      count = 0;
    }
    count++;
  }
  out.push(s.slice(start));
  return out;
}

function countCodePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** Validates `filter`: a JavaScript regular expression source (no flags), applied to each raw line. */
export function compileFilter(filter: string | null | undefined): RegExp | null {
  if (filter === undefined || filter === null || filter === '') return null;
  try {
    return new RegExp(filter);
  } catch (err) {
    throw new SourceConfigError(`filter ${JSON.stringify(filter)} is not a valid JavaScript regular expression: ${(err as Error).message}`);
  }
}

interface Identity {
  dev: number;
  ino: number;
}

export interface TailerOptions {
  path: string;
  key: string;
  filter: RegExp | null;
  labels: Record<string, string> | null;
  sink: SourceSink;
  logger: SourceLogger;
  clock: () => number;
  pollMs: number;
  chunkBytes: number;
  watch: boolean;
  retryMinMs: number;
  retryMaxMs: number;
  rotateQuietPolls: number;
  /** Look for a file rotated away while the agent was stopped (same folder, same dev/ino). Off inside globs. */
  findRotated: boolean;
  /** Position to use when nothing is stored under the key (globs: a rotated file already read under another name). */
  initial?: FilePosition | null;
  /** Called after every commit and close with the committed position (globs track identities). */
  onPosition?: (pos: FilePosition, open: boolean) => void;
  /**
   * `start_at: "end"`: a file never seen before that is already there when the source
   * starts is read from its end (after its last complete line). A file that appears later
   * and a file with a stored position are read as usual.
   */
  startAtEnd?: boolean;
}

type Counters = Pick<SourceRunnerStatus, 'lines_read' | 'bytes_read' | 'lines_filtered' | 'lines_lost' | 'bytes_lost' | 'lost_estimated' | 'truncations' | 'rotations' | 'lines_split'>;

export class FileTailer implements LogSourceRunner {
  readonly kind = 'file' as const;
  readonly key: string;
  readonly path: string;
  private readonly o: TailerOptions;
  private readBuf: Buffer;

  private fd: number | null = null;
  private ident: Identity | null = null;
  private offset = 0;
  private part = 0;
  private fpLen = 0;
  private fp: string | null = null;
  /** Size seen at the last read (copytruncate loss estimate). */
  private lastSize = 0;
  private draining = false;
  private quietPolls = 0;
  private opened = false; // the first open consults the stored position
  private presentAtStart = false; // a file was at the path when start() ran (start_at)

  private started = false;
  private stopped = false;
  private paused = false;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private watcher: fs.FSWatcher | null = null;
  private retryMs = 0;
  private lastError: string | null = null;
  private state: SourceRunnerStatus['state'] = 'idle';
  private committed: FilePosition | null = null;
  private readonly c: Counters = {
    lines_read: 0, bytes_read: 0, lines_filtered: 0, lines_lost: 0, bytes_lost: 0,
    lost_estimated: false, truncations: 0, rotations: 0, lines_split: 0,
  };
  /** Lines whose metadata broke a contract cap: sent as plain text with a marker (DECISIONS H2). */
  private linesDegraded = 0;

  constructor(options: TailerOptions) {
    this.o = options;
    this.key = options.key;
    this.path = options.path;
    this.readBuf = Buffer.allocUnsafe(Math.max(options.chunkBytes, MIN_READ));
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.state = 'waiting';
    if (this.o.startAtEnd === true) this.presentAtStart = fs.existsSync(this.path);
    this.ensureWatch();
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.state = 'stopped';
    this.clearTimers();
    this.watcher?.close();
    this.watcher = null;
    this.closeFd();
  }

  pause(): void {
    this.paused = true;
    this.state = 'paused';
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.retryMs = 0;
    this.kick();
  }

  /** Read now instead of at the next poll. */
  kick(): void {
    if (!this.started || this.stopped || this.immediate !== null) return;
    this.immediate = setImmediate(() => {
      this.immediate = null;
      this.run();
    });
  }

  status(): SourceRunnerStatus {
    return {
      kind: 'file', key: this.key, path: this.path, name: null, state: this.state,
      position: this.committed, last_error: this.lastError, ...this.c, lines_degraded: this.linesDegraded,
    };
  }

  // ---- scheduling -------------------------------------------------------------

  private clearTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, ms);
    this.timer.unref?.();
  }

  private ensureWatch(): void {
    if (!this.o.watch || this.watcher !== null || this.stopped) return;
    const base = basename(this.path);
    try {
      this.watcher = fs.watch(dirname(this.path), { persistent: false }, (_ev, name) => {
        if (name === null || name === base || String(name) === base) this.kick();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null;
      });
    } catch {
      this.watcher = null; // folder missing: polling still runs; retried each tick
    }
  }

  private run(): void {
    if (this.stopped) return;
    if (this.paused) {
      this.schedule(this.o.pollMs);
      return;
    }
    let more = false;
    try {
      this.ensureWatch();
      more = this.tick();
      this.retryMs = 0;
      if (this.lastError !== null && !this.lastError.startsWith('lost ') && !this.lastError.startsWith(DEGRADED)) this.lastError = null;
    } catch (err) {
      if (err instanceof BufferStorageError) {
        this.retryMs = Math.min(this.o.retryMaxMs, this.retryMs === 0 ? this.o.retryMinMs : this.retryMs * 2);
        this.lastError = err.message;
        if (this.state !== 'retrying') this.o.logger.warn({ source: this.key, kind: err.kind }, `file source paused: buffer cannot store (${err.message}); retrying`);
        this.state = 'retrying';
        this.schedule(this.retryMs);
        return;
      }
      const e = err as NodeJS.ErrnoException;
      const msg = `${this.path}: ${e.code ?? ''} ${e.message}`.trim();
      if (msg !== this.lastError) this.o.logger.error({ source: this.key, code: e.code }, `file source error: ${msg}`);
      this.lastError = msg;
      this.state = 'error';
      this.closeFd();
      this.opened = true; // re-open later from the committed position, identity checked
    }
    if (more) this.kick();
    else this.schedule(this.o.pollMs);
  }

  // ---- the work ---------------------------------------------------------------

  private closeFd(): void {
    if (this.fd !== null) {
      try {
        fs.closeSync(this.fd);
      } catch {
        // already closed
      }
    }
    this.fd = null;
  }

  private statPath(): fs.Stats | null {
    try {
      return fs.statSync(this.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw err;
    }
  }

  private position(): FilePosition {
    return { dev: this.ident!.dev, ino: this.ident!.ino, fp: this.fp, fp_len: this.fpLen, offset: this.offset, part: this.part };
  }

  /** Sets fp/fpLen for the current file and offset (first min(offset, 1 KiB) bytes). */
  private updateFingerprint(): void {
    const want = Math.min(this.offset, FINGERPRINT_BYTES);
    if (want <= this.fpLen || this.fd === null) return;
    const pre = readPrefix(this.fd, want);
    this.fpLen = pre.length;
    this.fp = fingerprint(pre);
  }

  private commit(entries: NewLogEntry[], offset: number, part: number): void {
    const prevOffset = this.offset, prevPart = this.part, prevLen = this.fpLen, prevFp = this.fp;
    this.offset = offset;
    this.part = part;
    this.updateFingerprint();
    const pos = this.position();
    try {
      const r = this.o.sink.append(entries, { source: this.key, position: pos });
      if (r.degraded !== undefined && r.degraded.metadata > 0) this.degraded(r.degraded.metadata, 'metadata past the contract caps');
    } catch (err) {
      this.offset = prevOffset;
      this.part = prevPart;
      this.fpLen = prevLen;
      this.fp = prevFp;
      throw err;
    }
    this.committed = pos;
    this.o.onPosition?.(pos, true);
  }

  /** Counts lines sent degraded and says so in status and (once per kind of reason) in the log. */
  private degraded(lines: number, why: string): void {
    this.linesDegraded += lines;
    const msg = `${DEGRADED} ${this.linesDegraded} line(s) sent as plain text with metadata {"${METADATA_DROPPED}": …}; last: ${why}`;
    if (this.lastError === null || !this.lastError.endsWith(why)) this.o.logger.warn({ source: this.key, lines: this.linesDegraded }, msg);
    this.lastError = msg;
  }

  private openFresh(st: fs.Stats, fd: number): void {
    this.fd = fd;
    this.ident = { dev: st.dev, ino: st.ino };
    this.offset = 0;
    this.part = 0;
    this.fpLen = 0;
    this.fp = null;
    this.lastSize = st.size;
    this.draining = false;
    this.quietPolls = 0;
  }

  /** Opens the file at the path; on the first open, resumes from the stored position when it is the same file. */
  private openPath(): boolean {
    const st = this.statPath();
    if (st === null) {
      this.state = 'waiting';
      return false;
    }
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
    const fd = fs.openSync(this.path, 'r');
    const fst = fs.fstatSync(fd);
    this.openFresh(fst, fd);
    this.state = 'reading';
    if (this.opened) {
      // A new file at the path (after rotation, deletion or an error): from its start.
      const stored = this.o.sink.position(this.key);
      if (isFilePosition(stored) && this.sameFile(stored, fst, fd)) this.resumeAt(stored);
      return true;
    }
    this.opened = true;
    let stored: JsonValue | null = this.o.sink.position(this.key);
    if (!isFilePosition(stored) && this.o.initial) stored = this.o.initial;
    if (!isFilePosition(stored)) {
      if (this.o.startAtEnd === true && this.presentAtStart) this.skipToEnd(fd, fst.size);
      return true; // never seen: from the beginning (start_at "beginning", the default)
    }
    if (stored.dev === fst.dev && stored.ino === fst.ino) {
      if (stored.offset > fst.size) {
        this.c.truncations++;
        this.o.logger.warn({ source: this.key, offset: stored.offset, size: fst.size }, 'file was truncated while the agent was stopped; reading from its start (lines unread at the truncation are lost, count unknown)');
        this.commitTruncationPosition();
        return true;
      }
      if (this.prefixMatches(stored, fd)) {
        this.resumeAt(stored);
        return true;
      }
      this.o.logger.info({ source: this.key, ino: fst.ino }, 'same inode but different content (inode reused): reading the new file from its start');
      return true;
    }
    // Another file at the path: was ours rotated away while we were stopped?
    if (this.o.findRotated) {
      const old = this.findByIdentity(stored);
      if (old !== null) {
        fs.closeSync(fd);
        this.openFresh(old.st, old.fd);
        this.resumeAt(stored);
        this.draining = true;
        this.state = 'draining';
        this.c.rotations++;
        this.o.logger.info({ source: this.key, rotated_to: old.path }, 'file was rotated while the agent was stopped; finishing the rotated file first');
      }
    }
    return true;
  }

  private resumeAt(p: FilePosition): void {
    this.offset = p.offset;
    this.part = p.part ?? 0;
    this.fpLen = p.fp_len;
    this.fp = p.fp;
    this.committed = p;
  }

  private sameFile(p: FilePosition, st: fs.Stats, fd: number): boolean {
    return p.dev === st.dev && p.ino === st.ino && p.offset <= st.size && this.prefixMatches(p, fd);
  }

  private prefixMatches(p: FilePosition, fd: number): boolean {
    if (p.fp_len === 0) return true;
    return fingerprint(readPrefix(fd, p.fp_len)) === p.fp;
  }

  private findByIdentity(p: FilePosition): { path: string; st: fs.Stats; fd: number } | null {
    let names: string[];
    try {
      names = fs.readdirSync(dirname(this.path));
    } catch {
      return null;
    }
    for (const name of names) {
      const full = join(dirname(this.path), name);
      try {
        const st = fs.statSync(full);
        if (st.ino !== p.ino || st.dev !== p.dev || !st.isFile() || st.size < p.offset) continue;
        const fd = fs.openSync(full, 'r');
        if (this.prefixMatches(p, fd)) return { path: full, st: fs.fstatSync(fd), fd };
        fs.closeSync(fd);
      } catch {
        // raced with a rename; skip
      }
    }
    return null;
  }

  /**
   * start_at "end": the position becomes the end of the last complete line (a last line
   * still being written is read whole), committed at once so a restart resumes there
   * instead of skipping again what was written in between.
   */
  private skipToEnd(fd: number, size: number): void {
    let offset = size;
    if (size > 0) {
      const len = Math.min(size, 64 * 1024);
      const tail = Buffer.alloc(len);
      const n = fs.readSync(fd, tail, 0, len, size - len);
      const nl = tail.subarray(0, n).lastIndexOf(0x0a);
      if (nl >= 0) offset = size - len + nl + 1;
      else if (size <= len) offset = 0; // one line, still being written: read it whole
    }
    if (offset === 0) return;
    try {
      this.commit([], offset, 0);
    } catch {
      // the next read commits it with its entries
      this.offset = offset;
      this.updateFingerprint();
    }
    this.o.logger.info({ source: this.key, offset }, 'start_at "end": a file never seen before is read from its end');
  }

  private commitTruncationPosition(): void {
    this.offset = 0;
    this.part = 0;
    this.fpLen = 0;
    this.fp = null;
    try {
      this.commit([], 0, 0);
    } catch {
      // the next read commits it with its entries
    }
  }

  /** Copytruncate: count what the copy holds beyond our offset, then restart at 0. */
  private onTruncated(size: number, reason: string): void {
    let lostBytes = Math.max(0, this.lastSize - this.offset);
    let lostLines = 0;
    let estimated = true;
    const copy = this.fpLen > 0 ? this.findCopy() : null;
    if (copy !== null) {
      lostBytes = copy.bytes;
      lostLines = copy.lines;
      estimated = false;
    } else if (lostBytes > 0) {
      const avg = this.c.lines_read > 0 ? Math.max(1, this.c.bytes_read / this.c.lines_read) : 100;
      lostLines = Math.max(1, Math.round(lostBytes / avg));
    }
    this.c.truncations++;
    this.c.lines_lost += lostLines;
    this.c.bytes_lost += lostBytes;
    if (estimated && lostBytes > 0) this.c.lost_estimated = true;
    if (lostLines > 0) this.lastError = `lost ${this.c.lines_lost} line(s) unread at copytruncate`;
    this.o.logger.warn(
      { source: this.key, offset: this.offset, size, lost_lines: lostLines, lost_bytes: lostBytes, estimated },
      `file truncated in place (${reason}); reading from its start${lostLines > 0 ? `; ${lostLines} line(s) unread at the truncation are lost` : ''}`,
    );
    this.part = 0;
    this.commitTruncationPosition();
    this.lastSize = size;
  }

  /** The copy logrotate made: same first bytes, another inode, at least `offset` long. */
  private findCopy(): { bytes: number; lines: number } | null {
    const dir = dirname(this.path);
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return null;
    }
    const base = basename(this.path);
    for (const name of names) {
      if (name === base || !name.startsWith(base)) continue;
      const full = join(dir, name);
      let fd: number | null = null;
      try {
        const st = fs.statSync(full);
        if (!st.isFile() || st.ino === this.ident?.ino || st.size < this.offset) continue;
        fd = fs.openSync(full, 'r');
        if (fingerprint(readPrefix(fd, this.fpLen)) !== this.fp) continue;
        const bytes = st.size - this.offset;
        let lines = 0;
        const b = Buffer.allocUnsafe(1 << 20);
        let pos = this.offset;
        let last = 10;
        while (pos < st.size && pos - this.offset < 64 * 1024 * 1024) {
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

  /** One poll: returns true when more data is waiting (read again at once). */
  private tick(): boolean {
    if (this.fd === null) {
      if (!this.openPath()) return false;
    }
    if (!this.draining) {
      const st = this.statPath();
      if (st === null || st.ino !== this.ident!.ino || st.dev !== this.ident!.dev) {
        this.draining = true;
        this.quietPolls = 0;
        this.state = 'draining';
        this.c.rotations++;
        this.o.logger.info({ source: this.key, gone: st === null }, st === null ? 'file deleted or moved away; finishing it' : 'file rotated; finishing the old file before the new one');
      } else {
        const fst = fs.fstatSync(this.fd!);
        if (fst.size < this.offset) this.onTruncated(fst.size, 'size below offset');
        else if (fst.size > this.offset && this.fpLen > 0 && fingerprint(readPrefix(this.fd!, this.fpLen)) !== this.fp) {
          this.onTruncated(fst.size, 'first bytes changed');
        }
      }
    }
    const fst = fs.fstatSync(this.fd!);
    const grew = fst.size !== this.lastSize;
    this.lastSize = fst.size;
    const more = this.readAvailable(fst.size);
    if (more) return true;
    if (this.draining) {
      if (grew) this.quietPolls = 0;
      else if (++this.quietPolls > this.o.rotateQuietPolls) {
        this.flushPartial(fst.size);
        this.o.onPosition?.(this.position(), false);
        this.closeFd();
        this.draining = false;
        this.state = 'waiting';
        return this.openPath();
      }
      return false;
    }
    this.state = 'reading';
    return false;
  }

  /** Reads and commits complete lines up to `size` (at most MAX_CHUNKS_PER_TICK chunks); true if more is left. */
  private readAvailable(size: number): boolean {
    for (let chunks = 0; chunks < MAX_CHUNKS_PER_TICK; chunks++) {
      if (this.offset >= size) return false;
      const want = Math.min(this.readBuf.length, size - this.offset);
      const n = fs.readSync(this.fd!, this.readBuf, 0, want, this.offset);
      if (n === 0) return false;
      const consumed = this.processChunk(this.readBuf, n, false);
      if (consumed === 0) return false; // only a partial line left
    }
    return true;
  }

  /** Flushes a partial last line of a file rotated away (it will never get its newline). */
  private flushPartial(size: number): void {
    if (this.offset >= size) return;
    const len = size - this.offset;
    const b = Buffer.allocUnsafe(len);
    const n = fs.readSync(this.fd!, b, 0, len, this.offset);
    this.processChunk(b, n, true);
  }

  private entry(message: string, nowMs: number, nowIso: string, parse: boolean, split: { part: number; more: boolean } | null): NewLogEntry {
    const p = parse ? parseLine(message, nowMs, nowIso) : null;
    const dropped = p?.metadata?.[METADATA_DROPPED];
    if (typeof dropped === 'string') {
      this.degraded(1, dropped === 'depth' ? `JSON nested deeper than metadata_max_depth = ${LIMITS.metadata_max_depth}` : `JSON metadata larger than metadata_max_bytes = ${LIMITS.metadata_max_bytes}`);
    }
    // The parser's metadata object is fresh for every line: extended in place.
    let metadata: Record<string, unknown> | null = p?.metadata ?? null;
    if (this.o.labels !== null || split !== null) {
      if (metadata === null) metadata = {};
      if (this.o.labels !== null) metadata.labels = this.o.labels;
      if (split !== null) metadata.split = split;
    }
    // Optional fields that are null are left out: smaller entries, same meaning (schema: optional).
    const e: NewLogEntry = { ts: p?.ts ?? nowIso, severity: p?.severity ?? 'info', message: p?.message ?? message, source: this.key };
    if (p !== null) {
      if (p.facility !== null) e.facility = p.facility;
      if (p.app_name !== null) e.app_name = p.app_name;
      if (p.process_id !== null) e.process_id = p.process_id;
    }
    if (metadata !== null) e.metadata = metadata;
    return e;
  }

  /**
   * Turns buf[0, n) (file bytes from this.offset) into entries and commits them; returns
   * the bytes consumed. `final`: the tail without a newline is a line too.
   */
  private processChunk(buf: Buffer, n: number, final: boolean): number {
    const nowMs = this.o.clock();
    const nowIso = new Date(nowMs).toISOString();
    const entries: NewLogEntry[] = [];
    const filter = this.o.filter;
    let pos = 0;
    let part = this.part;
    let lines = 0;
    const emit = (text: string, split: { part: number; more: boolean } | null): void => {
      if (filter !== null && !filter.test(text)) {
        this.c.lines_filtered++;
        return;
      }
      entries.push(this.entry(text, nowMs, nowIso, split === null, split));
    };
    const lineDone = (a: number, b: number): void => {
      let end = b;
      if (end > a && buf[end - 1] === 13) end--;
      lines++;
      if (part === 0 && end - a <= MAX_MESSAGE_CODE_POINTS) {
        if (end === a) return; // empty line: skipped (D9)
        emit(buf.toString('utf8', a, end), null);
        return;
      }
      let text = buf.toString('utf8', a, end);
      if (part === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (part === 0 && countCodePoints(text) <= MAX_MESSAGE_CODE_POINTS) {
        if (text.length > 0) emit(text, null);
        return;
      }
      const pieces = text.length === 0 ? [] : splitCodePoints(text, MAX_MESSAGE_CODE_POINTS);
      if (part === 0) this.c.lines_split++;
      for (let k = 0; k < pieces.length; k++) emit(pieces[k]!, { part: part + k + 1, more: k < pieces.length - 1 });
      part = 0;
    };
    for (;;) {
      const nl = buf.indexOf(10, pos);
      if (nl < 0 || nl >= n) break;
      lineDone(pos, nl);
      pos = nl + 1;
    }
    if (final && pos < n) {
      lineDone(pos, n);
      pos = n;
    } else if (n - pos > MAX_MESSAGE_CODE_POINTS) {
      // A line still without its newline, longer than one part: commit whole parts now,
      // always leaving at least one code point for the last part.
      for (;;) {
        const [end, cps] = utf8Advance(buf, pos, n, MAX_MESSAGE_CODE_POINTS + 1);
        if (cps <= MAX_MESSAGE_CODE_POINTS) break;
        const [cut] = utf8Advance(buf, pos, end, MAX_MESSAGE_CODE_POINTS);
        if (part === 0) this.c.lines_split++;
        part++;
        emit(buf.toString('utf8', pos, cut), { part, more: true });
        pos = cut;
      }
    }
    if (pos === 0) return 0;
    this.commit(entries, this.offset + pos, part);
    this.c.lines_read += lines;
    this.c.bytes_read += pos;
    return pos;
  }
}

// ---- globs ----------------------------------------------------------------------

export function isGlob(path: string): boolean {
  return /[*?]/.test(basename(path));
}

function globRegex(pattern: string): RegExp {
  let re = '^';
  for (const ch of pattern) {
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${re}$`);
}

/**
 * `*` and `?` in the last path component: every matching regular file gets its own
 * FileTailer under `file:<real path>`; the folder is listed every poll (and on fs.watch
 * events) so new files are picked up. A file whose identity another tailer of this glob
 * holds open is left alone until that tailer has finished it, then starts at the offset
 * that tailer reached (rotation to a name the glob also matches: no duplicates).
 */
export class GlobFileSource implements LogSourceRunner {
  readonly kind = 'file' as const;
  readonly key: string;
  private readonly tailers = new Map<string, FileTailer>();
  private readonly openIdents = new Map<string, string>(); // "dev:ino" → real path holding it
  private readonly seen = new Map<string, FilePosition>();
  private readonly dir: string;
  private readonly re: RegExp;
  private timer: NodeJS.Timeout | null = null;
  private watcher: fs.FSWatcher | null = null;
  private started = false;
  private stopped = false;
  private paused = false;
  private lastError: string | null = null;
  private seeded = false;

  constructor(
    readonly pattern: string,
    private readonly make: (path: string, key: string, extra: Partial<TailerOptions>) => FileTailer,
    private readonly pollMs: number,
    private readonly watch: boolean,
    private readonly stored: (key: string) => FilePosition | null,
  ) {
    this.key = `file:${pattern}`;
    this.dir = dirname(pattern);
    this.re = globRegex(basename(pattern));
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.scan();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.watcher?.close();
    await Promise.all([...this.tailers.values()].map((t) => t.stop()));
  }

  pause(): void {
    this.paused = true;
    for (const t of this.tailers.values()) t.pause();
  }

  resume(): void {
    this.paused = false;
    for (const t of this.tailers.values()) t.resume();
  }

  status(): SourceRunnerStatus {
    const files = [...this.tailers.values()].map((t) => t.status());
    const sum = (k: 'lines_read' | 'bytes_read' | 'lines_filtered' | 'lines_lost' | 'bytes_lost' | 'truncations' | 'rotations' | 'lines_split') =>
      files.reduce((a, f) => a + f[k], 0);
    const position: Record<string, JsonValue> = {};
    for (const f of files) if (f.position !== null) position[f.key] = f.position;
    return {
      kind: 'file', key: this.key, path: this.pattern, name: null,
      state: this.stopped ? 'stopped' : this.paused ? 'paused' : 'reading',
      position, last_error: this.lastError ?? files.find((f) => f.last_error !== null)?.last_error ?? null,
      lines_read: sum('lines_read'), bytes_read: sum('bytes_read'), lines_filtered: sum('lines_filtered'),
      lines_lost: sum('lines_lost'), bytes_lost: sum('bytes_lost'), lost_estimated: files.some((f) => f.lost_estimated),
      truncations: sum('truncations'), rotations: sum('rotations'), lines_split: sum('lines_split'),
      lines_degraded: files.reduce((a, f) => a + (f.lines_degraded ?? 0), 0), files,
    };
  }

  private onPosition(realPath: string, p: FilePosition, open: boolean): void {
    const id = `${p.dev}:${p.ino}`;
    this.seen.set(id, p);
    if (open) this.openIdents.set(id, realPath);
    else if (this.openIdents.get(id) === realPath) this.openIdents.delete(id);
  }

  private scan(): void {
    if (this.stopped) return;
    try {
      if (this.watch && this.watcher === null) {
        try {
          this.watcher = fs.watch(this.dir, { persistent: false }, () => {
            if (this.timer) clearTimeout(this.timer);
            this.timer = setTimeout(() => this.scan(), 10);
            this.timer.unref?.();
          });
          this.watcher.on('error', () => {
            this.watcher?.close();
            this.watcher = null;
          });
        } catch {
          this.watcher = null;
        }
      }
      let names: string[] = [];
      try {
        names = fs.readdirSync(this.dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      const matches: { real: string; st: fs.Stats }[] = [];
      for (const name of names.sort()) {
        if (!this.re.test(name)) continue;
        try {
          const real = fs.realpathSync(join(this.dir, name));
          const st = fs.statSync(real);
          if (st.isFile()) matches.push({ real, st });
        } catch {
          // vanished between readdir and stat
        }
      }
      const firstScan = !this.seeded;
      if (!this.seeded) {
        // Positions stored for the current matches: a file rotated to another matching
        // name while we were stopped resumes where its old name left off.
        this.seeded = true;
        for (const m of matches) {
          const p = this.stored(`file:${m.real}`);
          if (p !== null) this.seen.set(`${p.dev}:${p.ino}`, p);
        }
      }
      for (const m of matches) {
        if (this.tailers.has(m.real)) continue;
        const id = `${m.st.dev}:${m.st.ino}`;
        if (this.openIdents.has(id)) continue; // another tailer is still finishing it
        const known = this.seen.get(id) ?? null;
        const t = this.make(m.real, `file:${m.real}`, {
          initial: known,
          findRotated: false,
          onPosition: (p, open) => this.onPosition(m.real, p, open),
          // start_at "end" skips only the files that were there when the source started
          ...(firstScan ? {} : { startAtEnd: false }),
        });
        this.tailers.set(m.real, t);
        if (this.paused) t.pause();
        t.start();
      }
      this.lastError = null;
    } catch (err) {
      this.lastError = `${this.pattern}: ${(err as Error).message}`;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.scan(), this.pollMs);
    this.timer.unref?.();
  }
}

// ---- factory --------------------------------------------------------------------

/** Builds the runner for one `file` config: a FileTailer, or a GlobFileSource for `*`/`?` in the last component. Throws SourceConfigError. */
export function createFileSource(config: LogSourceConfig, deps: SourceDeps): LogSourceRunner {
  const path = config.path;
  if (typeof path !== 'string' || path.length === 0) throw new SourceConfigError('file source needs `path`');
  if (!path.startsWith('/')) throw new SourceConfigError(`file source path must be absolute: ${JSON.stringify(path)}`);
  if (/[*?]/.test(dirname(path))) throw new SourceConfigError(`glob characters are supported in the last path component only: ${JSON.stringify(path)}`);
  const filter = compileFilter(config.filter);
  const sink = deps.sink ?? (deps.buffer ? sinkFromBuffer(deps.buffer) : null);
  if (sink === null) throw new SourceConfigError('createFileSource needs deps.sink or deps.buffer');
  const labels = config.labels && Object.keys(config.labels).length > 0 ? { ...config.labels } : null;
  const pollMs = deps.pollMs ?? 250;
  const watch = deps.watch ?? true;
  const make = (p: string, key: string, extra: Partial<TailerOptions>): FileTailer =>
    new FileTailer({
      path: p, key, filter, labels, sink,
      logger: deps.logger ?? silentLogger,
      clock: deps.clock ?? Date.now,
      pollMs, chunkBytes: deps.chunkBytes ?? DEFAULT_CHUNK, watch,
      retryMinMs: deps.retryMinMs ?? 250, retryMaxMs: deps.retryMaxMs ?? 5000,
      rotateQuietPolls: deps.rotateQuietPolls ?? 1,
      findRotated: true,
      startAtEnd: config.start_at === 'end',
      ...extra,
    });
  if (isGlob(path)) {
    return new GlobFileSource(path, make, pollMs, watch, (key) => {
      const p = sink.position(key);
      return isFilePosition(p) ? p : null;
    });
  }
  return make(path, `file:${path}`, {});
}
