// Where the agent's and the server's JSON log lines go by default: stderr, written synchronously
// (nothing logged before a crash is lost) by pino's SonicBoom. A write that fails there — stderr
// redirected to a file on a full disk (ENOSPC), a terminal that went away (EIO) — made SonicBoom
// emit 'error', which pino passes on unless it is EPIPE, and nothing handled it: the process
// ended on its next log line, a running agent with it (DECISIONS H28). A log line that cannot be
// written is no reason to stop shipping logs or serving agents, so:
//   - the error is taken here, and the program goes on;
//   - SonicBoom keeps the lines it could not write (and writes them first once it can again), up
//     to LOG_HOLD_BYTES; lines past that are dropped and counted (its `maxLength`);
//   - the first line written after a failure is followed by one line saying what happened: since
//     when, the error code, how many lines were dropped.

import type { EventEmitter } from 'node:events';

/** Lines held while stderr cannot be written (beyond: dropped and counted). */
export const LOG_HOLD_BYTES = 1024 * 1024;

/** What of SonicBoom this needs: its synchronous write and its 'error' and 'drop' events. */
export interface SonicLike extends EventEmitter {
  write(data: string): boolean;
}

/** A pino destination stream. */
export interface LineDestination {
  write(line: string): void;
}

/** A failure of the destination, while it lasts. */
interface Failing {
  since: string;
  code: string;
  dropped: number;
}

/**
 * Wraps a synchronous SonicBoom (made with `maxLength: LOG_HOLD_BYTES`) so that its write errors
 * never reach the process. `base` goes into the one line written after a failure (the fields
 * every line of the program has: the agent's name, the server's pid).
 */
export function keepLogging(sonic: SonicLike, base: Readonly<Record<string, string | number>>, now: () => Date = () => new Date()): LineDestination {
  let failing: Failing | null = null;
  let errors = 0;
  sonic.on('error', (err: NodeJS.ErrnoException) => {
    errors++;
    failing ??= { since: now().toISOString(), code: err.code ?? err.message, dropped: 0 };
  });
  sonic.on('drop', () => {
    if (failing !== null) failing.dropped++;
  });
  return {
    write(line: string): void {
      const before = errors;
      sonic.write(line);
      // Synchronous: a failed write has emitted 'error' before write() returns.
      if (failing === null || errors !== before) return;
      const f = failing;
      failing = null;
      const dropped = f.dropped > 0 ? `; ${f.dropped} lines were dropped (more than ${LOG_HOLD_BYTES / 1024} KiB waited)` : '; no line was lost';
      sonic.write(
        `${JSON.stringify({
          level: 'warn',
          time: now().toISOString(),
          ...base,
          log_write_error: f.code,
          failing_since: f.since,
          dropped_lines: f.dropped,
          msg: `log lines could not be written to stderr from ${f.since} (${f.code}); the lines held meanwhile are above${dropped}`,
        })}\n`,
      );
    },
  };
}
