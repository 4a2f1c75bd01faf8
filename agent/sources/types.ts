// The seam between log sources and the agent (DECISIONS.md D1).
//
// A source commits what it read through a SourceSink: entries and the source's new
// position in ONE buffer transaction. `AgentSink` in ../sources.ts has exactly this
// shape, and a DurableBuffer adapts to it with sinkFromBuffer().

import type { LogSourceConfig } from '@cortex/agent-protocol';
import type { AppendResult, DurableBuffer, SourcePositionUpdate } from '../buffer/buffer.js';
import type { JsonValue, NewLogEntry } from '../buffer/entry.js';

export interface SourceSink {
  /** Commits entries and the position durably in one transaction; throws BufferStorageError when nothing was stored. */
  append(entries: readonly NewLogEntry[], position?: SourcePositionUpdate): AppendResult;
  /** The stored position of a source key, or null. */
  position(source: string): JsonValue | null;
}

export function sinkFromBuffer(buffer: DurableBuffer): SourceSink {
  return {
    append: (entries, position) => buffer.append(entries, position),
    position: (source) => buffer.getSourcePosition(source),
  };
}

/** The subset of a pino logger sources use. */
export interface SourceLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: SourceLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export interface SourceDeps {
  /** Where entries go; either a sink (the agent's, which also pauses/resumes sources on storage errors) or a DurableBuffer. */
  sink?: SourceSink;
  buffer?: DurableBuffer;
  logger?: SourceLogger;
  /** Epoch milliseconds; the read time of plain lines. Default Date.now. */
  clock?: () => number;
  /** Poll interval (fs.watch only shortens the wait). Default 250 ms. */
  pollMs?: number;
  /** Bytes per read; one buffer.append per chunk. Default 256 KiB. */
  chunkBytes?: number;
  /** Use fs.watch on the file's folder as a wake-up hint. Default true. */
  watch?: boolean;
  /** Storage-error retry backoff. Defaults 250 ms doubling to 5 s. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Test hook: wait after seeing a rotated-away file at EOF before switching (default: one poll). */
  rotateQuietPolls?: number;
  /** Reconnect/restart backoff of docker (engine unreachable) and custom (command exited, socket failed) sources. Defaults 1 s doubling to 30 s. */
  restartMinMs?: number;
  restartMaxMs?: number;
}

export interface SourceRunnerStatus {
  kind: LogSourceConfig['kind'];
  key: string;
  path: string | null;
  name: string | null;
  /** waiting (file missing), reading, draining (rotated-away file), paused, retrying (storage), error, stopped. */
  state: 'idle' | 'waiting' | 'reading' | 'draining' | 'paused' | 'retrying' | 'error' | 'stopped';
  /** The last position committed with entries (null: nothing committed by this instance yet). */
  position: JsonValue | null;
  last_error: string | null;
  lines_read: number;
  bytes_read: number;
  /** Lines dropped by `filter` (their offset still advances). */
  lines_filtered: number;
  /** Lines unread at a copytruncate (counted from the copy when found, else estimated). */
  lines_lost: number;
  bytes_lost: number;
  lost_estimated: boolean;
  truncations: number;
  rotations: number;
  lines_split: number;
  /** Lines sent degraded because their metadata broke a contract cap (DECISIONS H2); file sources. */
  lines_degraded?: number;
  /** Per-file status of a glob source. */
  files?: SourceRunnerStatus[];
}

/** One configured source as the agent drives it. Compatible with RunningSource in ../sources.ts. */
export interface LogSourceRunner {
  /** The buffer source key ("file:/var/log/syslog"; for a glob, "file:<pattern>" — each file commits under file:<real path>). */
  readonly key: string;
  readonly kind: LogSourceConfig['kind'];
  /** Starts reading (idempotent). A runner created with a config error stays stopped and reports it in status. */
  start(): void;
  /** Stops timers, watchers and closes files; nothing is committed after it resolves. */
  stop(): Promise<void>;
  /** Read nothing until resume() (the agent calls it while the buffer cannot store). */
  pause(): void;
  resume(): void;
  status(): SourceRunnerStatus;
}

export class SourceConfigError extends Error {
  override readonly name = 'SourceConfigError';
}
