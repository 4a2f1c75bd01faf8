// Metrics get the server's receive time (DECISIONS G38). Retention aged metric rows by their
// sample time `ts`, which is the agent's clock: a host whose clock was years behind (a board
// without a battery-backed clock before NTP) had its samples deleted by the next retention
// pass, and one years ahead kept them past every age cutoff and behind every other row under
// the size cap. Now each row stores `received_at` (the same clock as logs.received_at) and
// retention reads it. Rows stored before this migration have none (NULL; no rewrite of a
// large table at start): retention keeps aging those by `ts`, through a partial index of
// them that replaces 0002's `(ts)` index (nothing else read it).
import { sql, type Kysely, type Migration } from 'kysely';

export const metricsReceivedAt: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('metrics').addColumn('received_at', 'text').execute();
    await db.schema.createIndex('metrics_received_at_idx').on('metrics').column('received_at').execute();
    await db.schema.dropIndex('metrics_ts_idx').execute();
    await db.schema.createIndex('metrics_legacy_ts_idx').on('metrics').column('ts').where(sql.ref('received_at'), 'is', null).execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex('metrics_legacy_ts_idx').execute();
    await db.schema.createIndex('metrics_ts_idx').on('metrics').column('ts').execute();
    await db.schema.dropIndex('metrics_received_at_idx').execute();
    await db.schema.alterTable('metrics').dropColumn('received_at').execute();
  },
};
