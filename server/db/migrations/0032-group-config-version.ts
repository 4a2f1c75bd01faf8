// A version for each group's config (DECISIONS J13): agent_groups.config_version, bumped by
// every change of the group's config as agents.config_version is by a host's. The admin API
// gives it as the ETag of GET /admin/groups/{name}/config and takes it back in If-Match, so
// two operators (or two servers on one database) editing the same group cannot overwrite
// each other unseen: the UPDATE is conditional on the version read. Existing groups start at 0.
//
// A trigger bumps it too when a change of the config leaves it as it was: what a server of an
// earlier version writes during a rolling upgrade (it knows no such column), or an edit by
// hand. Without it, an edit made through an old server kept the ETag, and a PUT with that
// ETag on a new server overwrote it unseen (DECISIONS H55). This version's writes bump it
// themselves, so the trigger leaves them alone.
import { sql, type Kysely, type Migration } from 'kysely';
import { isPostgres } from './dialect-of.js';

export const groupConfigVersion: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('agent_groups').addColumn('config_version', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    if (isPostgres(db)) {
      await sql`
        create function agent_groups_config_version_bump() returns trigger language plpgsql as $$
        begin
          if new.config_version = old.config_version
             and (new.agent_config_json is distinct from old.agent_config_json or new.config_apply_after is distinct from old.config_apply_after) then
            new.config_version := old.config_version + 1;
          end if;
          return new;
        end
        $$`.execute(db);
      await sql`create trigger agent_groups_config_version_bump before update on agent_groups for each row execute function agent_groups_config_version_bump()`.execute(db);
    } else {
      await sql`
        create trigger agent_groups_config_version_bump after update of agent_config_json, config_apply_after on agent_groups
        when new.config_version = old.config_version
          and (new.agent_config_json is not old.agent_config_json or new.config_apply_after is not old.config_apply_after)
        begin
          update agent_groups set config_version = config_version + 1 where name = new.name;
        end`.execute(db);
    }
  },
  async down(db: Kysely<any>): Promise<void> {
    if (isPostgres(db)) {
      await sql`drop trigger if exists agent_groups_config_version_bump on agent_groups`.execute(db);
      await sql`drop function if exists agent_groups_config_version_bump()`.execute(db);
    } else {
      await sql`drop trigger if exists agent_groups_config_version_bump`.execute(db);
    }
    await db.schema.alterTable('agent_groups').dropColumn('config_version').execute();
  },
};
