// Start-up refusals of `serve` that are the user's to fix (exit 2, nothing changed).
import { DbTargetError } from '../db/open.js';
import { SchemaTooNewError } from '../db/migrations/index.js';
import { postgresOpenError, sqliteAccessError, sqliteNotADbError } from '../cli-db.js';
import { UsageError } from '../settings.js';
import { SettingsConflictError } from './settings-agreement.js';
import { ServerIdInUseError } from './registry.js';

export function serveStartError(error: unknown, db: string): unknown {
  if (error instanceof SchemaTooNewError || error instanceof SettingsConflictError || error instanceof DbTargetError || error instanceof ServerIdInUseError) {
    return new UsageError(error.message);
  }
  return postgresOpenError(error, db) ?? sqliteNotADbError(error, db) ?? sqliteAccessError(error, db) ?? error;
}
