// A `file` source whose path has `*` or `?` in its last component: one FileTailer per
// matching regular file (DESIGN.md 5.12, DECISIONS.md D11).

import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { JsonValue } from '../../buffer/entry.js';
import { silentLogger, type LogSourceRunner, type SourceLogger, type SourceRunnerStatus } from '../types.js';
import { isFilePosition, type FilePosition } from './identity.js';
import { permissionHint, type FileTailer, type TailerOptions } from './tailer.js';

/** Every this many scans, each matching name is resolved and checked again (scan). */
const FULL_SCAN_EVERY = 20;

/** How long the stored position of a file gone from the folder is kept (DECISIONS H34). */
export const FORGET_AFTER_MS = 3_600_000;

const COUNTERS = ['lines_read', 'bytes_read', 'lines_filtered', 'lines_lost', 'bytes_lost', 'truncations', 'rotations', 'lines_split'] as const;
type Counter = (typeof COUNTERS)[number];

/** What a glob needs of the buffer's stored positions. */
export interface GlobPositions {
  all(): readonly { source: string; position: JsonValue }[];
  forget(key: string): void;
}

/**
 * Why a file cannot be a log source, or null: its entries' source `file:<path>` must match the
 * protocol's pattern `^file:.+$`, whose `.` matches no line break — a newline, a carriage return,
 * U+2028 or U+2029 in the path. Read, every append of its lines was refused (nothing of it was
 * ever shipped, its source in error for good); it is left alone and said instead. The contract
 * sets no length limit on the source (a path is at most PATH_MAX, 4096 bytes, on Linux).
 */
export function unnamablePath(path: string): string | null {
  return /[\n\r\u2028\u2029]/.test(path)
    ? `${JSON.stringify(path)}: file name contains a newline (or another line break: CR, U+2028, U+2029), which the source name of its entries (file:<path>) may not hold: not read; rename it`
    : null;
}

export function isGlob(path: string): boolean {
  return /[*?]/.test(basename(path));
}

/**
 * Whether a stored position's key (`file:<real path>`) is one of the glob's own files' — the
 * glob keeps the positions of files gone from its folder for FORGET_AFTER_MS (they may come
 * back), and `status` must not list each as a source of its own (DECISIONS H42). The key is a
 * real path: the folder is compared as given and as its real path.
 */
export function globClaims(pattern: string): (key: string) => boolean {
  const dir = dirname(pattern);
  const dirs = new Set([dir]);
  try {
    dirs.add(fs.realpathSync(dir));
  } catch {
    // the folder is not there (now): as given
  }
  const re = globRegex(basename(pattern));
  return (key) => key.startsWith('file:') && dirs.has(dirname(key.slice(5))) && re.test(basename(key));
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
  readonly key: `file:${string}`;
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
  /** Matching name → the real path it led to at the last look (scan skips names a tailer follows). */
  private readonly realOf = new Map<string, string>();
  private scans = 0;
  private fullScanDue = true;
  /** Matching files not read for their name (unnamablePath): real path → why; logged once while they are there. */
  private readonly unnamable = new Map<string, string>();
  /**
   * Stored positions of names this glob no longer has (file key → the identity "dev:ino" it
   * holds), dropped once nothing can need them: the file is gone from the folder, or its
   * position is stored under its new name (committedBy).
   */
  private readonly stale = new Map<string, { id: string; since: number }>();
  /** Identity → the key its position was last committed under in this run. */
  private readonly committedBy = new Map<string, string>();
  /** Counters of the files forgotten (dropGone). */
  private readonly retired: Record<Counter | 'lines_degraded', number> = {
    lines_read: 0, bytes_read: 0, lines_filtered: 0, lines_lost: 0, bytes_lost: 0, truncations: 0, rotations: 0, lines_split: 0, lines_degraded: 0,
  };

  constructor(
    readonly pattern: string,
    private readonly make: (path: string, key: `file:${string}`, extra: Partial<TailerOptions>) => FileTailer,
    private readonly pollMs: number,
    private readonly watch: boolean,
    /** The stored positions: every one (those of this glob's names are read at the first scan), and dropping one of a file gone for good (throws when the buffer cannot write). */
    private readonly positions: GlobPositions = { all: () => [], forget: () => undefined },
    private readonly timing: { clock: () => number; forgetAfterMs: number } = { clock: Date.now, forgetAfterMs: FORGET_AFTER_MS },
    private readonly logger: SourceLogger = silentLogger,
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
    for (const [real, why] of this.unnamable) {
      files.push({
        kind: 'file', key: `file:${real}`, path: real, name: null, state: 'error', position: null, last_error: why,
        lines_read: 0, bytes_read: 0, lines_filtered: 0, lines_lost: 0, bytes_lost: 0, lost_estimated: false, truncations: 0, rotations: 0, lines_split: 0, lines_degraded: 0,
      });
    }
    // the glob's counters count the files forgotten too (they are totals since the start)
    const sum = (k: Counter) => files.reduce((a, f) => a + f[k], this.retired[k]);
    const position: Record<string, JsonValue> = {};
    for (const f of files) if (f.position !== null) position[f.key] = f.position;
    return {
      kind: 'file', key: this.key, path: this.pattern, name: null,
      state: this.stopped ? 'stopped' : this.paused ? 'paused' : files.length === 0 ? 'waiting' : 'reading',
      // a file not read for being compressed or binary is said on its own line, not as the glob's error
      position, last_error: this.lastError ?? files.find((f) => f.last_error !== null && f.state !== 'skipped')?.last_error ?? null,
      lines_read: sum('lines_read'), bytes_read: sum('bytes_read'), lines_filtered: sum('lines_filtered'),
      lines_lost: sum('lines_lost'), bytes_lost: sum('bytes_lost'), lost_estimated: files.some((f) => f.lost_estimated),
      truncations: sum('truncations'), rotations: sum('rotations'), lines_split: sum('lines_split'),
      lines_degraded: files.reduce((a, f) => a + (f.lines_degraded ?? 0), this.retired.lines_degraded), files,
    };
  }

  private onPosition(realPath: string, p: FilePosition, open: boolean): void {
    const id = `${p.dev}:${p.ino}`;
    this.seen.set(id, p);
    if (open) this.committedBy.set(id, `file:${realPath}`);
    if (open) this.openIdents.set(id, realPath);
    else if (this.openIdents.get(id) === realPath) this.openIdents.delete(id);
  }

  /**
   * Forgets the files gone from the folder (deleted, or renamed to a name the glob does not
   * match) once their tailer has finished them: the tailer stopped, its line in `status` gone,
   * its stored position dropped once nothing can need it (DECISIONS H34). Before, a folder whose
   * files come and go (one log per container, per process or per day) kept a tailer polling
   * every vanished name for good, listed each in `status` and kept a position row for each in
   * buffer.db. A tailer still draining a file deleted while open, or waiting for a writer, is
   * left alone until it is done. `present`: the identities of every file of a full scan.
   */
  private dropGone(present: ReadonlySet<string> | null): void {
    const now = this.timing.clock();
    const live = new Set(this.realOf.values());
    const open = new Set(this.openIdents.values());
    for (const [real, t] of this.tailers) {
      if (live.has(real) || open.has(real) || t.status().state !== 'waiting') continue;
      this.tailers.delete(real);
      void t.stop();
      const st = t.status();
      for (const k of COUNTERS) this.retired[k] += st[k];
      this.retired.lines_degraded += st.lines_degraded ?? 0;
      const p = st.position;
      if (isFilePosition(p)) this.stale.set(`file:${real}`, { id: `${p.dev}:${p.ino}`, since: now });
    }
    for (const [key, { id, since }] of this.stale) {
      if (this.tailers.has(key.slice('file:'.length))) {
        this.stale.delete(key); // the name is back: its tailer owns the key again
        continue;
      }
      // its file is read on under another name, whose key now holds the position
      const movedOn = this.committedBy.has(id) && this.committedBy.get(id) !== key;
      // or gone from the folder for forgetAfterMs (a full look at it each time)
      const gone = present !== null && !present.has(id) && now - since >= this.timing.forgetAfterMs;
      if (!movedOn && !gone) continue;
      try {
        this.positions.forget(key);
        this.stale.delete(key);
      } catch {
        break; // the buffer cannot write now (disk full): tried again at the next scan
      }
    }
    if (present === null) return;
    // identities no file of the folder has any more (a rotation's hand-over needs only present ones)
    for (const id of this.seen.keys()) if (!present.has(id) && !this.openIdents.has(id)) this.seen.delete(id);
    for (const id of this.committedBy.keys()) if (!present.has(id)) this.committedBy.delete(id);
  }

  private scan(): void {
    if (this.stopped) return;
    try {
      if (this.watch && this.watcher === null) {
        try {
          this.watcher = fs.watch(this.dir, { persistent: false }, (event) => {
            // A write to a file ('change') never adds a match: the file's own tailer takes it.
            // Rescanning on every write cost a listing of the folder per write (eleventh session).
            if (event === 'change') return;
            this.fullScanDue = true;
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
      let noDir = false;
      try {
        names = fs.readdirSync(this.dir);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
        noDir = true; // a typo, or a folder made later: said in status, looked at every poll
      }
      // A name whose file a tailer already follows needs no realpath and stat (a lstat per path
      // component, then a stat: 3,000 files every 250 ms were 60,000 system calls a second);
      // every FULL_SCAN_EVERY scans, and after a rename or a new name in the folder, all are
      // looked at again (a symlink pointed elsewhere, a name that became a folder).
      const full = this.fullScanDue || this.scans % FULL_SCAN_EVERY === 0;
      this.scans++;
      this.fullScanDue = false;
      const present = new Set<string>();
      const matches: { real: string; st: fs.Stats }[] = [];
      for (const name of names.sort()) {
        if (!this.re.test(name)) continue;
        present.add(name);
        const known = this.realOf.get(name);
        if (!full && known !== undefined && this.tailers.has(known)) continue;
        try {
          const real = fs.realpathSync(join(this.dir, name));
          const st = fs.statSync(real);
          if (st.isFile()) {
            matches.push({ real, st });
            this.realOf.set(name, real);
          } else this.realOf.delete(name);
        } catch {
          this.realOf.delete(name); // vanished between readdir and stat
        }
      }
      for (const name of this.realOf.keys()) if (!present.has(name)) this.realOf.delete(name);
      const firstScan = !this.seeded;
      if (!this.seeded) {
        // Every position stored under one of this glob's names, present or not: a file rotated
        // to another matching name while we were stopped resumes where its old name left off
        // (its identity), even when the new name holds its previous file's position, or the
        // old name is not there (yet). Those of names not there are dropped once not needed.
        this.seeded = true;
        const names = new Set([...this.realOf.values()]);
        const folders = new Set([this.dir]);
        try {
          folders.add(fs.realpathSync(this.dir)); // the keys are real paths
        } catch {
          // no folder (yet)
        }
        for (const { source, position } of this.positions.all()) {
          const path = source.startsWith('file:') ? source.slice('file:'.length) : null;
          if (path === null || !isFilePosition(position)) continue;
          // a name of this folder that matches, or a match's real path elsewhere (a symlink)
          const inFolder = folders.has(dirname(path)) && this.re.test(basename(path));
          if (!inFolder && !names.has(path)) continue;
          const id = `${position.dev}:${position.ino}`;
          if (!names.has(path)) this.stale.set(source, { id, since: this.timing.clock() });
          const had = this.seen.get(id);
          // two names holding one file (a stale row): the one read furthest
          if (had === undefined || position.offset > had.offset || (position.offset === had.offset && position.part > had.part)) this.seen.set(id, position);
        }
      }
      const matched = new Set(matches.map((m) => m.real));
      for (const real of this.unnamable.keys()) if (!matched.has(real)) this.unnamable.delete(real); // renamed or gone
      for (const m of matches) {
        if (this.tailers.has(m.real)) continue;
        const why = unnamablePath(m.real);
        if (why !== null) {
          if (!this.unnamable.has(m.real)) this.logger.warn({ source: this.key, path: m.real }, `file source: ${why}`);
          this.unnamable.set(m.real, why);
          continue;
        }
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
      this.dropGone(full && !noDir ? new Set(matches.map((m) => `${m.st.dev}:${m.st.ino}`)) : null);
      this.lastError = noDir ? `${this.pattern}: the folder ${this.dir} does not exist (yet); files that match are read once it does` : null;
    } catch (err) {
      // the folder cannot be listed (its permissions): said once in the log too, with what to do
      const e = err as NodeJS.ErrnoException;
      const msg = `${this.pattern}: ${e.message}` + (e.code === 'EACCES' || e.code === 'EPERM' ? permissionHint(this.dir) : '');
      if (msg !== this.lastError) this.logger.error({ source: this.key, code: e.code }, `file source error: ${msg}`);
      this.lastError = msg;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.scan(), this.pollMs);
    this.timer.unref?.();
  }
}

