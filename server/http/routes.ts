// The HTTP side of the server: the listener (HTTP or HTTPS, with bounded request-head and TLS
// handshake times) and its routes — GET /healthz, GET /metrics, the admin API (../admin.ts),
// the console (../console.ts) and 404 for anything else — and which upgrade path carries the
// agent WebSocket (any other path is refused 404).
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { sql } from 'kysely';
import { LIMITS } from '@cortex/agent-protocol';
import { handleAdmin, type AdminDeps } from '../admin.js';
import { handleConsole } from '../console.js';
import { OUTAGE_WHY, outageKind, type DatabaseOutage, type OutageKind } from '../db/outage.js';
import type { Storage } from '../db/storage.js';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';
import { metricsAccess } from '../security/access.js';
import type { ServerSettings } from '../settings.js';
import { refuse } from '../ws/pre-hello-guard.js';
import type { TlsPair } from './tls-reload.js';

export const HEADERS_TIMEOUT_MS = 10_000;

/** What the routes read of the running server. */
export interface RoutesContext {
  readonly settings: ServerSettings;
  readonly storage: Storage;
  readonly logger: Logger;
  readonly metrics: ServerMetrics;
  /** The database out of reach: a request that failed for it is answered 503, not logged each time. */
  readonly outage: DatabaseOutage;
  isTrustedProxy(address: string): boolean;
  /** Open sockets and authenticated sessions (for /healthz). */
  counts(): { connections: number; sessions: number };
  draining(): boolean;
  /** How long the oldest ingest commit has been held up, once past the stall threshold (else 0; DECISIONS H45). */
  commitStalledMs?(): number;
  /** The admin token now (settings.admin_token, or what SIGHUP read from --admin-token-file since). */
  adminToken(): string | undefined;
  /** The admin API's context, once the server listens (its URL is known). */
  admin(): Omit<AdminDeps, 'adminToken' | 'settings' | 'storage' | 'logger' | 'isTrustedProxy'>;
}

/**
 * The admin API's 503 text for a database-wide condition: what it is and whether waiting helps
 * (a refused login or a dropped database wait for an operator, an unreachable one usually not).
 */
export function unavailableMessage(kind: OutageKind | undefined): string {
  switch (kind) {
    case 'read_only':
    case 'disk_full':
      return `the database refuses writes (${kind === 'read_only' ? 'it is read-only' : 'its disk is full'}); try again once it takes them (the server log says why)`;
    case 'login':
      return `${OUTAGE_WHY.login}: an operator has to mend its credentials (the server log says why); try again after`;
    case 'missing':
      return `${OUTAGE_WHY.missing}: an operator has to restore or recreate it (the server log says why); try again after`;
    default:
      return 'the server cannot reach its database; try again shortly (the server log says why)';
  }
}

/**
 * The request's own stream failed: the client reset or closed the connection mid-body, or
 * Node's requestTimeout cut it. Its ECONNRESET is no database's (before, it reached the outage
 * account: "database out of reach", cortex_database_up 0).
 */
function clientGone(req: http.IncomingMessage, error: unknown): boolean {
  return error !== undefined && error !== null && req.errored === error;
}

/** The request handler of the listener (errors become 500 and a log line). */
export function httpHandler(c: RoutesContext): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (req, res) => {
    void route(c, req, res).catch((error: unknown) => {
      const path = (req.url ?? '').split('?')[0];
      if (clientGone(req, error)) {
        c.logger.info({ err: String(error), path }, 'HTTP request cut short by its client; nothing answered');
        res.destroy();
        return;
      }
      if (c.outage.failed('admin API', error)) {
        if (!res.headersSent) {
          // the admin API's error shape (code = the HTTP status, as for 401/403)
          res.writeHead(503, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Retry-After': '5' });
          const kind = outageKind(error);
          res.end(JSON.stringify({ error: { code: 503, message: unavailableMessage(kind) } }));
        } else {
          cutShort(res);
        }
        return;
      }
      c.logger.error({ err: String(error), path }, 'HTTP handler failed');
      if (!res.headersSent) {
        // never an empty 500: the admin API's error shape, saying what to do (a console shows it)
        const body = JSON.stringify({ error: { code: 500, message: internalErrorMessage(req.method ?? 'GET', path ?? '') } });
        res.writeHead(500, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), 'Cache-Control': 'no-store' }).end(body);
      } else cutShort(res);
    });
  };
}

/** The 500's message: what failed, that the server log says why, and what to do. */
export function internalErrorMessage(method: string, path: string): string {
  return `the server failed on ${method} ${path.slice(0, 200)} (an internal error: the server log has it, under "HTTP handler failed"); it may not have done what was asked: check, then try again, and if it fails again show that log line to whoever runs the server`;
}

/**
 * A request whose line and headers exceed Node's limit (http.maxHeaderSize, 16 KiB): answered
 * 431 with the admin API's error shape, as every other refusal (Node's own 431 has no body).
 * Any other client error is answered as Node does when no 'clientError' listener is set.
 */
function onClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent === true) {
    socket.destroy(error);
    return;
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    const body = JSON.stringify({
      error: {
        code: 431,
        message: `request line and headers larger than this server takes (${http.maxHeaderSize} bytes): shorten the query string (a search text is at most 200 characters) or send fewer or smaller headers (cookies)`,
      },
    });
    socket.end(`HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`);
    setTimeout(() => socket.destroy(), 1000).unref();
    return;
  }
  const status =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? '413 Payload Too Large' : '400 Bad Request';
  socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
  socket.destroy(error);
}

/**
 * A response that failed after its headers went out (a live tail's poll, a half-written body)
 * cannot carry an error any more: it is cut, so the client sees it end — an EventSource comes
 * back with Last-Event-ID — instead of waiting on an open, silent connection for good.
 */
function cutShort(res: http.ServerResponse): void {
  if (!res.writableEnded) res.destroy();
}

/** Paths of this module's own routes, GET only (HEAD answered as GET). */
const OWN_ROUTES = new Set(['/healthz', '/metrics']);

async function route(c: RoutesContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const path = (req.url ?? '').split('?')[0] ?? '';
  if (OWN_ROUTES.has(path)) {
    // HEAD as GET (Node drops the body); anything else 405 naming both, as the console does.
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { 'Content-Type': 'application/json', Allow: 'GET, HEAD' });
      res.end(JSON.stringify({ error: { code: 405, message: `${req.method ?? ''} is not supported on ${path}; use GET` } }));
      return;
    }
    return path === '/healthz' ? health(c, res) : metricsRoute(c, req, res);
  }
  const { settings, storage, logger } = c;
  const admin = await handleAdmin(req, res, path, {
    ...c.admin(),
    storage,
    adminToken: c.adminToken(),
    currentAdminToken: () => c.adminToken(),
    settings,
    logger,
    isTrustedProxy: (a) => c.isTrustedProxy(a),
  });
  if (admin) return;
  if (handleConsole(req, res, path)) return;
  res.writeHead(404, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ error: `no such endpoint: ${req.method} ${path} (GET /healthz, GET /metrics, GET /admin/openapi.json, the console at /ui/, WebSocket ${LIMITS.ws_path})` }));
}

/** /healthz's `database` for each condition of the outage account. */
const HEALTH_NAME: Readonly<Record<OutageKind, string>> = { unreachable: 'unreachable', login: 'login_refused', missing: 'missing', read_only: 'read_only', disk_full: 'disk_full' };

/** The longest /healthz waits for its `select 1` before it answers without it (DECISIONS G41). */
export const HEALTH_CHECK_TIMEOUT_MS = 2000;
/** With the database known to be out of reach, how long /healthz gives its check to show it back before saying so. */
const KNOWN_DOWN_WAIT_MS = 250;

/** A health check of a server: its database's answer, and when it was asked. */
interface HealthCheck {
  at: number;
  answer: Promise<string>;
}

/** Each server's health check running now (by its storage): one query for every request that comes meanwhile. */
const runningChecks = new WeakMap<Storage, HealthCheck>();

/**
 * `select 1` through the pool, as /healthz's `database`: 'ok', or the condition its failure
 * shows. A check that has been running for HEALTH_CHECK_TIMEOUT_MS is not joined any more (a
 * query hung on a connection that never answers would hold every later request): the next
 * request asks again. Its outcome goes to the outage account, whether a request still waits for
 * it or not: a success ends an account of the database out of reach, a failure to reach it
 * starts one (cortex_database_up 0).
 */
function databaseCheck(c: RoutesContext): Promise<string> {
  const running = runningChecks.get(c.storage);
  if (running !== undefined && Date.now() - running.at < HEALTH_CHECK_TIMEOUT_MS) return running.answer;
  const check: HealthCheck = {
    at: Date.now(),
    answer: sql`select 1`.execute(c.storage.db).then(
      () => {
        c.outage.readSucceeded();
        return 'ok';
      },
      (error: unknown) => {
        c.outage.failed('health check', error);
        return HEALTH_NAME[outageKind(error) ?? 'unreachable'];
      },
    ),
  };
  runningChecks.set(c.storage, check);
  void check.answer.finally(() => {
    if (runningChecks.get(c.storage) === check) runningChecks.delete(c.storage);
  });
  return check.answer;
}

/** `p`'s value, or `late` when it takes longer than `ms`. */
function within<T>(p: Promise<T>, ms: number, late: T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<T>((resolve) => (timer = setTimeout(() => resolve(late), ms)))]).finally(() => clearTimeout(timer));
}

async function health(c: RoutesContext, res: http.ServerResponse): Promise<void> {
  // A load balancer's check (2-5 s) must get its answer in time (DECISIONS G41). The database
  // known to be out of reach (the outage account): said after KNOWN_DOWN_WAIT_MS at most (a
  // database back answers in that time, and its answer ends the account); a check that takes
  // longer runs on behind the answer, and its success ends the account for the next request.
  // Otherwise the check is waited for HEALTH_CHECK_TIMEOUT_MS at most: a database that does
  // not answer a `select 1` in that time (a network that drops packets, a frozen host; or every
  // pool connection busy) cannot take the agents' pushes either. Before, the request waited
  // for the pool's connection timeout: 10 s, each time.
  const check = databaseCheck(c);
  const known = c.outage.down ? c.outage.condition : null;
  let database = await within(check, known !== null ? KNOWN_DOWN_WAIT_MS : HEALTH_CHECK_TIMEOUT_MS, known !== null ? HEALTH_NAME[known] : HEALTH_NAME.unreachable);
  // A database that answers `select 1` may still take nothing this server sends (read-only,
  // disk full, a login refused to new connections): a load balancer should send agents to a
  // server that can store their logs (DECISIONS G21).
  const condition = c.outage.condition;
  if (database === 'ok' && condition !== null) database = HEALTH_NAME[condition];
  // It answers and refuses nothing, yet holds this server's commits (a lock, an overload): the
  // agents' pushes wait unacked (DECISIONS H45).
  const stalledMs = database === 'ok' ? (c.commitStalledMs?.() ?? 0) : 0;
  if (stalledMs > 0) database = 'stalled';
  const ok = database === 'ok';
  res.writeHead(ok ? 200 : 503, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ status: ok ? (c.draining() ? 'draining' : 'ok') : 'degraded', database, ...(stalledMs > 0 ? { commit_wait_s: Math.round(stalledMs / 1000) } : {}), ...c.counts() }));
}

async function metricsRoute(c: RoutesContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const access = metricsAccess(req, { adminToken: c.adminToken(), metricsPublic: c.settings.metrics_public, isTrustedProxy: (a) => c.isTrustedProxy(a) });
  if (!access.ok) {
    res.writeHead(access.status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { code: access.status, message: access.message } }));
    return;
  }
  const text = await c.metrics.text();
  res.writeHead(200, { 'Content-Type': c.metrics.contentType });
  res.end(text);
}

/** True for the agent WebSocket path; any other upgrade is answered 404 here. */
export function upgradePathOk(req: http.IncomingMessage, socket: Socket): boolean {
  const path = (req.url ?? '').split('?')[0];
  if (path === LIMITS.ws_path) return true;
  refuse(socket, 404, 'Not Found', `the WebSocket endpoint is ${LIMITS.ws_path}`);
  return false;
}

/** The listener: HTTPS with `certificate` (read by ./tls-reload.ts from --tls-cert/--tls-key), else HTTP. */
export function createListener(handler: http.RequestListener, headersTimeoutMs = HEADERS_TIMEOUT_MS, certificate?: TlsPair): http.Server {
  const headersTimeout = Math.max(1, headersTimeoutMs);
  const bounds: http.ServerOptions = {
    headersTimeout,
    requestTimeout: Math.max(30_000, headersTimeout),
    // how often Node checks the two timeouts above (default 30 s)
    connectionsCheckingInterval: Math.min(1000, headersTimeout),
  };
  const server = certificate !== undefined ? https.createServer({ ...bounds, handshakeTimeout: headersTimeout, cert: certificate.cert, key: certificate.key }, handler) : http.createServer(bounds, handler);
  server.on('clientError', onClientError);
  return server;
}
