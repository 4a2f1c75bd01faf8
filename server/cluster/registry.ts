// The session registry across servers: ../ws/session-registry.ts knows which session of
// THIS process holds a host; this extends it to the servers on one database. It keeps this
// server's identity and lease in `servers` (renewed every lease/3), the holder is recorded in
// agents.server_id (set by the hello, cleared by the close), and it sweeps servers whose
// lease expired: their sessions are marked Disconnected by a live server (DECISIONS G3).
// A newer hello on another server replaces the row's session_id; this server's control
// watcher then closes its older session, and its pushes are refused at commit
// (IngestWriter.commitBatch with session_id), so nothing of it is acked afterwards.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { nodeProcessAlive } from '../../common/process.js';
import type { Kysely } from 'kysely';
import { releaseSessionsOf } from '../db/agents.repository.js';
import { DatabaseOutage, DatabaseSilentError, noteWaited, outageKind, secondsOf } from '../db/outage.js';
import { migrationLockWaitMessage } from '../db/migrations/index.js';
import { systemElapsedMs } from '../elapsed.js';
import type { Database } from '../db/schema.js';
import type { Storage } from '../db/storage.js';
import type { Logger } from '../log.js';
import { SessionRegistry, type HeldSession } from '../ws/session-registry.js';
import { agreeOnClusterSettings, type ClusterSettingKey } from './settings-agreement.js';

export type { HeldSession };

type Db = Kysely<Database>;

/** Default lease: a server not renewing it for this long counts as dead. */
export const DEFAULT_LEASE_MS = 15_000;

/**
 * A clock this far from the database's is told (ms). NTP keeps machines within a few ms;
 * leases do not depend on it (they are kept by the database's clock), the times a server
 * writes do.
 */
export const CLOCK_SKEW_WARN_MS = 2000;

export interface RegistryOptions {
  /** This server's id; may be left out until join() (it needs the listening port). */
  serverId?: string;
  leaseMs?: number;
  logger: Logger;
  /** Where a database out of reach is told (default: one of the registry's own). */
  outage?: DatabaseOutage;
  /** This machine's clock, ms since the epoch (default Date.now; tests simulate a skewed machine). */
  clock?: () => number;
  /**
   * The time this process has seen pass, ms from any origin: what the time between two renewals
   * is measured in, which no step of the wall clock moves (default systemElapsedMs():
   * CLOCK_BOOTTIME, which counts a suspend as the database's clock does; tests inject one).
   */
  elapsedMs?: () => number;
}

export function defaultServerId(port: number): string {
  return `${hostname()}:${port}`;
}

/** This boot of this machine (random per boot: a cloned machine has its own), or '' where unknown. */
function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

/** Which process wrote a servers row (kept in its settings_json): this boot's id and its pid. */
interface ProcessMark {
  boot: string;
  pid: number;
}

function markOf(settingsJson: string | null): ProcessMark | undefined {
  try {
    const m = (JSON.parse(settingsJson ?? 'null') as { process?: Partial<ProcessMark> } | null)?.process;
    return typeof m?.boot === 'string' && typeof m.pid === 'number' ? { boot: m.boot, pid: m.pid } : undefined;
  } catch {
    return undefined;
  }
}

/** Another live process renews the lease of the server id this one was to start under (DECISIONS G23). */
export class ServerIdInUseError extends Error {
  constructor(
    readonly serverId: string,
    readonly other: { started_at: string; url: string | null },
  ) {
    super(
      `another live cortex-server uses the server id ${serverId} (started ${other.started_at}${other.url !== null ? `, listening at ${other.url}` : ''}; it renewed its lease while this one waited): ` +
        'give each server its own --server-id (the default, hostname:port, is the same on machines cloned with one hostname), or stop the other first',
    );
    this.name = 'ServerIdInUseError';
  }
}

export class ClusterRegistry<C extends HeldSession> extends SessionRegistry<C> {
  private id: string | undefined;
  readonly leaseMs: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  /** When this server's lease was last written (elapsedMs; undefined: not yet). */
  private renewedAt: number | undefined;
  /** No other server is swept before this time (elapsedMs): see renewAndSweep. */
  private sweepNotBefore = -Infinity;
  private readonly log: Logger;
  private readonly outage: DatabaseOutage;
  private readonly clock: () => number;
  private readonly elapsed: () => number;
  /** This clock minus the database's (ms), as last measured; 0 where they are one (SQLite). */
  private offsetMs = 0;
  private skewTold = false;
  /** Called after dead servers' sessions were released (the control watcher re-reads). */
  onReleased: (() => void) | undefined;
  /** Called when another process took this server id over while this one ran (G23): the server stops. */
  onTakenOver: ((message: string) => void) | undefined;
  /** started_at of this process's row: which process holds the id (another one writes its own). */
  private startedAt = '';
  private takenOver = false;

  constructor(
    private readonly storage: Storage,
    options: RegistryOptions,
  ) {
    super(options.logger);
    this.id = options.serverId;
    this.leaseMs = Math.max(1000, options.leaseMs ?? DEFAULT_LEASE_MS);
    this.log = options.logger;
    this.outage = options.outage ?? new DatabaseOutage({ logger: options.logger });
    this.clock = options.clock ?? Date.now;
    this.elapsed = options.elapsedMs ?? systemElapsedMs();
  }

  /** This server's clock minus the database's, ms, as last measured (0 on SQLite). */
  get clockOffsetMs(): number {
    return this.offsetMs;
  }

  /**
   * The database's time as best known: this clock less the offset measured at the last
   * renewal. Leases are written and compared in it, so servers whose clocks disagree still
   * agree on which lease ran out (DECISIONS G20).
   */
  now(): Date {
    return new Date(this.clock() - this.offsetMs);
  }

  /**
   * Reads the database's clock (where it has one of its own) and tells a skew once. The query's
   * midpoint is this clock's reading at its answer less half its round trip, timed by
   * performance.now(): a step of this clock while it ran moves the offset by the step, not half.
   */
  private async measureClock(db: Db): Promise<void> {
    if (this.storage.clockMs === undefined) return;
    const sent = performance.now();
    const dbMs = await this.storage.clockMs(db);
    const roundTrip = performance.now() - sent;
    if (!Number.isFinite(dbMs)) return;
    this.offsetMs = Math.round(this.clock() - roundTrip / 2 - dbMs);
    const off = Math.abs(this.offsetMs);
    if (off >= CLOCK_SKEW_WARN_MS && !this.skewTold) {
      this.skewTold = true;
      this.log.warn(
        { clock_offset_ms: this.offsetMs },
        `this server's clock is ${(off / 1000).toFixed(1)} s ${this.offsetMs > 0 ? 'ahead of' : 'behind'} the database's: leases, retention, received_at, last_seen and token grace ` +
          'are kept in the database\'s time, but its log lines, audit records and the expiry of tokens issued through its admin API are off by as much; synchronize its clock (NTP: timedatectl status, chronyc tracking)',
      );
    } else if (this.skewTold && off < CLOCK_SKEW_WARN_MS / 2) {
      this.skewTold = false;
      this.log.info({ clock_offset_ms: this.offsetMs }, "this server's clock agrees with the database's again");
    }
  }

  /** This server's id among the servers on one database (agents.server_id of its sessions). */
  get serverId(): string {
    if (this.id === undefined) throw new Error('the session registry has no server id before join()');
    return this.id;
  }

  /**
   * Joins the cluster: under the database-wide start-up lock, checks (or records) the
   * cluster settings against the live servers, takes over the sessions a previous process
   * under the same server id left behind, and writes this server's lease row.
   * `serverId` names this server when the constructor did not.
   * @throws SettingsConflictError
   */
  async join(url: string, cluster: Record<ClusterSettingKey, unknown>, perServer: Record<string, unknown>, serverId?: string): Promise<void> {
    if (serverId !== undefined) this.id = serverId;
    await this.refuseLiveTwin();
    await this.storage.withMigrationLock(async (db) => {
      const now = this.now(); // the offset refuseLiveTwin just measured
      const live = await db
        .selectFrom('servers')
        .select('server_id')
        .where('lease_until', '>', now.toISOString())
        .where('server_id', '<>', this.serverId)
        .execute();
      await agreeOnClusterSettings(db, cluster, live.map((r) => r.server_id));
      // Same id again: the previous process under it is gone (refuseLiveTwin, G23); its
      // sessions are released at once instead of after its lease.
      const released = await releaseSessionsOf(db, this.serverId, `1006 server ${this.serverId} restarted`);
      if (released > 0) this.log.info({ server_id: this.serverId, sessions: released }, 'sessions of this server id\'s previous process marked Disconnected');
      this.startedAt = now.toISOString();
      const row = {
        server_id: this.serverId,
        url,
        started_at: this.startedAt,
        lease_until: new Date(now.getTime() + this.leaseMs).toISOString(),
        settings_json: JSON.stringify({ ...perServer, process: { boot: bootId(), pid: process.pid } satisfies ProcessMark }),
      };
      await db
        .insertInto('servers')
        .values(row)
        .onConflict((oc) => oc.column('server_id').doUpdateSet({ url: row.url, started_at: row.started_at, lease_until: row.lease_until, settings_json: row.settings_json }))
        .execute();
      this.renewedAt = this.elapsed();
    }, (holder) => this.log.warn({ holder }, migrationLockWaitMessage({ lock: 'migration', holder })));
    this.timer = setInterval(() => void this.tick(), Math.max(200, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  /**
   * A row under this id whose lease is still live is either what a process that died left
   * (a crash, a kill: a graceful stop deletes it) or a live process on another machine with
   * the same id. A process of this machine's boot that no longer runs is taken over at once
   * (the usual restart after a crash); otherwise wait one renewal period and look again: a
   * lease renewed meanwhile is a live process, and this one is refused rather than take its
   * sessions away (G23).
   * @throws ServerIdInUseError
   */
  private async refuseLiveTwin(): Promise<void> {
    const read = () => this.storage.db.selectFrom('servers').select(['started_at', 'url', 'lease_until', 'settings_json']).where('server_id', '=', this.serverId).executeTakeFirst();
    await this.measureClock(this.storage.db);
    const before = await read();
    if (before === undefined || before.lease_until <= this.now().toISOString()) return;
    const mark = markOf(before.settings_json);
    const boot = bootId();
    if (mark !== undefined && boot !== '' && mark.boot === boot && !nodeProcessAlive(mark.pid)) return;
    this.log.info({ server_id: this.serverId, lease_until: before.lease_until }, 'a live lease holds this server id: waiting one renewal period to tell a process that died from one that runs');
    await new Promise((resolve) => setTimeout(resolve, Math.floor(this.leaseMs / 3) + 500));
    const after = await read();
    if (after !== undefined && after.lease_until !== before.lease_until) throw new ServerIdInUseError(this.serverId, after);
  }

  /**
   * How long a renewal may go unanswered before the database counts as not answering: half a
   * lease. Renewals start every lease/3, so a server cut off from its database knows it within
   * its lease (at most lease/3 + lease/2 after its last renewal), before the other servers may
   * sweep it (DECISIONS G43).
   */
  get renewalBoundMs(): number {
    return Math.max(100, Math.floor(this.leaseMs / 2));
  }

  /** One lease renewal and dead-server sweep (passes never overlap; also callable directly). */
  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.ticking !== undefined) return this.ticking;
    // A renewal still unanswered after renewalBoundMs (the path to the database silent, the
    // database hung): told to the outage account at once, as a failed renewal would be —
    // /healthz 503, cortex_database_up 0, one log line — while the statement itself is cut by
    // the storage's own bound (PostgreSQL: SilenceGuard). Renewals still never overlap.
    let told = false;
    const bound = this.renewalBoundMs;
    const deadline = setTimeout(() => {
      told = true;
      this.outage.failed(
        'lease renewal',
        noteWaited(
          new DatabaseSilentError(
            `this server's lease renewal got no answer from the database within ${secondsOf(bound)} (half its lease): the network path to the database drops packets (a firewall, a partition), or the database hangs or is overloaded`,
          ),
          bound,
        ),
      );
    }, bound);
    deadline.unref();
    this.ticking = this.renewAndSweep()
      .catch((error: unknown) => {
        if (told && outageKind(error) === 'unreachable') return; // the same failure, told (and counted) at the deadline
        this.outage.report('lease renewal', error, (say) => this.log.warn({ err: String(error), ...say }, 'lease renewal failed; retrying'));
      })
      .finally(() => {
        clearTimeout(deadline);
        this.ticking = undefined;
      });
    return this.ticking;
  }

  private async renewAndSweep(): Promise<void> {
    // On the lease's own connection where there is one (PostgreSQL): a pool busy to its last
    // connection holds back neither the renewal nor the sweep, nor reads as an outage (DECISIONS G47).
    const db: Db = this.storage.leaseDb ?? this.storage.db;
    await this.measureClock(db);
    const now = this.now();
    const lease_until = new Date(now.getTime() + this.leaseMs).toISOString();
    const renewed = await db.updateTable('servers').set({ lease_until }).where('server_id', '=', this.serverId).where('started_at', '=', this.startedAt).executeTakeFirst();
    if (renewed.numUpdatedRows === 0n) {
      const holder = await db.selectFrom('servers').select(['started_at', 'url']).where('server_id', '=', this.serverId).executeTakeFirst();
      if (holder !== undefined) {
        // Another process joined under this id (G23): two processes holding one id would
        // release each other's sessions and keep a dead one's lease alive. This one stops.
        this.stopped = true;
        this.takenOver = true;
        clearInterval(this.timer);
        const message =
          `another cortex-server process took over the server id ${this.serverId} (started ${holder.started_at}${holder.url !== null ? `, listening at ${holder.url}` : ''}): ` +
          'two processes must not share one id; this one stops — give each server its own --server-id (the default, hostname:port, is the same on machines cloned with one hostname)';
        this.log.error({ server_id: this.serverId, other_started_at: holder.started_at, other_url: holder.url }, message);
        this.onTakenOver?.(message);
        return;
      }
      // Another server found our lease expired (we were stalled) and released our
      // sessions; they close themselves (superseded). Rejoin under the same id.
      this.log.warn({ server_id: this.serverId }, 'this server\'s lease had expired and was swept; re-registering');
      await db.insertInto('servers').values({ server_id: this.serverId, url: null, started_at: this.startedAt, lease_until, settings_json: null }).onConflict((oc) => oc.doNothing()).execute();
    }
    // A renewal after a gap (renewals failed or hung, or this process stalled): the
    // database was out of reach, most likely for every server alike, so the others could not
    // renew either and their leases may have run out while they are alive. Each gets one
    // lease from now to renew before it counts as dead; otherwise the server that reconnects
    // first would drop every session of the others and their agents would all reconnect at
    // once (DECISIONS G10). The gap is measured in the time this process has seen pass, not by
    // this machine's clock: a clock stepped ahead (`date -s`, NTP) read as a gap and held the
    // sweep for a lease, and a step back hid a real gap — or, after a step ahead and back, held
    // the sweep for as long as the step (DECISIONS G45).
    this.outage.succeeded();
    const done = this.elapsed();
    const gap = this.renewedAt === undefined ? 0 : done - this.renewedAt;
    this.renewedAt = done;
    if (gap > this.leaseMs / 2) {
      this.sweepNotBefore = done + this.leaseMs;
      this.log.info({ since_last_renewal_ms: Math.round(gap), grace_ms: this.leaseMs }, 'lease renewed after a gap: other servers get one lease to renew theirs before any counts as dead');
    }
    if (done < this.sweepNotBefore) return;
    const dead = await db.selectFrom('servers').select(['server_id', 'lease_until']).where('lease_until', '<', now.toISOString()).execute();
    let any = false;
    for (const d of dead) {
      const n = await releaseSessionsOf(db, d.server_id, `1006 server ${d.server_id} lease expired`);
      await db.deleteFrom('servers').where('server_id', '=', d.server_id).where('lease_until', '<', now.toISOString()).execute();
      this.log.warn({ dead_server_id: d.server_id, lease_until: d.lease_until, sessions: n }, 'server lease expired: its sessions marked Disconnected');
      any = true;
    }
    // Forwarded probes long past any timeout (their waiter is gone).
    await db.deleteFrom('probe_requests').where('created_at', '<', new Date(now.getTime() - 10 * 60_000).toISOString()).execute();
    if (any) this.onReleased?.();
  }

  /** Leaves the cluster (graceful stop): the lease row goes; held rows were closed already. */
  async leave(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    // Taken over: the row and the sessions under this id are the other process's now.
    if (this.takenOver) return;
    try {
      await releaseSessionsOf(this.storage.db, this.serverId, '1001 server shutdown');
      await this.storage.db.deleteFrom('servers').where('server_id', '=', this.serverId).execute();
    } catch (error) {
      this.log.warn({ err: String(error) }, 'could not remove this server\'s lease row');
    }
  }
}

/** The name this class had before the local part moved to ../ws/session-registry.ts. */
export { ClusterRegistry as SessionRegistry };
