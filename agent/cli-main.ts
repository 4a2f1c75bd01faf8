// cortex-agent: enroll | run | status (DESIGN.md section 3). The commands themselves; the
// executable entry is cli.ts (it only calls main). A site-specific build adds its own probes
// with its own entry (agent/README.md "Site-specific probes"):
//
//   import { runCli } from '<dist>/agent/cli-main.js';
//   runCli({ extraProbes: [myProbe] });
//
// Results on stdout; logs (JSON) and diagnostics on stderr; --json prints exactly one
// JSON value on stdout. Exit 0 success, 2 bad usage or invalid input (nothing
// changed), 1 any other failure. Tokens never appear in output or messages.

import { accessSync, constants as fsConstants, existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { LIMITS, isTerminalState, type AgentState } from '@cortex/agent-protocol';
import type { Agent } from './agent.js';
import { sourceStatusWithPositions } from './agent-sources.js';
import { MAX_SOCKET_CLIENTS } from './sources/custom.source.js';
import { defaultMinFreeBytes, readBufferSnapshot, statfsFree } from './buffer/buffer.js';
import { BufferStorageError } from './buffer/errors.js';
import { BUFFER_CHECK_USAGE, bufferCheck, bufferUncheckable, emptyBuffer, emptyBufferText, foreignBufferTables, foreignBufferText } from './buffer-check.js';
import { lostText, readRecovery } from './buffer/heal.js';
import { EnrollError, agentFilesOwnedByOthers, becomeFolderOwner, enroll, stateFolderOwner } from './enroll.js';
import { AGENT_VERSION } from './handshake.js';
import { versionText } from '../common/version.js';
import { startAgent } from './index.js';
import { ConfigStore } from './config-store.js';
import { keepStateFilesOwned, misownedAgentFiles, misownedText, type MisownedFiles, type StateOwnerKeeper } from './cli-state-owner.js';
import { createLogger, logCrashes, scrubSecret, type LogLevel } from './log.js';
import { RunLockHeldError, acquireRunLock, runLockHolder } from './run-lock.js';
import { CLOCK_WARN_MS, DEFAULT_HELLO_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, clockOffsetText } from './session.js';
import { checkServerUrl } from './socket.js';
import {
  BUFFER_DB_FILE,
  StateDirError,
  normalizeHostId,
  readAgentSettings,
  readHostId,
  type AgentSettings,
  readOnlyStateDirText,
  settingsServerUrls,
  notAFolderText,
  stateDirDeniedText,
  stateDirReadDenied,
  stateDirWriteProblem,
  statePaths,
  smallBufferCapText,
  unknownAgentSettingsKeys,
  unknownAgentSettingsText,
} from './state-dir.js';
import { STATUS_FILE, processAlive, readStatusFileChecked } from './status-file.js';
import { STATUS_REFRESH_MS } from './status-writer.js';
import { TokenInputError, readTokenInput } from './token-input.js';
import { reportHangup } from './hangup.js';
import { applyAgentV8Flags } from './v8-flags.js';
import { TokenStoreError, readToken } from './token-store.js';
import type { ProbeDefinition } from './probes/index.js';
import { ERROR_CODES, UsageError, cliErrorJson, describeCliError, formatCliError, installProblem, isDiskFullCode, tidyTlsText, wantsJson, type ErrorCodeName } from '../common/errors.js';
import { shellQuote } from '../common/shell-quote.js';
import { unknownOptionText } from '../common/cli-args.js';
import { printable } from '../common/printable.js';
import { stdoutIsBannerOnly, watchStdout } from '../common/stdout.js';
import { currentUserName, endIfHungUp, onSighup, refuseInspectorSignal } from '../common/process.js';

const USAGE: Record<string, string> = {
  main: `Usage: cortex-agent <command> [options]

Commands:
  enroll   enroll this host with a one-time token (writes DIR/token, DIR/host_id, DIR/agent.json)
  run      run the agent (long-running)
  status   show the agent's state, sequence numbers, buffer and sources
  buffer check   check buffer.db (integrity and invariants)
  version, --version   print the versions of this agent, the protocol and Node (--json)

Run "cortex-agent <command> --help" for the options of a command.
`,
  enroll: `Usage: cortex-agent enroll --server URL [--server URL ...] (--token-file FILE | --token - | --token TOKEN) --host-id UUID --state-dir DIR [--allow-insecure] [--ca FILE] [--json]

Performs agent.hello with the one-time token, atomically writes the rotated token to
DIR/token (mode 0600), DIR/host_id and DIR/agent.json, and exits 0.
  --server URL       full WebSocket URL, used as given (e.g. wss://logs.example.com/ws/agent);
                     repeat it for several servers on one database: all are kept in
                     DIR/agent.json and "run" tries them in a shuffled order on each reconnect
  --token-file FILE  read the one-time enrollment token (from "agent issue") from FILE
  --token -          read it from stdin (at a terminal: asks for it, not shown, ends at Enter)
  --token TOKEN      the token itself (visible to other local processes while enroll runs)
  --host-id UUID     the host_id the token was issued for
  --state-dir DIR    agent state directory (created if missing)
  --allow-insecure   allow a ws:// URL to a loopback host (127.0.0.0/8, ::1, localhost; testing);
                     ws:// to any other host is refused even with it: use wss://
  --ca FILE          extra CA certificate (PEM) for wss://, added to the system CAs
  --replace          the state folder is enrolled as another host: start it afresh for this one
                     (that host's buffer, token and positions are moved to DIR/replaced-<host_id>-<time>/)
  --json             print the result as one JSON object
Exit codes: 0 enrolled; 2 bad usage, or the folder is another host's (without --replace); 1 failure (e.g. -32001 AuthFailed, -32002 TokenRevoked,
-32003 AgentVersionUnsupported, -32005 TokenRotationRequired, connection refused); no token is
written on failure.
`,
  run: `Usage: cortex-agent run --state-dir DIR [--allow-insecure] [--log-level LEVEL]

Runs the agent: connects to the server in DIR/agent.json, ships buffered entries, sends
heartbeats and metrics, follows config updates, reconnects with backoff. SIGTERM/SIGINT
close the connection cleanly (reason final_seq=<n>) and exit 0. SIGHUP reads DIR/agent.json
again and logs what changed (applied at the next start); the agent goes on (a terminal that
closes stops it as SIGTERM does). Exits 1 when the token is rejected for good (FatalAuth) or
revoked.
  --state-dir DIR              state directory written by enroll
  --allow-insecure             allow a ws:// server URL to a loopback host (never to another host)
  --log-level LEVEL            fatal|error|warn|info|debug|trace|silent (default info)
  --heartbeat-interval-ms N    override the server's heartbeat interval (testing)
  --ping-watchdog-ms N         no server ping for N ms → reconnect (default ${LIMITS.ping_interval_ms * LIMITS.missed_pongs})
  --backoff-base-ms N          reconnect backoff base (default 1000)
  --backoff-cap-ms N           longest reconnect backoff, not below the base (default 60000)
  --hello-timeout-ms N         no hello answer for N ms → close and reconnect (default ${DEFAULT_HELLO_TIMEOUT_MS})
  --request-timeout-ms N       no answer to a logs.push for N ms → the connection is taken as dead:
                               closed, reconnected, the entries sent again; a metrics.push that
                               long unanswered is dropped (default ${DEFAULT_REQUEST_TIMEOUT_MS})
  --source-poll-ms N           how often file sources check their files (default 250)

Log sources come from the server's config (log_sources: file, journald, ...), added and
removed live. The file.tail probe reads only below agent.json's probe_file_tail_paths
(default ["/var/log"]); a custom source runs only the commands of agent.json's custom_commands
and listens only at its custom_socket_paths, both empty unless agent.json lists them.
`,
  buffer: BUFFER_CHECK_USAGE,
  version: `Usage: cortex-agent --version [--json]   (or: cortex-agent version [--json])

One line: cortex-agent VERSION (protocol VERSION, node VERSION, PLATFORM-ARCH); exit 0.
  --json   print {"name", "version", "protocol", "node", "platform"} as one JSON object
`,
  status: `Usage: cortex-agent status --state-dir DIR [--json]

Shows the agent's state (works while "run" is running): state, next_seq, acked_seq,
queue_depth, buffer_bytes, sources (kind, path or name, position, last error), last_error.
  --state-dir DIR   state directory
  --json            print one JSON object
`,
};


interface Parsed {
  flags: Map<string, string | true>;
  /** Every value of each option, in order (for options that may be repeated). */
  lists: Map<string, string[]>;
}

const BOOLEAN_FLAGS = new Set(['replace', 'allow-insecure', 'json', 'help']);

function parseArgs(args: string[], allowed: readonly string[]): Parsed {
  const flags = new Map<string, string | true>();
  const lists = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-h') {
      flags.set('help', true);
      continue;
    }
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument "${a}"`);
    let name = a.slice(2);
    let value: string | undefined;
    const eq = name.indexOf('=');
    if (eq >= 0) {
      value = name.slice(eq + 1);
      name = name.slice(0, eq);
    }
    if (!allowed.includes(name) && name !== 'help') throw new UsageError(unknownOptionText(`--${name}`, allowed));
    if (BOOLEAN_FLAGS.has(name)) {
      if (value !== undefined) throw new UsageError(`--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    if (value === undefined) {
      value = args[++i];
      // The next argument is the value unless it is another option of this command: a
      // base64url token may itself start with "-" or "--".
      const next = value?.startsWith('--') ? value.slice(2).split('=')[0]! : undefined;
      if (value === undefined || (next !== undefined && (allowed.includes(next) || next === 'help'))) throw new UsageError(`--${name} needs a value`);
    }
    flags.set(name, value);
    lists.set(name, [...(lists.get(name) ?? []), value]);
  }
  return { flags, lists };
}

/** Every value given for a repeatable option (empty when absent). */
function all(p: Parsed, name: string): string[] {
  return p.lists.get(name) ?? [];
}

function str(p: Parsed, name: string, required: true): string;
function str(p: Parsed, name: string, required?: false): string | undefined;
function str(p: Parsed, name: string, required = false): string | undefined {
  const v = p.flags.get(name);
  if (v === undefined) {
    if (required) throw new UsageError(`--${name} is required`);
    return undefined;
  }
  return v === true ? undefined : v;
}

function int(p: Parsed, name: string): number | undefined {
  const v = str(p, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`--${name} must be a non-negative integer`);
  return n;
}

function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** What `run` prints when the agent cannot start: an incomplete install as such (its addon missing), else E_AGENT_START. */
function startErrorText(err: unknown): string {
  const install = installProblem(err);
  return install !== undefined ? formatCliError('E_INSTALL_INCOMPLETE', install) : formatCliError('E_AGENT_START', (err as Error).message);
}

function diag(text: string): void {
  process.stderr.write(`cortex-agent: ${text}\n`);
}

/** Whether the command line being run asked for JSON (--json): set by main. */
let jsonOutput = false;

/**
 * Says an error: one line on stderr and, for a command line with `--json`, `{"error": {"code",
 * "message", "hint"}}` on stdout too (common/errors.ts cliErrorJson), so that a script reading
 * stdout gets the code and what to do rather than nothing. The caller returns the exit status.
 */
function fail(code: ErrorCodeName, message: string, hint?: string): void {
  diag(formatCliError(code, message, hint));
  if (jsonOutput) out(cliErrorJson(code, message, hint));
}

async function cmdEnroll(args: string[]): Promise<number> {
  const p = parseArgs(args, ['server', 'token', 'token-file', 'host-id', 'state-dir', 'allow-insecure', 'ca', 'json', 'log-level', 'replace']);
  if (p.flags.has('help')) return help('enroll');
  str(p, 'server', true);
  const servers = all(p, 'server');
  let input: Awaited<ReturnType<typeof readTokenInput>>;
  try {
    input = await readTokenInput({ token: str(p, 'token'), tokenFile: str(p, 'token-file') });
  } catch (err) {
    if (err instanceof TokenInputError && err.reason === 'canceled') {
      diag(err.message);
      return 130; // as a shell reports a command ended by Ctrl-C
    }
    if (err instanceof TokenInputError) throw new UsageError(err.message, { code: 'E_TOKEN', ...(err.hint !== undefined ? { hint: err.hint } : {}) });
    throw err;
  }
  const token = input.token;
  const hostIdRaw = str(p, 'host-id', true);
  const stateDir = resolve(str(p, 'state-dir', true));
  const allowInsecure = p.flags.has('allow-insecure');
  const ca = str(p, 'ca');
  for (const server of servers) {
    const urlProblem = checkServerUrl(server, allowInsecure);
    if (urlProblem) throw new UsageError(urlProblem);
  }
  const hostId = normalizeHostId(hostIdRaw);
  if (hostId === null) throw new UsageError('--host-id must be a UUID (as printed by "agent issue")');
  if (ca !== undefined && !existsSync(ca)) throw new UsageError(`--ca ${ca}: file not found`, { code: 'E_FILE_ACCESS' });
  const logger = createLogger({ level: logLevel(p) });
  if (input.from === 'argument') diag('note: a token on the command line can be read by every local process (/proc/<pid>/cmdline); prefer --token-file FILE or --token - (stdin)');
  // Run as root into a state folder another user owns (the service's): enroll as that user, so
  // that the files it writes are that user's — the agent service runs as it (DECISIONS I34).
  // The token was read above, as root (a token file only root may read still works).
  const owner = stateFolderOwner(stateDir);
  if (owner !== null) {
    const sudo = `sudo -u ${shellQuote(owner.name)} cortex-agent enroll … --token - < TOKEN_FILE`;
    const others = agentFilesOwnedByOthers(stateDir, owner.uid);
    if (others.length > 0) {
      fail(
        'E_FILE_ACCESS',
        `the state folder ${stateDir} belongs to ${owner.name}, but ${others.join(', ')} in it belong${others.length === 1 ? 's' : ''} to another user (left by a command run as root?): the agent, run as ${owner.name}, could not use ${others.length === 1 ? 'it' : 'them'} (nothing was enrolled; the token was not sent and is still good)`,
        `give them to ${owner.name} (chown -R ${shellQuote(owner.named ? `${owner.name}:` : String(owner.uid))} ${shellQuote(stateDir)}), then run the same enroll again`,
      );
      return 1;
    }
    try {
      becomeFolderOwner(owner);
    } catch (err) {
      fail(
        'E_FILE_ACCESS',
        `the state folder ${stateDir} belongs to ${owner.name}, and enroll could not become that user to write it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); nothing was enrolled (the token was not sent and is still good)`,
        `run enroll as that user: ${sudo}`,
      );
      return 1;
    }
    diag(`note: the state folder ${stateDir} belongs to ${owner.name}: enrolling as ${owner.name} (as with sudo -u ${shellQuote(owner.name)}), so that the agent, run as that user, can use the files it writes`);
    if (ca !== undefined) {
      try {
        accessSync(ca, fsConstants.R_OK);
      } catch (err) {
        fail(
          'E_FILE_ACCESS',
          `--ca ${ca}: ${owner.name}, the state folder's owner and the user the agent runs as, may not read it (${(err as NodeJS.ErrnoException).code ?? 'denied'}); nothing was enrolled (the token was not sent and is still good)`,
          `let ${owner.name} read it (the agent reads it at every start), then run the same enroll again`,
        );
        return 1;
      }
    }
  }
  try {
    const r = await enroll({ serverUrl: servers[0]!, serverUrls: servers, token, hostId, stateDir, allowInsecure, caFile: ca ? resolve(ca) : null, logger, replace: p.flags.has('replace') });
    if (r.replaced !== undefined) diag(`note: the folder was enrolled as host ${r.replaced.host_id}: its files (buffer, token, positions) were moved to ${r.replaced.moved_to}`);
    if (r.kept_settings !== undefined) diag(`note: kept from ${statePaths(stateDir).agentJson}: ${r.kept_settings.join(', ')}`);
    if (r.settings_rewritten !== undefined) diag(`note: ${statePaths(stateDir).agentJson} was written afresh: the one there was refused (${r.settings_rewritten})`);
    for (const w of r.warnings ?? []) diag(`warning: ${w}`);
    if (p.flags.has('json')) out(JSON.stringify(r));
    else out(`enrolled host ${r.host_id} with ${r.server_url}; state dir ${r.state_dir}\nstart the agent with: cortex-agent run --state-dir ${shellQuote(r.state_dir)}`);
    return 0;
  } catch (err) {
    // The state folder is written before the hello: a folder this user may not write spent nothing.
    if (err instanceof StateDirError && (err.code === 'EEXIST' || err.code === 'ENOTDIR')) {
      fail('E_FILE_ACCESS', `${notAFolderText(stateDir, err.code === 'ENOTDIR')} (the token was not sent and is still good)`);
      return 1;
    }
    if (err instanceof StateDirError && (err.code === 'EACCES' || err.code === 'EPERM')) {
      fail('E_FILE_ACCESS', `${stateDirDeniedText(stateDir, err.code, 'write')} (the token was not sent and is still good)`);
      return 1;
    }
    // The buffer's addon could not load (a packaged install missing lib/better_sqlite3.node): nothing was sent.
    const install = installProblem(err);
    // Any other failure to write the state folder (host_id, agent.json, the buffer, moving a
    // replaced host's files) comes before the hello: the token was not sent and is still good.
    // It read E_ENROLL "get a new token".
    const folder = install === undefined ? stateFolderWriteProblem(err) : null;
    if (folder !== null) {
      const full = folder.code !== undefined && isDiskFullCode(folder.code);
      fail(
        full ? 'E_DISK_FULL' : 'E_FILE_ACCESS',
        `cannot write the state folder ${stateDir}: ${folder.message} (nothing was enrolled; the token was not sent and is still good)`,
        full
          ? `free space on the state folder's disk (df ${shellQuote(stateDir)}), then run the same enroll again`
          : folder.code === 'EISDIR'
            ? 'a folder stands where the file named should be: move it aside, then run the same enroll again'
            : `check that ${stateDir} and its files are files and folders this user (${currentUserName()}) may write, then run the same enroll again`,
      );
      return 1;
    }
    if (install !== undefined) {
      fail('E_INSTALL_INCOMPLETE', `${install} (the token was not sent and is still good)`);
      return 1;
    }
    // Refused before anything was sent: the folder is in use, or is another host's.
    if (err instanceof EnrollError && (err.code === 'agent_running' || err.code === 'enrolled_as_other')) {
      fail(err.code === 'agent_running' ? 'E_RUN_LOCK' : 'E_STATE_DIR_ENROLLED', `${err.message} (the token was not sent and is still good)`);
      return err.code === 'agent_running' ? 1 : 2;
    }
    const msg = tidyTlsText(err instanceof EnrollError ? err.message : `enrollment failed: ${(err as Error).message}`);
    // No server took the WebSocket upgrade: the token (sent only in agent.hello, after it) never
    // left this host and still works; what to check is the server and the URL, not the token.
    const unreachable = err instanceof EnrollError && err.code === 'upgrade_failed';
    const text = unreachable ? `${msg} (the token was not sent and is still good)` : msg;
    // A refusal for a known reason says what to do in its own words: no second hint after it.
    const advised = err instanceof EnrollError && typeof err.code === 'number' && !text.startsWith('enrollment rejected');
    fail(unreachable ? 'E_CONNECT' : 'E_ENROLL', text.split(token).join('[redacted]'), unreachable ? connectHint(msg, ca !== undefined, servers[0]!) : advised ? '' : undefined);
    return 1;
  }
}

/**
 * A failure of enroll to write the state folder before the hello, or null: a StateDirError
 * (host_id, agent.json, the folder), a BufferStorageError (the buffer is opened before the
 * hello; nothing after it throws one), or a file system error (moving a replaced host's files).
 * After the hello, the one write that can fail is the token's (a TokenStoreError): not this.
 */
function stateFolderWriteProblem(err: unknown): { message: string; code: string | undefined } | null {
  if (err instanceof StateDirError || err instanceof BufferStorageError) return { message: err.message, code: err.code };
  const e = err as { code?: unknown; syscall?: unknown; message?: unknown } | null;
  if (err instanceof Error && !(err instanceof EnrollError) && !(err instanceof TokenStoreError) && typeof e?.code === 'string' && typeof e.syscall === 'string') {
    return { message: err.message, code: e.code };
  }
  return null;
}

/**
 * What to check when no server took the upgrade: the TLS trust when that is what failed; the
 * scheme when one side spoke TLS and the other did not; the path when the server has no
 * agent endpoint there.
 */
export function connectHint(message: string, caGiven: boolean, serverUrl: string): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(serverUrl);
  } catch {
    url = undefined;
  }
  if (url !== undefined) {
    const other = (scheme: string) => `${scheme}//${url.host}${url.pathname}`;
    // OpenSSL's words for a TLS handshake answered in plain HTTP
    if (url.protocol === 'wss:' && /wrong version number|packet length too long|unknown protocol|EPROTO/i.test(message)) {
      return `the server does not speak TLS on that port (it answered in plain text): use ${other('ws:')} with --allow-insecure, or start serve there with --tls-cert and --tls-key`;
    }
    if (url.protocol === 'ws:' && /socket hang up|ECONNRESET/i.test(message)) {
      return `the server closed the connection at once: if it serves TLS on that port (serve --tls-cert), use ${other('wss:')}; otherwise check that it runs and that the URL is right`;
    }
    const redirect = /HTTP 30[1278]\b/.exec(message)?.[0];
    if (redirect !== undefined && url.protocol === 'ws:') {
      return `the server answers with a redirect (${redirect}), as a reverse proxy does from http to https: use ${other('wss:')}`;
    }
    if ((redirect !== undefined || /HTTP 404/.test(message)) && url.pathname !== '/ws/agent') {
      const path = url.pathname.replace(/\/+$/, '');
      // under a reverse proxy's path prefix (DECISIONS I26) the URL is https://HOST/PREFIX/ws/agent
      return path.endsWith('/ws/agent')
        ? `nothing answers as the agent endpoint at ${url.pathname} (${redirect ?? 'HTTP 404'}): check the path; behind a reverse proxy, it is the path the proxy serves the server under, then /ws/agent`
        : `the server has no agent endpoint at ${url.pathname}: the agent's URL ends in /ws/agent (${url.protocol}//${url.host}${path}/ws/agent)`;
    }
  }
  if (/HTTP 429\b/.test(message)) {
    // the server's failed-hello throttle or its per-address upgrade limit: not a server that is down
    return 'the server throttles this address: after 5 failed hellos (a wrong, spent or revoked token) or too many connection attempts in a minute it refuses upgrades for a while (Retry-After) — check the token (a one-time token works once: cortex-server agent issue --host-id HOST_ID gives a new one) and try again after the wait';
  }
  if (/altnames|does not match certificate/i.test(message)) return "the URL's host name is not one the server's certificate names: use a name it lists (openssl x509 -noout -ext subjectAltName -in CERT)";
  if (/self[- ]signed|unable to (verify|get local issuer)|certificate (has expired|is not yet valid)|CERT_/i.test(message)) {
    return caGiven ? 'the --ca file given does not vouch for the server certificate: give the CA that signed it' : "the server's certificate is not trusted here: give the CA that signed it (or a self-signed certificate itself) with --ca FILE";
  }
  return undefined; // the catalogue's: check that the server runs and that the URL is right
}

function logLevel(p: Parsed): LogLevel {
  const l = str(p, 'log-level') ?? 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(l)) throw new UsageError(`--log-level ${l} is not a level`);
  return l as LogLevel;
}

/** What a site-specific build adds to the `cortex-agent` command (see the file comment). */
export interface CliExtensions {
  /**
   * Probes besides the built-in ones, offered in capabilities.supported_probes and run by
   * `run` (names must not clash with the built-ins). A probe reports a failure of what it
   * probes by throwing ProbeExecutionFailedError (-32011); anything else it throws that is no
   * RpcError is answered -32603 InternalError and logged as a bug (DECISIONS F8).
   */
  extraProbes?: readonly ProbeDefinition[];
}

/** Why `run` cannot start on the state folder's own files, in the words run prints it (status shows the same). */
export interface StartFileProblem {
  code: ErrorCodeName;
  message: string;
  hint: string;
  /** The file at fault. */
  file: 'agent.json' | 'token' | 'host_id';
}

/**
 * Reads what `run` needs of the state folder before it starts, as run reads it: agent.json,
 * the token, host_id. A file missing, unreadable (EACCES, a folder in its place: E_FILE_ACCESS,
 * was E_INTERNAL "this is a bug"), or malformed (a token that can never work: E_TOKEN; it was
 * retried forever) is the operator's to mend, and is returned as such; anything else throws.
 */
export async function readStartFiles(stateDir: string): Promise<{ settings: AgentSettings } | { problem: StartFileProblem }> {
  const paths = statePaths(stateDir);
  const unreadable = (file: StartFileProblem['file'], path: string, err: unknown): { problem: StartFileProblem } => {
    const code = (err as { code?: unknown }).code;
    const c = typeof code === 'string' ? code : 'error';
    // root's file in the folder of the user run as (left by a command run as root): said as such (I36)
    const misowned = c === 'EACCES' || c === 'EPERM' ? misownedForThisUser(stateDir) : null;
    if (misowned !== null && misowned.files.some((f) => f.file === basename(path))) {
      const text = misownedText(stateDir, misowned);
      return { problem: { code: 'E_FILE_ACCESS', file, message: `cannot read ${path} (${c}): ${text.message}; run cannot start until this is mended`, hint: text.hint } };
    }
    const what =
      c === 'EACCES' || c === 'EPERM'
        ? `this user (${currentUserName()}) may not read it`
        : c === 'EISDIR'
          ? 'it is a folder, not a file'
          : `the system refused it`;
    const hint =
      c === 'EACCES' || c === 'EPERM'
        ? `run cortex-agent as the user that owns the state folder (ls -l ${shellQuote(path)}), or give that user the file (chown, chmod u+rw)`
        : file === 'token'
          ? 'move it aside; then enroll again with a new token from "cortex-server agent issue --host-id HOST_ID"'
          : 'move it aside; then enroll again ("cortex-agent enroll" writes it)';
    return { problem: { code: 'E_FILE_ACCESS', file, message: `cannot read ${path} (${c}): ${what}; run cannot start until this is mended`, hint } };
  };
  let settings: AgentSettings | null;
  try {
    settings = await readAgentSettings(stateDir);
  } catch (err) {
    if (!(err instanceof StateDirError)) throw err;
    if (err.code === 'EMALFORMED') return { problem: { code: 'E_AGENT_START', file: 'agent.json', message: err.message, hint: 'mend the file, or enroll again ("cortex-agent enroll" writes it)' } };
    return unreadable('agent.json', paths.agentJson, err);
  }
  if (settings === null) return { problem: { code: 'E_NOT_ENROLLED', file: 'agent.json', message: `${stateDir} has no agent.json`, hint: 'run "cortex-agent enroll" first' } };
  try {
    if ((await readToken(stateDir)) === null) {
      return {
        problem: {
          code: 'E_NOT_ENROLLED',
          file: 'token',
          message: `${stateDir} has no token (never enrolled, or revoked: the agent deletes its token on -32002)`,
          hint: 'enroll again with a new token from "agent issue --host-id"',
        },
      };
    }
  } catch (err) {
    if (!(err instanceof TokenStoreError)) throw err;
    // a malformed token never mends by retrying (run retried it forever)
    if (err.code === 'EMALFORMED') return { problem: { code: 'E_TOKEN', file: 'token', message: err.message, hint: 'enroll again with a new token from "cortex-server agent issue --host-id HOST_ID"' } };
    return unreadable('token', paths.token, err);
  }
  try {
    if ((await readHostId(stateDir)) === null) {
      return { problem: { code: 'E_AGENT_START', file: 'host_id', message: `${stateDir} has no host_id; enroll the agent first`, hint: ERROR_CODES.E_AGENT_START } };
    }
  } catch (err) {
    if (!(err instanceof StateDirError)) throw err;
    if (err.code === 'EMALFORMED') return { problem: { code: 'E_AGENT_START', file: 'host_id', message: err.message, hint: ERROR_CODES.E_AGENT_START } };
    return unreadable('host_id', paths.hostId, err);
  }
  return { settings };
}

/** misownedAgentFiles when this process runs as the state folder's owner (who then cannot use the files), else null. */
function misownedForThisUser(stateDir: string): MisownedFiles | null {
  try {
    if (typeof process.geteuid !== 'function' || statSync(stateDir).uid !== process.geteuid()) return null;
  } catch {
    return null;
  }
  return misownedAgentFiles(stateDir);
}

async function cmdRun(args: string[], extensions: CliExtensions): Promise<number> {
  const held: { keeper: StateOwnerKeeper | null } = { keeper: null };
  try {
    return await runAgent(args, extensions, held);
  } finally {
    held.keeper?.close(); // the buffer is closed: every file left goes to the folder's owner (I36)
  }
}

async function runAgent(args: string[], extensions: CliExtensions, held: { keeper: StateOwnerKeeper | null }): Promise<number> {
  const p = parseArgs(args, ['state-dir', 'allow-insecure', 'log-level', 'heartbeat-interval-ms', 'ping-watchdog-ms', 'backoff-base-ms', 'backoff-cap-ms', 'source-poll-ms', 'hello-timeout-ms', 'request-timeout-ms']);
  if (p.flags.has('help')) return help('run');
  stdoutIsBannerOnly(); // run prints nothing its work needs on stdout (H30)
  const stateDir = resolve(str(p, 'state-dir', true));
  const level = logLevel(p);
  const heartbeatIntervalMs = int(p, 'heartbeat-interval-ms');
  const pingWatchdogMs = int(p, 'ping-watchdog-ms');
  const backoffBaseMs = int(p, 'backoff-base-ms');
  const backoffCapMs = int(p, 'backoff-cap-ms');
  if (backoffBaseMs === 0) throw new UsageError('--backoff-base-ms must be at least 1');
  if (backoffCapMs !== undefined && backoffCapMs < (backoffBaseMs ?? 1000)) throw new UsageError(`--backoff-cap-ms must be at least the backoff base (${backoffBaseMs ?? 1000} ms)`);
  const sourcePollMs = int(p, 'source-poll-ms');
  const helloTimeoutMs = int(p, 'hello-timeout-ms');
  const requestTimeoutMs = int(p, 'request-timeout-ms');
  for (const [name, v] of [['hello-timeout-ms', helloTimeoutMs], ['request-timeout-ms', requestTimeoutMs]] as const) {
    if (v !== undefined && (v < 1 || v > 2 ** 31 - 1)) throw new UsageError(`--${name} must be between 1 and ${2 ** 31 - 1} ms`);
  }
  if (sourcePollMs === 0) throw new UsageError('--source-poll-ms must be at least 1');
  const readDenied = stateDirReadDenied(stateDir);
  if (readDenied !== null) {
    fail('E_FILE_ACCESS', readDenied);
    return 1;
  }
  if (!existsSync(stateDir)) throw new UsageError(`state dir ${stateDir} does not exist; run "cortex-agent enroll" first`, { code: 'E_FILE_ACCESS' });
  const files = await readStartFiles(stateDir);
  if ('problem' in files) {
    fail(files.problem.code, files.problem.message, files.problem.hint);
    return 1;
  }
  const settings = files.settings;
  const allowInsecure = p.flags.has('allow-insecure') || settings.allow_insecure === true;
  for (const url of settingsServerUrls(settings)) {
    const problem = checkServerUrl(url, allowInsecure);
    if (problem) throw new UsageError(problem);
  }
  const logger = createLogger({ level });
  refuseInspectorSignal(logger, 'cortex-agent');
  const unknownKeys = unknownAgentSettingsKeys(settings);
  if (unknownKeys.length > 0) logger.warn({ unknown_keys: unknownKeys }, unknownAgentSettingsText(unknownKeys));
  const smallCap = smallBufferCapText(settings);
  if (smallCap !== null) logger.warn({ buffer_hard_cap_bytes: settings.buffer_hard_cap_bytes }, smallCap);
  // SIGTERM/SIGINT: stop the agent, or end a wait (below) before it has started.
  let signalled = false;
  let onStop: () => void = () => undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal: sig }, 'stopping');
    onStop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // SIGHUP from `kill -HUP` no longer ends the agent (DECISIONS I21): agent.json is read again and
  // what changed is named. From the terminal closing, the agent stops as for SIGTERM and ends by
  // SIGHUP, as before, without Node's exit step that aborts on a hung-up terminal (runCli).
  let settingsInForce = settings;
  onSighup(logger, { reload: () => void reportHangup(stateDir, settingsInForce, logger), stop: () => onSignal('SIGHUP') });
  /** Waits `ms`, or less when a signal comes: the one wait of the disk-full and read-only waits. */
  const pause = (ms: number): Promise<void> =>
    signalled
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          onStop = () => {
            clearTimeout(timer);
            resolve();
          };
        });
  const waiter: StateDirWait = { logger, pause, stopped: () => signalled };
  // A state folder this process cannot write (DECISIONS H18): refused at once when the user
  // may not write it; waited for when its filesystem is read-only, holding nothing open there.
  const blocked = await waitForWritableStateDir(stateDir, waiter);
  if (blocked === 'stopped') return 0;
  if (blocked !== null) {
    fail('E_FILE_ACCESS', blocked);
    return 1;
  }
  let releaseLock: () => void;
  try {
    releaseLock = acquireRunLock(stateDir, (pid) => logger.info({ stale_pid: pid }, 'run.lock of an agent that is gone: taken over'));
  } catch (err) {
    if (err instanceof RunLockHeldError) {
      fail('E_RUN_LOCK', err.message);
      return 1;
    }
    const problem = stateDirWriteProblem(stateDir); // it changed since the wait above
    if (problem !== null) {
      fail('E_FILE_ACCESS', problem.kind === 'read_only' ? `${readOnlyStateDirText(stateDir)}, then start the agent again` : stateDirDeniedText(stateDir, problem.code, 'write'));
      return 1;
    }
    throw err;
  }
  // Run as root on a state folder another user owns (the service's, a volume's): root's rights
  // stay (root-only logs), and the files written there are given to that user as they appear,
  // so that the agent started again as that user can use them (DECISIONS I36).
  const owner = stateFolderOwner(stateDir);
  if (owner !== null) held.keeper = keepStateFilesOwned(stateDir, owner, logger);
  // A crash line must not carry the token: whatever the token file holds now is cut out.
  logCrashes(logger, (text) => {
    try {
      return scrubSecret(text, readFileSync(statePaths(stateDir).token, 'utf8').trim());
    } catch {
      return text;
    }
  });
  let agent: Agent;
  const startOptions = {
    stateDir,
    allowInsecure,
    logger,
    ...(heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs, heartbeatJitterMs: 0 } : {}),
    ...(pingWatchdogMs !== undefined ? { pingWatchdogMs } : {}),
    ...(sourcePollMs !== undefined ? { sourcePollMs } : {}),
    ...(helloTimeoutMs !== undefined ? { helloTimeoutMs } : {}),
    ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
    ...(backoffBaseMs !== undefined || backoffCapMs !== undefined
      ? { backoff: { baseMs: backoffBaseMs ?? 1000, capMs: backoffCapMs ?? Math.max(backoffBaseMs ?? 1000, 60_000) } }
      : {}),
    ...(extensions.extraProbes !== undefined && extensions.extraProbes.length > 0 ? { probes: { extraProbes: extensions.extraProbes } } : {}),
  };
  // Started on a disk with not one byte free (DECISIONS H12): the buffer cannot open — nor
  // seq.json take the start's reservation, nor a lost -wal's next_seq be raised (F15) — until
  // space is freed. Wait for it here rather than exit: systemd's start limit (5 in 300 s) would
  // give up on an agent that exits every 5 s, and a stopped agent ships nothing.
  const startWaitingForSpace = async (): Promise<Agent | number> => {
    let waitedSince = 0;
    for (;;) {
      try {
        const started = await startAgent({ ...startOptions });
        if (waitedSince > 0) logger.info({ waited_ms: Date.now() - waitedSince }, 'buffer opened: space was freed');
        return started;
      } catch (err) {
        if (!(err instanceof BufferStorageError && err.kind === 'disk_full' && err.operation === 'open')) {
          releaseLock();
          // the buffer's files root left in this user's folder (I36): said as such, not "check the path"
          const misowned = err instanceof BufferStorageError ? misownedForThisUser(stateDir) : null;
          if (misowned !== null && misowned.files.some((f) => f.file.startsWith(BUFFER_DB_FILE))) {
            const text = misownedText(stateDir, misowned);
            fail('E_FILE_ACCESS', `cannot open the buffer ${statePaths(stateDir).bufferDb}: ${text.message}`, text.hint);
            return 1;
          }
          diag(startErrorText(err));
          return 1;
        }
        if (waitedSince === 0) {
          waitedSince = Date.now();
          const file = basename(err.path);
          logger.error(
            { kind: err.kind, code: err.code, file: err.path, ...diskOf(stateDir) },
            `cannot open the buffer: the disk of ${stateDir} is full (${file} could not be written${err.code !== undefined ? `: ${err.code}` : ''}); free space there (df ${shellQuote(stateDir)}) — trying again every ${DISK_FULL_RETRY_MS / 1000} s, and starting once there is room (nothing buffered is lost)`,
          );
        }
        await pause(DISK_FULL_RETRY_MS);
        if (signalled) {
          releaseLock();
          logger.info('stopped while waiting for disk space');
          return 0;
        }
      }
    }
  };
  const first = await startWaitingForSpace();
  if (typeof first === 'number') return first;
  agent = first;
  onStop = () => void agent.stop();
  if (signalled) onStop(); // a signal while the agent was starting
  // A buffer damaged at run time: stop, and start again (opening heals it; DECISIONS H5).
  // The state folder's filesystem gone read-only: stop (letting go of the folder), wait until
  // it can be written again, and start again (H18).
  // buffer.db deleted under the agent: it stops, copies its open buffer back, and starts again
  // on the copy; replaced by another file: it stops, naming both (H25).
  let restarts = 0;
  let final: AgentState;
  for (;;) {
    let restart: 'corrupt' | 'read_only' | 'gone' | null = null;
    const onCorrupt = () => {
      restart ??= 'corrupt';
      void agent.stop();
    };
    const onReadOnly = () => {
      restart ??= 'read_only';
      void agent.stop();
    };
    const onGone = () => void (restart ??= 'gone');
    agent.once('buffer_corrupt', onCorrupt);
    agent.once('state_dir_read_only', onReadOnly);
    agent.once('buffer_gone', onGone);
    final = await agent.done;
    held.keeper?.bufferClosed();
    agent.off('buffer_corrupt', onCorrupt);
    agent.off('state_dir_read_only', onReadOnly);
    agent.off('buffer_gone', onGone);
    if (restart === null || signalled || (restart === 'corrupt' && restarts >= 3)) break;
    if (restart === 'corrupt') restarts++;
    else if (restart === 'gone') {
      const rescued = agent.bufferRescued;
      if (rescued === null || !rescued.copied || rescued.how !== 'deleted') {
        releaseLock();
        fail('E_BUFFER', rescued?.message ?? 'buffer.db was deleted or replaced while the agent ran');
        return 1;
      }
      // run.lock went with the folder's files: take it again.
      try {
        releaseLock();
        releaseLock = acquireRunLock(stateDir);
      } catch (err) {
        fail(err instanceof RunLockHeldError ? 'E_RUN_LOCK' : 'E_FILE_ACCESS', (err as Error).message);
        return 1;
      }
      logger.info({ buffer: rescued.target }, 'starting again on the copied buffer');
    } else {
      const blocked = await waitForWritableStateDir(stateDir, waiter);
      if (blocked === 'stopped') {
        releaseLock();
        return 0;
      }
      if (blocked !== null) {
        releaseLock();
        fail('E_FILE_ACCESS', blocked);
        return 1;
      }
    }
    const again = await startWaitingForSpace();
    if (typeof again === 'number') return again;
    agent = again;
    onStop = () => void agent.stop();
    // the agent started again has read agent.json again
    settingsInForce = (await readAgentSettings(stateDir).catch(() => null)) ?? settingsInForce;
  }
  releaseLock();
  if (signalled) return 0;
  if (isTerminalState(final)) {
    fail('E_AGENT_STOPPED', agent.status().last_error ?? `stopped in state ${final}`);
    return 1;
  }
  return 0;
}

/** How often `run` tries again to open a buffer on a full disk (DECISIONS H12), or to write a read-only state folder (H18). */
const DISK_FULL_RETRY_MS = 5_000;

/** How `run` waits: its logger, its one signal-aware pause, whether a signal came. */
interface StateDirWait {
  logger: ReturnType<typeof createLogger>;
  pause(ms: number): Promise<void>;
  stopped(): boolean;
}

/**
 * Null once this process can write the state folder. On a read-only filesystem it logs that
 * once and tries again every DISK_FULL_RETRY_MS, holding nothing open in the folder (so that
 * it can be unmounted and repaired); 'stopped' on SIGTERM/SIGINT meanwhile. A folder this user
 * may not write: the message, at once (waiting would not mend it).
 */
async function waitForWritableStateDir(stateDir: string, w: StateDirWait): Promise<string | 'stopped' | null> {
  let problem = stateDirWriteProblem(stateDir);
  if (problem === null) return null;
  if (problem.kind === 'denied') return stateDirDeniedText(stateDir, problem.code, 'write');
  const since = Date.now();
  w.logger.error(
    { code: problem.code },
    `waiting for the state folder to be writable: ${readOnlyStateDirText(stateDir)}; the agent starts by itself once it can write there (trying again every ${DISK_FULL_RETRY_MS / 1000} s; nothing is held open in the folder meanwhile, and sources resume where they stopped)`,
  );
  for (;;) {
    await w.pause(DISK_FULL_RETRY_MS);
    if (w.stopped()) {
      w.logger.info('stopped while waiting for the state folder to become writable');
      return 'stopped';
    }
    problem = stateDirWriteProblem(stateDir);
    if (problem === null) {
      w.logger.info({ waited_ms: Date.now() - since }, 'the state folder is writable again: starting');
      return null;
    }
    if (problem.kind === 'denied') return stateDirDeniedText(stateDir, problem.code, 'write');
  }
}

async function cmdStatus(args: string[]): Promise<number> {
  const p = parseArgs(args, ['state-dir', 'json']);
  if (p.flags.has('help')) return help('status');
  const stateDir = resolve(str(p, 'state-dir', true));
  const paths = statePaths(stateDir);
  const readDenied = stateDirReadDenied(stateDir);
  if (readDenied !== null) {
    fail('E_FILE_ACCESS', readDenied);
    return 1;
  }
  if (!existsSync(paths.bufferDb)) {
    fail('E_NOT_ENROLLED', `${stateDir} has no buffer.db; is it an enrolled agent's state dir?`, `cortex-agent enroll --state-dir ${shellQuote(stateDir)}`);
    return 1;
  }
  let snap;
  try {
    snap = readBufferSnapshot(paths.bufferDb);
  } catch (err) {
    // a full disk (SQLITE_IOERR_SHMSIZE: no room for the -shm index) or no permission says
    // nothing of the buffer: E_DISK_FULL and E_FILE_ACCESS, not E_BUFFER "check it"
    const full = err instanceof BufferStorageError && err.kind === 'disk_full';
    const denied = err instanceof BufferStorageError && (err.kind === 'read_only' || err.kind === 'cannot_open') ? bufferUncheckable(paths.bufferDb, 'read') : null;
    const disk = diskOf(stateDir);
    if (full) {
      fail(
        'E_DISK_FULL',
        (err as Error).message,
        `${disk.disk_free_bytes === null ? 'the' : `${disk.disk_free_bytes} bytes free on the`} state dir's filesystem: free space there (df ${shellQuote(stateDir)}; the buffer cannot be read until then, nothing in it is lost)`,
      );
      return 1;
    }
    if (denied?.code === 'E_FILE_ACCESS') {
      const misowned = misownedForThisUser(stateDir);
      if (misowned !== null && misowned.files.some((f) => f.file.startsWith(BUFFER_DB_FILE))) {
        const text = misownedText(stateDir, misowned);
        fail('E_FILE_ACCESS', `cannot read ${paths.bufferDb}: ${text.message}`, text.hint);
        return 1;
      }
      fail('E_FILE_ACCESS', denied.message, denied.hint);
      return 1;
    }
    // Not a buffer at all: another program's SQLite database (a --state-dir of the wrong folder,
    // a file copied over buffer.db), or one that holds nothing yet. Said as such: it read
    // "readBufferSnapshot failed: no such table: meta — unexpected storage error".
    const foreign = foreignBufferTables(paths.bufferDb);
    if (foreign !== null) {
      const text = foreignBufferText(paths.bufferDb, foreign);
      fail('E_BUFFER', text.message, text.hint);
      return 1;
    }
    const empty = emptyBuffer(paths.bufferDb);
    if (empty !== null) {
      const text = emptyBufferText(paths.bufferDb, empty); // as buffer check says it
      fail('E_BUFFER', text.message, text.hint);
      return 1;
    }
    fail('E_BUFFER', (err as Error).message, `check it with: cortex-agent buffer check --state-dir ${shellQuote(stateDir)}`);
    return 1;
  }
  const { file, problem: statusFileProblem } = readStatusFileChecked(stateDir);
  // What run would refuse to start on (agent.json, the token, host_id), read as run reads them:
  // status showed identity from status.json and nothing wrong with an agent that cannot start.
  const startFiles = await readStartFiles(stateDir);
  const startProblem = 'problem' in startFiles ? startFiles.problem : null;
  // agent files root left in a folder another user owns: the agent run as that user cannot use them (I36)
  const found = misownedAgentFiles(stateDir);
  const misowned = found === null ? null : { ...found, ...misownedText(stateDir, found) };
  const agentJson = rawAgentJson(stateDir); // read once: the servers when status.json has none, the unknown keys
  // A damaged status.json (H32) says nothing of the agent: whether one runs is run.lock's to tell.
  const lockPid = statusFileProblem !== null ? runLockHolder(stateDir) : null;
  const running = file !== null ? !file.stopped && processAlive(file.pid) : lockPid !== null;
  let state: AgentState = 'Disconnected';
  if (file !== null && (running || isTerminalState(file.state))) state = file.state;
  // The positions in buffer.db are fresher than those status.json was written with.
  const positions = snap.sources;
  const sources = sourceStatusWithPositions({ status: () => (file?.sources ?? []).map((s) => ({ ...s })), paused: file?.sources_paused ?? false }, { sourcePositions: () => positions });
  const st = snap.stats;
  const status = {
    state,
    running,
    pid: running ? (file?.pid ?? lockPid) : null,
    // status.json there but not showable: why (its state, server, sources and last error are then not shown)
    status_file_problem: statusFileProblem,
    // a state file run cannot start with (agent.json, token, host_id): run's error, as it would print it
    start_problem: startProblem === null ? null : { file: startProblem.file, code: startProblem.code, message: startProblem.message, hint: startProblem.hint },
    // the agent's files that belong to another user than the state folder's (left by a command run as root): the agent run as the folder's owner cannot use them
    misowned_files: misowned,
    host_id: file?.host_id ?? safeHostId(stateDir),
    server_url: file?.server_url ?? null,
    server_urls: file?.server_urls ?? safeServerUrls(agentJson),
    // the proxy of the running agent's latest connection attempt (null: direct; F13)
    proxy: running ? (file?.proxy ?? null) : null,
    // keys of agent.json this agent does not read (I22): a misspelt or misplaced setting
    agent_json_unknown_keys: agentJson === null ? [] : unknownAgentSettingsKeys(agentJson),
    session_id: running ? (file?.session_id ?? null) : null,
    // the host's clock against the server's at the last hello, ms (> 0: behind; F10)
    clock_offset_ms: running ? (file?.clock_offset_ms ?? null) : null,
    next_seq: st.nextSeq,
    acked_seq: st.ackedSeq,
    queue_depth: st.queueDepth,
    buffer_bytes: st.bufferBytes,
    push_lag_seq: st.pushLagSeq,
    oldest_seq: st.oldestSeq,
    evicted_entries: st.evictedEntries,
    evicted_oldest_seq: st.evictedOldestSeq,
    sources_paused: file?.sources_paused ?? false,
    sources,
    last_error: file?.last_error ?? null,
    updated_at: file?.updated_at ?? null,
    // how long ago the running agent last wrote status.json (null when not running)
    status_age_secs: running && file !== null ? Math.max(0, Math.round((Date.now() - Date.parse(file.updated_at)) / 1000)) : null,
    ...diskOf(stateDir),
    // true when the state folder's filesystem is read-only: nothing the agent does is stored (H18)
    state_dir_read_only: stateDirWriteProblem(stateDir)?.kind === 'read_only',
    degraded: readRecovery(stateDir),
    // What a stopped agent reads once started: the config last in force (config.json, F9)
    stored_config_sources: running ? null : (new ConfigStore(stateDir, createLogger({ level: 'silent' })).read()?.log_sources ?? null),
  };
  if (p.flags.has('json')) {
    out(JSON.stringify(status));
    return 0;
  }
  const lines = [
    `state:        ${state}${running ? ` (running, pid ${status.pid})` : ' (not running)'}`,
    `host_id:      ${status.host_id ?? '-'}`,
    `server:       ${status.server_url ?? '-'}${status.server_urls.length > 1 ? ` (of ${status.server_urls.length}: ${status.server_urls.join(', ')})` : ''}`,
    ...(status.proxy !== null ? [`proxy:        ${status.proxy} (agent.json proxy, or HTTPS_PROXY/HTTP_PROXY/ALL_PROXY of the agent's environment)`] : []),
    ...(status.clock_offset_ms !== null
      ? [
          Math.abs(status.clock_offset_ms) > CLOCK_WARN_MS
            ? `clock:        ${clockOffsetText(status.clock_offset_ms)} the server's at the last hello: set this host's clock right (timedatectl status)`
            : `clock:        in step with the server's (${Math.abs(status.clock_offset_ms)} ms at the last hello)`,
        ]
      : []),
    `next_seq:     ${status.next_seq}`,
    `acked_seq:    ${status.acked_seq}`,
    `queue_depth:  ${status.queue_depth}`,
    `buffer_bytes: ${status.buffer_bytes}`,
    `push_lag_seq: ${status.push_lag_seq}`,
    `evicted:      ${status.evicted_entries}`,
    `last_error:   ${status.last_error === null ? '-' : printable(status.last_error)}`,
    ...(status.disk_free_bytes !== null
      ? [`disk:         ${mib(status.disk_free_bytes)} free of ${mib(status.disk_total_bytes ?? 0)} on the state dir's filesystem (sources pause below ${mib(status.disk_low_water_bytes ?? 0)})`]
      : []),
    ...(status.state_dir_read_only ? [`note:         ${readOnlyStateDirText(stateDir)}; what this shows is from before`] : []),
    ...(status.status_file_problem !== null
      ? [
          printable(
            `note:         ${join(stateDir, STATUS_FILE)} is damaged (${status.status_file_problem}): the agent's state, server, sources and last error are not shown` +
              (running ? `; the running agent rewrites it within ${STATUS_REFRESH_MS / 1000} s` : '; the agent rewrites it when it next runs'),
          ),
        ]
      : []),
    ...(misowned !== null ? [printable(`${misowned.blocks_start ? 'problem:' : 'note:   '}      ${misowned.message} — ${misowned.hint}`)] : []),
    // a file this user may not read says nothing of whether run (as the agent's user) can start
    ...(startProblem !== null && misowned?.files.some((f) => f.file === startProblem.file) === true
      ? [] // said just above
      : startProblem !== null && startProblem.code === 'E_FILE_ACCESS' && startProblem.message.includes('may not read it')
      ? [printable(`note:         ${startProblem.file}: this user (${currentUserName()}) may not read it, so whether run can start is not shown: run status as the agent's user or as root`)]
      : startProblem !== null
      ? [
          printable(
            `problem:      ${startProblem.file}: error[${startProblem.code}] ${startProblem.message}${startProblem.message.includes('run cannot start') ? '' : running ? '; the next start fails until this is mended' : ': run cannot start until this is mended'} — ${startProblem.hint}`,
          ),
        ]
      : []),
    ...(status.agent_json_unknown_keys.length > 0 ? [printable(`note:         ${unknownAgentSettingsText(status.agent_json_unknown_keys)}`)] : []),
    ...(!status.state_dir_read_only && status.status_age_secs !== null && status.status_age_secs * 1000 > 2 * STATUS_REFRESH_MS
      ? [
          `note:         the agent last wrote status.json ${status.status_age_secs} s ago (it rewrites it every ${STATUS_REFRESH_MS / 1000} s): what it says may be old` +
            (status.disk_free_bytes !== null && status.disk_low_water_bytes !== null && status.disk_free_bytes < status.disk_low_water_bytes
              ? '; the disk is full: free space on it'
              : `; check the agent's log`),
        ]
      : []),
    ...(status.degraded !== null
      ? [
          status.degraded.kind === 'rows'
            ? `degraded:     damaged rows of the buffer set aside since ${status.degraded.at} (their text kept in ${status.degraded.moved_to}); seqs ${lostText(status.degraded)} lost`
            : `degraded:     buffer replaced at ${status.degraded.at} (damaged file kept at ${status.degraded.moved_to}); seqs ${lostText(status.degraded)} lost`,
        ]
      : []),
    ...(status.stored_config_sources !== null
      ? [
          printable(
            `config:       ${status.stored_config_sources.length} log source${status.stored_config_sources.length === 1 ? '' : 's'} in config.json (read as soon as the agent starts, before any server answers)${status.stored_config_sources.length === 0 ? '' : `: ${status.stored_config_sources.map((c) => `${c.kind} ${c.path ?? ''}`.trim()).join(', ')}`}`,
          ),
        ]
      : []),
    sources.length === 0 ? `sources:      -` : `sources:`,
    ...sources.flatMap((s) => sourceLines(s).map(printable)),
  ];
  out(lines.join('\n'));
  return 0;
}

/** A glob's files listed one by one in `status` (beyond it, only those with something to say). */
const GLOB_FILES_LISTED = 20;

type StatusSource = {
  kind: string;
  path: string | null;
  name: string | null;
  position: unknown;
  last_error: string | null;
  state?: string | undefined;
  lines_read?: number | undefined;
  files?: unknown;
  entries_too_large?: unknown;
  lines_malformed?: unknown;
  refused_connections?: unknown;
  late_lines?: unknown;
};

/** Counts an operator should see in the text too: journal entries skipped for their size (H27), socket clients refused (D27). */
function sourceNotes(s: StatusSource): string {
  const n = (v: unknown) => (typeof v === 'number' && v > 0 ? v : 0);
  const notes: string[] = [];
  if (n(s.entries_too_large) > 0) notes.push(`${n(s.entries_too_large)} entries too large, not read`);
  if (n(s.lines_malformed) > 0) notes.push(`${n(s.lines_malformed)} malformed lines, not read`);
  if (n(s.refused_connections) > 0) notes.push(`${n(s.refused_connections)} clients refused (at most ${MAX_SOCKET_CLIENTS} at once)`);
  // a writer that reopened its log late after a rotation (DECISIONS D34): read from the renamed file
  if (n(s.late_lines) > 0) notes.push(`${n(s.late_lines)} line${n(s.late_lines) === 1 ? '' : 's'} read late from rotated files (their writer reopened its log late)`);
  return notes.length === 0 ? '' : `, ${notes.join(', ')}`;
}

/**
 * A source's lines in `status`. A glob: its own line (without the map of every file's
 * position: `--json` has it), then its files indented — every one when there are few, else
 * those not being read as usual (skipped as not text, an error, draining).
 */
export function sourceLines(s: StatusSource): string[] {
  const error = (e: string | null) => (e ? ` error: ${e}` : '');
  if (!Array.isArray(s.files)) return [`  ${s.kind} ${s.path ?? s.name ?? ''}: ${sourceStateText(s)}${sourceNotes(s)} position=${JSON.stringify(s.position)}${error(s.last_error)}`];
  const files = s.files as { path?: string | null; state?: string; lines_read?: number; last_error?: string | null }[];
  const notable = (f: (typeof files)[number]) => f.state !== 'reading' || (f.last_error ?? null) !== null;
  // at most GLOB_FILES_LISTED files: a glob of thousands in error listed every one
  const shown = (files.length <= GLOB_FILES_LISTED ? files : files.filter(notable)).slice(0, GLOB_FILES_LISTED);
  const lines = [`  ${s.kind} ${s.path ?? ''}: ${sourceStateText(s)}${error(s.last_error)}`];
  // a file's error that is the glob's (less the file's path: files past the open-file limit) is not written out again
  const reason = (e: string | null | undefined, path: string | null | undefined) => (e != null && path != null && e.startsWith(`${path}: `) ? e.slice(path.length + 2) : e ?? null);
  const globReason = Array.isArray(s.files) && s.last_error ? reason(s.last_error, s.last_error.slice(0, s.last_error.indexOf(': '))) : null;
  for (const f of shown) {
    const own = reason(f.last_error, f.path);
    lines.push(`    ${f.path ?? ''}: ${f.state ?? '-'}, ${f.lines_read ?? 0} lines read${own !== null && own === globReason ? ' error: the same (above)' : error(f.last_error ?? null)}`);
  }
  if (shown.length < files.length) {
    const unshown = files.filter(notable).length - shown.filter(notable).length;
    const others = files.length - shown.length - unshown;
    lines.push(`    (${others > 0 ? `${others} more files reading` : ''}${others > 0 && unshown > 0 ? ', ' : ''}${unshown > 0 ? `${unshown} more not read as usual: --json lists every file` : ''})`);
  }
  return lines;
}

/** What a source is doing, in words: an operator whose logs do not arrive sees a file that is not there yet, or a glob that matches nothing. */
export function sourceStateText(s: { kind: string; state?: string | undefined; lines_read?: number | undefined; files?: unknown }): string {
  // No state and no count: a position stored in buffer.db that no running source reports (the
  // agent is stopped, or the source left its config): what was read before, not a count of 0.
  if (s.state === undefined && s.lines_read === undefined) return 'not being read (stored position)';
  const lines = `${s.lines_read ?? 0} lines read`;
  if (s.state === undefined) return lines;
  const files = Array.isArray(s.files) ? s.files.length : undefined; // a glob's matching files
  if (s.kind === 'file' && s.state === 'waiting') return files !== undefined ? 'waiting: no file matches yet' : 'waiting: no such file yet';
  if (s.kind === 'file' && files !== undefined && s.state === 'reading') {
    const skipped = (s.files as { state?: string }[]).filter((f) => f.state === 'skipped').length;
    const failing = (s.files as { state?: string }[]).filter((f) => f.state === 'error').length;
    const reading = files - skipped - failing;
    const apart = [...(failing > 0 ? [`${failing} in error`] : []), ...(skipped > 0 ? [`${skipped} not read: not text`] : [])];
    return `reading ${reading} file${reading === 1 ? '' : 's'}${apart.length > 0 ? ` (${apart.join(', ')})` : ''}, ${lines}`;
  }
  return `${s.state}, ${lines}`;
}

/** Free and total bytes of the state dir's filesystem and the buffer's default low-water mark there (nulls when statfs fails). */
function diskOf(dir: string): { disk_free_bytes: number | null; disk_total_bytes: number | null; disk_low_water_bytes: number | null } {
  try {
    const { free, total } = statfsFree(dir);
    return { disk_free_bytes: free, disk_total_bytes: total, disk_low_water_bytes: defaultMinFreeBytes(total) };
  } catch {
    return { disk_free_bytes: null, disk_total_bytes: null, disk_low_water_bytes: null };
  }
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** agent.json as an object, unchecked (status shows what it can of a damaged one); null when it cannot be read or is not an object. */
function rawAgentJson(dir: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(readFileSync(statePaths(dir).agentJson, 'utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function safeServerUrls(v: Record<string, unknown> | null): string[] {
  if (v === null) return [];
  if (Array.isArray(v.server_urls)) return v.server_urls.filter((u): u is string => typeof u === 'string');
  return typeof v.server_url === 'string' ? [v.server_url] : [];
}

function cmdBuffer(args: string[]): number {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') return help('buffer');
  if (sub !== 'check') throw new UsageError(sub === undefined ? 'give a buffer command: check' : `unknown buffer command "${sub}"`);
  const p = parseArgs(rest, ['state-dir', 'json']);
  if (p.flags.has('help')) return help('buffer');
  const r = bufferCheck(resolve(str(p, 'state-dir', true)), p.flags.has('json'));
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  return r.code;
}

function safeHostId(dir: string): string | null {
  try {
    return normalizeHostId(readFileSync(statePaths(dir).hostId, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * `cortex-agent --version` (or `version`): this agent's version, the protocol package it was
 * built with (@cortex/agent-protocol; its major is the protocol's), Node and the platform. The
 * package.json is imported only here: no JSON import on the way to `run`.
 */
async function cmdVersion(args: string[]): Promise<number> {
  const p = parseArgs(args, ['json']);
  if (p.flags.has('help')) return help('version');
  const { default: protocol } = await import('@cortex/agent-protocol/package.json', { with: { type: 'json' } });
  out(versionText('cortex-agent', AGENT_VERSION, protocol.version, p.flags.has('json')));
  return 0;
}

function help(cmd: string): number {
  out(USAGE[cmd] ?? USAGE.main!);
  return 0;
}

/** Runs one `cortex-agent` command line (argv without node and the script) and resolves with its exit code. */
export async function main(argv: readonly string[], extensions: CliExtensions = {}): Promise<number> {
  const [given, ...rest] = argv;
  jsonOutput = wantsJson(argv);
  const cmd = given === '--version' ? 'version' : given;
  try {
    switch (cmd) {
      case undefined:
        process.stderr.write(USAGE.main!);
        return 2;
      case '--help':
      case '-h':
      case 'help':
        return help('main');
      case 'enroll':
        return await cmdEnroll(rest);
      case 'run':
        return await cmdRun(rest, extensions);
      case 'status':
        return await cmdStatus(rest);
      case 'buffer':
        return cmdBuffer(rest);
      case 'version':
        return await cmdVersion(rest);
      default:
        fail('E_USAGE', `unknown command "${cmd}"`, 'see cortex-agent --help');
        return 2;
    }
  } catch (err) {
    if (err instanceof UsageError) {
      fail(err.code, err.message, err.code === 'E_USAGE' ? `see cortex-agent ${cmd} --help` : err.hint);
      return 2;
    }
    const d = describeCliError(err);
    fail(d.code, d.message, d.hint);
    return 1;
  }
}

/**
 * The `cortex-agent` executable: applies the agent's V8 settings (./v8-flags.ts), runs the
 * command line of this process with `extensions` and sets the exit code. `cortex-agent status
 * | head` (the reader went away) stops quietly, with no EPIPE stack trace. agent/cli.ts calls
 * it with none; a site-specific build with its probes.
 */
export function runCli(extensions: CliExtensions = {}): void {
  applyAgentV8Flags();
  watchStdout('cortex-agent');
  main(process.argv.slice(2), extensions).then(
    (code) => {
      if (!endIfHungUp()) process.exitCode = code;
    },
    (err: unknown) => {
      fail('E_INTERNAL', `unexpected error: ${(err as Error).message}`);
      process.exitCode = 1;
    },
  );
}
