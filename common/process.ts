// Whether a pid recorded in a file (run.lock, a servers row) still names a live process of
// ours on this machine; the name of the user this process runs as (for messages that say who
// may not read or write something); and the long-running commands' crash and warning lines.
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';

/**
 * Whether `pid` runs here as a node (cortex) process: kill(0) says it exists (EPERM: it does,
 * as another user), and /proc says what it runs — after a reboot the pid may belong to
 * something else entirely. Without /proc, kill(0) is trusted.
 */
export function nodeProcessAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return /node|cortex/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return true;
  }
}

/** The user this process runs as, by name (`uid N` where the name cannot be had). */
export function currentUserName(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid ${process.getuid?.() ?? '?'}`;
  }
}

/** What logCrashes needs of a logger (the server's and the agent's both are). */
export interface FaultLogger {
  fatal(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
}

/**
 * For the long-running commands (`serve`, `cortex-agent run`): an uncaught exception or
 * unhandled rejection (a bug) is logged as one JSON line at level fatal, with its stack,
 * before the process exits 1 — instead of Node's multi-line trace that log shippers split
 * apart. A process warning (a library's notice, such as pg's on `sslmode=require`) is one
 * JSON warn line instead of Node's lines of plain text (DECISIONS G27). `scrub` removes
 * secrets the process knows of from the text.
 */
export function logCrashes(logger: FaultLogger, scrub: (text: string) => string = (t) => t, exit: (code: number) => void = (c) => process.exit(c)): void {
  const onCrash = (kind: string) => (error: unknown) => {
    const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    try {
      logger.fatal({ err: scrub(text), kind }, `${kind}: exiting (a bug; please report this line)`);
    } finally {
      exit(1);
    }
  };
  process.on('uncaughtException', onCrash('uncaught exception'));
  process.on('unhandledRejection', onCrash('unhandled rejection'));
  // Node's own printer is a 'warning' listener: replaced, not added to.
  process.removeAllListeners('warning');
  process.on('warning', (w: Error & { code?: string }) => {
    logger.warn({ warning: w.name, ...(w.code !== undefined ? { code: w.code } : {}) }, scrub(w.message));
  });
}
