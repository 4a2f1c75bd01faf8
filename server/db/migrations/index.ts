// Schema migrations through kysely's Migrator, with an in-code provider (an object map,
// not FileMigrationProvider) so the compiled JavaScript carries its migrations with it.
// Names sort in the order they must run; add new ones with the next number.
import { Migrator, type Migration, type MigrationProvider, type MigrationResult } from 'kysely';
import type { Storage } from '../storage.js';
import { initial } from './0001-initial.js';
import { retentionIndexes } from './0002-retention-indexes.js';
import { audit } from './0010-audit.js';
import { enrollmentExpiry } from './0011-enrollment-expiry.js';
import { hostLabelsAndGroups } from './0020-host-labels-and-groups.js';

export const migrations: Readonly<Record<string, Migration>> = {
  '0001-initial': initial,
  '0002-retention-indexes': retentionIndexes,
  '0010-audit': audit,
  '0011-enrollment-expiry': enrollmentExpiry,
  '0020-host-labels-and-groups': hostLabelsAndGroups,
};

const provider: MigrationProvider = {
  getMigrations: async () => ({ ...migrations }),
};

export class MigrationError extends Error {
  constructor(
    message: string,
    readonly results: readonly MigrationResult[],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/**
 * Brings the database to the latest schema. Safe to call on every start and from several
 * processes at once (the dialect's migration lock serializes them). Returns the names of
 * the migrations this call applied (empty when the database was already current).
 */
export async function migrateToLatest(storage: Storage): Promise<string[]> {
  return storage.withMigrationLock(async (db) => {
    const migrator = new Migrator({ db, provider });
    const { error, results = [] } = await migrator.migrateToLatest();
    if (error !== undefined) {
      const failed = results.find((r) => r.status === 'Error')?.migrationName;
      const reason = error instanceof Error ? error.message : String(error);
      throw new MigrationError(
        `database migration ${failed ?? ''} failed: ${reason}`.replace('  ', ' '),
        results,
        { cause: error },
      );
    }
    return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
  });
}
