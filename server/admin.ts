// The admin HTTP API (DESIGN.md section 3), on the server's own port:
//   GET  /admin/agents                    → JSON array of agents (no token hashes)
//   POST /admin/agents/{host_id}/probe    → the agent's ProbeOutput, or {"error": {...}}
// Auth: with an admin token configured, `Authorization: Bearer <token>` (401 without it);
// without one, only loopback peers that send no X-Forwarded-For / Forwarded header (403
// otherwise), so the API is never open through a reverse proxy.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidParamsError, toIssues, describeIssues, validateProbeRequestParams, type RpcError } from '@cortex/agent-protocol';
import { listAgents, type AgentSummary } from './db/agents.repository.js';
import type { Storage } from './db/storage.js';
import { ProbeFailure, type ProbeRouter } from './control/probes.js';
import { adminAccess } from './security/access.js';
import { recordAudit } from './security/audit.js';

/** Default timeout_ms when a probe body leaves it out. */
export const DEFAULT_PROBE_TIMEOUT_MS = 10_000;
/** Largest admin request body. */
const MAX_BODY_BYTES = 1_048_576;

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

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function sendRpcError(res: ServerResponse, status: number, error: RpcError): void {
  send(res, status, { error: error.toJSON() });
}

function badBody(res: ServerResponse, reason: string, errors?: unknown[]): void {
  sendRpcError(res, 400, new InvalidParamsError({ reason, ...(errors ? { errors } : {}) } as never, 'InvalidParams'));
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function agentView(a: AgentSummary): Record<string, unknown> {
  return { ...a, accepted_seq: Number(a.accepted_seq), control_rev: Number(a.control_rev), config_version: Number(a.config_version) };
}

export interface AdminDeps {
  storage: Storage;
  router: ProbeRouter;
  adminToken: string | undefined;
  /** Hosts with a session on this server. */
  connectedHere(host_id: string): boolean;
  /** Configured trusted proxies (they may vouch for a loopback client; DECISIONS H6). */
  isTrustedProxy?: (address: string) => boolean;
}

/** Handles /admin/*; returns false when the path is not an admin path. */
export async function handleAdmin(req: IncomingMessage, res: ServerResponse, path: string, deps: AdminDeps): Promise<boolean> {
  if (path !== '/admin' && !path.startsWith('/admin/')) return false;
  const auth = adminAccess(req, { adminToken: deps.adminToken, ...(deps.isTrustedProxy !== undefined ? { isTrustedProxy: deps.isTrustedProxy } : {}) });
  if (!auth.ok) {
    send(res, auth.status, { error: { code: auth.status, message: auth.message } }, auth.status === 401 ? { 'WWW-Authenticate': 'Bearer realm="cortex-admin"' } : {});
    return true;
  }
  if (path === '/admin/agents') {
    if (req.method !== 'GET') {
      send(res, 405, { error: { code: 405, message: 'use GET /admin/agents' } }, { Allow: 'GET' });
      return true;
    }
    const agents = await listAgents(deps.storage.db);
    send(res, 200, agents.map((a) => ({ ...agentView(a), connected_here: deps.connectedHere(a.host_id) })));
    return true;
  }
  const m = /^\/admin\/agents\/([^/]+)\/probe$/.exec(path);
  if (m === null) {
    send(res, 404, { error: { code: 404, message: `no such admin endpoint: ${req.method} ${path} (see GET /admin/agents, POST /admin/agents/{host_id}/probe)` } });
    return true;
  }
  if (req.method !== 'POST') {
    send(res, 405, { error: { code: 405, message: 'use POST with a JSON body {"probe", "args", "timeout_ms"}' } }, { Allow: 'POST' });
    return true;
  }
  let host_id: string;
  try {
    host_id = decodeURIComponent(m[1] as string);
  } catch {
    send(res, 400, { error: { code: 400, message: `the host_id in ${path} is not valid percent-encoding; send the host_id as printed by GET /admin/agents` } });
    return true;
  }
  const text = await readBody(req);
  if (text === undefined) {
    badBody(res, `request body larger than ${MAX_BODY_BYTES} bytes`);
    return true;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    badBody(res, `body is not valid JSON (${(error as Error).message}); send {"probe": "name", "args": {...}, "timeout_ms": 5000}`);
    return true;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    badBody(res, 'body must be a JSON object {"probe", "args", "timeout_ms"}');
    return true;
  }
  const b = body as Record<string, unknown>;
  const params = { ...b, args: 'args' in b ? b['args'] : {}, timeout_ms: 'timeout_ms' in b ? b['timeout_ms'] : DEFAULT_PROBE_TIMEOUT_MS };
  if (!validateProbeRequestParams(params)) {
    const issues = toIssues(validateProbeRequestParams.errors);
    badBody(res, `invalid probe request: ${describeIssues(issues)}`, issues.slice(0, 20));
    return true;
  }
  try {
    void recordAudit(deps.storage.db, { actor: auth.actor, action: 'probe', host_id, detail: { probe: params.probe, timeout_ms: params.timeout_ms } });
    const output = await deps.router.invoke(host_id, params.probe, params.args, params.timeout_ms);
    send(res, 200, output);
  } catch (error) {
    if (error instanceof ProbeFailure) sendRpcError(res, error.status, error.rpc);
    else throw error;
  }
  return true;
}
