// `cortex-server probe`: runs a probe on a connected host through the admin API.
import { UsageError, err, int, out, parse } from './common.js';
import { formatCliError } from '../../common/errors.js';
import { shellQuote } from '../../common/shell-quote.js';
import { printable } from '../../common/printable.js';
import { HELP, PROG } from './help.js';
import { REMOTE_OPTIONS, call, checkAdminToken, remoteTarget, replyError, where } from './remote.js';

export async function probeCmd(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    { args: { type: 'string' }, 'timeout-ms': { type: 'string' }, url: { type: 'string' }, 'admin-token': { type: 'string' }, db: { type: 'string' }, ...REMOTE_OPTIONS },
    HELP.probe,
    true,
  );
  if (positionals.length !== 2) throw new UsageError(`give HOST_ID and PROBE\n\n${HELP.probe}`);
  const [hostId, probe] = positionals as [string, string];
  if (values.url !== undefined && values.server !== undefined) throw new UsageError('--url and --server are the same option: give one');
  const target = remoteTarget({ ...values, db: undefined, server: values.server ?? values.url });
  if (target === undefined) throw new UsageError(`--server is required (or $CORTEX_SERVER; --url is its older name): the server's admin address, e.g. --server http://127.0.0.1:3100\n\n${HELP.probe}`);
  // --admin-token T still works (it shows in `ps`; prefer --admin-token-file or the environment)
  if (values['admin-token'] !== undefined && values['admin-token-file'] === undefined) {
    checkAdminToken(values['admin-token'], '--admin-token');
    target.token = values['admin-token'];
  }
  let probeArgs: unknown = {};
  if (values.args !== undefined) {
    try {
      probeArgs = JSON.parse(values.args);
    } catch (error) {
      throw new UsageError(`--args is not valid JSON: ${(error as Error).message}`);
    }
  }
  const timeout_ms = int('--timeout-ms', values['timeout-ms']) ?? 10_000;
  // --db, as on every other command (DECISIONS K2): a host unknown to it is refused before any call.
  if (values.db !== undefined) {
    const [{ getAgent }, { withDb }] = await Promise.all([import('../db/agents.repository.js'), import('./common.js')]);
    const known = await withDb(values.db, async (st) => (await getAgent(st.db, hostId)) !== undefined);
    if (!known) throw new UsageError(`no agent with host_id ${hostId} in ${values.db}; see \`${PROG} agent list --db ${shellQuote(values.db)}\``, { code: 'E_UNKNOWN_HOST' });
  }
  const path = `/admin/agents/${encodeURIComponent(hostId)}/probe`;
  const reply = await call(target, 'POST', path, { probe, args: probeArgs, timeout_ms });
  const e = (reply.body as { error?: unknown } | null)?.error;
  if (reply.status >= 400 && (typeof e !== 'object' || e === null)) {
    // a refusal that is not the admin API's JSON (a reverse proxy's error page, a wrong path): said as every admin command says it
    throw replyError(target, 'POST', path, reply);
  }
  if (typeof reply.body !== 'object' || reply.body === null) throw new Error(`HTTP ${reply.status} from ${where(target)} without a JSON body: ${String(reply.body).slice(0, 200)}`);
  out(JSON.stringify(reply.body));
  if (reply.status === 200) return;
  // The {"error": …} above is the result (stdout, exit 1); stderr says it as every command says
  // an error: the code, the JSON-RPC error and why (data.reason: "host … is not connected (state
  // Disconnected)"), or the admin API's own words for a 401 or 403.
  // the hint fits the failure: a probe that ran and failed, or a host that did not answer in
  // time, is not a matter of --server or the admin token (those keep the catalogue's hint)
  const hint = reply.status === 502 ? agentErrorHint((e as { code?: unknown }).code) : reply.status === 504 ? 'the host did not answer in time: check it, or give a longer --timeout-ms' : undefined;
  err(`${PROG}: ${formatCliError('E_ADMIN_API', probeFailure(replyError(target, 'POST', path, reply).message, e as { code?: unknown; data?: unknown }), hint)}`);
  process.exitCode = 1;
}

/** What a 502 (the agent's own JSON-RPC error, passed on) means, by the agent's code. */
function agentErrorHint(code: unknown): string {
  switch (code) {
    case -32602:
      return "the host's agent refused --args: see the reason for what is wrong (each probe's arguments: generated/PROTOCOL.md, Probes)";
    case -32010:
      return "the host's agent does not have this probe (a site build without it, or an older agent)";
    case -32603:
      return "the probe failed inside the host's agent (a bug: the agent logged it at error level; report it)";
    default:
      return 'the probe ran on the host and failed: see the reason';
  }
}

/** `HTTP 404: UnknownHost` with the JSON-RPC code and the reason the error's data gives. */
function probeFailure(message: string, e: { code?: unknown; data?: unknown }): string {
  const data = (typeof e.data === 'object' && e.data !== null ? e.data : {}) as { reason?: unknown; message?: unknown; timeout_ms?: unknown; exit_code?: unknown; stderr?: unknown };
  const why =
    typeof data.reason === 'string'
      ? data.reason
      : typeof data.message === 'string'
        ? data.message
        : typeof data.timeout_ms === 'number'
          ? `no answer in ${data.timeout_ms} ms`
          : typeof data.stderr === 'string' && data.stderr.trim() !== ''
            ? `${typeof data.exit_code === 'number' ? `exit code ${data.exit_code}, ` : ''}${data.stderr.trim().slice(0, 200)}` // a probe that could not run has exit_code null
            : typeof data.exit_code === 'number'
              ? `exit code ${data.exit_code}`
              : undefined;
  const [status, ...rest] = message.split(': ');
  const text = rest.join(': ');
  const rpc = typeof e.code === 'number' && e.code < 0 ? `${e.code} ` : '';
  return `${status}: ${rpc}${text}${why !== undefined && !text.includes(why) ? `: ${printable(why)}` : ''}`;
}
