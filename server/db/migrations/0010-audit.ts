// The audit trail (issue 18, DECISIONS H9): one row per admin action, from the CLI or the
// admin API. Text id (a UUID) rather than an autoincrement key, so the same schema-builder
// calls give the same table on SQLite and PostgreSQL.
import type { Kysely, Migration } from 'kysely';

export const audit: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('audit')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('host_id', 'text')
      .addColumn('detail_json', 'text')
      .execute();
    await db.schema.createIndex('audit_at_idx').on('audit').column('at').execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('audit').execute();
  },
};
