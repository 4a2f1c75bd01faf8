// Redaction paths for the toolkit's pino loggers (agent/log.ts, server/log.ts): the keys to
// censor at the top level and nested up to three objects deep. The secret *fields* come
// from the contract (SECRET_FIELDS, generated); this module adds the transport's own
// secret-bearing names and builds the paths. Imports nothing of ours (see errors.ts).

/** HTTP header names that carry a secret (the admin API's Bearer token), as loggers see them. */
export const SECRET_HEADERS: readonly string[] = ['authorization', 'Authorization'];

/** How deep a secret key is looked for below the top level. */
export const REDACT_DEPTH = 3;

/** pino redact paths for `keys` at the top level and up to REDACT_DEPTH objects deep, each key once. */
export function redactPaths(keys: readonly string[]): string[] {
  const unique = [...new Set(keys)];
  return unique.flatMap((k) => Array.from({ length: REDACT_DEPTH + 1 }, (_, depth) => `${'*.'.repeat(depth)}${k}`));
}
