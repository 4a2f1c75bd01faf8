// Heartbeats, batched (DECISIONS G19). Every agent.heartbeat moves its host's last_seen; with
// one statement each, 20,000 idle agents (a heartbeat each 30–40 s) cost PostgreSQL a third
// of a core in commits. The hosts heard from are collected and written together, one
// statement every FLUSH_MS (or at once past MAX_HOSTS): last_seen may lag by that much.
// A failed write is told once (the database out of reach: to the outage); the hosts' next
// heartbeat writes them again.
import { touchLastSeenMany } from '../db/agents.repository.js';
import type { DatabaseOutage } from '../db/outage.js';
import type { Storage } from '../db/storage.js';
import type { Logger } from '../log.js';

const FLUSH_MS = 250;
const MAX_HOSTS = 2000;
/** A failed write other than an outage is logged at most this often. */
const WARN_EVERY_MS = 60_000;

export class LastSeenBatch {
  private hosts = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private writing: Promise<void> = Promise.resolve();
  private lastWarn = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly storage: Pick<Storage, 'db' | 'dialect'>,
    private readonly outage: DatabaseOutage,
    private readonly logger: Logger,
    /** The time last_seen is written in (the database's: DECISIONS G31). */
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The host was heard from: its last_seen moves at the next write. */
  touch(host_id: string): void {
    this.hosts.add(host_id);
    if (this.hosts.size >= MAX_HOSTS) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Writes what is collected now; resolves when every write so far is done. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.hosts.size > 0) {
      const ids = [...this.hosts];
      this.hosts = new Set();
      // one write at a time, in order: a later write never lands before an earlier one
      this.writing = this.writing.then(() => this.write(ids));
    }
    return this.writing;
  }

  private async write(ids: string[]): Promise<void> {
    try {
      await touchLastSeenMany(this.storage.db, this.storage.dialect, ids, this.now().toISOString());
      this.outage.succeeded();
    } catch (error) {
      if (this.outage.failed('heartbeat', error)) return;
      const now = Date.now();
      if (now - this.lastWarn < WARN_EVERY_MS) return;
      this.lastWarn = now;
      this.logger.warn({ hosts: ids.length, err: String(error) }, 'heartbeat: last_seen update failed (the hosts are written again at their next heartbeat)');
    }
  }
}
