// The reference server: one HTTP(S) server carrying the WebSocket endpoint /ws/agent
// (subprotocol cortex.v1), GET /healthz, GET /metrics and the admin API (./admin.ts).
// Connections live in ./ws/connection.ts, the ingest path in ./ingest.ts, the control
// plane (database watcher, probes, retention) in ./control/.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { sql } from 'kysely';
import { WebSocketServer, type WebSocket } from 'ws';
import { LIMITS, SUBPROTOCOL } from '@cortex/agent-protocol';
import { migrateToLatest } from './db/migrations/index.js';
import { openStorage, redactDbUrl } from './db/open.js';
import type { Storage } from './db/storage.js';
import { SessionRegistry, defaultServerId } from './cluster/registry.js';
import { ProbeForwarder } from './cluster/probe-forward.js';
import { clusterSettings, perServerSettings } from './cluster/settings-agreement.js';
import { Ingest } from './ingest.js';
import { handleAdmin } from './admin.js';
import { handleConsole } from './console.js';
import { metricsAccess } from './security/access.js';
import { FdWatch } from './security/fd-watch.js';
import { HelloThrottle } from './security/hello-throttle.js';
import { ControlPlane } from './control/control.js';
import { PROBE_GRACE_MS, ProbeRouter } from './control/probes.js';
import { Retention } from './control/retention.js';
import { createLogger, type Logger } from './log.js';
import { registerFleetMetrics } from './fleet-metrics.js';
import { ServerMetrics } from './metrics.js';
import type { ServerSettings } from './settings.js';
import { Connection } from './ws/connection.js';
import type { ServerContext } from './ws/context.js';
import { TrustedProxies, UpgradeRateLimiter } from './ws/net.js';

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
  /**
   * Time a client gets to send a complete HTTP request head (the upgrade request), and a
   * TLS client to finish its handshake (ms, default 10,000). Node's own defaults (60 s for
   * headers, checked every 30 s; 120 s for TLS) let a slow-header client hold a socket for
   * up to 90 s before the hello timer even starts.
   */
  headersTimeoutMs?: number;
}

const HEADERS_TIMEOUT_MS = 10_000;

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  readonly storage: Storage;
  /** This server's id (servers.server_id, agents.server_id of the sessions it holds). */
  readonly serverId: string;
  /** The --db value with any password masked, for logs and messages. */
  readonly dbDisplay: string;
  /** Which session holds which host (here) and this server's lease (cluster). */
  readonly registry: SessionRegistry<Connection>;
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
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const settings = options.settings;
  const logger = options.logger ?? createLogger({ name: 'cortex-server' });
  const ownStorage = options.storage === undefined;
  const storage = options.storage ?? (await openStorage(settings.db, options.dbPool !== undefined ? { poolSize: options.dbPool } : {}));
  if (ownStorage) {
    try {
      await migrateToLatest(storage);
    } catch (error) {
      await storage.close().catch(() => undefined);
      throw error;
    }
  }
  // PostgreSQL: the day partitions of logs exist ahead before the first commit.
  await storage.maintainPartitions?.(new Date(), null);
  const dbDisplay = redactDbUrl(settings.db);

  const ingest = new Ingest(storage, logger, {
    maxBatchEntries: settings.max_batch_entries,
    queueCapacityEntries: options.ingestQueueEntries ?? settings.ingest_queue_batches * LIMITS.logs_push_max_entries,
    agentRatePerSec: settings.agent_rate_entries_per_s,
    ...(options.flushEntries !== undefined ? { flushEntries: options.flushEntries } : {}),
    ...(options.flushMs !== undefined ? { flushMs: options.flushMs } : {}),
  });
  const connections = new Set<Connection>();
  // The server id needs the port; the registry is created once it is known (listen).
  // eslint-disable-next-line prefer-const -- assigned once the port is known, read by closures defined before
  let registry!: SessionRegistry<Connection>;
  const sessions = new Map<string, Connection>();
  const metrics = new ServerMetrics(
    { activeSessions: () => sessions.size, queueDepth: () => ingest.queuedEntries },
    { defaultMetrics: options.processMetrics ?? true },
  );
  ingest.options.metrics = metrics;
  registerFleetMetrics(metrics.registry, storage.db, {
    silentAfterSecs: settings.silent_after_secs,
    onError: (error) => logger.warn({ err: String(error) }, 'fleet metrics: reading the agents table failed'),
  });
  const control = new ControlPlane(sessions, storage, settings, logger, metrics, {
    ...(options.controlPollMs !== undefined ? { pollMs: options.controlPollMs } : {}),
    ...(options.rotationCloseGraceMs !== undefined ? { rotationCloseGraceMs: options.rotationCloseGraceMs } : {}),
  });
  const probes = new ProbeRouter(sessions, storage, metrics, logger, options.probeGraceMs ?? PROBE_GRACE_MS);
  let forwarder: ProbeForwarder | undefined;
  const retention = new Retention(storage, logger, metrics, {
    retentionDays: settings.retention_days,
    maxDbBytes: settings.max_db_bytes,
    ...(options.retentionIntervalMs !== undefined ? { intervalMs: options.retentionIntervalMs } : {}),
    ...(options.retentionFirstRunDelayMs !== undefined ? { firstRunDelayMs: options.retentionFirstRunDelayMs } : {}),
    ...(options.retentionBatchRows !== undefined ? { batchRows: options.retentionBatchRows } : {}),
    ...(options.retentionPauseMs !== undefined ? { pauseMs: options.retentionPauseMs } : {}),
  });
  let draining = false;
  /** Upgrades wait until the server joined the cluster (its id and lease row exist). */
  let joined = false;
  const ctx: ServerContext = {
    metrics,
    settings,
    storage,
    ingest,
    logger,
    serverVersion: SERVER_VERSION,
    get serverId() {
      return registry.serverId;
    },
    register(conn) {
      registry.register(conn);
    },
    unregister(conn) {
      connections.delete(conn);
      registry.unregister(conn);
    },
    onSessionClosed(conn) {
      control.onSessionClosed(conn);
    },
  };

  const proxies = new TrustedProxies(settings.trusted_proxies);
  const limiter = new UpgradeRateLimiter(settings.upgrades_per_minute);
  // Failed hellos per client address, loopback included (DECISIONS H7).
  const throttle = new HelloThrottle(settings.failed_hellos_before_throttle);
  const throttleKey = (req: http.IncomingMessage): string => proxies.clientAddress(req) ?? (req.socket.remoteAddress ?? '').replace(/^::ffff:/i, '');
  const AUTH_CODES = new Set([-32001, -32002, -32005]);
  ctx.clientKey = throttleKey;
  ctx.onHelloFailed = (key, code) => {
    if (!AUTH_CODES.has(code)) return;
    const delay = throttle.failed(key);
    metrics.helloFailures.inc();
    if (delay > 0) logger.warn({ address: key, retry_after_ms: delay }, 'failed hellos from this address: further upgrades get 429 for a while');
  };
  ctx.onHelloOk = (key) => throttle.succeeded(key);
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: LIMITS.max_frame_bytes,
    clientTracking: false,
    handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });

  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    void handleHttp(req, res).catch((error: unknown) => {
      logger.error({ err: String(error), path: (req.url ?? '').split('?')[0] }, 'HTTP handler failed');
      if (!res.headersSent) res.writeHead(500).end();
    });
  };
  const tls = settings.tls_cert !== undefined && settings.tls_key !== undefined;
  const headersTimeout = Math.max(1, options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS);
  const bounds: http.ServerOptions = {
    headersTimeout,
    requestTimeout: Math.max(30_000, headersTimeout),
    // how often Node checks the two timeouts above (default 30 s)
    connectionsCheckingInterval: Math.min(1000, headersTimeout),
  };
  const server = tls
    ? https.createServer({ ...bounds, handshakeTimeout: headersTimeout, cert: readFileSync(settings.tls_cert as string), key: readFileSync(settings.tls_key as string) }, handler)
    : http.createServer(bounds, handler);

  // Defined out here, not in the 'upgrade' handler: it stays on the socket for the whole
  // session, and a closure made in there would keep that handler's scope alive with it — the
  // upgrade request, its headers and head buffer, ~2 KB per connected agent (bench fleet).
  const onUpgradeSocketError = (err: NodeJS.ErrnoException): void => logger.debug({ err: err.code ?? err.message }, 'socket error during the upgrade');

  const fdWatch = new FdWatch(logger);
  server.on('connection', () => fdWatch.check(connections.size));

  server.on('upgrade', (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
    // Node's HTTP server drops its own error listener from a socket it hands to 'upgrade':
    // without this one, a client that resets the connection while we answer (a refusal
    // below, or the 101) raises an unhandled 'error' event and takes the process down.
    socket.on('error', onUpgradeSocketError);
    // Already reset by the client (no peer address left): nothing to answer, nothing to count.
    if (socket.destroyed || socket.remoteAddress === undefined) return void socket.destroy();
    const path = (req.url ?? '').split('?')[0];
    if (path !== LIMITS.ws_path) return refuse(socket, 404, 'Not Found', `the WebSocket endpoint is ${LIMITS.ws_path}`);
    if (!joined) return refuse(socket, 503, 'Service Unavailable', 'the server is starting; reconnect later', { 'Retry-After': '1' });
    if (draining) return refuse(socket, 503, 'Service Unavailable', 'the server is shutting down; reconnect later', { 'Retry-After': '5' });
    // A web page's upgrade carries Origin: refused unless allowed (DECISIONS H7).
    const origin = req.headers['origin'];
    if (origin !== undefined && !settings.allowed_origins.includes(origin)) {
      metrics.upgradesRefused.labels('origin').inc();
      logger.warn({ origin }, 'upgrade with a browser Origin refused (403); allow it with --allow-origin');
      return refuse(socket, 403, 'Forbidden', 'upgrades from web pages are refused; an agent sends no Origin header (see --allow-origin)');
    }
    const waitMs = throttle.retryAfterMs(throttleKey(req));
    if (waitMs > 0) {
      metrics.upgradesRefused.labels('failed_hellos').inc();
      return refuse(socket, 429, 'Too Many Requests', 'too many failed hellos from this address; retry later', { 'Retry-After': String(Math.ceil(waitMs / 1000)) });
    }
    const client = proxies.clientAddress(req);
    if (client !== undefined && !limiter.allow(client)) {
      logger.warn({ address: client }, 'upgrade rate limit exceeded (429)');
      return refuse(socket, 429, 'Too Many Requests', 'too many connection attempts from this address; retry later', { 'Retry-After': '60' });
    }
    const offered = (req.headers['sec-websocket-protocol'] ?? '').split(',').map((s) => s.trim());
    if (!offered.includes(SUBPROTOCOL)) {
      logger.info({ address: client ?? req.socket.remoteAddress }, 'upgrade without subprotocol cortex.v1 refused (400)');
      return refuse(socket, 400, 'Bad Request', `offer the WebSocket subprotocol ${SUBPROTOCOL}`);
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const conn = new Connection(ws, req, ctx);
      connections.add(conn);
    });
  });

  // Liveness: one sweep for all connections; missed_pongs pings without a pong → 1011.
  const pinger = setInterval(() => {
    for (const conn of connections) {
      if (conn.missedPongs >= settings.missed_pongs) {
        logger.info({ host_id: conn.host_id, address: conn.address }, 'missed pongs: closing 1011');
        conn.closeWith(1011, 'missed pongs', { terminateAfterMs: 1000 });
        continue;
      }
      conn.missedPongs++;
      conn.ping();
    }
  }, settings.ping_interval_ms);
  pinger.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.listen.port, settings.listen.host, () => {
      server.off('error', reject);
      server.on('error', (err: NodeJS.ErrnoException) => logger.error({ code: err.code, err: err.message }, 'server socket error'));
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  const url = `${tls ? 'wss' : 'ws'}://${host}:${addr.port}${LIMITS.ws_path}`;
  const serverId = options.serverId ?? defaultServerId(addr.port);
  registry = new SessionRegistry<Connection>(storage, { serverId, logger, sessions, ...(options.leaseMs !== undefined ? { leaseMs: options.leaseMs } : {}) });
  try {
    await registry.join(url, clusterSettings(settings), perServerSettings(settings, { db_pool: options.dbPool ?? null, dialect: storage.dialect }));
  } catch (error) {
    clearInterval(pinger);
    await new Promise<void>((r) => server.close(() => r()));
    if (ownStorage) await storage.close().catch(() => undefined);
    throw error;
  }
  registry.onReleased = () => void control.poll();
  joined = true;
  // eslint-disable-next-line prefer-const -- created after listen (needs the registry), read by closures defined before
  forwarder = new ProbeForwarder(storage, registry, probes, logger, options.probeGraceMs ?? PROBE_GRACE_MS);
  probes.forwarder = forwarder;

  async function handleHttp(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (req.method === 'GET' && path === '/healthz') {
      let database = 'ok';
      try {
        await sql`select 1`.execute(storage.db);
      } catch {
        database = 'unreachable';
      }
      const ok = database === 'ok';
      res.writeHead(ok ? 200 : 503, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ status: ok ? (draining ? 'draining' : 'ok') : 'degraded', database, connections: connections.size, sessions: sessions.size }));
      return;
    }
    if (req.method === 'GET' && path === '/metrics') {
      const access = metricsAccess(req, { adminToken: settings.admin_token, metricsPublic: settings.metrics_public, isTrustedProxy: (a) => proxies.has(a) });
      if (!access.ok) {
        res.writeHead(access.status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { code: access.status, message: access.message } }));
        return;
      }
      const text = await metrics.text();
      res.writeHead(200, { 'Content-Type': metrics.contentType });
      res.end(text);
      return;
    }
    const admin = await handleAdmin(req, res, path, {
      storage,
      router: probes,
      adminToken: settings.admin_token,
      connectedHere: (host_id) => sessions.get(host_id)?.open === true,
      heartbeatOf: (host_id) => sessions.get(host_id)?.lastHeartbeat,
      settings,
      wsUrl: url,
      tls,
      serverVersion: SERVER_VERSION,
      logger,
      isTrustedProxy: (a) => proxies.has(a),
    });
    if (admin) return;
    if (handleConsole(req, res, path)) return;
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: `no such endpoint: ${req.method} ${path} (GET /healthz, GET /metrics, GET /admin/openapi.json, the console at /ui/, WebSocket ${LIMITS.ws_path})` }));
  }

  await control.start();
  await forwarder.start();
  retention.start();

  let closing: Promise<void> | undefined;
  let shuttingDown: Promise<void> | undefined;
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
        draining = true;
        const drain = Math.min(Math.max(0, drainSecs), LIMITS.max_drain_seconds);
        const open = [...connections];
        let told = 0;
        for (const conn of open) {
          if (conn.open) {
            conn.control.shuttingDown = true;
            if (conn.sendShutdown('ServerReload', drain)) told++;
          } else if (conn.state !== 'closed') conn.closeWith(1001, 'server shutdown', { terminateAfterMs: 2000 });
        }
        logger.info({ sessions: told, drain_seconds: drain }, 'draining: agent.shutdown ServerReload sent; still ingesting and acking');
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          Promise.all(open.map((c) => c.closed)),
          new Promise<void>((r) => (timer = setTimeout(r, drain * 1000))),
        ]);
        clearTimeout(timer);
        await running.close();
      })();
      return shuttingDown;
    },
    close() {
      closing ??= (async () => {
        draining = true;
        clearInterval(pinger);
        await control.stop();
        await retention.stop();
        const done = new Promise<void>((resolve) => server.close(() => resolve()));
        const open = [...connections];
        for (const conn of open) conn.closeWith(1001, 'server shutdown', { terminateAfterMs: 2000 });
        await Promise.all(open.map((c) => c.closed));
        server.closeAllConnections?.();
        await done;
        await forwarder?.stop();
        await registry.leave();
        if (ownStorage) await storage.close();
      })();
      return closing;
    },
  };
  return running;
}

function refuse(socket: Socket, status: number, text: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: message });
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}
