// The control plane of one server process: it watches the database for admin changes
// (revoke, rotate, decommission, config — made by this or any other process on the same
// database) and acts on the sessions THIS process holds. Every admin change bumps the
// database-wide `agents.control_rev`; each server polls `control_rev > last seen` every
// pollMs (default 300 ms, well inside the 2 s propagation bound of DESIGN.md section 3)
// and ignores hosts whose session it does not hold, so several servers on one database
// each serve their own sessions.
import { LIMITS, type AgentConfig } from '@cortex/agent-protocol';
import { CONTROL_PAGE, currentControlRev, listControlChangesSince, listControlStateOf, revoke, type ControlState } from '../db/agents.repository.js';
import { DatabaseOutage } from '../db/outage.js';
import type { Storage } from '../db/storage.js';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';
import type { ServerSettings } from '../settings.js';
import { parseStoredConfig, type Connection } from '../ws/connection.js';

export interface ControlOptions {
  /** Poll interval of the database watcher (ms). */
  pollMs?: number;
  /** How long a connected agent has to reconnect for a rotation before close 1012 (ms). */
  rotationCloseGraceMs?: number;
  /** Where a database out of reach is told (default: one of the watcher's own). */
  outage?: DatabaseOutage;
}

export class ControlPlane {
  private lastRev = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private again = false;
  /** Hosts named by a notification since the last pass (re-read whatever their rev). */
  private readonly notified = new Set<string>();
  private readonly pollMs: number;
  private readonly outage: DatabaseOutage;
  private readonly rotationCloseGraceMs: number;
  /** Decommission drains in progress, by host. */
  private readonly drains = new Map<string, { conn: Connection; timer: ReturnType<typeof setTimeout> }>();

  constructor(
    private readonly sessions: ReadonlyMap<string, Connection>,
    private readonly storage: Storage,
    private readonly settings: ServerSettings,
    private readonly logger: Logger,
    private readonly metrics: ServerMetrics,
    options: ControlOptions = {},
  ) {
    this.pollMs = options.pollMs ?? 300;
    this.outage = options.outage ?? new DatabaseOutage({ logger });
    this.rotationCloseGraceMs = options.rotationCloseGraceMs ?? LIMITS.rotation_close_grace_ms;
  }

  async start(): Promise<void> {
    this.lastRev = await currentControlRev(this.storage.db);
    // PostgreSQL: a trigger NOTIFYs every control_rev change at commit (migration 0003), so
    // a change made by any process reaches us at once; the poll stays as the fallback.
    await this.storage.notifyBus?.().listen('cortex_control', (host_id) => {
      if (!this.sessions.has(host_id)) return; // not ours
      this.notified.add(host_id);
      void this.poll();
    });
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const d of this.drains.values()) clearTimeout(d.timer);
    this.drains.clear();
    await this.running;
  }

  /** One pass of the watcher (also callable directly). Passes never overlap. */
  poll(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running !== undefined) {
      // A change may have committed after the running pass read: one more pass after it.
      this.again = true;
      return this.running;
    }
    this.running = this.pollOnce()
      .then(() => this.outage.readSucceeded())
      .catch((error: unknown) => {
        this.outage.report('control watcher', error, (say) => this.logger.warn({ err: String(error), ...say }, 'control watcher: database read failed; retrying'));
      })
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          void this.poll();
        }
      });
    return this.running;
  }

  private async pollOnce(): Promise<void> {
    const hosts = [...this.notified].slice(0, 500);
    for (const h of hosts) this.notified.delete(h);
    const changes: ControlState[] = [];
    for (let page = await listControlChangesSince(this.storage.db, this.lastRev); ; ) {
      changes.push(...page);
      if (page.length < CONTROL_PAGE) break;
      const last = page[page.length - 1] as ControlState;
      page = await listControlChangesSince(this.storage.db, Number(last.control_rev), last.host_id);
    }
    const seen = new Set(changes.map((c) => c.host_id));
    const extra = await listControlStateOf(this.storage.db, hosts.filter((h) => !seen.has(h)));
    const recheck: string[] = [];
    for (const row of [...changes, ...extra]) {
      this.lastRev = Math.max(this.lastRev, Number(row.control_rev));
      const conn = this.sessions.get(row.host_id);
      if (conn === undefined || !conn.open) continue;
      // A row read before a hello's activation committed still names the session before it,
      // while the new session may already be registered here by the time the read returns:
      // closing on that read would close the session that just took the row (seen on
      // PostgreSQL under load, bench ingest --db postgres). Such a row is read again first.
      if (row.connection_state !== 'Revoked' && row.session_id !== conn.session_id) {
        recheck.push(row.host_id);
        continue;
      }
      this.apply(conn, row);
    }
    if (recheck.length === 0) return;
    for (const row of await listControlStateOf(this.storage.db, recheck)) {
      const conn = this.sessions.get(row.host_id);
      if (conn === undefined || !conn.open) continue;
      this.apply(conn, row);
    }
  }

  private apply(conn: Connection, row: ControlState): void {
    if (row.connection_state === 'Revoked') return this.closeRevoked(conn, 'revoked');
    if (row.session_id !== conn.session_id) {
      // Another session (perhaps on another server) or a reissued token took the row. A
      // reissue (`agent issue --host-id`: no session, NeverConnected) is said as such: the
      // agent's token no longer works, and "replaced by a newer session" sent operators looking
      // for a cloned machine (H48).
      const reissued = row.session_id === null && row.connection_state === 'NeverConnected';
      this.logger.info(
        { host_id: row.host_id, session_id: conn.session_id },
        reissued ? 'token reissued (agent issue --host-id): closing the session; the agent must enroll again with the new token' : 'session superseded in the database: closing',
      );
      this.metrics.controlActions.labels('superseded').inc();
      conn.closeWith(1000, reissued ? 'token reissued: enroll again with the new token' : 'replaced by a newer session', { terminateAfterMs: 2000 });
      return;
    }
    const version = Number(row.config_version);
    if (version !== conn.configVersion) {
      conn.configVersion = version;
      const stored = row.agent_config_json === null ? undefined : parseStoredConfig(row.agent_config_json);
      const config: AgentConfig = stored ?? this.settings.default_agent_config;
      const applyAfter = stored === undefined ? null : row.config_apply_after;
      if (conn.sendConfig(config, applyAfter)) {
        this.metrics.controlActions.labels('config_update').inc();
        this.logger.info({ host_id: row.host_id, config_version: version, apply_after: applyAfter }, 'config.update sent');
      }
    }
    if (row.decommission_requested_at !== null) {
      if (!conn.control.decommissioning) this.startDecommission(conn, Number(row.decommission_drain_secs ?? LIMITS.decommission_drain_secs));
      return;
    }
    if (row.rotate_requested_at !== null && !conn.control.rotationAsked) this.askRotation(conn);
  }

  /** agent.shutdown {Revoked, 0}, then close 4002. */
  private closeRevoked(conn: Connection, why: string): void {
    if (conn.control.revoking) return;
    conn.control.revoking = true;
    const d = this.drains.get(conn.host_id as string);
    if (d !== undefined && d.conn === conn) {
      clearTimeout(d.timer);
      this.drains.delete(conn.host_id as string);
    }
    conn.sendShutdown('Revoked', 0);
    conn.closeWith(4002, 'revoked', { terminateAfterMs: 1000 });
    this.metrics.controlActions.labels('revoke').inc();
    this.logger.info({ host_id: conn.host_id, session_id: conn.session_id, why }, 'session revoked: agent.shutdown Revoked, closing 4002');
  }

  /** DESIGN.md 5.2: ask the agent to reconnect (its next hello rotates); 1012 if it does not close. */
  private askRotation(conn: Connection): void {
    conn.control.rotationAsked = true;
    conn.sendShutdown('ServerReload', 0);
    this.metrics.controlActions.labels('rotate').inc();
    this.logger.info({ host_id: conn.host_id, session_id: conn.session_id }, 'rotation requested: asked the agent to reconnect');
    const timer = setTimeout(() => {
      if (conn.open) {
        this.logger.info({ host_id: conn.host_id }, 'agent did not reconnect for rotation: closing 1012');
        conn.closeWith(1012, 'reconnect for token rotation', { terminateAfterMs: 1000 });
      }
    }, this.rotationCloseGraceMs);
    timer.unref();
    void conn.closed.then(() => clearTimeout(timer));
  }

  /** DESIGN.md 5.13: Decommission shutdown, acking during the drain, then revocation. */
  private startDecommission(conn: Connection, drainSecs: number): void {
    conn.control.decommissioning = true;
    const host_id = conn.host_id as string;
    const drain = Math.min(Math.max(0, drainSecs), LIMITS.max_drain_seconds);
    conn.sendShutdown('Decommission', drain);
    this.metrics.controlActions.labels('decommission').inc();
    this.logger.info({ host_id, drain_seconds: drain }, 'decommission: agent.shutdown Decommission sent; revoking after the drain');
    const timer = setTimeout(() => void this.finishDecommission(host_id, conn), drain * 1000);
    timer.unref();
    this.drains.set(host_id, { conn, timer });
  }

  /** Called when a session closed: a decommission in progress revokes at once. */
  onSessionClosed(conn: Connection): void {
    const host_id = conn.host_id;
    if (host_id === undefined) return;
    const d = this.drains.get(host_id);
    if (d === undefined || d.conn !== conn) return;
    clearTimeout(d.timer);
    void this.finishDecommission(host_id, conn);
  }

  private async finishDecommission(host_id: string, conn: Connection): Promise<void> {
    const d = this.drains.get(host_id);
    if (d === undefined || d.conn !== conn) return;
    this.drains.delete(host_id);
    try {
      await revoke(this.storage.db, host_id);
      this.logger.info({ host_id }, 'decommission: drain over, host revoked (rows kept)');
    } catch (error) {
      this.logger.error({ host_id, err: String(error) }, 'decommission: revocation failed');
    }
    if (conn.open) this.closeRevoked(conn, 'decommissioned');
  }
}
