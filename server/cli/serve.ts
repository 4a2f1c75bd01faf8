// `cortex-server serve`.
import type { ServerConfig } from '../generated/server-config.js';
import { checkServerConfig, isLoopbackHost, readConfigFile, resolveSettings, type ServerSettings } from '../settings.js';
import { UsageError, int, out, parse } from './common.js';
import { formatCliError } from '../../common/errors.js';
import { enrollCommand, issueCommand, serveBanner } from './hints.js';
import { HELP } from './help.js';
import { changedKeys, endIfHungUp, onSighup, refuseInspectorSignal } from '../../common/process.js';
import { stdoutIsBannerOnly } from '../../common/stdout.js';

/** How long `serve` waits for a database out of reach at start (--db-wait-secs). */
export const DEFAULT_DB_WAIT_SECS = 90;
const DB_RETRY_MS = 2000;

export async function serve(args: string[]): Promise<void> {
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
      'silent-after-secs': { type: 'string' },
      'admin-token-file': { type: 'string' },
      'db-pool': { type: 'string' },
      'server-id': { type: 'string' },
      'lease-secs': { type: 'string' },
      'db-wait-secs': { type: 'string' },
      'metrics-public': { type: 'boolean' },
      'failed-hellos-before-throttle': { type: 'string' },
      'allow-origin': { type: 'string', multiple: true },
      'retention-days': { type: 'string' },
      'max-db-bytes': { type: 'string' },
    },
    HELP.serve,
  );
  const security = await import('../security/commands.js');
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
    silent_after_secs: int('--silent-after-secs', values['silent-after-secs']),
    retention_days: int('--retention-days', values['retention-days']),
    max_db_bytes: int('--max-db-bytes', values['max-db-bytes']),
  };
  const settings = resolveSettings(file, flags as ServerConfig);
  const tls = settings.tls_cert !== undefined || settings.tls_key !== undefined;
  if (tls && (settings.tls_cert === undefined || settings.tls_key === undefined)) {
    throw new UsageError('--tls-cert and --tls-key go together: give both or neither', { code: 'E_CONFIG' });
  }
  if (!tls && !isLoopbackHost(settings.listen.host) && !settings.allow_insecure) {
    throw new UsageError(
      `refusing to listen on ${settings.listen.host} without TLS: give --tls-cert and --tls-key, listen on a loopback address behind a TLS proxy, or pass --allow-insecure`,
      { code: 'E_CONFIG' },
    );
  }
  const { checkDbArg, poolArg, sqliteEmptiness, sqliteFileEmptyText } = await import('../cli-db.js');
  checkDbArg(settings.db);
  const dbPool = poolArg(values['db-pool']);
  const serverId = values['server-id'];
  if (serverId !== undefined && !/^[A-Za-z0-9._:@-]{1,200}$/.test(serverId)) {
    throw new UsageError(`--server-id ${JSON.stringify(serverId)}: use 1..200 letters, digits and . _ : @ -`);
  }
  const leaseSecs = int('--lease-secs', values['lease-secs']);
  if (leaseSecs !== undefined && (leaseSecs < 3 || leaseSecs > 3600)) throw new UsageError('--lease-secs must be 3..3600');
  const dbWaitSecs = int('--db-wait-secs', values['db-wait-secs']) ?? DEFAULT_DB_WAIT_SECS;
  if (dbWaitSecs < 0 || dbWaitSecs > 86_400) throw new UsageError('--db-wait-secs must be 0..86400');
  const [{ createLogger, logCrashes }, { startServer }, { serveStartError }] = await Promise.all([import('../log.js'), import('../server.js'), import('../cluster/errors.js')]);
  const logger = createLogger({ name: 'cortex-server' });
  logCrashes(logger);
  refuseInspectorSignal(logger, 'cortex-server');
  const [{ NO_SLOT_HINT, isDatabaseUnreachable, noConnectionSlot }, { redactDbUrl }] = await Promise.all([import('../db/outage.js'), import('../db/open.js')]);
  const start = () =>
    startServer({
      settings,
      logger,
      dbPool,
      ...(serverId !== undefined ? { serverId } : {}),
      ...(leaseSecs !== undefined ? { leaseMs: leaseSecs * 1000 } : {}),
      // Another process took this server id over (G23): the server has closed; exit 1.
      // The database file deleted or replaced under it (H20): stopped after rescuing its data; exit 1.
      onFatal: (message: string, code?: 'E_DB_OPEN') => {
        process.stderr.write(`cortex-server: ${formatCliError(code ?? 'E_CONFIG', message, code === undefined ? undefined : 'see the message; the server log has the same lines')}\n`);
        process.exit(1);
      },
    });
  // A database out of reach at start (PostgreSQL still starting at boot, restarting, on a host
  // that is not up yet) is waited for, up to --db-wait-secs: exiting at once made systemd
  // give up after five quick restarts, and the server stayed down once PostgreSQL was up.
  // So is one that answered and then stopped answering or lost the connection during the
  // start-up (its migration, joining the servers): the migrations commit together and take the
  // migration lock, which PostgreSQL lets go with the session, so the next start applies
  // whatever is missing (DECISIONS G45).
  // A database file of 0 bytes is made into a new database, as a path with none is (a file
  // made beforehand with the right owner and mode); said, as it may also be one cut short.
  const emptyFile = sqliteFileEmptyText(settings.db, sqliteEmptiness);
  if (emptyFile !== null) logger.warn({ db: settings.db }, emptyFile);
  // Waits are measured in the time this process has seen pass: a step of the wall clock
  // (`date -s`, NTP) neither ends the wait at once nor makes it last as long as the step.
  const giveUpAt = performance.now() + dbWaitSecs * 1000;
  let said: number | undefined;
  let server: Awaited<ReturnType<typeof startServer>>;
  for (;;) {
    const since = performance.now();
    try {
      server = await start();
      break;
    } catch (error) {
      const told = serveStartError(error, settings.db, since);
      const lost = (told as { code?: unknown } | null)?.code === 'E_DB_LOST';
      if (!(lost || isDatabaseUnreachable(error)) || performance.now() >= giveUpAt) throw told;
      if (said === undefined || performance.now() - said >= 60_000) {
        said = performance.now();
        logger.warn(
          { db: redactDbUrl(settings.db), err: String((lost ? (told as Error) : (error as Error)).message ?? error), gives_up_in_secs: Math.ceil((giveUpAt - performance.now()) / 1000) },
          lost
            ? `the database stopped answering or lost the connection during the start-up; trying again every ${DB_RETRY_MS / 1000} s (--db-wait-secs): the next start applies whatever of the migration is missing`
            : noConnectionSlot(error)
              ? `PostgreSQL has no connection slot left (${NO_SLOT_HINT}); trying again every ${DB_RETRY_MS / 1000} s (--db-wait-secs)`
              : `the database is out of reach; trying again every ${DB_RETRY_MS / 1000} s (--db-wait-secs)`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(DB_RETRY_MS, Math.max(0, giveUpAt - performance.now()))));
    }
  }
  // SIGTERM drains from the moment the server exists: before "listening" is logged (a
  // supervisor may stop it as soon as it reads that line).
  let stopping = false;
  // After a terminal that hung up the server ends by SIGHUP, not by Node's exit (common/process.ts endIfHungUp).
  const exit = (code: number) => void (endIfHungUp() || process.exit(code));
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
      () => exit(0),
      (error: unknown) => {
        logger.error({ err: String(error) }, 'error while stopping');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGHUP (systemctl reload, a certificate renewal hook): the TLS certificate and the admin
  // token file are read again (H19), and so is --config: its admin_token, when the token comes
  // from there, takes effect at once; any other setting it changed is named as waiting for a
  // restart (I19). Without a handler SIGHUP ended the process. The terminal of a foreground
  // serve closing (a hang-up) stops it as SIGTERM does instead (I21, common/process.ts onSighup).
  const tokenFile = values['admin-token-file'];
  const configFile = values.config;
  const tokenFromConfig = flags['admin_token'] === undefined && file.admin_token !== undefined ? configFile : undefined;
  const applyToken = (next: string, source: Record<string, string>, what: string) => {
    if (!server.setAdminToken(next)) logger.info(source, `SIGHUP: the ${what} holds the same admin token`);
    else logger.info(source, 'admin token reloaded (SIGHUP): the previous token is refused from now on, and console sessions signed with it end');
  };
  onSighup(logger, { stop: () => stop('SIGHUP'), reload });
  function reload(): void {
    const tls = server.reloadTls('SIGHUP');
    if (tokenFile !== undefined) {
      try {
        const next = security.serveAdminToken(undefined, tokenFile, undefined) ?? '';
        checkServerConfig({ admin_token: next }, `--admin-token-file ${tokenFile}`);
        applyToken(next, { admin_token_file: tokenFile }, 'admin token file');
      } catch (error) {
        logger.error({ admin_token_file: tokenFile, err: (error as Error).message }, 'admin token not reloaded: the file was refused; the previous token still works — fix the file, then send SIGHUP again');
      }
    }
    if (configFile !== undefined) {
      let next: ServerSettings;
      let nextFile: ServerConfig;
      try {
        nextFile = readConfigFile(configFile);
        next = resolveSettings(nextFile, flags as ServerConfig);
      } catch (error) {
        logger.error({ config: configFile, err: (error as Error).message }, 'config file not reloaded (SIGHUP): it was refused; the server goes on with the settings it has — fix the file, then send SIGHUP again');
        return;
      }
      if (tokenFromConfig !== undefined) {
        if (nextFile.admin_token === undefined) {
          logger.error({ config: configFile }, 'admin token not reloaded (SIGHUP): the config file has no admin_token any more; the previous token still works (going without one takes a restart)');
        } else applyToken(nextFile.admin_token, { config: configFile }, 'config file');
      }
      const waiting = changedKeys(settings, next).filter((k) => k !== 'admin_token');
      if (waiting.length > 0) logger.warn({ config: configFile, settings: waiting }, `config file read again (SIGHUP): ${waiting.join(', ')} changed, which take effect at the next restart`);
    }
    if (tls === undefined && tokenFile === undefined && configFile === undefined) logger.info('SIGHUP: nothing to reload (no --tls-cert, no --admin-token-file, no --config); the server goes on');
  }
  if (said !== undefined) logger.info({ db: redactDbUrl(settings.db) }, 'the database is reachable: starting');
  logger.info({ url: server.url, db: server.dbDisplay, server_id: server.serverId, max_batch_entries: settings.max_batch_entries }, 'listening');
  logger.info(
    { enroll: { issue: issueCommand(server.dbDisplay), enroll: enrollCommand(server.url), url: server.url } },
    'to enroll an agent: issue a token, then run the agent enroll command with it',
  );
  // The URL agents use, so that `agent issue` can print a complete enroll command.
  const { setSetting } = await import('../db/settings.repository.js');
  await setSetting(server.storage.db, 'agent_url', server.url);
  // Human banner on stdout only; the JSON log lines above go to stderr only. A stdout that
  // refuses it (a full disk) does not stop the server (H30).
  stdoutIsBannerOnly();
  out(serveBanner(server.url, server.dbDisplay));
}
