// Who may call the admin API, on top of checkAdminAuth (../admin.ts, DESIGN.md section 3):
//
//   Authorization: Bearer T (token configured)  → checkAdminAuth decides (401 when wrong)
//   valid console session cookie                → allowed; a state-changing request also
//                                                 needs the session's X-CSRF-Token (403)
//   otherwise                                   → checkAdminAuth (401 with a token
//                                                 configured; the loopback rule without)
//
// In loopback mode (no admin token) a request from a web page (Origin / Sec-Fetch-Site /
// our cookie) must also name a loopback Host (DNS rebinding), and may change state only
// with a console session and its CSRF token: a page on another site can make the browser
// send a POST to 127.0.0.1, and a loopback address is no proof of who sent it.
//
// A session signed out (DECISIONS J14) is listed in the database; a cookie request is checked
// against that list on every request (one primary-key lookup, no cache: a cache would let a
// cookie signed out on another server through here) and, when listed, is decided as if the
// cookie had expired. authorize() stays synchronous (it needs no database): the lookup is
// authorizeLive(), which server/admin.ts runs for every request that is not public.
import type { IncomingMessage } from 'node:http';
import { isSessionEnded } from '../db/sessions.repository.js';
import { adminAccess } from '../security/access.js';
import { clientHost, clientUsesTls, forwarded } from '../security/forwarded.js';
import type { AdminDeps } from './context.js';
import { ApiError } from './http.js';
import { SessionKeys, fromBrowser, loopbackHostHeader, readCookie, sessionCookieName, type ConsoleSession } from './session.js';

/** The bearer/loopback rule (../security/access.ts), as ../admin.ts exports it (checkAdminAuth). */
function checkAdminAuth(req: Parameters<typeof adminAccess>[0], adminToken: string | undefined, isTrustedProxy?: (address: string) => boolean) {
  return adminAccess(req, { adminToken, ...(isTrustedProxy !== undefined ? { isTrustedProxy } : {}) });
}

export type Access = { ok: true; via: 'bearer' | 'cookie' | 'loopback'; session?: ConsoleSession } | { ok: false; error: ApiError };

const keys = new Map<string, SessionKeys>();

/** The session keys for an admin token (one random key per process without one). */
export function keysFor(adminToken: string | undefined): SessionKeys {
  const k = adminToken ?? '';
  let v = keys.get(k);
  if (v === undefined) {
    v = new SessionKeys(adminToken);
    keys.set(k, v);
  }
  return v;
}

/** Headers a reverse proxy adds: a request with none of them came straight from its client. */
const FORWARDING_HEADERS = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-prefix', 'x-real-ip', 'forwarded'] as const;

const hasToken = (t: string | undefined): t is string => t !== undefined && t !== '';

/**
 * Why a console's change was refused, for the console to mend it itself (data.reason):
 * `csrf_mismatch`, its X-CSRF-Token is not its cookie's session's (another tab or server
 * replaced the cookie: GET /admin/session gives the token of the one it holds now);
 * `session_required`, loopback mode and no session of this server (it restarted, or the cookie
 * is another server's: POST /admin/session starts one).
 */
export type DeniedReason = 'csrf_mismatch' | 'session_required';

function denied(status: 401 | 403, message: string, reason?: DeniedReason): Access {
  return { ok: false, error: new ApiError(status, status, message, reason !== undefined ? { reason } : undefined) };
}

/**
 * The access rule, from the request alone. `sessionEnded`: the request's session was signed
 * out (authorizeLive looked it up), so its cookie counts as expired.
 */
export function authorize(req: IncomingMessage, deps: AdminDeps, changesState: boolean, options: { sessionEnded?: boolean } = {}): Access {
  const tokenMode = hasToken(deps.adminToken);
  const authz = req.headers['authorization'];
  if (tokenMode && typeof authz === 'string' && authz.trim() !== '') {
    const d = checkAdminAuth(req, deps.adminToken, deps.isTrustedProxy);
    return d.ok ? { ok: true, via: 'bearer' } : denied(d.status, d.message);
  }
  const cookieName = sessionCookieName(req, deps.adminToken);
  const cookie = readCookie(req, cookieName);
  const session = options.sessionEnded === true ? undefined : keysFor(deps.adminToken).verify(cookie);
  if (session !== undefined && (tokenMode || checkAdminAuth(req, undefined, deps.isTrustedProxy).ok)) {
    if (!tokenMode && !loopbackHostHeader(req)) return denied(403, 'admin API without an admin token: the Host header must name this machine by a loopback address (localhost, 127.0.0.1, [::1])');
    if (changesState && !keysFor(deps.adminToken).csrfMatches(req, session)) {
      return denied(403, 'this request changes state: send the X-CSRF-Token header of your console session (from POST or GET /admin/session)', 'csrf_mismatch');
    }
    return { ok: true, via: 'cookie', session };
  }
  const d = checkAdminAuth(req, deps.adminToken, deps.isTrustedProxy);
  if (!d.ok) {
    const expired = cookie !== undefined && d.status === 401;
    return denied(d.status, expired ? 'console session expired or not valid: sign in again (POST /admin/session)' : d.message);
  }
  if (fromBrowser(req)) {
    if (!loopbackHostHeader(req)) return denied(403, 'admin API without an admin token: the Host header must name this machine by a loopback address (localhost, 127.0.0.1, [::1])');
    // session_required: the console starts a session (POST /admin/session) and tries again by itself
    if (changesState) return denied(403, 'a web page may change state only in a console session: sign in (POST /admin/session) and send its X-CSRF-Token header', 'session_required');
  }
  return { ok: true, via: 'loopback' };
}

/** authorize(), and a console session signed out on any server of the database is refused as an expired one (DECISIONS J14). */
export async function authorizeLive(req: IncomingMessage, deps: AdminDeps, changesState: boolean): Promise<Access> {
  const access = authorize(req, deps, changesState);
  if (!access.ok || access.session === undefined || !(await isSessionEnded(deps.storage.db, access.session.nonce))) return access;
  return authorize(req, deps, changesState, { sessionEnded: true });
}

/**
 * POST /admin/session: the admin token must match (constant time, via checkAdminAuth); in
 * loopback mode the loopback rule must hold. A sign-in sent by a page of another origin is
 * refused.
 * @throws ApiError 401 / 403
 */
export function signIn(req: IncomingMessage, deps: AdminDeps, token: string | undefined): void {
  const origin = req.headers['origin'];
  if (typeof origin === 'string') {
    let originHost: string | undefined;
    try {
      originHost = new URL(origin).host;
    } catch {
      originHost = undefined;
    }
    const host = clientHost(req, deps.isTrustedProxy);
    if (originHost !== host) {
      // Behind a reverse proxy that rewrites Host (nginx's default), the page's origin is what
      // the proxy was asked for: it must say so in X-Forwarded-Host (DECISIONS I26). That hint
      // only when a trusted proxy did forward the request (it sent forwarding headers); a page
      // reached directly was opened from another address than this server's.
      const viaProxy = forwarded(req, deps.isTrustedProxy) !== undefined && FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined) && req.headers['x-forwarded-host'] === undefined;
      const own = host === undefined ? "this server's own address" : `${clientUsesTls(req, deps.tls === true, deps.isTrustedProxy) ? 'https' : 'http'}://${host}/ui/`;
      throw new ApiError(
        403,
        403,
        `sign-in from a page of another origin refused (the page is at ${originHost ?? 'an unreadable origin'}, this server was asked for ${host ?? 'no host'})${viaProxy ? '; behind a reverse proxy, have it send X-Forwarded-Host (nginx: proxy_set_header X-Forwarded-Host $http_host;)' : `; open the console from the server's own address (${own}) and sign in there`}`,
      );
    }
  }
  if (hasToken(deps.adminToken)) {
    if (token === undefined) throw new ApiError(401, 401, 'send {"token": "<admin token>"} to sign in');
    const d = checkAdminAuth({ headers: { authorization: `Bearer ${token}` }, socket: req.socket }, deps.adminToken);
    if (!d.ok) throw new ApiError(401, 401, 'wrong admin token');
    return;
  }
  const d = checkAdminAuth(req, undefined, deps.isTrustedProxy);
  if (!d.ok) throw new ApiError(d.status, d.status, d.message);
  if (fromBrowser(req) && !loopbackHostHeader(req)) throw new ApiError(403, 403, 'sign in through a loopback address (http://127.0.0.1:PORT/ui/ or http://localhost:PORT/ui/)');
}
