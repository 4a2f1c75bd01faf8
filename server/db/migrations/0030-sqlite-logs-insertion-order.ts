// SQLite: the `(received_at)` index of logs goes (DECISIONS P5b). Its rows are appended by
// one writer in commit order, each commit's received_at taken when it was queued, so the
// rowid already orders them by server receive time; retention (server/control/retention.ts)
// reads the oldest rows by rowid instead, and the ingest path no longer pays for a fourth
// b-tree on every row. PostgreSQL keeps its index (logs is partitioned by received_at and
// has no rowid).
import { sql, type Kysely, type Migration } from 'kysely';
import { isPostgres } from './dialect-of.js';

export const sqliteLogsInsertionOrder: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (isPostgres(db)) return;
    await sql`drop index if exists logs_received_at_idx`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    if (isPostgres(db)) return;
    await db.schema.createIndex('logs_received_at_idx').ifNotExists().on('logs').column('received_at').execute();
  },
};
