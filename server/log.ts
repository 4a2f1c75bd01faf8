// Structured JSON logging (pino) to stderr. Tokens never reach a log line: every field the
// contract marks secret (SECRET_FIELDS: token, rotated_token, admin_token) and the
// Authorization header are redacted — the same list as agent/log.ts — and code must not put
// a token into a message string.
import pino from 'pino';
import { SECRET_FIELDS } from '@cortex/agent-protocol';
import { SECRET_HEADERS, redactPaths } from '../common/redact.js';
import { LOG_HOLD_BYTES, keepLogging } from '../common/log-destination.js';

export type Logger = pino.Logger;
export type LogLevel = pino.LevelWithSilent;

const CENSOR = '[redacted]';
/** Redacted paths: each secret key at the top level and up to three objects deep. */
export const REDACT_PATHS: readonly string[] = redactPaths([...SECRET_FIELDS, ...SECRET_HEADERS]);

export interface LoggerOptions {
  /** Default: $CORTEX_LOG_LEVEL or 'info'. */
  level?: LogLevel;
  /** Component name added to every line (e.g. 'server'). */
  name?: string;
  /** Where lines go instead of stderr (tests). Receives one JSON line per write. */
  destination?: pino.DestinationStream;
}

/**
 * A logger writing one JSON object per line to stderr (synchronously, so nothing logged
 * before a crash is lost). When $CORTEX_LOG_CAPTURE_FILE is set, every line is also
 * appended to that file — tests that run real server processes use it to check that no
 * token ever appears in any log line.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const envLevel = process.env['CORTEX_LOG_LEVEL'];
  const level: LogLevel =
    options.level ?? (envLevel !== undefined && isLevel(envLevel) ? envLevel : 'info');
  // a write that fails on stderr (a full disk, a terminal gone) does not end the server (DECISIONS H28)
  let destination: pino.DestinationStream =
    options.destination ?? keepLogging(pino.destination({ fd: 2, sync: true, maxLength: LOG_HOLD_BYTES }), { pid: process.pid, ...(options.name !== undefined ? { name: options.name } : {}) });
  const captureFile = process.env['CORTEX_LOG_CAPTURE_FILE'];
  if (captureFile) {
    destination = pino.multistream([
      { level: 'trace', stream: destination },
      { level: 'trace', stream: pino.destination({ dest: captureFile, append: true, sync: true }) },
    ]);
  }
  return pino(
    {
      level,
      ...(options.name !== undefined ? { name: options.name } : {}),
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...REDACT_PATHS], censor: CENSOR },
    },
    destination,
  );
}

function isLevel(s: string): s is LogLevel {
  return s === 'silent' || s in pino.levels.values;
}

export interface CapturedLogger {
  logger: Logger;
  /** Raw JSON lines written so far. */
  lines: string[];
  /** The lines parsed. */
  records(): Record<string, unknown>[];
}

/** A logger that keeps its lines in memory (for tests). */
export function createCapturingLogger(options: Omit<LoggerOptions, 'destination'> = {}): CapturedLogger {
  const lines: string[] = [];
  const destination: pino.DestinationStream = {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line !== '') lines.push(line);
    },
  };
  const logger = createLogger({ level: 'trace', ...options, destination });
  return {
    logger,
    lines,
    records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export { logCrashes } from '../common/process.js';
