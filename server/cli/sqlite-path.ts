// A SQLite `--db` path that names something other than a file: said the same way by the admin
// commands (cli/common.ts checkSqlitePath) and by serve and migrate (cli-db.ts checkDbArg).
// Node built-ins and the UsageError only, so `--help` stays light.
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../settings.js';

/**
 * `path` (stat `st`) as the user's error when it is a folder or not a regular file (a device,
 * a pipe, a socket: SQLite opens one and fails at its first sync); undefined for a regular file.
 * `which` names the path in the message, `instead` says what to give.
 */
export function notASqliteFileError(path: string, st: Stats, which: string, instead: string): UsageError | undefined {
  if (st.isDirectory()) return new UsageError(`${which} is a folder, not a database file; give the file, e.g. --db ${join(path, 'cortex.db')}`, { code: 'E_DB_OPEN' });
  if (!st.isFile()) return new UsageError(`${which} is not a regular file (a device, a pipe or a socket); ${instead}`, { code: 'E_DB_OPEN' });
  return undefined;
}
