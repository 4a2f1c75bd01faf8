// The sources seam: the one vocabulary between the agent and its log sources
// (DECISIONS.md D1, DESIGN.md 5.9, 5.12).
//
//   - A Source is one configured log source: the agent's manager (./manager.ts) starts it
//     through a SourceFactory, pauses/resumes it while the buffer cannot store, stops it
//     when the configuration drops or changes it, and shows its status().
//   - A source commits what it read through a SourceSink: entries and the source's new
//     position in ONE buffer transaction; a DurableBuffer adapts with sinkFromBuffer().
//   - The built-in sources (file, journald, docker, custom) report every counter of
//     SourceRunnerStatus; a Source plugged in from outside need report only its position
//     and last error (SourceReport).
//
// Imports only types of the agent's buffer and the generated protocol package.

import type { LogSourceConfig } from '@cortex/agent-protocol';
import type { AppendResult, DurableBuffer, SourcePositionUpdate } from '../buffer/buffer.js';
import type { BufferEntry, JsonValue } from '../buffer/entry.js';

export type SourceKind = LogSourceConfig['kind'];

/** Where a source commits entries; provided by the agent (or sinkFromBuffer). */
export interface SourceSink {
  /** Commits entries and the position durably in one transaction; throws BufferStorageError when nothing was stored. */
  append(entries: readonly BufferEntry[], position?: SourcePositionUpdate): AppendResult;
  /** The stored position of a source key, or null (read from its beginning). */
  position(source: string): JsonValue | null;
  /** Every stored position (globs read those of their names at start: DECISIONS H34). */
  positions?(): readonly { source: string; position: JsonValue }[];
  /** Drops the stored position of a source key that is gone for good (a glob's file deleted); throws BufferStorageError. */
  forget?(source: string): void;
}

/** The sink of a buffer: what sources read and write of it (the agent passes its own checked append). */
export function sinkFromBuffer(
  buffer: Pick<DurableBuffer, 'append' | 'getSourcePosition' | 'sourcePositions' | 'deleteSourcePosition'>,
  append: SourceSink['append'] = (entries, position) => buffer.append(entries, position),
): SourceSink {
  return {
    append,
    position: (source) => buffer.getSourcePosition(source),
    positions: () => buffer.sourcePositions(),
    forget: (source) => buffer.deleteSourcePosition(source),
  };
}

/** What every source reports: its committed position and last error; the counters when it keeps them. */
export interface SourceReport {
  /** The last position committed with entries (null: nothing committed by this instance yet). */
  position: JsonValue | null;
  last_error: string | null;
  key?: string;
  state?: SourceRunnerStatus['state'];
  lines_read?: number;
  lines_filtered?: number;
  lines_lost?: number;
  rotations?: number;
  truncations?: number;
  files?: SourceRunnerStatus[];
}

/** The status of a built-in source. */
export interface SourceRunnerStatus extends SourceReport {
  kind: SourceKind;
  key: string;
  path: string | null;
  name: string | null;
  /** waiting (file missing), reading, draining (rotated-away file), skipped (not text: compressed, binary; last_error says which), paused, retrying (storage), error, stopped. */
  state: 'idle' | 'waiting' | 'reading' | 'draining' | 'skipped' | 'paused' | 'retrying' | 'error' | 'stopped';
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

/** One configured log source, as the manager drives it. */
export interface Source<S extends SourceReport = SourceReport> {
  readonly kind: SourceKind;
  /** The buffer source key ("file:/var/log/syslog"; for a glob, "file:<pattern>" — each file commits under file:<real path>). */
  readonly key: string;
  /** Starts reading (idempotent). A source created with a config error stays stopped and reports it in status. */
  start(): void;
  /** Stops timers, watchers and closes files; nothing is committed after it resolves. */
  stop(): Promise<void> | void;
  /** Read nothing until resume() (the agent calls it while the buffer cannot store). */
  pause(): void;
  resume(): void;
  status(): S;
}

/** A built-in source (file, journald, docker, custom): a Source whose status carries every counter. */
export type LogSourceRunner = Source<SourceRunnerStatus>;

/** Creates and starts the Source of one configured kind; a config error throws (the manager shows it as last_error). */
export interface SourceFactory {
  kind: SourceKind;
  start(cfg: LogSourceConfig, sink: SourceSink): Source;
}

/** One source as the agent's `status` shows it. */
export interface SourceStatus {
  kind: SourceKind;
  /** File path (file) or name (journald filter, docker container, custom name). */
  path: string | null;
  name: string | null;
  /** The last position committed to buffer.db, if any. */
  position: JsonValue | null;
  last_error: string | null;
  paused: boolean;
  /** What the source reports, when it does (idle, waiting, reading, draining, paused, retrying, error, stopped; "starting" while a replaced source stops). */
  state?: string;
  /** The source's buffer position key (e.g. "file:/var/log/syslog", "journald:_TRANSPORT=journal"). */
  key?: string;
  lines_read?: number;
  lines_filtered?: number;
  lines_lost?: number;
  rotations?: number;
  truncations?: number;
  /** Per-file status of a glob source. */
  files?: JsonValue;
  labels?: Record<string, string>;
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
  /**
   * A glob keeps the stored position of a file gone from its folder this long before dropping it
   * (a folder on a mount not there yet looks empty; default 1 h: DECISIONS H34).
   */
  forgetAfterMs?: number;
  /** Test hook: wait after seeing a rotated-away file at EOF before switching (default: one poll). */
  rotateQuietPolls?: number;
  /**
   * file: a file rotated away (renamed or deleted) is kept open beside the new file at the path,
   * and what its writer still appends to it is read, until it has not grown for this long
   * (default 5000 ms; 0: closed as soon as it is drained), at most `rotateWaitMaxMs` after the
   * rotation (default 60000 ms; then closed with a warning if still written to). DECISIONS D6.
   */
  rotateWaitMs?: number;
  rotateWaitMaxMs?: number;
  /** Reconnect/restart backoff of docker (engine unreachable, a container's logs refused or cut), journald (journalctl exited) and custom (command exited, socket failed) sources. Defaults 1 s doubling to 30 s. */
  restartMinMs?: number;
  restartMaxMs?: number;
  /** docker: how long the Engine API may take to begin an answer (default 10 s); past it the engine is taken as unreachable. */
  dockerAnswerTimeoutMs?: number;
  /** journald: the folders of the system journal (default /run/log/journal and /var/log/journal), and how often to look again while they hold none (default 30 s). */
  journalDirs?: readonly string[];
  journalRecheckMs?: number;
  /** journald: a journalctl JSON line longer than this is not read (default MAX_JOURNAL_LINE_CHARS, 64 MiB). */
  journalMaxLineChars?: number;
  /**
   * custom: what a source may run (a program, any arguments; or one exact command) and where it
   * may listen (socket paths, or folders), from the host's agent.json `custom_commands` and
   * `custom_socket_paths` (DECISIONS H37): the server must not be able to run programs or
   * replace sockets the host did not allow. Undefined: no limit, for a library caller that
   * writes its own source configs; the running agent always passes the host's lists.
   */
  customCommands?: readonly (string | readonly string[])[];
  customSocketPaths?: readonly string[];
}

/** The sink of deps (or one over deps.buffer); null when neither is given. */
export function sinkOf(deps: SourceDeps): SourceSink | null {
  return deps.sink ?? (deps.buffer ? sinkFromBuffer(deps.buffer) : null);
}

export class SourceConfigError extends Error {
  override readonly name = 'SourceConfigError';
}
