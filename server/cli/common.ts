// Shared by the cortex-server commands: argument parsing, output, database opening and the
// error mapping of the admin operations.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UnknownHostError, type Storage } from '../db/storage.js';
import { UsageError } from '../settings.js';
import { PROG } from './help.js';

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
    throw new UsageError(`${(error as Error).message}\n\n${help}`);
  }
}

export function int(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

export async function openDb(path: string): Promise<Storage> {
  const [{ openSqliteStorage }, { migrateToLatest }] = await Promise.all([import('../db/dialect.js'), import('../db/migrations/index.js')]);
  const storage = openSqliteStorage({ path });
  await migrateToLatest(storage);
  return storage;
}

export async function withDb<T>(path: string, fn: (s: Storage) => Promise<T>): Promise<T> {
  const storage = await openDb(path);
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
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
    if (error instanceof UnknownHostError) throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``);
    if (error instanceof HostRevokedError) throw new UsageError(`host ${hostId} is revoked; take it back with \`${PROG} agent issue --host-id ${hostId}\` first`);
    throw error;
  }
}
