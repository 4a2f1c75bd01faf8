// The admin API's side of the audit trail (DECISIONS H9; the table and recordAudit are
// server/security/audit.ts): who an authorized request is, and the action names the routes
// record — the names the CLI commands use, so `cortex-server audit` reads the same for both.
import { adminActor, recordAudit } from '../security/audit.js';
import type { RouteContext } from './context.js';

/**
 * Audit action names by "METHOD path"; a state-changing route not listed is recorded as its
 * "METHOD path". Each route writes its row through ctx.audit once it did what it was asked,
 * before it answers (before: handleAdmin wrote it before the route ran, so a revoke of an
 * unknown host, a 400 for a bad body or a malformed path all read as actions taken, the
 * path's raw text stored whole as host_id).
 */
export const AUDIT_ACTIONS: Readonly<Record<string, string>> = {
  'POST /admin/agents': 'agent.issue',
  'POST /admin/agents/{host_id}/token': 'agent.reissue',
  'POST /admin/agents/{host_id}/revoke': 'agent.revoke',
  'POST /admin/agents/{host_id}/rotate': 'agent.rotate',
  'POST /admin/agents/{host_id}/decommission': 'agent.decommission',
  'PUT /admin/agents/{host_id}/config': 'agent.config.set',
  'DELETE /admin/agents/{host_id}/config': 'agent.config.clear',
  'PUT /admin/agents/{host_id}/group': 'agent.group',
  'POST /admin/agents/{host_id}/probe': 'probe',
};

/** The actor of an authorized request: the admin token by hash prefix (a console session of it), or loopback. Never a secret. */
export function auditActor(via: RouteContext['via'], adminToken: string | undefined): string {
  if (via === 'loopback' || via === 'none') return 'loopback';
  const token = adminToken === '' ? undefined : adminToken;
  return `${adminActor(token)}${via === 'cookie' ? ' (console)' : ''}`;
}

/** Writes one audit row for a request; a failed write is logged, the action is not undone. */
export async function auditRequest(ctx: Pick<RouteContext, 'deps' | 'via'>, action: string, host_id: string | undefined, detail: Record<string, unknown> = {}): Promise<void> {
  await recordAudit(
    ctx.deps.storage.db,
    { actor: auditActor(ctx.via, ctx.deps.adminToken), action, ...(host_id !== undefined ? { host_id } : {}), detail: { via: 'admin-api', ...detail } },
    (error) => ctx.deps.logger?.error({ err: error instanceof Error ? error.message : String(error), action }, 'audit row not written'),
  );
}
