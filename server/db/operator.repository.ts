// Operator-side admin operations added with the operator-experience work (DECISIONS I):
// config groups and `agent delete`. Dialect-neutral kysely only.
//
// Groups: agents.group_name names a row of agent_groups. agents.agent_config_json is the
// effective config (host's own ?? group's ?? NULL = server default, see migration 0020), so
// a change of a group's config rewrites the effective config of every member without a
// config of its own, bumps their config_version and control_rev — and the server holding a
// member's session sends it config.update as for any other config change.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { AgentGroupRow, Database } from './schema.js';
import { ConfigVersionMismatchError } from './agents.repository.js';
import { HostRevokedError, UnknownHostError } from './storage.js';

type Db = Kysely<Database>;

const nowIso = (): string => new Date().toISOString();
const nextControlRev = (): RawBuilder<number> => sql<number>`(select coalesce(max(control_rev), 0) + 1 from agents)`;

export const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class HostInUseError extends Error {
  constructor(
    readonly host_id: string,
    readonly state: string,
  ) {
    super(`host ${host_id} is ${state}`);
    this.name = 'HostInUseError';
  }
}

export async function getGroup(db: Db, name: string): Promise<AgentGroupRow | undefined> {
  return db.selectFrom('agent_groups').selectAll().where('name', '=', name).executeTakeFirst();
}

export interface GroupSummary extends AgentGroupRow {
  members: number;
}

export async function listGroups(db: Db): Promise<GroupSummary[]> {
  const groups = await db.selectFrom('agent_groups').selectAll().orderBy('name').execute();
  const counts = await db
    .selectFrom('agents')
    .select((eb) => ['group_name', eb.fn.countAll<number | string | bigint>().as('n')])
    .where('group_name', 'is not', null)
    .groupBy('group_name')
    .execute();
  const byName = new Map(counts.map((c) => [c.group_name as string, Number(c.n)]));
  return groups.map((g) => ({ ...g, members: byName.get(g.name) ?? 0 }));
}

/** Creates the group (no config: the server default) unless it exists. */
export async function ensureGroup(db: Db, name: string): Promise<void> {
  const now = nowIso();
  await db
    .insertInto('agent_groups')
    .values({ name, agent_config_json: null, config_apply_after: null, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
}

/**
 * `agent config --group NAME --set/--clear`: the group's config (created if new), and the
 * effective config of each member without its own config, in one transaction; bumps the
 * group's config_version. Returns how many members changed.
 *
 * With `ifConfigVersion` (the admin API's If-Match, DECISIONS J13) the group must exist and
 * its config_version be one of those versions ('exists': any version), checked by the UPDATE
 * itself: on PostgreSQL a concurrent writer of the row waits for this transaction and then
 * finds the version moved (READ COMMITTED re-checks the WHERE), so of two writers that read
 * the same version exactly one succeeds, whichever server each runs on. An empty list
 * matches no version.
 * @throws ConfigVersionMismatchError (nothing written)
 */
export async function setGroupConfig(
  db: Db,
  name: string,
  config_json: string | null,
  apply_after: string | null = null,
  options: { ifConfigVersion?: readonly number[] | 'exists' } = {},
): Promise<number> {
  const applyAfter = config_json === null ? null : apply_after;
  const condition = options.ifConfigVersion;
  return db.transaction().execute(async (tx) => {
    if (condition === undefined) await ensureGroup(tx, name);
    let update = tx
      .updateTable('agent_groups')
      .set((eb) => ({ agent_config_json: config_json, config_apply_after: applyAfter, updated_at: nowIso(), config_version: eb('config_version', '+', 1) }))
      .where('name', '=', name);
    if (condition !== undefined && condition !== 'exists') update = update.where('config_version', 'in', [...condition]);
    const written = condition !== undefined && condition !== 'exists' && condition.length === 0 ? 0n : (await update.executeTakeFirst()).numUpdatedRows;
    if (written === 0n) {
      const now = await getGroup(tx, name);
      throw new ConfigVersionMismatchError(now === undefined ? null : Number(now.config_version));
    }
    const result = await tx
      .updateTable('agents')
      .set((eb) => ({
        agent_config_json: config_json,
        config_apply_after: applyAfter,
        config_version: eb('config_version', '+', 1),
        control_rev: nextControlRev(),
      }))
      .where('group_name', '=', name)
      .where('host_config_json', 'is', null)
      .where('connection_state', '<>', 'Revoked')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  });
}

/**
 * Puts a host in group `name` (created if new; NULL: no group). A host without a config of
 * its own then runs the group's config. A host belongs to one group at a time.
 * @throws UnknownHostError | HostRevokedError
 */
export async function setHostGroup(db: Db, host_id: string, name: string | null): Promise<void> {
  const id = host_id.toLowerCase();
  await db.transaction().execute(async (tx) => {
    if (name !== null) await ensureGroup(tx, name);
    const row = await tx.selectFrom('agents').select(['connection_state', 'host_config_json', 'host_config_apply_after']).where('host_id', '=', id).executeTakeFirst();
    if (row === undefined) throw new UnknownHostError(id);
    if (row.connection_state === 'Revoked') throw new HostRevokedError(id);
    const group = name === null ? undefined : await getGroup(tx, name);
    const own = row.host_config_json !== null;
    await tx
      .updateTable('agents')
      .set((eb) => ({
        group_name: name,
        agent_config_json: own ? row.host_config_json : (group?.agent_config_json ?? null),
        config_apply_after: own ? row.host_config_apply_after : (group?.config_apply_after ?? null),
        config_version: eb('config_version', '+', 1),
        control_rev: nextControlRev(),
      }))
      .where('host_id', '=', id)
      .execute();
  });
}

/**
 * `agent delete HOST_ID [--purge]`: removes the row of a Revoked or NeverConnected host.
 * Its log and metric rows are kept unless `purge` (then deleted in the same transaction).
 * Returns the deleted row counts.
 * @throws UnknownHostError | HostInUseError (Active or Disconnected: revoke first)
 */
export async function deleteAgent(db: Db, host_id: string, options: { purge?: boolean } = {}): Promise<{ logs: number; metrics: number }> {
  const id = host_id.toLowerCase();
  return db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('agents').select('connection_state').where('host_id', '=', id).executeTakeFirst();
    if (row === undefined) throw new UnknownHostError(id);
    if (row.connection_state !== 'Revoked' && row.connection_state !== 'NeverConnected') throw new HostInUseError(id, row.connection_state);
    const gone = await tx.deleteFrom('agents').where('host_id', '=', id).where('connection_state', 'in', ['Revoked', 'NeverConnected']).executeTakeFirst();
    if (gone.numDeletedRows === 0n) throw new HostInUseError(id, 'no longer deletable (it changed meanwhile)');
    if (!options.purge) return { logs: 0, metrics: 0 };
    const logs = await tx.deleteFrom('logs').where('host_id', '=', id).executeTakeFirst();
    const metrics = await tx.deleteFrom('metrics').where('host_id', '=', id).executeTakeFirst();
    return { logs: Number(logs.numDeletedRows), metrics: Number(metrics.numDeletedRows) };
  });
}
