// One file followed under one buffer key (DESIGN.md 5.12, DECISIONS.md D5–D12).
//
// Its position (./identity.ts) is committed with the entries read up to `offset` in the
// same buffer transaction, so after a crash the file is re-read from exactly the first
// byte not stored.
//
// Reading is synchronous and chunked: each tick reads 256 KiB chunks from `offset`,
// turns the complete lines of a chunk into entries (./parse.ts) and commits them with
// one append. A trailing partial line is not consumed: the next read starts at it again
// (so nothing is held in memory across ticks; a crash loses nothing). A line longer than
// 65536 code points is cut into parts of exactly 65536 code points, committed as they
// arrive (`part` in the position counts parts already committed of the current line).
//
// Rotation: each tick stats the path. If it names another file (or none), the open
// descriptor is drained to EOF; once it has stopped growing for one poll, a held
// partial line is flushed as a line, the descriptor closed and the new file at the
// path read from offset 0 — a glob's file from where the glob last read it under any
// of its names (claim: numbered rotation moves files from name to name, DECISIONS D28).
// Copytruncate (same identity, size < offset, or the first bytes changed): reading
// restarts at 0; bytes the copy holds beyond our offset are counted as lost (from the
// copy when found in the folder, else estimated).

import * as fs from 'node:fs';
import { currentUserName } from '../../../common/process.js';
import { BufferStorageError } from '../../buffer/errors.js';
import type { BufferEntry, JsonValue } from '../../buffer/entry.js';
import { METADATA_DROPPED } from '../syslog-parse.js';
import { MAX_MESSAGE_CODE_POINTS } from '../text.js';
import type { LogSourceRunner, SourceLogger, SourceRunnerStatus, SourceSink } from '../types.js';
import { FileCursor, budgetRefusalToSay, checkFileBudget, endOfLastLine, fileBudget, findByIdentity, isFilePosition, notRegular, openRegular, prefixMatches, sameFile, statOrNull, truncationLoss, type FilePosition, type Identity } from './identity.js';
import { SNIFF_BYTES, notTextReason } from './content.js';
import { parseChunk, type FileLineOptions } from './parse.js';
import { Poller } from './poll.js';

/** What to do about a log file this agent may not read: name the user it runs as, and the usual ways in. */
export function permissionHint(path: string): string {
  const user = currentUserName();
  return ` — the agent runs as ${user}, who may not read it: give that user read access to the file and search access to its folders (an ACL: setfacl -m u:${user}:r ${path}, and the source resumes by itself; or a group: usermod -aG adm ${user} — most of /var/log on Debian — then restart the agent)`;
}

/** A file-system error on `path` as a source's last_error: the code, the message, and for a permission error what to do. */
function errorText(path: string, e: NodeJS.ErrnoException): string {
  return `${path}: ${e.code ?? ''} ${e.message}`.trim() + (e.code === 'EACCES' || e.code === 'EPERM' ? permissionHint(path) : '');
}

/** The tailer of each file key now reading it (claimKey). */
const readers = new Map<string, FileTailer>();
const SECOND_READER = 'another file source of this config reads this file already (the same path, or a glob that matches it): each file is read by one source only; this one waits until that one stops — remove one of them from the config';

/** last_error prefix of lines sent degraded (kept until the next error: it is not cleared by a good read). */
const DEGRADED = 'degraded:';

export const DEFAULT_CHUNK = 256 * 1024;
/** A full read buffer must always hold more than one maximal part (65536 four-byte code points). */
const MIN_READ = MAX_MESSAGE_CODE_POINTS * 4 + 16;
/** Idle polls before each step of the idle poll interval (nextPollMs), and its cap as a multiple of pollMs. */
const IDLE_POLLS_PER_STEP = 8;
const IDLE_POLL_MAX_FACTOR = 8;

/**
 * The one read buffer of every tailer in this process. A read and the parse and commit of what
 * it read run in one synchronous call (readAvailable) and keep nothing of the buffer (parseChunk
 * makes strings; a partial last line is read again from the file), so no two tailers ever use it
 * at once. One buffer per tailer held 256 KiB each for as long as the source lived: a glob over
 * 3,000 files kept 750 MB of RSS (eleventh session).
 */
let sharedReadBuf: Buffer | null = null;
export function readBufferOf(bytes: number): Buffer {
  if (sharedReadBuf === null || sharedReadBuf.length < bytes) sharedReadBuf = Buffer.allocUnsafe(bytes);
  return sharedReadBuf;
}

export interface TailerOptions {
  path: string;
  key: `file:${string}`;
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
  /**
   * A single file, at its first open: the position of this very file (same dev/ino) read under
   * another name (../file.source.ts sameFileElsewhere), used when nothing is stored under the key.
   * Committed under the key at once.
   */
  initialOf?: () => FilePosition | null;
  /**
   * A glob's file, asked at every open (the first, and each new file at the path after a
   * rotation) with the file opened and what the key stores: 'wait' — another tailer of the
   * glob holds this file open, or the key's stored position is of a file now under another
   * name of the glob that has not taken it yet (committing here would overwrite the only stored
   * position of it) — or where this very file was read to under any name of the glob (null:
   * nowhere). A position of this file that the key does not hold is resumed and committed under
   * the key at once (DECISIONS D11, D28). On success the file counts as held until onRelease.
   */
  claim?: (st: fs.Stats, stored: FilePosition | null) => 'wait' | FilePosition | null;
  /** A file claimed is closed (read to its end after a rotation, an error, stop). */
  onRelease?: (id: Identity) => void;
  /** Called after every commit with the committed position (globs track identities). */
  onPosition?: (pos: FilePosition) => void;
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
  readonly key: `file:${string}`;
  readonly path: string;
  private readonly o: TailerOptions;
  private readonly lineOptions: FileLineOptions;
  /** Bytes a read asks for (the shared buffer may be larger: another source's chunk size). */
  private readonly readBytes: number;

  private readonly cur = new FileCursor();
  private draining = false;
  /** Polls in a row that found nothing new (nextPollMs). */
  private idlePolls = 0;
  private quietPolls = 0;
  /** While draining: when the old file was last seen growing (this.o.clock()). */
  private grewAt = 0;
  private opened = false; // the first open consults the stored position
  /** The last open waited for the glob (claim): polled at pollMs, not spaced out while idle. */
  private claimWait = false;
  private presentAtStart = false; // a file was at the path when start() ran (start_at)

  private started = false;
  private stopped = false;
  private paused = false;
  private readonly poll: Poller;
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
  /** Why the open file is not read (its first bytes are not text: ./content.ts), null while it is. */
  private notText: string | null = null;
  /** Its size then: a file that shrinks below it (truncated) is looked at again. */
  private notTextSize = 0;
  /** The open file's first bytes were looked at (checkHead). */
  private headChecked = false;
  /** The path cannot be looked at while a file is open (statPath); shown as last_error. */
  private pathProblem: string | null = null;
  /** The real path this single file's path leads to, when another than its key (claimIds). */
  private alias: string | undefined;

  constructor(options: TailerOptions) {
    this.o = options;
    this.key = options.key;
    this.path = options.path;
    this.readBytes = Math.max(options.chunkBytes, MIN_READ);
    this.poll = new Poller(options.path, options.watch, () => this.run());
    this.lineOptions = {
      source: options.key, filter: options.filter, labels: options.labels,
      onFiltered: () => this.c.lines_filtered++,
      onDegraded: (why) => this.degraded(1, why),
    };
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.state = 'waiting';
    if (this.o.startAtEnd === true) this.presentAtStart = fs.existsSync(this.path);
    this.poll.ensureWatch();
    this.poll.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.state = 'stopped';
    this.poll.stop();
    this.closeFile();
    for (const id of [this.key, this.alias]) if (id !== undefined && readers.get(id) === this) readers.delete(id);
  }

  /**
   * One tailer per file key in the process: two sources of one config that name one file
   * (a config stored before the server refused that, a glob reaching the folder through another
   * symlink) would both read it — every line stored twice — and commit under one key (DECISIONS
   * H42). The first keeps reading; the other says so and waits until the first stops.
   */
  private claimKey(): boolean {
    const ids = this.claimIds();
    const other = ids.map((id) => readers.get(id)).find((owner) => owner !== undefined && owner !== this && !owner.stopped);
    if (other === undefined) {
      for (const id of ids) readers.set(id, this);
      if (this.state === 'error' && this.lastError === SECOND_READER) {
        this.lastError = null;
        this.state = 'waiting';
      }
      return true;
    }
    if (this.lastError !== SECOND_READER) this.o.logger.warn({ source: this.key }, `file source not read: ${SECOND_READER}`);
    this.lastError = SECOND_READER;
    this.state = 'error';
    return false;
  }

  /**
   * The names this tailer claims: its key, and for a single file (keyed by the path as given,
   * which may be a symlink that log rotation re-points) also the file's real path, the key a
   * glob gives it — so a file source naming a symlink beside a glob of the real folder reads
   * nothing twice (DECISIONS H42, H50). Looked up at every claim: the link may be re-pointed.
   */
  private claimIds(): string[] {
    if (!this.o.findRotated) return [this.key]; // a glob's file: its key is the real path
    let real: string | undefined;
    try {
      real = `file:${fs.realpathSync(this.path)}`;
    } catch {
      real = undefined; // not there (yet): only the key
    }
    const alias = real !== this.key ? real : undefined;
    if (this.alias !== undefined && this.alias !== alias && readers.get(this.alias) === this) readers.delete(this.alias);
    this.alias = alias;
    return alias === undefined ? [this.key] : [this.key, alias];
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
    if (this.started && !this.stopped) this.poll.kick();
  }

  status(): SourceRunnerStatus {
    const skipped = this.notText !== null && (this.state === 'reading' || this.state === 'draining');
    return {
      kind: 'file', key: this.key, path: this.path, name: null, state: skipped ? 'skipped' : this.state,
      position: this.committed, last_error: skipped ? `not read: ${this.notText}` : (this.lastError ?? this.pathProblem), ...this.c, lines_degraded: this.linesDegraded,
    };
  }

  // ---- the read loop -------------------------------------------------------------

  private run(): void {
    if (this.stopped) return;
    if (this.paused) {
      this.poll.schedule(this.o.pollMs);
      return;
    }
    if (!this.claimKey()) {
      this.poll.schedule(this.o.retryMaxMs);
      return;
    }
    let more = false;
    const seen = this.c.bytes_read + this.c.rotations + this.c.truncations;
    try {
      this.poll.ensureWatch();
      more = this.tick();
      this.idlePolls = this.c.bytes_read + this.c.rotations + this.c.truncations === seen ? this.idlePolls + 1 : 0;
      this.retryMs = 0;
      if (this.lastError !== null && !this.lastError.startsWith('lost ') && !this.lastError.startsWith(DEGRADED)) this.lastError = null;
    } catch (err) {
      if (err instanceof BufferStorageError) {
        this.retryMs = Math.min(this.o.retryMaxMs, this.retryMs === 0 ? this.o.retryMinMs : this.retryMs * 2);
        this.lastError = err.message;
        if (this.state !== 'retrying') this.o.logger.warn({ source: this.key, kind: err.kind }, `file source paused: buffer cannot store (${err.message}); retrying`);
        this.state = 'retrying';
        this.poll.schedule(this.retryMs);
        return;
      }
      const e = err as NodeJS.ErrnoException;
      const msg = errorText(this.path, e) + descriptorHint(e);
      const refused = e.code === 'EMFILE' && e.message.startsWith('not opened:');
      if (msg !== this.lastError && (!refused || budgetRefusalToSay(this.o.clock()))) {
        this.o.logger.error({ source: this.key, code: e.code }, `file source error: ${msg}${refused ? ' (said once a minute for every file source: `cortex-agent status` lists the files waiting)' : ''}`);
      }
      this.lastError = msg;
      this.state = 'error';
      this.closeFile();
      this.opened = true; // re-open later from the committed position, identity checked
      if (e.code === 'EMFILE' || e.code === 'ENFILE') {
        // out of descriptors: try less and less often (up to retryMaxMs), not every poll
        this.retryMs = Math.min(this.o.retryMaxMs, this.retryMs === 0 ? this.o.retryMinMs : this.retryMs * 2);
        this.poll.schedule(this.retryMs);
        return;
      }
    }
    if (more) this.kick();
    else this.poll.schedule(this.nextPollMs());
  }

  /**
   * The next poll. A file that has not changed for a while is polled less often — up to
   * IDLE_POLL_MAX_FACTOR × pollMs (2 s at the default 250 ms), reached after about a minute idle —
   * but only while its folder is watched: a write wakes the tailer at once (kick), and the poll
   * is then only the fallback for a missed event. 3,000 idle files polled every 250 ms kept 40 % of
   * a core busy (eleventh session). Never while a rotated file is drained (its grace counts polls).
   */
  private nextPollMs(): number {
    return nextPollMs(this.o.pollMs, this.idlePolls, this.poll.watching() && !this.draining && !this.claimWait && this.state !== 'error');
  }

  // ---- position and commits -----------------------------------------------------

  private commit(entries: BufferEntry[], offset: number, part: number): void {
    const prevOffset = this.cur.offset, prevPart = this.cur.part, prevLen = this.cur.fpLen, prevFp = this.cur.fp;
    this.cur.offset = offset;
    this.cur.part = part;
    this.cur.updateFingerprint();
    const pos = this.cur.position();
    try {
      const r = this.o.sink.append(entries, { source: this.key, position: pos });
      if (r.degraded !== undefined && r.degraded.metadata > 0) this.degraded(r.degraded.metadata, 'metadata past the contract caps');
    } catch (err) {
      this.cur.offset = prevOffset;
      this.cur.part = prevPart;
      this.cur.fpLen = prevLen;
      this.cur.fp = prevFp;
      throw err;
    }
    this.committed = pos;
    this.o.onPosition?.(pos);
  }

  /** Counts lines sent degraded and says so in status and (once per kind of reason) in the log. */
  private degraded(lines: number, why: string): void {
    this.linesDegraded += lines;
    const msg = `${DEGRADED} ${this.linesDegraded} line(s) sent as plain text with metadata {"${METADATA_DROPPED}": …}; last: ${why}`;
    if (this.lastError === null || !this.lastError.endsWith(why)) this.o.logger.warn({ source: this.key, lines: this.linesDegraded }, msg);
    this.lastError = msg;
  }

  // ---- opening, rotation and truncation ---------------------------------------------

  /**
   * Opens the file at the path: on the first open, resumes from the stored position when it is
   * the same file; a glob's file (claim) resumes where it was read to under any of the glob's
   * names, at every open — a file rotated onto this name from another one is read on, not again
   * from its start (DECISIONS D11, D28). False: nothing to read now (no file, or the glob says wait).
   */
  private openPath(): boolean {
    const st = statOrNull(this.path);
    if (st === null) {
      this.state = 'waiting';
      return false;
    }
    if (!st.isFile()) throw notRegular(st);
    checkFileBudget();
    let stored: JsonValue | null = this.o.sink.position(this.key);
    const { fd, st: fst } = openRegular(this.path);
    let known: FilePosition | null = null;
    if (this.o.claim !== undefined) {
      let c: ReturnType<NonNullable<TailerOptions['claim']>>;
      try {
        c = this.o.claim(fst, isFilePosition(stored) ? stored : null);
      } catch (err) {
        fs.closeSync(fd);
        throw err;
      }
      if (c === 'wait') {
        // another tailer of the glob reads it, or hands it over: asked again at the next poll or kick
        fs.closeSync(fd);
        this.claimWait = true;
        this.state = 'waiting';
        return false;
      }
      known = c !== null && c.dev === fst.dev && c.ino === fst.ino ? c : null;
    }
    this.claimWait = false;
    this.openFresh(fst, fd);
    this.state = 'reading';
    if (this.opened) {
      // A new file at the path (after rotation, deletion or an error): where this file was read
      // to (under this name, or another of the glob's), else from its start.
      for (const p of [known, stored]) {
        if (isFilePosition(p) && sameFile(p, fst, fd)) {
          this.resumeAt(p, stored);
          break;
        }
      }
      return true;
    }
    this.opened = true;
    const initial = known ?? (isFilePosition(stored) ? null : (this.o.initialOf?.() ?? null));
    if (initial !== null && sameFile(initial, fst, fd)) {
      // this file, read under another name before (DECISIONS D11, H34): the key may hold nothing
      // of it, or a file deleted before whose inode number it was given
      this.resumeAt(initial, stored);
      return true;
    }
    // truncated or its inode reused: said and read from its start below
    if (initial !== null && !(isFilePosition(stored) && stored.dev === fst.dev && stored.ino === fst.ino)) stored = initial;
    if (!isFilePosition(stored)) {
      if (this.o.startAtEnd === true && this.presentAtStart) this.skipToEnd(fd, fst.size);
      return true; // never seen: from the beginning (start_at "beginning", the default)
    }
    if (stored.dev === fst.dev && stored.ino === fst.ino) {
      if (stored.offset > fst.size) {
        this.c.truncations++;
        const same = fst.size > 0 ? firstBytesSame(stored.fp_len, fst.size, () => prefixMatches(stored as FilePosition, fd)) : null;
        this.o.logger.warn(
          { source: this.key, offset: stored.offset, size: fst.size, ...resendFields(fst.size, same) },
          `file was truncated while the agent was stopped; reading from its start (lines unread at the truncation are lost, count unknown)${resendNote(fst.size, same)}`,
        );
        this.commitTruncationPosition();
        return true;
      }
      if (prefixMatches(stored, fd)) {
        this.resumeAt(stored, stored);
        return true;
      }
      this.o.logger.info({ source: this.key, ino: fst.ino }, 'same inode but different content (inode reused): reading the new file from its start');
      return true;
    }
    // Another file at the path: was ours rotated away while we were stopped?
    if (this.o.findRotated) {
      const old = findByIdentity(this.path, stored);
      if (old !== null) {
        this.closeFile();
        this.openFresh(old.st, old.fd);
        this.resumeAt(stored, stored);
        this.draining = true;
        this.state = 'draining';
        this.c.rotations++;
        this.o.logger.info({ source: this.key, rotated_to: old.path }, 'file was rotated while the agent was stopped; finishing the rotated file first');
      }
    }
    return true;
  }

  /**
   * Reads on from `p`. When the key stores another position (`stored`: a position of this file
   * under another name, taken over), `p` is committed under the key at once — the old name's row
   * can then be dropped, and a rotation that overwrites it loses nothing (D28).
   */
  private resumeAt(p: FilePosition, stored: JsonValue | null): void {
    this.cur.resumeAt(p);
    this.committed = p;
    const same = isFilePosition(stored) && stored.dev === p.dev && stored.ino === p.ino && stored.offset === p.offset && (stored.part ?? 0) === (p.part ?? 0);
    if (same) {
      this.o.onPosition?.(p);
      return;
    }
    try {
      this.commit([], p.offset, p.part ?? 0);
    } catch {
      // committed with its next lines
    }
  }

  /** Closes the open file; a glob's file is given back (onRelease). */
  private closeFile(): void {
    const id = this.cur.fd !== null ? this.cur.ident : null;
    this.cur.close();
    if (id !== null) this.o.onRelease?.(id);
  }

  private openFresh(st: fs.Stats, fd: number): void {
    this.notText = null;
    this.headChecked = false;
    this.cur.openAt(st, fd);
    this.draining = false;
    this.quietPolls = 0;
  }

  /**
   * start_at "end": the position becomes the end of the last complete line (a last line
   * still being written is read whole), committed at once so a restart resumes there
   * instead of skipping again what was written in between.
   */
  private skipToEnd(fd: number, size: number): void {
    const offset = endOfLastLine(fd, size);
    if (offset === 0) return;
    try {
      this.commit([], offset, 0);
    } catch {
      // the next read commits it with its entries
      this.cur.offset = offset;
      this.cur.updateFingerprint();
    }
    this.o.logger.info({ source: this.key, offset }, 'start_at "end": a file never seen before is read from its end');
  }

  private commitTruncationPosition(): void {
    this.cur.rewind();
    try {
      this.commit([], 0, 0);
    } catch {
      // the next read commits it with its entries
    }
  }

  /** Copytruncate: count what the copy holds beyond our offset, then restart at 0. */
  private onTruncated(size: number, reason: string): void {
    // Looked at before the rewind: whether the first bytes are still those read (resendNote).
    const same = size === 0 ? null : reason === 'size below offset' ? firstBytesSame(this.cur.fpLen, size, () => !this.cur.prefixChanged()) : false;
    const { bytes: lostBytes, lines: lostLines, estimated } = truncationLoss(this.path, this.cur, this.c.lines_read, this.c.bytes_read);
    this.c.truncations++;
    this.c.lines_lost += lostLines;
    this.c.bytes_lost += lostBytes;
    if (estimated && lostBytes > 0) this.c.lost_estimated = true;
    if (lostLines > 0) this.lastError = `lost ${this.c.lines_lost} line(s) unread at copytruncate`;
    this.o.logger.warn(
      { source: this.key, offset: this.cur.offset, size, lost_lines: lostLines, lost_bytes: lostBytes, estimated, ...resendFields(size, same) },
      `file truncated in place (${reason}); reading from its start${lostLines > 0 ? `; ${lostLines} line(s) unread at the truncation are lost` : ''}${resendNote(size, same)}`,
    );
    this.cur.part = 0;
    this.commitTruncationPosition();
    this.cur.lastSize = size;
  }

  // ---- reading --------------------------------------------------------------------

  /**
   * stat of the path while a file is open: null when nothing is there, undefined when the
   * path cannot be looked at (EACCES on its folder, ELOOP, …: said as the source's error).
   * The open descriptor still reads the file: closing it on such an error lost the lines
   * written to it if it was rotated away before the path could be looked at again (H39).
   */
  private statPath(): fs.Stats | null | undefined {
    try {
      const st = statOrNull(this.path);
      this.pathProblem = null;
      return st;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const msg = `${errorText(this.path, e)}; reading on the file opened before`;
      if (msg !== this.pathProblem) this.o.logger.error({ source: this.key, code: e.code }, `file source error: ${msg}`);
      this.pathProblem = msg;
      return undefined;
    }
  }

  /** One poll: returns true when more data is waiting (read again at once). */
  private tick(): boolean {
    if (this.cur.fd === null) {
      if (!this.openPath()) return false;
    }
    if (!this.draining) {
      const st = this.statPath();
      if (st === undefined) {
        // the path cannot be looked at (its folder's permissions, a symlink loop): the open
        // file is read on, and whether it was rotated meanwhile is seen once the path can be
      } else if (!this.cur.isAt(st)) {
        this.draining = true;
        this.quietPolls = 0;
        this.grewAt = this.o.clock();
        this.state = 'draining';
        this.c.rotations++;
        this.o.logger.info({ source: this.key, gone: st === null }, st === null ? 'file deleted or moved away; finishing it' : 'file rotated; finishing the old file before the new one');
      } else {
        const fst = fs.fstatSync(this.cur.fd!);
        if (fst.size < this.cur.offset) this.onTruncated(fst.size, 'size below offset');
        else if (fst.size > this.cur.offset && this.cur.prefixChanged()) {
          this.onTruncated(fst.size, 'first bytes changed');
        }
      }
    }
    const fst = fs.fstatSync(this.cur.fd!);
    const grew = fst.size !== this.cur.lastSize;
    this.cur.lastSize = fst.size;
    const more = this.readAvailable(fst.size);
    if (more) return true;
    if (this.draining) {
      // Quiet for rotateQuietPolls more polls AND for a poll interval of time: a tick can also
      // come from a watch event (the rename, the new file's creation), so polls alone could
      // pass within a millisecond, before a writer still holding the old file wrote to it.
      if (grew) {
        this.quietPolls = 0;
        this.grewAt = this.o.clock();
      } else if (++this.quietPolls > this.o.rotateQuietPolls && this.o.clock() - this.grewAt >= this.o.pollMs) {
        this.flushPartial(fst.size);
        this.closeFile();
        this.draining = false;
        this.state = 'waiting';
        return this.openPath();
      }
      return false;
    }
    this.state = 'reading';
    return false;
  }

  /**
   * Reads one chunk up to `size` and commits its complete lines; true if more may be left (the
   * poller reads again on the next turn of the event loop). One chunk a turn: 256 KiB is ~2,000
   * lines and ~5 ms of parsing and committing, and the sender's acks and next pushes wait for the
   * turn to end. With 8 chunks a turn (~40 ms) the pushes in flight sat empty behind a
   * catching-up file: `npm run bench -- peers` shipped 97k-102k lines/s against 109k-115k (same
   * run, alternating); the file → buffer rate (`bench sources`) did not move.
   */
  private readAvailable(size: number): boolean {
    if (this.notText !== null && size < this.notTextSize) {
      this.notText = null; // truncated: its new first bytes decide again
      this.headChecked = false;
    }
    if (!this.headChecked && size > 0) {
      this.headChecked = true;
      this.checkHead(size);
    }
    if (this.notText !== null || this.cur.offset >= size) return false;
    const buf = readBufferOf(this.readBytes);
    const want = Math.min(this.readBytes, size - this.cur.offset);
    const n = fs.readSync(this.cur.fd!, buf, 0, want, this.cur.offset);
    if (n === 0) return false;
    return this.processChunk(buf, n, false) > 0; // 0: only a partial line left
  }

  /**
   * Looks at the first bytes of the open file once (whatever the offset: a stored position
   * from an older agent, start_at "end"). One that is not text (compressed, binary:
   * ./content.ts) is not read — nothing committed, so a restart looks again — until it is
   * truncated or another file takes the path. Said once per file, in the log and in status.
   */
  private checkHead(size: number): void {
    const head = Buffer.allocUnsafe(Math.min(size, SNIFF_BYTES));
    const n = fs.readSync(this.cur.fd!, head, 0, head.length, 0);
    const why = notTextReason(head.subarray(0, n));
    if (why === null) return;
    this.notText = why;
    this.notTextSize = size;
    this.o.logger.warn({ source: this.key, size }, `${this.path} is not read: ${why}`);
  }

  /** Flushes a partial last line of a file rotated away (it will never get its newline). */
  private flushPartial(size: number): void {
    if (this.cur.offset >= size || this.notText !== null) return;
    const len = size - this.cur.offset;
    const b = Buffer.allocUnsafe(len);
    const n = fs.readSync(this.cur.fd!, b, 0, len, this.cur.offset);
    this.processChunk(b, n, true);
  }

  /** Turns buf[0, n) (file bytes from this.cur.offset) into entries and commits them; returns the bytes consumed. */
  private processChunk(buf: Buffer, n: number, final: boolean): number {
    const r = parseChunk(buf, n, final, this.cur.part, this.o.clock(), this.lineOptions);
    this.c.lines_split += r.split;
    if (r.consumed === 0) return 0;
    this.commit(r.entries, this.cur.offset + r.consumed, r.part);
    this.c.lines_read += r.lines;
    this.c.bytes_read += r.consumed;
    return r.consumed;
  }
}

/**
 * A file found shorter than the offset read, but not empty: are its first bytes still those read
 * (the fingerprint of the first fpLen bytes matches)? null when that cannot be told (nothing
 * fingerprinted, or fewer bytes there than were fingerprinted).
 */
function firstBytesSame(fpLen: number, size: number, matches: () => boolean): boolean | null {
  if (fpLen === 0 || size < fpLen) return null;
  return matches();
}

/**
 * What the truncation warning says of the `size` bytes now in the file, which are read again
 * from offset 0. Emptied and written anew (copytruncate): they are new lines. Cut short in place
 * (`truncate -s 2000`): they were read before and are sent again, duplicates. The two cannot be
 * told apart for sure — a writer may write the same first bytes again after a copytruncate (a
 * banner, the same start-up lines), and resuming at the new size would then lose its lines — so
 * the file is read from its start either way, and the warning says which it most likely was.
 */
function resendNote(size: number, same: boolean | null): string {
  if (size === 0) return '';
  if (same === true) return `; its first ${size} bytes are those read before, so it was most likely cut short in place (truncate -s) rather than emptied by copytruncate: the lines in them are sent again (duplicates; a copytruncate whose writer wrote the same first bytes again cannot be told apart, and skipping them could lose its lines)`;
  if (same === false) return `; its first bytes differ from those read before: the ${size} bytes there are new lines (emptied and written anew)`;
  return `; if it was cut short in place (truncate -s) rather than emptied by copytruncate, the lines in its first ${size} bytes were read before and are sent again (duplicates; which of the two it was cannot be told)`;
}

function resendFields(size: number, same: boolean | null): Record<string, unknown> {
  return size === 0 ? {} : { first_bytes_same: same, may_resend_bytes: same === false ? 0 : size };
}

/** The poll interval after `idlePolls` polls that found nothing, when a folder watch may space polls out. */
export function nextPollMs(pollMs: number, idlePolls: number, mayBackOff: boolean): number {
  if (!mayBackOff) return pollMs;
  return pollMs * Math.min(IDLE_POLL_MAX_FACTOR, 1 + Math.floor(idlePolls / IDLE_POLLS_PER_STEP));
}

/** EMFILE/ENFILE from the system (not the budget's own refusal, which says it all): what to do. */
function descriptorHint(e: NodeJS.ErrnoException): string {
  if ((e.code !== 'EMFILE' && e.code !== 'ENFILE') || e.message.startsWith('not opened:')) return '';
  const b = fileBudget();
  return e.code === 'ENFILE'
    ? ' (the system-wide limit of open files is reached: fs.file-max)'
    : ` (the agent's open-file limit${b !== null ? `, ulimit -n ${b.limit},` : ''} is reached: raise LimitNOFILE in the cortex-agent unit, or ulimit -n, and restart the agent)`;
}
