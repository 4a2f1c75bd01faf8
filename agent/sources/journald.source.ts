// The `journald` log source (DECISIONS.md D13–D15).
//
// Runs `journalctl --follow --output=json --no-pager` with the configured matches and
// `--after-cursor=<C>` from the stored position {cursor, realtime_usec}. Each stdout chunk
// becomes one buffer append whose position is the cursor of its last entry. When the
// stored cursor is refused (journal rotated or vacuumed, machine reinstalled) journalctl
// exits with an error; the source then falls back explicitly — counted, logged, shown in
// time. A missing journalctl is an error in status, retried with backoff; no journal file
// (journalctl then waits without a word) is said in status until one appears. Neither
// affects other sources.

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LogSourceConfig } from '@cortex/agent-protocol';
import { BufferStorageError } from '../buffer/errors.js';
import type { JsonValue, NewLogEntry } from '../buffer/entry.js';
import { MAX_MESSAGE_CODE_POINTS, splitCodePoints } from './text.js';
import { FACILITIES, SEVERITIES } from './syslog-parse.js';
import {
  SourceConfigError,
  type LogSourceRunner,
  type SourceDeps,
  type SourceLogger,
  type SourceRunnerStatus,
  type SourceSink,
  silentLogger,
  sinkOf,
} from './types.js';

export interface JournalPosition {
  [k: string]: JsonValue;
  cursor: string;
  /** __REALTIME_TIMESTAMP of the cursor's entry (microseconds, as a decimal string). */
  realtime_usec: string;
}

const MATCH = /^(?:[A-Z_][A-Z0-9_]*=.*|\+)$/;

/** `filter` for journald: journal matches separated by whitespace ("_SYSTEMD_UNIT=ssh.service _TRANSPORT=journal", "+" for OR). */
export function parseJournalMatches(filter: string | null | undefined): string[] {
  if (filter === undefined || filter === null || filter.trim() === '') return [];
  const parts = filter.trim().split(/\s+/);
  for (const p of parts) {
    if (!MATCH.test(p)) throw new SourceConfigError(`journald filter: ${JSON.stringify(p)} is not a journal match (FIELD=value with an upper-case field name, or "+")`);
  }
  return parts;
}

function str(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((b) => typeof b === 'number')) return Buffer.from(v as number[]).toString('utf8');
  return null;
}

/** The fields mapJournalEntry reads: journalctl prints only these (and its own __ fields), not a coredump's bytes (H27). */
export const JOURNAL_FIELDS: readonly string[] = ['MESSAGE', 'PRIORITY', 'SYSLOG_FACILITY', 'SYSLOG_IDENTIFIER', 'SYSLOG_PID', '_COMM', '_PID', '_SYSTEMD_UNIT', '_HOSTNAME', '_TRANSPORT', '_BOOT_ID'];

/** One journalctl JSON line longer than this is not read (H27): 64 MiB of text. */
export const MAX_JOURNAL_LINE_CHARS = 64 * 1024 * 1024;

/** Maps one `journalctl --output=json` object to entry fields (without source/labels). */
export function mapJournalEntry(o: Record<string, unknown>, nowMs: number): Omit<NewLogEntry, 'source'> {
  const int = (v: unknown): number => {
    const t = str(v);
    return t !== null && /^\d{1,3}$/.test(t) ? Number(t) : -1;
  };
  const pri = int(o.PRIORITY);
  const fac = int(o.SYSLOG_FACILITY);
  const rt = str(o.__REALTIME_TIMESTAMP);
  const rtMs = rt !== null && /^\d{1,19}$/.test(rt) ? Math.floor(Number(rt) / 1000) : NaN;
  // A timestamp a Date cannot hold (more than 8.64e15 ms) made toISOString throw: the read time then.
  const ms = Number.isFinite(rtMs) && Math.abs(rtMs) <= 8.64e15 ? rtMs : nowMs;
  const metadata: Record<string, unknown> = {};
  const meta: [string, string][] = [['_SYSTEMD_UNIT', 'unit'], ['_HOSTNAME', 'hostname'], ['_TRANSPORT', 'transport'], ['_BOOT_ID', 'boot_id'], ['_COMM', 'comm']];
  for (const [field, name] of meta) {
    const v = str(o[field]);
    if (v !== null) metadata[name] = v;
  }
  let message = str(o.MESSAGE) ?? '';
  if (message.endsWith('\n')) message = message.slice(0, -1);
  return {
    ts: new Date(ms).toISOString(),
    severity: pri >= 0 && pri <= 7 ? SEVERITIES[pri]! : 'info',
    facility: fac >= 0 && fac < FACILITIES.length ? FACILITIES[fac]! : null,
    app_name: str(o.SYSLOG_IDENTIFIER) ?? str(o._COMM),
    process_id: str(o._PID) ?? str(o.SYSLOG_PID),
    message,
    metadata: Object.keys(metadata).length > 0 ? metadata : null,
  };
}

/** Where systemd-journald keeps the system journal: volatile, then persistent. */
export const JOURNAL_DIRS: readonly string[] = ['/run/log/journal', '/var/log/journal'];

/** Whether any of `dirs` (or a machine-id folder in one) holds a journal file. */
export function hasJournalFiles(dirs: readonly string[]): boolean {
  const isJournal = (name: string) => name.endsWith('.journal') || name.endsWith('.journal~');
  for (const dir of dirs) {
    let names;
    try {
      names = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const d of names) {
      if (d.isFile() && isJournal(d.name)) return true;
      if (!d.isDirectory()) continue;
      try {
        if (readdirSync(join(dir, d.name)).some(isJournal)) return true;
      } catch {
        // unreadable: journalctl will say so
      }
    }
  }
  return false;
}

/** Milliseconds of a realtime_usec a Date can hold, else null. */
function usecMs(usec: string): number | null {
  if (!/^\d{1,19}$/.test(usec)) return null;
  const ms = Number(BigInt(usec) / 1000n);
  return ms <= 8.64e15 ? ms : null;
}

/** A stored realtime_usec as a date, or in words when no date can hold it (a position stored by an older agent). */
function usecIso(usec: string): string {
  const ms = usecMs(usec);
  return ms !== null ? new Date(ms).toISOString() : `a time no date can hold (${JSON.stringify(usec.slice(0, 40))}): from now on`;
}

function isJournalPosition(v: JsonValue | null): v is JournalPosition {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof v.cursor === 'string' && typeof v.realtime_usec === 'string';
}

const NO_JOURNAL = (dirs: readonly string[]) =>
  `no journal on this machine: ${dirs.join(' and ')} hold no journal file (is systemd-journald running? in a container, mount the host's /var/log/journal read-only); reading none until one appears`;

/** A journalctl that ran at least this long restarts after the minimum backoff again (as the custom source). */
export const STABLE_RUN_MS = 10_000;

export class JournaldSource implements LogSourceRunner {
  readonly kind = 'journald' as const;
  /** Buffer position key: "journald", or "journald:<filter>" when filtered. Entries carry source "journald". */
  readonly key: string;
  private readonly matches: string[];
  private readonly sink: SourceSink;
  private readonly log: SourceLogger;
  private readonly clock: () => number;
  private readonly labels: Record<string, string> | null;
  private readonly command: string;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  /** The journal's folders, checked when the command is journalctl itself (null: not checked). */
  private readonly journalDirs: readonly string[] | null;
  private readonly journalRecheckMs: number;
  private readonly maxLineChars: number;
  private journalTimer: NodeJS.Timeout | null = null;
  /** No journal was said once in the log (status says it until one appears). */
  private noJournalTold = false;
  private restartingForJournal = false;

  private child: ChildProcess | null = null;
  private started = false;
  private stopped = false;
  private paused = false;
  private timer: NodeJS.Timeout | null = null;
  private retryMs = 0;
  private restartMs = 0;
  private pending: { entries: NewLogEntry[]; pos: JournalPosition } | null = null;
  private stderr = '';
  /** Entries at or before this realtime are skipped (after a cursor fallback). */
  private skipUntilUsec: bigint | null = null;
  private useCursor = true;
  private committed: JournalPosition | null = null;
  private lastError: string | null = null;
  private state: SourceRunnerStatus['state'] = 'idle';
  private linesRead = 0;
  private bytesRead = 0;
  private split = 0;
  /** The part of a line after the last newline, in pieces (joined once its newline comes). */
  private partialParts: string[] = [];
  private partialChars = 0;
  /** An entry over MAX_JOURNAL_LINE_CHARS is being dropped up to its newline. */
  private skippingLine = false;
  /** Entries dropped for their size (status `entries_too_large`). */
  private tooLarge = 0;
  private tooLargeToldAt = 0;
  /** journalctl takes --output-fields (systemd 236 and later). */
  private outputFields = true;
  /** Times a stored cursor was refused and the source fell back to the cursor's time. */
  cursorFallbacks = 0;
  /** Lines of journalctl's output that are not a JSON object (status `lines_malformed`), not entries, not counted as read. */
  private malformed = 0;
  private malformedToldAt = 0;
  /** Restart backoff of journalctl (deps.restartMinMs / restartMaxMs, as docker and custom). */
  private readonly restartMinMs: number;
  private readonly restartMaxMs: number;
  /** When the running journalctl was started (clock): a run of STABLE_RUN_MS resets the restart backoff. */
  private startedAt = 0;

  constructor(config: LogSourceConfig, deps: SourceDeps) {
    this.matches = parseJournalMatches(config.filter);
    const sink = sinkOf(deps);
    if (sink === null) throw new SourceConfigError('journald source needs deps.sink or deps.buffer');
    this.sink = sink;
    this.key = this.matches.length > 0 ? `journald:${this.matches.join(' ')}` : 'journald';
    this.log = deps.logger ?? silentLogger;
    this.clock = deps.clock ?? Date.now;
    this.labels = config.labels && Object.keys(config.labels).length > 0 ? { ...config.labels } : null;
    this.command = typeof config.journalctl === 'string' ? config.journalctl : 'journalctl';
    this.journalDirs = this.command === 'journalctl' ? (deps.journalDirs ?? JOURNAL_DIRS) : null;
    this.journalRecheckMs = deps.journalRecheckMs ?? 30_000;
    this.maxLineChars = deps.journalMaxLineChars ?? MAX_JOURNAL_LINE_CHARS;
    this.retryMinMs = deps.retryMinMs ?? 250;
    this.retryMaxMs = deps.retryMaxMs ?? 5000;
    this.restartMinMs = deps.restartMinMs ?? 1000;
    this.restartMaxMs = deps.restartMaxMs ?? 30_000;
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.spawnJournal();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.state = 'stopped';
    if (this.timer) clearTimeout(this.timer);
    if (this.journalTimer) clearTimeout(this.journalTimer);
    const c = this.child;
    this.child = null;
    if (c !== null && c.exitCode === null && c.signalCode === null) {
      await new Promise<void>((resolve) => {
        c.once('exit', () => resolve());
        c.kill('SIGTERM');
        setTimeout(() => {
          c.kill('SIGKILL');
          resolve();
        }, 2000).unref();
      });
    }
  }

  // `paused` is shown only over `reading`: a source in error (journalctl failed, its restart due),
  // idle (its restart due) or retrying (the buffer) stays so, and resume() does not make such a
  // source `reading` — status said `reading` with no journalctl running after an error.
  pause(): void {
    this.paused = true;
    if (this.state === 'reading') this.state = 'paused';
    this.child?.stdout?.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.state === 'paused') this.state = 'reading';
    this.retryMs = 0;
    this.flushPending();
  }

  status(): SourceRunnerStatus & { cursor_fallbacks: number; entries_too_large: number; lines_malformed: number } {
    return {
      kind: 'journald', key: this.key, path: null, name: this.matches.join(' ') || null, state: this.state,
      position: this.committed, last_error: this.lastError,
      lines_read: this.linesRead, bytes_read: this.bytesRead, lines_filtered: 0, lines_lost: 0, bytes_lost: 0,
      lost_estimated: false, truncations: 0, rotations: 0, lines_split: this.split, cursor_fallbacks: this.cursorFallbacks, entries_too_large: this.tooLarge, lines_malformed: this.malformed,
    };
  }

  private args(): string[] {
    const a = ['--follow', '--output=json', '--no-pager', '--all'];
    if (this.outputFields) a.push(`--output-fields=${JOURNAL_FIELDS.join(',')}`);
    // Entries held for the buffer (storage failing) are committed once it stores again: a
    // journalctl restarted meanwhile starts after them, or they were read (and stored) twice.
    const stored = this.pending?.pos ?? this.committed ?? this.storedPosition();
    if (stored !== null && this.useCursor) a.push(`--after-cursor=${stored.cursor}`);
    else if (stored !== null && usecMs(stored.realtime_usec) !== null) {
      a.push(`--since=@${(BigInt(stored.realtime_usec) / 1_000_000n).toString()}`);
      this.skipUntilUsec = BigInt(stored.realtime_usec);
    } else a.push('--lines=0'); // never seen: from now on (D13)
    return [...a, ...this.matches];
  }

  private storedPosition(): JournalPosition | null {
    const p = this.sink.position(this.key);
    return isJournalPosition(p) ? p : null;
  }

  private spawnJournal(): void {
    if (this.stopped) return;
    this.startedAt = 0; // set once it runs: a spawn that fails at once is no run that lasted
    this.stderr = '';
    this.partialParts = [];
    this.partialChars = 0;
    this.skippingLine = false;
    const args = this.args();
    const usedCursor = args.some((a) => a.startsWith('--after-cursor='));
    let child: ChildProcess;
    try {
      child = spawn(this.command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      this.onExit(null, (err as Error).message, usedCursor);
      return;
    }
    this.child = child;
    this.startedAt = this.clock();
    this.state = this.paused ? 'paused' : 'reading';
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => this.onData(chunk));
    child.stderr!.on('data', (s: string) => {
      if (this.stderr.length < 4096) this.stderr += s;
    });
    let spawnError: string | null = null;
    child.on('error', (err: NodeJS.ErrnoException) => {
      spawnError = err.code === 'ENOENT' ? `${this.command} not found on PATH (is systemd-journald installed?)` : err.message;
    });
    child.on('close', (code, signal) => {
      if (this.child === child) this.child = null;
      this.onExit(code, spawnError, usedCursor, signal);
    });
    if (this.paused) child.stdout!.pause();
    // Once it runs: a journalctl that is not there says so itself.
    child.once('spawn', () => this.checkJournal(child));
  }

  /**
   * journalctl --follow with no journal file waits without a word (a container, a system
   * without systemd-journald): the source looked fine and read nothing (DECISIONS D22). Said
   * in status and once in the log; looked at again every journalRecheckMs, and journalctl is
   * started again once a journal appears (it would not notice the folder created later).
   */
  private checkJournal(child: ChildProcess): void {
    if (this.journalDirs === null || this.stopped) return;
    if (hasJournalFiles(this.journalDirs)) {
      if (this.lastError === NO_JOURNAL(this.journalDirs)) this.lastError = null;
      return;
    }
    this.lastError = NO_JOURNAL(this.journalDirs);
    if (!this.noJournalTold) {
      this.noJournalTold = true;
      this.log.warn({ source: this.key }, `journald source: ${this.lastError}`);
    }
    this.journalTimer = setTimeout(() => {
      this.journalTimer = null;
      if (this.stopped || this.child !== child) return;
      if (!hasJournalFiles(this.journalDirs ?? [])) {
        this.checkJournal(child);
        return;
      }
      this.log.info({ source: this.key }, 'journald source: a journal appeared; reading it');
      this.restartingForJournal = true;
      child.kill('SIGTERM');
    }, this.journalRecheckMs);
    this.journalTimer.unref?.();
  }

  private onExit(code: number | null, spawnError: string | null, usedCursor: boolean, signal: NodeJS.Signals | null = null): void {
    if (this.stopped) return;
    if (this.restartingForJournal) {
      this.restartingForJournal = false;
      this.spawnJournal();
      return;
    }
    if (spawnError === null && (code === 0 || signal === 'SIGINT' || signal === 'SIGTERM' || signal === 'SIGHUP')) {
      // Ctrl-C in a terminal and a service stop signal the whole process group (cgroup):
      // journalctl then ends (it exits 0 on SIGINT/SIGTERM; `--follow` never ends with 0
      // by itself) a moment before the agent's own stop() reaches this source. That is a
      // clean stop, not an error: restart quietly, and say so only if the agent is in fact
      // still running when the restart is due.
      this.state = 'idle';
      this.timer = setTimeout(() => {
        if (this.stopped) return;
        this.log.warn({ source: this.key, signal }, `journald source: journalctl was ended by ${signal ?? 'a signal (exit 0)'} from outside the agent; restarted`);
        this.spawnJournal();
      }, Math.max(this.retryMinMs, 1000));
      this.timer.unref?.();
      return;
    }
    const stderr = this.stderr.trim();
    if (spawnError === null && this.outputFields && code !== 0 && /output-fields/.test(stderr)) {
      // journalctl before systemd 236 has no --output-fields: every field is read then.
      this.outputFields = false;
      this.log.info({ source: this.key }, 'journald: this journalctl has no --output-fields; reading every field of each entry');
      this.spawnJournal();
      return;
    }
    if (spawnError === null && usedCursor && code !== 0 && /cursor/i.test(stderr)) {
      this.cursorFallbacks++;
      this.useCursor = false;
      const p = this.pending?.pos ?? this.committed ?? this.storedPosition();
      this.lastError = `stored journal cursor refused (${stderr.split('\n')[0]}); fell back to entries after ${p ? usecIso(p.realtime_usec) : 'now'}`;
      this.log.warn({ source: this.key, cursor_fallbacks: this.cursorFallbacks }, `journald: ${this.lastError}`);
      this.spawnJournal();
      return;
    }
    this.lastError = spawnError ?? `journalctl exited with ${code ?? signal ?? 'a signal'}${stderr ? `: ${stderr.split('\n')[0]}` : ''}`;
    // A journalctl that ran for a while restarts after the first delay again: the backoff was
    // never reset, so on a long-running agent each exit ended up costing a 30 s gap.
    if (this.startedAt !== 0 && this.clock() - this.startedAt >= STABLE_RUN_MS) this.restartMs = 0;
    this.restartMs = Math.min(this.restartMaxMs, this.restartMs === 0 ? this.restartMinMs : this.restartMs * 2);
    this.log.error({ source: this.key, code, signal, retry_ms: this.restartMs }, `journald source: ${this.lastError}; restarting in ${this.restartMs} ms`);
    this.state = 'error';
    this.timer = setTimeout(() => this.spawnJournal(), this.restartMs);
    this.timer.unref?.();
  }

  /** Keeps `piece` of a line whose newline has not come; past MAX_JOURNAL_LINE_CHARS the line is dropped (H27). */
  private holdPartial(piece: string): void {
    if (piece === '' || this.skippingLine) return;
    this.partialParts.push(piece);
    this.partialChars += piece.length;
    if (this.partialChars <= this.maxLineChars) return;
    this.partialParts = [];
    this.partialChars = 0;
    this.skippingLine = true;
    this.tooLarge++;
    const now = Date.now();
    if (now - this.tooLargeToldAt < 60_000) return;
    this.tooLargeToldAt = now;
    this.log.warn(
      { source: this.key, max_chars: this.maxLineChars, entries_too_large: this.tooLarge },
      `journald: an entry of more than ${this.maxLineChars} characters of JSON was not read (it stays in the journal: journalctl shows it); said at most once a minute`,
    );
  }

  /**
   * A line of journalctl's output that is not a JSON object: counted (status `lines_malformed`),
   * not an entry nor a line read, and logged at most once a minute with the count and the
   * line's first 200 characters.
   */
  private malformedLine(line: string, what: string): void {
    this.malformed++;
    const now = Date.now();
    if (this.malformedToldAt !== 0 && now - this.malformedToldAt < 60_000) return;
    this.malformedToldAt = now;
    this.log.warn(
      { source: this.key, lines_malformed: this.malformed, excerpt: line.slice(0, 200), chars: line.length },
      `journald: a line of journalctl's output is ${what}, not a JSON object: skipped (said at most once a minute)`,
    );
  }

  private onData(chunk: string): void {
    // Only the new chunk is looked at for a newline: an entry of many MB arrives in thousands
    // of chunks, and scanning what was held each time was quadratic (40 MB: 51 s, H27).
    const chunkNl = chunk.lastIndexOf('\n');
    if (chunkNl < 0) {
      this.holdPartial(chunk);
      return;
    }
    const held = this.partialParts;
    const skipping = this.skippingLine;
    this.partialParts = [];
    this.partialChars = 0;
    this.skippingLine = false;
    let text: string;
    let lastNl: number;
    if (skipping) {
      // The rest of an entry too large to read: dropped up to its newline.
      text = chunk.slice(chunk.indexOf('\n') + 1);
      lastNl = text.lastIndexOf('\n');
    } else {
      text = held.length === 0 ? chunk : held.join('') + chunk;
      lastNl = text.length - (chunk.length - chunkNl);
    }
    this.holdPartial(text.slice(lastNl + 1));
    if (lastNl < 0) return;
    const nowMs = this.clock();
    const entries: NewLogEntry[] = [];
    let pos: JournalPosition | null = null;
    let lines = 0;
    for (const line of text.slice(0, lastNl).split('\n')) {
      if (line.trim() === '') continue;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        v = undefined;
      }
      if (typeof v !== 'object' || v === null || Array.isArray(v)) {
        // Not an entry: `null` (used unchecked, it ended the agent, and again at each start: the
        // same line comes again after the stored cursor), garbage, a line cut short.
        this.malformedLine(line, v === undefined ? 'not JSON' : v === null ? 'null' : Array.isArray(v) ? 'a list' : `a ${typeof v}`);
        continue;
      }
      lines++;
      const o = v as Record<string, unknown>;
      const cursor = str(o.__CURSOR);
      const rt = str(o.__REALTIME_TIMESTAMP) ?? '0';
      if (this.skipUntilUsec !== null && /^\d+$/.test(rt) && BigInt(rt) <= this.skipUntilUsec) continue;
      const m = mapJournalEntry(o, nowMs);
      // The time of the entry as read (a __REALTIME_TIMESTAMP no date can hold is the read time
      // there): a stored one beyond any date made the fallback of a refused cursor throw.
      if (cursor !== null) pos = { cursor, realtime_usec: usecMs(rt) !== null ? rt : (BigInt(Date.parse(m.ts)) * 1000n).toString() };
      const pieces = m.message.length > MAX_MESSAGE_CODE_POINTS ? splitCodePoints(m.message, MAX_MESSAGE_CODE_POINTS) : [m.message];
      if (pieces.length > 1) this.split++;
      pieces.forEach((piece, k) => {
        let metadata = m.metadata ?? null;
        if (this.labels !== null || pieces.length > 1) {
          metadata = { ...(metadata ?? {}) };
          if (this.labels !== null) metadata.labels = this.labels;
          if (pieces.length > 1) metadata.split = { part: k + 1, more: k < pieces.length - 1 };
        }
        entries.push({ ...m, message: piece, source: 'journald', metadata });
      });
    }
    this.linesRead += lines;
    this.bytesRead += Buffer.byteLength(text.slice(0, lastNl + 1));
    if (pos === null) return;
    this.pending = this.pending === null ? { entries, pos } : { entries: [...this.pending.entries, ...entries], pos };
    this.flushPending();
  }

  /** Commits held entries; on a storage error stops reading the pipe and retries with backoff. */
  private flushPending(): void {
    if (this.pending === null || this.stopped) {
      if (!this.paused) this.child?.stdout?.resume();
      return;
    }
    if (this.paused) return;
    try {
      this.sink.append(this.pending.entries, { source: this.key, position: this.pending.pos });
      this.committed = this.pending.pos;
      this.pending = null;
      this.retryMs = 0;
      this.skipUntilUsec = null;
      this.useCursor = true;
      if (this.state === 'retrying') this.state = 'reading';
      if (this.lastError !== null && !this.lastError.startsWith('stored journal cursor')) this.lastError = null;
      this.child?.stdout?.resume();
    } catch (err) {
      if (!(err instanceof BufferStorageError)) throw err;
      this.child?.stdout?.pause();
      this.lastError = err.message;
      this.state = 'retrying';
      this.retryMs = Math.min(this.retryMaxMs, this.retryMs === 0 ? this.retryMinMs : this.retryMs * 2);
      this.timer = setTimeout(() => this.flushPending(), this.retryMs);
      this.timer.unref?.();
    }
  }
}

export function createJournaldSource(config: LogSourceConfig, deps: SourceDeps): LogSourceRunner {
  return new JournaldSource(config, deps);
}
