// Small files that must survive a power cut: the data is fsynced before its name points at it,
// and the folder is fsynced after the name changed (a rename or a new file is an entry of the
// folder: without the folder's fsync a crash can bring back the old entry). Synchronous, for the
// buffer's synchronous open and append; the agent's asynchronous twin is ../atomic-file.ts,
// which the buffer may not import (README: Node built-ins only).

import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** fsync of a folder: its entries (new names, renames, removals) are on disk when it returns. */
export function syncFolder(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes `text` to `file` (created with `mode`; truncated with 'w', appended to with 'a') and fsyncs it. */
function writeSynced(file: string, text: string, mode: number, flag: 'w' | 'a' = 'w'): void {
  const fd = openSync(file, flag, mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Appends `text` to `file` (created with `mode`) and fsyncs it, and its folder when the file is new. */
export function appendDurably(file: string, text: string, mode = 0o600): void {
  const created = !existsSync(file);
  writeSynced(file, text, mode, 'a');
  if (created) syncFolder(dirname(file));
}

/** Writes a small file and fsyncs it and its folder (it exists on disk before the caller goes on). */
export function writeDurably(file: string, text: string, mode = 0o600): void {
  writeSynced(file, text, mode);
  syncFolder(dirname(file));
}

/**
 * Replaces `file` with `text` atomically and durably: a temp file beside it, written and
 * fsynced, renamed over it, then the folder fsynced. A crash leaves the old content or the new,
 * never a mix, and once it returns the new content survives a power cut. The temp file goes
 * if anything fails.
 */
export function replaceDurably(file: string, text: string, mode = 0o600): void {
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    writeSynced(tmp, text, mode);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  syncFolder(dirname(file));
}
