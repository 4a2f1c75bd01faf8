// One-time enrollment tokens: expiry, listing and withdrawal (DECISIONS H8). The token's
// hash lives in agents.token_hash (NeverConnected rows); enrollment_tokens says until when
// it may enroll. Dialect-neutral kysely only.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { withTrustTables } from './tables.js';

/** Default lifetime of a one-time enrollment token: 7 days. */
export const DEFAULT_ENROLLMENT_TTL_MS = 7 * 24 * 3600 * 1000;

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "90s", "30m", "24h", "7d" → milliseconds; undefined when it is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,6})([smhd])$/.exec(text.trim());
  if (m === null) return undefined;
  const ms = Number(m[1]) * (UNITS[m[2] as string] as number);
  return ms > 0 ? ms : undefined;
}

/** Records when the token just issued for host_id stops working (replaces an earlier one). */
export async function recordEnrollmentToken(db: Kysely<Database>, host_id: string, ttlMs: number, now = new Date()): Promise<string> {
  const issued_at = now.toISOString();
  const expires_at = new Date(now.getTime() + ttlMs).toISOString();
  const id = host_id.toLowerCase();
  await withTrustTables(db)
    .insertInto('enrollment_tokens')
    .values({ host_id: id, issued_at, expires_at })
    .onConflict((oc) => oc.column('host_id').doUpdateSet({ issued_at, expires_at }))
    .execute();
  return expires_at;
}

/** When host_id's one-time token expires; undefined when none was recorded (no expiry). */
export async function enrollmentExpiresAt(db: Kysely<Database>, host_id: string): Promise<string | undefined> {
  const row = await withTrustTables(db).selectFrom('enrollment_tokens').select('expires_at').where('host_id', '=', host_id.toLowerCase()).executeTakeFirst();
  return row?.expires_at;
}

export interface UnusedToken {
  host_id: string;
  hostname: string;
  issued_at: string | null;
  expires_at: string | null;
  expired: boolean;
}

/** One-time tokens issued and not yet used (NeverConnected hosts with a token hash). */
export async function listUnusedTokens(db: Kysely<Database>, now = new Date()): Promise<UnusedToken[]> {
  const rows = await withTrustTables(db)
    .selectFrom('agents')
    .leftJoin('enrollment_tokens', 'enrollment_tokens.host_id', 'agents.host_id')
    .select(['agents.host_id', 'agents.hostname', 'agents.created_at', 'enrollment_tokens.issued_at', 'enrollment_tokens.expires_at'])
    .where('agents.connection_state', '=', 'NeverConnected')
    .where('agents.token_hash', 'is not', null)
    .orderBy('agents.created_at')
    .execute();
  const t = now.toISOString();
  return rows.map((r) => ({
    host_id: r.host_id,
    hostname: r.hostname,
    issued_at: r.issued_at ?? null,
    expires_at: r.expires_at ?? null,
    expired: r.expires_at != null && r.expires_at <= t,
  }));
}

/**
 * Withdraws host_id's unused one-time token: its hash is cleared, so a hello with it fails.
 * False when the host has no unused token (unknown, or already enrolled).
 */
export async function withdrawToken(db: Kysely<Database>, host_id: string): Promise<boolean> {
  const id = host_id.toLowerCase();
  return db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('agents')
      .set({ token_hash: null })
      .where('host_id', '=', id)
      .where('connection_state', '=', 'NeverConnected')
      .where('token_hash', 'is not', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    await withTrustTables(trx).deleteFrom('enrollment_tokens').where('host_id', '=', id).execute();
    return true;
  });
}
