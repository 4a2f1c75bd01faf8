// The tables of migrations 0010 and 0011, typed for kysely without touching the shared
// `Database` interface (server/db/schema.ts): `withTrustTables(db)` is `db` that also
// knows them.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export type AuditTable = {
  /** UUID. */
  id: string;
  /** RFC 3339 UTC with milliseconds. */
  at: string;
  /** Who: "admin-token:<first 12 hex of the token's hash>", "loopback" (admin API without a token), "cli:<os user>". */
  actor: string;
  /** What: "agent.issue", "agent.revoke", "agent.reset-seq", "probe", ... */
  action: string;
  host_id: string | null;
  /** Action details as JSON text (never a token). */
  detail_json: string | null;
};

export type EnrollmentTokensTable = {
  host_id: string;
  issued_at: string;
  expires_at: string;
};

export type TrustTables = {
  audit: AuditTable;
  enrollment_tokens: EnrollmentTokensTable;
};

export type TrustDb = Kysely<Database & TrustTables>;

export function withTrustTables(db: Kysely<Database>): TrustDb {
  return db.withTables<TrustTables>();
}
