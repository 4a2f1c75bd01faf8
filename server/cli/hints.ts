// The enrollment hints that `serve` and `agent issue` print: complete commands that work
// from a clone of this repository (npm run …), not a bin that may not be on PATH.
import { resolve } from 'node:path';

/** The `npm run agent -- enroll …` command line; `--allow-insecure` for a ws:// URL. */
export function enrollCommand(url: string, hostId = 'HOST_ID', token = 'TOKEN', stateDir = './cortex-agent-state'): string {
  const insecure = url.startsWith('ws://') ? ' --allow-insecure' : '';
  return `npm run agent -- enroll --server ${url} --token ${token} --host-id ${hostId} --state-dir ${stateDir}${insecure}`;
}

/** The `npm run agent -- run …` command line that follows the enrollment. */
export function runCommand(url: string, stateDir = './cortex-agent-state'): string {
  return `npm run agent -- run --state-dir ${stateDir}${url.startsWith('ws://') ? ' --allow-insecure' : ''}`;
}

/** The `npm run server -- agent issue …` command line for the database `db`. */
export function issueCommand(db: string): string {
  return `npm run server -- agent issue --host HOSTNAME --db ${displayDb(db)}`;
}

/** A SQLite path made absolute; a database URL (its password already masked) as it is. */
function displayDb(db: string): string {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(db) ? db : resolve(db);
}

/** The serve banner (stdout): where it listens and the three steps to a first agent. */
export function serveBanner(url: string, db: string): string {
  return (
    `cortex-server listening on ${url} (database ${displayDb(db)})\n` +
    `To enroll an agent:\n` +
    `  1. ${issueCommand(db)}\n` +
    `     (prints the host_id and a one-time token)\n` +
    `  2. ${enrollCommand(url)}\n` +
    `  3. ${runCommand(url)}\n` +
    `Run both agent commands from a clone of this repository on the host (or use the cortex-agent bin if installed).\n` +
    `Operator console: ${url.replace(/^ws/, 'http').replace(/\/ws\/agent$/, '/ui/')}\n`
  );
}
