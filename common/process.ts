// Whether a pid recorded in a file (run.lock, a servers row) still names a live process of
// ours on this machine; and the name of the user this process runs as (for messages that say
// who may not read or write something).
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
