// cortex-fleet's command line: its --help, and the options it resolves from the arguments and
// the identities (cli.ts runs them). Kept apart from cli.ts, which runs the fleet when
// imported, so a test can check every default --help writes against the options built
// (test/contract/cli-defaults.test.ts, R-CLI-01).
import { parseArgs } from 'node:util';
import { DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_CAP_MS, BACKOFF_RESET_AFTER_MS } from './backoff.js';
import { planWorkers, type FleetOptions } from './fleet.js';
import type { Identity } from './identities.js';
import { FLEET_PROBES } from './probes.js';
import { UsageError } from '../common/errors.js';
import { parseArgsErrorText } from '../common/cli-args.js';

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
  --message-bytes N         size of each entry's message (default 120)
  --probes LIST             supported probes, comma-separated (default ${FLEET_PROBES.join(',')})
  --agent-version V         agent_version in hello (default 1.0.0)
  --backoff-base-ms N       reconnect backoff base (default ${DEFAULT_BACKOFF_BASE_MS}, the contract's)
  --backoff-cap-ms N        reconnect backoff cap (default ${DEFAULT_BACKOFF_CAP_MS})
  --hello-timeout-ms N      how long an agent waits for the hello answer (default 15000)
  --start-concurrency N     first connections in flight at once while starting (default 200)
  --ca FILE                 trust this CA for wss://

How it runs and reports:
  --workers N               worker processes (default: one per 5,000 agents up to the core
                            count, more if the open-file hard limit needs it); 0 = this process
  --server-pid PID          report this process's RSS (Linux /proc)
  --report-every-s S        a progress record on stderr every S seconds (default 10; 0 = none)
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
  const minutes = num(v, 'minutes', 0, 100_000, false);
  const seconds = num(v, 'seconds', 0, 100_000_000, false);
  if (minutes !== undefined && seconds !== undefined) throw new UsageError('give --minutes or --seconds, not both');
  const runMs = minutes !== undefined ? minutes * 60_000 : seconds !== undefined ? seconds * 1000 : null;
  const baseMs = num(v, 'backoff-base-ms', 1, 3_600_000) ?? DEFAULT_BACKOFF_BASE_MS;
  const capMs = num(v, 'backoff-cap-ms', 1, 86_400_000) ?? Math.max(DEFAULT_BACKOFF_CAP_MS, baseMs);
  if (capMs < baseMs) throw new UsageError('--backoff-cap-ms must not be below --backoff-base-ms');
  const probes = v.probes === undefined ? [...FLEET_PROBES] : v.probes.split(',').map((s) => s.trim()).filter((s) => s !== '');
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
  if (known.length === 0) throw new UsageError(`no hosts to simulate: ${v.tokens ?? 'the token file'} is empty`, { code: 'E_TOKEN' });
  if (want > known.length) {
    throw new UsageError(`--agents ${want} but only ${known.length} hosts are known; issue more (cortex-server agent issue --json >> ${v.tokens ?? 'FILE'}) or use --enroll`);
  }
  const identities = known.slice(0, want);
  const workers = num(v, 'workers', 0, 256) ?? planWorkers(identities.length);
  const rate = num(v, 'rate', 0, 1_000_000, false) ?? 0;
  const serverPid = num(v, 'server-pid', 1);
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
    messageBytes: num(v, 'message-bytes', 0, 65_000) ?? 120,
    probes: a.probes,
    agentVersion: v['agent-version'] ?? '1.0.0',
    startConcurrency: num(v, 'start-concurrency', 1, 100_000) ?? 200,
    ...(v.tokens !== undefined && !v['no-persist'] ? { tokenFile: v.tokens } : {}),
    ...(ca !== undefined ? { ca } : {}),
  };
  return { options, rate, serverPid, reportEvery };
}
