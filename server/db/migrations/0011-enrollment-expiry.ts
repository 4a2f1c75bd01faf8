// Expiry of one-time enrollment tokens (issue 18, DECISIONS H8): a row per issued,
// not yet used token. The token hash itself stays in agents.token_hash; this table only
// says until when that hash may enroll. A separate table (not a column on agents) keeps
// the agents table and its queries as they are.
import type { Kysely, Migration } from 'kysely';

export const enrollmentExpiry: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('enrollment_tokens')
      .addColumn('host_id', 'text', (c) => c.primaryKey().references('agents.host_id').onDelete('cascade'))
      .addColumn('issued_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('enrollment_tokens').execute();
  },
};
