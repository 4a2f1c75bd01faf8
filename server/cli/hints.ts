// The enrollment hints that `serve` and `agent issue` print: complete commands that work as
// printed. From a clone of this repository they are `npm run server -- …` / `npm run agent -- …`;
// from the packaged tarball (../packaged.ts) there is no clone and no npm script: this install's
// own launcher (bin/cortex-server) and the agent tarball's `cortex-agent`, with the state folder
// its unit uses.
//
// Every value in them is quoted for a POSIX shell (common/shell-quote.ts): a --db path with a
// space or a quote in it was printed bare. The enroll command reads the one-time token from
// stdin (`--token -`: at a terminal it asks for it without showing it), so that the token is
// never on a command line, where ps and the shell history keep it.
import { join, resolve } from 'node:path';
import { shellCommand, shellQuote } from '../../common/shell-quote.js';
import { PACKAGED_HOME } from '../packaged.js';
import { isLoopbackHost } from '../settings.js';

/** How the hints spell the commands, fixed for the process. */
export const HINTS =
  PACKAGED_HOME === undefined
    ? {
        server: 'npm run server --',
        agent: 'npm run agent --',
        stateDir: './cortex-agent-state',
        /** Where the agent commands run, said before them. */
        where: 'on the host, from a clone of this repository (or with the cortex-agent tarball: cortex-agent instead of npm run agent --)',
      }
    : {
        server: shellQuote(join(PACKAGED_HOME, 'bin', 'cortex-server')),
        agent: 'cortex-agent',
        stateDir: '/var/lib/cortex-agent',
        where: 'on the host, with bin/cortex-agent of the cortex-agent tarball (README: Operating, Install)',
      };

/**
 * The agent enroll command line, the token read from stdin (`--token -`); `--allow-insecure` for
 * a ws:// URL. The token is not in it: enroll asks for it at a terminal (enrollTokenNote).
 */
export function enrollCommand(url: string, hostId = 'HOST_ID'): string {
  const words = ['enroll', '--server', url, '--token', '-', '--host-id', hostId, '--state-dir', HINTS.stateDir, ...(url.startsWith('ws://') ? ['--allow-insecure'] : [])];
  return `${HINTS.agent} ${shellCommand(words)}`;
}

/** How the enroll command takes the token (`what`: which token), said beside it: the serve banner, `agent issue`'s stderr. */
export function enrollTokenNote(what: string): string {
  return `enroll asks for ${what} and does not show it as you paste it, or reads it from stdin (… --token - < FILE); it is never on a command line, where ps and the shell history keep it`;
}

/** The agent run command line that follows the enrollment. */
export function runCommand(url: string): string {
  return `${HINTS.agent} ${shellCommand(['run', '--state-dir', HINTS.stateDir, ...(url.startsWith('ws://') ? ['--allow-insecure'] : [])])}`;
}

/**
 * The line after enroll commands whose URL is a loopback address (serve records the address it
 * listens on, 127.0.0.1 behind a reverse proxy as documented): on the agent's host that is the
 * agent's own machine. Undefined for any other URL.
 */
export function loopbackNote(url: string): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return undefined;
  }
  if (host === '0.0.0.0' || host === '::') return unspecifiedNote(host);
  if (!isLoopbackHost(host)) return undefined;
  const insecure = url.startsWith('ws://') ? ' and drop --allow-insecure' : '';
  return `The server listens on loopback (${host}): on another host, give --server the URL agents reach it at (e.g. wss://HOST/ws/agent through your reverse proxy)${insecure}.`;
}

/** The line after commands whose URL names every address (serve --listen 0.0.0.0:PORT): no host can connect to it as written. */
function unspecifiedNote(host: string): string {
  return `The server listens on every address (${host}), which is no address to connect to: give --server this machine's name or IP address as agents reach it (e.g. ws://logs.example.com:PORT/ws/agent).`;
}

/** unspecifiedNote for the serve banner's URL, or undefined. */
function bannerNote(url: string): string | undefined {
  try {
    const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
    return host === '0.0.0.0' || host === '::' ? unspecifiedNote(host) : undefined;
  } catch {
    return undefined;
  }
}

/** The `agent issue` command line for the database `db`. */
export function issueCommand(db: string): string {
  return `${HINTS.server} agent issue --host HOSTNAME --db ${shellQuote(displayDb(db))}`;
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
    `     (${enrollTokenNote('the token from step 1')})\n` +
    `  3. ${runCommand(url)}\n` +
    `Run steps 2 and 3 ${HINTS.where}.\n` +
    (bannerNote(url) === undefined ? '' : `${bannerNote(url)}\n`) +
    `Operator console: ${url.replace(/^ws/, 'http').replace(/\/ws\/agent$/, '/ui/')}\n`
  );
}
