// The reference server: one HTTP(S) listener carrying the WebSocket endpoint /ws/agent
// (subprotocol cortex.v1), GET /healthz, GET /metrics and the admin API. This file only wires
// the parts: routes and listener in ./http/routes.ts; which upgrades get a socket and the
// pre-hello limits in ./ws/pre-hello-guard.ts; one connection in ./ws/connection.ts (its
// hello decided by ./ws/handshake.ts); which session holds a host in ./ws/session-registry.ts
// (across servers: ./cluster/registry.ts); the ingest path in ./ingest.ts; the control
// plane (database watcher, probes, retention) in ./control/.
import type http from 'node:http';
import type https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { LIMITS, SUBPROTOCOL } from '@cortex/agent-protocol';
import { migrateToLatest, migrationLockWaitMessage } from './db/migrations/index.js';
import { openStorage, redactDbUrl } from './db/open.js';
import { DatabaseOutage } from './db/outage.js';
import { rescueTarget, watchDbFile } from '../common/file-watch.js';
import type { Storage } from './db/storage.js';
import { ClusterRegistry, defaultServerId } from './cluster/registry.js';
import { ProbeForwarder } from './cluster/probe-forward.js';
import { clusterSettings, perServerSettings } from './cluster/settings-agreement.js';
import { CommitStallWatch } from './ingest-stall.js';
import { Ingest } from './ingest.js';
import { FdWatch } from './security/fd-watch.js';
import { ControlPlane } from './control/control.js';
import { PROBE_GRACE_MS, ProbeRouter } from './control/probes.js';
import { Retention } from './control/retention.js';
import { createLogger, type Logger } from './log.js';
import { registerFleetMetrics } from './fleet-metrics.js';
import { ServerMetrics } from './metrics.js';
import type { ServerSettings } from './settings.js';
import { createListener, httpHandler, upgradePathOk } from './http/routes.js';
import { TlsCertificate } from './http/tls-reload.js';
import { Connection } from './ws/connection.js';
import type { ServerContext } from './ws/context.js';
import { UpgradeGate } from './ws/pre-hello-guard.js';
import { RowBatch } from './ws/row-batch.js';
import { LastSeenBatch } from './ws/last-seen-batch.js';

export const SERVER_VERSION = '0.1.0';

export interface StartOptions {
  settings: ServerSettings;
  logger?: Logger;
  /** An already open (and migrated) storage; default: open settings.db. */
  storage?: Storage;
  /** PostgreSQL pool size of this process (--db-pool, default 10). */
  dbPool?: number;
  /** This server's id among the servers on one database (default hostname:port). */
  serverId?: string;
  /** Lease of this server's row (ms, default 15,000): past it without renewal it is dead. */
  leaseMs?: number;
  /** This machine's clock, ms since the epoch (default Date.now; tests simulate a skewed server). */
  clock?: () => number;
  /** Test knobs that the config file does not offer. */
  ingestQueueEntries?: number;
  flushEntries?: number;
  flushMs?: number;
  /** Control-plane watcher poll interval (ms, default 300). */
  controlPollMs?: number;
  /** Rotation: close 1012 this long after asking the agent to reconnect (default LIMITS). */
  rotationCloseGraceMs?: number;
  /** Grace after a probe's timeout_ms before the server answers -32012 (default 1000 ms). */
  probeGraceMs?: number;
  /** Retention pass interval / first delay / batch size / pause (ms, rows). */
  retentionIntervalMs?: number;
  retentionFirstRunDelayMs?: number;
  retentionBatchRows?: number;
  retentionPauseMs?: number;
  /** Include prom-client's process metrics (default true). */
  processMetrics?: boolean;
  /** How often the TLS certificate and key files are checked for a change (ms, default 60,000). */
  tlsCheckMs?: number;
  /** A live tail whose client took nothing for this long is closed (ms, default 60,000). */
  tailStallMs?: number;
  /** Live tails streamed at once (default 64: server/admin/logs.routes.ts MAX_LIVE_TAILS). */
  maxLiveTails?: number;
  /** An ingest commit waiting this long is reported held up (ms, default 10,000: server/ingest-stall.ts). */
  commitStallMs?: number;
  /**
   * Called once the server has closed itself because it cannot go on (another process took
   * its server id over, DECISIONS G23); `serve` exits 1 with the message.
   */
  onFatal?: (message: string, code?: 'E_DB_OPEN') => void;
  /** How often the SQLite database file's path is looked at (ms, default 2,000; H20). */
  dbFileCheckMs?: number;
  /**
   * Time a client gets to send a complete HTTP request head (the upgrade request), and a
   * TLS client to finish its handshake (ms, default 10,000). Node's own defaults (60 s for
   * headers, checked every 30 s; 120 s for TLS) let a slow-header client hold a socket for
   * up to 90 s before the hello timer even starts.
   */
  headersTimeoutMs?: number;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  readonly storage: Storage;
  /** This server's id (servers.server_id, agents.server_id of the sessions it holds). */
  readonly serverId: string;
  /** The --db value with any password masked, for logs and messages. */
  readonly dbDisplay: string;
  /** Which session holds which host (here) and this server's lease (cluster). */
  readonly registry: ClusterRegistry<Connection>;
  /** The ingest path shared by all sessions (queue depth, options). */
  readonly ingest: Ingest;
  readonly connections: ReadonlySet<Connection>;
  /** Authenticated sessions held by this server, by host_id. */
  readonly sessions: ReadonlyMap<string, Connection>;
  readonly metrics: ServerMetrics;
  readonly probes: ProbeRouter;
  readonly control: ControlPlane;
  readonly retention: Retention;
  /**
   * Graceful stop (SIGTERM): refuses new upgrades, sends agent.shutdown {ServerReload,
   * drainSecs} to every session, keeps ingesting and acking until every session closed or
   * drainSecs passed, then close().
   */
  shutdown(drainSecs?: number): Promise<void>;
  /** Commits what is pending, closes every session (1001), the listener and the database. */
  close(): Promise<void>;
  /**
   * Reads --tls-cert/--tls-key again and serves them to new handshakes (SIGHUP); false when
   * the new files were refused (the previous pair stays), undefined without TLS.
   */
  reloadTls(why: string): boolean | undefined;
  /** Replaces the admin token (SIGHUP re-read --admin-token-file): the previous one is refused from now on. False: it was that token already. */
  setAdminToken(token: string): boolean;
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const settings = options.settings;
  const logger = options.logger ?? createLogger({ name: 'cortex-server' });
  const ownStorage = options.storage === undefined;
  // Before the database: a certificate that cannot be served stops the start at once (H19).
  const certificate = settings.tls_cert !== undefined && settings.tls_key !== undefined ? new TlsCertificate(settings.tls_cert, settings.tls_key, logger) : undefined;
  const tls = certificate !== undefined;
  const storage = options.storage ?? (await openMigrated(settings, options.dbPool, logger));
  // PostgreSQL: the day partitions of logs exist ahead before the first commit.
  try {
    await storage.maintainPartitions?.(new Date(), null);
  } catch (error) {
    if (ownStorage) await storage.close().catch(() => undefined);
    throw error;
  }
  const dbDisplay = redactDbUrl(settings.db);
  // One account of the database being out of reach for every part of this server (logs, /metrics).
  const outage = new DatabaseOutage({ logger });

  const ingest = new Ingest(storage, logger, {
    outage,
    maxBatchEntries: settings.max_batch_entries,
    queueCapacityEntries: options.ingestQueueEntries ?? settings.ingest_queue_batches * LIMITS.logs_push_max_entries,
    agentRatePerSec: settings.agent_rate_entries_per_s,
    ...(options.flushEntries !== undefined ? { flushEntries: options.flushEntries } : {}),
    ...(options.flushMs !== undefined ? { flushMs: options.flushMs } : {}),
  });
  const stallWatch = new CommitStallWatch(ingest, { logger, dialect: storage.dialect, ...(options.commitStallMs !== undefined ? { stallMs: options.commitStallMs } : {}) });
  // The server id needs the port: the registry learns it when it joins the cluster (after listen).
  const registry = new ClusterRegistry<Connection>(storage, {
    logger,
    outage,
    ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}),
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
  });
  const { connections, sessions } = registry;
  let adminToken = settings.admin_token;
  const metrics = new ServerMetrics(
    {
      activeSessions: () => sessions.size,
      queueDepth: () => ingest.queuedEntries,
      commitWaitMs: () => ingest.commitsWaiting().oldestMs,
      databaseUp: () => !outage.down,
      clockOffsetMs: () => registry.clockOffsetMs,
      ...(certificate !== undefined ? { tlsExpiresAtMs: () => certificate.expiresAt } : {}),
    },
    { defaultMetrics: options.processMetrics ?? true },
  );
  ingest.options.metrics = metrics;
  // What this server writes to and compares with the database is in the database's time: on
  // PostgreSQL this clock less the offset the registry measures at join and each renewal, so
  // a server whose clock is wrong neither purges the cluster's rows early nor keeps a rotated
  // token alive (DECISIONS G31); on SQLite the machine's clock.
  const dbNow = (): Date => registry.now();
  ingest.options.now = dbNow;
  registerFleetMetrics(metrics.registry, storage.db, {
    silentAfterSecs: settings.silent_after_secs,
    now: () => dbNow().getTime(),
    onError: (error) => {
      outage.report('fleet metrics', error, (say) => logger.warn({ err: String(error), ...say }, 'fleet metrics: reading the agents table failed'));
    },
  });
  const control = new ControlPlane(sessions, storage, settings, logger, metrics, {
    outage,
    ...(options.controlPollMs !== undefined ? { pollMs: options.controlPollMs } : {}),
    ...(options.rotationCloseGraceMs !== undefined ? { rotationCloseGraceMs: options.rotationCloseGraceMs } : {}),
  });
  const probeGraceMs = options.probeGraceMs ?? PROBE_GRACE_MS;
  const probes = new ProbeRouter(sessions, storage, metrics, logger, probeGraceMs);
  const retention = new Retention(storage, logger, metrics, {
    outage,
    now: dbNow,
    retentionDays: settings.retention_days,
    maxDbBytes: settings.max_db_bytes,
    ...(options.retentionIntervalMs !== undefined ? { intervalMs: options.retentionIntervalMs } : {}),
    ...(options.retentionFirstRunDelayMs !== undefined ? { firstRunDelayMs: options.retentionFirstRunDelayMs } : {}),
    ...(options.retentionBatchRows !== undefined ? { batchRows: options.retentionBatchRows } : {}),
    ...(options.retentionPauseMs !== undefined ? { pauseMs: options.retentionPauseMs } : {}),
  });
  const gate = new UpgradeGate(settings, logger, metrics);
  const ctx: ServerContext<Connection> = {
    metrics,
    settings,
    storage,
    ingest,
    logger,
    outage,
    serverVersion: SERVER_VERSION,
    get serverId() {
      return registry.serverId;
    },
    registry,
    rows: new RowBatch(storage),
    now: dbNow,
    lastSeen: new LastSeenBatch(storage, outage, logger, dbNow),
    onSessionClosed: (conn) => control.onSessionClosed(conn),
    clientKey: (req) => gate.clientKey(req),
    onHelloFailed: (key, code) => gate.helloFailed(key, code),
    onHelloOk: (key) => gate.helloOk(key),
  };

  let url = '';
  const isTrustedProxy = (a: string): boolean => gate.proxies.has(a);
  const server = createListener(
    httpHandler({
      settings,
      storage,
      logger,
      outage,
      metrics,
      isTrustedProxy,
      counts: () => ({ connections: connections.size, sessions: sessions.size }),
      draining: () => gate.draining,
      commitStalledMs: () => stallWatch.stalledMs(),
      adminToken: () => adminToken,
      admin: () => ({
        router: probes,
        connectedHere: (host_id) => sessions.get(host_id)?.open === true,
        now: dbNow,
        heartbeatOf: (host_id) => sessions.get(host_id)?.lastHeartbeat,
        wsUrl: url,
        tls,
        serverVersion: SERVER_VERSION,
        ...(options.tailStallMs !== undefined ? { tailStallMs: options.tailStallMs } : {}),
        ...(options.maxLiveTails !== undefined ? { maxLiveTails: options.maxLiveTails } : {}),
      }),
    }),
    options.headersTimeoutMs,
    certificate?.pair,
  );
  if (certificate !== undefined) certificate.attach(server as https.Server, options.tlsCheckMs);
  acceptAgents(server, gate, ctx, logger);
  const pinger = startPinger(connections, settings, logger);

  const addr = await listen(server, settings, logger);
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  url = `${tls ? 'wss' : 'ws'}://${host}:${addr.port}${LIMITS.ws_path}`;
  const serverId = options.serverId ?? defaultServerId(addr.port);
  const forwarder = new ProbeForwarder(storage, registry, probes, logger, probeGraceMs, outage);
  // A start that fails once this server listens (the database lost while it joins, LISTENs or
  // reads its first figures) undoes what it did: the port, the lease row, the timers and the
  // storage it opened. `serve --db-wait-secs` starts again in the same process, and a port
  // still held said EADDRINUSE instead of trying again (DECISIONS G48).
  const abandon = async (error: unknown): Promise<never> => {
    gate.draining = true;
    clearInterval(pinger);
    certificate?.stop();
    await control.stop();
    await forwarder.stop();
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections?.();
    await closed;
    if (gate.joined) await registry.leave();
    if (ownStorage) await storage.close().catch(() => undefined);
    throw error;
  };
  try {
    await registry.join(url, clusterSettings(settings), perServerSettings(settings, { db_pool: options.dbPool ?? null, dialect: storage.dialect }), serverId);
  } catch (error) {
    return abandon(error);
  }
  registry.onReleased = () => void control.poll();
  gate.joined = true;
  probes.forwarder = forwarder;

  try {
    await control.start();
    await forwarder.start();
  } catch (error) {
    return abandon(error);
  }
  retention.start();
  stallWatch.start();

  let closing: Promise<void> | undefined;
  let shuttingDown: Promise<void> | undefined;
  let stopFileWatch = (): void => undefined; // H20, below
  const running: RunningServer = {
    url,
    port: addr.port,
    storage,
    serverId,
    dbDisplay,
    registry,
    ingest,
    connections,
    sessions,
    metrics,
    probes,
    control,
    retention,
    shutdown(drainSecs = settings.shutdown_drain_secs) {
      shuttingDown ??= (async () => {
        gate.draining = true;
        await drainSessions([...connections], Math.min(Math.max(0, drainSecs), LIMITS.max_drain_seconds), logger);
        await running.close();
      })();
      return shuttingDown;
    },
    close() {
      closing ??= (async () => {
        stopFileWatch();
        gate.draining = true;
        clearInterval(pinger);
        stallWatch.stop();
        certificate?.stop();
        await control.stop();
        await retention.stop();
        const done = new Promise<void>((resolve) => server.close(() => resolve()));
        const open = [...connections];
        for (const conn of open) conn.closeWith(1001, 'server shutdown', { terminateAfterMs: 2000 });
        await Promise.all(open.map((c) => c.closed));
        server.closeAllConnections?.();
        await done;
        await forwarder.stop();
        await ctx.lastSeen.flush();
        await registry.leave();
        if (ownStorage) await storage.close();
      })();
      return closing;
    },
    reloadTls(why) {
      return certificate?.reload(why);
    },
    setAdminToken(token) {
      if (token === adminToken) return false;
      adminToken = token;
      return true;
    },
  };
  registry.onTakenOver = (message) => {
    void running.close().finally(() => options.onFatal?.(message));
  };
  // SQLite: the database file deleted or replaced under the server (H20).
  const file = storage.file;
  if (file !== undefined && storage.rescueCopy !== undefined && ownStorage) {
    const rescueCopy = storage.rescueCopy;
    stopFileWatch = watchDbFile(
      file,
      (how) =>
        void (async () => {
          const gone = Object.assign(new Error(`the database file ${file} was ${how} while the server ran`), { code: 'CORTEX_DB_FILE_GONE' });
          logger.error({ db: file, how }, `${gone.message}: nothing more is stored (pushes are answered -32007; the agents keep their entries); copying what this server holds back`);
          await ingest.halt(gone);
          const target = rescueTarget(file, how);
          let message: string;
          try {
            await rescueCopy(target);
            message =
              target === file
                ? `${gone.message}; what this server held (hosts, tokens, logs) was copied back to ${target} and the server stopped: start it again (systemd does) and the agents resend what was not stored`
                : `${gone.message} (another file is there now); what this server held was copied to ${target} and the server stopped: keep the file you want at ${file} (the copy has everything this server stored), then start it again`;
            logger.error({ db: file, rescued_to: target }, message);
          } catch (error) {
            message = `${gone.message}, and copying what the server held to ${target} failed (${(error as Error).message}): the server stopped; what it stored since the file was ${how} is lost`;
            logger.fatal({ db: file, err: (error as Error).message }, message);
          }
          void running.close().finally(() => options.onFatal?.(message, 'E_DB_OPEN'));
        })(),
      options.dbFileCheckMs,
    );
  }
  return running;
}

/** Opens settings.db and migrates it to the latest schema (closing it again on failure). */
async function openMigrated(settings: ServerSettings, dbPool: number | undefined, logger: Logger): Promise<Storage> {
  const storage = await openStorage(settings.db, dbPool !== undefined ? { poolSize: dbPool } : {});
  try {
    const applied = await migrateToLatest(storage, (wait) => logger.warn({ holder: wait.holder, lock: wait.lock }, migrationLockWaitMessage(wait)));
    if (applied.length > 0) logger.info({ applied }, `database migrated to this version's schema: ${applied.join(', ')}`);
    if (storage.dialect === 'postgres') await (await import('./db/postgres.js')).refuseNotTableOwner(storage.db);
  } catch (error) {
    await storage.close().catch(() => undefined);
    throw error;
  }
  return storage;
}

/** The agent WebSocket on the listener: upgrades the gate admits become Connections. */
function acceptAgents(server: http.Server, gate: UpgradeGate, ctx: ServerContext<Connection>, logger: Logger): void {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: LIMITS.max_frame_bytes,
    clientTracking: false,
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });
  // Defined out here, not in the 'upgrade' handler: it stays on the socket for the whole
  // session, and a closure made in there would keep that handler's scope alive with it — the
  // upgrade request, its headers and head buffer, ~2 KB per connected agent (bench fleet).
  const onUpgradeSocketError = (err: NodeJS.ErrnoException): void => logger.debug({ err: err.code ?? err.message }, 'socket error during the upgrade');
  const fdWatch = new FdWatch(logger);
  server.on('connection', (socket: Socket) => fdWatch.connection(socket));
  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    // Node's HTTP server drops its own error listener from a socket it hands to 'upgrade':
    // without this one, a client that resets the connection while we answer (a refusal
    // below, or the 101) raises an unhandled 'error' event and takes the process down.
    socket.on('error', onUpgradeSocketError);
    // Already reset by the client (no peer address left): nothing to answer, nothing to count.
    if (socket.destroyed || socket.remoteAddress === undefined) return void socket.destroy();
    if (!upgradePathOk(req, socket) || !gate.admit(req, socket)) return;
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      ctx.registry.add(new Connection(ws, req, ctx));
    });
  });
}

/** Liveness: one sweep for all connections; missed_pongs pings without a pong → 1011. */
function startPinger(connections: ReadonlySet<Connection>, settings: ServerSettings, logger: Logger): ReturnType<typeof setInterval> {
  const pinger = setInterval(() => {
    for (const conn of connections) {
      if (conn.missedPongs >= settings.missed_pongs) {
        // Pongs are unread too while the agent reads nothing of what was sent (Connection.holdReads).
        if (conn.readsHeld) logger.info({ host_id: conn.host_id, address: conn.address }, 'agent read nothing the server sent for the missed-pong limit: closing 1011');
        else logger.info({ host_id: conn.host_id, address: conn.address }, 'missed pongs: closing 1011');
        conn.closeWith(1011, conn.readsHeld ? 'not reading' : 'missed pongs', { terminateAfterMs: 1000 });
        continue;
      }
      conn.missedPongs++;
      conn.ping();
    }
  }, settings.ping_interval_ms);
  pinger.unref();
  return pinger;
}

function listen(server: http.Server, settings: ServerSettings, logger: Logger): Promise<AddressInfo> {
  return new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.listen.port, settings.listen.host, () => {
      server.off('error', reject);
      server.on('error', (err: NodeJS.ErrnoException) => logger.error({ code: err.code, err: err.message }, 'server socket error'));
      resolve(server.address() as AddressInfo);
    });
  });
}

/**
 * Graceful stop: agent.shutdown {ServerReload, drain} to every session (others close 1001),
 * then wait until every session closed or `drain` seconds passed.
 */
async function drainSessions(open: readonly Connection[], drain: number, logger: Logger): Promise<void> {
  let told = 0;
  for (const conn of open) {
    if (conn.open) {
      conn.control.shuttingDown = true;
      if (conn.sendShutdown('ServerReload', drain)) told++;
    } else if (conn.state !== 'closed') conn.closeWith(1001, 'server shutdown', { terminateAfterMs: 2000 });
  }
  logger.info({ sessions: told, drain_seconds: drain }, 'draining: agent.shutdown ServerReload sent; still ingesting and acking');
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([Promise.all(open.map((c) => c.closed)), new Promise<void>((r) => (timer = setTimeout(r, drain * 1000)))]);
  clearTimeout(timer);
}
