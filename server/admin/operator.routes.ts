// Admin API routes of the operator-experience work (DECISIONS I): agent delete, config
// groups and group membership — the HTTP twins of `cortex-server agent delete`,
// `agent config --group`, `agent issue --group` and `agent list --groups`.
import { validateAgentConfig, type AgentConfig } from '@cortex/agent-protocol';
import { agentConfigIssues } from '../config-check.js';
import { getSetting } from '../db/settings.repository.js';
import { ConfigVersionMismatchError } from '../db/agents.repository.js';
import { GROUP_NAME, HostInUseError, deleteAgent, getGroup, listGroups, setGroupConfig, setHostGroup } from '../db/operator.repository.js';
import { HostRevokedError, UnknownHostError } from '../db/storage.js';
import { builtinAgentConfig } from '../settings.js';
import { LIMITS } from '@cortex/agent-protocol';
import type { Route, RouteContext } from './context.js';
import { ApiError, configChanged, hostIdParam, ifMatchText, ifMatchVersions, invalid, readJson, send, unknownHost, versionTag } from './http.js';
import { checkBody } from './schemas.js';

/** A path group name; 400 when it is not one (a malformed %-escape included: DECISIONS H10, as hostIdParam). */
function groupParam(raw: string): string {
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    throw invalid('group name in the path is not valid percent-encoding', [{ path: '/name', message: 'is not valid percent-encoding' }]);
  }
  if (!GROUP_NAME.test(name)) throw invalid(`group name ${JSON.stringify(name.slice(0, 80))}: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`, [{ path: '/name', message: 'is not a group name' }]);
  return name;
}

async function defaults(ctx: RouteContext): Promise<{ cap: number; fallback: AgentConfig }> {
  const recorded = await getSetting(ctx.deps.storage.db, 'max_batch_entries');
  const cap = ctx.deps.settings?.max_batch_entries ?? (typeof recorded === 'number' ? recorded : LIMITS.server_max_batch_entries);
  return { cap, fallback: ctx.deps.settings?.default_agent_config ?? builtinAgentConfig(cap) };
}

/** The group's config view, with its version as the ETag header (DECISIONS J13). */
async function sendGroupConfigView(ctx: RouteContext, name: string): Promise<void> {
  const g = await getGroup(ctx.deps.storage.db, name);
  if (g === undefined) throw new ApiError(404, 404, `no group ${name}; create it with PUT /admin/groups/${name}/config`);
  const { fallback } = await defaults(ctx);
  const stored = g.agent_config_json === null ? null : (JSON.parse(g.agent_config_json) as unknown);
  const members = (await listGroups(ctx.deps.storage.db)).find((x) => x.name === name)?.members ?? 0;
  const version = Number(g.config_version);
  send(
    ctx.res,
    200,
    { name, stored, effective: stored ?? fallback, source: stored === null ? 'default' : 'group', apply_after: g.config_apply_after, members, updated_at: g.updated_at, config_version: version },
    { ETag: versionTag(version) },
  );
}

/**
 * setGroupConfig under the request's If-Match (DECISIONS J13): none, unconditional (the group
 * is created if new); `*`, the group must exist; else one of the versions named. A version
 * moved meanwhile is 412.
 */
async function writeGroupConfig(ctx: RouteContext, name: string, config_json: string | null, applyAfter: string | null): Promise<void> {
  const versions = ifMatchVersions(ctx.req);
  try {
    await setGroupConfig(ctx.deps.storage.db, name, config_json, applyAfter, versions === undefined ? {} : { ifConfigVersion: versions === 'any' ? 'exists' : versions });
  } catch (error) {
    if (error instanceof ConfigVersionMismatchError) throw configChanged(`the config of group ${name}`, `/admin/groups/${name}/config`, ifMatchText(ctx.req), error.current);
    throw error;
  }
}

export const operatorRoutes: readonly Route[] = [
  {
    method: 'DELETE',
    path: '/admin/agents/{host_id}',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      const raw = ctx.query.string('purge', 5);
      if (raw !== undefined && raw !== 'true' && raw !== 'false') throw invalid('purge must be true or false', [{ path: '/purge', message: 'must be true or false' }]);
      const purge = raw === 'true';
      try {
        const gone = await deleteAgent(ctx.deps.storage.db, id, { purge });
        await ctx.audit(id, { purge });
        send(ctx.res, 200, {
          host_id: id,
          purged: purge,
          logs_deleted: gone.logs,
          metrics_deleted: gone.metrics,
          message: purge ? `deleted ${id} with its ${gone.logs} log and ${gone.metrics} metric rows` : `deleted ${id}; its log and metric rows are kept (purge=true deletes them)`,
        });
      } catch (error) {
        if (error instanceof UnknownHostError) throw unknownHost(id);
        if (error instanceof HostInUseError) throw new ApiError(409, 409, `host ${id} is ${error.state}: only a revoked or never-connected host can be deleted; revoke or decommission it first`);
        throw error;
      }
    },
  },
  {
    method: 'PUT',
    path: '/admin/agents/{host_id}/group',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      const body = checkBody<{ group: string | null }>('SetGroupRequest', await readJson(ctx.req, '{"group": "web"}'));
      try {
        await setHostGroup(ctx.deps.storage.db, id, body.group);
      } catch (error) {
        if (error instanceof UnknownHostError) throw unknownHost(id);
        if (error instanceof HostRevokedError) throw new ApiError(409, 409, `host ${id} is revoked`);
        throw error;
      }
      await ctx.audit(id, { group: body.group });
      send(ctx.res, 200, { host_id: id, group: body.group, message: body.group === null ? `${id} is in no group now` : `${id} is in group ${body.group} now` });
    },
  },
  {
    method: 'GET',
    path: '/admin/groups',
    async handler(ctx) {
      const groups = await listGroups(ctx.deps.storage.db);
      send(ctx.res, 200, groups.map((g) => ({ name: g.name, members: g.members, agent_config_json: g.agent_config_json, config_apply_after: g.config_apply_after, created_at: g.created_at, updated_at: g.updated_at, config_version: Number(g.config_version) })));
    },
  },
  {
    method: 'GET',
    path: '/admin/groups/{name}/config',
    async handler(ctx) {
      await sendGroupConfigView(ctx, groupParam(ctx.params['name'] as string));
    },
  },
  {
    method: 'PUT',
    path: '/admin/groups/{name}/config',
    async handler(ctx) {
      const name = groupParam(ctx.params['name'] as string);
      ifMatchVersions(ctx.req); // a malformed If-Match is 400 before the body is read
      const body = checkBody<{ config: unknown; apply_after?: string | null }>('SetConfigRequest', await readJson(ctx.req, '{"config": {AgentConfig}, "apply_after": null}'));
      const { cap } = await defaults(ctx);
      const issues = agentConfigIssues(body.config, cap).map((i) => ({ ...i, path: `/config${i.path}` }));
      if (issues.length > 0 || !validateAgentConfig(body.config)) throw invalid(`config is not a valid AgentConfig (${issues.length} problems)`, issues.slice(0, 50));
      const applyAfter = body.apply_after === undefined || body.apply_after === null ? null : new Date(body.apply_after).toISOString();
      await writeGroupConfig(ctx, name, JSON.stringify(body.config), applyAfter);
      await ctx.audit(undefined, { group: name });
      await sendGroupConfigView(ctx, name);
    },
  },
  {
    method: 'DELETE',
    path: '/admin/groups/{name}/config',
    async handler(ctx) {
      const name = groupParam(ctx.params['name'] as string);
      if ((await getGroup(ctx.deps.storage.db, name)) === undefined) throw new ApiError(404, 404, `no group ${name}`);
      await writeGroupConfig(ctx, name, null, null);
      await ctx.audit(undefined, { group: name });
      await sendGroupConfigView(ctx, name);
    },
  },
];
