// `cortex-server agent …`: the admin commands on the agents table.
import type { AgentSummary } from '../db/agents.repository.js';
import type { LogView } from '../db/logs.repository.js';
import { UnknownHostError } from '../db/storage.js';
import { UsageError, adminOp, err, int, logsRepo, oneHost, openDb, out, parse, repo, withDb } from './common.js';
import { HELP, PROG } from './help.js';
import { enrollCommand, runCommand } from './hints.js';

export async function agentIssue(args: string[]): Promise<void> {
  const { values } = parse(args, { db: { type: 'string' }, host: { type: 'string' }, 'host-id': { type: 'string' }, json: { type: 'boolean' } }, HELP.issue);
  const host = values.host;
  const hostId = values['host-id'];
  if ((host === undefined) === (hostId === undefined)) throw new UsageError(`give exactly one of --host HOSTNAME or --host-id HOST_ID\n\n${HELP.issue}`);
  if (host !== undefined && (host.length < 1 || host.length > 253)) throw new UsageError('--host must be 1..253 characters');
  if (hostId !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(hostId)) {
    throw new UsageError(`--host-id ${JSON.stringify(hostId)} is not a UUID; see \`${PROG} agent list\``);
  }
  const { issueAgent, reissueToken } = await repo();
  const { getSetting } = await import('../db/settings.repository.js');
  const issued = await withDb(values.db, async (s) => {
    const recorded = await getSetting(s.db, 'agent_url');
    const agent_url = typeof recorded === 'string' ? recorded : undefined;
    if (host !== undefined) return { ...(await issueAgent(s.db, host)), agent_url };
    try {
      return { ...(await reissueToken(s.db, hostId as string)), agent_url };
    } catch (error) {
      if (error instanceof UnknownHostError) throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``);
      throw error;
    }
  }, { create: host !== undefined });
  if (values.json) {
    out(JSON.stringify({ host_id: issued.host_id, hostname: issued.hostname, token: issued.token }));
  } else {
    // The token is the result (stdout), so the complete enroll command with it goes there
    // too; stderr (which may be logged) never carries it.
    const url = issued.agent_url ?? 'ws://SERVER:3100/ws/agent';
    out(`host_id:  ${issued.host_id}\nhostname: ${issued.hostname}\ntoken:    ${issued.token}\n\nOn the host, from a clone of this repository:\n  ${enrollCommand(url, issued.host_id, issued.token)}\n  ${runCommand(url)}`);
    err(`The token is shown once and works for one enrollment.${issued.agent_url === undefined ? ' Replace ws://SERVER:3100/ws/agent with the URL that serve printed.' : ''}`);
  }
}

export async function agentList(args: string[]): Promise<void> {
  const { values } = parse(args, { db: { type: 'string' }, json: { type: 'boolean' } }, HELP.list);
  const { listAgents } = await repo();
  const agents = await withDb(values.db, (s) => listAgents(s.db));
  if (values.json) {
    out(JSON.stringify(agents.map(normalizeAgent)));
    return;
  }
  if (agents.length === 0) {
    out('no agents; add one with: agent issue --host HOSTNAME');
    return;
  }
  const rows = agents.map((a) => [a.host_id, a.hostname, a.connection_state, String(a.accepted_seq), a.last_seen ?? '-', a.last_disconnect_reason ?? '-']);
  const head = ['HOST_ID', 'HOSTNAME', 'STATE', 'ACCEPTED_SEQ', 'LAST_SEEN', 'LAST_DISCONNECT'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  for (const r of [head, ...rows]) out(r.map((c, i) => c.padEnd(widths[i] as number)).join('  ').trimEnd());
}

function normalizeAgent(a: AgentSummary): AgentSummary {
  return { ...a, accepted_seq: Number(a.accepted_seq), control_rev: Number(a.control_rev), config_version: Number(a.config_version) };
}

function formatLog(l: LogView): string {
  const app = l.app_name ? ` ${l.app_name}${l.process_id ? `[${l.process_id}]` : ''}:` : '';
  return `${l.seq} ${l.ts} ${l.severity.padEnd(7)} ${l.source}${app} ${l.message}`;
}

export async function agentTail(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    { db: { type: 'string' }, n: { type: 'string', short: 'n' }, follow: { type: 'boolean' }, json: { type: 'boolean' } },
    HELP.tail,
    true,
  );
  if (positionals.length !== 1) throw new UsageError(`give exactly one HOST_ID\n\n${HELP.tail}`);
  const hostId = (positionals[0] as string).toLowerCase();
  const n = int('-n', values.n) ?? 20;
  const [{ getAgent }, { since, tail }] = await Promise.all([repo(), logsRepo()]);
  const storage = await openDb(values.db);
  try {
    if ((await getAgent(storage.db, hostId)) === undefined) {
      throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``);
    }
    const rows = await tail(storage.db, hostId, n);
    if (values.json && !values.follow) out(JSON.stringify(rows));
    else for (const r of rows) out(values.json ? JSON.stringify(r) : formatLog(r));
    if (!values.follow) return;
    let last = rows.length > 0 ? (rows[rows.length - 1] as LogView).seq : 0;
    let stop = false;
    const onSignal = () => (stop = true);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    while (!stop) {
      const more = await since(storage.db, hostId, last, 1000);
      for (const r of more) out(values.json ? JSON.stringify(r) : formatLog(r));
      if (more.length > 0) last = (more[more.length - 1] as LogView).seq;
      else await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await storage.close();
  }
}

export async function agentRevoke(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' } }, HELP.revoke, true);
  const hostId = oneHost(positionals, HELP.revoke);
  const { revoke } = await repo();
  await withDb(values.db, (s) => adminOp(hostId, () => revoke(s.db, hostId)));
  out(`revoked ${hostId}; a server holding its session closes it (4002) within 2 s`);
}

export async function agentRotate(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' }, 'grace-secs': { type: 'string' } }, HELP.rotate, true);
  const hostId = oneHost(positionals, HELP.rotate);
  const { getSetting } = await import('../db/settings.repository.js');
  const { requestRotation } = await repo();
  const { LIMITS } = await import('@cortex/agent-protocol');
  const given = int('--grace-secs', values['grace-secs']);
  await withDb(values.db, async (s) => {
    const recorded = await getSetting(s.db, 'rotation_grace_secs');
    const grace = given ?? (typeof recorded === 'number' ? recorded : LIMITS.rotation_grace_secs);
    await adminOp(hostId, () => requestRotation(s.db, hostId, grace));
    out(`rotation requested for ${hostId} (grace ${grace} s): its next hello gets a new token; a connected agent is asked to reconnect within 2 s`);
  });
}

export async function agentDecommission(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' }, 'drain-secs': { type: 'string' } }, HELP.decommission, true);
  const hostId = oneHost(positionals, HELP.decommission);
  const { LIMITS } = await import('@cortex/agent-protocol');
  const drain = int('--drain-secs', values['drain-secs']) ?? LIMITS.decommission_drain_secs;
  if (drain > LIMITS.max_drain_seconds) throw new UsageError(`--drain-secs must be at most ${LIMITS.max_drain_seconds}`);
  const { requestDecommission, getAgent, revoke } = await repo();
  await withDb(values.db, async (s) => {
    await adminOp(hostId, () => requestDecommission(s.db, hostId, drain));
    const row = await getAgent(s.db, hostId);
    if (row !== undefined && row.connection_state !== 'Active') {
      // Not connected: revoke at once (DESIGN 5.13). A session that is still open somewhere
      // is drained and revoked by its server.
      await revoke(s.db, hostId);
      out(`decommissioned ${hostId}: not connected, revoked now (rows kept)`);
    } else {
      out(`decommission requested for ${hostId}: the server holding its session drains it for ${drain} s, then revokes (rows kept)`);
    }
  });
}

export async function agentConfig(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    { db: { type: 'string' }, set: { type: 'string' }, clear: { type: 'boolean' }, 'apply-after': { type: 'string' } },
    HELP.config,
    true,
  );
  const hostId = oneHost(positionals, HELP.config);
  if ((values.set === undefined) === (values.clear !== true)) throw new UsageError(`give exactly one of --set JSON or --clear\n\n${HELP.config}`);
  if (values.clear && values['apply-after'] !== undefined) throw new UsageError('--apply-after goes with --set, not --clear');
  const { validateAgentConfig, toIssues, describeIssues, LIMITS } = await import('@cortex/agent-protocol');
  let configJson: string | null = null;
  let cap = 0;
  let parsedMax = 0;
  if (values.set !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(values.set);
    } catch (error) {
      throw new UsageError(`--set is not valid JSON: ${(error as Error).message}`);
    }
    if (!validateAgentConfig(parsed)) {
      throw new UsageError(`--set is not a valid AgentConfig: ${describeIssues(toIssues(validateAgentConfig.errors), 5)} (see generated/schemas/defs.json#/$defs/AgentConfig; give a complete config)`);
    }
    configJson = values.set;
    parsedMax = parsed.max_batch_entries;
  }
  let applyAfter: string | null = null;
  const aa = values['apply-after'];
  if (aa !== undefined) {
    const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
    const t = Date.parse(aa);
    if (!rfc3339.test(aa) || Number.isNaN(t)) throw new UsageError(`--apply-after ${JSON.stringify(aa)} is not an RFC 3339 date-time such as 2026-05-16T20:00:00Z`);
    applyAfter = new Date(t).toISOString();
  }
  const { setAgentConfig } = await repo();
  const { getSetting } = await import('../db/settings.repository.js');
  await withDb(values.db, async (s) => {
    const recorded = await getSetting(s.db, 'max_batch_entries');
    cap = typeof recorded === 'number' ? recorded : LIMITS.server_max_batch_entries;
    if (configJson !== null && parsedMax > cap) {
      throw new UsageError(`max_batch_entries ${parsedMax} exceeds the server's max_batch_entries (${cap}, recorded by serve); lower it`);
    }
    await adminOp(hostId, () => setAgentConfig(s.db, hostId, configJson, applyAfter));
  });
  out(
    configJson === null
      ? `config of ${hostId} cleared: the server default applies; a connected agent gets it within 2 s`
      : `config of ${hostId} stored${applyAfter ? ` (applies after ${applyAfter})` : ''}; a connected agent gets it within 2 s`,
  );
}
