// Console sessions: POST /admin/session exchanges the admin token (in the body) for an
// HttpOnly, SameSite=Strict cookie; state-changing requests of a cookie session carry the
// session's CSRF token in X-CSRF-Token.
//
// Sessions are stateless: the cookie is `payload.mac` with payload = {exp, n (a random
// nonce)} and mac = HMAC-SHA256 under a key derived from the admin token, so every server
// sharing that token accepts it, and changing the token signs every console out. The CSRF
// token is HMAC(key, "csrf." + n): bound to the session, useless without its cookie.
// Without an admin token the key is random per process (loopback mode).
//
// Sign-out (DELETE /admin/session) ends a session on the server too (DECISIONS J14): its
// nonce is listed in the database (ended_sessions, ../db/sessions.repository.ts) until the
// cookie expires, and ./access.ts refuses a listed session on every server of the database,
// so a copy of the cookie ends with the sign-out. The cookie stays stateless otherwise.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const SESSION_COOKIE = 'cortex_session';
/** How long a console session lasts. */
export const SESSION_TTL_MS = 12 * 3600 * 1000;

export interface ConsoleSession {
  nonce: string;
  expiresAt: number;
  csrfToken: string;
}

const b64 = (b: Buffer): string => b.toString('base64url');

export class SessionKeys {
  private readonly key: Buffer;

  constructor(adminToken: string | undefined) {
    this.key =
      adminToken !== undefined && adminToken !== ''
        ? createHmac('sha256', adminToken).update('cortex-console-session-v1').digest()
        : randomBytes(32);
  }

  private mac(text: string): Buffer {
    return createHmac('sha256', this.key).update(text).digest();
  }

  /** A new session: the cookie value to set and its CSRF token. */
  issue(now = Date.now()): { cookie: string; session: ConsoleSession } {
    const nonce = b64(randomBytes(18));
    const expiresAt = now + SESSION_TTL_MS;
    const payload = b64(Buffer.from(JSON.stringify({ exp: expiresAt, n: nonce })));
    return { cookie: `${payload}.${b64(this.mac(payload))}`, session: { nonce, expiresAt, csrfToken: this.csrfFor(nonce) } };
  }

  private csrfFor(nonce: string): string {
    return b64(this.mac(`csrf.${nonce}`));
  }

  /** The session of a cookie value, or undefined when forged, malformed or expired. */
  verify(value: string | undefined, now = Date.now()): ConsoleSession | undefined {
    if (value === undefined) return undefined;
    const dot = value.indexOf('.');
    if (dot <= 0) return undefined;
    const payload = value.slice(0, dot);
    const given = Buffer.from(value.slice(dot + 1), 'base64url');
    const expected = this.mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const p = parsed as { exp?: unknown; n?: unknown };
    if (typeof p.exp !== 'number' || typeof p.n !== 'string' || p.exp <= now) return undefined;
    return { nonce: p.n, expiresAt: p.exp, csrfToken: this.csrfFor(p.n) };
  }

  /** Whether the request's X-CSRF-Token is this session's (constant time). */
  csrfMatches(req: Pick<IncomingMessage, 'headers'>, session: ConsoleSession): boolean {
    const header = req.headers['x-csrf-token'];
    if (typeof header !== 'string') return false;
    const a = Buffer.from(header);
    const b = Buffer.from(session.csrfToken);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

/** The value of one cookie of the request, or undefined. */
export function readCookie(req: Pick<IncomingMessage, 'headers'>, name: string): string | undefined {
  const header = req.headers['cookie'];
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Every value of one cookie the request carries (a browser sends two of one name when two paths set it). */
export function readCookies(req: Pick<IncomingMessage, 'headers'>, name: string): string[] {
  const header = req.headers['cookie'];
  if (typeof header !== 'string') return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/**
 * The session cookie's name for a request. With an admin token it is `cortex_session`: every
 * server sharing the token accepts the session, on whatever port. Without one (loopback mode)
 * each process signs with a random key of its own, so a session is only ever good on the
 * server that started it; and browsers keep cookies per host, not per port: two servers on one
 * machine (127.0.0.1:3100 and :3101) replaced each other's cookie, and the first console's
 * next change was refused 403. So in loopback mode the name carries the port the browser asked
 * for (the Host header's): `cortex_session_3100`. A Host without a port keeps the plain name.
 */
export function sessionCookieName(req: Pick<IncomingMessage, 'headers'>, adminToken: string | undefined): string {
  if (adminToken !== undefined && adminToken !== '') return SESSION_COOKIE;
  const port = /:(\d{1,5})$/.exec(req.headers['host'] ?? '')?.[1];
  return port === undefined ? SESSION_COOKIE : `${SESSION_COOKIE}_${port}`;
}

/** A session cookie's name: cortex_session, or cortex_session_<port> (sessionCookieName). */
const ANY_SESSION_COOKIE = /^cortex_session(?:_\d{1,5})?$/;

/**
 * The session cookie, scoped to the path the console is served under: `/` directly, the
 * trusted proxy's X-Forwarded-Prefix plus `/` behind one (DECISIONS I27), so two servers
 * behind one proxy under two prefixes each keep their own sign-in. `name`: sessionCookieName.
 */
export function sessionCookie(value: string, secure: boolean, maxAgeSecs: number, prefix = '', name = SESSION_COOKIE): string {
  return `${name}=${value}; HttpOnly; SameSite=Strict; Path=${prefix}/; Max-Age=${maxAgeSecs}${secure ? '; Secure' : ''}`;
}

/**
 * Whether the request comes from a web page (a browser sends Origin on every cross-origin
 * request and on same-origin POSTs, and Sec-Fetch-Site on every request). Such a request
 * may not change state on ambient authority (a loopback address or a cookie) alone: it
 * needs a console session and its CSRF token. Scripts and the CLI send neither header and
 * keep today's rule.
 */
export function fromBrowser(req: Pick<IncomingMessage, 'headers'>): boolean {
  return req.headers['origin'] !== undefined || req.headers['sec-fetch-site'] !== undefined || hasSessionCookie(req);
}

/** The request carries a session cookie of any server (any port's name). */
function hasSessionCookie(req: Pick<IncomingMessage, 'headers'>): boolean {
  const header = req.headers['cookie'];
  return typeof header === 'string' && header.split(';').some((part) => ANY_SESSION_COOKIE.test(part.slice(0, Math.max(0, part.indexOf('='))).trim()));
}

/**
 * The Host header names this machine by a loopback name (DNS rebinding guard for the
 * loopback mode: a page of evil.example re-resolved to 127.0.0.1 sends Host: evil.example).
 */
export function loopbackHostHeader(req: Pick<IncomingMessage, 'headers'>): boolean {
  const host = (req.headers['host'] ?? '').toLowerCase().replace(/:\d+$/, '');
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
