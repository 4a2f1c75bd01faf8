// The `file` log source (DESIGN.md 5.12, DECISIONS.md D5–D12): the factory for one
// `file` config. The parts live in ./file/:
//   tailer.ts    one file followed under one buffer key (reading, rotation, truncation)
//   identity.ts  positions, fingerprints, finding a rotated file or its copy again
//   parse.ts     a chunk of bytes → entries (lines from ../text.ts, ../syslog-parse.ts)
//   glob.ts      `*`/`?` in the last path component: one tailer per matching file
//   poll.ts      the poll timer and fs.watch wake-ups of a tailer

import * as fs from 'node:fs';
import { dirname } from 'node:path';
import type { LogSourceConfig } from '@cortex/agent-protocol';
import { compileFilter } from './text.js';
import { SourceConfigError, silentLogger, sinkOf, type LogSourceRunner, type SourceDeps } from './types.js';
import { FORGET_AFTER_MS, GlobFileSource, isGlob, unnamablePath } from './file/glob.js';
import { DEFAULT_CHUNK, DEFAULT_ROTATE_WAIT_MAX_MS, DEFAULT_ROTATE_WAIT_MS, FileTailer, type TailerOptions } from './file/tailer.js';
import { isFilePosition, type FilePosition } from './file/identity.js';

export { DEFAULT_ROTATE_WAIT_MAX_MS, DEFAULT_ROTATE_WAIT_MS, FileTailer, type FileTailerStatus, type TailerOptions } from './file/tailer.js';
export { GlobFileSource, globClaims, isGlob, unnamablePath } from './file/glob.js';
export { FINGERPRINT_BYTES, isFilePosition, type FilePosition } from './file/identity.js';

/** Builds the runner for one `file` config: a FileTailer, or a GlobFileSource for `*`/`?` in the last component. Throws SourceConfigError. */
export function createFileSource(config: LogSourceConfig, deps: SourceDeps): LogSourceRunner {
  const path = config.path;
  if (typeof path !== 'string' || path.length === 0) throw new SourceConfigError('file source needs `path`');
  if (!path.startsWith('/')) throw new SourceConfigError(`file source path must be absolute: ${JSON.stringify(path)}`);
  if (/[*?]/.test(dirname(path))) throw new SourceConfigError(`glob characters are supported in the last path component only: ${JSON.stringify(path)}`);
  if (unnamablePath(path) !== null) throw new SourceConfigError(`file source path ${JSON.stringify(path)} contains a newline (or another line break: CR, U+2028, U+2029), which the source name of its entries (file:<path>) may not hold`);
  const filter = compileFilter(config.filter);
  const sink = sinkOf(deps);
  if (sink === null) throw new SourceConfigError('createFileSource needs deps.sink or deps.buffer');
  const labels = config.labels && Object.keys(config.labels).length > 0 ? { ...config.labels } : null;
  const pollMs = deps.pollMs ?? 250;
  const watch = deps.watch ?? true;
  const make = (p: string, key: `file:${string}`, extra: Partial<TailerOptions>): FileTailer =>
    new FileTailer({
      path: p, key, filter, labels, sink,
      logger: deps.logger ?? silentLogger,
      clock: deps.clock ?? Date.now,
      pollMs, chunkBytes: deps.chunkBytes ?? DEFAULT_CHUNK, watch,
      retryMinMs: deps.retryMinMs ?? 250, retryMaxMs: deps.retryMaxMs ?? 5000,
      rotateQuietPolls: deps.rotateQuietPolls ?? 1,
      rotateWaitMs: deps.rotateWaitMs ?? DEFAULT_ROTATE_WAIT_MS,
      rotateWaitMaxMs: deps.rotateWaitMaxMs ?? DEFAULT_ROTATE_WAIT_MAX_MS,
      findRotated: true,
      startAtEnd: config.start_at === 'end',
      ...extra,
    });
  if (isGlob(path)) {
    return new GlobFileSource(
      path,
      make,
      pollMs,
      watch,
      { all: () => sink.positions?.() ?? [], forget: (key) => sink.forget?.(key) },
      { clock: deps.clock ?? Date.now, forgetAfterMs: deps.forgetAfterMs ?? FORGET_AFTER_MS },
      deps.logger ?? silentLogger,
    );
  }
  const key: `file:${string}` = `file:${path}`;
  return make(path, key, { initialOf: () => sameFileElsewhere(path, key, sink) });
}

/**
 * For a single file with no position under its own key: the furthest position stored under
 * another file key for the file now at `path` (same device and inode; the tailer also checks
 * its first bytes before resuming there). The same file reached by another spelling of its
 * path (`/var/log//app.log`, a symlink, a hard link, the path a glob gave it) resumes where it
 * was, instead of being read again from its start as a file never seen: a config changed from
 * one spelling to another stored 19,790 lines twice (DECISIONS H56).
 */
function sameFileElsewhere(path: string, key: string, sink: NonNullable<ReturnType<typeof sinkOf>>): FilePosition | null {
  if (sink.positions === undefined || sink.position(key) !== null) return null; // its own position decides
  let st: fs.Stats;
  try {
    st = fs.statSync(path);
  } catch {
    return null; // not there (yet): a new file
  }
  let best: FilePosition | null = null;
  for (const { source, position } of sink.positions()) {
    if (source === key || !source.startsWith('file:') || !isFilePosition(position)) continue;
    if (position.dev !== st.dev || position.ino !== st.ino) continue;
    if (best === null || position.offset > best.offset || (position.offset === best.offset && position.part > best.part)) best = position;
  }
  return best;
}
