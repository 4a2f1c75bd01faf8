// Structured JSON logs to stderr (pino). Every field the contract marks secret
// (SECRET_FIELDS: token, rotated_token, …) and the Authorization header, at up to three
// levels of nesting, is replaced by "[redacted]" before it is written — the same list as
// server/log.ts; code must still never put a token in a message string. The tokens this
// process holds are also cut out of every line whatever field they are in (registerLogSecrets).

import type Pino from 'pino';
import { SECRET_FIELDS } from '@cortex/agent-protocol';
import { SECRET_HEADERS, redactPaths } from '../common/redact.js';
import { LOG_HOLD_BYTES, keepLogging } from '../common/log-destination.js';
import { pino } from './cjs.js';

export type Logger = Pino.Logger;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** pino redact paths: the contract's secret fields and the secret headers, at the top level and nested up to depth 3. */
export const REDACT_PATHS: string[] = redactPaths([...SECRET_FIELDS, ...SECRET_HEADERS]);

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go; default stderr (synchronous, so nothing is lost on exit). */
  destination?: { write(line: string): unknown };
  /** Fields on every line, e.g. { host_id } for many agents in one process. */
  base?: Record<string, string | number>;
}

/** What holds secrets no log line may carry: the agent's tokens (TokenKeeper). */
export interface SecretHolder {
  secrets(): Iterable<string | null | undefined>;
}

/** Every live holder of this process, weakly: a holder that is gone is dropped at the next line. */
const holders = new Set<WeakRef<SecretHolder>>();

/**
 * Registers a holder whose secrets are cut out of every line any logger of this process writes
 * (DECISIONS H52). Redaction by field name (REDACT_PATHS) misses a token a server echoes back in
 * text the agent logs — a close reason, an error's data, a refused config's key — so the lines
 * themselves are scrubbed as well, whatever field or message the token is in.
 */
export function registerLogSecrets(holder: SecretHolder): void {
  holders.add(new WeakRef(holder));
}

/** `line` with every registered secret replaced by "[redacted]". */
export function scrubLogLine(line: string): string {
  for (const ref of holders) {
    const holder = ref.deref();
    if (holder === undefined) {
      holders.delete(ref);
      continue;
    }
    for (const secret of holder.secrets()) {
      // a token is 32-256 printable characters: shorter text is no token and would cut words apart
      if (secret && secret.length >= 16 && line.includes(secret)) line = line.split(secret).join('[redacted]');
    }
  }
  return line;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const base = { name: 'cortex-agent', ...options.base };
  // a write that fails on stderr (a full disk, a terminal gone) does not end the agent (DECISIONS H28)
  const out = options.destination ?? keepLogging(pino.destination({ dest: 2, sync: true, maxLength: LOG_HOLD_BYTES }), base);
  const destination = { write: (line: string): unknown => out.write(holders.size === 0 ? line : scrubLogLine(line)) };
  return pino(
    {
      level: options.level ?? 'info',
      base,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}

/** A logger whose lines are kept in memory (parsed), for tests. */
export function createCapturingLogger(level: LogLevel = 'trace'): { logger: Logger; lines: Record<string, unknown>[]; raw: string[] } {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const logger = createLogger({
    level,
    destination: {
      write(line: string) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  return { logger, lines, raw };
}

/** Replaces every occurrence of `secret` in `text` (for third-party error messages that might echo one). */
export function scrubSecret(text: string, secret: string | null | undefined): string {
  if (!secret) return text;
  return text.split(secret).join('[redacted]');
}

export { logCrashes } from '../common/process.js';
