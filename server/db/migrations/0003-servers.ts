// Several servers on one database (DESIGN.md section 4 addendum, DECISIONS G):
//   servers          one row per running `serve` process: its lease (renewed every few
//                    seconds; a server whose lease expired is dead) and its per-server
//                    settings
//   agents.server_id the server holding the host's live session (NULL when none)
//   probe_requests   probes forwarded to the server holding the session, and their answers
// On PostgreSQL a trigger also NOTIFYs channel `cortex_control` (payload: host_id) on every
// change of agents.control_rev, so the watcher of the server holding the session acts at
// once instead of at its next poll. The notification is sent at commit.
import { sql, type Kysely, type Migration } from 'kysely';
import { isPostgres } from './dialect-of.js';

export const servers: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('servers')
      .addColumn('server_id', 'text', (c) => c.primaryKey())
      .addColumn('url', 'text')
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'text', (c) => c.notNull())
      .addColumn('settings_json', 'text')
      .execute();
    await db.schema.alterTable('agents').addColumn('server_id', 'text').execute();
    await db.schema.createIndex('agents_server_id_idx').on('agents').column('server_id').execute();

    await db.schema
      .createTable('probe_requests')
      .addColumn('request_id', 'text', (c) => c.primaryKey())
      .addColumn('origin_server', 'text', (c) => c.notNull())
      .addColumn('target_server', 'text', (c) => c.notNull())
      .addColumn('host_id', 'text', (c) => c.notNull())
      .addColumn('probe', 'text', (c) => c.notNull())
      .addColumn('args_json', 'text', (c) => c.notNull())
      .addColumn('timeout_ms', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) =>
        c.notNull().defaultTo('pending').check(sql`state in ('pending', 'taken', 'done')`),
      )
      .addColumn('http_status', 'integer')
      .addColumn('answer_json', 'text')
      .execute();
    await db.schema
      .createIndex('probe_requests_target_idx')
      .on('probe_requests')
      .columns(['target_server', 'state'])
      .execute();

    if (isPostgres(db)) {
      await sql`
        create function cortex_notify_control() returns trigger language plpgsql as $$
        begin
          perform pg_notify('cortex_control', new.host_id);
          return null;
        end $$`.execute(db);
      await sql`
        create trigger agents_control_notify
        after insert or update of control_rev on agents
        for each row execute function cortex_notify_control()`.execute(db);
    }
  },

  async down(db: Kysely<any>): Promise<void> {
    if (isPostgres(db)) {
      await sql`drop trigger if exists agents_control_notify on agents`.execute(db);
      await sql`drop function if exists cortex_notify_control()`.execute(db);
    }
    await db.schema.dropTable('probe_requests').execute();
    await db.schema.dropIndex('agents_server_id_idx').execute();
    await db.schema.alterTable('agents').dropColumn('server_id').execute();
    await db.schema.dropTable('servers').execute();
  },
};
