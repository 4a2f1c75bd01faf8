// When a file tailer reads: a poll timer, an immediate re-run when more is waiting, and
// fs.watch on the file's folder as a wake-up hint (polling still runs without it).
//
// One fs.watch per folder, shared by every tailer of a file in it (FolderWatches): each
// watcher on a folder is handed every event of that folder, so a glob over N files with a
// watcher each ran N callbacks per write — a glob over 3,000 files with one file written 100
// times a second doubled the agent's CPU (eleventh session).

import * as fs from 'node:fs';
import { basename, dirname } from 'node:path';

interface FolderWatch {
  watcher: fs.FSWatcher;
  /** File name in the folder → the pollers of that file. */
  byName: Map<string, Set<Poller>>;
}

/** The folders watched in this process, by path. */
const folders = new Map<string, FolderWatch>();

/** Watches `dir` for `poller` (the file `name` in it); throws when the folder cannot be watched. */
function watchFolder(dir: string, name: string, poller: Poller): void {
  let f = folders.get(dir);
  if (f === undefined) {
    const byName = new Map<string, Set<Poller>>();
    const watcher = fs.watch(dir, { persistent: false }, (_ev, changed) => {
      if (changed === null) {
        for (const set of byName.values()) for (const p of set) p.kick();
        return;
      }
      const set = byName.get(String(changed));
      if (set !== undefined) for (const p of set) p.kick();
    });
    const entry: FolderWatch = { watcher, byName };
    watcher.on('error', () => {
      watcher.close();
      if (folders.get(dir) === entry) folders.delete(dir);
      // Each poller watches again at its next tick (a new watcher if the folder is back).
      for (const set of byName.values()) for (const p of set) p.watchLost();
      byName.clear();
    });
    folders.set(dir, entry);
    f = entry;
  }
  let set = f.byName.get(name);
  if (set === undefined) f.byName.set(name, (set = new Set()));
  set.add(poller);
}

function unwatchFolder(dir: string, name: string, poller: Poller): void {
  const f = folders.get(dir);
  const set = f?.byName.get(name);
  if (f === undefined || set === undefined) return;
  set.delete(poller);
  if (set.size > 0) return;
  f.byName.delete(name);
  if (f.byName.size > 0) return;
  f.watcher.close();
  folders.delete(dir);
}

/** Folders watched right now (tests). */
export function watchedFolderCount(): number {
  return folders.size;
}

export class Poller {
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private watched = false;
  private stopped = false;

  constructor(
    private readonly path: string,
    private readonly watch: boolean,
    private readonly run: () => void,
  ) {}

  /** Run in `ms` (replaces a pending timer). */
  schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, ms);
    this.timer.unref?.();
  }

  /** Run now instead of at the next poll (once, however often it is asked). */
  kick(): void {
    if (this.stopped || this.immediate !== null) return;
    this.immediate = setImmediate(() => {
      this.immediate = null;
      this.run();
    });
  }

  /** Whether a folder watch wakes this poller (polls may then be spaced out). */
  watching(): boolean {
    return this.watched;
  }

  /** Watch the folder when asked to and not watching yet (it may not exist yet: retried each tick). */
  ensureWatch(): void {
    if (!this.watch || this.watched || this.stopped) return;
    try {
      watchFolder(dirname(this.path), basename(this.path), this);
      this.watched = true;
    } catch {
      this.watched = false; // folder missing: polling still runs
    }
  }

  /** The folder's watcher failed (the folder was removed, …): watch again at the next tick. */
  watchLost(): void {
    this.watched = false;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
    if (this.watched) unwatchFolder(dirname(this.path), basename(this.path), this);
    this.watched = false;
  }
}
