// Ingest commits the database holds up (DECISIONS H45). A lock another session holds on the
// logs table (a forgotten `LOCK TABLE` or `ALTER TABLE` in an open transaction, a long
// `VACUUM FULL`), or a database too overloaded to finish a statement, makes every commit wait
// without failing: the agents' pushes go unacked, yet `select 1` answers. Before this watch the
// server said nothing and /healthz answered 200 for as long as it lasted. Now: a warning once
// the oldest commit has waited `stallMs`, a line every minute while it lasts, one when it is
// over; /healthz answers 503 "stalled" meanwhile; cortex_ingest_commit_wait_seconds shows it.
import type { Logger } from './log.js';
import type { Ingest } from './ingest.js';

/** How long the oldest running ingest commit may wait before the server reports it held up. */
export const COMMIT_STALL_MS = 10_000;
/** How often the watch looks. */
const CHECK_EVERY_MS = 1000;

const HINT: Readonly<Record<'sqlite' | 'postgres', string>> = {
  postgres:
    "on PostgreSQL look for what blocks them: select pid, state, wait_event_type, query, pg_blocking_pids(pid) from pg_stat_activity where datname = current_database() (a session holding a lock on logs or agents in an open transaction: end it, or pg_terminate_backend(pid)); or the database is overloaded (CPU, I/O)",
  sqlite: "on SQLite the database file's disk is not finishing writes (a stalled or very slow volume), or another process holds the file's write lock",
};

export interface CommitStallOptions {
  logger: Logger;
  dialect: 'sqlite' | 'postgres';
  /** Default COMMIT_STALL_MS. */
  stallMs?: number;
  /** Milliseconds between two "still held up" lines (default 60,000). */
  summaryEveryMs?: number;
  now?: () => number;
}

export class CommitStallWatch {
  /** When the oldest commit of the running stall started (now()'s clock), or null. */
  private since: number | null = null;
  private lastLine = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  readonly stallMs: number;
  private readonly now: () => number;

  constructor(
    private readonly ingest: Pick<Ingest, 'commitsWaiting'>,
    private readonly o: CommitStallOptions,
  ) {
    this.stallMs = o.stallMs ?? COMMIT_STALL_MS;
    this.now = o.now ?? (() => performance.now());
  }

  /** How long the oldest running commit has waited, when that is at least stallMs (else 0): for /healthz. */
  stalledMs(): number {
    const { oldestMs } = this.ingest.commitsWaiting(this.now());
    return oldestMs >= this.stallMs ? oldestMs : 0;
  }

  /** Looks once: logs the start of a stall, a summary while it lasts, and its end. */
  check(): void {
    const now = this.now();
    const { oldestMs, count } = this.ingest.commitsWaiting(now);
    const secs = Math.round(oldestMs / 1000);
    if (oldestMs >= this.stallMs) {
      if (this.since === null) {
        this.since = now - oldestMs;
        this.lastLine = now;
        this.o.logger.warn(
          { waiting_secs: secs, commits_waiting: count },
          `ingest commits held up: the oldest has waited ${secs} s for the database, which neither stores nor refuses them; pushes are not acked meanwhile (agents keep their entries and wait) — ${HINT[this.o.dialect]}`,
        );
      } else if (now - this.lastLine >= (this.o.summaryEveryMs ?? 60_000)) {
        this.lastLine = now;
        this.o.logger.warn({ waiting_secs: secs, commits_waiting: count, held_up_secs: Math.round((now - this.since) / 1000) }, 'ingest commits still held up');
      }
      return;
    }
    if (this.since !== null) {
      this.o.logger.info({ held_up_secs: Math.round((now - this.since) / 1000) }, 'ingest commits go through again');
      this.since = null;
    }
  }

  start(): void {
    this.timer ??= setInterval(() => this.check(), Math.min(CHECK_EVERY_MS, this.stallMs));
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
