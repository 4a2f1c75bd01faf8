// /admin/fleet, /admin/agents and the per-host actions (issue, reissue, revoke, rotate,
// decommission, config), the HTTP twins of `cortex-server agent …` (DESIGN.md section 3).
import { DEFAULT_ENROLLMENT_TTL_MS, recordEnrollmentToken } from '../security/enrollment.js';
import { forwarded } from '../security/forwarded.js';
import { shellCommand } from '../../common/shell-quote.js';
import { LIMITS, describeIssues, toIssues, validateAgentConfig, type AgentConfig } from '@cortex/agent-protocol';
import {
  ConfigVersionMismatchError,
  getAgent,
  issueAgent,
  reissueToken,
  requestDecommission,
  requestRotation,
  revoke,
  setAgentConfig,
  SUMMARY_COLUMNS,
  type AgentSummary,
} from '../db/agents.repository.js';
import type { ConnectionState } from '../db/schema.js';
import { CONNECTION_STATES } from '../db/schema.js';
import { getSetting } from '../db/settings.repository.js';
import { HostRevokedError, UnknownHostError } from '../db/storage.js';
import { agentConfigIssues } from '../config-check.js';
import { builtinAgentConfig } from '../settings.js';
import type { Route, RouteContext } from './context.js';
import { ApiError, configChanged, hostIdParam, ifMatchText, ifMatchVersions, invalid, readJson, send, unknownHost, versionTag } from './http.js';
import { AGENT_SORT_KEYS, countByState, queryAgents } from './queries.js';
import { checkBody } from './schemas.js';

/** An agent as the admin API shows it (numbers as numbers, no hashes). */
export function agentView(a: AgentSummary): Record<string, unknown> {
  return { ...a, accepted_seq: Number(a.accepted_seq), control_rev: Number(a.control_rev), config_version: Number(a.config_version) };
}

// The list shows the same columns as one agent (every column but the token hashes,
// including those another module adds to the repository's list, such as server_id).
const COLUMNS = SUMMARY_COLUMNS;

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Maps the repository's errors to answers; other errors propagate (500). */
async function hostOp<T>(host_id: string, fn: () => Promise<T>, ctx?: RouteContext): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof UnknownHostError) throw unknownHost(host_id);
    if (error instanceof ConfigVersionMismatchError && ctx !== undefined) {
      throw configChanged(`the config of host ${host_id}`, `/admin/agents/${host_id}/config`, ifMatchText(ctx.req), error.current);
    }
    if (error instanceof HostRevokedError) {
      throw new ApiError(409, 409, `host ${host_id} is revoked; take it back with POST /admin/agents/${host_id}/token (a new enrollment token) first`);
    }
    throw error;
  }
}

async function existing(ctx: RouteContext, host_id: string): Promise<AgentSummary> {
  const row = await getAgent(ctx.deps.storage.db, host_id);
  if (row === undefined) throw unknownHost(host_id);
  return row;
}

/**
 * The URL agents enroll with: as a trusted reverse proxy was asked for it (scheme, host, path
 * prefix: DECISIONS I26), else the address the server listens on, else the Host header.
 */
function wsUrl(ctx: RouteContext): string {
  const fwd = forwarded(ctx.req, ctx.deps.isTrustedProxy);
  if (fwd !== undefined && (fwd.host !== undefined || fwd.proto !== undefined)) {
    const host = fwd.host ?? ctx.req.headers['host'] ?? '127.0.0.1:3100';
    const secure = fwd.proto === undefined ? ctx.deps.tls === true : fwd.proto === 'https';
    return `${secure ? 'wss' : 'ws'}://${host}${fwd.prefix}${LIMITS.ws_path}`;
  }
  if (ctx.deps.wsUrl !== undefined && !/\/\/(0\.0\.0\.0|\[::\]):/.test(ctx.deps.wsUrl)) return ctx.deps.wsUrl;
  const host = ctx.req.headers['host'] ?? '127.0.0.1:3100';
  return `${ctx.deps.tls === true ? 'wss' : 'ws'}://${host}${LIMITS.ws_path}`;
}

/**
 * An issued token and the commands that enroll with it, each value quoted for a POSIX shell (a
 * URL from the Host header or a proxy's X-Forwarded-Prefix may hold `'`, `$(…)` or `;`).
 * `enroll_command_stdin` reads the token from stdin (`--token -`: at a terminal enroll asks for
 * it, not shown), so it is on no command line (ps, shell history); `enroll_command` keeps the
 * token in its arguments, as it always did, for the clients that run or parse it.
 */
function issuedView(ctx: RouteContext, issued: { host_id: string; hostname: string; token: string }): Record<string, string> {
  const url = wsUrl(ctx);
  const command = (token: string) =>
    shellCommand(['cortex-agent', 'enroll', '--server', url, '--host-id', issued.host_id, '--token', token, '--state-dir', '/var/lib/cortex-agent', ...(url.startsWith('ws://') ? ['--allow-insecure'] : [])]);
  return {
    host_id: issued.host_id,
    hostname: issued.hostname,
    token: issued.token,
    server_url: url,
    enroll_command_stdin: command('-'),
    enroll_command: command(issued.token),
  };
}

async function maxBatchCap(ctx: RouteContext): Promise<number> {
  if (ctx.deps.settings !== undefined) return ctx.deps.settings.max_batch_entries;
  const recorded = await getSetting(ctx.deps.storage.db, 'max_batch_entries');
  return typeof recorded === 'number' ? recorded : LIMITS.server_max_batch_entries;
}

/**
 * The If-Match of a config write as the repository takes it (DECISIONS J13): the versions it
 * names, or none (no header: unconditional, as before; `*`: the host exists, which the write
 * checks anyway).
 */
function configCondition(ctx: RouteContext): { ifConfigVersion?: readonly number[] } {
  const versions = ifMatchVersions(ctx.req);
  return versions === undefined || versions === 'any' ? {} : { ifConfigVersion: versions };
}

/** A config view with its version as the ETag header (DECISIONS J13). */
async function sendConfigView(ctx: RouteContext, row: AgentSummary): Promise<void> {
  send(ctx.res, 200, await configView(ctx, row), { ETag: versionTag(Number(row.config_version)) });
}

async function configView(ctx: RouteContext, row: AgentSummary): Promise<Record<string, unknown>> {
  const cap = await maxBatchCap(ctx);
  const fallback: AgentConfig = ctx.deps.settings?.default_agent_config ?? builtinAgentConfig(cap);
  // agent_config_json is the effective config (the host's own, else its group's; migration
  // 0020); host_config_json the host's own.
  const stored = row.host_config_json === null ? null : parseJson(row.host_config_json);
  const running = row.agent_config_json === null ? null : parseJson(row.agent_config_json);
  const pending = row.config_apply_after !== null && row.config_apply_after > (ctx.deps.now?.() ?? new Date()).toISOString();
  const usable = running !== null && validateAgentConfig(running);
  return {
    host_id: row.host_id,
    stored,
    effective: usable && !pending ? running : fallback,
    source: running === null ? 'default' : pending ? 'default_until_apply_after' : stored === null ? 'group' : 'host',
    group: row.group_name,
    apply_after: row.config_apply_after,
    config_version: Number(row.config_version),
    max_batch_entries_cap: cap,
  };
}

function states(raw: string | undefined): ConnectionState[] | undefined {
  if (raw === undefined) return undefined;
  const list = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const s of list) {
    if (!(CONNECTION_STATES as readonly string[]).includes(s)) throw invalid(`query parameter state: ${JSON.stringify(s)} is not one of ${CONNECTION_STATES.join(', ')}`);
  }
  return list as ConnectionState[];
}

export const agentRoutes: Route[] = [
  {
    method: 'GET',
    path: '/admin/fleet',
    async handler(ctx) {
      const by_state = await countByState(ctx.deps.storage.db);
      const total = Object.values(by_state).reduce((a, b) => a + b, 0);
      send(ctx.res, 200, { total, by_state, server_time: (ctx.deps.now?.() ?? new Date()).toISOString() });
    },
  },
  {
    method: 'GET',
    path: '/admin/agents',
    async handler(ctx) {
      const q = ctx.query;
      const stateList = states(q.string('state', 200));
      const text = q.string('q', 200);
      const sort = q.oneOf('sort', AGENT_SORT_KEYS);
      const order = q.oneOf('order', ['asc', 'desc'] as const);
      const limit = q.int('limit', 1, 10_000);
      const offset = q.int('offset', 0, Number.MAX_SAFE_INTEGER);
      const { rows, total } = await queryAgents(ctx.deps.storage.db, COLUMNS, {
        ...(stateList !== undefined ? { states: stateList } : {}),
        ...(text !== undefined ? { q: text } : {}),
        ...(sort !== undefined ? { sort } : {}),
        ...(order !== undefined ? { order } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(offset !== undefined ? { offset } : {}),
      });
      send(
        ctx.res,
        200,
        rows.map((a) => ({ ...agentView(a), connected_here: ctx.deps.connectedHere(a.host_id), buffer: ctx.deps.heartbeatOf?.(a.host_id) ?? null })),
        { 'X-Total-Count': String(total) },
      );
    },
  },
  {
    method: 'POST',
    path: '/admin/agents',
    async handler(ctx) {
      const body = checkBody<{ hostname: string }>('IssueRequest', await readJson(ctx.req, '{"hostname": "web-01"}'));
      const issued = await issueAgent(ctx.deps.storage.db, body.hostname);
      // The one-time token expires as one from `agent issue` does (DECISIONS H8: default 7 days).
      const expires_at = await recordEnrollmentToken(ctx.deps.storage.db, issued.host_id, DEFAULT_ENROLLMENT_TTL_MS, ctx.deps.now?.());
      await ctx.audit(issued.host_id, { hostname: issued.hostname, expires_at });
      send(ctx.res, 201, issuedView(ctx, issued));
    },
  },
  {
    method: 'GET',
    path: '/admin/agents/{host_id}',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      const row = await existing(ctx, id);
      send(ctx.res, 200, {
        ...agentView(row),
        connected_here: ctx.deps.connectedHere(id),
        buffer: ctx.deps.heartbeatOf?.(id) ?? null,
        platform: parseJson(row.platform_json),
        capabilities: parseJson(row.capabilities_json),
      });
    },
  },
  {
    method: 'POST',
    path: '/admin/agents/{host_id}/token',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      const issued = await hostOp(id, () => reissueToken(ctx.deps.storage.db, id));
      await recordEnrollmentToken(ctx.deps.storage.db, id, DEFAULT_ENROLLMENT_TTL_MS, ctx.deps.now?.());
      await ctx.audit(id);
      send(ctx.res, 201, issuedView(ctx, issued));
    },
  },
  {
    method: 'POST',
    path: '/admin/agents/{host_id}/revoke',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      await hostOp(id, () => revoke(ctx.deps.storage.db, id));
      await ctx.audit(id);
      send(ctx.res, 200, { host_id: id, connection_state: 'Revoked', message: `revoked ${id}; a server holding its session closes it (4002) within 2 s` });
    },
  },
  {
    method: 'POST',
    path: '/admin/agents/{host_id}/rotate',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      const body = checkBody<{ grace_secs?: number }>('RotateRequest', (await readJson(ctx.req, '{"grace_secs": 300}', true)) ?? {});
      let grace = body.grace_secs ?? ctx.deps.settings?.rotation_grace_secs;
      if (grace === undefined) {
        const recorded = await getSetting(ctx.deps.storage.db, 'rotation_grace_secs');
        grace = typeof recorded === 'number' ? recorded : LIMITS.rotation_grace_secs;
      }
      const g = grace;
      await hostOp(id, () => requestRotation(ctx.deps.storage.db, id, g));
      const row = await existing(ctx, id);
      await ctx.audit(id);
      send(ctx.res, 200, {
        host_id: id,
        connection_state: row.connection_state,
        message: `rotation requested for ${id} (grace ${g} s): its next hello gets a new token; a connected agent is asked to reconnect within 2 s`,
      });
    },
  },
  {
    method: 'POST',
    path: '/admin/agents/{host_id}/decommission',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      const body = checkBody<{ drain_secs?: number }>('DecommissionRequest', (await readJson(ctx.req, '{"drain_secs": 30}', true)) ?? {});
      const drain = body.drain_secs ?? LIMITS.decommission_drain_secs;
      await hostOp(id, () => requestDecommission(ctx.deps.storage.db, id, drain));
      // The state right after the request (the audit row comes after this read: with drain 0
      // the session's server revokes at once, and the answer should say the session was live).
      const row = await existing(ctx, id);
      await ctx.audit(id);
      if (row.connection_state !== 'Active') {
        // Not connected: revoked at once (DESIGN.md 5.13); a live session is drained by its server.
        await revoke(ctx.deps.storage.db, id);
        send(ctx.res, 200, { host_id: id, connection_state: 'Revoked', message: `decommissioned ${id}: not connected, revoked now (rows kept)` });
        return;
      }
      send(ctx.res, 200, {
        host_id: id,
        connection_state: row.connection_state,
        message: `decommission requested for ${id}: the server holding its session drains it for ${drain} s, then revokes (rows kept)`,
      });
    },
  },
  {
    method: 'GET',
    path: '/admin/agents/{host_id}/config',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      await sendConfigView(ctx, await existing(ctx, id));
    },
  },
  {
    method: 'PUT',
    path: '/admin/agents/{host_id}/config',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      const condition = configCondition(ctx);
      const body = checkBody<{ config: unknown; apply_after?: string | null }>(
        'SetConfigRequest',
        await readJson(ctx.req, '{"config": {AgentConfig}, "apply_after": null}'),
      );
      const cap = await maxBatchCap(ctx);
      // Every problem at once, log sources checked strictly per kind (server/config-check.ts).
      const all = agentConfigIssues(body.config, Number.MAX_SAFE_INTEGER).map((i) => ({ ...i, path: `/config${i.path}` }));
      if (all.length > 0 || !validateAgentConfig(body.config)) {
        const issues = all.length > 0 ? all : toIssues(validateAgentConfig.errors).map((i) => ({ ...i, path: `/config${i.path}` }));
        throw invalid(`config is not a valid AgentConfig: ${describeIssues(issues, 5)} (give a complete config; schema: generated/schemas/defs.json#/$defs/AgentConfig)`, issues.slice(0, 50));
      }
      if (body.config.max_batch_entries > cap) {
        throw invalid(`config.max_batch_entries ${body.config.max_batch_entries} exceeds the server's max_batch_entries (${cap}); lower it`, [
          { path: '/config/max_batch_entries', message: `must be <= ${cap} (the server's max_batch_entries)` },
        ]);
      }
      const applyAfter = body.apply_after === undefined || body.apply_after === null ? null : new Date(body.apply_after).toISOString();
      // Stored verbatim: the agent receives exactly the config it was given.
      const text = JSON.stringify(body.config);
      await hostOp(id, () => setAgentConfig(ctx.deps.storage.db, id, text, applyAfter, condition), ctx);
      await ctx.audit(id);
      await sendConfigView(ctx, await existing(ctx, id));
    },
  },
  {
    method: 'DELETE',
    path: '/admin/agents/{host_id}/config',
    async handler(ctx) {
      const id = hostIdParam(ctx.params['host_id'] as string);
      const condition = configCondition(ctx);
      await hostOp(id, () => setAgentConfig(ctx.deps.storage.db, id, null, null, condition), ctx);
      await ctx.audit(id);
      await sendConfigView(ctx, await existing(ctx, id));
    },
  },
];
