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
import { HELP, parseFleetArgs, resolveFleetRun } from './cli-options.js';
import { Fleet } from './fleet.js';
import { InputError, TokenJournal, enrollThroughAdmin, readTokenFile, type Identity } from './identities.js';
import { RssWatch, buildReport, formatReport } from './report.js';
import { UsageError, formatCliError } from '../common/errors.js';

/** At the end, how long the agents may take to ship what they generated before closing. */
const DRAIN_MS = 5000;

function log(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown> = {}): void {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, name: 'cortex-fleet', msg, ...fields })}\n`);
}

async function main(argv: string[]): Promise<number> {
  const args = parseFleetArgs(argv);
  if (args === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const v = args.values;
  const { url, enrollCount, runMs } = args;
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
  const { options, rate, serverPid, reportEvery } = resolveFleetRun(args, identities, ca);
  const { workers } = options;
  identities = [...options.identities];
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
