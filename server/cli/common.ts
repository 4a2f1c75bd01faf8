// Shared by the cortex-server commands: argument parsing, output, database opening and the
// error mapping of the admin operations.
import { accessSync, constants, existsSync, rmSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UnknownHostError, type Storage } from '../db/storage.js';
import { DEFAULT_DB, UsageError } from '../settings.js';
import { installProblem } from '../../common/errors.js';
import { parseArgsErrorText } from '../../common/cli-args.js';
import { PROG } from './help.js';
import { notASqliteFileError } from './sqlite-path.js';

export { UsageError };

// Heavy modules (kysely, better-sqlite3, ws, pino) load only when a command needs them,
// so `--help` and usage errors answer at once.
export const repo = () => import('../db/agents.repository.js');
export const logsRepo = () => import('../db/logs.repository.js');

export const out = (s: string) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
export const err = (s: string) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`);

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

export type Options = NonNullable<ParseArgsConfig['options']>;

/** The parsed values of `options`: booleans, strings, or string arrays for `multiple`. */
export type Values<T extends Options> = {
  [K in keyof T]?: T[K] extends { type: 'boolean' } ? boolean : T[K] extends { multiple: true } ? string[] : string;
};

export interface Parsed<T extends Options> {
  values: Values<T>;
  positionals: string[];
}

/** Parses `args` strictly; `--help` prints `help` and exits 0; a bad option is a UsageError. */
export function parse<T extends Options>(args: string[], options: T, help: string, positionals = false): Parsed<T> {
  try {
    const parsed = parseArgs({ args: attachValues(args, options), options: { ...options, help: { type: 'boolean' } }, strict: true, allowPositionals: positionals });
    if ((parsed.values as { help?: boolean }).help) {
      out(help);
      process.exit(0);
    }
    return { values: parsed.values as Values<T>, positionals: parsed.positionals };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${parseArgsErrorText(error, Object.keys(options))}\n\n${help}`);
  }
}

export function int(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

export interface OpenDbOptions {
  /**
   * May create the database (and its folder) when it does not exist. Only `agent issue`
   * asks for it, and only for a `--db` given explicitly: the default path never is created
   * by an admin command (DECISIONS I1).
   */
  create?: boolean;
  /** The command has no admin API route (audit, agent tokens|withdraw|reset-seq): an error does not suggest --server. */
  localOnly?: boolean;
}

/**
 * Opens the database an admin command works on and brings it to the latest schema.
 * `db` is the `--db` value (undefined: the default ./data/cortex.db). Never creates a
 * database unless `options.create`; a missing file, a folder, a special file or one that
 * cannot be read and written is a UsageError naming the path and what to give instead.
 * This is the one place that turns `--db` into a Storage (other dialects hook in here).
 */
export async function openDb(db: string | undefined, options: OpenDbOptions = {}): Promise<Storage> {
  // --db, else $CORTEX_DB, else the default file; a postgres:// URL goes to PostgreSQL.
  const { checkDbArg, dbArg, emptyDbError, openDbForCli, sqliteBusyError, sqliteDiskFullError, sqliteEmptiness, sqliteNotADbError } = await import('../cli-db.js');
  const given = db ?? (process.env['CORTEX_DB'] !== undefined && process.env['CORTEX_DB'] !== '' ? process.env['CORTEX_DB'] : undefined);
  const value = checkDbArg(dbArg(given));
  const { parseDbTarget } = await import('../db/open.js');
  if (parseDbTarget(value).dialect !== 'sqlite') return openDbForCli(value);
  const path = resolve(value);
  const create = options.create === true && given !== undefined;
  const exists = checkSqlitePath(path, given !== undefined, create, options.localOnly === true);
  // An existing file with nothing in it (0 bytes, or not one table) is no database of ours: it
  // was made into a new, empty one, and a truncated database read as a fleet without agents.
  const empty = exists ? sqliteEmptiness(path) : null;
  if (empty !== null) throw emptyDbError(path, empty);
  const [{ openSqliteStorage }, { migrateToLatest, DatabaseRefusedError }] = await Promise.all([import('../db/dialect.js'), import('../db/migrations/index.js')]);
  let storage: Storage;
  const since = Date.now();
  // Not a path problem: a full disk (E_DISK_FULL, exit 1) and a database another process holds
  // locked are said as such (both read "give --db with the database file that serve uses").
  const classified = (error: unknown) => sqliteNotADbError(error, path) ?? sqliteDiskFullError(error, path) ?? sqliteBusyError(error, path, Date.now() - since);
  // A database this command set out to create and could not: the empty file it began is removed,
  // or every later command would refuse it as a database cut short (0 bytes).
  const dropCreated = (): void => {
    if (exists) return;
    try {
      if (statSync(path).size === 0) for (const f of [path, `${path}-wal`, `${path}-shm`]) rmSync(f, { force: true });
    } catch {
      // nothing there
    }
  };
  try {
    storage = openSqliteStorage({ path, mustExist: !create });
  } catch (error) {
    dropCreated();
    if (installProblem(error) !== undefined) throw error; // said as it is (describeCliError), not as a --db problem
    throw classified(error) ?? new UsageError(`cannot open database ${path}: ${(error as Error).message}; give --db with the database file that serve uses`, { code: 'E_DB_OPEN' });
  }
  try {
    await migrateToLatest(storage);
  } catch (error) {
    await storage.close();
    dropCreated();
    if (error instanceof DatabaseRefusedError) throw new UsageError(error.message, { code: 'E_DB_OPEN' });
    throw classified(error) ?? error;
  }
  if (!exists) err(`${PROG}: created a new database at ${path}`);
  return storage;
}

/**
 * Checks a SQLite `--db` path before anything opens it, so that no admin command creates
 * a stray database or waits on a special file. Returns whether the file exists.
 */
export function checkSqlitePath(path: string, given: boolean, create: boolean, localOnly = false): boolean {
  const which = given ? `--db ${path}` : `the default database ${path} (${DEFAULT_DB} from the current folder ${process.cwd()})`;
  const instead = `give --db with the database file that serve uses (serve logs it as "db" when it starts)${localOnly ? '' : ', or --server http://HOST:PORT to ask a running server'}`;
  let st: Stats;
  try {
    st = statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && create) {
      // Created with its folders: the nearest existing ancestor must be a writable folder.
      let dir = dirname(path);
      while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
      try {
        if (!statSync(dir).isDirectory()) throw new Error('not a folder');
        accessSync(dir, constants.W_OK);
      } catch {
        throw new UsageError(`cannot create ${which}: ${dir} is not a writable folder; ${instead}`, { code: 'E_DB_OPEN' });
      }
      return false;
    }
    if (code === 'ENOENT') throw new UsageError(`no database at ${which}; nothing was created. ${instead[0]?.toUpperCase()}${instead.slice(1)}`, { code: 'E_DB_OPEN' });
    if (code === 'ENOTDIR') throw new UsageError(`${which}: a part of the path is a file, not a folder; ${instead}`, { code: 'E_DB_OPEN' });
    throw new UsageError(`cannot open ${which}: ${code ?? String(error)}; ${instead}`, { code: 'E_DB_OPEN' });
  }
  const notAFile = notASqliteFileError(path, st, which, instead);
  if (notAFile !== undefined) throw notAFile;
  try {
    accessSync(path, constants.R_OK | constants.W_OK);
    // WAL mode writes PATH-wal and PATH-shm beside the file.
    accessSync(dirname(path), constants.W_OK);
  } catch (error) {
    throw new UsageError(`cannot open ${which} for reading and writing (${(error as NodeJS.ErrnoException).code ?? 'denied'}); run as the user that owns it, or ${instead}`, { code: 'E_DB_OPEN' });
  }
  return true;
}

export async function withDb<T>(db: string | undefined, fn: (s: Storage) => Promise<T>, options: OpenDbOptions = {}): Promise<T> {
  const storage = await openDb(db, options);
  const lost = await watchLoss(db, storage);
  let failed = false;
  try {
    return await fn(lost.storage);
  } catch (error) {
    failed = true;
    throw lost.error(error);
  } finally {
    // after a failure, its error is what is said, not the goodbye's
    if (failed) await storage.close().catch(() => undefined);
    else await storage.close();
  }
}

/**
 * For an admin command's work on the `storage` openDb opened for `db`: the storage to use and
 * what to throw for an error of it. A PostgreSQL connection lost in the middle of the command
 * (stopped answering, reset) is E_DB_LOST, saying whether the command's change may have been
 * made (cli-db.ts postgresLostError); any other error is thrown as it is.
 */
export async function watchLoss(db: string | undefined, storage: Storage): Promise<{ storage: Storage; error: (error: unknown) => unknown }> {
  if (storage.dialect !== 'postgres') return { storage, error: (error) => error };
  const { dbArg, postgresLostError, watchDbUse } = await import('../cli-db.js');
  const { storage: watched, use } = watchDbUse(storage);
  const value = dbArg(db);
  return { storage: watched, error: (error) => postgresLostError(error, value, { phase: 'command', use }) ?? error };
}

export function oneHost(positionals: string[], help: string): string {
  if (positionals.length !== 1) throw new UsageError(`give exactly one HOST_ID\n\n${help}`);
  const hostId = (positionals[0] as string).toLowerCase();
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(hostId)) {
    throw new UsageError(`HOST_ID ${JSON.stringify(positionals[0])} is not a UUID; see \`${PROG} agent list\``);
  }
  return hostId;
}

/** Maps the repository's UnknownHostError / HostRevokedError to exit 2 with a clear message. */
export async function adminOp<T>(hostId: string, fn: () => Promise<T>): Promise<T> {
  const { HostRevokedError } = await import('../db/storage.js');
  try {
    return await fn();
  } catch (error) {
    if (error instanceof UnknownHostError) throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``, { code: 'E_UNKNOWN_HOST' });
    if (error instanceof HostRevokedError) throw new UsageError(`host ${hostId} is revoked; take it back with \`${PROG} agent issue --host-id ${hostId}\` first`, { code: 'E_HOST_STATE' });
    throw error;
  }
}
