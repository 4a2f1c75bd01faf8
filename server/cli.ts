#!/usr/bin/env node
// cortex-server: `serve` and the agent admin commands (DESIGN.md section 3).
// Results go to stdout, logs and diagnostics to stderr; exit 0 ok, 2 bad usage or
// invalid input (nothing changed), 1 any other failure.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ServerConfig } from '@cortex/agent-protocol';
import type { AgentSummary } from './db/agents.repository.js';
import type { LogView } from './db/logs.repository.js';
import { UnknownHostError, type Storage } from './db/storage.js';
import { DEFAULT_DB, DEFAULT_LISTEN, UsageError, isLoopbackHost, readConfigFile, resolveSettings } from './settings.js';
import { MIGRATE_HELP, checkDbArg, dbArg, migrateCommand, openDbForCli, poolArg } from './cli-db.js';

// Heavy modules (kysely, better-sqlite3, ws, pino) load only when a command needs them,
// so `--help` and usage errors answer at once.
const repo = () => import('./db/agents.repository.js');
const logsRepo = () => import('./db/logs.repository.js');
const securityCommands = () => import('./security/commands.js');

const PROG = 'cortex-server';

const HELP = {
  main: `Usage: ${PROG} <command> [options]   (or: npm run server -- <command>)

Commands:
  serve                          run the server (WebSocket endpoint /ws/agent, GET /healthz)
  migrate                        bring the database to this version's schema and exit
  agent issue --host HOSTNAME    register a host and print its one-time enrollment token
  agent issue --host-id HOST_ID  issue a fresh one-time token for an existing host
  agent list                     list the agents
  agent tail HOST_ID             show recent log rows of a host
  agent revoke HOST_ID           revoke a host (its live session is closed 4002)
  agent rotate HOST_ID           rotate a host's token at its next hello (grace window for the old one)
  agent decommission HOST_ID     drain, then revoke a host (rows kept)
  agent config HOST_ID           set (--set JSON) or clear (--clear) a host's AgentConfig
  agent reset-seq HOST_ID        repair a host whose accepted_seq is beyond max_seq (2^53 - 1)
  agent tokens                   list unused one-time enrollment tokens
  agent withdraw HOST_ID         withdraw a host's unused one-time enrollment token
  audit                          the audit trail of admin actions
  probe HOST_ID PROBE --url URL  run a probe on a connected host through the admin API
  backup --to FILE               consistent copy of the SQLite database, safe while serving

Every command takes --db PATH|URL (a SQLite file, or postgres://USER@HOST:PORT/DATABASE;
default $CORTEX_DB, then ${DEFAULT_DB}) and --help.
`,
  serve: `Usage: ${PROG} serve [options]

Options:
  --db PATH|URL              SQLite file (created with its folder) or postgres://USER@HOST:PORT/DATABASE
                             (also postgresql://; default $CORTEX_DB, then ${DEFAULT_DB})
  --db-pool N                PostgreSQL connections of this process (default 10)
  --server-id ID             this server's name among several on one database (default hostname:port)
  --lease-secs N             a server not renewing its lease this long counts as dead (default 15)
  --listen HOST:PORT         address to listen on (default ${DEFAULT_LISTEN}; port 0 picks one)
  --config FILE              JSON server config (generated/schemas/server-config.json); flags override it
  --admin-token-file FILE    bearer token for the admin HTTP API, read from FILE (or $CORTEX_ADMIN_TOKEN)
  --admin-token T            the same on the command line (visible to local processes; prefer the file)
  --metrics-public           serve GET /metrics to every client (default: local requests and admin-token holders)
  --allow-origin ORIGIN      accept WebSocket upgrades carrying this Origin (repeatable; default: none)
  --failed-hellos-before-throttle N   failed hellos per address before its upgrades get 429 (default 5; 0 off)
  --tls-cert FILE --tls-key FILE   serve wss:// natively
  --allow-insecure           allow a non-loopback --listen without TLS
  --min-agent-version V      oldest agent_version accepted (semver)
  --max-batch-entries N      server cap on logs.push entries (<= 1000; more is -32008)
  --ingest-queue-batches N   ingest queue capacity in batches of 1000 (>= 16)
  --agent-rate N             per-agent leaky bucket, entries/s (burst: one second of it)
  --upgrades-per-minute N    upgrade attempts per client address per minute (0 disables)
  --trusted-proxy CIDR       trusted reverse proxy (repeatable; default 127.0.0.0/8 and ::1)
  --hello-timeout-ms N       hello timer (default 5000)
  --ping-interval-ms N       WebSocket ping interval (default 20000)
  --missed-pongs N           missed pongs before close 1011 (default 3)
  --rotation-grace-secs N    grace window of the previous token after a rotation (default 300)
  --shutdown-drain-secs N    drain_seconds on server stop (default 10)
  --retention-days N         delete logs/metrics older than N days (default 30; 0 keeps everything)
  --max-db-bytes N           also delete the oldest rows while the database holds more than N bytes
  --help                     show this help
`,
  agent: `Usage: ${PROG} agent <issue|list|tail|revoke|rotate|decommission|config|reset-seq|tokens|withdraw> [options]   (--help on each)
`,
  revoke: `Usage: ${PROG} agent revoke HOST_ID [--db PATH|URL]

  Both token hashes NULL, state Revoked. A running server holding the host's session sends
  agent.shutdown {Revoked, 0} and closes it with 4002 within 2 s. Undo: agent issue --host-id.
`,
  rotate: `Usage: ${PROG} agent rotate HOST_ID [--grace-secs N] [--db PATH|URL]

  The host's next hello gets a new token (a connected agent is asked to reconnect within 2 s).
  --grace-secs N   how long the previous token still works after that hello (default: the
                   server's rotation_grace_secs, 300)
`,
  decommission: `Usage: ${PROG} agent decommission HOST_ID [--drain-secs N] [--db PATH|URL]

  The server holding the session sends agent.shutdown {Decommission, N}, keeps acking for N
  seconds (default 30), then revokes; at once when the host is not connected. Rows are kept.
`,
  config: `Usage: ${PROG} agent config HOST_ID (--set JSON [--apply-after RFC3339] | --clear) [--db PATH|URL]

  --set JSON               a complete AgentConfig (generated/schemas), stored verbatim; a connected
                           agent gets it as config.update within 2 s; max_batch_entries may not
                           exceed the server's max_batch_entries
  --apply-after RFC3339    staged rollout: the agent applies it from that time on
  --clear                  back to the server's default config
`,
  probe: `Usage: ${PROG} probe HOST_ID PROBE [--args JSON] [--timeout-ms N] --url http://HOST:PORT [--admin-token T] [--db PATH]

  Runs PROBE on the connected host through the server's admin API and prints the ProbeOutput
  JSON. On a JSON-RPC error prints {"error": {...}} and exits 1.
  --args JSON        probe arguments (default {})
  --timeout-ms N     probe budget (default 10000)
  --url URL          the server (http://, https://, or its ws:// URL)
  --admin-token T    the server's admin token, if it has one (or $CORTEX_ADMIN_TOKEN)
  --db PATH          optional: first check that HOST_ID is registered in this database (unknown:
                     exit 2, nothing sent); the probe itself always goes through --url
`,
  issue: `Usage: ${PROG} agent issue (--host HOSTNAME | --host-id HOST_ID) [--expires-in DURATION] [--json] [--db PATH|URL]

  --host HOSTNAME    create a NeverConnected host with a new host_id and a one-time token
  --host-id HOST_ID  new one-time token for an existing host (re-enrollment); its rows are kept
  --expires-in D     the token stops working after D (90s, 30m, 24h, 7d; default 7d)
  --json             print {"host_id", "hostname", "token"} as one JSON object
`,
  list: `Usage: ${PROG} agent list [--json] [--db PATH|URL]

  --json   print one JSON array of agent rows (no token hashes)
`,
  tail: `Usage: ${PROG} agent tail HOST_ID [-n N] [--follow] [--json] [--db PATH|URL]

  -n N       how many recent rows (default 20), oldest first
  --follow   keep printing new rows until interrupted
  --json     one JSON array (with --follow: one JSON object per line)
`,
};

const out = (s: string) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
const err = (s: string) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`);

/**
 * `--name value` → `--name=value` for the string options, unless the value is itself one
 * of the options: node's parseArgs refuses a value that begins with "-", and a base64url
 * token (an admin token, say) can.
 */
export function attachValues(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const isOption = (a: string) => a === '-h' || (a.startsWith('--') && (a.slice(2).split('=')[0] as string) in { ...options, help: true });
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    const next = args[i + 1];
    if (a.startsWith('--') && !a.includes('=') && options[a.slice(2)]?.type === 'string' && next !== undefined && !isOption(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, help: string, positionals = false) {
  try {
    const parsed = parseArgs({ args: attachValues(args, options), options: { ...options, help: { type: 'boolean' } }, strict: true, allowPositionals: positionals });
    if ((parsed.values as { help?: boolean }).help) {
      out(help);
      process.exit(0);
    }
    return parsed;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${(error as Error).message}\n\n${help}`);
  }
}

function int(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

async function openDb(path: string): Promise<Storage> {
  return openDbForCli(path);
}

async function withDb<T>(path: string, fn: (s: Storage) => Promise<T>): Promise<T> {
  const storage = await openDb(path);
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}

async function serve(args: string[]): Promise<void> {
  const { values } = parse(
    args,
    {
      db: { type: 'string' },
      'db-pool': { type: 'string' },
      'server-id': { type: 'string' },
      'lease-secs': { type: 'string' },
      listen: { type: 'string' },
      config: { type: 'string' },
      'admin-token': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'allow-insecure': { type: 'boolean' },
      'min-agent-version': { type: 'string' },
      'max-batch-entries': { type: 'string' },
      'ingest-queue-batches': { type: 'string' },
      'agent-rate': { type: 'string' },
      'upgrades-per-minute': { type: 'string' },
      'trusted-proxy': { type: 'string', multiple: true },
      'hello-timeout-ms': { type: 'string' },
      'ping-interval-ms': { type: 'string' },
      'missed-pongs': { type: 'string' },
      'rotation-grace-secs': { type: 'string' },
      'shutdown-drain-secs': { type: 'string' },
      'retention-days': { type: 'string' },
      'max-db-bytes': { type: 'string' },
      'admin-token-file': { type: 'string' },
      'metrics-public': { type: 'boolean' },
      'failed-hellos-before-throttle': { type: 'string' },
      'allow-origin': { type: 'string', multiple: true },
    },
    HELP.serve,
  );
  const security = await securityCommands();
  const file = values.config !== undefined ? readConfigFile(values.config) : {};
  const flags: Record<string, unknown> = {
    listen: values.listen,
    db: values.db,
    admin_token: security.serveAdminToken(values['admin-token'], values['admin-token-file'], process.env['CORTEX_ADMIN_TOKEN']),
    metrics_public: values['metrics-public'],
    failed_hellos_before_throttle: int('--failed-hellos-before-throttle', values['failed-hellos-before-throttle']),
    allowed_origins: values['allow-origin'],
    tls_cert: values['tls-cert'],
    tls_key: values['tls-key'],
    allow_insecure: values['allow-insecure'],
    min_agent_version: values['min-agent-version'],
    max_batch_entries: int('--max-batch-entries', values['max-batch-entries']),
    ingest_queue_batches: int('--ingest-queue-batches', values['ingest-queue-batches']),
    agent_rate_entries_per_s: int('--agent-rate', values['agent-rate']),
    upgrades_per_minute: int('--upgrades-per-minute', values['upgrades-per-minute']),
    trusted_proxies: values['trusted-proxy'],
    hello_timeout_ms: int('--hello-timeout-ms', values['hello-timeout-ms']),
    ping_interval_ms: int('--ping-interval-ms', values['ping-interval-ms']),
    missed_pongs: int('--missed-pongs', values['missed-pongs']),
    rotation_grace_secs: int('--rotation-grace-secs', values['rotation-grace-secs']),
    shutdown_drain_secs: int('--shutdown-drain-secs', values['shutdown-drain-secs']),
    retention_days: int('--retention-days', values['retention-days']),
    max_db_bytes: int('--max-db-bytes', values['max-db-bytes']),
  };
  const settings = resolveSettings(file, flags as ServerConfig);
  checkDbArg(settings.db);
  const dbPool = poolArg(values['db-pool']);
  const serverId = values['server-id'];
  if (serverId !== undefined && !/^[A-Za-z0-9._:@-]{1,200}$/.test(serverId)) {
    throw new UsageError(`--server-id ${JSON.stringify(serverId)}: use 1..200 letters, digits and . _ : @ -`);
  }
  const leaseSecs = int('--lease-secs', values['lease-secs']);
  if (leaseSecs !== undefined && (leaseSecs < 3 || leaseSecs > 3600)) throw new UsageError('--lease-secs must be 3..3600');
  const tls = settings.tls_cert !== undefined || settings.tls_key !== undefined;
  if (tls && (settings.tls_cert === undefined || settings.tls_key === undefined)) {
    throw new UsageError('--tls-cert and --tls-key go together: give both or neither');
  }
  if (!tls && !isLoopbackHost(settings.listen.host) && !settings.allow_insecure) {
    throw new UsageError(
      `refusing to listen on ${settings.listen.host} without TLS: give --tls-cert and --tls-key, listen on a loopback address behind a TLS proxy, or pass --allow-insecure`,
    );
  }
  const [{ createLogger, logCrashes }, { startServer }] = await Promise.all([import('./log.js'), import('./server.js')]);
  const logger = createLogger({ name: 'cortex-server' });
  logCrashes(logger);
  const { serveStartError } = await import('./cluster/errors.js');
  const server = await startServer({
    settings,
    logger,
    dbPool,
    ...(serverId !== undefined ? { serverId } : {}),
    ...(leaseSecs !== undefined ? { leaseMs: leaseSecs * 1000 } : {}),
  }).catch((error: unknown) => {
    throw serveStartError(error);
  });
  logger.info({ url: server.url, db: server.dbDisplay, server_id: server.serverId, max_batch_entries: settings.max_batch_entries }, 'listening');
  logger.info(
    { enroll: { issue: `npm run server -- agent issue --host HOSTNAME --db ${server.dbDisplay}`, url: server.url } },
    'to enroll an agent: issue a token, then run the agent enroll command with it',
  );
  err(
    `cortex-server listening on ${server.url}\n` +
      `To enroll an agent:\n` +
      `  1. npm run server -- agent issue --host HOSTNAME --db ${server.dbDisplay}   (prints host_id and a one-time token)\n` +
      `  2. on the host: cortex-agent enroll --server ${server.url} --host-id HOST_ID --token-file TOKEN_FILE --state-dir DIR` +
      (server.url.startsWith('ws://') ? ' --allow-insecure' : '') +
      `\n` +
      `Operator console: ${server.url.replace(/^ws/, 'http').replace(/\/ws\/agent$/, '/ui/')}\n`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal: stop draining and close now.
      logger.info({ signal }, 'second signal: closing without waiting for the drain');
      void server.close();
      return;
    }
    stopping = true;
    logger.info({ signal, drain_seconds: settings.shutdown_drain_secs }, 'stopping: draining sessions');
    server.shutdown(settings.shutdown_drain_secs).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: String(error) }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function agentIssue(args: string[]): Promise<void> {
  const { values } = parse(args, { db: { type: 'string' }, host: { type: 'string' }, 'host-id': { type: 'string' }, json: { type: 'boolean' }, 'expires-in': { type: 'string' } }, HELP.issue);
  const security = await securityCommands();
  const ttlMs = security.enrollmentTtl(values['expires-in']);
  const host = values.host;
  const hostId = values['host-id'];
  if ((host === undefined) === (hostId === undefined)) throw new UsageError(`give exactly one of --host HOSTNAME or --host-id HOST_ID\n\n${HELP.issue}`);
  if (host !== undefined && (host.length < 1 || host.length > 253)) throw new UsageError('--host must be 1..253 characters');
  if (hostId !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(hostId)) {
    throw new UsageError(`--host-id ${JSON.stringify(hostId)} is not a UUID; see \`${PROG} agent list\``);
  }
  const { issueAgent, reissueToken } = await repo();
  const issued = await withDb(dbArg(values.db), async (s) => {
    let r: Awaited<ReturnType<typeof issueAgent>>;
    if (host !== undefined) r = await issueAgent(s.db, host);
    else {
      try {
        r = await reissueToken(s.db, hostId as string);
      } catch (error) {
        if (error instanceof UnknownHostError) throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``);
        throw error;
      }
    }
    await security.afterIssue(s.db, r, ttlMs, host === undefined);
    return r;
  });
  if (values.json) {
    out(JSON.stringify({ host_id: issued.host_id, hostname: issued.hostname, token: issued.token }));
  } else {
    out(`host_id:  ${issued.host_id}\nhostname: ${issued.hostname}\ntoken:    ${issued.token}`);
    err(`The token is shown once and works for one enrollment. On the host, put it in a file (mode 0600) and run:\n  cortex-agent enroll --server URL --host-id ${issued.host_id} --token-file FILE --state-dir DIR   (or --token - to read it from stdin)`);
  }
}

async function agentList(args: string[]): Promise<void> {
  const { values } = parse(args, { db: { type: 'string' }, json: { type: 'boolean' } }, HELP.list);
  const { listAgents } = await repo();
  const agents = await withDb(dbArg(values.db), (s) => listAgents(s.db));
  if (values.json) {
    out(JSON.stringify(agents.map(normalizeAgent)));
    return;
  }
  if (agents.length === 0) {
    out('no agents; add one with: agent issue --host HOSTNAME');
    return;
  }
  const rows = agents.map((a) => [a.host_id, a.hostname, a.connection_state, String(a.accepted_seq), a.last_seen ?? '-', a.last_disconnect_reason ?? '-', a.server_id ?? '-']);
  const head = ['HOST_ID', 'HOSTNAME', 'STATE', 'ACCEPTED_SEQ', 'LAST_SEEN', 'LAST_DISCONNECT', 'SERVER'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  for (const r of [head, ...rows]) out(r.map((c, i) => c.padEnd(widths[i] as number)).join('  ').trimEnd());
}

function normalizeAgent(a: AgentSummary): AgentSummary {
  return { ...a, accepted_seq: Number(a.accepted_seq), control_rev: Number(a.control_rev), config_version: Number(a.config_version) };
}

function formatLog(l: LogView): string {
  const app = l.app_name ? ` ${l.app_name}${l.process_id ? `[${l.process_id}]` : ''}:` : '';
  return `${l.seq} ${l.ts} ${l.severity.padEnd(7)} ${l.source}${app} ${l.message}`;
}

async function agentTail(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    { db: { type: 'string' }, n: { type: 'string', short: 'n' }, follow: { type: 'boolean' }, json: { type: 'boolean' } },
    HELP.tail,
    true,
  );
  if (positionals.length !== 1) throw new UsageError(`give exactly one HOST_ID\n\n${HELP.tail}`);
  const hostId = (positionals[0] as string).toLowerCase();
  const n = int('-n', values.n) ?? 20;
  const [{ getAgent }, { since, tail }] = await Promise.all([repo(), logsRepo()]);
  const storage = await openDb(dbArg(values.db));
  try {
    if ((await getAgent(storage.db, hostId)) === undefined) {
      throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``);
    }
    const rows = await tail(storage.db, hostId, n);
    if (values.json && !values.follow) out(JSON.stringify(rows));
    else for (const r of rows) out(values.json ? JSON.stringify(r) : formatLog(r));
    if (!values.follow) return;
    let last = rows.length > 0 ? (rows[rows.length - 1] as LogView).seq : 0;
    let stop = false;
    const onSignal = () => (stop = true);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    while (!stop) {
      const more = await since(storage.db, hostId, last, 1000);
      for (const r of more) out(values.json ? JSON.stringify(r) : formatLog(r));
      if (more.length > 0) last = (more[more.length - 1] as LogView).seq;
      else await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await storage.close();
  }
}

function oneHost(positionals: string[], help: string): string {
  if (positionals.length !== 1) throw new UsageError(`give exactly one HOST_ID\n\n${help}`);
  const hostId = (positionals[0] as string).toLowerCase();
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(hostId)) {
    throw new UsageError(`HOST_ID ${JSON.stringify(positionals[0])} is not a UUID; see \`${PROG} agent list\``);
  }
  return hostId;
}

/** Maps the repository's UnknownHostError / HostRevokedError to exit 2 with a clear message. */
async function adminOp<T>(hostId: string, fn: () => Promise<T>): Promise<T> {
  const { HostRevokedError } = await import('./db/storage.js');
  try {
    return await fn();
  } catch (error) {
    if (error instanceof UnknownHostError) throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``);
    if (error instanceof HostRevokedError) throw new UsageError(`host ${hostId} is revoked; take it back with \`${PROG} agent issue --host-id ${hostId}\` first`);
    throw error;
  }
}

async function agentRevoke(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' } }, HELP.revoke, true);
  const hostId = oneHost(positionals, HELP.revoke);
  const { revoke } = await repo();
  await withDb(dbArg(values.db), async (s) => {
    await adminOp(hostId, () => revoke(s.db, hostId));
    await (await securityCommands()).auditCli(s.db, 'agent.revoke', hostId);
  });
  out(`revoked ${hostId}; a server holding its session closes it (4002) within 2 s`);
}

async function agentRotate(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' }, 'grace-secs': { type: 'string' } }, HELP.rotate, true);
  const hostId = oneHost(positionals, HELP.rotate);
  const { getSetting } = await import('./db/settings.repository.js');
  const { requestRotation } = await repo();
  const { LIMITS } = await import('@cortex/agent-protocol');
  const given = int('--grace-secs', values['grace-secs']);
  await withDb(dbArg(values.db), async (s) => {
    const recorded = await getSetting(s.db, 'rotation_grace_secs');
    const grace = given ?? (typeof recorded === 'number' ? recorded : LIMITS.rotation_grace_secs);
    await adminOp(hostId, () => requestRotation(s.db, hostId, grace));
    await (await securityCommands()).auditCli(s.db, 'agent.rotate', hostId, { grace_secs: grace });
    out(`rotation requested for ${hostId} (grace ${grace} s): its next hello gets a new token; a connected agent is asked to reconnect within 2 s`);
  });
}

async function agentDecommission(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { db: { type: 'string' }, 'drain-secs': { type: 'string' } }, HELP.decommission, true);
  const hostId = oneHost(positionals, HELP.decommission);
  const { LIMITS } = await import('@cortex/agent-protocol');
  const drain = int('--drain-secs', values['drain-secs']) ?? LIMITS.decommission_drain_secs;
  if (drain > LIMITS.max_drain_seconds) throw new UsageError(`--drain-secs must be at most ${LIMITS.max_drain_seconds}`);
  const { requestDecommission, getAgent, revoke } = await repo();
  await withDb(dbArg(values.db), async (s) => {
    await adminOp(hostId, () => requestDecommission(s.db, hostId, drain));
    await (await securityCommands()).auditCli(s.db, 'agent.decommission', hostId, { drain_secs: drain });
    const row = await getAgent(s.db, hostId);
    if (row !== undefined && row.connection_state !== 'Active') {
      // Not connected: revoke at once (DESIGN 5.13). A session that is still open somewhere
      // is drained and revoked by its server.
      await revoke(s.db, hostId);
      out(`decommissioned ${hostId}: not connected, revoked now (rows kept)`);
    } else {
      out(`decommission requested for ${hostId}: the server holding its session drains it for ${drain} s, then revokes (rows kept)`);
    }
  });
}

async function agentConfig(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    { db: { type: 'string' }, set: { type: 'string' }, clear: { type: 'boolean' }, 'apply-after': { type: 'string' } },
    HELP.config,
    true,
  );
  const hostId = oneHost(positionals, HELP.config);
  if ((values.set === undefined) === (values.clear !== true)) throw new UsageError(`give exactly one of --set JSON or --clear\n\n${HELP.config}`);
  if (values.clear && values['apply-after'] !== undefined) throw new UsageError('--apply-after goes with --set, not --clear');
  const { validateAgentConfig, toIssues, describeIssues, LIMITS } = await import('@cortex/agent-protocol');
  let configJson: string | null = null;
  let cap = 0;
  let parsedMax = 0;
  if (values.set !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(values.set);
    } catch (error) {
      throw new UsageError(`--set is not valid JSON: ${(error as Error).message}`);
    }
    if (!validateAgentConfig(parsed)) {
      throw new UsageError(`--set is not a valid AgentConfig: ${describeIssues(toIssues(validateAgentConfig.errors), 5)} (see generated/schemas/defs.json#/$defs/AgentConfig; give a complete config)`);
    }
    configJson = values.set;
    parsedMax = parsed.max_batch_entries;
  }
  let applyAfter: string | null = null;
  const aa = values['apply-after'];
  if (aa !== undefined) {
    const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
    const t = Date.parse(aa);
    if (!rfc3339.test(aa) || Number.isNaN(t)) throw new UsageError(`--apply-after ${JSON.stringify(aa)} is not an RFC 3339 date-time such as 2026-05-16T20:00:00Z`);
    applyAfter = new Date(t).toISOString();
  }
  const { setAgentConfig } = await repo();
  const { getSetting } = await import('./db/settings.repository.js');
  await withDb(dbArg(values.db), async (s) => {
    const recorded = await getSetting(s.db, 'max_batch_entries');
    cap = typeof recorded === 'number' ? recorded : LIMITS.server_max_batch_entries;
    if (configJson !== null && parsedMax > cap) {
      throw new UsageError(`max_batch_entries ${parsedMax} exceeds the server's max_batch_entries (${cap}, recorded by serve); lower it`);
    }
    await adminOp(hostId, () => setAgentConfig(s.db, hostId, configJson, applyAfter));
    await (await securityCommands()).auditCli(s.db, configJson === null ? 'agent.config.clear' : 'agent.config.set', hostId, applyAfter ? { apply_after: applyAfter } : undefined);
  });
  out(
    configJson === null
      ? `config of ${hostId} cleared: the server default applies; a connected agent gets it within 2 s`
      : `config of ${hostId} stored${applyAfter ? ` (applies after ${applyAfter})` : ''}; a connected agent gets it within 2 s`,
  );
}

async function probeCmd(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    { args: { type: 'string' }, 'timeout-ms': { type: 'string' }, url: { type: 'string' }, 'admin-token': { type: 'string' }, db: { type: 'string' } },
    HELP.probe,
    true,
  );
  if (positionals.length !== 2) throw new UsageError(`give HOST_ID and PROBE\n\n${HELP.probe}`);
  const [hostId, probe] = positionals as [string, string];
  if (values.url === undefined) throw new UsageError(`--url is required (the server, e.g. http://127.0.0.1:3100)\n\n${HELP.probe}`);
  let base: URL;
  try {
    base = new URL(values.url.replace(/^ws(s?):/i, 'http$1:'));
  } catch {
    throw new UsageError(`--url ${JSON.stringify(values.url)} is not a URL such as http://127.0.0.1:3100`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError('--url must be http://, https://, ws:// or wss://');
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
    const { getAgent } = await repo();
    const known = await withDb(values.db, async (st) => (await getAgent(st.db, hostId)) !== undefined);
    if (!known) throw new UsageError(`no agent with host_id ${hostId} in ${values.db}; see \`${PROG} agent list --db ${values.db}\``);
  }
  const token = values['admin-token'] ?? process.env['CORTEX_ADMIN_TOKEN'];
  const url = new URL(`/admin/agents/${encodeURIComponent(hostId)}/probe`, base);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ probe, args: probeArgs, timeout_ms }),
    });
  } catch (error) {
    throw new Error(`cannot reach ${base.origin}: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${res.status} from ${url.origin} without a JSON body: ${text.slice(0, 200)}`);
  }
  out(JSON.stringify(body));
  if (res.status === 200) return;
  const e = (body as { error?: { code?: unknown; message?: unknown } }).error;
  err(`${PROG}: HTTP ${res.status}: ${typeof e?.code === 'number' ? `${e.code} ` : ''}${String(e?.message ?? '')}`);
  process.exitCode = 1;
}

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    out(HELP.main);
    if (cmd === undefined) process.exitCode = 2;
    return;
  }
  if (cmd === 'serve') return serve(rest);
  if (cmd === 'migrate') {
    const { values } = parse(rest, { db: { type: 'string' }, json: { type: 'boolean' } }, MIGRATE_HELP);
    out(await migrateCommand(values));
    return;
  }
  if (cmd === 'probe') return probeCmd(rest);
  if (cmd === 'backup') return (await import('./backup.js')).backupCommand(rest);
  if (cmd === 'audit') return (await securityCommands()).auditCmd(rest);
  if (cmd === 'agent') {
    const [sub, ...args] = rest;
    if (sub === 'issue') return agentIssue(args);
    if (sub === 'list') return agentList(args);
    if (sub === 'tail') return agentTail(args);
    if (sub === 'revoke') return agentRevoke(args);
    if (sub === 'rotate') return agentRotate(args);
    if (sub === 'decommission') return agentDecommission(args);
    if (sub === 'config') return agentConfig(args);
    if (sub === 'reset-seq') return (await securityCommands()).agentResetSeq(args);
    if (sub === 'tokens') return (await securityCommands()).agentTokens(args);
    if (sub === 'withdraw') return (await securityCommands()).agentWithdraw(args);
    if (sub === undefined || sub === '--help' || sub === '-h') {
      out(HELP.agent);
      if (sub === undefined) process.exitCode = 2;
      return;
    }
    throw new UsageError(`unknown agent command ${JSON.stringify(sub)}\n\n${HELP.agent}`);
  }
  throw new UsageError(`unknown command ${JSON.stringify(cmd)}\n\n${HELP.main}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    err(`${PROG}: ${error.message}`);
    process.exit(2);
  }
  const e = error as NodeJS.ErrnoException;
  err(`${PROG}: ${e?.code ? `${e.code}: ` : ''}${e?.message ?? String(error)}`);
  process.exit(1);
});
