// `cortex-agent run` as root on a state folder another user owns (DECISIONS I36): the packaged
// service's folder (/var/lib/cortex-agent, the user cortex-agent) run by hand with sudo, or a
// container run as root on a volume another uid owns. Run keeps root's rights (a root deployment
// reads root-only logs, journals and command output the server's config may name at any time),
// and every file it writes in the folder is handed to the folder's owner as soon as it appears,
// so that the agent started again as that user (the service) can use them. Without this the
// rotated token, config.json, seq.json and status.json were root's (0600), and the service's
// next start failed with E_FILE_ACCESS.
//
// A file is handed over through a descriptor opened with O_NOFOLLOW (a symlink the folder's
// owner put in place of a name is not followed) and only when it is root's, a regular file, and
// has one link (a hard link to a file elsewhere is never given away). Only the agent's own names
// are touched: another root file in the folder (an operator's) stays root's.
//
// Closing any descriptor of a file drops this process's POSIX locks on it, SQLite's included: the
// buffer's files (buffer.db, its -wal and -shm, the copies moved aside) are therefore handed over
// only while the buffer is closed — at start, whenever the agent stopped, at exit. While the
// buffer is open SQLite gives a -wal or -shm it creates to buffer.db's owner by itself (when it
// runs as root), so buffer.db being the owner's is what matters.

import { closeSync, constants as fsc, fchownSync, fstatSync, lstatSync, openSync, readdirSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { CLEAN_CLOSE_MARK, RECOVERY_FILE, SEQ_FILE } from './buffer/heal.js';
import { DAMAGED_ROWS_SUFFIX } from './buffer/buffer.js';
import { CONFIG_FILE } from './config-store.js';
import type { FolderOwner } from './enroll.js';
import type { Logger } from './log.js';
import { RUN_LOCK_FILE } from './run-lock.js';
import { AGENT_JSON_FILE, BUFFER_DB_FILE, HOST_ID_FILE, passwdEntry } from './state-dir.js';
import { STATUS_FILE } from './status-file.js';
import { TOKEN_FILE } from './token-store.js';
import { shellQuote } from '../common/shell-quote.js';

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The agent's files that are not SQLite's: written, replaced and removed while the agent runs. */
const PLAIN_FILES = [TOKEN_FILE, HOST_ID_FILE, AGENT_JSON_FILE, CONFIG_FILE, SEQ_FILE, STATUS_FILE, RUN_LOCK_FILE, RECOVERY_FILE, `${BUFFER_DB_FILE}.reserve`, `${BUFFER_DB_FILE}${CLEAN_CLOSE_MARK}`, `${BUFFER_DB_FILE}${DAMAGED_ROWS_SUFFIX}`];

/** Those names, and the temp files they are written through (`.NAME.tmp-…`, `NAME.tmp-…`). */
const PLAIN_RE = new RegExp(`^\\.?(?:${PLAIN_FILES.map(esc).join('|')})(?:\\.tmp-.*)?$`);

/** buffer.db, its copies moved aside (`.corrupt-…`, `.rescued-…`), and SQLite's files beside each. */
const SQLITE_RE = new RegExp(`^${esc(BUFFER_DB_FILE)}(?:\\.(?:corrupt|rescued)-[^/]*)?(?:-wal|-shm|-journal)?$`);

/** Whether `name` in a state folder is one of the agent's files (temp files included). */
export function isAgentFileName(name: string): boolean {
  return PLAIN_RE.test(name) || SQLITE_RE.test(name);
}

/** The outcome of one hand-over: the files given to the owner, and those that could not be (with the errno code). */
export interface Handover {
  given: string[];
  failed: { file: string; code: string }[];
}

/**
 * Gives the agent's files in `dir` that root owns to `owner` (see the head of this file).
 * `sqlite`: buffer.db and SQLite's files too — only while no buffer is open in this process.
 */
export function giveAgentFilesToOwner(dir: string, owner: FolderOwner, sqlite: boolean): Handover {
  const out: Handover = { given: [], failed: [] };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out; // gone, or unreadable: run's own errors say so
  }
  for (const name of names) {
    if (!(PLAIN_RE.test(name) || (sqlite && SQLITE_RE.test(name)))) continue;
    let fd: number;
    try {
      fd = openSync(join(dir, name), fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK | fsc.O_NOCTTY);
    } catch {
      continue; // removed meanwhile, or a symlink (ELOOP): not the agent's file to give
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || st.uid !== 0 || st.nlink !== 1) continue;
      fchownSync(fd, owner.uid, owner.gid);
      out.given.push(name);
    } catch (err) {
      out.failed.push({ file: name, code: (err as NodeJS.ErrnoException).code ?? 'error' });
    } finally {
      closeSync(fd);
    }
  }
  return out;
}

/** `chown -R OWNER: DIR`, as the hints print it. */
export function chownCommand(owner: { name: string; uid: number; named: boolean }, dir: string): string {
  return `chown -R ${shellQuote(owner.named ? `${owner.name}:` : String(owner.uid))} ${shellQuote(dir)}`;
}

/** What `run` holds while it keeps a state folder's files its owner's. */
export interface StateOwnerKeeper {
  /** The buffer is closed (the agent stopped, before a new start): its files are handed over too. */
  bufferClosed(): void;
  /** Stops watching and hands over whatever is left (the buffer is closed). Idempotent. */
  close(): void;
}

/**
 * For `run` as root on a folder `owner` owns: says so (one warn line), hands the files an
 * earlier root run left to the owner now, then each file the agent creates as it appears (a
 * watch on the folder; a poll every second when the system refuses a watch), and everything at
 * the end. A file that cannot be handed over (no CAP_CHOWN, a uid the user namespace does not
 * map) is said once, with what to do; the agent goes on (it runs as root: nothing is lost).
 */
export function keepStateFilesOwned(dir: string, owner: FolderOwner, logger: Logger): StateOwnerKeeper {
  const said = new Set<string>(); // the errno codes already said: each once
  // EPERM (no CAP_CHOWN: a unit's CapabilityBoundingSet=, a container's --cap-drop) or EINVAL (a
  // uid the user namespace does not map) will not change while the agent runs: it stops trying.
  let refused = false;
  const say = (h: Handover, when: string) => {
    if (h.given.length > 0) logger.debug({ state_dir: dir, owner: owner.name, files: h.given, when }, `files given to ${owner.name}, the state folder's owner`);
    const fresh = h.failed.filter((f) => !said.has(f.code));
    for (const f of h.failed) {
      said.add(f.code);
      if (f.code === 'EPERM' || f.code === 'EINVAL') refused = true;
    }
    if (fresh.length === 0) return;
    const files = fresh.filter((f) => !f.file.includes('.tmp-')).map((f) => f.file);
    logger.error(
      { state_dir: dir, owner: owner.name, files: fresh },
      `cannot give the files the agent writes in ${dir} to ${owner.name}, its owner (${[...new Set(fresh.map((f) => f.code))].join(', ')}${files.length > 0 ? `: ${files.join(', ')}` : ''})${refused ? '; not tried again while the agent runs' : ''}: ` +
        `the agent goes on as root, but started as ${owner.name} (as the packaged service runs) it could not use them — after stopping it, ${chownCommand(owner, dir)} where root may change owners (a container's host), or go on running the agent as root only`,
    );
  };
  const sweep = (sqlite: boolean, when: string) => {
    if (!refused) say(giveAgentFilesToOwner(dir, owner, sqlite), when);
  };
  const first = giveAgentFilesToOwner(dir, owner, true);
  const left = first.given.filter((f) => f !== RUN_LOCK_FILE && !f.includes('.tmp-')); // run.lock: this run's own, just taken
  say(first, 'start');
  // (when no file can be given at all, the error just said says what to do instead)
  if (!refused) {
    logger.warn(
      { state_dir: dir, owner: owner.name, uid: owner.uid, ...(left.length > 0 ? { given_back: left } : {}) },
      `running as root on the state folder ${dir}, which belongs to ${owner.name}: every file the agent writes there is given to ${owner.name}, so that the agent can start again as that user (as the packaged service runs)` +
        (left.length > 0 ? `; files an earlier command run as root left were given back: ${left.join(', ')}` : '') +
        `. To run as ${owner.name} instead: sudo -u ${shellQuote(owner.name)} cortex-agent run --state-dir ${shellQuote(dir)} (logs only root may read are then not read); to run as root for good without this: chown -R root: ${shellQuote(dir)}`,
    );
  }
  let closed = false;
  let scheduled = false;
  const liveSweep = () => {
    scheduled = false;
    if (!closed) sweep(false, 'written');
  };
  const schedule = () => {
    if (scheduled || closed) return;
    scheduled = true;
    setImmediate(liveSweep);
  };
  let watcher: FSWatcher | null = null;
  let poll: NodeJS.Timeout | null = null;
  const pollInstead = (why: unknown) => {
    watcher?.close();
    watcher = null;
    if (closed || poll !== null) return;
    logger.debug({ state_dir: dir, err: (why as Error).message }, 'the state folder cannot be watched: its files are handed over every second');
    poll = setInterval(schedule, 1000);
    poll.unref();
  };
  try {
    // a file made, renamed or removed is a 'rename'; our own fchown is a 'change' (ignored)
    watcher = watch(dir, { persistent: false }, (event) => {
      if (event === 'rename') schedule();
    });
    watcher.on('error', pollInstead);
  } catch (err) {
    pollInstead(err);
  }
  // A crash (logCrashes exits) or a process.exit: what is there goes too (this process's locks go with it anyway).
  const atExit = () => sweep(true, 'exit');
  process.on('exit', atExit);
  return {
    bufferClosed: () => {
      if (!closed) sweep(true, 'stopped');
    },
    close: () => {
      if (closed) return;
      closed = true;
      watcher?.close();
      if (poll !== null) clearInterval(poll);
      process.off('exit', atExit);
      sweep(true, 'end');
    },
  };
}

/** An agent file in a state folder whose owner is not the folder's. */
export interface MisownedFiles {
  /** The folder's owner: its name, or `uid N`. */
  folder_owner: string;
  files: { file: string; owner: string }[];
  /**
   * Whether the agent run as the folder's owner cannot start for them: the buffer's files (which
   * SQLite opens to write) or a token or agent.json that only their owner may read. Otherwise it
   * starts, but cannot read them (config.json: the config last in force; seq.json) until it
   * replaces them.
   */
  blocks_start: boolean;
}

/** The files `run` cannot start without: SQLite opens the first three to write, the others are read. */
const START_FILES = [BUFFER_DB_FILE, `${BUFFER_DB_FILE}-wal`, `${BUFFER_DB_FILE}-shm`, TOKEN_FILE, AGENT_JSON_FILE, HOST_ID_FILE];

/**
 * The agent's files (not its temp files) in a state folder another user than root owns that
 * belong to someone else — left by a command run as root (an enroll or run before I34/I36): the
 * agent started as the folder's owner (the service) cannot read or replace them. Null when there
 * are none, or the folder is root's (or cannot be read).
 */
export function misownedAgentFiles(dir: string): MisownedFiles | null {
  let folderUid: number;
  let names: string[];
  try {
    folderUid = lstatSync(dir).uid;
    if (folderUid === 0) return null;
    names = readdirSync(dir);
  } catch {
    return null;
  }
  const nameOf = (uid: number) => passwdEntry(uid)?.name ?? `uid ${uid}`;
  const files: MisownedFiles['files'] = [];
  let blocks = false;
  for (const name of names.sort()) {
    if (name.includes('.tmp-') || !isAgentFileName(name)) continue;
    try {
      const st = lstatSync(join(dir, name));
      if (st.uid === folderUid) continue;
      files.push({ file: name, owner: nameOf(st.uid) });
      const at = START_FILES.indexOf(name);
      if (at >= 0 && (at < 3 || (st.mode & 0o004) === 0)) blocks = true;
    } catch {
      // gone meanwhile
    }
  }
  return files.length === 0 ? null : { folder_owner: nameOf(folderUid), files, blocks_start: blocks };
}

/** The words for misownedAgentFiles' answer: what is wrong, and the command that mends it. */
export function misownedText(dir: string, m: MisownedFiles): { message: string; hint: string } {
  const owners = [...new Set(m.files.map((f) => f.owner))];
  const many = m.files.length > 1;
  const uid = Number(m.folder_owner.startsWith('uid ') ? m.folder_owner.slice(4) : NaN);
  const chown = chownCommand({ name: m.folder_owner, uid, named: !m.folder_owner.startsWith('uid ') }, dir);
  return {
    message:
      `${m.files.map((f) => f.file).join(', ')} in the state folder ${dir} belong${many ? '' : 's'} to ${owners.join(', ')}, but the folder to ${m.folder_owner} (left by a cortex-agent command run as root?): ` +
      `the agent run as ${m.folder_owner} (as the packaged service runs) ${m.blocks_start ? 'cannot start' : `may not read or write ${many ? 'them' : 'it'}`}`,
    hint: `give ${many ? 'them' : 'it'} back to ${m.folder_owner}: sudo ${chown}`,
  };
}
