// A version for each group's config (DECISIONS J13): agent_groups.config_version, bumped by
// every change of the group's config as agents.config_version is by a host's. The admin API
// gives it as the ETag of GET /admin/groups/{name}/config and takes it back in If-Match, so
// two operators (or two servers on one database) editing the same group cannot overwrite
// each other unseen: the UPDATE is conditional on the version read. Existing groups start at 0.
import type { Kysely, Migration } from 'kysely';

export const groupConfigVersion: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('agent_groups').addColumn('config_version', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('agent_groups').dropColumn('config_version').execute();
  },
};
