// `cortex-server agent …`: the admin commands on the agents table.
import type { AgentSummary } from '../db/agents.repository.js';
import type { GroupSummary } from '../db/operator.repository.js';
import type { LogView } from '../db/logs.repository.js';
import type { Severity } from '@cortex/agent-protocol';
import { UnknownHostError, databaseNow } from '../db/storage.js';
import { queryTime } from '../timestamps.js';
import { UsageError, adminOp, err, int, logsRepo, oneHost, openDb, out, parse, repo, watchLoss, withDb } from './common.js';
import { printable } from '../../common/printable.js';
import { HELP, PROG } from './help.js';
import { HINTS, enrollCommand, enrollTokenNote, loopbackNote, runCommand } from './hints.js';
import { REMOTE_OPTIONS, call, followEvents, ok, remoteTarget, type RemoteTarget } from './remote.js';

export async function agentIssue(args: string[]): Promise<void> {
  const { values } = parse(args, { db: { type: 'string' }, host: { type: 'string' }, 'host-id': { type: 'string' }, group: { type: 'string' }, json: { type: 'boolean' }, 'expires-in': { type: 'string' }, ...REMOTE_OPTIONS }, HELP.issue);
  const security = await import('../security/commands.js');
  const ttlMs = security.enrollmentTtl(values['expires-in']);
  const host = values.host;
  const group = values.group;
  const { GROUP_NAME } = await import('../db/operator.repository.js');
  if (group !== undefined && group !== '' && !GROUP_NAME.test(group)) {
    throw new UsageError(`--group ${JSON.stringify(group)}: a group name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (--group '' leaves the group)`);
  }
  const hostId = values['host-id'];
  if ((host === undefined) === (hostId === undefined)) throw new UsageError(`give exactly one of --host HOSTNAME or --host-id HOST_ID\n\n${HELP.issue}`);
  if (host !== undefined && (host.length < 1 || host.length > 253)) throw new UsageError('--host must be 1..253 characters');
  if (hostId !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(hostId)) {
    throw new UsageError(`--host-id ${JSON.stringify(hostId)} is not a UUID; see \`${PROG} agent list\``);
  }
  const remote = remoteTarget(values);
  if (remote !== undefined && values['expires-in'] !== undefined) throw new UsageError('--expires-in works on the database only (the admin API issues tokens with the default lifetime); drop it or use --db');
  const issued = remote !== undefined ? await issueRemote(remote, host, hostId, group) : await issueLocal(values.db, host, hostId, group, ttlMs);
  printIssued(issued, values.json === true, group);
}

interface Issued {
  host_id: string;
  hostname: string;
  token: string;
  agent_url: string | undefined;
}

async function issueRemote(t: RemoteTarget, host: string | undefined, hostId: string | undefined, group: string | undefined): Promise<Issued> {
  const r =
    host !== undefined
      ? await ok<{ host_id: string; hostname: string; token: string; server_url?: string }>(t, 'POST', '/admin/agents', { hostname: host })
      : await ok<{ host_id: string; hostname: string; token: string; server_url?: string }>(t, 'POST', `/admin/agents/${hostId}/token`);
  if (group !== undefined) await ok(t, 'PUT', `/admin/agents/${r.host_id}/group`, { group: group === '' ? null : group });
  return { host_id: r.host_id, hostname: r.hostname, token: r.token, agent_url: r.server_url };
}

async function issueLocal(db: string | undefined, host: string | undefined, hostId: string | undefined, group: string | undefined, ttlMs: number): Promise<Issued> {
  const security = await import('../security/commands.js');
  const ops = await import('../db/operator.repository.js');
  const { issueAgent, reissueToken } = await repo();
  const { getSetting } = await import('../db/settings.repository.js');
  return withDb(db, async (s) => {
    const recorded = await getSetting(s.db, 'agent_url');
    const agent_url = typeof recorded === 'string' ? recorded : undefined;
    // A host belongs to one group: --group NAME puts it there (created if new), --group '' out.
    const join = async (id: string) => {
      if (group !== undefined) await adminOp(id, () => ops.setHostGroup(s.db, id, group === '' ? null : group));
    };
    // The expiry is compared with the database's clock by the servers (G31): read it, not this
    // machine's, which may be another one and off (G39).
    const now = await databaseNow(s);
    if (host !== undefined) {
      const created = await issueAgent(s.db, host, { now: now.toISOString() });
      await security.afterIssue(s.db, created, ttlMs, false, now);
      await join(created.host_id);
      return { ...created, agent_url };
    }
    try {
      const again = await reissueToken(s.db, hostId as string);
      await security.afterIssue(s.db, again, ttlMs, true, now);
      await join(again.host_id);
      return { ...again, agent_url };
    } catch (error) {
      if (error instanceof UnknownHostError) throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``, { code: 'E_UNKNOWN_HOST' });
      throw error;
    }
  }, { create: host !== undefined });
}

function printIssued(issued: Issued, json: boolean, group: string | undefined): void {
  if (json) {
    out(JSON.stringify({ host_id: issued.host_id, hostname: issued.hostname, token: issued.token, ...(group !== undefined ? { group: group === '' ? null : group } : {}) }));
  } else {
    // The token is the result (stdout), so the complete enroll command with it goes there
    // too; stderr (which may be logged) never carries it.
    const url = issued.agent_url ?? 'ws://SERVER:3100/ws/agent';
    const note = loopbackNote(url);
    // The enroll command does not hold the token (`--token -`: enroll asks for it), so that it
    // is not on the host's command line (ps) nor in its shell history.
    out(`host_id:  ${issued.host_id}\nhostname: ${issued.hostname}${group ? `\ngroup:    ${group}` : ''}\ntoken:    ${issued.token}\n\nRun these ${HINTS.where}:\n  ${enrollCommand(url, issued.host_id)}\n  ${runCommand(url)}${note === undefined ? '' : `\n${note}`}`);
    err(`The token is shown once and works for one enrollment: ${enrollTokenNote('it')}.${issued.agent_url === undefined ? ' Replace ws://SERVER:3100/ws/agent with the URL that serve printed.' : ''}`);
  }
}

/** The states `agent list` shows (STATE), as `--state` takes them. */
const LIST_STATES = ['NeverConnected', 'Active', 'Draining', 'Disconnected', 'Revoked', 'Decommissioned'] as const;

/** `--state A,B`: the states named, in any case; undefined when not given. */
function listStates(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const named = value.split(',').map((v) => v.trim()).filter((v) => v !== '');
  const states = named.map((v) => LIST_STATES.find((s) => s.toLowerCase() === v.toLowerCase()));
  const bad = named.filter((_, i) => states[i] === undefined);
  if (named.length === 0 || bad.length > 0) {
    throw new UsageError(`--state ${JSON.stringify(value)}: ${bad.length > 0 ? `${bad.map((b) => JSON.stringify(b)).join(', ')} is not a state; ` : ''}give one or more of ${LIST_STATES.join(', ')}, comma-separated`);
  }
  return states as string[];
}

/** What `agent list` shows as STATE: Revoked hosts that were decommissioned say so. */
export function displayState(a: Pick<AgentSummary, 'connection_state' | 'decommission_requested_at'>): string {
  if (a.connection_state === 'Revoked' && a.decommission_requested_at !== null) return 'Decommissioned';
  if (a.connection_state === 'Active' && a.decommission_requested_at !== null) return 'Draining';
  return a.connection_state;
}

/**
 * The last disconnect with its time. For an Active host it belongs to an earlier session:
 * marked "earlier", never shown as if it were the current state.
 */
export function displayDisconnect(a: Pick<AgentSummary, 'connection_state' | 'last_disconnect' | 'last_disconnect_reason' | 'last_handshake'>): string {
  if (a.last_disconnect_reason === null) return '-';
  const at = a.last_disconnect ?? '?';
  const earlier = a.connection_state === 'Active' && (a.last_handshake === null || a.last_disconnect === null || a.last_disconnect <= a.last_handshake);
  return `${earlier ? 'earlier: ' : ''}${a.last_disconnect_reason} at ${at}`;
}

export async function agentList(args: string[]): Promise<void> {
  const { values } = parse(args, { db: { type: 'string' }, json: { type: 'boolean' }, group: { type: 'string' }, groups: { type: 'boolean' }, state: { type: 'string' }, ...REMOTE_OPTIONS }, HELP.list);
  const states = listStates(values.state);
  if (states !== undefined && values.groups === true) throw new UsageError('--state lists agents; --groups lists groups: give one of them');
  if (values.group !== undefined && values.groups === true) {
    throw new UsageError(`--group lists the agents of one group; --groups lists every group: give one of them (agent list --group ${values.group} for its members)`);
  }
  const remote = remoteTarget(values);
  const { listAgents } = await repo();
  const ops = await import('../db/operator.repository.js');
  if (values.groups === true) {
    const groups = remote !== undefined ? await ok<GroupSummary[]>(remote, 'GET', '/admin/groups') : await withDb(values.db, (s) => ops.listGroups(s.db));
    if (values.json) {
      out(JSON.stringify(groups.map(groupView)));
      return;
    }
    if (groups.length === 0) {
      out('no groups; create one with: agent config --group NAME --set JSON');
      return;
    }
    table(['GROUP', 'MEMBERS', 'CONFIG', 'UPDATED'], groups.map((g) => [g.name, String(g.members), g.agent_config_json === null ? 'server default' : 'own', g.updated_at]));
    return;
  }
  let agents = remote !== undefined ? await listRemote(remote) : await withDb(values.db, (s) => listAgents(s.db));
  if (values.group !== undefined) agents = agents.filter((a) => a.group_name === values.group);
  if (states !== undefined) agents = agents.filter((a) => states.includes(displayState(a)));
  if (values.json) {
    out(JSON.stringify(agents.map((a) => ({ ...normalizeAgent(a), state: displayState(a) }))));
    return;
  }
  if (agents.length === 0) {
    const which = [values.group !== undefined ? `in group ${values.group}` : '', states !== undefined ? `in state ${states.join(' or ')}` : ''].filter(Boolean).join(' ');
    out(which !== '' ? `no agents ${which}` : 'no agents; add one with: agent issue --host HOSTNAME');
    return;
  }
  table(
    ['HOST_ID', 'LABEL', 'AGENT_HOSTNAME', 'GROUP', 'STATE', 'ACCEPTED_SEQ', 'LAST_SEEN', 'LAST_DISCONNECT', 'SERVER'],
    agents.map((a) => [a.host_id, a.hostname, a.agent_hostname ?? '-', a.group_name ?? '-', displayState(a), String(a.accepted_seq), a.last_seen ?? '-', displayDisconnect(a), a.server_id ?? '-']),
  );
}

/** Agents the admin API gives in one page (its largest `limit`). */
const LIST_PAGE = 10_000;

/**
 * Every agent through the admin API, a page at a time, in `agent list --db`'s order (hostname,
 * then host_id). One page of 10,000 used to be all: a fleet beyond it was listed in part, with
 * nothing said (DECISIONS I15).
 */
async function listRemote(remote: Parameters<typeof ok>[0]): Promise<AgentSummary[]> {
  const all = new Map<string, AgentSummary>();
  for (let offset = 0; ; offset += LIST_PAGE) {
    const page = await ok<AgentSummary[]>(remote, 'GET', `/admin/agents?sort=hostname&limit=${LIST_PAGE}&offset=${offset}`);
    // a host issued between two pages shifts the rest by one: listed once all the same
    for (const a of page) all.set(a.host_id, a);
    if (page.length < LIST_PAGE) return [...all.values()];
  }
}

/** A group as `agent list --groups --json` and GET /admin/groups show it. */
export function groupView(g: GroupSummary): Record<string, unknown> {
  return { name: g.name, members: g.members, agent_config_json: g.agent_config_json, config_apply_after: g.config_apply_after, created_at: g.created_at, updated_at: g.updated_at };
}

function table(head: string[], raw: string[][]): void {
  const rows = raw.map((r) => r.map(printable)); // AGENT_HOSTNAME and the like come from the agent
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  for (const r of [head, ...rows]) out(r.map((c, i) => c.padEnd(widths[i] as number)).join('  ').trimEnd());
}

export async function agentDelete(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' }, purge: { type: 'boolean' }, ...REMOTE_OPTIONS }, HELP.delete, true);
  const hostId = oneHost(positionals, HELP.delete);
  const remote = remoteTarget(values);
  if (remote !== undefined) {
    const r = await ok<{ message: string }>(remote, 'DELETE', `/admin/agents/${hostId}${values.purge === true ? '?purge=true' : ''}`);
    out(r.message);
    return;
  }
  const ops = await import('../db/operator.repository.js');
  const purged = await withDb(values.db, async (s) => {
    try {
      const gone = await ops.deleteAgent(s.db, hostId, { purge: values.purge === true });
      await (await import('../security/commands.js')).auditCli(s.db, 'agent.delete', hostId, { purge: values.purge === true });
      return gone;
    } catch (error) {
      if (error instanceof UnknownHostError) throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``, { code: 'E_UNKNOWN_HOST' });
      if (error instanceof ops.HostInUseError) throw new UsageError(`host ${hostId} is ${error.state}: only a revoked or never-connected host can be deleted; \`${PROG} agent revoke ${hostId}\` (or decommission) first`, { code: 'E_HOST_STATE' });
      throw error;
    }
  });
  out(deletedMessage(hostId, values.purge === true, purged));
}

/**
 * `agent group HOST_ID --set NAME | --clear`: moves a host into a config group, or out of its
 * group, keeping its token and session (PUT /admin/agents/{host_id}/group). The only way before
 * was `agent issue --host-id … --group`, which reissues the token: the running agent was closed
 * and stopped until someone enrolled it again on the host (H51).
 */
export async function agentGroup(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' }, set: { type: 'string' }, clear: { type: 'boolean' }, ...REMOTE_OPTIONS }, HELP.group, true);
  const hostId = oneHost(positionals, HELP.group);
  if ((values.set !== undefined) === (values.clear === true)) throw new UsageError(`give --set NAME (the group to move the host into) or --clear (out of its group)\n\n${HELP.group}`);
  const { GROUP_NAME } = await import('../db/operator.repository.js');
  const group = values.set ?? null;
  if (group !== null && !GROUP_NAME.test(group)) {
    throw new UsageError(`--set ${JSON.stringify(group)}: a group name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (--clear takes the host out of its group)`);
  }
  const remote = remoteTarget(values);
  if (remote !== undefined) {
    await ok(remote, 'PUT', `/admin/agents/${hostId}/group`, { group });
  } else {
    const ops = await import('../db/operator.repository.js');
    await withDb(values.db, async (s) => {
      await adminOp(hostId, () => ops.setHostGroup(s.db, hostId, group));
      await (await import('../security/commands.js')).auditCli(s.db, 'agent.group', hostId, { group });
    });
  }
  out(
    group === null
      ? `${hostId} is in no group now; its token and session are kept, and unless it has a config of its own it runs the server default (a connected agent gets it within 2 s)`
      : `${hostId} is in group ${group} now (created if new); its token and session are kept, and unless it has a config of its own it runs the group's (a connected agent gets it within 2 s)`,
  );
}

export function deletedMessage(hostId: string, purge: boolean, purged: { logs: number; metrics: number }): string {
  return purge ? `deleted ${hostId} with its ${purged.logs} log and ${purged.metrics} metric rows` : `deleted ${hostId}; its log and metric rows are kept (--purge deletes them)`;
}

function normalizeAgent(a: AgentSummary): AgentSummary {
  return { ...a, accepted_seq: Number(a.accepted_seq), control_rev: Number(a.control_rev), config_version: Number(a.config_version) };
}

function formatLog(l: LogView): string {
  const app = l.app_name ? ` ${l.app_name}${l.process_id ? `[${l.process_id}]` : ''}:` : '';
  return printable(`${l.seq} ${l.ts} ${l.severity.padEnd(7)} ${l.source}${app} ${l.message}`);
}

/** What `agent tail` shows: the stored-log search of the console (GET …/logs) and its live tail's filters. */
interface TailFilter {
  severity?: Severity;
  source?: string;
  q?: string;
  from?: string;
  to?: string;
}

/** The admin API's limit for the text searched (`q`). */
const GREP_MAX = 200;

/** `--since`/`--until`: an RFC 3339 time, or a duration before now (90s, 30m, 24h, 7d, as `agent issue --expires-in`). */
function timeArg(name: string, value: string | undefined, now: number, parseDuration: (text: string) => number | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ago = parseDuration(value);
  if (ago !== undefined) return new Date(now - ago).toISOString();
  const t = queryTime(value.trim());
  if (t === undefined) throw new UsageError(`${name} ${JSON.stringify(value)} is neither a duration before now (90s, 30m, 24h, 7d) nor a time such as 2026-05-16T20:00:00Z`);
  return t;
}

function tailFilter(severities: readonly Severity[], parseDuration: (text: string) => number | undefined, values: { severity?: string | undefined; source?: string | undefined; grep?: string | undefined; since?: string | undefined; until?: string | undefined; follow?: boolean | undefined }): TailFilter {
  const f: TailFilter = {};
  if (values.severity !== undefined) {
    const s = values.severity.toLowerCase() as Severity;
    if (!severities.includes(s)) throw new UsageError(`--severity ${JSON.stringify(values.severity)}: one of ${severities.join(', ')} (that level and the more severe ones are shown)`);
    f.severity = s;
  }
  if (values.source !== undefined) {
    if (values.source === '' || values.source.length > 1024) throw new UsageError('--source must be a source name as `agent tail` prints it (such as file:/var/log/syslog), 1-1024 characters');
    f.source = values.source;
  }
  if (values.grep !== undefined) {
    if (values.grep === '' || values.grep.length > GREP_MAX) throw new UsageError(`--grep must be 1-${GREP_MAX} characters (text the message contains, case-insensitive)`);
    f.q = values.grep;
  }
  const now = Date.now();
  const from = timeArg('--since', values.since, now, parseDuration);
  const to = timeArg('--until', values.until, now, parseDuration);
  if (to !== undefined && values.follow === true) throw new UsageError('--until and --follow do not go together: --follow shows rows as they come');
  if (from !== undefined && to !== undefined && from >= to) throw new UsageError(`--since (${from}) must be before --until (${to})`);
  if (from !== undefined) f.from = from;
  if (to !== undefined) f.to = to;
  return f;
}

/** The filter as the admin API's query parameters (leading '&' each). */
function filterQuery(f: TailFilter, withTimes: boolean): string {
  const p = new URLSearchParams();
  for (const k of withTimes ? (['severity', 'source', 'q', 'from', 'to'] as const) : (['severity', 'source', 'q'] as const)) {
    const v = f[k];
    if (v !== undefined) p.set(k, v);
  }
  return p.size > 0 ? `&${p}` : '';
}

export async function agentTail(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      db: { type: 'string' },
      n: { type: 'string', short: 'n' },
      follow: { type: 'boolean' },
      json: { type: 'boolean' },
      severity: { type: 'string' },
      source: { type: 'string' },
      grep: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      ...REMOTE_OPTIONS,
    },
    HELP.tail,
    true,
  );
  if (positionals.length !== 1) throw new UsageError(`give exactly one HOST_ID\n\n${HELP.tail}`);
  const hostId = (positionals[0] as string).toLowerCase();
  const n = int('-n', values.n) ?? 20;
  const [{ SEVERITIES, queryLogs, logMatches }, { parseDuration }] = await Promise.all([import('../admin/queries.js'), import('../security/enrollment.js')]);
  const filter = tailFilter(SEVERITIES, parseDuration, values);
  const remote = remoteTarget(values);
  if (remote !== undefined) return tailRemote(remote, hostId, n, values.follow === true, values.json === true, filter);
  const [{ getAgent }, { since, tail }] = await Promise.all([repo(), logsRepo()]);
  const filtered = Object.keys(filter).length > 0;
  const opened = await openDb(values.db);
  const lost = await watchLoss(values.db, opened);
  const storage = lost.storage;
  try {
    if ((await getAgent(storage.db, hostId)) === undefined) {
      throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``, { code: 'E_UNKNOWN_HOST' });
    }
    let rows: LogView[];
    // --follow goes on after the newest row stored when the command started, whatever was shown
    // (-n 0, or a filter whose last match is older); taken first, so that nothing committed
    // meanwhile is skipped or shown twice
    let last = 0;
    if (!filtered) {
      rows = await tail(storage.db, hostId, n);
      // none shown with -n 1 or more: there were none, so everything after 0 is new
      last = n > 0 ? (rows[rows.length - 1]?.seq ?? 0) : ((await tail(storage.db, hostId, 1))[0]?.seq ?? 0);
    } else {
      last = (await tail(storage.db, hostId, 1))[0]?.seq ?? 0;
      // the last n rows up to there that match, as the console's search finds them (newest first), shown oldest first
      rows = [];
      let beforeSeq = last + 1;
      while (rows.length < n && last > 0) {
        const page = await queryLogs(storage.db, hostId, { ...filter, limit: Math.min(1000, n - rows.length), beforeSeq });
        rows.push(...page.items);
        if (page.next_cursor === null) break;
        beforeSeq = Number(page.next_cursor);
      }
      rows.reverse();
    }
    if (values.json && !values.follow) out(JSON.stringify(rows));
    else for (const r of rows) out(values.json ? JSON.stringify(r) : formatLog(r));
    if (!values.follow) return;
    let stop = false;
    const onSignal = () => (stop = true);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const { isDatabaseUnreachable } = await import('../db/outage.js');
    const notes = followNotes(hostId);
    while (!stop) {
      let more: LogView[];
      try {
        more = await since(storage.db, hostId, last, 1000);
      } catch (error) {
        // PostgreSQL restarting, failing over: said once, polled again (as over --server, I25)
        if (!isDatabaseUnreachable(error)) throw error;
        notes.cut(`the database is out of reach (${(error as Error).message})`, last + 1, 'it');
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      notes.resumed(last + 1);
      for (const r of more) if (!filtered || logMatches(r, filter)) out(values.json ? JSON.stringify(r) : formatLog(r));
      if (more.length > 0) last = (more[more.length - 1] as LogView).seq;
      else await new Promise((r) => setTimeout(r, 250));
    }
  } catch (error) {
    throw lost.error(error);
  } finally {
    await storage.close();
  }
}

/** agent tail over the admin API: GET …/logs pages (newest first), then the SSE live tail. */
async function tailRemote(t: RemoteTarget, hostId: string, n: number, follow: boolean, json: boolean, filter: TailFilter): Promise<void> {
  const rows: LogView[] = [];
  const filtered = Object.keys(filter).length > 0;
  const newest = async (): Promise<number> => (await ok<{ items: LogView[] }>(t, 'GET', `/admin/agents/${hostId}/logs?limit=1`)).items[0]?.seq ?? 0;
  // as locally: --follow goes on after the newest row stored at the start, taken first when a filter
  // (or -n 0) means the rows shown may not end there
  let last = filtered || n === 0 ? await newest() : 0;
  let cursor: string | null = filtered ? String(last + 1) : null;
  while (rows.length < n && !(filtered && last === 0)) {
    const page: { items: LogView[]; next_cursor: string | null } = await ok(t, 'GET', `/admin/agents/${hostId}/logs?limit=${Math.min(1000, n - rows.length)}${filterQuery(filter, true)}${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    rows.push(...page.items);
    cursor = page.next_cursor;
    if (cursor === null || page.items.length === 0) break;
  }
  rows.reverse(); // oldest first, as locally
  if (json && !follow) out(JSON.stringify(rows));
  else for (const r of rows) out(json ? JSON.stringify(r) : formatLog(r));
  if (!follow) return;
  if (!filtered && n > 0) last = rows[rows.length - 1]?.seq ?? 0;
  // The live tail follows on across a server's restart (a rolling restart, a drain): a stream
  // the server ends, or a server out of reach, is opened again after the last seq shown, until
  // Ctrl-C. A refusal (unknown host, the admin token) ends the command as before.
  let stopped = false;
  let current: ReturnType<typeof followEvents> | undefined;
  let wake: () => void = () => undefined;
  const stop = () => {
    stopped = true;
    current?.stop();
    wake();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const notes = followNotes(hostId);
  let delayMs = FOLLOW_RETRY_MIN_MS;
  while (!stopped) {
    let opened = false;
    current = followEvents(
      t,
      `/admin/agents/${hostId}/logs/stream?after_seq=${last}&backlog=0${filterQuery(filter, false)}`,
      (_id, event, data) => {
        if (event !== 'log') return;
        const r = JSON.parse(data) as LogView;
        last = Math.max(last, r.seq);
        out(json ? JSON.stringify(r) : formatLog(r));
      },
      () => {
        opened = true;
        notes.resumed(last + 1);
        delayMs = FOLLOW_RETRY_MIN_MS;
      },
    );
    const ended = 'the server ended the live tail (stopping or restarting?)';
    let why: string;
    try {
      await current.done;
      why = stopped ? ended : ((await cutReason(t)) ?? ended);
    } catch (error) {
      if (stopped) break;
      // out of reach, or a server answering 5xx while it stops or its database is away: tried
      // again; a refusal (401, 403, 404: the token, the host) ends the command
      const status = (error as { status?: unknown }).status;
      if ((error as { code?: unknown }).code !== 'E_CONNECT' && !(typeof status === 'number' && status >= 500)) throw error;
      // a stream that was open and is reset (the server's process gone) ended as well; only a
      // server that never answered is "cannot reach"
      why = opened ? ((await cutReason(t)) ?? ended) : (error as Error).message;
    }
    if (stopped) break;
    notes.cut(why, last + 1, 'the server');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delayMs);
      wake = () => (clearTimeout(timer), resolve());
    });
    delayMs = Math.min(FOLLOW_RETRY_MAX_MS, delayMs * 2);
  }
}

/** /healthz's `database` values, said in words. */
const DATABASE_WORDS: Readonly<Record<string, string>> = {
  unreachable: 'out of reach',
  login_refused: "refusing the server's login",
  missing: 'gone (dropped or renamed)',
  read_only: 'read-only',
  disk_full: 'out of disk space',
  stalled: 'holding its commits (a lock, or overloaded)',
};

/**
 * Why the server cut a live tail, as its /healthz says (the server cuts a stream when a read
 * fails, without a word on the stream itself): its database away, or the server draining. Before,
 * a database outage read "the server ended the live tail (stopping or restarting?)".
 * Undefined when /healthz says nothing more (or does not answer within 3 s).
 */
async function cutReason(t: RemoteTarget): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const reply = await Promise.race([call(t, 'GET', '/healthz'), new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 3000)))]);
    if (reply === undefined) return undefined;
    const body = (typeof reply.body === 'object' && reply.body !== null ? reply.body : {}) as { status?: unknown; database?: unknown };
    if (reply.status === 503 && typeof body.database === 'string' && body.database !== 'ok') {
      return `the server's database is ${DATABASE_WORDS[body.database] ?? printable(body.database)} (its /healthz: "database": "${printable(body.database)}")`;
    }
    if (body.status === 'draining') return 'the server is stopping (draining its connections)';
    return undefined;
  } catch {
    return undefined; // the server gone as well: the usual words
  } finally {
    clearTimeout(timer);
  }
}

/** What a follow says on stderr when it is cut and when it goes on (I25), each once per cut. */
function followNotes(hostId: string): { cut(why: string, nextSeq: number, who: string): void; resumed(nextSeq: number): void } {
  let isCut = false;
  return {
    cut(why, nextSeq, who) {
      if (!isCut) err(`${PROG}: ${why}; following again from seq ${nextSeq} as soon as ${who} answers (Ctrl-C ends)`);
      isCut = true;
    },
    resumed(nextSeq) {
      if (isCut) err(`${PROG}: following ${hostId} again from seq ${nextSeq}`);
      isCut = false;
    },
  };
}

/** Delays between attempts to follow a host's live tail again after it was cut (`agent tail --follow --server`). */
const FOLLOW_RETRY_MIN_MS = 500;
const FOLLOW_RETRY_MAX_MS = 5000;

export async function agentRevoke(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' }, ...REMOTE_OPTIONS }, HELP.revoke, true);
  const hostId = oneHost(positionals, HELP.revoke);
  const remote = remoteTarget(values);
  if (remote !== undefined) {
    out((await ok<{ message: string }>(remote, 'POST', `/admin/agents/${hostId}/revoke`)).message);
    return;
  }
  const { revoke } = await repo();
  await withDb(values.db, async (s) => {
    await adminOp(hostId, () => revoke(s.db, hostId));
    await (await import('../security/commands.js')).auditCli(s.db, 'agent.revoke', hostId);
  });
  out(`revoked ${hostId}; a server holding its session closes it (4002) within 2 s`);
}

export async function agentRotate(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' }, 'grace-secs': { type: 'string' }, ...REMOTE_OPTIONS }, HELP.rotate, true);
  const hostId = oneHost(positionals, HELP.rotate);
  const remote = remoteTarget(values);
  if (remote !== undefined) {
    const grace = int('--grace-secs', values['grace-secs']);
    out((await ok<{ message: string }>(remote, 'POST', `/admin/agents/${hostId}/rotate`, grace !== undefined ? { grace_secs: grace } : {})).message);
    return;
  }
  const { getSetting } = await import('../db/settings.repository.js');
  const { requestRotation } = await repo();
  const { LIMITS } = await import('@cortex/agent-protocol');
  const given = int('--grace-secs', values['grace-secs']);
  await withDb(values.db, async (s) => {
    const recorded = await getSetting(s.db, 'rotation_grace_secs');
    const grace = given ?? (typeof recorded === 'number' ? recorded : LIMITS.rotation_grace_secs);
    await adminOp(hostId, () => requestRotation(s.db, hostId, grace));
    await (await import('../security/commands.js')).auditCli(s.db, 'agent.rotate', hostId, { grace_secs: grace });
    out(`rotation requested for ${hostId} (grace ${grace} s): its next hello gets a new token; a connected agent is asked to reconnect within 2 s`);
  });
}

export async function agentDecommission(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' }, 'drain-secs': { type: 'string' }, ...REMOTE_OPTIONS }, HELP.decommission, true);
  const hostId = oneHost(positionals, HELP.decommission);
  const { LIMITS } = await import('@cortex/agent-protocol');
  const drain = int('--drain-secs', values['drain-secs']) ?? LIMITS.decommission_drain_secs;
  if (drain > LIMITS.max_drain_seconds) throw new UsageError(`--drain-secs must be at most ${LIMITS.max_drain_seconds}`);
  const remote = remoteTarget(values);
  if (remote !== undefined) {
    out((await ok<{ message: string }>(remote, 'POST', `/admin/agents/${hostId}/decommission`, { drain_secs: drain })).message);
    return;
  }
  const { requestDecommission, getAgent, revoke } = await repo();
  await withDb(values.db, async (s) => {
    await adminOp(hostId, () => requestDecommission(s.db, hostId, drain));
    await (await import('../security/commands.js')).auditCli(s.db, 'agent.decommission', hostId, { drain_secs: drain });
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
