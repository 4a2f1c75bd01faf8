// What every admin route handler gets.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Storage } from '../db/storage.js';
import type { ProbeRouter } from '../control/probes.js';
import type { Logger } from '../log.js';
import type { ServerSettings } from '../settings.js';
import type { Query } from './http.js';
import type { ConsoleSession } from './session.js';

export interface AdminDeps {
  storage: Storage;
  router: ProbeRouter;
  adminToken: string | undefined;
  /**
   * The admin token now, for a request that outlasts its authorization (the live tail checks
   * on each poll that its credential still holds after SIGHUP changed the token). Absent:
   * `adminToken` stays the token.
   */
  currentAdminToken?: () => string | undefined;
  /** Hosts with a session on this server. */
  connectedHere(host_id: string): boolean;
  /** The last heartbeat's buffer figures of a host whose session this server holds. */
  heartbeatOf?(host_id: string): { queue_depth: number; buffer_bytes: number; at: string } | undefined;
  /** The running server's effective settings (GET /admin/settings, defaults of rotate/config). */
  settings?: ServerSettings;
  /** The WebSocket URL agents enroll with (default: derived from the request's Host). */
  wsUrl?: string;
  /** Served over TLS (the session cookie gets Secure). */
  tls?: boolean;
  /** Where state-changing admin requests are logged (route, host, outcome; never a body). */
  logger?: Logger;
  /** The server's version (GET /admin/settings). */
  serverVersion?: string;
  /** Configured trusted proxies (they may vouch for a loopback client; DECISIONS H6). */
  isTrustedProxy?: (address: string) => boolean;
  /** The database's time (DECISIONS G31): token expiry, staged configs, server_time. Default: this machine's clock. */
  now?: () => Date;
  /** Live tail poll interval (ms, default 200). */
  tailPollMs?: number;
  /** A live tail whose client has not read for this long is closed (ms, default 60,000; it resumes with Last-Event-ID). */
  tailStallMs?: number;
  /** Live tails this server streams at once (default MAX_LIVE_TAILS); one more is 503 with Retry-After. */
  maxLiveTails?: number;
}

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Path parameters by their OpenAPI name. */
  params: Record<string, string>;
  query: Query;
  deps: AdminDeps;
  /** How the request was authorized ('none': a public route, which decides itself). */
  via: 'bearer' | 'cookie' | 'loopback' | 'none';
  session: ConsoleSession | undefined;
  /**
   * Writes the request's audit row (DECISIONS H9) under its route's action name
   * (./audit.ts AUDIT_ACTIONS), with the host it acted on: a state-changing route calls it
   * once it has done what it was asked, before it answers, so a refused request (400, 404,
   * 409) leaves no row of an action that never happened.
   */
  audit(host_id?: string, detail?: Record<string, unknown>): Promise<void>;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Route {
  method: Method;
  /** OpenAPI path template, e.g. /admin/agents/{host_id}/probe. */
  path: string;
  /** Served without authorization (the handler decides; /admin/session). */
  public?: boolean;
  handler(ctx: RouteContext): Promise<void>;
}
