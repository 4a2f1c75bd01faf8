// What `serve` says when its start fails: refusals that are the user's to fix (exit 2, nothing
// changed), and a database lost during the start-up (E_DB_LOST, exit 1).
import { DbTargetError } from '../db/open.js';
import { DatabaseRefusedError } from '../db/migrations/index.js';
import { dbOpenError, postgresLostError } from '../cli-db.js';
import { UsageError } from '../settings.js';
import { SettingsConflictError } from './settings-agreement.js';
import { ServerIdInUseError } from './registry.js';

/**
 * What `serve` says of a start that failed. `since`: when that start began (performance.now()).
 * A PostgreSQL that answered and then stopped answering, or lost the connection, during the
 * start-up (its migration, joining the servers) is E_DB_LOST as for the admin commands
 * (cli-db.ts postgresLostError, DECISIONS G45), not E_DB_OPEN "cannot reach PostgreSQL … is
 * PostgreSQL running there?" nor E_INTERNAL "this is a bug" ("Postgres connection has been
 * discarded", a migration cut in its transaction).
 */
export function serveStartError(error: unknown, db: string, since: number): unknown {
  if (error instanceof DatabaseRefusedError) return new UsageError(error.message, { code: 'E_DB_OPEN', hint: '' }); // its message says what to do
  // settings the other servers on the database refuse: the operator's configuration (E_CONFIG, as
  // docs/error-codes.md has it), not the command's usage
  if (error instanceof SettingsConflictError || error instanceof ServerIdInUseError) return new UsageError(error.message, { code: 'E_CONFIG' });
  if (error instanceof DbTargetError) return new UsageError(error.message);
  return listenError(error) ?? postgresLostError(error, db, { phase: 'start', since }) ?? dbOpenError(error, db) ?? error;
}

/**
 * The listen address refused (a port in use, an address not of this machine, a privileged
 * port), as the user's error (E_CONFIG) saying what to do; undefined for anything else. These
 * printed E_INTERNAL "this is a bug".
 */
function listenError(error: unknown): UsageError | undefined {
  const e = error as { code?: unknown; syscall?: unknown; address?: unknown; port?: unknown } | null;
  if (e?.syscall !== 'listen') return undefined;
  const where = `${String(e.address ?? '')}:${String(e.port ?? '')}`;
  const port = String(e.port ?? 'PORT');
  const why =
    e.code === 'EADDRINUSE'
      ? `another process listens on it (another cortex-server? \`ss -ltnp 'sport = :${port}'\` shows which): stop it, or give this server another --listen port`
      : e.code === 'EADDRNOTAVAIL'
        ? `${String(e.address)} is not an address of this machine (\`ip -brief address\` lists them): listen on one of them, or on 0.0.0.0 for all`
        : e.code === 'EACCES'
          ? `ports below 1024 need root or the capability CAP_NET_BIND_SERVICE (AmbientCapabilities=CAP_NET_BIND_SERVICE in the unit): give it that, or listen on a port from 1024 behind a proxy`
          : undefined;
  return why === undefined ? undefined : new UsageError(`cannot listen on ${where} (${String(e.code)}): ${why}`, { code: 'E_CONFIG', hint: 'fix --listen (or the config file\'s listen)' });
}
