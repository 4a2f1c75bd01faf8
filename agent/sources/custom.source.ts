// The `custom` log source (DECISIONS.md D20–D21).
//
// Three forms, chosen by the config fields:
//   {kind: "custom", path: "<name>", command: ["/usr/bin/foo", "--bar"]}
//       runs the command (argument array, never a shell); each stdout line is an entry,
//       stderr lines are logged; the command is restarted with backoff when it exits.
//   {kind: "custom", path: "<name>", socket: "/run/cortex/app.sock"}
//       listens on a unix stream socket; each line a client writes is an entry.
//   {kind: "custom", path: "<name>"} (neither field)
//       the in-process source fed by the library call agent.ingest(): nothing to run.
// Entries carry `source: "custom:<name>"`; lines are parsed like file lines (D2–D4),
// `filter` and `labels` as D10, long lines split as D8. Neither form can resume: a
// command's output or a client's writes that were not committed before the agent stopped
// are gone; the stored position ({run, lines} / {connections, lines}) is informational.
// Back-pressure: while the buffer cannot store, the command's stdout (it then blocks on
// a full pipe) or the socket connections are paused; nothing read is dropped.

import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { LogSourceConfig } from '@cortex/agent-protocol';
import type { JsonValue, NewLogEntry } from '../buffer/entry.js';
import { compileFilter, MAX_MESSAGE_CODE_POINTS, splitCodePoints } from './text.js';
import { parseLine } from './syslog-parse.js';
import { lineEntry } from './entry.js';
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

/** A command that ran at least this long restarts after the minimum backoff again. */
const STABLE_RUN_MS = 10_000;
/** A line without its newline commits its whole 65536-code-point parts beyond this many UTF-16 units. */
const MAX_PENDING_UNITS = 4 * MAX_MESSAGE_CODE_POINTS;
const NAME_RE = /^[^\s\u0000-\u001f\u007f]{1,200}$/;

export interface CustomConfig {
  /** `path`: the name in `custom:<name>`. */
  name: string | null;
  command: string[] | null;
  socket: string | null;
  /** File mode of the socket (default 0o660). */
  socketMode: number;
}

/** Validates the custom config fields. Throws SourceConfigError. */
export function parseCustomConfig(config: LogSourceConfig): CustomConfig {
  const path = config.path;
  const name = typeof path === 'string' && path !== '' ? path : null;
  if (name !== null && !NAME_RE.test(name)) throw new SourceConfigError(`custom source name (path) ${JSON.stringify(path)} must be 1–200 characters without spaces or control characters`);
  let command: string[] | null = null;
  if (config.command !== undefined && config.command !== null) {
    const c = config.command;
    if (!Array.isArray(c) || c.length === 0 || !c.every((a) => typeof a === 'string' && !a.includes('\u0000') && a.length <= 4096) || c[0] === '') {
      throw new SourceConfigError('custom source command must be a non-empty array of strings (program, then its arguments; no shell)');
    }
    command = [...(c as string[])];
  }
  let socket: string | null = null;
  if (config.socket !== undefined && config.socket !== null) {
    if (typeof config.socket !== 'string' || !config.socket.startsWith('/')) throw new SourceConfigError(`custom source socket must be an absolute path: ${JSON.stringify(config.socket)}`);
    socket = config.socket;
  }
  if (command !== null && socket !== null) throw new SourceConfigError('custom source: give either `command` or `socket`, not both');
  if ((command !== null || socket !== null) && name === null) throw new SourceConfigError('custom source needs `path` (the name in custom:<name>)');
  let socketMode = 0o660;
  if (config.socket_mode !== undefined) {
    const m = config.socket_mode;
    if (typeof m !== 'string' || !/^0?[0-7]{3}$/.test(m)) throw new SourceConfigError(`custom source socket_mode must be an octal string such as "0660": ${JSON.stringify(m)}`);
    socketMode = parseInt(m, 8);
  }
  return { name, command, socket, socketMode };
}

// ---- lines -> entries ---------------------------------------------------------------

interface LineItem {
  text: string;
  split: { part: number; more: boolean } | null;
}

/** Splits a byte stream into lines (LF, a CR before it removed; invalid UTF-8 replaced); long lines as D8. */
class LineSplitter {
  private readonly dec = new StringDecoder('utf8');
  private partial = '';
  private parts = 0;

  push(chunk: Buffer, out: LineItem[]): number {
    const text = this.partial + this.dec.write(chunk);
    let p = 0;
    let lines = 0;
    for (;;) {
      const nl = text.indexOf('\n', p);
      if (nl < 0) break;
      this.line(text.slice(p, nl), out);
      lines++;
      p = nl + 1;
    }
    this.partial = text.slice(p);
    if (this.partial.length > MAX_PENDING_UNITS) {
      const pieces = splitCodePoints(this.partial, MAX_MESSAGE_CODE_POINTS);
      this.partial = pieces.pop() ?? '';
      for (const piece of pieces) out.push({ text: piece, split: { part: ++this.parts, more: true } });
    }
    return lines;
  }

  /** The input ended: a partial last line is a line. */
  end(out: LineItem[]): number {
    const rest = this.partial + this.dec.end();
    this.partial = '';
    if (rest === '' && this.parts === 0) return 0;
    this.line(rest, out);
    return 1;
  }

  private line(raw: string, out: LineItem[]): void {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (this.parts === 0 && text.length <= MAX_MESSAGE_CODE_POINTS) {
      if (text !== '') out.push({ text, split: null });
      return;
    }
    const pieces = text === '' ? [] : splitCodePoints(text, MAX_MESSAGE_CODE_POINTS);
    if (this.parts === 0 && pieces.length === 1) {
      out.push({ text, split: null });
      return;
    }
    pieces.forEach((piece, k) => out.push({ text: piece, split: { part: ++this.parts, more: k < pieces.length - 1 } }));
    this.parts = 0;
  }
}

interface Common {
  key: `custom:${string}`;
  sink: SourceSink;
  log: SourceLogger;
  clock: () => number;
  filter: RegExp | null;
  labels: Record<string, string> | null;
  retryMinMs: number;
  retryMaxMs: number;
  restartMinMs: number;
  restartMaxMs: number;
}

function common(config: LogSourceConfig, name: string, deps: SourceDeps): Common {
  const sink = sinkOf(deps);
  if (sink === null) throw new SourceConfigError('custom source needs deps.sink or deps.buffer');
  return {
    key: `custom:${name}`,
    sink,
    log: deps.logger ?? silentLogger,
    clock: deps.clock ?? Date.now,
    filter: compileFilter(config.filter),
    labels: config.labels && Object.keys(config.labels).length > 0 ? { ...config.labels } : null,
    retryMinMs: deps.retryMinMs ?? 250,
    retryMaxMs: deps.retryMaxMs ?? 5000,
    restartMinMs: deps.restartMinMs ?? 1000,
    restartMaxMs: deps.restartMaxMs ?? 30_000,
  };
}

/**
 * Shared by both forms: turns lines into entries, commits them with the informational
 * position, holds them and pauses the input while the buffer cannot store.
 */
abstract class CustomBase implements LogSourceRunner {
  readonly kind = 'custom' as const;
  readonly key: `custom:${string}`;
  protected readonly c: Common;
  protected stopped = false;
  protected paused = false;
  protected started = false;
  protected state: SourceRunnerStatus['state'] = 'idle';
  protected lastError: string | null = null;
  protected committed: JsonValue | null = null;
  protected linesRead = 0;
  protected bytesRead = 0;
  protected linesFiltered = 0;
  protected linesSplit = 0;
  protected linesCommitted = 0;
  private held: NewLogEntry[] = [];
  private heldLines = 0;
  private storageFailing = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryMs = 0;

  constructor(c: Common) {
    this.c = c;
    this.key = c.key;
  }

  abstract start(): void;
  abstract stop(): Promise<void>;
  /** Stops (true) or restarts (false) reading the input. */
  protected abstract inputPaused(paused: boolean): void;
  protected abstract position(lines: number): JsonValue;
  protected abstract extraStatus(): Record<string, JsonValue>;

  pause(): void {
    this.paused = true;
    if (this.state === 'reading' || this.state === 'waiting') this.state = 'paused';
    this.inputPaused(true);
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.state === 'paused') this.state = 'reading';
    this.retryMs = 0;
    this.flush();
    if (!this.storageFailing) this.inputPaused(false);
  }

  status(): SourceRunnerStatus & Record<string, JsonValue> {
    return {
      kind: 'custom', key: this.key, path: null, name: this.key.slice('custom:'.length), state: this.state,
      position: this.committed, last_error: this.lastError,
      lines_read: this.linesRead, bytes_read: this.bytesRead, lines_filtered: this.linesFiltered,
      lines_lost: 0, bytes_lost: 0, lost_estimated: false, truncations: 0, rotations: 0, lines_split: this.linesSplit,
      resumable: false,
      ...this.extraStatus(),
    };
  }

  /** Entries for the items of one read, then one commit. */
  protected take(items: LineItem[], lines: number, bytes: number): void {
    this.linesRead += lines;
    this.bytesRead += bytes;
    const nowMs = this.c.clock();
    const nowIso = new Date(nowMs).toISOString();
    for (const it of items) {
      if (it.split !== null && it.split.part === 1) this.linesSplit++;
      if (this.c.filter !== null && !this.c.filter.test(it.text)) {
        this.linesFiltered++;
        continue;
      }
      this.held.push(this.entry(it, nowMs, nowIso));
    }
    this.heldLines += lines;
    this.flush();
  }

  private entry(it: LineItem, nowMs: number, nowIso: string): NewLogEntry {
    const p = it.split === null ? parseLine(it.text, nowMs, nowIso) : null;
    return lineEntry(it.text, p, this.key, this.c.labels, it.split, nowIso);
  }

  /** Commits what is held; on failure pauses the input and retries with backoff. */
  protected flush(): void {
    if (this.stopped || (this.held.length === 0 && this.heldLines === 0)) return;
    if (this.paused) {
      this.inputPaused(true);
      return;
    }
    const lines = this.linesCommitted + this.heldLines;
    const position = this.position(lines);
    try {
      this.c.sink.append(this.held, { source: this.key, position });
      this.held = [];
      this.heldLines = 0;
      this.linesCommitted = lines;
      this.committed = position;
      this.retryMs = 0;
      if (this.storageFailing) {
        this.storageFailing = false;
        this.lastError = null;
        if (this.state === 'retrying') this.state = 'reading';
        this.inputPaused(false);
      }
    } catch (err) {
      this.storageFailing = true;
      this.inputPaused(true);
      this.lastError = `buffer storage: ${(err as Error).message}`;
      this.state = 'retrying';
      this.retryMs = Math.min(this.c.retryMaxMs, this.retryMs === 0 ? this.c.retryMinMs : this.retryMs * 2);
      if (this.retryTimer) clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => this.flush(), this.retryMs);
      this.retryTimer.unref?.();
    }
  }

  protected get storageBlocked(): boolean {
    return this.storageFailing || this.paused;
  }

  protected clearRetry(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }
}

// ---- command ---------------------------------------------------------------------------------

export class CustomCommandSource extends CustomBase {
  readonly command: string[];
  private child: ChildProcess | null = null;
  private timer: NodeJS.Timeout | null = null;
  private restartMs = 0;
  private run = 0;
  private restarts = 0;
  private pid: number | null = null;
  private lastStderr: string[] = [];
  /** The last end of the command logged (logExit), when, and how often it repeated since. */
  private loggedExit: string | null = null;
  private loggedExitAt = 0;
  private repeatedExits = 0;
  /** stderr lines logged in the minute from stderrWindowAt, and those not (stderrLine). */
  private stderrWindowAt = 0;
  private stderrLogged = 0;
  private stderrSuppressed = 0;
  private lastExit: string | null = null;

  constructor(config: LogSourceConfig, cfg: CustomConfig, deps: SourceDeps) {
    super(common(config, cfg.name!, deps));
    this.command = cfg.command!;
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.spawnCommand();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.state = 'stopped';
    if (this.timer) clearTimeout(this.timer);
    this.clearRetry();
    const c = this.child;
    this.child = null;
    if (c === null) return;
    if (c.exitCode !== null || c.signalCode !== null) {
      // The command ended, but what it started in the background (`cmd &`, a daemon that did
      // not leave the group) still holds its stdout: its output is not read any more, and left
      // alone it ran on after the agent, holding the pipe. It is ended as a running command is.
      signal(c, 'SIGTERM');
      const kill = setTimeout(() => signal(c, 'SIGKILL'), 2000);
      kill.unref?.();
      c.stdout?.destroy();
      c.stderr?.destroy();
      return;
    }
    await new Promise<void>((resolve) => {
      const kill = setTimeout(() => {
        signal(c, 'SIGKILL');
        resolve();
      }, 2000);
      kill.unref?.();
      c.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      signal(c, 'SIGTERM');
    });
  }

  protected inputPaused(paused: boolean): void {
    if (paused) this.child?.stdout?.pause();
    else if (!this.storageBlocked) this.child?.stdout?.resume();
  }

  protected position(lines: number): JsonValue {
    return { run: this.run, pid: this.pid, lines };
  }

  protected extraStatus(): Record<string, JsonValue> {
    return { command: this.command, pid: this.child !== null ? this.pid : null, runs: this.run, restarts: this.restarts, last_exit: this.lastExit, last_stderr: this.lastStderr.at(-1) ?? null };
  }

  private spawnCommand(): void {
    if (this.stopped) return;
    this.run++;
    this.lastStderr = [];
    const startedAt = Date.now();
    const out = new LineSplitter();
    const errLines = new LineSplitter();
    let child: ChildProcess;
    try {
      // detached: its own process group, so stop() ends whatever it started too.
      child = spawn(this.command[0]!, this.command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    } catch (err) {
      this.exited(startedAt, null, null, (err as Error).message);
      return;
    }
    this.child = child;
    this.pid = child.pid ?? null;
    this.state = this.paused ? 'paused' : 'reading';
    // Not at each restart of a command that keeps ending: its exits say it (logExit).
    if (this.loggedExit === null) this.c.log.info({ source: this.key, pid: this.pid, run: this.run }, `custom: started ${this.command[0]}`);
    child.stdout!.on('data', (b: Buffer) => {
      const items: LineItem[] = [];
      const lines = out.push(b, items);
      this.take(items, lines, b.length);
    });
    // stdout closed while the command runs on (`exec >&-`, a daemon that closed its
    // descriptors): nothing more comes from it until it ends, and status said `reading`.
    let closedTimer: NodeJS.Timeout | null = null;
    child.stdout!.on('end', () => {
      closedTimer = setTimeout(() => {
        if (this.child !== child || this.stopped || child.exitCode !== null || child.signalCode !== null) return;
        this.lastError = `the command closed its stdout but keeps running (pid ${child.pid}): nothing more is read from it until it ends (it is restarted then); check that it writes its log lines to stdout`;
        this.c.log.warn({ source: this.key, pid: child.pid }, `custom: ${this.lastError}`);
      }, STDOUT_CLOSED_GRACE_MS);
      closedTimer.unref?.();
    });
    child.stderr!.on('data', (b: Buffer) => {
      const items: LineItem[] = [];
      errLines.push(b, items);
      for (const it of items) this.stderrLine(it.text);
    });
    let spawnError: string | null = null;
    child.on('error', (err: NodeJS.ErrnoException) => {
      spawnError = err.code === 'ENOENT' ? `command not found: ${this.command[0]}` : err.code === 'EACCES' ? `command not executable: ${this.command[0]}` : err.message;
    });
    child.on('close', (code, sig) => {
      if (closedTimer !== null) clearTimeout(closedTimer);
      if (this.child === child) this.child = null;
      if (this.stopped) return;
      const items: LineItem[] = [];
      const lines = out.end(items);
      if (lines > 0 || items.length > 0) this.take(items, lines, 0);
      const errItems: LineItem[] = [];
      errLines.end(errItems);
      for (const it of errItems) this.stderrLine(it.text);
      this.exited(startedAt, code, sig, spawnError);
    });
    if (this.storageBlocked) child.stdout!.pause();
  }

  /**
   * A line the command wrote to stderr: kept for the exit's error, and logged — at most
   * STDERR_LOG_PER_MINUTE a minute, then one line saying how many were not (a command that
   * chatters on stderr would otherwise make the agent's own log as large as its output).
   */
  private stderrLine(text: string): void {
    this.lastStderr.push(text.slice(0, 1000));
    if (this.lastStderr.length > 5) this.lastStderr.shift();
    const now = this.c.clock();
    if (now - this.stderrWindowAt >= 60_000) {
      if (this.stderrSuppressed > 0) this.c.log.warn({ source: this.key, lines: this.stderrSuppressed }, `custom: ${this.stderrSuppressed} more stderr lines of the command not logged (more than ${STDERR_LOG_PER_MINUTE} a minute)`);
      this.stderrWindowAt = now;
      this.stderrLogged = 0;
      this.stderrSuppressed = 0;
    }
    if (this.stderrLogged >= STDERR_LOG_PER_MINUTE) {
      this.stderrSuppressed++;
      return;
    }
    this.stderrLogged++;
    this.c.log.warn({ source: this.key, pid: this.pid, stderr: text.slice(0, 1000) }, 'custom: command stderr');
  }

  /**
   * One end of the command, in the log: said when it differs from the last one said, then every
   * EXIT_LOG_EVERY_MS with how many times it repeated — a command that cannot work here (missing,
   * not permitted) or that ends at once (dmesg without --follow) would otherwise log at each
   * restart, every 30 s for good. A run that lasted (STABLE_RUN_MS) starts the count afresh.
   */
  private logExit(level: 'error' | 'info', what: string, msg: string, fields: Record<string, unknown>): void {
    const now = this.c.clock();
    this.repeatedExits = what === this.loggedExit ? this.repeatedExits + 1 : 0;
    if (what === this.loggedExit && now - this.loggedExitAt < EXIT_LOG_EVERY_MS) return;
    const again = what === this.loggedExit ? ` (the same ${this.repeatedExits} more times since it was last logged)` : '';
    this.c.log[level]({ source: this.key, ...fields, ...(again ? { repeated: this.repeatedExits } : {}) }, `${msg}${again}`);
    if (again) this.repeatedExits = 0;
    this.loggedExit = what;
    this.loggedExitAt = now;
  }

  private exited(startedAt: number, code: number | null, sig: NodeJS.Signals | null, spawnError: string | null): void {
    if (this.stopped) return;
    if (Date.now() - startedAt >= STABLE_RUN_MS) {
      this.restartMs = 0;
      this.loggedExit = null; // it ran for a while: its end is news again
    }
    this.restartMs = Math.min(this.c.restartMaxMs, this.restartMs === 0 ? this.c.restartMinMs : this.restartMs * 2);
    const how = spawnError ?? (sig !== null ? `killed by ${sig}` : `exited with code ${code}`);
    this.lastExit = how;
    if (spawnError !== null || code !== 0) {
      const tail = this.lastStderr.at(-1);
      const failure = `${spawnError ?? `command ${how}`}${tail !== undefined && spawnError === null ? `: ${tail}` : ''}`;
      this.lastError = `${failure}; restarting in ${this.restartMs} ms`;
      this.logExit('error', failure, `custom: ${this.lastError}`, { code, signal: sig });
    } else {
      if (this.lastError !== null && !this.lastError.startsWith('buffer storage')) this.lastError = null;
      this.logExit('info', 'exit 0', 'custom: command exited with code 0; restarting', { restart_ms: this.restartMs });
    }
    if (this.state !== 'retrying') this.state = 'waiting';
    this.restarts++;
    this.timer = setTimeout(() => this.spawnCommand(), this.restartMs);
    this.timer.unref?.();
  }
}

/** stdout ended and the command did not within this long: it closed its stdout and runs on (said). */
const STDOUT_CLOSED_GRACE_MS = 1000;
/** How often the same end of the command is logged again while it repeats (DECISIONS D26). */
const EXIT_LOG_EVERY_MS = 10 * 60_000;
/** stderr lines of the command logged per minute; the rest are counted in one line. */
const STDERR_LOG_PER_MINUTE = 10;

function signal(c: ChildProcess, sig: NodeJS.Signals): void {
  try {
    if (c.pid !== undefined) process.kill(-c.pid, sig);
  } catch {
    c.kill(sig);
  }
}

// ---- socket ------------------------------------------------------------------------------------

/** Clients connected to one custom socket at once; more are closed as they connect (DECISIONS D27). */
export const MAX_SOCKET_CLIENTS = 256;

export class CustomSocketSource extends CustomBase {
  readonly socketPath: string;
  private readonly mode: number;
  private server: net.Server | null = null;
  private readonly conns = new Set<net.Socket>();
  private timer: NodeJS.Timeout | null = null;
  private restartMs = 0;
  private connections = 0;
  /** Connections closed at once because MAX_SOCKET_CLIENTS were connected. */
  private refused = 0;
  private refusedToldAt = 0;

  constructor(config: LogSourceConfig, cfg: CustomConfig, deps: SourceDeps) {
    super(common(config, cfg.name!, deps));
    this.socketPath = cfg.socket!;
    this.mode = cfg.socketMode;
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.listen();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.state = 'stopped';
    if (this.timer) clearTimeout(this.timer);
    this.clearRetry();
    for (const s of this.conns) s.destroy();
    this.conns.clear();
    const srv = this.server;
    this.server = null;
    if (srv !== null) await new Promise<void>((resolve) => srv.close(() => resolve()));
    this.removeSocketFile();
  }

  protected inputPaused(paused: boolean): void {
    for (const s of this.conns) {
      if (paused) s.pause();
      else if (!this.storageBlocked) s.resume();
    }
  }

  protected position(lines: number): JsonValue {
    return { connections: this.connections, lines };
  }

  protected extraStatus(): Record<string, JsonValue> {
    return { socket: this.socketPath, listening: this.server !== null, clients: this.conns.size, connections: this.connections, refused_connections: this.refused };
  }

  private removeSocketFile(): boolean {
    try {
      const st = fs.lstatSync(this.socketPath);
      if (!st.isSocket()) return false;
      fs.unlinkSync(this.socketPath);
    } catch {
      /* absent */
    }
    return true;
  }

  private listen(): void {
    if (this.stopped) return;
    // A socket file left by a previous run is replaced; anything else at the path is an error.
    if (!this.removeSocketFile()) {
      this.failed(`${this.socketPath} exists and is not a socket`);
      return;
    }
    if (!fs.existsSync(dirname(this.socketPath))) {
      this.failed(`folder ${dirname(this.socketPath)} does not exist`);
      return;
    }
    const srv = net.createServer((s) => this.onConnection(s));
    // Clients at once are bounded (DECISIONS D27): each holds a descriptor and up to a line's
    // worth of buffer, and a local process that opens thousands would take the agent's
    // descriptors (its connection to the server, the files it reads) and memory.
    srv.maxConnections = MAX_SOCKET_CLIENTS;
    srv.on('drop', () => this.refusedClient());
    srv.once('error', (err) => {
      if (this.server === srv) this.server = null;
      srv.close();
      this.failed(`cannot listen on ${this.socketPath}: ${err.message}`);
    });
    srv.listen(this.socketPath, () => {
      if (this.stopped) {
        srv.close();
        return;
      }
      try {
        fs.chmodSync(this.socketPath, this.mode);
      } catch (err) {
        this.c.log.warn({ source: this.key, err: (err as Error).message }, 'custom: cannot chmod the socket');
      }
      this.server = srv;
      this.restartMs = 0;
      this.lastError = null;
      this.state = this.paused ? 'paused' : 'reading';
      this.c.log.info({ source: this.key, socket: this.socketPath }, 'custom: listening');
    });
  }

  private failed(message: string): void {
    if (this.stopped) return;
    this.restartMs = Math.min(this.c.restartMaxMs, this.restartMs === 0 ? this.c.restartMinMs : this.restartMs * 2);
    this.lastError = `${message}; retrying in ${this.restartMs} ms`;
    this.state = 'error';
    this.c.log.error({ source: this.key }, `custom: ${this.lastError}`);
    this.timer = setTimeout(() => this.listen(), this.restartMs);
    this.timer.unref?.();
  }

  private refusedClient(): void {
    this.refused++;
    const now = Date.now();
    if (now - this.refusedToldAt < 60_000) return;
    this.refusedToldAt = now;
    this.c.log.warn(
      { source: this.key, socket: this.socketPath, max_clients: MAX_SOCKET_CLIENTS, refused_connections: this.refused },
      `custom: ${MAX_SOCKET_CLIENTS} clients are connected to ${this.socketPath} already; more are closed at once until some end (said at most once a minute)`,
    );
  }

  private onConnection(s: net.Socket): void {
    if (this.stopped) {
      s.destroy();
      return;
    }
    this.connections++;
    this.conns.add(s);
    if (this.storageBlocked) s.pause();
    const split = new LineSplitter();
    s.on('data', (b: Buffer) => {
      const items: LineItem[] = [];
      const lines = split.push(b, items);
      this.take(items, lines, b.length);
    });
    s.on('end', () => {
      const items: LineItem[] = [];
      const lines = split.end(items);
      if (lines > 0) this.take(items, lines, 0);
      s.end();
    });
    s.on('error', (err) => this.c.log.warn({ source: this.key, err: err.message }, 'custom: socket client error'));
    s.on('close', () => this.conns.delete(s));
  }
}

// ---- in-process ------------------------------------------------------------------------------------

/** `custom` without command or socket: entries come from agent.ingest(); this runner only shows the stored position. */
export class InProcessCustomSource implements LogSourceRunner {
  readonly kind = 'custom' as const;
  readonly key: string;
  private stopped = false;

  constructor(name: string | null, private readonly sink: SourceSink | null) {
    this.key = name === null ? 'custom' : `custom:${name}`;
  }

  start(): void {}
  async stop(): Promise<void> {
    this.stopped = true;
  }
  pause(): void {}
  resume(): void {}
  status(): SourceRunnerStatus {
    let position: JsonValue | null = null;
    try {
      position = this.key === 'custom' ? null : (this.sink?.position(this.key) ?? null);
    } catch {
      position = null;
    }
    return {
      kind: 'custom', key: this.key, path: null, name: this.key === 'custom' ? null : this.key.slice(7), state: this.stopped ? 'stopped' : 'idle',
      position, last_error: null, lines_read: 0, bytes_read: 0, lines_filtered: 0, lines_lost: 0, bytes_lost: 0,
      lost_estimated: false, truncations: 0, rotations: 0, lines_split: 0,
    };
  }
}

/** Whether the host lets a custom source run `command`: its program is listed (any arguments), or the whole command is. */
export function commandAllowed(command: readonly string[], allowed: readonly (string | readonly string[])[]): boolean {
  return allowed.some((a) => (typeof a === 'string' ? a === command[0] : a.length === command.length && a.every((x, i) => x === command[i])));
}

/**
 * Whether the host lets a custom source listen at `socket`: the path is listed, or lies inside a
 * listed folder — compared where the folders really are (symlinks resolved), so a link inside an
 * allowed folder does not lead the socket elsewhere.
 */
export function socketAllowed(socket: string, allowed: readonly string[]): boolean {
  const real = (p: string): string => {
    try {
      return fs.realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const path = join(real(dirname(resolve(socket))), basename(socket));
  return allowed.some((a) => {
    const rel = relative(real(a), path);
    return rel === '' || (!isAbsolute(rel) && rel.split(sep)[0] !== '..');
  });
}

export function createCustomSource(config: LogSourceConfig, deps: SourceDeps): LogSourceRunner {
  const cfg = parseCustomConfig(config);
  if (cfg.command !== null) {
    if (deps.customCommands !== undefined && !commandAllowed(cfg.command, deps.customCommands)) {
      throw new SourceConfigError(
        `the command ${JSON.stringify(cfg.command)} is not allowed on this host: a custom source runs only what the host's agent.json lists in "custom_commands" ` +
          `(add ${JSON.stringify(cfg.command[0])} for this program with any arguments, or the whole array for this command alone; then restart the agent)`,
      );
    }
    return new CustomCommandSource(config, cfg, deps);
  }
  if (cfg.socket !== null) {
    if (deps.customSocketPaths !== undefined && !socketAllowed(cfg.socket, deps.customSocketPaths)) {
      throw new SourceConfigError(
        `the socket ${cfg.socket} is not allowed on this host: a custom source listens only where the host's agent.json "custom_socket_paths" allows ` +
          `(add ${JSON.stringify(cfg.socket)}, or its folder ${JSON.stringify(dirname(cfg.socket))}; then restart the agent)`,
      );
    }
    return new CustomSocketSource(config, cfg, deps);
  }
  compileFilter(config.filter);
  return new InProcessCustomSource(cfg.name, sinkOf(deps));
}
