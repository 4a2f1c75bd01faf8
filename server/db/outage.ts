// The database out of reach (PostgreSQL stopped or restarting, the network to it cut, a
// pooled connection killed): every part of the server that uses it fails at its own pace —
// the control watcher every 300 ms, each agent's pushes every second, the lease every 5 s,
// the console's requests — and each used to log every failure: with a thousand agents a
// thousand error lines a second, the cause buried among them (DECISIONS G11).
//
// One DatabaseOutage per server process turns that into: one error line when it starts
// (the cause, what the server does meanwhile, what to check), one summary a minute while it
// lasts (how long, how many operations failed, by kind), one line when an operation succeeds
// again (how long it lasted); `cortex_database_up` is 0 meanwhile. Failures of a statement of
// its own (a constraint, a bug) are not an outage: their callers log them as before.
//
// A database that answers but refuses every write — read-only (a standby reached after a
// failover, default_transaction_read_only, a managed database made read-only when its
// storage filled) or its disk full — is told the same way, in its own words (DECISIONS G21).
// Reads still succeed then, so only a write that succeeds ends it (`succeeded`), not a read
// (`readSucceeded`): otherwise the control watcher's next read would end it every 300 ms and
// the next failed push start it again, one error line each time.
import { isDiskFullCode, isUnreachableCode } from '../../common/errors.js';
import type { Logger } from '../log.js';

/**
 * The database did not answer in time on a connection that was open: the network path to it
 * drops packets (a firewall's DROP, a partition, a proxy or host that hangs), so nothing is
 * refused or reset either, and TCP alone would wait ~15 minutes before giving up (DECISIONS
 * G43). The connection it happened on is closed; out of reach, for the outage account.
 */
export class DatabaseSilentError extends Error {
  readonly code = 'CORTEX_DB_SILENT';
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseSilentError';
  }
}

/** How long the operation behind a failure had waited when it failed (ms), where the storage knows. */
const waited = new WeakMap<object, number>();

/**
 * Notes that the operation `error` ends had waited `ms` for the database when it failed (a
 * statement for its answer, a caller for a pool connection). The outage account tells by it
 * when the operation began: one begun before the last outage ended failed of that outage, late
 * (DECISIONS G46). Returns `error`.
 */
export function noteWaited<E>(error: E, ms: number): E {
  if (typeof error === 'object' && error !== null && !waited.has(error)) waited.set(error, Math.max(0, ms));
  return error;
}

/** What `noteWaited` noted for `error`, if anything. */
export function waitedFor(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null ? waited.get(error) : undefined;
}

/** `ms` as the seconds a message says ("0.4 s", "10 s"). */
export function secondsOf(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/**
 * The failure says the path to the database is silent (not refused, not reset): a statement cut
 * for want of an answer, or a new connection that got none in time (node-postgres's own words).
 */
export function isSilence(error: unknown): boolean {
  if ((error as { code?: unknown } | null | undefined)?.code === 'CORTEX_DB_SILENT') return true;
  const message = (error as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' && /^Connection terminated due to connection timeout/.test(message);
}

/** PostgreSQL SQLSTATEs that say the server cannot take work now (not what a statement did). */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * Whether `error` says the database could not be reached or used at all: a refused or
 * broken connection, PostgreSQL shutting down or starting up, its connection class (08…),
 * no connection slot left, a pool that could not connect in time.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null | undefined;
  const code = e?.code;
  if (isUnreachableCode(code) || code === 'CORTEX_DB_SILENT') return true;
  // A Unix socket URL (host=/var/run/postgresql): a PostgreSQL stopped or not started yet has
  // removed its socket file, so connecting says ENOENT rather than ECONNREFUSED (DECISIONS G37).
  if (code === 'ENOENT' && (error as { syscall?: unknown }).syscall === 'connect') return true;
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code))) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  // `ALTER DATABASE … ALLOW_CONNECTIONS false` (maintenance, a restore): 55000, a class that also
  // holds what a statement did ("already pending detach"), so only with this message (H44)
  if (code === '55000' && /is not currently accepting connections/.test(message)) return true;
  return /Connection terminated|timeout expired|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message);
}

/** Why a database that answers refuses writes, if it does: read-only (25006) or its disk full. */
export type WriteRefusal = 'read_only' | 'disk_full';

export function writeRefusal(error: unknown): WriteRefusal | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (code === '25006') return 'read_only';
  if (isDiskFullCode(code)) return 'disk_full';
  return undefined;
}

/**
 * PostgreSQL refused this server's login (28P01: the password is wrong now; 28000: the role
 * or pg_hba.conf no longer lets it in) — a password rotated under a running server. Connections
 * already open go on working until the pool closes them, so successes come between the failures.
 */
export function loginRefused(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return code === '28P01' || code === '28000';
}

/**
 * PostgreSQL has no database of the --db name any more (3D000 at each new connection): dropped
 * (`drop database … with (force)` ends every connection first, as out of reach), renamed, or a
 * failover to a server restored without it (DECISIONS G29).
 */
export function databaseMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return code === '3D000' || code === 'CORTEX_DB_FILE_GONE'; // the SQLite file deleted under the server (H20)
}

/** A login outage ends only after this long without a refused login (old connections still succeed meanwhile). */
const LOGIN_SETTLE_MS = 30_000;

export type OutageKind = 'unreachable' | 'login' | 'missing' | WriteRefusal;

/**
 * Which database-wide condition `error` shows, if any: the one classification that the outage
 * account, the ingest path's -32007, the admin API's 503, /healthz and the grouped PostgreSQL
 * commit all go by. Undefined: a failure of the statement itself.
 */
export function outageKind(error: unknown): OutageKind | undefined {
  if (isDatabaseUnreachable(error)) return 'unreachable';
  if (loginRefused(error)) return 'login';
  if (databaseMissing(error)) return 'missing';
  return writeRefusal(error);
}

/** What the condition means for this server, as a -32007 reason says it. */
export const OUTAGE_WHY: Readonly<Record<OutageKind, string>> = {
  unreachable: 'the server cannot reach its database',
  login: "the server's database refused its login",
  missing: "the server's database does not exist any more",
  read_only: "the server's database is read-only",
  disk_full: "the server's disk is full",
};

const MEANWHILE = 'pushes are answered -32007 (agents keep their entries and resend them), hellos fail and agents retry; retrying';

/** The outage's first log line: what happened, what the server does meanwhile, what to check. */
function firstLine(kind: OutageKind, error: unknown): string {
  switch (kind) {
    case 'read_only':
      return `database refuses writes: it is read-only (a standby — after a failover --db may lead to the old primary —, default_transaction_read_only on, or a managed database made read-only, often because its storage filled); ${MEANWHILE} — point --db at the primary, or lift the read-only setting`;
    case 'disk_full':
      return `database refuses writes: its disk is full; ${MEANWHILE} — free space where the database lives (or cap it with --max-db-bytes)`;
    case 'login':
      return `database unusable: PostgreSQL refused this server's login (its password was changed, or the role or pg_hba.conf no longer lets it in); connections already open work until they close, new ones fail: ${MEANWHILE} — restore the login, or start serve again with the --db that has the new password`;
    case 'missing': {
      if ((error as { code?: unknown } | null)?.code === 'CORTEX_DB_FILE_GONE') return `database unusable: ${(error as Error).message}; ${MEANWHILE}`;
      const name = /database "(.*)" does not exist/.exec(describe(error))?.[1];
      return `database unusable: PostgreSQL has no database ${name === undefined ? 'of the --db name' : JSON.stringify(name)} any more (dropped or renamed, or --db now leads to a server without it, e.g. a new primary restored without it); ${MEANWHILE} — restore or recreate it (cortex-server migrate makes the tables; serve goes on by itself once it answers), or point --db at the right database`;
    }
    case 'unreachable':
      if (noConnectionSlot(error)) return `database unusable: PostgreSQL has no connection slot left for this server; ${MEANWHILE} — ${NO_SLOT_HINT}`;
      if (poolBusy(error)) {
        return `database unusable: no pool connection came free in time (every one busy: PostgreSQL slow, locked or out of reach, or this server overloaded); ${MEANWHILE} — check PostgreSQL (pg_stat_activity) and this server's CPU; raise --db-pool or add servers if the load is real`;
      }
      if ((error as { code?: unknown } | null)?.code === 'CORTEX_DB_SILENT') {
        return `database not answering: statements get no answer, nothing is refused either (packets dropped on the way, or the database's host hangs): ${MEANWHILE} — check the network between this host and the database (a firewall dropping packets, a route, a partition) and that the database's host responds`;
      }
      return `database out of reach: ${MEANWHILE} — check that the database runs and that this host reaches it (--db)`;
  }
}

/** The conditions under which reads fail too (a read that succeeds ends them); the others refuse only writes. */
const READS_FAIL: ReadonlySet<OutageKind> = new Set<OutageKind>(['unreachable', 'login', 'missing']);

const STILL: Readonly<Record<OutageKind, string>> = {
  unreachable: 'database still out of reach',
  login: "database still refusing this server's login",
  missing: 'database still missing',
  read_only: 'database still refusing writes',
  disk_full: 'database still refusing writes',
};

const OVER: Readonly<Record<OutageKind, string>> = {
  unreachable: 'database reachable again',
  login: "database takes this server's login again",
  missing: 'database exists again',
  read_only: 'database takes writes again',
  disk_full: 'database takes writes again',
};

/** What an admin command or `serve` says about a PostgreSQL database that is read-only (25006) for its user. */
export const READ_ONLY_DB_HINT =
  'it is read-only: a standby (after a failover --db may still name the old primary), or default_transaction_read_only set for this user or database — point --db at the primary, or lift the setting';

/** What to do when PostgreSQL has no connection slot left for this server (53300). */
export const NO_SLOT_HINT =
  'other clients hold every connection PostgreSQL allows (max_connections; see pg_stat_activity): each cortex-server opens up to --db-pool + 4 (default 14); ' +
  'close idle clients, lower --db-pool, or raise max_connections';

/** PostgreSQL refused a new connection: every slot it allows is taken (53300 too_many_connections). */
export function noConnectionSlot(error: unknown): boolean {
  return (error as { code?: unknown } | null | undefined)?.code === '53300';
}

export interface OutageOptions {
  logger: Logger;
  /** Milliseconds between two "still out of reach" lines (default 60,000). */
  summaryEveryMs?: number;
  now?: () => number;
}

export class DatabaseOutage {
  private since: number | null = null;
  /** When the last outage ended (`succeeded`), on this account's clock. */
  private endedAt = Number.NEGATIVE_INFINITY;
  private kind: OutageKind = 'unreachable';
  private lastLoginRefused = 0;
  private lastLine = 0;
  private readonly failedOps = new Map<string, number>();
  private readonly otherFailures = new Map<string, { at: number; unlogged: number }>();
  private readonly summaryEveryMs: number;
  private readonly now: () => number;

  constructor(private readonly o: OutageOptions) {
    this.summaryEveryMs = o.summaryEveryMs ?? 60_000;
    // Every time this account keeps is an interval (how long down, a minute between lines, a
    // wait before the end): by a clock no wall-clock step moves (G45).
    this.now = o.now ?? (() => performance.now());
  }

  /** What is wrong with the database now, or null: for /healthz, which a load balancer asks. */
  get condition(): OutageKind | null {
    return this.since === null ? null : this.kind;
  }

  /** The database is out of reach (from the first such failure to the next success); not while it only refuses writes. */
  get down(): boolean {
    return this.since !== null && READS_FAIL.has(this.kind);
  }

  /**
   * Reports a failed database operation (`what`: which part of the server, e.g. "ingest").
   * Returns true when the failure was the database out of reach or refusing writes
   * (writeRefusal): it is logged here, rate limited, and the caller logs nothing of it (nor is
   * it logged at all when the operation began before the last outage ended: that outage's).
   * False: a failure of the operation itself, for the caller to report as it did.
   */
  failed(what: string, error: unknown): boolean {
    const kind = outageKind(error);
    if (kind === undefined) return false;
    const now = this.now();
    // An operation begun before the last outage ended failed of that outage, late: a statement
    // sent while the path was frozen and cut for silence once the database answered again, a
    // connection begun then that timed out. Not a new outage: that flapped /healthz and
    // cortex_database_up back to down right after the database came back (DECISIONS G46).
    const waitedMs = waitedFor(error);
    if (this.since === null && waitedMs !== undefined && now - waitedMs < this.endedAt) return true;
    if (kind === 'login') this.lastLoginRefused = now;
    this.failedOps.set(what, (this.failedOps.get(what) ?? 0) + 1);
    const err = describe(error);
    if (this.since === null || (this.kind === 'unreachable' && kind !== 'unreachable')) {
      // A new account; or connections that were cut (a failover, a restart) and now the
      // cause behind it shows (read-only, a refused login): said once, in its own words.
      // Never back to "out of reach": in-flight queries cut later would flap the account.
      this.since ??= now;
      this.lastLine = now;
      this.kind = kind;
      this.o.logger.error({ err, failed: what }, firstLine(kind, error));
    } else this.summarize(now, err);
    return true;
  }

  /**
   * An operation that failed only because of the outage known now (no error of its own, e.g. a
   * hello whose reads waited past hello_timeout_ms while the database is out of reach): counted
   * in the outage's lines. False when no outage with failing reads is known (the caller says it).
   */
  counted(what: string): boolean {
    if (!this.down) return false;
    this.failedOps.set(what, (this.failedOps.get(what) ?? 0) + 1);
    this.summarize(this.now());
    return true;
  }

  /** The "still out of reach" line, once per summaryEveryMs while an outage lasts. */
  private summarize(now: number, err?: string): void {
    if (this.since === null || now - this.lastLine < this.summaryEveryMs) return;
    this.lastLine = now;
    this.o.logger.error({ ...(err !== undefined ? { err } : {}), down_secs: Math.round((now - this.since) / 1000), failed_operations: this.counts() }, STILL[this.kind]);
  }

  /**
   * The retry_after_ms for a push refused by the outage: 1 s in its first 10 s (a restart is
   * over soon), then 5 s, so that a fleet resending every batch does not keep the server busy
   * parsing pushes it can only refuse.
   */
  retryAfterMs(): number {
    return this.since !== null && this.now() - this.since >= 10_000 ? 5_000 : 1_000;
  }

  /** A write to the database succeeded: ends an outage, with one line saying how long it lasted. */
  succeeded(): void {
    if (this.since === null) return;
    // A login outage: operations on connections opened before go on succeeding between the
    // refused ones; it is over once no login was refused for a while.
    if (this.kind === 'login' && this.now() - this.lastLoginRefused < LOGIN_SETTLE_MS) return;
    const downMs = this.now() - this.since;
    this.o.logger.info({ down_secs: Math.round(downMs / 100) / 10, failed_operations: this.counts() }, OVER[this.kind]);
    this.since = null;
    this.endedAt = this.now();
    this.failedOps.clear();
  }

  /**
   * For a failure `failed` did not take (the statement's own: a table dropped, a right revoked,
   * a statement timeout, a trigger refusing): whether the caller logs it now (DECISIONS G30).
   * The first of a kind (caller, code and message) is logged; the same again within a minute
   * is only counted, and the next one after it is logged with `repeated`: how many were not.
   * Undefined: say nothing now.
   */
  shouldLog(what: string, error: unknown): { repeated?: number } | undefined {
    const key = `${what}\u0000${describe(error)}`;
    const now = this.now();
    const seen = this.otherFailures.get(key);
    if (seen !== undefined && now - seen.at < this.summaryEveryMs) {
      seen.unlogged++;
      return undefined;
    }
    if (seen === undefined && this.otherFailures.size >= 200) this.otherFailures.clear(); // many distinct messages: each is logged anyway
    this.otherFailures.set(key, { at: now, unlogged: 0 });
    return seen !== undefined && seen.unlogged > 0 ? { repeated: seen.unlogged } : {};
  }

  /**
   * A failed database operation, told once: `failed` takes the database-wide conditions;
   * anything else is handed to `log` as `shouldLog` allows (the caller's line, with `repeated`).
   * Returns what `failed` returned: true when it was the database down or refusing writes.
   */
  report(what: string, error: unknown, log: (fields: { repeated?: number }) => void): boolean {
    if (this.failed(what, error)) return true;
    const say = this.shouldLog(what, error);
    if (say !== undefined) log(say);
    return false;
  }

  /** A read succeeded: ends the database out of reach, not one that refuses writes. */
  readSucceeded(): void {
    if (READS_FAIL.has(this.kind)) this.succeeded();
  }

  private counts(): Record<string, number> {
    return Object.fromEntries(this.failedOps);
  }
}

/**
 * pg-pool's error for a caller that waited its whole connection timeout for a connection of a
 * full pool (a new connection that times out says "Connection terminated due to connection
 * timeout"): the database may be reachable but slow, or the server too busy to use it (DECISIONS G15).
 */
function poolBusy(error: unknown): boolean {
  return (error as { message?: unknown } | null)?.message === 'timeout exceeded when trying to connect';
}

function describe(error: unknown): string {
  if (poolBusy(error)) return 'timeout exceeded when trying to connect: every connection of the pool stayed busy';
  const e = error as { code?: unknown; message?: unknown } | null | undefined;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  return typeof e?.code === 'string' && !message.includes(e.code) ? `${e.code}: ${message}` : message;
}
