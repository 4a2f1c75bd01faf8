// The session registry: the one place that knows which session holds a host.
//
// Locally it maps host_id to this process's authenticated session (a newer hello of the
// same host closes the older one). Across servers on one database it keeps this server's
// identity and lease in `servers` (renewed every lease/3), records the holder in
// agents.server_id (set by the hello, cleared by the close), and sweeps servers whose
// lease expired: their sessions are marked Disconnected by a live server (DECISIONS G3).
// A newer hello on another server replaces the row's session_id; this server's control
// watcher then closes its older session, and its pushes are refused at commit
// (IngestWriter.commitBatch with session_id), so nothing of it is acked afterwards.
import { hostname } from 'node:os';
import type { Kysely } from 'kysely';
import { releaseSessionsOf } from '../db/agents.repository.js';
import type { Database } from '../db/schema.js';
import type { Storage } from '../db/storage.js';
import type { Logger } from '../log.js';
import { agreeOnClusterSettings, type ClusterSettingKey } from './settings-agreement.js';

type Db = Kysely<Database>;

/** Default lease: a server not renewing it for this long counts as dead. */
export const DEFAULT_LEASE_MS = 15_000;

/** What the registry needs of a session (server/ws/connection.ts implements it). */
export interface HeldSession {
  readonly host_id: string | undefined;
  readonly session_id: string | undefined;
  readonly open: boolean;
  closeWith(code: number, reason: string, opts?: { terminateAfterMs?: number }): void;
}

export interface RegistryOptions {
  serverId: string;
  leaseMs?: number;
  logger: Logger;
  /** The map to keep the local sessions in (default: a new one). */
  sessions?: Map<string, HeldSession>;
}

export function defaultServerId(port: number): string {
  return `${hostname()}:${port}`;
}

export class SessionRegistry<C extends HeldSession> {
  /** Authenticated sessions held by this process, by host_id. */
  readonly sessions: Map<string, C>;
  readonly serverId: string;
  readonly leaseMs: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private readonly logger: Logger;
  /** Called after dead servers' sessions were released (the control watcher re-reads). */
  onReleased: (() => void) | undefined;

  constructor(
    private readonly storage: Storage,
    options: RegistryOptions,
  ) {
    this.sessions = (options.sessions as Map<string, C> | undefined) ?? new Map<string, C>();
    this.serverId = options.serverId;
    this.leaseMs = Math.max(1000, options.leaseMs ?? DEFAULT_LEASE_MS);
    this.logger = options.logger;
  }

  /** A newly authenticated session: it replaces (and closes) an older one of its host here. */
  register(conn: C): void {
    const host = conn.host_id as string;
    const older = this.sessions.get(host);
    this.sessions.set(host, conn);
    if (older !== undefined && older !== conn) {
      this.logger.info({ host_id: host, session_id: older.session_id }, 'older session replaced by a newer one');
      older.closeWith(1000, 'replaced by a newer session');
    }
  }

  unregister(conn: C): void {
    if (conn.host_id !== undefined && this.sessions.get(conn.host_id) === conn) this.sessions.delete(conn.host_id);
  }

  /** The session this process holds for a host, when it is open. */
  held(host_id: string): C | undefined {
    const conn = this.sessions.get(host_id);
    return conn !== undefined && conn.open ? conn : undefined;
  }

  /**
   * Joins the cluster: under the database-wide start-up lock, checks (or records) the
   * cluster settings against the live servers, takes over the sessions a previous process
   * under the same server id left behind, and writes this server's lease row.
   * @throws SettingsConflictError
   */
  async join(url: string, cluster: Record<ClusterSettingKey, unknown>, perServer: Record<string, unknown>): Promise<void> {
    await this.storage.withMigrationLock(async (db) => {
      const now = new Date();
      const live = await db
        .selectFrom('servers')
        .select('server_id')
        .where('lease_until', '>', now.toISOString())
        .where('server_id', '<>', this.serverId)
        .execute();
      await agreeOnClusterSettings(db, cluster, live.map((r) => r.server_id));
      // Same id again: the previous process under it is gone (two processes cannot hold
      // one host:port); its sessions are released at once instead of after its lease.
      const released = await releaseSessionsOf(db, this.serverId, `1006 server ${this.serverId} restarted`);
      if (released > 0) this.logger.info({ server_id: this.serverId, sessions: released }, 'sessions of this server id\'s previous process marked Disconnected');
      const row = {
        server_id: this.serverId,
        url,
        started_at: now.toISOString(),
        lease_until: new Date(now.getTime() + this.leaseMs).toISOString(),
        settings_json: JSON.stringify(perServer),
      };
      await db
        .insertInto('servers')
        .values(row)
        .onConflict((oc) => oc.column('server_id').doUpdateSet({ url: row.url, started_at: row.started_at, lease_until: row.lease_until, settings_json: row.settings_json }))
        .execute();
    });
    this.timer = setInterval(() => void this.tick(), Math.max(200, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  /** One lease renewal and dead-server sweep (passes never overlap; also callable directly). */
  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.ticking ??= this.renewAndSweep()
      .catch((error: unknown) => this.logger.warn({ err: String(error) }, 'lease renewal failed; retrying'))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async renewAndSweep(): Promise<void> {
    const db: Db = this.storage.db;
    const now = new Date();
    const lease_until = new Date(now.getTime() + this.leaseMs).toISOString();
    const renewed = await db.updateTable('servers').set({ lease_until }).where('server_id', '=', this.serverId).executeTakeFirst();
    if (renewed.numUpdatedRows === 0n) {
      // Another server found our lease expired (we were stalled) and released our
      // sessions; they close themselves (superseded). Rejoin under the same id.
      this.logger.warn({ server_id: this.serverId }, 'this server\'s lease had expired and was swept; re-registering');
      await db.insertInto('servers').values({ server_id: this.serverId, url: null, started_at: now.toISOString(), lease_until, settings_json: null }).onConflict((oc) => oc.column('server_id').doUpdateSet({ lease_until })).execute();
    }
    const dead = await db.selectFrom('servers').select(['server_id', 'lease_until']).where('lease_until', '<', now.toISOString()).execute();
    let any = false;
    for (const d of dead) {
      const n = await releaseSessionsOf(db, d.server_id, `1006 server ${d.server_id} lease expired`);
      await db.deleteFrom('servers').where('server_id', '=', d.server_id).where('lease_until', '<', now.toISOString()).execute();
      this.logger.warn({ dead_server_id: d.server_id, lease_until: d.lease_until, sessions: n }, 'server lease expired: its sessions marked Disconnected');
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
    try {
      await releaseSessionsOf(this.storage.db, this.serverId, '1001 server shutdown');
      await this.storage.db.deleteFrom('servers').where('server_id', '=', this.serverId).execute();
    } catch (error) {
      this.logger.warn({ err: String(error) }, 'could not remove this server\'s lease row');
    }
  }
}
