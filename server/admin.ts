// The admin HTTP API (DESIGN.md sections 3 and 6), on the server's own port. Every route
// is described in ./admin/openapi.json (served at /admin/openapi.json); the handlers live
// in ./admin/*.routes.ts, one module per route group:
//   GET  /admin/agents                    → JSON array of agents (no token hashes)
//   POST /admin/agents/{host_id}/probe    → the agent's ProbeOutput, or {"error": {...}}
//   ... agents, logs (query, SSE tail), metrics, settings, console sessions
// Auth: with an admin token configured, `Authorization: Bearer <token>` (401 without it);
// without one, only loopback peers that send no X-Forwarded-For / Forwarded header (403
// otherwise), so the API is never open through a reverse proxy.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authorizeLive } from './admin/access.js';
import { agentRoutes } from './admin/agents.routes.js';
import type { AdminDeps, Route, RouteContext } from './admin/context.js';
import { ApiError, DATABASE_LOCKED_RETRY_S, Query, databaseLocked, sendError } from './admin/http.js';
import { logRoutes } from './admin/logs.routes.js';
import { operatorRoutes } from './admin/operator.routes.js';
import { serverRoutes } from './admin/server.routes.js';
import { AUDIT_ACTIONS, auditRequest } from './admin/audit.js';
import { CommitTally, tallied } from './db/storage.js';
import { adminAccess } from './security/access.js';

export type { AdminDeps } from './admin/context.js';
export { agentView } from './admin/agents.routes.js';
export { DEFAULT_PROBE_TIMEOUT_MS } from './admin/server.routes.js';

export type AuthDecision = { ok: true } | { ok: false; status: 401 | 403; message: string };

/** The admin API's access rule (exported for tests); the rule itself is server/security/access.ts. */
export function checkAdminAuth(
  req: Pick<IncomingMessage, 'headers'> & { socket: { remoteAddress?: string | undefined } },
  adminToken: string | undefined,
  isTrustedProxy?: (address: string) => boolean,
): AuthDecision {
  const d = adminAccess(req, { adminToken, ...(isTrustedProxy !== undefined ? { isTrustedProxy } : {}) });
  return d.ok ? { ok: true } : d;
}

/** Every admin route (the OpenAPI test checks this list against the document). */
export const ADMIN_ROUTES: readonly Route[] = [...serverRoutes, ...agentRoutes, ...logRoutes, ...operatorRoutes];

interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  names: string[];
}

const COMPILED: CompiledRoute[] = ADMIN_ROUTES.map((route) => {
  const names: string[] = [];
  const source = route.path
    .split(/(\{[a-z_]+\})/)
    .map((part) => {
      const m = /^\{([a-z_]+)\}$/.exec(part);
      if (m === null) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(m[1] as string);
      return '([^/]+)';
    })
    .join('');
  return { route, pattern: new RegExp(`^${source}$`), names };
});

const CHANGES_STATE = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

/** Handles /admin/*; returns false when the path is not an admin path. */
export async function handleAdmin(req: IncomingMessage, res: ServerResponse, path: string, deps: AdminDeps): Promise<boolean> {
  if (path !== '/admin' && !path.startsWith('/admin/')) return false;
  const method = req.method ?? 'GET';
  const candidates = COMPILED.filter((c) => c.pattern.test(path));
  // HEAD is answered wherever GET is (Node sends the headers and drops the body).
  const hit = candidates.find((c) => c.route.method === method) ?? (method === 'HEAD' ? candidates.find((c) => c.route.method === 'GET') : undefined);
  let audited = false;
  const started = Date.now();
  // The rows a state-changing route's writes committed (counted on SQLite, storage.ts CommitTally).
  const tally = new CommitTally();
  try {
    if (hit?.route.public !== true) {
      // a console session signed out on any server of the database counts as expired (DECISIONS J14)
      const access = await authorizeLive(req, deps, CHANGES_STATE.has(method));
      if (!access.ok) {
        sendError(res, access.error, access.error.status === 401 ? { 'WWW-Authenticate': 'Bearer realm="cortex-admin"' } : {});
        return true;
      }
      if (hit === undefined) {
        if (candidates.length > 0) {
          // HEAD goes unnamed, as before (the methods the OpenAPI document lists); it is answered wherever GET is.
          const allow = candidates.map((c) => c.route.method).join(', ');
          sendError(res, new ApiError(405, 405, `${method} is not supported on ${path}; use ${allow}`), { Allow: allow });
        } else {
          sendError(res, new ApiError(404, 404, `no such admin endpoint: ${method} ${path} (the routes are listed in GET /admin/openapi.json)`));
        }
        return true;
      }
      await run(hit, access.via, access.session);
      if (CHANGES_STATE.has(method)) {
        // A route that did its work without writing its row (one added later): recorded now,
        // after the answer, rather than not at all.
        if (!audited && res.statusCode < 400) await audit(hit, access.via);
        logAction(hit, access.via, res.statusCode);
      }
    } else {
      await run(hit, 'none', undefined); // the handler decides (/admin/session)
    }
  } catch (caught) {
    // Another process holding the SQLite database locked is no internal error: 503, on every route alike.
    const locked = caught instanceof ApiError ? undefined : databaseLocked(caught, deps.storage.file, Date.now() - started, tally.changes);
    const error = locked ?? caught;
    if (!(error instanceof ApiError)) throw error;
    if (locked !== undefined) {
      deps.logger?.warn(
        { admin: `${method} ${hit?.route.path ?? path}`, err: String(caught), ...(tally.changes > 0 ? { rows_written_before: tally.changes } : {}) },
        'admin request refused 503: the database is locked by another process',
      );
    }
    if (res.headersSent) res.end();
    else sendError(res, error, locked !== undefined ? { 'Retry-After': String(DATABASE_LOCKED_RETRY_S) } : {});
    if (hit !== undefined && hit.route.public !== true && CHANGES_STATE.has(method)) logAction(hit, undefined, error.status);
  }
  return true;

  /**
   * The audit row of an authorized state-changing request (server/admin/audit.ts), written by
   * the route through ctx.audit once it did what it was asked. `host_id` is the route's
   * validated one, never the path's raw text.
   */
  async function audit(c: CompiledRoute, via: RouteContext['via'], host_id?: string, detail?: Record<string, unknown>): Promise<void> {
    audited = true;
    await auditRequest({ deps, via }, AUDIT_ACTIONS[`${method} ${c.route.path}`] ?? `${method} ${c.route.path}`, host_id, detail);
  }

  /** One line per state-changing request: which route, which host, how it ended. */
  function logAction(c: CompiledRoute, via: RouteContext['via'] | undefined, status: number): void {
    const m = c.pattern.exec(path);
    const host_id = c.names.includes('host_id') && m !== null ? decodeURIComponentSafe(m[1 + c.names.indexOf('host_id')] as string) : undefined;
    deps.logger?.info({ admin: `${method} ${c.route.path}`, ...(host_id !== undefined ? { host_id } : {}), ...(via !== undefined ? { via } : {}), status }, 'admin request');
  }

  async function run(c: CompiledRoute, via: RouteContext['via'], session: RouteContext['session']): Promise<void> {
    const m = c.pattern.exec(path) as RegExpExecArray;
    const params = Object.fromEntries(c.names.map((n, i) => [n, m[i + 1] as string]));
    const search = new URLSearchParams((req.url ?? '').split('?').slice(1).join('?'));
    // a state-changing route's queries are counted in `tally` (a GET's storage stays the very same object: the live tails' count is kept by it)
    const routeDeps = CHANGES_STATE.has(method) ? { ...deps, storage: { ...deps.storage, db: tallied(deps.storage.db, tally) } } : deps;
    await c.route.handler({ req, res, params, query: new Query(search), deps: routeDeps, via, session, audit: (host_id, detail) => audit(c, via, host_id, detail) });
  }
}

/** A path's host_id for the log line: decoded when it can be, and never more than 80 characters of it. */
function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s).toLowerCase().slice(0, 80);
  } catch {
    return s.slice(0, 80);
  }
}
