// Operator experience (DECISIONS I): the operator's label and the agent's own hostname
// apart, config groups, and the host's own config kept apart from the effective one.
//
// agents.hostname stays the name given at `agent issue --host` (the operator's label);
// agents.agent_hostname is what the agent's hello reports. agents.agent_config_json stays
// the EFFECTIVE config the server sends (the host's own, else its group's, else NULL = the
// server default), so the handshake and the control plane read one column as before;
// host_config_json / host_config_apply_after hold the host's own config.
import { sql, type Kysely, type Migration } from 'kysely';

export const hostLabelsAndGroups: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('agents').addColumn('agent_hostname', 'text').execute();
    await db.schema.alterTable('agents').addColumn('group_name', 'text').execute();
    await db.schema.alterTable('agents').addColumn('host_config_json', 'text').execute();
    await db.schema.alterTable('agents').addColumn('host_config_apply_after', 'text').execute();
    // Until now the only config was the host's own.
    await db
      .updateTable('agents')
      .set({ host_config_json: sql.ref('agent_config_json'), host_config_apply_after: sql.ref('config_apply_after') })
      .execute();
    await db.schema.createIndex('agents_group_name_idx').on('agents').column('group_name').execute();
    await db.schema
      .createTable('agent_groups')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('agent_config_json', 'text')
      .addColumn('config_apply_after', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('agent_groups').execute();
    await db.schema.dropIndex('agents_group_name_idx').execute();
    await db.schema.alterTable('agents').dropColumn('host_config_apply_after').execute();
    await db.schema.alterTable('agents').dropColumn('host_config_json').execute();
    await db.schema.alterTable('agents').dropColumn('group_name').execute();
    await db.schema.alterTable('agents').dropColumn('agent_hostname').execute();
  },
};
