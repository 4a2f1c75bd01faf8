// Console sessions ended by sign-out (migration 0033, DECISIONS J14). Sessions are stateless
// HMAC cookies (J4); this table only lists the nonces of those signed out before their expiry,
// so every server on the database refuses a copy of a signed-out cookie. Typed here without
// touching the shared `Database` interface (as server/security/tables.ts does).
import type { Kysely } from 'kysely';
import { runCached } from './cached-query.js';
import type { Database } from './schema.js';

export interface EndedSessionsTable {
  /** The session's nonce (the cookie's `n`; not a secret: the cookie is its HMAC). */
  nonce: string;
  /** When the cookie expires anyway (RFC 3339 UTC with milliseconds). */
  expires_at: string;
  /** When it was signed out. */
  ended_at: string;
}

type SessionTables = { ended_sessions: EndedSessionsTable };

function withSessionTables(db: Kysely<Database>): Kysely<Database & SessionTables> {
  return db.withTables<SessionTables>();
}

/**
 * How long a row is kept past its cookie's expiry before it is purged. A server checks a
 * cookie's expiry by its own clock: one whose clock runs behind the purging server's would
 * take a purged, signed-out cookie as live for the difference. A day covers any clock a
 * server may run with (G31 warns far sooner).
 */
export const ENDED_SESSION_KEEP_MS = 24 * 3600 * 1000;

/** Rows deleted at most by one purge of endSession (the retention pass purges in batches of its own). */
const PURGE_ON_SIGN_OUT = 100;

/**
 * Ends a session for every server on the database: its nonce is listed until `expires_at`
 * (then the cookie is refused for its expiry anyway). Idempotent. Also purges up to 100 rows
 * of sessions long expired, so the table stays small even where no retention pass runs.
 */
export async function endSession(db: Kysely<Database>, nonce: string, expires_at: string, now: Date): Promise<void> {
  await withSessionTables(db)
    .insertInto('ended_sessions')
    .values({ nonce, expires_at, ended_at: now.toISOString() })
    .onConflict((oc) => oc.column('nonce').doNothing())
    .execute();
  await deleteEndedSessionsBefore(db, endedSessionsCutoff(now), PURGE_ON_SIGN_OUT);
}

/** Whether a session was signed out (one primary-key lookup, compiled once). */
export async function isSessionEnded(db: Kysely<Database>, nonce: string): Promise<boolean> {
  const result = await runCached(withSessionTables(db), 'isSessionEnded', { nonce }, (d, v) =>
    d.selectFrom('ended_sessions').select('nonce').where('nonce', '=', v.nonce as string),
  );
  return result.rows.length > 0;
}

/** The purge cutoff at `now`: rows whose cookie expired before it may go (see ENDED_SESSION_KEEP_MS). */
export function endedSessionsCutoff(now: Date): string {
  return new Date(now.getTime() - ENDED_SESSION_KEEP_MS).toISOString();
}

/**
 * Deletes up to `limit` rows of sessions whose cookie expired before `cutoff` (give
 * endedSessionsCutoff(now)), oldest first. Returns how many. For the retention pass too.
 */
export async function deleteEndedSessionsBefore(db: Kysely<Database>, cutoff: string, limit: number): Promise<number> {
  const t = withSessionTables(db);
  const oldest = t.selectFrom('ended_sessions').select('nonce').where('expires_at', '<', cutoff).orderBy('expires_at').limit(limit);
  const r = await t.deleteFrom('ended_sessions').where('nonce', 'in', oldest).executeTakeFirst();
  return Number(r.numDeletedRows);
}
