// Console sessions ended by sign-out (DECISIONS J14). Sessions stay stateless (J4: an HMAC
// cookie every server on the database accepts), but a signed-out session's nonce is written
// here until the cookie would have expired, and every server refuses a cookie whose nonce is
// listed (a primary-key lookup per cookie request), so a copy of the cookie ends with the
// sign-out on every server, not 12 h later. expires_at is the cookie's own expiry (RFC 3339,
// UTC, milliseconds, as every time in this schema); rows past it are purged.
import type { Kysely, Migration } from 'kysely';

export const endedSessions: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('ended_sessions')
      .addColumn('nonce', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('ended_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('ended_sessions_expires_at_idx').on('ended_sessions').column('expires_at').execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('ended_sessions').execute();
  },
};
