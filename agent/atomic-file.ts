// Crash-safe file replacement: after a crash at any point, `path` holds either its
// previous content or the new content, never a mix or a truncated file.
//
//   1. write the data to a fresh temp file in the same folder (same filesystem, so the
//      rename is atomic), created with the final mode;
//   2. fsync the temp file (the data is on disk before the name points at it);
//   3. rename it over `path` (atomic replacement of the directory entry);
//   4. fsync the folder (the rename itself is on disk).
// A temp file left by a crash (named `.<base>.tmp-<pid>-<random>`) is removed by the
// next write once its writer process is gone.

import { randomBytes } from 'node:crypto';
import { promises as fsp, constants as fsc } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** File mode of the result (applied with fchmod, so the umask cannot widen or narrow it). Default 0o600. */
  mode?: number;
}

export async function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const mode = options.mode ?? 0o600;
  const dir = dirname(path);
  const tmp = join(dir, `${tempPrefix(path)}${process.pid}-${randomBytes(6).toString('hex')}`);
  let renamed = false;
  try {
    const fh = await fsp.open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, mode);
    try {
      await fh.chmod(mode);
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, path);
    renamed = true;
    await syncDir(dir);
  } finally {
    if (!renamed) await fsp.rm(tmp, { force: true }).catch(() => undefined);
  }
  await removeStaleTemps(path);
}

/** Removes `path` (no error if absent) and makes the removal durable. Returns whether it existed. */
export async function unlinkDurable(path: string): Promise<boolean> {
  try {
    await fsp.unlink(path);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return false;
    throw err;
  }
  await syncDir(dirname(path));
  return true;
}

export async function syncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, fsc.O_RDONLY | (fsc.O_DIRECTORY ?? 0));
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function tempPrefix(path: string): string {
  return `.${basename(path)}.tmp-`;
}

/** Deletes temp files of `path` whose writer process no longer exists. Best effort. */
async function removeStaleTemps(path: string): Promise<void> {
  const prefix = tempPrefix(path);
  let names: string[];
  try {
    names = await fsp.readdir(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid === process.pid || processExists(pid)) continue;
    await fsp.rm(join(dirname(path), name), { force: true }).catch(() => undefined);
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return !isErrno(err, 'ESRCH');
  }
}

export function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
