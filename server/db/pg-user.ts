// Who a PostgreSQL `--db` connects as when its URL names no user (DECISIONS G36): used by
// ./postgres.ts for the connections and by ../cli-db.ts for the message when it is refused.
import { userInfo } from 'node:os';

/**
 * The PostgreSQL user of a `--db` URL that names none, as libpq (psql) takes it (DECISIONS G36):
 * $PGUSER, else $USER, else this process's user from the password database; undefined when
 * there is none (a container's uid without a passwd entry).
 */
export function defaultPostgresUser(): string | undefined {
  const fromEnv = process.env['PGUSER'] || process.env['USER'];
  if (fromEnv) return fromEnv;
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}
