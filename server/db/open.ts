// Which database a `--db` value names, and opening it:
//   postgres://… or postgresql://…   PostgreSQL (./postgres.ts)
//   anything without a scheme        a SQLite file path (./dialect.ts)
//   any other scheme://              refused (a URL is never taken for a file name)
import { openSqliteStorage } from './dialect.js';
import type { Storage } from './storage.js';

export type DbTarget = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

/** A --db value that names no database we can open (the CLI exits 2 with this message). */
export class DbTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DbTargetError';
  }
}

/** The URL with any password replaced, for messages and logs. */
export function redactDbUrl(url: string): string {
  if (!/^postgres(ql)?:\/\//i.test(url)) return url; // a SQLite path: shown as given
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
  }
}

/** The default pool size of a PostgreSQL database (--db-pool). */
export const DEFAULT_DB_POOL = 10;

export function parseDbTarget(value: string): DbTarget {
  if (value.trim() === '') throw new DbTargetError('--db is empty: give a SQLite file path or a postgres:// URL');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]+):/.exec(value)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') {
    if (!/^[A-Za-z]+:\/\//.test(value)) {
      throw new DbTargetError(`--db ${JSON.stringify(value.split('@').pop())} is not a PostgreSQL URL: write postgres://USER@HOST:PORT/DATABASE`);
    }
    try {
      new URL(value);
    } catch {
      throw new DbTargetError('--db is not a valid postgres:// URL: write postgres://USER[:PASSWORD]@HOST:PORT/DATABASE');
    }
    return { dialect: 'postgres', url: value };
  }
  if (scheme !== undefined && value.slice(scheme.length, scheme.length + 3) === '://') {
    throw new DbTargetError(
      `--db: unknown database URL scheme "${scheme}://"; give postgres://… (or postgresql://…) for PostgreSQL, or a file path for SQLite`,
    );
  }
  return { dialect: 'sqlite', path: value };
}

export interface OpenOptions {
  /** PostgreSQL pool size (default 10; ignored for SQLite). */
  poolSize?: number;
  /** PostgreSQL: batches one ingest statement commits together (default 256; 1: one statement per batch, as the bench's baseline). */
  maxGroupHosts?: number;
}

/** Opens (not migrates) the database a --db value names. */
export async function openStorage(value: string, options: OpenOptions = {}): Promise<Storage> {
  const target = parseDbTarget(value);
  if (target.dialect === 'sqlite') return openSqliteStorage({ path: target.path });
  // Loaded only when used: a SQLite deployment never loads `pg`.
  const { openPostgresStorage } = await import('./postgres.js');
  return openPostgresStorage({
    url: target.url,
    ...(options.poolSize !== undefined ? { poolSize: options.poolSize } : {}),
    ...(options.maxGroupHosts !== undefined ? { maxGroupHosts: options.maxGroupHosts } : {}),
  });
}
