// When a file tailer reads: a poll timer, an immediate re-run when more is waiting, and
// fs.watch on the file's folder as a wake-up hint (polling still runs without it).

import * as fs from 'node:fs';
import { basename, dirname } from 'node:path';

export class Poller {
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private watcher: fs.FSWatcher | null = null;
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

  /** Watch the folder when asked to and not watching yet (it may not exist yet: retried each tick). */
  ensureWatch(): void {
    if (!this.watch || this.watcher !== null || this.stopped) return;
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
      this.watcher = null; // folder missing: polling still runs
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
    this.watcher?.close();
    this.watcher = null;
  }
}
