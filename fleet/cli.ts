#!/usr/bin/env node
// cortex-fleet: many simulated agents against any server that speaks the protocol.
//
//   cortex-fleet --url ws://HOST:PORT/ws/agent --tokens FILE [--agents N] [--rate R] [--minutes M]
//
// Progress records (one JSON object per line) go to stderr; the report goes to stdout and
// ends with one JSON line (--json: only that line). Exit 0 when the run completed, 1 when
// an agent was refused for good (-32001/-32003/-32005, or the upgrade refused with an HTTP
// status retrying cannot heal), none ever became Active, entries were generated and none
// stored or some were lost, a worker process died, or --enroll stopped; 2 on bad usage or
// a malformed token file.
import { readFileSync } from 'node:fs';
import { HELP, checkTokenFileWritable, parseFleetArgs, resolveFleetRun } from './cli-options.js';
import { Fleet, type LostWorker } from './fleet.js';
import { EnrollError, InputError, TokenJournal, enrollThroughAdmin, readTokenFile, type Identity } from './identities.js';
import { RssWatch, buildReport, formatReport } from './report.js';
import { UPGRADE_REFUSALS_TO_STOP } from './sim-agent.js';
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
    // Each token is appended to --tokens as it arrives (0600): an interrupted enrollment
    // keeps every token already issued.
    if (v.tokens !== undefined) checkTokenFileWritable(v.tokens);
    const journal = v.tokens !== undefined ? new TokenJournal(v.tokens) : null;
    let issued: Identity[];
    try {
      issued = await enrollThroughAdmin({
        adminUrl: v['admin-url'] as string,
        adminToken,
        count: enrollCount,
        hostnamePrefix: `fleet-${Date.now().toString(36)}`,
        onIssued: (id) => journal?.record(id.host_id, id.token, id.hostname),
      });
    } catch (err) {
      if (!(err instanceof EnrollError)) throw err;
      journal?.close();
      const saved =
        err.issued.length === 0
          ? 'no token was issued'
          : journal !== null
            ? `the ${err.issued.length} tokens issued are saved in ${v.tokens}: run again with --tokens ${v.tokens} (and --enroll ${enrollCount - err.issued.length} for the rest)`
            : `the ${err.issued.length} tokens issued were not saved (no --tokens FILE): give --tokens to keep them`;
      log('error', 'enrollment failed', { err: err.message, issued: err.issued.length, asked: enrollCount, saved: journal !== null && err.issued.length > 0 ? v.tokens : null });
      process.stderr.write(`cortex-fleet: ${err.message}; ${saved}\n`);
      return err.reason instanceof InputError ? 2 : 1;
    }
    journal?.close();
    if (journal === null) log('warn', 'enrolled without --tokens: the rotated tokens live in memory only and these hosts cannot reconnect after this run');
    log('info', 'enrolled through the admin API', { hosts: issued.length, ms: Date.now() - t0, ...(v.tokens !== undefined ? { saved_in: v.tokens } : {}) });
    identities = [...identities, ...issued];
  }
  const { options, rate, serverPid, reportEvery } = resolveFleetRun(args, identities, ca);
  const { workers } = options;
  identities = [...options.identities];
  if (options.tokenFile !== undefined) checkTokenFileWritable(options.tokenFile);
  const fleet = await Fleet.start(options);
  const lost: LostWorker[] = [];
  let allLost: () => void = () => undefined;
  fleet.onWorkerLost((w) => {
    lost.push(w);
    log('error', 'a worker process died: its agents are lost (their figures stop at its last snapshot)', {
      worker: w.worker,
      pid: w.pid,
      exit: w.exit,
      agents: w.agents,
      agent_indexes: w.indexes,
      host_ids: w.host_ids,
    });
    if (lost.reduce((a, x) => a + x.agents, 0) >= identities.length) allLost();
  });
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
    log(s.states.Lost > 0 ? 'warn' : 'info', 'fleet progress', {
      active: s.states.Active,
      reconnecting: s.states.Reconnecting + s.states.Connecting + s.states.Authenticating,
      gave_up: s.states.FatalAuth + s.states.Revoked + Object.entries(s.gaveUp.toJSON()).filter(([k]) => k.startsWith('upgrade_')).reduce((a, [, n]) => a + n, 0),
      ...(s.states.Lost > 0 ? { lost: s.states.Lost } : {}),
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

  // The run ends at --minutes/--seconds, on SIGINT/SIGTERM, or once no agent is left running
  // (every one gave up or was lost: waiting longer would measure nothing).
  let ended = false;
  let endCheck: NodeJS.Timeout | null = null;
  await new Promise<void>((resolve) => {
    const end = () => {
      ended = true;
      resolve();
    };
    allLost = end;
    if (runMs !== null) setTimeout(end, runMs);
    process.once('SIGINT', end);
    process.once('SIGTERM', end);
    endCheck = setInterval(() => {
      void fleet.snapshot().then(
        (s) => {
          const running = s.agents - s.states.FatalAuth - s.states.Revoked - s.states.Stopped - s.states.Lost;
          if (running === 0 && !ended) {
            log('error', 'no agent is left running: ending the run', { states: Object.fromEntries(Object.entries(s.states).filter(([, n]) => n > 0)), gave_up: s.gaveUp.toJSON() });
            end();
          }
        },
        () => undefined,
      );
    }, END_CHECK_MS);
  });
  if (endCheck) clearInterval(endCheck);
  if (ticker) clearInterval(ticker);
  if (stopSampling) clearInterval(stopSampling);
  rss?.sample();
  const final = await fleet.stop(DRAIN_MS);
  const report = buildReport(final, { url, workers, startedAt: fleet.startedAt, rate, rss, fd: fleet.fd });
  if (!v.json) process.stdout.write(`${formatReport(report)}\n`);
  process.stdout.write(`${JSON.stringify(report)}\n`);
  if (fleet.compactionError !== null) {
    log('warn', `the token file ${options.tokenFile} was left uncompacted (${fleet.compactionError}); it is still valid — the last line of each host wins. To have it compacted, keep --tokens in a writable folder (the compaction writes a temporary file beside it and renames it over the file), or run with --no-persist`, {
      file: options.tokenFile,
    });
  }
  return exitStatus(report);
}

/** How long between the checks that some agent is still running. */
const END_CHECK_MS = 5000;

/** The exit status of a finished run (logging why when not 0). */
function exitStatus(report: ReturnType<typeof buildReport>): number {
  let code = 0;
  const fail = (msg: string, fields: Record<string, unknown>) => {
    log('error', msg, fields);
    code = 1;
  };
  const sum = (prefix: string) => Object.entries(report.gave_up).filter(([k]) => k.startsWith(prefix)).reduce((a, [, n]) => a + n, 0);
  if (report.lost_workers.length > 0) {
    fail('worker processes died during the run: their agents are lost and their figures are not final (see lost_workers)', { lost_workers: report.lost_workers.map((w) => ({ worker: w.worker, pid: w.pid, exit: w.exit, agents: w.agents })) });
  }
  if (sum('fatal_') > 0) fail('agents were refused for good (see gave_up): check the token file matches this server', { gave_up: report.gave_up });
  const upgrade = Object.keys(report.gave_up).filter((k) => k.startsWith('upgrade_'));
  if (upgrade.length > 0) {
    fail(`the server refused the WebSocket upgrade with ${upgrade.map((k) => k.replace('upgrade_http_', 'HTTP ')).join(', ')} on every attempt (${UPGRADE_REFUSALS_TO_STOP} in a row per agent), which retrying cannot heal: check --url (the agent endpoint, e.g. ws://HOST:PORT/ws/agent)`, {
      gave_up: report.gave_up,
    });
  }
  if (report.hellos === 0) fail('no agent ever became Active (see errors)', { errors: report.errors });
  else if (report.entries_generated > 0 && report.entries_acked === 0) {
    fail('entries were generated but none was stored (see errors)', { entries_generated: report.entries_generated, errors: report.errors });
  }
  const evicted = report.errors['buffer_evicted'] ?? 0;
  if (report.entries_lost > 0 || evicted > 0) {
    fail('entries were lost: never stored by the server (entries_lost: acked past without being sent; buffer_evicted: dropped from a full buffer)', { entries_lost: report.entries_lost, buffer_evicted: evicted });
  }
  return code;
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
