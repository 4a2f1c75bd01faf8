// Indexes for the retention purge (server/control/retention.ts): it deletes the oldest
// rows by server receive time (logs) and by sample time (metrics) in small batches, and
// each batch must find its boundary without scanning the table.
import type { Kysely, Migration } from 'kysely';

export const retentionIndexes: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.createIndex('logs_received_at_idx').on('logs').column('received_at').execute();
    await db.schema.createIndex('metrics_ts_idx').on('metrics').column('ts').execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex('metrics_ts_idx').execute();
    await db.schema.dropIndex('logs_received_at_idx').execute();
  },
};
