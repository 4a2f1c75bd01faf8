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
// descriptor is drained to EOF; once it has stopped growing for one poll, the new file at
// the path is read from offset 0 — a glob's file from where the glob last read it under any
// of its names (claim: numbered rotation moves files from name to name, DECISIONS D28).
// The old descriptor is not closed then (unless the glob reads the file on under another
// name): it is kept open beside the new file for `rotateWaitMs` (5 s) after it last grew, at
// most `rotateWaitMaxMs` (60 s) in all — a daemon reopens its log only at logrotate's
// postrotate signal, later on a busy machine — and what is appended to it is committed like
// any line (`late_lines`), with the position of the file the key follows now, so a restart
// reads nothing of it twice. A partial last line is flushed as a line when the drain ends (as
// before), and a partial line written to it later when it is closed.
// Still written to at the bound: closed with a warning and `last_error` (never silent).
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
import { FileCursor, budgetRefusalToSay, checkFileBudget, endOfLastLine, fileBudget, findByIdentity, holdLingering, isFilePosition, notRegular, openRegular, prefixMatches, sameFile, statOrNull, truncationLoss, type FilePosition, type Identity } from './identity.js';
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
/** last_error prefix of a rotated file closed while still written to (kept likewise). */
const STILL_WRITTEN = 'rotated file still written to';

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
  /**
   * A file claimed is closed (read to its end after a rotation, an error, stop). `at`: where a
   * rotated file kept open for late writes was read to (the key may store the new file's position).
   */
  onRelease?: (id: Identity, at?: FilePosition) => void;
  /**
   * A glob's file rotated away and read to its end: whether the glob now matches it under another
   * name, whose tailer reads it on there (D28) — then it is closed at once, not kept open for late writes.
   */
  matchedElsewhere?: (id: Identity) => boolean;
  /** A rotated file kept open: whether another tailer of the glob waits to read it (renamed to a name the glob matches). */
  claimedElsewhere?: (id: Identity) => boolean;
  /**
   * A rotated file is kept open for writes that still reach it until it has not grown for this
   * long (default DEFAULT_ROTATE_WAIT_MS; 0: closed once drained, as before), and at most
   * `rotateWaitMaxMs` (default DEFAULT_ROTATE_WAIT_MAX_MS) after the rotation.
   */
  rotateWaitMs?: number;
  rotateWaitMaxMs?: number;
  /** Called after every commit with the committed position (globs track identities). */
  onPosition?: (pos: FilePosition) => void;
  /**
   * `start_at: "end"`: a file never seen before that is already there when the source
   * starts is read from its end (after its last complete line). A file that appears later
   * and a file with a stored position are read as usual.
   */
  startAtEnd?: boolean;
}

/** Status of a file tailer: the common counters and those of rotated files kept open for late writes. */
export type FileTailerStatus = SourceRunnerStatus & {
  /** Lines read from a rotated file after the new file at the path was opened (its writer reopened its log late). */
  late_lines: number;
  /** Rotated files closed at rotateWaitMaxMs while still written to (what was written after is not read). */
  rotated_still_written: number;
};

/** A rotated file kept open for writes that still reach it (DECISIONS D6). */
interface Linger {
  cur: FileCursor;
  /** When it was kept open (the new file at the path opened), and last seen growing. */
  since: number;
  grewAt: number;
  /** Lines and bytes read from it since. */
  lines: number;
  bytes: number;
  /** Bytes read from it by `markAt`, and by the mark before (the rate named when it is closed still written to). */
  markAt: number;
  markBytes: number;
  prevMarkAt: number;
  prevMarkBytes: number;
  /** Unregisters it from the descriptor budget's list (identity.ts holdLingering). */
  unhold: () => void;
}

export const DEFAULT_ROTATE_WAIT_MS = 5000;
export const DEFAULT_ROTATE_WAIT_MAX_MS = 60_000;

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
  /** Rotated files kept open for late writes, oldest first (DECISIONS D6). */
  private readonly lingers: Linger[] = [];
  private lateLines = 0;
  private stillWritten = 0;
  private readonly rotateWaitMs: number;
  private readonly rotateWaitMaxMs: number;
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
    this.rotateWaitMs = Math.max(0, options.rotateWaitMs ?? DEFAULT_ROTATE_WAIT_MS);
    this.rotateWaitMaxMs = Math.max(0, options.rotateWaitMaxMs ?? DEFAULT_ROTATE_WAIT_MAX_MS);
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
    for (const l of [...this.lingers]) this.endLinger(l, 'stop');
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

  status(): FileTailerStatus {
    const skipped = this.notText !== null && (this.state === 'reading' || this.state === 'draining');
    return {
      kind: 'file', key: this.key, path: this.path, name: null, state: skipped ? 'skipped' : this.state,
      position: this.committed, last_error: skipped ? `not read: ${this.notText}` : (this.lastError ?? this.pathProblem), ...this.c, lines_degraded: this.linesDegraded,
      late_lines: this.lateLines, rotated_still_written: this.stillWritten,
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
      if (this.lastError !== null && !this.lastError.startsWith('lost ') && !this.lastError.startsWith(DEGRADED) && !this.lastError.startsWith(STILL_WRITTEN)) this.lastError = null;
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
   * a core busy (eleventh session). Never while a rotated file is drained (its grace counts polls)
   * or kept open for late writes (the folder watch does not wake this tailer for it: another name).
   */
  private nextPollMs(): number {
    return nextPollMs(this.o.pollMs, this.idlePolls, this.poll.watching() && !this.draining && !this.claimWait && this.state !== 'error' && this.lingers.length === 0);
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
    const late = this.lingers.length > 0 && this.readLate();
    return this.tickFile() || late;
  }

  /** One poll of the file at the path (and of the one rotated away from it, while drained). */
  private tickFile(): boolean {
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
        if (this.mayLinger()) this.linger();
        else this.closeFile();
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

  // ---- rotated files kept open for late writes (DECISIONS D6) -------------------------

  /**
   * The drained file may be kept open: rotateWaitMs is not 0, it is text, and no other name of
   * the glob reads it on (D28: the glob's tailer of that name takes it when it is closed).
   */
  private mayLinger(): boolean {
    if (this.rotateWaitMs === 0 || this.notText !== null || this.cur.fd === null) return false;
    return this.o.matchedElsewhere?.(this.cur.ident!) !== true;
  }

  /**
   * Keeps the drained file open beside the new one at the path: its descriptor moves to a linger
   * (still counted in the budget, which closes lingers first when it is full). Its partial last
   * line was flushed as a line (D9: the new file's lines are not held back behind it).
   */
  private linger(): void {
    const now = this.o.clock();
    const l: Linger = {
      cur: this.cur.handOver(), since: now, grewAt: now, lines: 0, bytes: 0,
      markAt: now, markBytes: 0, prevMarkAt: now, prevMarkBytes: 0, unhold: () => undefined,
    };
    l.unhold = holdLingering(() => this.endLinger(l, 'budget'));
    this.lingers.push(l);
  }

  /** One poll of the rotated files kept open; true when more is waiting. A storage error is thrown (the source retries). */
  private readLate(): boolean {
    let more = false;
    for (const l of [...this.lingers]) {
      try {
        if (this.pollLinger(l)) more = true;
      } catch (err) {
        if (err instanceof BufferStorageError) throw err;
        this.endLinger(l, 'error', err as NodeJS.ErrnoException);
      }
    }
    return more;
  }

  private pollLinger(l: Linger): boolean {
    if (this.o.claimedElsewhere?.(l.cur.ident!) === true) {
      this.endLinger(l, 'handover');
      return false;
    }
    const now = this.o.clock();
    const size = fs.fstatSync(l.cur.fd!).size;
    if (size < l.cur.offset) {
      this.endLinger(l, 'truncated');
      return false;
    }
    if (size !== l.cur.lastSize) {
      l.cur.lastSize = size;
      l.grewAt = now;
    }
    if (this.readLateChunk(l, size)) return true;
    if (now - l.markAt >= this.rotateWaitMs) {
      l.prevMarkAt = l.markAt;
      l.prevMarkBytes = l.markBytes;
      l.markAt = now;
      l.markBytes = l.bytes;
    }
    if (now - l.grewAt >= this.rotateWaitMs) this.endLinger(l, 'quiet');
    else if (now - l.since >= this.rotateWaitMaxMs) this.endLinger(l, 'bound');
    return false;
  }

  /** Reads one chunk of a rotated file kept open and commits its complete lines; true if more may be left. */
  private readLateChunk(l: Linger, size: number): boolean {
    if (l.cur.offset >= size) return false;
    const buf = readBufferOf(this.readBytes);
    const n = fs.readSync(l.cur.fd!, buf, 0, Math.min(this.readBytes, size - l.cur.offset), l.cur.offset);
    if (n === 0) return false;
    return this.commitLate(l, buf, n, false) > 0;
  }

  /**
   * Commits lines of a rotated file kept open. The position committed with them is the one the
   * key follows: the new file's, once anything of it was committed — a restart then reads on in
   * the new file and never reads the old one again —, else the old file's own (it is still what
   * the key stores: a restart finds it by its identity, D5, and reads on where this left off).
   */
  private commitLate(l: Linger, buf: Buffer, n: number, final: boolean): number {
    const r = parseChunk(buf, n, final, l.cur.part, this.o.clock(), this.lineOptions);
    this.c.lines_split += r.split;
    if (r.consumed === 0) return 0;
    const c = l.cur;
    const prevOffset = c.offset, prevPart = c.part, prevLen = c.fpLen, prevFp = c.fp;
    c.offset += r.consumed;
    c.part = r.part;
    c.updateFingerprint();
    const own = this.committed === null || (this.committed.dev === c.ident!.dev && this.committed.ino === c.ident!.ino);
    const pos = own ? c.position() : this.committed!;
    try {
      const res = this.o.sink.append(r.entries, { source: this.key, position: pos });
      if (res.degraded !== undefined && res.degraded.metadata > 0) this.degraded(res.degraded.metadata, 'metadata past the contract caps');
    } catch (err) {
      c.offset = prevOffset;
      c.part = prevPart;
      c.fpLen = prevLen;
      c.fp = prevFp;
      throw err;
    }
    if (own) {
      this.committed = pos;
      this.o.onPosition?.(pos);
    }
    this.c.lines_read += r.lines;
    this.c.bytes_read += r.consumed;
    this.lateLines += r.lines;
    l.lines += r.lines;
    l.bytes += r.consumed;
    return r.consumed;
  }

  /**
   * Closes a rotated file kept open. quiet (not grown for rotateWaitMs), bound (rotateWaitMaxMs
   * reached) and budget (the descriptor budget is full): read to its end first, a partial last
   * line flushed as a line. handover: another name of the glob reads it on from here. Said: an
   * info line when late lines were read, a warning (and last_error) when it was still written to.
   */
  private endLinger(l: Linger, why: 'quiet' | 'bound' | 'budget' | 'handover' | 'truncated' | 'stop' | 'error', err?: NodeJS.ErrnoException): void {
    const i = this.lingers.indexOf(l);
    if (i < 0) return;
    let unread = 0;
    if (why === 'quiet' || why === 'bound' || why === 'budget') {
      try {
        const size = fs.fstatSync(l.cur.fd!).size;
        while (this.readLateChunk(l, size)) {
          // on to its end
        }
        if (size > l.cur.offset) {
          const b = Buffer.allocUnsafe(size - l.cur.offset);
          this.commitLate(l, b, fs.readSync(l.cur.fd!, b, 0, b.length, l.cur.offset), true);
        }
        unread = Math.max(0, size - l.cur.offset);
      } catch (e) {
        // from another tailer's open (budget): closed anyway, and said below
        if (why !== 'budget') throw e;
        unread = Math.max(0, l.cur.lastSize - l.cur.offset);
      }
    }
    this.lingers.splice(i, 1);
    l.unhold();
    const id = l.cur.ident!;
    const at = l.cur.position();
    l.cur.close();
    this.o.onRelease?.(id, at);
    const secs = (ms: number) => Math.round(ms / 100) / 10;
    const fields = { source: this.key, ino: id.ino, late_lines: l.lines, late_bytes: l.bytes, last_growth_after_s: secs(l.grewAt - l.since) };
    const late = l.lines > 0 ? `${l.lines} line(s) (${l.bytes} bytes) were written to the file rotated away from ${this.path} after the agent had moved on to the new file, the last ${secs(l.grewAt - l.since)} s after the rotation, and were read` : '';
    if (why === 'quiet' && l.lines > 0) {
      this.o.logger.info(fields, `${late}: its writer reopens its log late (a rotated file is read on until it has not grown for ${secs(this.rotateWaitMs)} s, at most ${secs(this.rotateWaitMaxMs)} s)`);
    } else if (why === 'bound') {
      const recentMs = this.o.clock() - l.prevMarkAt;
      const recent = l.bytes - l.prevMarkBytes;
      this.stillWritten++;
      const msg = `${STILL_WRITTEN} ${secs(this.o.clock() - l.since)} s after the rotation of ${this.path} (${recent} bytes in its last ${secs(recentMs)} s; ${l.lines} line(s) read from it since the rotation): closed, and what its writer writes to it from now on is not read — make the writer reopen its log at rotation (logrotate postrotate: its reload or HUP), or use copytruncate`;
      this.lastError = msg;
      this.o.logger.warn({ ...fields, recent_bytes: recent, recent_s: secs(recentMs) }, msg);
    } else if (why === 'budget' && (l.lines > 0 || unread > 0)) {
      this.o.logger.warn({ ...fields, unread_bytes: unread }, `${late || `the file rotated away from ${this.path} was still written to`}; closed early: the file sources need its descriptor for a file to read (their open-file budget is full: raise LimitNOFILE), so what is written to it from now on is not read${unread > 0 ? ` (${unread} bytes could not be stored now and are not read)` : ''}`);
    } else if (why === 'error') {
      const what = `${err?.code ?? ''} ${err?.message ?? ''}`.trim();
      this.o.logger.warn({ ...fields, code: err?.code }, `the file rotated away from ${this.path}, kept open for late writes, cannot be read (${what}): closed; what is written to it from now on is not read`);
    } else if (l.lines > 0 && why !== 'stop') {
      this.o.logger.info(fields, `${late} (${why === 'handover' ? 'it is read on under its new name' : 'then it was truncated: closed'})`);
    }
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
