// A SQLite file deleted or replaced under the process that has it open: the server's database
// (DECISIONS H20) and the agent's buffer.db (H25). SQLite goes on writing into the deleted
// file, every write succeeds, and all of it is gone at the next start — with no line in the
// log. The path is looked at every few seconds; once it is gone or is another file, the owner
// stops writing, copies what its open database holds back to the path (or beside it when
// another file is there now) with SQLite's backup API, and stops or starts again on the copy.
import { existsSync, statSync } from 'node:fs';

export type FileGone = 'deleted' | 'replaced';

/** Watches `path` (its device and inode at start); calls `onGone` once. Returns the stop function. */
export function watchDbFile(path: string, onGone: (how: FileGone) => void, everyMs = 2000): () => void {
  let first: { dev: number; ino: number };
  try {
    const st = statSync(path);
    first = { dev: st.dev, ino: st.ino };
  } catch {
    return () => undefined; // not a file we can watch
  }
  const timer = setInterval(() => {
    let how: FileGone | undefined;
    try {
      const st = statSync(path);
      if (st.dev !== first.dev || st.ino !== first.ino) how = 'replaced';
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') how = 'deleted';
    }
    if (how === undefined) return;
    clearInterval(timer);
    onGone(how);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Where the rescued copy goes: the path itself when it is free, else beside it. */
export function rescueTarget(path: string, how: FileGone, now = new Date()): string {
  if (how === 'deleted' && !existsSync(path)) return path;
  return `${path}.rescued-${now.toISOString().replace(/[:.]/g, '-')}`;
}
