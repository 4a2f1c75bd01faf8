// A `file` source whose path has `*` or `?` in its last component: one FileTailer per
// matching regular file (DESIGN.md 5.12, DECISIONS.md D11).

import * as fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { JsonValue } from '../../buffer/entry.js';
import { silentLogger, type LogSourceRunner, type SourceLogger } from '../types.js';
import { isFilePosition, openRegular, sameFile, type FilePosition, type Identity } from './identity.js';
import { permissionHint, type FileTailer, type FileTailerStatus, type TailerOptions } from './tailer.js';

/** Every this many scans, each matching name is resolved and checked again (scan). */
const FULL_SCAN_EVERY = 20;

/** How long the stored position of a file gone from the folder is kept (DECISIONS H34). */
export const FORGET_AFTER_MS = 3_600_000;

/**
 * How many poll intervals a file waits for its name's previous file to be taken over under its
 * new name (claim) before it is read anyway: a hand-over takes a poll or two; this bounds the
 * cases where it cannot happen (two names swapped, the new name read by another source).
 */
export const HANDOFF_WAIT_POLLS = 40;

const COUNTERS = ['lines_read', 'bytes_read', 'lines_filtered', 'lines_lost', 'bytes_lost', 'truncations', 'rotations', 'lines_split', 'late_lines', 'rotated_still_written'] as const;
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
 * events) so new files are picked up. Each file (dev:ino) is read by one tailer at a time:
 * at every open (a new name, and each new file at a name after a rotation) the tailer asks
 * the glob (claim). A file another tailer of this glob holds open waits until that tailer has
 * finished it, then starts at the offset it reached (rotation to a name the glob also
 * matches, numbered rotation included: no duplicates). A tailer whose key stores the
 * position of a file now under another name of the glob waits until that name has taken it
 * over (committed it under its own key), so that the only stored position of a file is never
 * overwritten and a restart reads nothing twice (DECISIONS D11, D28). A file rotated away to no
 * name of the glob (renamed out of it, deleted) is kept open by its old name's tailer for late
 * writes (D6); one renamed to a name of the glob is not (matchedElsewhere), and one renamed onto
 * such a name while kept open is handed over to that name's tailer (claimedElsewhere).
 */
export class GlobFileSource implements LogSourceRunner {
  readonly kind = 'file' as const;
  readonly key: `file:${string}`;
  private readonly tailers = new Map<string, FileTailer>();
  private readonly openIdents = new Map<string, string>(); // "dev:ino" → real path of the tailer holding it open
  /** "dev:ino" → where it was read to last (any name of the glob). */
  private readonly seen = new Map<string, FilePosition>();
  /** Real path → the position its key stores (seeded from the buffer, then each commit). */
  private readonly keyHolds = new Map<string, FilePosition>();
  /** Real path → since when (clock) its tailer waits for a hand-over (claim). */
  private readonly waitingSince = new Map<string, number>();
  /** Real path → the name whose tailer it waits for to take over its key's file (claim). */
  private readonly waitingFor = new Map<string, string>();
  /** "dev:ino" → the real path of a tailer that waits to read it while another holds it open (claim). */
  private readonly wantedBy = new Map<string, string>();
  private soon: NodeJS.Immediate | null = null;
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
    late_lines: 0, rotated_still_written: 0,
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
    if (this.soon) clearImmediate(this.soon);
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

  status(): FileTailerStatus {
    const files: FileTailerStatus[] = [...this.tailers.values()].map((t) => t.status());
    for (const [real, why] of this.unnamable) {
      files.push({
        kind: 'file', key: `file:${real}`, path: real, name: null, state: 'error', position: null, last_error: why,
        lines_read: 0, bytes_read: 0, lines_filtered: 0, lines_lost: 0, bytes_lost: 0, lost_estimated: false, truncations: 0, rotations: 0, lines_split: 0, lines_degraded: 0,
        late_lines: 0, rotated_still_written: 0,
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
      late_lines: sum('late_lines'), rotated_still_written: sum('rotated_still_written'),
      lines_degraded: files.reduce((a, f) => a + (f.lines_degraded ?? 0), this.retired.lines_degraded), files,
    };
  }

  /** Looks at the folder now instead of at the next poll (a rename seen, a file handed over; tests). */
  scanNow(): void {
    this.fullScanDue = true;
    this.scan();
  }

  /** A tailer committed `p` under its key. */
  private onPosition(realPath: string, p: FilePosition): void {
    const id = `${p.dev}:${p.ino}`;
    this.seen.set(id, p);
    this.committedBy.set(id, `file:${realPath}`);
    const before = this.keyHolds.get(realPath);
    this.keyHolds.set(realPath, p);
    if (before === undefined || before.dev !== p.dev || before.ino !== p.ino) this.kickWaiting(); // a hand-over one of them may wait for
  }

  /**
   * A tailer closed the file it held: another name may take it now (a rename onto a name of this
   * glob). `at`: where a rotated file kept open for late writes was read to — its lines were
   * committed under the key of the file the tailer reads now, so only this says where it is.
   */
  private onRelease(realPath: string, ident: Identity, at?: FilePosition): void {
    const id = `${ident.dev}:${ident.ino}`;
    if (at !== undefined) {
      const had = this.seen.get(id);
      if (had === undefined || at.offset > had.offset || (at.offset === had.offset && at.part > had.part)) this.seen.set(id, at);
    }
    if (this.openIdents.get(id) === realPath) this.openIdents.delete(id);
    this.kickWaiting();
    if (this.stopped || this.soon !== null) return;
    // its new name may have no tailer yet
    this.soon = setImmediate(() => {
      this.soon = null;
      this.scanNow();
    });
  }

  private kickWaiting(): void {
    for (const real of this.waitingSince.keys()) this.tailers.get(real)?.kick();
  }

  /**
   * Whether the tailer of `realPath` may read the file it opened (`st`), and from where
   * (TailerOptions.claim): 'wait' while another tailer holds it open, or while the key's stored
   * position (`stored`) is the only one of another file that is now under another name of this
   * glob — committing there first would lose it: a restart, or a crash, would read that file again
   * from its start. That name's tailer takes the file over (claim, then a commit of where it was),
   * and kicks this one. Numbered rotation (`.1` → `.2`, `app.log` → `.1`, a new `app.log`) hands
   * over from the oldest name to the newest, each as soon as its previous file is finished.
   */
  private claim(realPath: string, st: fs.Stats, stored: FilePosition | null): 'wait' | FilePosition | null {
    const id = `${st.dev}:${st.ino}`;
    const now = this.timing.clock();
    const since = this.waitingSince.get(realPath) ?? now;
    const holder = this.openIdents.get(id);
    if (holder !== undefined && holder !== realPath && this.tailers.has(holder)) {
      this.waitingSince.set(realPath, since);
      this.waitingFor.delete(realPath);
      this.wantedBy.set(id, realPath); // a rotated file its holder keeps open for late writes is handed over (claimedElsewhere)
      return 'wait'; // never two readers of one file: no time limit
    }
    for (const [k, v] of this.wantedBy) if (v === realPath) this.wantedBy.delete(k);
    if (stored !== null && `${stored.dev}:${stored.ino}` !== id) {
      const there = this.notTakenOver(stored, realPath);
      // two names that swapped files wait for each other: one goes first
      const cycle = there !== null && this.waitingFor.get(there) === realPath;
      if (there !== null && !cycle && now - since < HANDOFF_WAIT_POLLS * this.pollMs) {
        this.waitingSince.set(realPath, since);
        this.waitingFor.set(realPath, there);
        return 'wait';
      }
      if (there !== null) {
        this.logger.warn(
          { source: this.key, path: realPath, previous_file_now: there },
          `file source: ${realPath} stored the position of the file now named ${there}, which has not taken it over${cycle ? ' (the two names swapped files)' : ''}; reading on (were the agent stopped before ${there} has, that file would be read again from its start)`,
        );
      }
    }
    this.waitingSince.delete(realPath);
    this.waitingFor.delete(realPath);
    this.openIdents.set(id, realPath);
    return this.seen.get(id) ?? null;
  }

  /**
   * Whether the file `ident`, rotated away from `realPath`, is now at another name of this glob
   * (a fresh listing: asked once per rotation): that name's tailer reads it on (D28), so its old
   * tailer does not keep it open for late writes (never two readers of one file).
   */
  private matchedElsewhere(realPath: string, ident: Identity): boolean {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return false;
    }
    for (const name of names) {
      if (!this.re.test(name)) continue;
      try {
        const full = join(this.dir, name);
        const st = fs.statSync(full);
        if (!st.isFile() || st.dev !== ident.dev || st.ino !== ident.ino) continue;
        const real = fs.realpathSync(full);
        if (real !== realPath && unnamablePath(real) === null) return true;
      } catch {
        // gone meanwhile
      }
    }
    return false;
  }

  /** Whether another tailer of this glob waits to read the file `ident` that the tailer of `realPath` holds open. */
  private claimedElsewhere(realPath: string, ident: Identity): boolean {
    const waiter = this.wantedBy.get(`${ident.dev}:${ident.ino}`);
    return waiter !== undefined && waiter !== realPath && this.tailers.has(waiter);
  }

  /**
   * The real path of another name of this glob whose file is the one `stored` was taken in
   * (same dev/ino, at least that long, same first bytes: not a new file given a deleted one's inode
   * number) and whose key does not store a position of it at least as far; else null. A fresh
   * listing: asked only when a tailer opens a file other than the one its key stores (a
   * rotation). Names not read for their name (unnamablePath) do not count: no tailer takes it there.
   */
  private notTakenOver(stored: FilePosition, except: string): string | null {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return null;
    }
    for (const name of names) {
      if (!this.re.test(name)) continue;
      let fd: number | null = null;
      try {
        const full = join(this.dir, name);
        const st = fs.statSync(full);
        if (!st.isFile() || st.dev !== stored.dev || st.ino !== stored.ino) continue;
        const real = fs.realpathSync(full);
        if (real === except || unnamablePath(real) !== null) continue;
        const opened = openRegular(full);
        fd = opened.fd;
        if (!sameFile(stored, opened.st, fd)) continue; // another file with that inode number
        const held = this.keyHolds.get(real);
        const taken = held !== undefined && held.dev === stored.dev && held.ino === stored.ino && held.offset >= stored.offset && sameFile(held, opened.st, fd);
        return taken ? null : real;
      } catch {
        // gone meanwhile
      } finally {
        if (fd !== null) fs.closeSync(fd);
      }
    }
    return null;
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
      this.waitingSince.delete(real);
      this.waitingFor.delete(real);
      for (const [k, v] of this.wantedBy) if (v === real) this.wantedBy.delete(k);
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
        this.keyHolds.delete(key.slice('file:'.length));
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
          this.keyHolds.set(path, position);
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
        // a file another tailer still holds open waits in its claim (the tailer's first open)
        const t = this.make(m.real, `file:${m.real}`, {
          findRotated: false,
          claim: (st, stored) => this.claim(m.real, st, stored),
          onRelease: (id, at) => this.onRelease(m.real, id, at),
          matchedElsewhere: (id) => this.matchedElsewhere(m.real, id),
          claimedElsewhere: (id) => this.claimedElsewhere(m.real, id),
          onPosition: (p) => this.onPosition(m.real, p),
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

