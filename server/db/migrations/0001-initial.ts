// First migration: agents, logs, metrics, server_settings (DESIGN.md section 4).
//
// Migrations take `Kysely<any>` on purpose (kysely's advice): a migration is frozen in
// time and must not follow later changes of the `Database` interface.
// Types are chosen to read the same on SQLite and PostgreSQL: seq-like counters are
// `bigint` (at 50k entries/s a 32-bit seq would run out within a day), timestamps `text`.
import { sql, type Kysely, type Migration } from 'kysely';

export const initial: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('agents')
      .addColumn('host_id', 'text', (c) => c.primaryKey())
      .addColumn('hostname', 'text', (c) => c.notNull())
      .addColumn('agent_version', 'text')
      .addColumn('platform_json', 'text')
      .addColumn('capabilities_json', 'text')
      .addColumn('token_hash', 'text')
      .addColumn('token_hash_prev', 'text')
      .addColumn('token_rotated_at', 'text')
      .addColumn('connection_state', 'text', (c) =>
        c
          .notNull()
          .defaultTo('NeverConnected')
          .check(
            sql`connection_state in ('NeverConnected', 'Active', 'Disconnected', 'Revoked')`,
          ),
      )
      .addColumn('session_id', 'text')
      .addColumn('accepted_seq', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('first_seen', 'text')
      .addColumn('last_handshake', 'text')
      .addColumn('last_seen', 'text')
      .addColumn('last_disconnect', 'text')
      .addColumn('last_disconnect_reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('control_rev', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('agent_config_json', 'text')
      .addColumn('config_apply_after', 'text')
      .addColumn('config_version', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('rotate_requested_at', 'text')
      .addColumn('rotation_grace_secs', 'integer')
      .addColumn('token_rotation_grace_until', 'text')
      .addColumn('decommission_requested_at', 'text')
      .addColumn('decommission_drain_secs', 'integer')
      .execute();
    // Servers poll `control_rev > last seen` to pick up admin changes made by any process.
    await db.schema
      .createIndex('agents_control_rev_idx')
      .on('agents')
      .column('control_rev')
      .execute();

    // No foreign key to agents: log rows outlive a deleted agent row (they are the
    // record), and the hot path checks the host itself (-32004) in its transaction.
    await db.schema
      .createTable('logs')
      .addColumn('host_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('ts', 'text', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addColumn('severity', 'text', (c) => c.notNull())
      .addColumn('facility', 'text')
      .addColumn('app_name', 'text')
      .addColumn('process_id', 'text')
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('metadata_json', 'text')
      // The idempotency key of the ingest path; its index also serves `agent tail`
      // (ORDER BY seq DESC LIMIT n) and `--follow` (seq > n).
      .addUniqueConstraint('logs_host_id_seq_unique', ['host_id', 'seq'])
      .execute();
    // Time-range reads and retention by agent time.
    await db.schema.createIndex('logs_host_id_ts_idx').on('logs').columns(['host_id', 'ts']).execute();

    await db.schema
      .createTable('metrics')
      .addColumn('host_id', 'text', (c) => c.notNull())
      .addColumn('ts', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('value', 'double precision', (c) => c.notNull())
      .addColumn('labels_json', 'text')
      .execute();
    await db.schema
      .createIndex('metrics_host_id_ts_idx')
      .on('metrics')
      .columns(['host_id', 'ts'])
      .execute();

    await db.schema
      .createTable('server_settings')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value_json', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },

  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('server_settings').execute();
    await db.schema.dropTable('metrics').execute();
    await db.schema.dropTable('logs').execute();
    await db.schema.dropTable('agents').execute();
  },
};
