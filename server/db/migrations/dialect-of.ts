// Which dialect a migration runs on, for the few statements that differ (triggers,
// partitioning). Everything else in a migration is kysely's schema builder.
import { PostgresAdapter, type Kysely } from 'kysely';

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
