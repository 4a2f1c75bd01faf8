// Retention: deletes logs and metrics older than retention_days (by server receive time,
// received_at; agent clocks can be wrong — metric rows stored before migration 0031 have
// none and go by their sample time) and audit rows older than a year (or retention_days when longer), in
// small batches with a pause between them so the ingest path keeps the database connection
// (acks are never stalled behind one long DELETE). With max_db_bytes set, the oldest rows
// of either table are deleted, oldest first, until the database's live data fits.
// retention_days 0 turns the age purge off (the size cap still applies). Dialect-neutral (kysely) but for the order of logs: PostgreSQL reads it from the
// (received_at) index of migration 0002; SQLite from the rowid (migration 0030 dropped that
// index: one writer appends the rows in commit order, so rowid order is receive order), and
// deletes a prefix of it (see deleteBatch).
//
// The cutoff counts back from the clock only as far as this process has seen time pass
// (PassClock, DECISIONS H76): a clock stepped far ahead under a running server (`date -s`, a
// bad NTP source, a wrong hardware clock) would otherwise have the next pass delete every row
// older than retention_days by the new time.
import { sql } from 'kysely';
import { systemElapsedMs } from '../elapsed.js';
import type { DatabaseOutage } from '../db/outage.js';
import type { Storage } from '../db/storage.js';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';
import { deleteAuditBefore } from '../security/audit.js';
import { deleteEndedSessionsBefore, endedSessionsCutoff } from '../db/sessions.repository.js';

export interface RetentionOptions {
  retentionDays: number;
  maxDbBytes: number | null;
  /** Time between passes (default 10 minutes). The first pass runs firstRunDelayMs after start. */
  intervalMs?: number;
  firstRunDelayMs?: number;
  /** Rows per DELETE (default 500). */
  batchRows?: number;
  /** Pause between batches (default 10 ms). */
  pauseMs?: number;
  /** Where a database out of reach is told (a pass failing for it logs nothing of its own). */
  outage?: DatabaseOutage;
  /**
   * The time the cutoff counts back from: the database's (DECISIONS G31; received_at is written
   * in it). Default: this machine's clock.
   */
  now?: () => Date;
  /**
   * Time this process has seen pass (ms from any origin), which a step of `now` does not move
   * (default: systemElapsedMs(); tests inject one).
   */
  elapsedMs?: () => number;
}

export interface PurgeResult {
  logs: number;
  metrics: number;
  sizeLogs: number;
  sizeMetrics: number;
  /** Audit rows older than AUDIT_MIN_DAYS (or retention_days when longer). */
  audit: number;
}

type Purgeable = { table: 'logs' | 'metrics'; column: 'received_at' } | { table: 'metrics'; column: 'ts' };
const LOGS: Purgeable = { table: 'logs', column: 'received_at' };
const METRICS: Purgeable = { table: 'metrics', column: 'received_at' };
/** Metric rows stored before migration 0031 (received_at NULL): aged by sample time, as they were. */
const METRICS_LEGACY: Purgeable = { table: 'metrics', column: 'ts' };
/** Which metric rows `p` ages, as a test of received_at: those without one (METRICS_LEGACY), or those with. */
const receivedAtTest = (p: Purgeable): 'is' | 'is not' => (p.column === 'ts' ? 'is' : 'is not');
/**
 * Audit rows (every admin action, a probe asked through the admin API included) are kept for a
 * year, or retention_days when that is longer; retention_days 0 keeps them too (DECISIONS H36).
 */
export const AUDIT_MIN_DAYS = 365;
const NOTHING: PurgeResult = { logs: 0, metrics: 0, sizeLogs: 0, sizeMetrics: 0, audit: 0 };

/**
 * How far `now` may run ahead of the time this process has seen pass, between two passes, and
 * still be taken as it is (ms): NTP's slewing moves the monotonic clock with the wall clock and
 * its rare steps are seconds; a larger step ahead is not taken by retention (PassClock).
 */
export const CLOCK_JUMP_TOLERANCE_MS = 10 * 60_000;

/** A clock's reading for a pass: what the cutoff counts back from, and the clock's own time. */
export interface PassTime {
  /** The cutoff counts back from this. */
  now: Date;
  /** The clock as it reads (partitions are made ahead around it: the rows stored now are stamped in it). */
  clock: Date;
  /** clock - now: how far it is held behind the clock (0 when they agree). */
  heldMs: number;
  /** What changed since the last reading, to be told. */
  event?: 'jumped' | 'back' | 'agrees';
}

/**
 * The retention pass's time: the clock, as long as it advances with the time this process has
 * seen pass (the elapsed clock, which a step does not move). Anchored at start (or the first
 * reading); each reading computes `seen` = anchor + elapsed since. Within the tolerance of it,
 * the clock is taken and becomes the anchor. Further ahead (a step ahead, or a VM paused and
 * resumed whose clock was then set right), `seen` is taken instead: the cutoff never moves more
 * than the time seen pass, so nothing is deleted before it aged by that measure; it stays so
 * until the clock comes back to `seen` (or a restart takes the clock as it is). Further behind,
 * the clock is taken (it only keeps rows longer) and the anchor stays: a clock set back by
 * mistake and put right later is no jump.
 */
export class PassClock {
  private anchor: { wall: number; elapsed: number } | undefined;
  private state: 'agree' | 'ahead' | 'behind' = 'agree';
  /** The jump last told, while ahead: a further one more than the tolerance on is told again. */
  private toldMs = 0;

  constructor(
    private readonly wall: () => Date,
    private readonly elapsed: () => number,
    private readonly toleranceMs = CLOCK_JUMP_TOLERANCE_MS,
  ) {}

  /** Takes the clock as it reads now as the start of the time seen pass (once). */
  anchorNow(): void {
    if (this.anchor === undefined) this.anchor = { wall: this.wall().getTime(), elapsed: this.elapsed() };
  }

  read(): PassTime {
    const wall = this.wall().getTime();
    const elapsed = this.elapsed();
    const clock = new Date(wall);
    const anchor = this.anchor;
    if (anchor === undefined) {
      this.anchor = { wall, elapsed };
      return { now: clock, clock, heldMs: 0 };
    }
    const seen = anchor.wall + (elapsed - anchor.elapsed);
    const ahead = wall - seen;
    if (ahead > this.toleranceMs) {
      const told = this.state === 'ahead' && ahead - this.toldMs <= this.toleranceMs;
      this.toldMs = told ? Math.min(this.toldMs, ahead) : ahead;
      this.state = 'ahead';
      return { now: new Date(seen), clock, heldMs: ahead, ...(told ? {} : { event: 'jumped' as const }) };
    }
    if (ahead < -this.toleranceMs) {
      const told = this.state === 'behind';
      this.state = 'behind';
      return { now: clock, clock, heldMs: 0, ...(told ? {} : { event: 'back' as const }) };
    }
    const was = this.state;
    this.state = 'agree';
    this.anchor = { wall, elapsed };
    return { now: clock, clock, heldMs: 0, ...(was === 'ahead' ? { event: 'agrees' as const } : {}) };
  }
}

/** A span as said to an operator: 12 min, 5.0 h, 60.0 days. */
function spanText(ms: number): string {
  const m = Math.abs(ms) / 60_000;
  if (m < 120) return `${Math.round(m)} min`;
  if (m < 48 * 60) return `${(m / 60).toFixed(1)} h`;
  return `${(m / 1440).toFixed(1)} days`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Free pages handed back per step (1 MiB at the default 4 KiB page size). */
const RELEASE_PAGES = 256;

export class Retention {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<PurgeResult> | undefined;
  private stopped = false;
  private readonly batch: number;
  private readonly pauseMs: number;
  private readonly clock: PassClock;

  constructor(
    private readonly storage: Storage,
    private readonly logger: Logger,
    private readonly metrics: ServerMetrics,
    private readonly options: RetentionOptions,
  ) {
    this.batch = Math.max(1, options.batchRows ?? 500);
    this.pauseMs = options.pauseMs ?? 10;
    this.clock = new PassClock(() => options.now?.() ?? new Date(), options.elapsedMs ?? systemElapsedMs());
  }

  start(): void {
    // The time seen pass counts from here (on PostgreSQL after join: the offset to the database's clock is measured).
    this.clock.anchorNow();
    if (!this.storage.fileShrinks()) {
      this.logger.info(
        {},
        'retention: this database was created with auto_vacuum NONE, so the space of deleted rows is reused but the file does not shrink; to change that, stop the server and run: sqlite3 DB "PRAGMA auto_vacuum = INCREMENTAL; VACUUM;"',
      );
    }
    const schedule = (ms: number) => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        void this.run().finally(() => schedule(this.options.intervalMs ?? 600_000));
      }, ms);
      this.timer.unref();
    };
    schedule(this.options.firstRunDelayMs ?? 5_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /**
   * One pass (passes never overlap; on PostgreSQL not even between servers: a server whose
   * peer is running its pass skips this one, so a size cap is not purged twice over).
   * `now`: the time to count back from, as it is (tests); by default the clock, as far as this
   * process has seen time pass (PassClock).
   */
  run(now?: Date): Promise<PurgeResult> {
    if (this.running !== undefined) return this.running;
    const time = now !== undefined ? { now, clock: now, heldMs: 0 } : this.readClock();
    this.running = this.exclusivePass(time)
      .catch((error: unknown) => {
        if (!this.options.outage?.failed('retention', error)) this.logger.error({ err: String(error) }, 'retention pass failed; retrying at the next interval');
        return { ...NOTHING };
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** The clock for a pass, with what changed told (DECISIONS H76). */
  private readClock(): PassTime {
    const t = this.clock.read();
    this.metrics.retentionClockHeld.set(t.heldMs / 1000);
    if (t.event === undefined) return t;
    const pg = this.storage.dialect === 'postgres';
    // PostgreSQL: this machine's clock less the offset measured at the last lease renewal (G31),
    // so either PostgreSQL's clock stepped, or this one did since that renewal.
    const what = pg ? "the database's time as this server reckons it (its own clock less the offset to PostgreSQL's, measured at each lease renewal)" : "this machine's clock";
    const days = this.options.retentionDays;
    const cutoffOf = (d: Date) => (days > 0 ? new Date(d.getTime() - days * 86_400_000).toISOString() : null);
    if (t.event === 'jumped') {
      const cutoffs = days > 0 ? ` (cutoff ${cutoffOf(t.now)}, not ${cutoffOf(t.clock)})` : '';
      this.logger.warn(
        { clock_jump_s: Math.round(t.heldMs / 1000), clock: t.clock.toISOString(), counted_from: t.now.toISOString(), cutoff: cutoffOf(t.now), retention_days: days },
        `retention: ${what} jumped ${spanText(t.heldMs)} ahead of the time this process has seen pass (the system's monotonic clock, which a clock step does not move): ` +
          `retention counts on from the time it has seen pass, so it keeps the rows that clock would have it delete${cutoffs}, until the clock is back in step; ` +
          `check ${pg ? "the clocks of this machine and of PostgreSQL's, and their time source" : 'the clock and its time source'} (timedatectl status, chronyc tracking): a clock set by hand (date -s), a bad NTP source, a wrong hardware clock. ` +
          'A VM paused and resumed shows as this too, and then the time did pass: rows are kept that much longer until a restart. ' +
          'Put the clock right before restarting the server: a server starts from the clock as it reads then',
      );
    } else if (t.event === 'back') {
      this.logger.info(
        { clock: t.clock.toISOString(), retention_days: days },
        `retention: ${what} went back more than ${spanText(CLOCK_JUMP_TOLERANCE_MS)} from the time this process has seen pass; retention counts from it, which only keeps rows longer (nothing is deleted early)`,
      );
    } else {
      this.logger.info({ clock: t.clock.toISOString() }, `retention: ${what} is back in step with the time this process has seen pass; retention counts from it again`);
    }
    return t;
  }

  private async exclusivePass(time: PassTime): Promise<PurgeResult> {
    if (this.storage.exclusiveJob === undefined) return this.pass(time);
    const r = await this.storage.exclusiveJob('retention', () => this.pass(time));
    if (r !== undefined) return r;
    this.logger.debug({}, 'retention: another server is running its pass; skipped');
    return { ...NOTHING };
  }

  private async pass({ now, clock }: Pick<PassTime, 'now' | 'clock'>): Promise<PurgeResult> {
    const started = performance.now();
    const result: PurgeResult = { ...NOTHING };
    // retention_days 0 keeps everything (server-config.json): no age purge at all. A cutoff
    // of "now" would delete every row received before this pass.
    const days = this.options.retentionDays;
    const cutoff = days > 0 ? new Date(now.getTime() - days * 86_400_000).toISOString() : null;
    if (this.storage.maintainPartitions !== undefined) {
      // PostgreSQL: whole expired days go as partitions (no DELETE); the rest of the
      // cutoff's own day is deleted in batches below. Days are made ahead around the clock as
      // it reads: the rows stored meanwhile are stamped in it.
      const { dropped } = await this.storage.maintainPartitions(clock, cutoff);
      for (const d of dropped) {
        result.logs += d.rows;
        this.metrics.retentionPurged.labels('logs', 'age').inc(d.rows);
      }
      if (dropped.length > 0) this.logger.info({ partitions: dropped.map((d) => d.name), rows: dropped.reduce((n, d) => n + d.rows, 0) }, 'retention: expired day partitions dropped');
    }
    if (cutoff !== null) {
      result.logs += await this.purgeOlder(LOGS, cutoff, 'age');
      result.metrics = (await this.purgeOlder(METRICS_LEGACY, cutoff, 'age')) + (await this.purgeOlder(METRICS, cutoff, 'age'));
      const auditCutoff = new Date(now.getTime() - Math.max(days, AUDIT_MIN_DAYS) * 86_400_000).toISOString();
      // server/security/audit.ts owns the table
      result.audit = await this.inBatches('audit', 'age', () => deleteAuditBefore(this.storage.db, auditCutoff, this.batch));
    }
    // Console sign-outs (DECISIONS J14): a row is of no use once its cookie expired (kept a day
    // more for servers whose clock runs behind), whatever retention_days says.
    await this.inBatches('ended_sessions', 'age', () => deleteEndedSessionsBefore(this.storage.db, endedSessionsCutoff(now), this.batch));
    const max = this.options.maxDbBytes;
    if (max !== null && max > 0 && this.storage.usedBytesIsCostly) {
      const n = await this.planSizePurge(max);
      result.sizeLogs += n.logs;
      result.sizeMetrics += n.metrics;
    } else if (max !== null && max > 0) {
      while (!this.stopped && (await this.storage.usedBytes()) > max) {
        const which = await this.oldestTable();
        if (which === undefined) break;
        const n = await this.deleteBatch(which, undefined);
        if (n === 0) break;
        this.metrics.retentionPurged.labels(which.table, 'size').inc(n);
        if (which === LOGS) result.sizeLogs += n;
        else result.sizeMetrics += n;
        await sleep(this.pauseMs);
      }
    }
    this.metrics.retentionRuns.inc();
    const total = result.logs + result.metrics + result.sizeLogs + result.sizeMetrics + result.audit;
    if (total > 0) {
      const released_bytes = await this.releaseFreePages();
      this.logger.info(
        { ...result, cutoff, retention_days: this.options.retentionDays, max_db_bytes: max, released_bytes, ms: Math.round(performance.now() - started) },
        'retention: old rows deleted',
      );
    }
    return result;
  }

  /**
   * The size cap where measuring is a scan (PostgreSQL): from one measurement, the number
   * of oldest rows whose bytes make the excess (average row size of both tables, 2 %
   * more), deleted oldest first in batches; measured again, at most 3 rounds a pass.
   */
  private async planSizePurge(max: number): Promise<{ logs: number; metrics: number }> {
    const done = { logs: 0, metrics: 0 };
    for (let round = 0; round < 3 && !this.stopped; round++) {
      const used = await this.storage.usedBytes();
      if (used <= max) break;
      const count = async (t: 'logs' | 'metrics') =>
        Number((await this.storage.db.selectFrom(t).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
      const rows = (await count('logs')) + (await count('metrics'));
      if (rows === 0) break;
      let left = Math.max(1, Math.ceil(((used - max) / (used / rows)) * 1.02));
      while (left > 0 && !this.stopped) {
        const which = await this.oldestTable();
        if (which === undefined) break;
        const n = await this.deleteBatch(which, undefined, Math.min(this.batch, left));
        if (n === 0) break;
        left -= n;
        this.metrics.retentionPurged.labels(which.table, 'size').inc(n);
        if (which === LOGS) done.logs += n;
        else done.metrics += n;
        await sleep(this.pauseMs);
      }
    }
    return done;
  }

  /**
   * Gives the pages of the deleted rows back to the file system, 1 MiB at a time with
   * the same pause as the deletes, so the database file shrinks with its data.
   */
  private async releaseFreePages(): Promise<number> {
    let released = 0;
    while (!this.stopped) {
      const n = await this.storage.releaseFreePages(RELEASE_PAGES);
      if (n === 0) break;
      released += n;
      await sleep(this.pauseMs);
    }
    return released;
  }

  /**
   * Which rows the size cap deletes next: the older of the oldest log and the oldest metric
   * row. Metric rows stored before migration 0031 come first (they are older than any row
   * with a received_at), compared by their sample time.
   */
  private async oldestTable(): Promise<Purgeable | undefined> {
    const legacy = await this.oldest(METRICS_LEGACY);
    const metrics = legacy === undefined ? METRICS : METRICS_LEGACY;
    const [l, m] = await Promise.all([this.oldest(LOGS), legacy ?? this.oldest(METRICS)]);
    if (l === undefined && m === undefined) return undefined;
    return m === undefined || (l !== undefined && l <= m) ? LOGS : metrics;
  }

  private async oldest(p: Purgeable): Promise<string | undefined> {
    if (p.table === 'logs' && this.storage.dialect === 'sqlite') {
      const first = await this.storage.db.selectFrom('logs').select('received_at').orderBy(sql`rowid`).limit(1).executeTakeFirst();
      return first?.received_at;
    }
    if (p.table === 'metrics') {
      const row = await this.metricRows(p).select(p.column).orderBy(p.column).limit(1).executeTakeFirst();
      return row === undefined ? undefined : ((row as Record<string, string | null>)[p.column] ?? undefined);
    }
    const row = await this.storage.db.selectFrom(p.table).select(p.column).orderBy(p.column).limit(1).executeTakeFirst();
    return row?.received_at;
  }

  /** The metric rows `p` ages: those with a received_at, or (METRICS_LEGACY) those without. */
  private metricRows(p: Purgeable) {
    return this.storage.db.selectFrom('metrics').where('received_at', receivedAtTest(p), null);
  }

  private purgeOlder(p: Purgeable, cutoff: string, reason: 'age'): Promise<number> {
    return this.inBatches(p.table, reason, () => this.deleteBatch(p, cutoff));
  }

  /** Runs `batch` (one DELETE, returning its rows) until it deletes nothing, with the pause between; counted under `table`. */
  private async inBatches(table: string, reason: 'age', batch: () => Promise<number>): Promise<number> {
    let total = 0;
    while (!this.stopped) {
      const n = await batch();
      if (n === 0) break;
      total += n;
      this.metrics.retentionPurged.labels(table, reason).inc(n);
      await sleep(this.pauseMs);
    }
    return total;
  }

  /**
   * Deletes a batch of the oldest rows (those with the column below `cutoff`, or any when
   * undefined). Returns the rows deleted.
   *
   * logs: exactly `batch` rows, picked by their key (host_id, seq) in received_at order: a
   * row-value IN (SQLite and PostgreSQL alike) that costs about a third per row of a range
   * delete on received_at, and keeps each DELETE (which blocks the ingest path's
   * connection) short however many rows one commit stored.
   * metrics (no key): up to the batch-th oldest value, so rows sharing it go together; rows
   * with a received_at by it, rows stored before migration 0031 by their sample time.
   *
   * logs on SQLite: the first `batch` rows by rowid (the order they were stored in), and of
   * those the leading run older than `cutoff`: one range delete on the rowid, no index of
   * its own. A row stored after a younger one (the server's clock stepped back) waits until
   * that one is old too: kept a little longer, never deleted early.
   */
  private async deleteBatch(p: Purgeable, cutoff: string | undefined, limit = this.batch): Promise<number> {
    const db = this.storage.db;
    if (p.table === 'logs' && this.storage.dialect === 'sqlite') {
      const first = await db.selectFrom('logs').select([sql<number>`rowid`.as('r'), 'received_at']).orderBy(sql`rowid`).limit(limit).execute();
      let last: number | undefined;
      for (const row of first) {
        if (cutoff !== undefined && !(row.received_at < cutoff)) break;
        last = row.r;
      }
      if (last === undefined) return 0;
      const r = await db.deleteFrom('logs').where(sql<number>`rowid`, '<=', last).executeTakeFirst();
      return Number(r.numDeletedRows);
    }
    if (p.table === 'logs') {
      let oldest = db.selectFrom('logs').select(['host_id', 'seq']);
      if (cutoff !== undefined) oldest = oldest.where('received_at', '<', cutoff);
      const batch = oldest.orderBy('received_at').limit(limit).$asTuple('host_id', 'seq');
      const r = await db
        .deleteFrom('logs')
        .where((eb) => eb(eb.refTuple('host_id', 'seq'), 'in', batch))
        .executeTakeFirst();
      return Number(r.numDeletedRows);
    }
    let q = this.metricRows(p).select(p.column);
    if (cutoff !== undefined) q = q.where(p.column, '<', cutoff);
    const boundary = await q.orderBy(p.column).limit(1).offset(limit - 1).executeTakeFirst();
    let del = db.deleteFrom('metrics').where('received_at', receivedAtTest(p), null);
    if (cutoff !== undefined) del = del.where(p.column, '<', cutoff);
    if (boundary !== undefined) del = del.where(p.column, '<=', (boundary as Record<string, string>)[p.column] as string);
    const r = await del.executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
