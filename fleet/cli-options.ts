// cortex-fleet's command line: its --help, and the options it resolves from the arguments and
// the identities (cli.ts runs them). Kept apart from cli.ts, which runs the fleet when
// imported, so a test can check every default --help writes against the options built
// (test/contract/cli-defaults.test.ts, R-CLI-01).
import { existsSync, closeSync, openSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LIMITS, PROBES, PROTOCOL_VERSION, validateAgentHelloParams } from '@cortex/agent-protocol';
import { DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_CAP_MS, BACKOFF_RESET_AFTER_MS } from './backoff.js';
import { planWorkers, type FleetOptions } from './fleet.js';
import type { Identity } from './identities.js';
import { FLEET_PROBES } from './probes.js';
import { UsageError } from '../common/errors.js';
import { parseArgsErrorText } from '../common/cli-args.js';

/** Shortest --report-every-s (each record merges a snapshot of every agent). */
export const MIN_REPORT_EVERY_S = 1;

export const HELP = `Usage: cortex-fleet --url URL --tokens FILE [options]   (or: npm run fleet -- ...)

Simulates many agents (own host id and token each, real agent.hello, logs.push with seq and
acks, heartbeats, probe answers, config.update, full-jitter reconnects) against any server.

Who the agents are:
  --tokens FILE             JSON lines {"host_id", "token"} as printed by
                            \`cortex-server agent issue --json\`; rotated tokens are appended to it
                            (last line of a host wins) and it is compacted when the fleet stops
  --agents N                simulate the first N hosts of the file (default: all of them)
  --enroll N                first issue N enrollment tokens through the admin API
                            (POST /admin/agents) and add them to --tokens
  --admin-url URL           the admin API, http(s)://HOST:PORT (for --enroll)
  --admin-token-file FILE   its bearer token (or the CORTEX_ADMIN_TOKEN environment variable)
  --no-persist              keep rotated tokens in memory only

What they do:
  --url URL                 the agent endpoint, ws(s)://HOST:PORT/ws/agent
  --rate R                  log entries per second per agent (default 0: idle, heartbeats only)
  --minutes M | --seconds S how long to run (default: until SIGINT or SIGTERM)
  --window N                logs.push requests in flight per agent (default 4)
  --batch N                 capabilities.max_batch_entries (default 1000)
  --message-bytes N         size of each entry's message, at most ${LIMITS.max_message_chars} (default 120)
  --probes LIST             supported probes, comma-separated, names the contract knows
                            (default ${FLEET_PROBES.join(',')}; those it answers)
  --agent-version V         agent_version in hello, MAJOR.MINOR.PATCH[-…] (default 1.0.0)
  --backoff-base-ms N       reconnect backoff base (default ${DEFAULT_BACKOFF_BASE_MS}, the contract's)
  --backoff-cap-ms N        reconnect backoff cap (default ${DEFAULT_BACKOFF_CAP_MS})
  --hello-timeout-ms N      how long an agent waits for the hello answer (default 15000)
  --start-concurrency N     first connections in flight at once while starting (default 200)
  --ca FILE                 trust this CA for wss://

How it runs and reports:
  --workers N               worker processes (default: one per 5,000 agents up to the core
                            count, more if the open-file hard limit needs it); 0 = this process
  --server-pid PID          report this process's RSS (Linux /proc)
  --report-every-s S        a progress record on stderr every S seconds, at least ${MIN_REPORT_EVERY_S}
                            (default 10; 0 = none)
  --json                    print only the final JSON line on stdout
  --help                    show this help
`;

export const OPTIONS = {
  url: { type: 'string' },
  tokens: { type: 'string' },
  agents: { type: 'string' },
  enroll: { type: 'string' },
  'admin-url': { type: 'string' },
  'admin-token-file': { type: 'string' },
  'no-persist': { type: 'boolean' },
  rate: { type: 'string' },
  minutes: { type: 'string' },
  seconds: { type: 'string' },
  window: { type: 'string' },
  batch: { type: 'string' },
  'message-bytes': { type: 'string' },
  probes: { type: 'string' },
  'agent-version': { type: 'string' },
  'backoff-base-ms': { type: 'string' },
  'backoff-cap-ms': { type: 'string' },
  'hello-timeout-ms': { type: 'string' },
  'start-concurrency': { type: 'string' },
  ca: { type: 'string' },
  workers: { type: 'string' },
  'server-pid': { type: 'string' },
  'report-every-s': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

export type FleetValues = ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; strict: true; allowPositionals: false }>>['values'];

function num(values: Record<string, unknown>, name: string, min: number, max = Number.MAX_SAFE_INTEGER, integer = true): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    throw new UsageError(`--${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max} (got ${JSON.stringify(v)})`);
  }
  return n;
}

/** True when `v` is an agent_version the contract's agent.hello params accept. */
export function agentVersionValid(v: string): boolean {
  const sample = {
    protocol_version: PROTOCOL_VERSION,
    agent_version: v,
    hostname: 'fleet-0',
    host_id: '00000000-0000-4000-8000-000000000000',
    platform: { os: 'linux', arch: 'x86_64' },
    capabilities: { supported_probes: [], sources: ['custom'], max_batch_entries: 1000, compression: [] },
    token: 't'.repeat(43),
    resume_from_seq: 0,
  };
  if (validateAgentHelloParams(sample)) return true;
  return !(validateAgentHelloParams.errors ?? []).some((e) => (e as { instancePath?: string }).instancePath === '/agent_version');
}

/** Refuses a pid that names no process now (ESRCH); one of another user (EPERM) exists. */
function checkPid(pid: number): void {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') throw new UsageError(`--server-pid ${pid}: no such process (give the pid of the running server, e.g. "$(pgrep -f 'cortex-server serve')")`);
  }
}

/**
 * The token file must take appended lines (rotated tokens) before any agent connects: a
 * rotation the file cannot record would lose the host's credential.
 */
export function checkTokenFileWritable(file: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'a', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new UsageError(
      `cannot write the token file ${file} (${code}): rotated tokens are appended to it before an agent sends anything. ` +
        'Make it (and its folder) writable by this user, point --tokens at a copy in a writable folder, ' +
        'or run with --no-persist (rotated tokens are then kept in memory only and these hosts cannot reconnect after the run)',
      { code: 'E_FILE_ACCESS' },
    );
  }
  closeSync(fd);
}

/** What the arguments alone decide (checked before the token file is read or anything is enrolled). */
export interface FleetArgs {
  values: FleetValues;
  url: string;
  /** --enroll N */
  enrollCount: number | undefined;
  /** --minutes / --seconds; null: until SIGINT or SIGTERM. */
  runMs: number | null;
  baseMs: number;
  capMs: number;
  probes: string[];
}

/** Parses and checks the arguments; 'help' when --help was given. Throws UsageError. */
export function parseFleetArgs(argv: string[]): FleetArgs | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  } catch (err) {
    throw new UsageError(parseArgsErrorText(err, Object.keys(OPTIONS)));
  }
  const v = parsed.values;
  if (v.help) return 'help';
  const url = v.url;
  if (url === undefined) throw new UsageError('--url is required (the server\'s agent endpoint, e.g. ws://127.0.0.1:3100/ws/agent)');
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(url);
  } catch {
    throw new UsageError(`--url ${JSON.stringify(url)} is not a URL; write e.g. ws://127.0.0.1:3100/ws/agent`);
  }
  if (parsedUrl.protocol !== 'ws:' && parsedUrl.protocol !== 'wss:') throw new UsageError('--url must be a ws:// or wss:// URL');
  if (v.tokens === undefined && v.enroll === undefined) throw new UsageError('give --tokens FILE (from `cortex-server agent issue --json`) and/or --enroll N --admin-url URL');
  const enrollCount = num(v, 'enroll', 1, 1_000_000);
  if (enrollCount !== undefined && v['admin-url'] === undefined) throw new UsageError('--enroll needs --admin-url http(s)://HOST:PORT');
  if (v['admin-url'] !== undefined) {
    let admin: URL | null = null;
    try {
      admin = new URL(v['admin-url']);
    } catch {
      admin = null;
    }
    if (admin === null || (admin.protocol !== 'http:' && admin.protocol !== 'https:')) {
      throw new UsageError(`--admin-url ${JSON.stringify(v['admin-url'])} is not an http(s) URL; write e.g. http://127.0.0.1:3100`);
    }
  }
  const minutes = num(v, 'minutes', 0, 100_000, false);
  const seconds = num(v, 'seconds', 0, 100_000_000, false);
  if (minutes !== undefined && seconds !== undefined) throw new UsageError('give --minutes or --seconds, not both');
  if (minutes === 0 || seconds === 0) throw new UsageError(`--${minutes === 0 ? 'minutes' : 'seconds'} must be above 0 (leave it out to run until SIGINT or SIGTERM)`);
  const reportEvery = num(v, 'report-every-s', 0, 86_400, false);
  if (reportEvery !== undefined && reportEvery > 0 && reportEvery < MIN_REPORT_EVERY_S) {
    throw new UsageError(`--report-every-s must be 0 (no progress records) or at least ${MIN_REPORT_EVERY_S} (got ${reportEvery})`);
  }
  num(v, 'message-bytes', 0, LIMITS.max_message_chars); // checked here, before anything is enrolled
  const agentVersion = v['agent-version'];
  if (agentVersion !== undefined && !agentVersionValid(agentVersion)) {
    throw new UsageError(`--agent-version ${JSON.stringify(agentVersion)} does not match the contract's agent_version pattern (MAJOR.MINOR.PATCH with an optional -pre or +build suffix, e.g. 1.0.0)`);
  }
  const runMs = minutes !== undefined ? minutes * 60_000 : seconds !== undefined ? seconds * 1000 : null;
  const baseMs = num(v, 'backoff-base-ms', 1, 3_600_000) ?? DEFAULT_BACKOFF_BASE_MS;
  const capMs = num(v, 'backoff-cap-ms', 1, 86_400_000) ?? Math.max(DEFAULT_BACKOFF_CAP_MS, baseMs);
  if (capMs < baseMs) throw new UsageError('--backoff-cap-ms must not be below --backoff-base-ms');
  const probes = v.probes === undefined ? [...FLEET_PROBES] : v.probes.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const known = PROBES.map((p) => p.name as string);
  const unknown = probes.filter((p) => !known.includes(p));
  if (unknown.length > 0) {
    throw new UsageError(`--probes: ${unknown.join(', ')} ${unknown.length === 1 ? 'is not a probe' : 'are not probes'} of the contract (known: ${known.join(', ')}; the emulator answers ${FLEET_PROBES.join(', ')})`);
  }
  return { values: v, url, enrollCount, runMs, baseMs, capMs, probes };
}

/** How the fleet runs: the Fleet's options and the reporting around it. */
export interface FleetRun {
  options: FleetOptions;
  rate: number;
  serverPid: number | undefined;
  /** Seconds between progress records; 0: none. */
  reportEvery: number;
}

/** The options for these identities (the token file's and any enrolled now), and the CA read from --ca. Throws UsageError. */
export function resolveFleetRun(a: FleetArgs, known: readonly Identity[], ca?: string): FleetRun {
  const v = a.values;
  const want = num(v, 'agents', 1, 10_000_000) ?? known.length;
  if (known.length === 0) {
    const why =
      v.tokens !== undefined && !existsSync(v.tokens)
        ? `${v.tokens} does not exist; write it with \`cortex-server agent issue --json >> ${v.tokens}\` or use --enroll N --admin-url URL`
        : `${v.tokens ?? 'the token file'} holds no host (only blank, comment or revoked lines)`;
    throw new UsageError(`no hosts to simulate: ${why}`, { code: 'E_TOKEN' });
  }
  if (want > known.length) {
    throw new UsageError(`--agents ${want} but only ${known.length} hosts are known; issue more (cortex-server agent issue --json >> ${v.tokens ?? 'FILE'}) or use --enroll`);
  }
  const identities = known.slice(0, want);
  const workers = num(v, 'workers', 0, 256) ?? planWorkers(identities.length);
  const rate = num(v, 'rate', 0, 1_000_000, false) ?? 0;
  const serverPid = num(v, 'server-pid', 1, 2 ** 31 - 1);
  if (serverPid !== undefined) checkPid(serverPid);
  const reportEvery = num(v, 'report-every-s', 0, 86_400, false) ?? 10;

  const options: FleetOptions = {
    identities,
    workers,
    url: a.url,
    ratePerAgent: rate,
    backoff: { baseMs: a.baseMs, capMs: a.capMs, resetAfterMs: BACKOFF_RESET_AFTER_MS },
    connectTimeoutMs: 10_000,
    helloTimeoutMs: num(v, 'hello-timeout-ms', 1, 600_000) ?? 15_000,
    requestTimeoutMs: 30_000,
    window: num(v, 'window', 1, 64) ?? 4,
    maxBatchEntries: num(v, 'batch', 1, 1000) ?? 1000,
    messageBytes: num(v, 'message-bytes', 0, LIMITS.max_message_chars) ?? 120,
    probes: a.probes,
    agentVersion: v['agent-version'] ?? '1.0.0',
    startConcurrency: num(v, 'start-concurrency', 1, 100_000) ?? 200,
    ...(v.tokens !== undefined && !v['no-persist'] ? { tokenFile: v.tokens } : {}),
    ...(ca !== undefined ? { ca } : {}),
  };
  return { options, rate, serverPid, reportEvery };
}
