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

// Heavy modules (kysely, better-sqlite3, ws, pino) load only when a command needs them,
// so `--help` and usage errors answer at once.
const repo = () => import('./db/agents.repository.js');
const logsRepo = () => import('./db/logs.repository.js');

const PROG = 'cortex-server';

const HELP = {
  main: `Usage: ${PROG} <command> [options]   (or: npm run server -- <command>)

Commands:
  serve                          run the server (WebSocket endpoint /ws/agent, GET /healthz)
  agent issue --host HOSTNAME    register a host and print its one-time enrollment token
  agent issue --host-id HOST_ID  issue a fresh one-time token for an existing host
  agent list                     list the agents
  agent tail HOST_ID             show recent log rows of a host

Every command takes --db PATH (default ${DEFAULT_DB}) and --help.
`,
  serve: `Usage: ${PROG} serve [options]

Options:
  --db PATH                  SQLite database (default ${DEFAULT_DB}; created with its folder)
  --listen HOST:PORT         address to listen on (default ${DEFAULT_LISTEN}; port 0 picks one)
  --config FILE              JSON server config (generated/schemas/server-config.json); flags override it
  --admin-token T            bearer token for the admin HTTP API (never logged)
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
  --help                     show this help
`,
  agent: `Usage: ${PROG} agent <issue|list|tail> [options]   (--help on each)
`,
  issue: `Usage: ${PROG} agent issue (--host HOSTNAME | --host-id HOST_ID) [--json] [--db PATH]

  --host HOSTNAME    create a NeverConnected host with a new host_id and a one-time token
  --host-id HOST_ID  new one-time token for an existing host (re-enrollment); its rows are kept
  --json             print {"host_id", "hostname", "token"} as one JSON object
`,
  list: `Usage: ${PROG} agent list [--json] [--db PATH]

  --json   print one JSON array of agent rows (no token hashes)
`,
  tail: `Usage: ${PROG} agent tail HOST_ID [-n N] [--follow] [--json] [--db PATH]

  -n N       how many recent rows (default 20), oldest first
  --follow   keep printing new rows until interrupted
  --json     one JSON array (with --follow: one JSON object per line)
`,
};

const out = (s: string) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
const err = (s: string) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`);

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, help: string, positionals = false) {
  try {
    const parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean' } }, strict: true, allowPositionals: positionals });
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
  const [{ openSqliteStorage }, { migrateToLatest }] = await Promise.all([import('./db/dialect.js'), import('./db/migrations/index.js')]);
  const storage = openSqliteStorage({ path });
  await migrateToLatest(storage);
  return storage;
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
    },
    HELP.serve,
  );
  const file = values.config !== undefined ? readConfigFile(values.config) : {};
  const flags: Record<string, unknown> = {
    listen: values.listen,
    db: values.db,
    admin_token: values['admin-token'],
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
  };
  const settings = resolveSettings(file, flags as ServerConfig);
  const tls = settings.tls_cert !== undefined || settings.tls_key !== undefined;
  if (tls && (settings.tls_cert === undefined || settings.tls_key === undefined)) {
    throw new UsageError('--tls-cert and --tls-key go together: give both or neither');
  }
  if (!tls && !isLoopbackHost(settings.listen.host) && !settings.allow_insecure) {
    throw new UsageError(
      `refusing to listen on ${settings.listen.host} without TLS: give --tls-cert and --tls-key, listen on a loopback address behind a TLS proxy, or pass --allow-insecure`,
    );
  }
  const [{ createLogger }, { startServer }] = await Promise.all([import('./log.js'), import('./server.js')]);
  const logger = createLogger({ name: 'cortex-server' });
  const server = await startServer({ settings, logger });
  logger.info({ url: server.url, db: settings.db, max_batch_entries: settings.max_batch_entries }, 'listening');
  logger.info(
    { enroll: { issue: `npm run server -- agent issue --host HOSTNAME --db ${settings.db}`, url: server.url } },
    'to enroll an agent: issue a token, then run the agent enroll command with it',
  );
  err(
    `cortex-server listening on ${server.url}\n` +
      `To enroll an agent:\n` +
      `  1. npm run server -- agent issue --host HOSTNAME --db ${settings.db}   (prints host_id and a one-time token)\n` +
      `  2. on the host: cortex-agent enroll --server ${server.url} --host-id HOST_ID --token TOKEN --state-dir DIR` +
      (server.url.startsWith('ws://') ? ' --allow-insecure' : '') +
      `\n`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    server.close().then(
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
  const { values } = parse(args, { db: { type: 'string' }, host: { type: 'string' }, 'host-id': { type: 'string' }, json: { type: 'boolean' } }, HELP.issue);
  const host = values.host;
  const hostId = values['host-id'];
  if ((host === undefined) === (hostId === undefined)) throw new UsageError(`give exactly one of --host HOSTNAME or --host-id HOST_ID\n\n${HELP.issue}`);
  if (host !== undefined && (host.length < 1 || host.length > 253)) throw new UsageError('--host must be 1..253 characters');
  if (hostId !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(hostId)) {
    throw new UsageError(`--host-id ${JSON.stringify(hostId)} is not a UUID; see \`${PROG} agent list\``);
  }
  const { issueAgent, reissueToken } = await repo();
  const issued = await withDb(values.db ?? DEFAULT_DB, async (s) => {
    if (host !== undefined) return issueAgent(s.db, host);
    try {
      return await reissueToken(s.db, hostId as string);
    } catch (error) {
      if (error instanceof UnknownHostError) throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``);
      throw error;
    }
  });
  if (values.json) {
    out(JSON.stringify({ host_id: issued.host_id, hostname: issued.hostname, token: issued.token }));
  } else {
    out(`host_id:  ${issued.host_id}\nhostname: ${issued.hostname}\ntoken:    ${issued.token}`);
    err(`The token is shown once and works for one enrollment. On the host run:\n  cortex-agent enroll --server URL --host-id ${issued.host_id} --token TOKEN --state-dir DIR`);
  }
}

async function agentList(args: string[]): Promise<void> {
  const { values } = parse(args, { db: { type: 'string' }, json: { type: 'boolean' } }, HELP.list);
  const { listAgents } = await repo();
  const agents = await withDb(values.db ?? DEFAULT_DB, (s) => listAgents(s.db));
  if (values.json) {
    out(JSON.stringify(agents.map(normalizeAgent)));
    return;
  }
  if (agents.length === 0) {
    out('no agents; add one with: agent issue --host HOSTNAME');
    return;
  }
  const rows = agents.map((a) => [a.host_id, a.hostname, a.connection_state, String(a.accepted_seq), a.last_seen ?? '-', a.last_disconnect_reason ?? '-']);
  const head = ['HOST_ID', 'HOSTNAME', 'STATE', 'ACCEPTED_SEQ', 'LAST_SEEN', 'LAST_DISCONNECT'];
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
  const storage = await openDb(values.db ?? DEFAULT_DB);
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

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    out(HELP.main);
    if (cmd === undefined) process.exitCode = 2;
    return;
  }
  if (cmd === 'serve') return serve(rest);
  if (cmd === 'agent') {
    const [sub, ...args] = rest;
    if (sub === 'issue') return agentIssue(args);
    if (sub === 'list') return agentList(args);
    if (sub === 'tail') return agentTail(args);
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
