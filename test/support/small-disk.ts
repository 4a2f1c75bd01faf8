// A small tmpfs to fill up (root only): what a full disk does to a command, without filling the machine's.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mounted: string[] = [];

/** A tmpfs of `bytes` at a new temp folder; null where it cannot be mounted (not root): the caller says so and skips that part. */
export function smallDisk(bytes: number, prefix = 'cortex-smalldisk-'): string | null {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  mounted.push(dir);
  return dir;
}

/** Unmounts and removes every smallDisk() made so far (afterEach). */
export function releaseSmallDisks(): void {
  for (const dir of mounted.splice(0)) {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `dir/fill` until the filesystem says ENOSPC. */
export function fillDisk(dir: string): void {
  const fd = openSync(join(dir, 'fill'), 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(4096));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}
