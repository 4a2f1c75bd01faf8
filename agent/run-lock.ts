// DIR/run.lock: one `cortex-agent run` per state folder. A second one is refused at once
// (instead of both connecting with the same host_id and closing each other's sessions).
//
// The lock file holds the owner's pid (and host name). It is created with O_EXCL; a lock
// whose process is gone (SIGKILL, a crash, a reboot) is taken over. Removed on exit. On a full
// disk it is a symlink whose target is that content (takeLockOnFullDisk).
import { closeSync, openSync, readFileSync, readlinkSync, symlinkSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isDiskFullCode } from '../common/errors.js';
import { nodeProcessAlive } from '../common/process.js';

export const RUN_LOCK_FILE = 'run.lock';

export class RunLockHeldError extends Error {
  constructor(
    readonly path: string,
    readonly pid: number,
  ) {
    super(`another cortex-agent run (pid ${pid}) is using this state folder (${path}); stop it first (kill ${pid}), or give each agent its own --state-dir`);
    this.name = 'RunLockHeldError';
  }
}

interface LockContent {
  pid: number;
  host: string;
}

function readLock(path: string): LockContent | null {
  try {
    const v = JSON.parse(lockText(path)) as Partial<LockContent>;
    return typeof v.pid === 'number' ? { pid: v.pid, host: String(v.host ?? '') } : null;
  } catch {
    return null; // gone, or half written by a process that died: treat as stale
  }
}

/** The lock's content: the file's, or the target of the symlink a full disk made it (takeLockOnFullDisk). */
function lockText(path: string): string {
  try {
    return readlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EINVAL') throw error; // EINVAL: a regular file
  }
  return readFileSync(path, 'utf8');
}

/**
 * On a full disk the lock's few bytes cannot be written (ENOSPC), and an empty lock reads as
 * stale. A symlink whose target is the content needs no data block (ext4 keeps targets under
 * 60 bytes in the inode, tmpfs under 128) and is created as atomically as O_EXCL: so the agent
 * still starts on a full disk, ships what its buffer holds, and waits for space (DECISIONS H12).
 * 'lost': another process made the lock meanwhile; 'failed': no symlink either.
 */
function takeLockOnFullDisk(path: string, content: string): 'taken' | 'lost' | 'failed' {
  try {
    unlinkSync(path); // the empty file this process just created
  } catch {
    // gone already
  }
  try {
    symlinkSync(content, path);
    return 'taken';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EEXIST' ? 'lost' : 'failed';
  }
}

/** The pid of a live `cortex-agent run` holding DIR/run.lock (on this machine, or any pid written by another), or null. */
export function runLockHolder(stateDir: string): number | null {
  const held = readLock(join(stateDir, RUN_LOCK_FILE));
  if (held === null) return null;
  if (held.host !== hostname()) return held.pid;
  return held.pid !== process.pid && nodeProcessAlive(held.pid) ? held.pid : null;
}

/**
 * Takes DIR/run.lock for this process. Throws RunLockHeldError when a live agent holds it.
 * Returns the release function (also run on process exit).
 */
export function acquireRunLock(stateDir: string, onTakeover?: (stalePid: number) => void): () => void {
  const path = join(stateDir, RUN_LOCK_FILE);
  const mine: LockContent = { pid: process.pid, host: hostname() };
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, 'wx', 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const held = readLock(path);
      if (held !== null && held.host === mine.host && nodeProcessAlive(held.pid)) throw new RunLockHeldError(path, held.pid);
      if (held !== null && held.host !== mine.host) {
        // A state folder on shared storage used from another machine: its pid says nothing here.
        throw new RunLockHeldError(path, held.pid);
      }
      onTakeover?.(held?.pid ?? 0);
      try {
        unlinkSync(path);
      } catch (unlinkError) {
        // ENOENT: another process took it over first: try again. Anything else (a read-only
        // filesystem, no write permission) would fail the same way three times: say it.
        if ((unlinkError as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkError;
      }
      continue;
    }
    let writeError: unknown = null;
    try {
      writeSync(fd, JSON.stringify(mine));
    } catch (error) {
      writeError = error;
    } finally {
      closeSync(fd);
    }
    if (writeError !== null) {
      const code = (writeError as NodeJS.ErrnoException).code;
      const taken = isDiskFullCode(code) ? takeLockOnFullDisk(path, JSON.stringify(mine)) : 'failed';
      if (taken === 'failed') throw writeError;
      if (taken === 'lost') continue;
    }
    // Two processes taking over the same stale lock: the later unlink removed the earlier
    // one's file; whoever no longer finds its own pid there gives way.
    const now = readLock(path);
    if (now === null || now.pid !== mine.pid) {
      if (now !== null) throw new RunLockHeldError(path, now.pid);
      continue;
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      process.off('exit', release);
      if (readLock(path)?.pid === mine.pid) {
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      }
    };
    process.on('exit', release);
    return release;
  }
  throw new Error(`could not take ${path}; is another cortex-agent starting on this state folder?`);
}
