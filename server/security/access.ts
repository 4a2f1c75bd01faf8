// Who may use the admin API and /metrics (DECISIONS H6). The one place that decides it;
// server/admin.ts and server/server.ts call `adminAccess` / `metricsAccess`.
//
// With an admin token configured: `Authorization: Bearer <token>`, from anywhere.
// Without one: only a loopback peer, and only when the request was not forwarded by a
// proxy. Any forwarding header (X-Forwarded-For, Forwarded, X-Real-IP, X-Forwarded-Host,
// X-Client-IP, True-Client-IP, ...) means "forwarded", unless the peer is a configured
// trusted proxy and X-Forwarded-For says the original client is loopback as well.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { adminActor } from './audit.js';

/** Headers by which a proxy says it forwarded a request (lowercase). */
export const FORWARDING_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-server',
  'x-real-ip',
  'x-client-ip',
  'x-cluster-client-ip',
  'true-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
  'x-originating-ip',
  'via',
] as const;

export interface AccessRequest {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string | undefined };
}

export interface AccessOptions {
  adminToken: string | undefined;
  /** Is this address a configured trusted proxy? */
  isTrustedProxy?: (address: string) => boolean;
}

export type AccessDecision =
  | { ok: true; /** For the audit trail: "admin-token:<hash prefix>" or "loopback". */ actor: string }
  | { ok: false; status: 401 | 403; message: string };

export function isLoopbackAddress(address: string): boolean {
  const a = address.replace(/^::ffff:/i, '');
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a);
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const h = headers['authorization'];
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m === null ? undefined : (m[1] as string);
}

/** The forwarding headers present on the request (names, lowercase). */
export function forwardingHeaders(headers: IncomingHttpHeaders): string[] {
  return FORWARDING_HEADERS.filter((h) => headers[h] !== undefined);
}

/** True when the request comes from loopback and nothing says it was forwarded from elsewhere. */
export function isLocalRequest(req: AccessRequest, isTrustedProxy: (address: string) => boolean = () => false): boolean {
  const peer = req.socket.remoteAddress ?? '';
  if (!isLoopbackAddress(peer)) return false;
  const present = forwardingHeaders(req.headers);
  if (present.length === 0) return true;
  // A trusted proxy may vouch for a loopback client, through X-Forwarded-For alone.
  if (!isTrustedProxy(peer) || present.some((h) => h !== 'x-forwarded-for' && h !== 'x-forwarded-proto')) return false;
  const xff = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(xff) ? xff.join(',') : (xff ?? '')).split(',').map((s) => s.trim()).filter((s) => s !== '');
  return hops.length > 0 && hops.every(isLoopbackAddress);
}

/** The admin API's access rule. */
export function adminAccess(req: AccessRequest, o: AccessOptions): AccessDecision {
  if (o.adminToken !== undefined && o.adminToken !== '') {
    const t = bearer(req.headers);
    // Compare digests in constant time (equal lengths whatever was sent).
    if (t === undefined || !timingSafeEqual(digest(t), digest(o.adminToken))) {
      return { ok: false, status: 401, message: 'admin API: send Authorization: Bearer <admin token>' };
    }
    return { ok: true, actor: adminActor(o.adminToken) };
  }
  if (!isLocalRequest(req, o.isTrustedProxy)) {
    return {
      ok: false,
      status: 403,
      message: 'admin API without an admin token is served only to loopback clients whose request was not forwarded by a proxy; configure --admin-token to use it remotely',
    };
  }
  return { ok: true, actor: 'loopback' };
}

/** GET /metrics: public with --metrics-public; else a local request (as above) or the admin token. */
export function metricsAccess(req: AccessRequest, o: AccessOptions & { metricsPublic: boolean }): AccessDecision {
  if (o.metricsPublic) return { ok: true, actor: 'public' };
  if (isLocalRequest(req, o.isTrustedProxy)) return { ok: true, actor: 'loopback' };
  const t = bearer(req.headers);
  if (o.adminToken !== undefined && o.adminToken !== '' && t !== undefined && timingSafeEqual(digest(t), digest(o.adminToken))) return { ok: true, actor: 'admin-token' };
  return { ok: false, status: 403, message: '/metrics is served to local requests and admin-token holders; start the server with --metrics-public to open it' };
}
