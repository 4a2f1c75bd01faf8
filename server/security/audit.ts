// The audit trail: every admin action, whoever took it (DECISIONS H9). `recordAudit` is the
// one function the CLI and the admin API call; it never throws (an audit write that fails
// is logged by the caller's logger if given, and the action itself is not undone).
import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import type { Kysely } from 'kysely';
import { hashToken } from '../auth/tokens.js';
import type { Database } from '../db/schema.js';
import { withTrustTables } from './tables.js';

export interface AuditEntry {
  actor: string;
  action: string;
  host_id?: string | null;
  /** Anything that says what was done (limits, durations, results). Never a token. */
  detail?: Record<string, unknown>;
}

export interface AuditRow {
  id: string;
  at: string;
  actor: string;
  action: string;
  host_id: string | null;
  detail: Record<string, unknown> | null;
}

/** The actor name of an admin API call: which admin token (by hash prefix, never the token) or loopback. */
export function adminActor(token: string | undefined): string {
  return token === undefined ? 'loopback' : `admin-token:${hashToken(token).slice(0, 12)}`;
}

/** The actor name of a CLI command run on the server host. */
export function cliActor(): string {
  let user = process.env['USER'] ?? '';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (containers): keep $USER
  }
  return `cli:${user || String(process.getuid?.() ?? 'unknown')}`;
}

/** Writes one audit row. Returns false (and reports through onError) when it could not. */
export async function recordAudit(db: Kysely<Database>, entry: AuditEntry, onError?: (error: unknown) => void): Promise<boolean> {
  try {
    await withTrustTables(db)
      .insertInto('audit')
      .values({
        id: randomUUID(),
        at: new Date().toISOString(),
        actor: entry.actor,
        action: entry.action,
        host_id: entry.host_id ?? null,
        detail_json: entry.detail === undefined ? null : JSON.stringify(entry.detail),
      })
      .execute();
    return true;
  } catch (error) {
    onError?.(error);
    return false;
  }
}

/** Deletes up to `limit` of the oldest audit rows written before `cutoff` (retention: DECISIONS H36). Returns how many. */
export async function deleteAuditBefore(db: Kysely<Database>, cutoff: string, limit: number): Promise<number> {
  const t = withTrustTables(db);
  const oldest = t.selectFrom('audit').select('id').where('at', '<', cutoff).orderBy('at').limit(limit);
  const r = await t.deleteFrom('audit').where('id', 'in', oldest).executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** The most recent `limit` audit rows, oldest first. */
export async function listAudit(db: Kysely<Database>, options: { limit?: number; host_id?: string } = {}): Promise<AuditRow[]> {
  let q = withTrustTables(db).selectFrom('audit').selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(options.limit ?? 100);
  if (options.host_id !== undefined) q = q.where('host_id', '=', options.host_id.toLowerCase());
  const rows = await q.execute();
  return rows.reverse().map((r) => ({
    id: r.id,
    at: r.at,
    actor: r.actor,
    action: r.action,
    host_id: r.host_id,
    detail: r.detail_json === null ? null : (JSON.parse(r.detail_json) as Record<string, unknown>),
  }));
}
