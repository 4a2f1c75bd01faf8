// The console's only way to the server: the admin API beside its ui/ folder (apiUrl), with the
// session cookie (same origin) and the session's CSRF token on state-changing requests. No
// secret ever goes into a URL.

export interface ApiErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
  }
}

export interface SessionState {
  authenticated: boolean;
  mode: 'token' | 'loopback';
  via?: 'bearer' | 'cookie' | 'loopback' | 'none';
  csrf_token?: string;
}

let csrfToken: string | undefined;
const unauthorizedListeners = new Set<() => void>();

/** Called when the server answers 401 (session expired or signed out elsewhere). */
export function onUnauthorized(fn: () => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

export function setCsrf(token: string | undefined): void {
  csrfToken = token;
}

export interface Reply<T> {
  body: T;
  headers: Headers;
}

/**
 * An admin API path ('/admin/...') as a URL relative to the console's own location (its /ui/
 * folder's parent), so that the console works behind a reverse proxy that serves the server
 * under a path prefix (https://example.com/cortex/ui/ → https://example.com/cortex/admin/...).
 */
export function apiUrl(path: string): string {
  return new URL(path.replace(/^\//, ''), new URL('../', document.baseURI)).toString();
}

/**
 * A change refused 403 because the page's session is not the one its cookie holds now, or it
 * has none this server knows (data.reason, server/admin/access.ts): another tab or another
 * server on this machine replaced the cookie, or the server restarted (loopback mode). The
 * page reads the session it holds now (GET /admin/session), or starts one where the server
 * allows it without a token (loopback mode), and tries the change once more with its CSRF
 * token. With an admin token and no session left, the sign-in page shows (onUnauthorized).
 */
const MENDABLE = new Set(['csrf_mismatch', 'session_required']);

async function renewSession(): Promise<boolean> {
  let s = await request<SessionState>('GET', '/admin/session', undefined, {}, false).then((r) => r.body);
  if (s.mode === 'loopback' && s.via !== 'cookie') s = await request<SessionState>('POST', '/admin/session', {}, {}, false).then((r) => r.body);
  if (!s.authenticated || s.csrf_token === undefined) {
    for (const fn of unauthorizedListeners) fn();
    return false;
  }
  setCsrf(s.csrf_token);
  return true;
}

export async function request<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, extra: Record<string, string> = {}, mend = true): Promise<Reply<T>> {
  try {
    return await send<T>(method, path, body, extra);
  } catch (error) {
    const reason = error instanceof ApiError && error.status === 403 ? (error.body.data as { reason?: unknown } | undefined)?.reason : undefined;
    if (!mend || method === 'GET' || path.startsWith('/admin/session') || typeof reason !== 'string' || !MENDABLE.has(reason)) throw error;
    if (!(await renewSession().catch(() => false))) throw error;
    return send<T>(method, path, body, extra);
  }
}

async function send<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body: unknown, extra: Record<string, string>): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...extra, Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== undefined) headers['X-CSRF-Token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(apiUrl(path), { method, headers, credentials: 'same-origin', cache: 'no-store', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (error) {
    throw new ApiError(0, { code: 0, message: `the server did not answer (${(error as Error).message}); is it running?` });
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? null : (JSON.parse(text) as unknown);
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const err = (parsed as { error?: ApiErrorBody } | null)?.error;
    if (res.status === 401 && !path.startsWith('/admin/session')) for (const fn of unauthorizedListeners) fn();
    throw new ApiError(res.status, err ?? { code: res.status, message: `HTTP ${res.status}` });
  }
  return { body: parsed as T, headers: res.headers };
}

export const get = <T>(path: string): Promise<T> => request<T>('GET', path).then((r) => r.body);
export const post = <T>(path: string, body?: unknown): Promise<T> => request<T>('POST', path, body).then((r) => r.body);
export const put = <T>(path: string, body: unknown): Promise<T> => request<T>('PUT', path, body).then((r) => r.body);
export const del = <T>(path: string): Promise<T> => request<T>('DELETE', path).then((r) => r.body);

export function qs(params: Record<string, string | number | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s === '' ? '' : `?${s}`;
}

// ---- shapes of the answers the console reads (server/admin/openapi.json) ----

export type ConnectionState = 'NeverConnected' | 'Active' | 'Disconnected' | 'Revoked';

export interface Agent {
  host_id: string;
  hostname: string;
  agent_version: string | null;
  platform_json: string | null;
  capabilities_json: string | null;
  connection_state: ConnectionState;
  session_id: string | null;
  accepted_seq: number;
  first_seen: string | null;
  last_handshake: string | null;
  last_seen: string | null;
  last_disconnect: string | null;
  last_disconnect_reason: string | null;
  created_at: string;
  config_version: number;
  rotate_requested_at: string | null;
  decommission_requested_at: string | null;
  connected_here: boolean;
  server_id?: string | null;
  buffer: { queue_depth: number; buffer_bytes: number; at: string } | null;
}

export interface AgentDetail extends Agent {
  platform: { os?: string; arch?: string; kernel?: string; distro?: string | null } | null;
  capabilities: { supported_probes?: string[]; sources?: string[]; max_batch_entries?: number; compression?: string[] } | null;
}

export interface FleetSummary {
  total: number;
  by_state: Record<ConnectionState, number>;
  server_time: string;
}

export interface LogRow {
  host_id: string;
  seq: number;
  ts: string;
  received_at: string;
  severity: string;
  facility: string | null;
  app_name: string | null;
  process_id: string | null;
  message: string;
  source: string;
  metadata: unknown;
}

/** POST /admin/agents and POST /admin/agents/{id}/token (DECISIONS I33). */
export interface IssuedToken {
  host_id: string;
  hostname: string;
  /** The one-time enrollment token: shown once, kept only in the page's memory. */
  token: string;
  server_url: string;
  /** The enroll command with `--token -`: enroll asks for the token (not shown) or reads it from stdin. Show this one first. */
  enroll_command_stdin: string;
  /** The same command with the token in its arguments (`--token TOKEN`: visible in ps, kept in the shell history). */
  enroll_command: string;
}

export interface ProbeInfo {
  name: string;
  summary: string;
  args_schema: JsonSchema;
  output_schema: JsonSchema;
}

export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  items?: JsonSchema;
  default?: unknown;
}

export interface ConfigView {
  host_id: string;
  stored: unknown;
  effective: unknown;
  source: 'host' | 'group' | 'default' | 'default_until_apply_after';
  group?: string | null;
  apply_after: string | null;
  config_version: number;
  max_batch_entries_cap: number;
}

/**
 * The version a config answer names, as If-Match takes it back (DECISIONS J13): its ETag
 * header, else its config_version quoted (the same text).
 */
export function configTag(reply: Reply<{ config_version: number }>): string {
  return reply.headers.get('ETag') ?? `"${reply.body.config_version}"`;
}
