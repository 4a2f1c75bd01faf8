// Whether a pid recorded in a file (run.lock, a servers row) still names a live process of
// ours on this machine; the name of the user this process runs as (for messages that say who
// may not read or write something); the long-running commands' crash and warning lines, and
// their signals: what a SIGHUP reads (the settings changed in a file read again; whether the
// terminal hung up), SIGUSR1 kept from opening the inspector.
import { readFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { isatty } from 'node:tty';

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

/**
 * Keeps SIGUSR1 from opening Node's inspector (DECISIONS H29). Node's default for SIGUSR1 is
 * to start the debugger on 127.0.0.1:9229, without authentication: any local user can then read
 * its address from http://127.0.0.1:9229/json/list and run code in the process — the agent,
 * which reads the host's logs and holds its token; the server, which holds the database and the
 * admin token. Daemons take SIGUSR1 as "reopen your log files" (nginx) and a logrotate
 * postrotate line sending it to every node process is easy to write. With a listener installed
 * Node no longer starts the inspector on the signal; it is said in one warn line instead.
 * (`node --disable-sigusr1` does the same from Node 22.14, not in Node 20.)
 */
export function refuseInspectorSignal(logger: FaultLogger, program: string): void {
  process.on('SIGUSR1', () => {
    logger.warn({ signal: 'SIGUSR1' }, `SIGUSR1 ignored: ${program} does not open the Node.js inspector on a signal (it would listen on 127.0.0.1:9229 without authentication); to debug, start it with node --inspect`);
  });
}

/**
 * The keys whose values differ between two settings objects (compared as JSON), sorted: what a
 * SIGHUP names as changed in a file read again (the server's --config, I19; the agent's
 * agent.json, I21).
 */
export function changedKeys(a: object, b: object): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const value = (s: object, k: string) => JSON.stringify((s as Record<string, unknown>)[k]);
  return [...keys].filter((k) => value(a, k) !== value(b, k)).sort();
}

/** The terminals this process had at start (this module loads at start): a SIGHUP is a hang-up when one of them is gone. */
const terminalsAtStart: readonly boolean[] = [0, 1, 2].map((fd) => isatty(fd));
let hungUp = false;

/** What onSighup logs with (a pino logger). */
export interface SignalLogger {
  info(fields: Record<string, unknown>, msg: string): void;
}

/**
 * SIGHUP for a long-running command (`serve`: DECISIONS I19; `run`: I21). Sent by `kill -HUP` or
 * `systemctl reload`, it calls `reload`. Sent because the terminal closed (an ssh session ended, a
 * terminal window shut) it is a hang-up: the command logs it and `stop`s as for SIGTERM, and
 * must then end through endIfHungUp. A hung-up terminal answers no terminal request, so one the
 * process had at start is no longer a terminal to isatty().
 */
export function onSighup(logger: SignalLogger, handlers: { reload(): void; stop(): void }): void {
  process.on('SIGHUP', () => {
    if (!terminalsAtStart.some((wasTerminal, fd) => wasTerminal && !isatty(fd))) return handlers.reload();
    hungUp = true;
    logger.info({ signal: 'SIGHUP' }, 'the terminal went away: stopping');
    handlers.stop();
  });
}

/**
 * After a hang-up (onSighup), ends this process by SIGHUP's default action, as if no handler had
 * been installed, and returns true; otherwise returns false and the command exits as usual. Not
 * by Node's own exit: it puts the terminal's settings back, and on a hung-up terminal that fails
 * an assertion and aborts (nodejs/node#42433) or crashes; SIGHUP's default action ends the
 * process without that step, as it always did. (Measured with a hung-up pseudo-terminal on
 * stdout: process.exit ended the agent and the server with 139 or 134 — a crash or an abort —
 * where this ends them with 129.)
 */
export function endIfHungUp(): boolean {
  if (!hungUp) return false;
  process.removeAllListeners('SIGHUP');
  process.kill(process.pid, 'SIGHUP');
  return true;
}
