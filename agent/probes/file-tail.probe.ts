// file.tail: the last N lines of a regular file inside the configured allowed paths.
//
// Path policy (the schema already refused relative paths, '..' segments and NUL):
//  1. the requested path, normalised, must lie in an allowed path (or in its resolved form) —
//     so nothing is learnt about files elsewhere, not even whether they exist;
//  2. its realpath (all symlinks resolved) must lie in the realpath of an allowed path — a
//     symlink inside an allowed directory pointing out of it is refused;
//  3. the resolved path is opened with O_NOFOLLOW|O_NONBLOCK (no FIFO hang), must be a regular
//     file, and /proc/self/fd/<fd> must name the resolved path (catches a directory swapped
//     for a symlink between the check and the open).
// Policy refusals answer -32602 with path /args/path; I/O failures -32011.
//
// Reading: 64 KiB chunks from the end until enough newlines are seen, at most 512 KiB.

import { constants, type FileHandle, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { InvalidParamsError, ProbeExecutionFailedError, type FileTailOutput } from '@cortex/agent-protocol';
import { defineProbe } from './types.js';

export const DEFAULT_TAIL_LINES = 100;
export const TAIL_CHUNK_BYTES = 64 * 1024;
export const TAIL_BUDGET_BYTES = 512 * 1024;
export const MAX_LINE_CHARS = 65536;

/** p is root or below it (both absolute and normalised). */
export function isWithin(p: string, root: string): boolean {
  if (p === root) return true;
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return p.startsWith(prefix);
}

function refuse(message: string): InvalidParamsError {
  return new InvalidParamsError({ method: 'probe.request', errors: [{ path: '/args/path', message, keyword: 'allowedPaths' }] });
}

export interface TailResult {
  lines: string[];
  truncated: boolean;
}

/** The last `count` lines of an open file of `size` bytes, reading backwards from the end. */
export async function readTailLines(
  fh: Pick<FileHandle, 'read'>,
  size: number,
  count: number,
  options: { chunkBytes?: number; budgetBytes?: number; maxLineChars?: number } = {},
): Promise<TailResult> {
  const chunkBytes = options.chunkBytes ?? TAIL_CHUNK_BYTES;
  const budget = options.budgetBytes ?? TAIL_BUDGET_BYTES;
  const maxLine = options.maxLineChars ?? MAX_LINE_CHARS;
  const chunks: Buffer[] = [];
  let pos = size;
  let total = 0;
  let newlines = 0;
  let first = true;
  while (pos > 0 && total < budget) {
    const len = Math.min(chunkBytes, pos, budget - total);
    const buf = Buffer.alloc(len);
    let got = 0;
    while (got < len) {
      const { bytesRead } = await fh.read(buf, got, len - got, pos - len + got);
      // The file changed under the probe: it ran and failed (-32011), no agent bug.
      if (bytesRead === 0) throw new ProbeExecutionFailedError({ stderr: 'the file shrank while it was read', exit_code: null });
      got += bytesRead;
    }
    pos -= len;
    total += len;
    chunks.unshift(buf);
    for (let i = 0; i < len; i++) if (buf[i] === 0x0a) newlines++;
    // The file's final newline ends the last line; it does not start another one.
    if (first && buf[len - 1] === 0x0a) newlines--;
    first = false;
    if (newlines >= count) break;
  }
  const text = new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks));
  const parts = text === '' ? [] : text.split('\n');
  if (text.endsWith('\n')) parts.pop();
  let truncated = false;
  if (pos > 0) {
    // The first part may have started before what was read.
    const head = parts.shift();
    if (parts.length < count) {
      truncated = true; // budget reached before enough lines
      if (parts.length === 0 && head !== undefined) parts.push(head); // the end of one very long line
    }
  }
  const lines = parts.slice(Math.max(0, parts.length - count)).map((l) => {
    const line = l.endsWith('\r') ? l.slice(0, -1) : l;
    if (line.length > maxLine) {
      truncated = true;
      return line.slice(0, maxLine);
    }
    return line;
  });
  return { lines, truncated };
}

export const fileTailProbe = defineProbe('file.tail', async (args, ctx) => {
  const count = args.lines ?? DEFAULT_TAIL_LINES;
  const requested = resolve(args.path);
  const allowed = ctx.settings.allowedTailPaths.filter((p) => isAbsolute(p)).map((p) => resolve(p));
  const allowedReal = (await Promise.all(allowed.map((p) => realpath(p).catch(() => null)))).filter((p): p is string => p !== null);
  if (allowed.length === 0) throw refuse('file.tail is not enabled: the agent has no allowed paths configured');
  if (![...allowed, ...allowedReal].some((root) => isWithin(requested, root))) throw refuse('is outside the allowed paths');

  const fail = (stderr: string) => new ProbeExecutionFailedError({ stderr, exit_code: null, probe: ctx.probe });
  let real: string;
  try {
    real = await realpath(requested);
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (!allowedReal.some((root) => isWithin(real, root))) throw refuse('resolves (through a symlink) outside the allowed paths');

  let fh: FileHandle;
  try {
    fh = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw refuse('resolves (through a symlink) outside the allowed paths');
    throw fail((err as Error).message);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw fail(`${real} is not a regular file`);
    let opened: string | null = null;
    try {
      opened = await readlink(`/proc/self/fd/${fh.fd}`);
    } catch {
      opened = null; // no procfs: the O_NOFOLLOW open and the realpath check stand alone
    }
    if (opened !== null && opened !== real && !allowedReal.some((root) => isWithin(opened!, root))) {
      throw refuse('resolves (through a symlink) outside the allowed paths');
    }
    ctx.signal.throwIfAborted();
    const { lines, truncated } = await readTailLines(fh, st.size, count);
    const output: FileTailOutput = { path: real, lines, truncated, size_bytes: st.size };
    return { output, exit_code: null, stderr: null };
  } catch (err) {
    if (err instanceof InvalidParamsError || err instanceof ProbeExecutionFailedError) throw err;
    if (ctx.signal.aborted) throw err;
    throw fail((err as Error).message);
  } finally {
    await fh.close().catch(() => undefined);
  }
});
