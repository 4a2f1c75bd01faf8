// The enrollment hints that `serve` and `agent issue` print: complete commands that work as
// printed. From a clone of this repository they are `npm run server -- …` / `npm run agent -- …`;
// from the packaged tarball (packaging/package.mjs defines __CORTEX_PACKAGED__ when it bundles
// the server) there is no clone and no npm script: this install's own launcher (bin/cortex-server)
// and the agent tarball's `cortex-agent`, with the state folder its unit uses.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

declare const __CORTEX_PACKAGED__: string | undefined;

/** How the hints spell the commands. */
export interface HintStyle {
  /** The server command (`npm run server --`, or the path of bin/cortex-server). */
  server: string;
  /** The agent command (`npm run agent --` or `cortex-agent`). */
  agent: string;
  /** The agent's state folder in the hints. */
  stateDir: string;
  /** Where the agent commands run, said before them. */
  where: string;
}

export const CLONE_HINTS: HintStyle = {
  server: 'npm run server --',
  agent: 'npm run agent --',
  stateDir: './cortex-agent-state',
  where: 'on the host, from a clone of this repository (or with the cortex-agent tarball: cortex-agent instead of npm run agent --)',
};

/** The style for a packaged install whose bundle is `bundleFile` (lib/cortex-server.mjs). */
export function packagedHints(bundleFile: string): HintStyle {
  return {
    server: join(dirname(bundleFile), '..', 'bin', 'cortex-server'),
    agent: 'cortex-agent',
    stateDir: '/var/lib/cortex-agent',
    where: "on the host, with bin/cortex-agent of the cortex-agent tarball (README: Operating, Install)",
  };
}

/** The style of this process: packaged when it runs from the tarball's bundle. */
export function hintStyle(): HintStyle {
  return typeof __CORTEX_PACKAGED__ === 'string' ? packagedHints(fileURLToPath(import.meta.url)) : CLONE_HINTS;
}

/** The agent enroll command line; `--allow-insecure` for a ws:// URL. */
export function enrollCommand(url: string, hostId = 'HOST_ID', token = 'TOKEN', style: HintStyle = hintStyle()): string {
  const insecure = url.startsWith('ws://') ? ' --allow-insecure' : '';
  return `${style.agent} enroll --server ${url} --token ${token} --host-id ${hostId} --state-dir ${style.stateDir}${insecure}`;
}

/** The agent run command line that follows the enrollment. */
export function runCommand(url: string, style: HintStyle = hintStyle()): string {
  return `${style.agent} run --state-dir ${style.stateDir}${url.startsWith('ws://') ? ' --allow-insecure' : ''}`;
}

/** The `agent issue` command line for the database `db`. */
export function issueCommand(db: string, style: HintStyle = hintStyle()): string {
  return `${style.server} agent issue --host HOSTNAME --db ${displayDb(db)}`;
}

/** A SQLite path made absolute; a database URL (its password already masked) as it is. */
function displayDb(db: string): string {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(db) ? db : resolve(db);
}

/** The serve banner (stdout): where it listens and the three steps to a first agent. */
export function serveBanner(url: string, db: string, style: HintStyle = hintStyle()): string {
  return (
    `cortex-server listening on ${url} (database ${displayDb(db)})\n` +
    `To enroll an agent:\n` +
    `  1. ${issueCommand(db, style)}\n` +
    `     (prints the host_id and a one-time token)\n` +
    `  2. ${enrollCommand(url, 'HOST_ID', 'TOKEN', style)}\n` +
    `  3. ${runCommand(url, style)}\n` +
    `Run steps 2 and 3 ${style.where}.\n` +
    `Operator console: ${url.replace(/^ws/, 'http').replace(/\/ws\/agent$/, '/ui/')}\n`
  );
}
