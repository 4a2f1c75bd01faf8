#!/usr/bin/env node
// cortex-conformance: runs the protocol conformance suites against any server or agent.
//
//   cortex-conformance server --url ws://HOST:PORT/ws/agent --enroll-token T --host-id ID [...]
//   cortex-conformance agent  --enroll-command "..." --run-command "..." [...]
//
// Output: one line per case (PASS|FAIL|SKIP <id> — expected …; seen …), then the summary
// "N passed, M failed[, K skipped]" as the last stdout line; --json prints one JSON object
// instead; --junit FILE also writes JUnit XML. Exit 0 when nothing failed, 1 on any failure
// or when the target cannot be reached at all, 2 on bad usage.
import { LIMITS } from '@cortex/agent-protocol';
import { Runner, report, type CaseResult } from './report.js';
import { runServerSuite, TargetUnreachable, type ServerSuiteOptions } from './server-suite.js';
import { runAgentSuite, AGENT_VALUE_OPTIONS, AGENT_FLAGS, agentOptionsFrom } from './agent-suite.js';
import { UsageError, checkTargetUrl, intOption, parseArgs } from './util.js';

const HELP = `Usage: cortex-conformance <suite> [options]   (or: npm run conformance -- <suite> ...)

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
  --admin-url URL           the admin HTTP API (http://HOST:PORT) for the probe cases
  --admin-token T           bearer token of the admin API
  --hello-timeout-ms N      the server's hello timer (default 5000) for the close-4000 case
  --ping-interval-ms N      the server's ping interval; enables the missed-pong (1011) case
  --missed-pongs N          the server's missed-pong limit (default 3)
  --server-max-batch-entries N
                            the server's logs.push cap; below 1000 enables the -32008 case
  --agent-rate N            the server's per-agent rate limit in entries/s (default ${LIMITS.agent_rate_entries_per_s}, the
                            contract's default) for the -32030 case
  --agent-version V         agent_version sent in hello (default 1.0.0)
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
  --backoff-base-ms N       the agent's reconnect backoff base (default 1000)
  --backoff-cap-ms N        the agent's backoff cap (default 60000)
  --heartbeat-wait-ms N     how long to wait for a heartbeat (default: interval + jitter + 2 s)
  --quiet-window-ms N       how long an agent that must stop is watched for reconnects (default 3000)

Common:
  --timeout-ms N            how long to wait for each answer (default 5000)
  --json                    print one JSON object instead of the lines
  --junit FILE              also write JUnit XML to FILE
  --help                    show this help
`;

const SERVER_VALUES = [
  'url', 'enroll-token', 'host-id', 'token-2', 'host-id-2', 'revoke-command', 'admin-url', 'admin-token',
  'hello-timeout-ms', 'ping-interval-ms', 'missed-pongs', 'server-max-batch-entries', 'agent-rate', 'agent-version', 'timeout-ms', 'junit',
];

async function main(argv: string[]): Promise<number> {
  const [suite, ...rest] = argv;
  if (suite === undefined || suite === '--help' || suite === '-h' || suite === 'help') {
    process.stdout.write(HELP);
    return suite === undefined ? 2 : 0;
  }
  if (rest.includes('--help')) {
    process.stdout.write(HELP);
    return 0;
  }
  const results: CaseResult[] = [];
  if (suite === 'server') {
    const p = parseArgs(rest, SERVER_VALUES, ['json', 'skip-slow']);
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
    const o: ServerSuiteOptions = {
      url,
      enrollToken: need('enroll-token'),
      hostId,
      token2,
      hostId2,
      adminUrl: p.values.get('admin-url'),
      adminToken: p.values.get('admin-token'),
      revokeCommand: p.values.get('revoke-command'),
      helloTimeoutMs: intOption(p, 'hello-timeout-ms', 1) ?? 5000,
      skipSlow: p.flags.has('skip-slow'),
      serverMaxBatchEntries: intOption(p, 'server-max-batch-entries', 1),
      agentRate: intOption(p, 'agent-rate', 1) ?? LIMITS.agent_rate_entries_per_s,
      pingIntervalMs: intOption(p, 'ping-interval-ms', 1),
      missedPongs: intOption(p, 'missed-pongs', 1) ?? 3,
      timeoutMs: intOption(p, 'timeout-ms', 1) ?? 5000,
      agentVersion: p.values.get('agent-version') ?? '1.0.0',
    };
    const runner = new Runner();
    let fatal: string | undefined;
    try {
      await runServerSuite(o, runner);
    } catch (err) {
      if (!(err instanceof TargetUnreachable)) throw err;
      fatal = err.message;
      process.stderr.write(`cortex-conformance: ${fatal}\n`);
      runner.results.push({ id: 'server/reachable', status: 'FAIL', expected: `a WebSocket server at ${url} accepting subprotocol cortex.v1`, seen: fatal, durationMs: 0 });
    }
    results.push(...runner.results);
    return report(results, { suite: 'server', target: url, json: p.flags.has('json'), junit: p.values.get('junit'), fatal });
  }
  if (suite === 'agent') {
    const p = parseArgs(rest, [...AGENT_VALUE_OPTIONS, 'timeout-ms', 'junit'], [...AGENT_FLAGS, 'json']);
    const o = agentOptionsFrom(p);
    const runner = new Runner();
    const fatal = await runAgentSuite(o, runner);
    if (fatal !== undefined) process.stderr.write(`cortex-conformance: ${fatal}\n`);
    return report(runner.results, { suite: 'agent', target: o.runCommand, json: p.flags.has('json'), junit: p.values.get('junit'), fatal });
  }
  throw new UsageError(`unknown suite "${suite}" (server or agent)`);
}

main(process.argv.slice(2)).then(
  (code) => {
    // Sockets and timers of the target may still be open; the report is written.
    process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`cortex-conformance: ${err.message}\nRun "cortex-conformance --help" for the options.\n`);
      process.exit(2);
    }
    process.stderr.write(`cortex-conformance: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
