#!/usr/bin/env node
// cortex-fleet: many simulated agents against any server that speaks the protocol.
//
//   cortex-fleet --url ws://HOST:PORT/ws/agent --tokens FILE [--agents N] [--rate R] [--minutes M]
//
// Progress records (one JSON object per line) go to stderr; the report goes to stdout and
// ends with one JSON line (--json: only that line). Exit 0 when the run completed, 1 when
// an agent was refused for good (-32001/-32003/-32005) or none ever became Active, 2 on bad
// usage or a malformed token file.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_CAP_MS, BACKOFF_RESET_AFTER_MS } from './backoff.js';
import { Fleet, planWorkers, type FleetOptions } from './fleet.js';
import { InputError, TokenJournal, enrollThroughAdmin, readTokenFile, type Identity } from './identities.js';
import { FLEET_PROBES } from './probes.js';
import { RssWatch, buildReport, formatReport } from './report.js';
import { UsageError, formatCliError } from '../common/errors.js';

const HELP = `Usage: cortex-fleet --url URL --tokens FILE [options]   (or: npm run fleet -- ...)

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


/** At the end, how long the agents may take to ship what they generated before closing. */
const DRAIN_MS = 5000;

const OPTIONS = {
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

function log(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, name: 'cortex-fleet', msg, ...fields })}\n`);
}

function num(values: Record<string, unknown>, name: string, min: number, max = Number.MAX_SAFE_INTEGER, integer = true): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
    throw new UsageError(`--${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max} (got ${JSON.stringify(v)})`);
  }
  return n;
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) {
    process.stdout.write(HELP);
    return 0;
  }
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
  let ca: string | undefined;
  if (v.ca !== undefined) {
    try {
      ca = readFileSync(v.ca, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read --ca ${v.ca}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { code: 'E_FILE_ACCESS' });
    }
  }

  // Identities: the token file, plus any issued now through the admin API.
  let identities: Identity[] = v.tokens !== undefined ? readTokenFile(v.tokens) : [];
  if (enrollCount !== undefined) {
    let adminToken = process.env['CORTEX_ADMIN_TOKEN'];
    if (v['admin-token-file'] !== undefined) {
      try {
        adminToken = readFileSync(v['admin-token-file'], 'utf8').trim();
      } catch (err) {
        throw new UsageError(`cannot read --admin-token-file ${v['admin-token-file']}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, { code: 'E_FILE_ACCESS' });
      }
    }
    const t0 = Date.now();
    const issued = await enrollThroughAdmin({ adminUrl: v['admin-url'] as string, adminToken, count: enrollCount, hostnamePrefix: `fleet-${Date.now().toString(36)}` });
    if (v.tokens !== undefined) {
      const journal = new TokenJournal(v.tokens);
      for (const id of issued) journal.record(id.host_id, id.token, id.hostname);
      journal.close();
    } else log('warn', 'enrolled without --tokens: the rotated tokens live in memory only and these hosts cannot reconnect after this run');
    log('info', 'enrolled through the admin API', { hosts: issued.length, ms: Date.now() - t0 });
    identities = [...identities, ...issued];
  }
  const want = num(v, 'agents', 1, 10_000_000) ?? identities.length;
  if (identities.length === 0) throw new UsageError(`no hosts to simulate: ${v.tokens ?? 'the token file'} is empty`, { code: 'E_TOKEN' });
  if (want > identities.length) {
    throw new UsageError(`--agents ${want} but only ${identities.length} hosts are known; issue more (cortex-server agent issue --json >> ${v.tokens ?? 'FILE'}) or use --enroll`);
  }
  identities = identities.slice(0, want);
  const workers = num(v, 'workers', 0, 256) ?? planWorkers(identities.length);
  const rate = num(v, 'rate', 0, 1_000_000, false) ?? 0;
  const serverPid = num(v, 'server-pid', 1);
  const reportEvery = num(v, 'report-every-s', 0, 86_400, false) ?? 10;

  const options: FleetOptions = {
    identities,
    workers,
    url,
    ratePerAgent: rate,
    backoff: { baseMs, capMs, resetAfterMs: BACKOFF_RESET_AFTER_MS },
    connectTimeoutMs: 10_000,
    helloTimeoutMs: num(v, 'hello-timeout-ms', 1, 600_000) ?? 15_000,
    requestTimeoutMs: 30_000,
    window: num(v, 'window', 1, 64) ?? 4,
    maxBatchEntries: num(v, 'batch', 1, 1000) ?? 1000,
    messageBytes: num(v, 'message-bytes', 0, 65_000) ?? 120,
    probes,
    agentVersion: v['agent-version'] ?? '1.0.0',
    startConcurrency: num(v, 'start-concurrency', 1, 100_000) ?? 200,
    ...(v.tokens !== undefined && !v['no-persist'] ? { tokenFile: v.tokens } : {}),
    ...(ca !== undefined ? { ca } : {}),
  };
  const fleet = await Fleet.start(options);
  if (fleet.fd.insufficient) {
    log('warn', 'open-file limit too low for the agents per process; connections will fail with EMFILE: add --workers or raise the hard limit', { ...fleet.fd });
  } else if (fleet.fd.raised) {
    log('info', 'raised the open-file limit of the workers', { ...fleet.fd });
  }
  log('info', 'fleet started', { agents: identities.length, workers, url, rate_per_agent: rate });
  const rss = serverPid !== undefined ? new RssWatch(serverPid) : null;
  rss?.sample();

  let last = { at: fleet.startedAt, hellos: 0, acked: 0, errors: 0 };
  const progress = async () => {
    rss?.sample();
    const s = await fleet.snapshot();
    const hellos = s.hellos.between(0, Number.MAX_SAFE_INTEGER);
    const errors = Object.values(s.errors.toJSON()).reduce((a, b) => a + b, 0);
    const dt = Math.max(0.001, (s.takenAt - last.at) / 1000);
    log('info', 'fleet progress', {
      active: s.states.Active,
      reconnecting: s.states.Reconnecting + s.states.Connecting + s.states.Authenticating,
      gave_up: s.states.FatalAuth + s.states.Revoked,
      hellos_per_s: Math.round((hellos - last.hellos) / dt),
      entries_per_s: Math.round((s.counters.entries_acked - last.acked) / dt),
      errors_per_s: Math.round((errors - last.errors) / dt),
      ack_p99_ms: s.ackLatency.quantile(0.99),
      server_rss_bytes: rss?.last ?? undefined,
    });
    last = { at: s.takenAt, hellos, acked: s.counters.entries_acked, errors };
  };
  const ticker = reportEvery > 0 ? setInterval(() => void progress().catch(() => undefined), reportEvery * 1000) : null;
  const stopSampling = rss ? setInterval(() => rss.sample(), 1000) : null;

  await new Promise<void>((resolve) => {
    if (runMs !== null) setTimeout(resolve, runMs);
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  if (ticker) clearInterval(ticker);
  if (stopSampling) clearInterval(stopSampling);
  rss?.sample();
  const final = await fleet.stop(DRAIN_MS);
  const report = buildReport(final, { url, workers, startedAt: fleet.startedAt, rate, rss, fd: fleet.fd });
  if (!v.json) process.stdout.write(`${formatReport(report)}\n`);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  const fatal = Object.entries(report.gave_up).filter(([k]) => k.startsWith('fatal_')).reduce((a, [, n]) => a + n, 0);
  if (fatal > 0) {
    log('error', 'agents were refused for good (see gave_up): check the token file matches this server', { gave_up: report.gave_up });
    return 1;
  }
  if (report.hellos === 0) {
    log('error', 'no agent ever became Active (see errors)', { errors: report.errors });
    return 1;
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof InputError) {
      const code = err instanceof UsageError ? err.code : 'E_CONFIG';
      process.stderr.write(`cortex-fleet: ${formatCliError(code, err.message, 'run "cortex-fleet --help" for the options')}\n`);
      process.exit(2);
    }
    log('error', 'fleet failed', { err: (err as Error)?.message ?? String(err) });
    process.exit(1);
  },
);
