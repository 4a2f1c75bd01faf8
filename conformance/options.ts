// The runner's options: the help text, the option names of each suite, and turning the
// server suite's parsed arguments into ServerSuiteOptions (the agent suite's live in
// agent-suite.ts). Kept apart from cli.ts so tests can check that every default the help
// writes is the value used (test/contract/cli-defaults.test.ts).
import { LIMITS } from '@cortex/agent-protocol';
import type { ServerSuiteOptions } from './server-suite.js';
import { UsageError, checkTargetUrl, intOption, type ParsedArgs } from './util.js';

export const HELP = `Usage: cortex-conformance <suite> [options]   (or: npm run conformance -- <suite> ...)

Suites:
  server   run the server suite against a running server
  agent    start a scripted server and drive an agent through the agent suite

Server suite:
  --url URL                 the server's WebSocket endpoint (wss://HOST/ws/agent; ws:// only to a loopback host)
  --enroll-token T          a fresh one-time enrollment token of --host-id (it is rotated and used up)
  --host-id ID              the host the token was issued for
  --token-2 T2 --host-id-2 ID2
                            a second fresh host; cases that destroy a host (revocation) use it
  --revoke-command CMD      revokes a host; {host_id} is replaced (e.g. "cortex-server agent revoke {host_id} --db F")
  --rotate-command CMD      marks a host for token rotation; {host_id} and {grace_secs} are replaced (e.g.
                            "cortex-server agent rotate {host_id} --grace-secs {grace_secs} --db F"): enables
                            the 1012 and -32005 cases ({grace_secs} is --rotation-grace-secs) and, with
                            {grace_secs} in it, the previous-token-in-grace case (a second rotation, 60 s)
  --decommission-command CMD  decommissions a host; {host_id} and {drain_secs} are replaced (e.g.
                            "cortex-server agent decommission {host_id} --drain-secs {drain_secs} --db F"):
                            with --issue-command, enables the decommission cases (fresh hosts)
  --config-command CMD      sets a host's AgentConfig; {host_id} and {config} (the JSON) are replaced (e.g.
                            "cortex-server agent config {host_id} --set {config} --db F"): enables the
                            config.update case
  --rotation-grace-secs N   the grace window of the first rotation (default 300); the -32005 case waits
                            it out, so it needs N <= 10
  --stop-command CMD        stops the server as SIGTERM does (e.g. "kill -TERM PID"): enables the
                            shutdown cases (agent.shutdown ServerReload, acks during the drain, close 1001);
                            they run last
  --restart-command CMD     starts the server again on the same database and URL after --stop-command
                            (kept running until the suite ends, then sent SIGTERM): enables the
                            durability-after-restart case
  --break-storage-command CMD   makes the server's storage fail every write (e.g. a trigger that aborts
                            inserts): enables -32007 (logs.push) and -32603 (metrics.push)
  --repair-storage-command CMD  undoes --break-storage-command (required with it)
  --metrics-count-command CMD   prints the number of metric samples the server stored for {host_id}:
                            enables the check that metrics.push "accepted" is what was stored
  --issue-command CMD       issues a one-time token for a new host and prints {"host_id", "token"} as JSON;
                            {label} and {expires_in} (e.g. 4s, 1h) are replaced (e.g. "cortex-server agent issue
                            --host {label} --expires-in {expires_in} --json --db F"): enables the max_seq and
                            enrollment-expiry cases
  --admin-url URL           the admin HTTP API (http://HOST:PORT) for the probe cases (and -32004)
  --admin-token T           bearer token of the admin API
  --hello-timeout-ms N      the server's hello timer (default ${LIMITS.hello_timeout_ms}) for the close-4000 case
  --ping-interval-ms N      the server's ping interval; enables the missed-pong (1011) case
  --missed-pongs N          the server's missed-pong limit (default ${LIMITS.missed_pongs})
  --server-max-batch-entries N
                            the server's logs.push cap; below 1000 enables the -32008 case
  --agent-rate N            the server's per-agent rate limit in entries/s (default ${LIMITS.agent_rate_entries_per_s}, the
                            contract's default) for the -32030 case
  --ingest-queue-entries N  the server's ingest queue capacity in entries: enables the -32020 case
                            (it pushes more than N entries at once; needs --agent-rate above that)
  --stall-storage-command CMD   makes the server's storage writes wait (for -32020 on a server that
                            commits faster than a burst arrives)
  --resume-storage-command CMD  lets them go on (required with it)
  --agent-version V         agent_version sent in hello (default 1.0.0)
  --min-agent-version V     the server's min_agent_version: enables the agent-version floor case
  --skip-slow               skip cases that wait more than ~2 s (hello timer)

Agent suite:
  --enroll-command CMD      enrolls the agent: {url} {token} {host_id} {state_dir} are replaced
  --run-command CMD         runs the agent: {state_dir} (and, without --enroll-command, {url}
                            {token} {host_id}) are replaced; it is killed and restarted by the suite
  --emit-command CMD        makes the running agent produce log entries: {state_dir} {count}
                            {file} are replaced (default: the suite configures a "file" log
                            source and appends lines to {file} itself, when the agent declares
                            the "file" source kind)
  --log-source JSON         the LogSourceConfig sent to the agent (default {"kind":"file","path":"{file}"})
  --probe NAME              a probe the agent supports, for the probe round-trip case
  --probe-args JSON         its args (default {})
  --failing-probe NAME      a probe that fails on this agent with these args: enables -32011
  --failing-probe-args JSON its args
  --slow-probe NAME         a probe that takes longer than --slow-probe-timeout-ms with these args:
                            enables -32012 (the suite sends that timeout_ms)
  --slow-probe-args JSON    its args
  --slow-probe-timeout-ms N the timeout_ms sent with it (default 50)
  --long-probe NAME         a probe that succeeds and runs 100 ms or more with these args (e.g. the
                            reference agent's proc.top, which samples for 200 ms): enables
                            agent/probe-concurrency
  --long-probe-args JSON    its args
  --agent-hello-timeout-ms N    how long the agent waits for a HelloResult (as it was started, e.g.
                            cortex-agent run --hello-timeout-ms N): enables agent/hello-unanswered
  --agent-request-timeout-ms N  how long the agent waits for a logs.push answer (cortex-agent run
                            --request-timeout-ms N): enables agent/push-unanswered
  --internal-error-probe NAME   a probe whose handler fails unexpectedly with these args: enables -32603
  --internal-error-probe-args JSON  its args
  --backoff-base-ms N       the agent's reconnect backoff base (default 1000)
  --backoff-cap-ms N        the agent's backoff cap (default 60000)
  --backoff-attempts N      refused upgrades in the backoff case (default 3)
  --heartbeat-wait-ms N     how long to wait for a heartbeat (default interval + jitter + 2 s)
  --quiet-window-ms N       how long an agent that must stop is watched for reconnects (default 3000)

Common:
  --timeout-ms N            how long to wait for each answer (default 5000)
  --strict                  fail the run when any case is skipped (and on stale --expect-fail entries)
  --expect-fail FILE        known failures, one case id per line (# comments): a listed case that
                            fails is reported (XFAIL) and does not fail the run; one that passes
                            (XPASS) does, so the list only shrinks
  --json                    print one JSON value: the run, with one object per case in "cases"
  --json-lines              print one JSON object per case as it finishes, then a summary object
  --junit FILE              also write JUnit XML to FILE
  --only ID[,ID…]           run only these cases (an ID ending in * selects every id starting with the rest,
                            e.g. "ingest/*"); the others are SKIPPED "not selected by --only". A case that
                            needs an earlier one (most need handshake/first-enrollment-rotates) is skipped
                            unless that one is selected too
  --bail                    stop at the first failure (not counting --expect-fail cases); the rest
                            is not run (used by npm run conformance:mutants)
  --help                    show this help

Every case that cannot run is SKIPPED with the reason and the option that enables it; the
summary (last line) counts them: "N passed, M failed, K skipped".
`;

export const COMMON_VALUES = ['timeout-ms', 'junit', 'expect-fail', 'only'];
export const COMMON_FLAGS = ['json', 'json-lines', 'strict', 'bail'];

export const SERVER_VALUES = [
  'url', 'enroll-token', 'host-id', 'token-2', 'host-id-2', 'revoke-command', 'rotate-command', 'rotation-grace-secs', 'decommission-command', 'config-command',
  'stop-command', 'restart-command', 'issue-command', 'break-storage-command', 'repair-storage-command', 'stall-storage-command', 'resume-storage-command', 'metrics-count-command',
  'admin-url', 'admin-token', 'hello-timeout-ms', 'ping-interval-ms', 'missed-pongs', 'server-max-batch-entries', 'agent-rate',
  'ingest-queue-entries', 'agent-version', 'min-agent-version', ...COMMON_VALUES,
];
export const SERVER_FLAGS = ['skip-slow', ...COMMON_FLAGS];

export function serverOptionsFrom(p: ParsedArgs): ServerSuiteOptions {
  const need = (n: string) => {
    const v = p.values.get(n);
    if (v === undefined) throw new UsageError(`server: --${n} is required`);
    return v;
  };
  const url = need('url');
  const urlProblem = checkTargetUrl(url);
  if (urlProblem !== null) throw new UsageError(urlProblem);
  const hostId = need('host-id');
  const token2 = p.values.get('token-2');
  const hostId2 = p.values.get('host-id-2');
  if ((token2 === undefined) !== (hostId2 === undefined)) throw new UsageError('--token-2 and --host-id-2 go together');
  const breakStorage = p.values.get('break-storage-command');
  const repairStorage = p.values.get('repair-storage-command');
  if ((breakStorage === undefined) !== (repairStorage === undefined)) throw new UsageError('--break-storage-command and --repair-storage-command go together (the suite must undo what it broke)');
  if (p.values.has('stall-storage-command') !== p.values.has('resume-storage-command')) throw new UsageError('--stall-storage-command and --resume-storage-command go together');
  if (p.values.has('restart-command') && !p.values.has('stop-command')) throw new UsageError('--restart-command needs --stop-command (it restarts what that stopped)');
  for (const name of ['revoke-command', 'rotate-command', 'metrics-count-command', 'decommission-command', 'config-command']) {
    const v = p.values.get(name);
    if (v !== undefined && !v.includes('{host_id}')) throw new UsageError(`--${name} must contain {host_id}`);
  }
  return {
    url,
    enrollToken: need('enroll-token'),
    hostId,
    token2,
    hostId2,
    adminUrl: p.values.get('admin-url'),
    adminToken: p.values.get('admin-token'),
    revokeCommand: p.values.get('revoke-command'),
    rotateCommand: p.values.get('rotate-command'),
    decommissionCommand: p.values.get('decommission-command'),
    configCommand: p.values.get('config-command'),
    rotationGraceSecs: intOption(p, 'rotation-grace-secs', 0) ?? LIMITS.rotation_grace_secs,
    stopCommand: p.values.get('stop-command'),
    restartCommand: p.values.get('restart-command'),
    breakStorageCommand: breakStorage,
    repairStorageCommand: repairStorage,
    metricsCountCommand: p.values.get('metrics-count-command'),
    issueCommand: p.values.get('issue-command'),
    stallStorageCommand: p.values.get('stall-storage-command'),
    resumeStorageCommand: p.values.get('resume-storage-command'),
    helloTimeoutMs: intOption(p, 'hello-timeout-ms', 1) ?? LIMITS.hello_timeout_ms,
    skipSlow: p.flags.has('skip-slow'),
    serverMaxBatchEntries: intOption(p, 'server-max-batch-entries', 1),
    agentRate: intOption(p, 'agent-rate', 1) ?? LIMITS.agent_rate_entries_per_s,
    ingestQueueEntries: intOption(p, 'ingest-queue-entries', 1),
    pingIntervalMs: intOption(p, 'ping-interval-ms', 1),
    missedPongs: intOption(p, 'missed-pongs', 1) ?? LIMITS.missed_pongs,
    timeoutMs: intOption(p, 'timeout-ms', 1) ?? 5000,
    agentVersion: p.values.get('agent-version') ?? '1.0.0',
    minAgentVersion: p.values.get('min-agent-version'),
  };
}
