// StatusWriter: publishes DIR/status.json (status-file.ts) for `cortex-agent status`.
// Written when something changed (markDirty) on a timer, or at once on write(true) (a state
// transition, an applied config, storage recovered); at most one write at a time (a write
// asked for meanwhile runs after it). Idle cost: the status is recomputed every 5 s unless
// something changed sooner, and an unchanged file is rewritten only every 30 s (its updated_at moves).

import type { Logger } from './log.js';
import { writeStatusFile, type StatusFile } from './status-file.js';

/** An unchanged status is rewritten this often (updated_at shows the agent is alive). */
export const STATUS_REFRESH_MS = 30_000;
/**
 * Nothing marked dirty: the status is still recomputed this often and written when it changed.
 * A source's own state (an error such as "is a FIFO", a file appearing) changes without
 * telling the agent, and showed up only at the 30 s refresh. Recomputing costs microseconds.
 */
export const STATUS_RECHECK_MS = 5_000;

export interface StatusWriterOptions {
  /** Write DIR/status.json at all (default true). */
  enabled?: boolean;
  /** How often a changed status is written (default 1000 ms). */
  intervalMs?: number;
  /** The file writer (default writeStatusFile: temp file + rename). */
  write?: (dir: string, status: StatusFile) => Promise<void>;
  now?: () => number;
}

export class StatusWriter {
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  /** The last write failed (said once in the log until one succeeds). */
  private failing = false;
  private again = false;
  private lastJson = '';
  private lastWrite = 0;
  private lastCheck = 0;
  private dirty = true;
  private readonly enabled: boolean;
  private readonly writeFile: (dir: string, status: StatusFile) => Promise<void>;
  private readonly now: () => number;

  constructor(
    private readonly stateDir: string,
    private readonly content: () => StatusFile,
    private readonly log: Logger,
    private readonly options: StatusWriterOptions = {},
  ) {
    this.enabled = options.enabled !== false;
    this.writeFile = options.write ?? writeStatusFile;
    this.now = options.now ?? Date.now;
  }

  /** Starts the periodic write (a no-op when disabled). */
  start(): void {
    if (!this.enabled || this.timer) return;
    this.timer = setInterval(() => this.write(false), this.options.intervalMs ?? 1000);
    this.timer.unref?.();
  }

  /** Something status shows changed: the next periodic write recomputes the file. */
  markDirty(): void {
    this.dirty = true;
  }

  /** Writes the file when something changed (or `force`), at most one write at a time. */
  write(force: boolean): void {
    if (!this.enabled) return;
    if (this.writing) {
      this.again = true;
      return;
    }
    if (!force && !this.dirty && this.now() - this.lastCheck < STATUS_RECHECK_MS) return;
    this.dirty = false;
    this.lastCheck = this.now();
    let content: StatusFile;
    try {
      content = this.content();
    } catch {
      return;
    }
    const { updated_at: _ignored, ...rest } = content;
    const sig = JSON.stringify(rest);
    if (!force && sig === this.lastJson && this.now() - this.lastWrite < STATUS_REFRESH_MS) return;
    this.lastJson = sig;
    this.lastWrite = this.now();
    this.writing = this.writeFile(this.stateDir, content)
      .then(() => {
        if (this.failing) this.log.info({}, 'status.json written again');
        this.failing = false;
      })
      .catch((err: unknown) => {
        // Tried again at the next tick (not only after STATUS_REFRESH_MS): the file is stale.
        this.dirty = true;
        this.lastJson = '';
        // said once until a write succeeds again: `cortex-agent status` then shows an old file
        if (!this.failing) this.log.warn({ err: (err as Error).message }, 'cannot write status.json: `cortex-agent status` shows what it held before; trying again');
        this.failing = true;
      })
      .finally(() => {
        this.writing = null;
        if (this.again) {
          this.again = false;
          this.write(true);
        }
      });
  }

  /** Waits for a write under way, writes the final status and waits for that write. */
  async flush(): Promise<void> {
    if (this.writing) await this.writing;
    this.write(true);
    if (this.writing) await this.writing;
  }

  /** Stops the periodic write (flush() still writes). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
