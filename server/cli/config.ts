// `cortex-server agent config`: a host's or a group's AgentConfig — set, clear, show.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type { AgentConfig } from '@cortex/agent-protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { UsageError, adminOp, err, oneHost, out, parse, repo, withDb } from './common.js';
import { HELP } from './help.js';
import { REMOTE_OPTIONS, ok, remoteTarget, where, type RemoteTarget } from './remote.js';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The server's max_batch_entries and default AgentConfig as `serve` recorded them. */
export async function serverDefaults(db: Kysely<Database>): Promise<{ cap: number; defaultConfig: AgentConfig; recorded: boolean }> {
  const [{ getSetting }, { LIMITS }, { builtinAgentConfig }] = await Promise.all([import('../db/settings.repository.js'), import('@cortex/agent-protocol'), import('../settings.js')]);
  const cap = await getSetting(db, 'max_batch_entries');
  const def = await getSetting(db, 'default_agent_config');
  const capN = typeof cap === 'number' ? cap : LIMITS.server_max_batch_entries;
  const recorded = typeof def === 'object' && def !== null;
  return { cap: capN, defaultConfig: recorded ? (def as AgentConfig) : builtinAgentConfig(capN), recorded };
}

/** Parses and checks a config given on the command line; every problem in one UsageError. */
export async function checkedConfig(text: string, what: string, cap: number): Promise<string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
  const { agentConfigIssues, formatIssues } = await import('../config-check.js');
  const issues = agentConfigIssues(parsed, cap);
  if (issues.length > 0) {
    throw new UsageError(
      `${what} is not a valid AgentConfig (${issues.length} problem${issues.length === 1 ? '' : 's'}; nothing changed):\n${formatIssues(issues)}\n` +
        'Give a complete config (see docs/configuration.md: one example per source kind).',
      // the advice is the last line, after the problems: not a hint after the first line's colon
      { code: 'E_CONFIG', hint: '' },
    );
  }
  return text;
}

/**
 * The text of `--set-file FILE`, read up to the admin API's body limit (1 MiB): a config is a
 * few KiB. A device, a pipe or a socket (`/dev/zero` was read without end until the process
 * aborted, std::bad_alloc) or a larger file is refused (exit 2) before anything is read;
 * the file is opened without blocking, so a FIFO with no writer cannot hang the command.
 */
async function readSetFile(file: string): Promise<string> {
  const { MAX_BODY_BYTES } = await import('../admin/http.js');
  const what = `--set-file ${file}`;
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new UsageError(`cannot read ${what}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { code: 'E_FILE_ACCESS' });
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new UsageError(`${what} is a folder; give the file that holds the config (JSON)`, { code: 'E_FILE_ACCESS', hint: '' });
    if (!st.isFile()) throw new UsageError(`${what} is not a regular file (a device, a pipe or a socket); give a file that holds the config (JSON), or the JSON itself with --set`, { code: 'E_FILE_ACCESS', hint: '' });
    if (st.size > MAX_BODY_BYTES) throw new UsageError(`${what} holds ${st.size} bytes: a config is at most ${MAX_BODY_BYTES} bytes (1 MiB, what the admin API takes); is it the right file?`, { code: 'E_CONFIG', hint: '' });
    // at most one byte more than the limit: a file that grew since fstat is refused as well
    const buf = Buffer.alloc(MAX_BODY_BYTES + 1);
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    if (n > MAX_BODY_BYTES) throw new UsageError(`${what} holds more than ${MAX_BODY_BYTES} bytes: a config is at most 1 MiB (what the admin API takes); is it the right file?`, { code: 'E_CONFIG', hint: '' });
    return buf.subarray(0, n).toString('utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${what}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { code: 'E_FILE_ACCESS' });
  } finally {
    closeSync(fd);
  }
}

export async function agentConfig(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      db: { type: 'string' },
      set: { type: 'string' },
      'set-file': { type: 'string' },
      clear: { type: 'boolean' },
      get: { type: 'boolean' },
      default: { type: 'boolean' },
      group: { type: 'string' },
      'apply-after': { type: 'string' },
      ...REMOTE_OPTIONS,
    },
    HELP.config,
    true,
  );
  const group = values.group;
  if (group !== undefined) {
    const { GROUP_NAME } = await import('../db/operator.repository.js');
    if (!GROUP_NAME.test(group)) throw new UsageError(`--group ${JSON.stringify(group)}: a group name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`);
    if (positionals.length > 0) throw new UsageError(`give HOST_ID or --group NAME, not both (a host joins a group with \`agent issue --host-id HOST_ID --group NAME\`)\n\n${HELP.config}`);
  }
  const remote = remoteTarget(values);
  const modes = [values.set !== undefined || values['set-file'] !== undefined, values.clear === true, values.get === true].filter(Boolean).length;
  if (values.default === true && positionals.length === 0 && group === undefined && modes === 0) {
    // `agent config --default`: the server default alone
    if (remote !== undefined) {
      out(JSON.stringify(await remoteDefault(remote)));
      return;
    }
    await withDb(values.db, async (s) => out(JSON.stringify((await serverDefaults(s.db)).defaultConfig)));
    return;
  }
  if (modes !== 1) throw new UsageError(`give exactly one of --set JSON (or --set-file FILE), --clear or --get\n\n${HELP.config}`);
  if (values.set !== undefined && values['set-file'] !== undefined) throw new UsageError('give --set JSON or --set-file FILE, not both');
  if (values['apply-after'] !== undefined && values.set === undefined && values['set-file'] === undefined) throw new UsageError('--apply-after goes with --set');
  if (values.default === true && values.get !== true) throw new UsageError('--default goes with --get (or alone)');
  const hostId = group === undefined ? oneHost(positionals, HELP.config) : undefined;

  let text: string | undefined = values.set;
  if (values['set-file'] !== undefined) text = await readSetFile(values['set-file']);
  let applyAfter: string | null = null;
  const aa = values['apply-after'];
  if (aa !== undefined) {
    const t = Date.parse(aa);
    if (!RFC3339.test(aa) || Number.isNaN(t)) throw new UsageError(`--apply-after ${JSON.stringify(aa)} is not an RFC 3339 date-time such as 2026-05-16T20:00:00Z`);
    applyAfter = new Date(t).toISOString();
  }

  if (remote !== undefined) {
    await configRemote(remote, { hostId, group, get: values.get === true, def: values.default === true, clear: values.clear === true, text, what: values['set-file'] !== undefined ? `--set-file ${values['set-file']}` : '--set', applyAfter });
    return;
  }
  await withDb(values.db, async (s) => {
    const { cap, defaultConfig, recorded } = await serverDefaults(s.db);
    const defaultNote = recorded ? 'the server default (as serve recorded it)' : 'the built-in server default (serve has not recorded one on this database yet)';
    const ops = await import('../db/operator.repository.js');
    if (values.get === true) {
      if (values.default === true) {
        out(JSON.stringify(defaultConfig));
        err(defaultNote);
        return;
      }
      if (group !== undefined) {
        const g = await ops.getGroup(s.db, group);
        if (g === undefined) throw new UsageError(`no group ${group}; create it with \`agent config --group ${group} --set JSON\``);
        out(g.agent_config_json ?? JSON.stringify(defaultConfig));
        err(g.agent_config_json === null ? `group ${group} has no config: its members without their own run ${defaultNote}` : `group ${group}'s config${g.config_apply_after ? ` (applies after ${g.config_apply_after})` : ''}`);
        return;
      }
      const { getAgent } = await repo();
      const a = await getAgent(s.db, hostId as string);
      if (a === undefined) throw new UsageError(`no agent with host_id ${hostId}; see \`cortex-server agent list\``, { code: 'E_UNKNOWN_HOST' });
      out(a.agent_config_json ?? JSON.stringify(defaultConfig));
      const from = a.host_config_json !== null ? "the host's own config" : a.agent_config_json !== null ? `group ${a.group_name}'s config` : defaultNote;
      err(`${from}${a.config_apply_after ? ` (applies after ${a.config_apply_after})` : ''}${a.group_name !== null ? `; group: ${a.group_name}` : ''}`);
      return;
    }
    const json = values.clear === true ? null : await checkedConfig(text as string, values['set-file'] !== undefined ? `--set-file ${values['set-file']}` : '--set', cap);
    if (group !== undefined) {
      const changed = await ops.setGroupConfig(s.db, group, json, applyAfter);
      await (await import('../security/commands.js')).auditCli(s.db, json === null ? 'group.config.clear' : 'group.config.set', `group:${group}`, applyAfter ? { apply_after: applyAfter } : undefined);
      out(
        json === null
          ? `config of group ${group} cleared: its ${changed} member(s) without their own config run the server default; connected ones get it within 2 s`
          : `config of group ${group} stored${applyAfter ? ` (applies after ${applyAfter})` : ''}; ${changed} member(s) without their own config get it (connected ones within 2 s)`,
      );
      if (json !== null) noteCustomSources(json);
      return;
    }
    const { setAgentConfig } = await repo();
    await adminOp(hostId as string, () => setAgentConfig(s.db, hostId as string, json, applyAfter));
    await (await import('../security/commands.js')).auditCli(s.db, json === null ? 'agent.config.clear' : 'agent.config.set', hostId as string, applyAfter ? { apply_after: applyAfter } : undefined);
    out(
      json === null
        ? `config of ${hostId} cleared: its group's config or the server default applies; a connected agent gets it within 2 s`
        : `config of ${hostId} stored${applyAfter ? ` (applies after ${applyAfter})` : ''}; a connected agent gets it within 2 s`,
    );
    if (json !== null) noteCustomSources(json);
  });
}

/**
 * A config whose custom sources run a command or listen at a socket: each host runs or listens
 * only where its own agent.json allows (DECISIONS H37); said on stderr so the operator knows why
 * a host may not start one.
 */
function noteCustomSources(text: string): void {
  const sources = (JSON.parse(text) as { log_sources?: unknown }).log_sources;
  if (!Array.isArray(sources)) return;
  // checkedConfig has validated the config: a custom command is a non-empty array of strings (or null)
  const custom = (sources as { kind: string; command?: string[] | null; socket?: string | null }[]).filter((x) => x.kind === 'custom');
  const programs = [...new Set(custom.flatMap((x) => (Array.isArray(x.command) ? [x.command[0]!] : [])))];
  const sockets = custom.flatMap((x) => (typeof x.socket === 'string' ? [x.socket] : []));
  const quoted = (list: string[]) => list.map((x) => JSON.stringify(x)).join(', ');
  const parts: string[] = [];
  if (programs.length > 0) parts.push(`"custom_commands" the program${programs.length > 1 ? 's' : ''} ${quoted(programs)}`);
  if (sockets.length > 0) parts.push(`"custom_socket_paths" ${quoted(sockets)} (or their folders)`);
  if (parts.length === 0) return;
  const what = parts.join(', and in ');
  err(`note: a host runs a custom source's command, or listens at its socket, only when its own agent.json allows it: list in ${what} on each host (then restart its agent); a host that does not shows "not allowed on this host" in cortex-agent status`);
}

async function remoteDefault(t: RemoteTarget): Promise<unknown> {
  const settings = await ok<{ default_agent_config?: unknown }>(t, 'GET', '/admin/settings');
  if (settings.default_agent_config === undefined) throw new Error(`${where(t)} does not show its default_agent_config in GET /admin/settings`);
  return settings.default_agent_config;
}

interface ConfigView {
  stored: unknown;
  effective: unknown;
  source: string;
  apply_after: string | null;
  /** A host's view: its group. */
  group?: string | null;
  /** A group's view (GET /admin/groups/{name}/config): its name. */
  name?: string;
}

/** agent config over the admin API (…/config of a host, /admin/groups/{name}/config of a group). */
async function configRemote(
  t: RemoteTarget,
  o: { hostId: string | undefined; group: string | undefined; get: boolean; def: boolean; clear: boolean; text: string | undefined; what: string; applyAfter: string | null },
): Promise<void> {
  const path = o.group !== undefined ? `/admin/groups/${encodeURIComponent(o.group)}/config` : `/admin/agents/${o.hostId}/config`;
  const who = o.group !== undefined ? `group ${o.group}` : (o.hostId as string);
  if (o.get) {
    if (o.def) {
      out(JSON.stringify(await remoteDefault(t)));
      err('the server default');
      return;
    }
    const v = await ok<ConfigView>(t, 'GET', path);
    out(JSON.stringify(v.effective));
    err(`${who}: ${v.source === 'host' ? "the host's own config" : v.source === 'group' ? `group ${v.group ?? v.name ?? o.group ?? ''}'s config` : v.source === 'default_until_apply_after' ? 'the server default until apply_after' : 'the server default'}${v.apply_after ? ` (applies after ${v.apply_after})` : ''}`);
    return;
  }
  if (o.clear) {
    await ok(t, 'DELETE', path);
    out(`config of ${who} cleared; connected agents get the config that applies now within 2 s`);
    return;
  }
  // Every problem at once before sending (the server checks again, and checks its cap).
  const text = await checkedConfig(o.text as string, o.what, Number.MAX_SAFE_INTEGER);
  await ok(t, 'PUT', path, { config: JSON.parse(text) as unknown, apply_after: o.applyAfter });
  out(`config of ${who} stored${o.applyAfter ? ` (applies after ${o.applyAfter})` : ''}; connected agents get it within 2 s`);
  noteCustomSources(text);
}
