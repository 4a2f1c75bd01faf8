// The `docker` log source (DECISIONS.md D16–D19).
//
// Talks to the Docker Engine API over its unix socket (node:http with `socketPath`,
// unversioned paths): GET /events (type=container, event start/die) announces containers,
// GET /containers/json?all=1 lists them, GET /containers/{id}/json tells whether a
// container has a TTY, and GET /containers/{id}/logs?follow=1&stdout=1&stderr=1&timestamps=1
// &since=<seconds> streams its logs. One ContainerStream per followed container decodes
// the stream (multiplexed 8-byte frames, or raw for TTY containers), reassembles Docker's
// 16 KiB partial lines, parses each line (syslog-parse) and commits the entries of every
// HTTP chunk with ONE buffer append, together with the container's position
// {id, stdout, stderr}: the Docker timestamp (RFC 3339, 9-digit fraction) of the last
// chunk committed on each stream. On resume `since` is the whole second of the older one
// and chunks at or before the stored timestamp of their stream are skipped, so Docker's
// second-granularity `since` duplicates nothing.
//
// The engine unreachable (socket missing, connection refused, the events stream cut)
// is an error in status, retried with backoff; it never affects other sources. A full
// buffer pauses the HTTP response (TCP back-pressure up to the engine) — nothing is
// dropped.

import * as fs from 'node:fs';
import * as http from 'node:http';
import { currentUserName } from '../../common/process.js';
import { TextDecoder } from 'node:util';
import type { LogSourceConfig } from '@cortex/agent-protocol';
import { BufferStorageError } from '../buffer/errors.js';
import type { JsonValue, NewLogEntry } from '../buffer/entry.js';
import { compileFilter, MAX_MESSAGE_CODE_POINTS, splitCodePoints } from './text.js';
import { mapLevel, parseLine, type ParsedLine } from './syslog-parse.js';
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

export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';
/** Docker's log copier cuts lines without a newline into messages of this many bytes (moby daemon/logger/copier.go). */
export const DOCKER_PARTIAL_BYTES = 16 * 1024;
/**
 * The largest frame payload taken as a frame (DECISIONS H31): Docker writes one message of at
 * most 16 KiB (plus its timestamp) per frame; a header that declares more is not Docker's,
 * and waiting for its payload would hold (and copy, read by read) up to 4 GiB.
 */
export const MAX_FRAME_BYTES = 1024 * 1024;
/** A line still being reassembled commits its whole 65536-code-point parts once it holds this many UTF-16 units (bounded memory). */
const MAX_PENDING_UNITS = 4 * 65536;
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * The largest answer of the Engine API read whole (a list of containers, an inspect): a few KiB
 * per container. Whatever listens on the socket and answers without end (not Docker: a wrong
 * `socket`) was held in memory until the agent ran out of it.
 */
export const MAX_ENGINE_ANSWER_BYTES = 64 * 1024 * 1024;

type Stream = 'stdout' | 'stderr';

export interface DockerPosition {
  [k: string]: JsonValue;
  /** Container id the timestamps belong to (a container re-created under the same name starts over). */
  id: string;
  /** Docker timestamp (RFC 3339 UTC, 9-digit fraction) of the last committed stdout / stderr chunk. */
  stdout: string | null;
  stderr: string | null;
}

export function isDockerPosition(v: JsonValue | null | undefined): v is DockerPosition {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof v.id === 'string';
}

// ---- timestamps -----------------------------------------------------------------

const TS_RE = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/** Nanoseconds since the epoch of a Docker timestamp (RFC 3339 with up to 9 fraction digits), or null. */
export function dockerTsNanos(s: string): bigint | null {
  const m = TS_RE.exec(s);
  if (m === null) return null;
  const ms = Date.parse(`${m[1]}${m[3] === 'Z' ? 'Z' : m[3]}`);
  if (Number.isNaN(ms)) return null;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** RFC 3339 UTC with a 9-digit fraction (Docker's RFC3339NanoFixed). */
export function formatNanos(ns: bigint): string {
  const ms = ns / 1_000_000n;
  const iso = new Date(Number(ms)).toISOString(); // ...T12:00:01.123Z
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${iso.slice(0, 19)}.${frac}Z`;
}

// ---- stream decoding --------------------------------------------------------------

/** One Docker log message: a timestamp prefix and its content; `complete` when it ended with a newline. */
export interface DockerMessage {
  stream: Stream | 'system';
  /** The timestamp prefix (null when the message had none). */
  ts: string | null;
  content: Buffer;
  complete: boolean;
}

/** The end (index after the space) of a timestamp prefix at `p`, or -1. */
function tsPrefixEnd(buf: Buffer, p: number, end: number): number {
  const lim = Math.min(end, p + 41);
  for (let i = p + 19; i < lim; i++) {
    if (buf[i] === 32) return TS_RE.test(buf.toString('latin1', p, i)) ? i + 1 : -1;
  }
  return -1;
}

/**
 * Decodes a logs response body. Multiplexed (non-TTY): frames of an 8-byte header
 * (stream type, 3 zero bytes, uint32 BE payload length) and the payload, headers and
 * payloads split anywhere across reads; each frame holds one Docker message, and a
 * frame whose content does not end with a newline is a partial message (Docker's 16 KiB
 * split) continued by the next message of the same stream. Raw (TTY): the messages
 * follow each other without framing; a message ends at its newline or after exactly
 * 16384 content bytes not followed by a newline (then it is partial and the next
 * message's timestamp follows).
 *
 * The bytes received are kept as the reads they came in and joined once there is something
 * to decode (a whole frame; a raw message's newline or its 16384th byte): a frame of 1 MiB
 * arriving in a thousand reads was copied whole at each of them (hundreds of MB for one frame).
 * Each byte is now copied about once, whatever the reads (DECISIONS D29's leftover).
 */
export class DockerStreamDecoder {
  /** Bytes received and not decoded yet, in the order they came; `queued` of them in all. */
  private chunks: Buffer[] = [];
  private queued = 0;
  /** Multiplexed: header and payload length of the frame whose header is queued (-1: its header is not read yet). */
  private frameBytes = -1;
  /** Raw: the queued bytes may hold a newline (set by a read that holds one; worked out again after decoding). */
  private queuedNewline = false;
  private raw: boolean;
  /** Raw mode: a message's timestamp was read and its content starts at the first queued byte. */
  private inMessage = false;
  private ts: string | null = null;
  /** Set when a multiplexed stream turned out not to be (bad header): decoded as raw from there. */
  corrupt = false;
  /** Why `corrupt` was set: the header's bytes, in words. */
  corruptReason: string | null = null;
  /** Set by end() when the body ended inside a frame: how much of it came, in words (null: it ended between frames). */
  cutShort: string | null = null;

  constructor(tty: boolean) {
    this.raw = tty;
  }

  push(chunk: Buffer): DockerMessage[] {
    const out: DockerMessage[] = [];
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.queued += chunk.length;
      if (this.raw && !this.queuedNewline) this.queuedNewline = chunk.includes(10);
    }
    if (!this.raw) this.frames(out);
    if (this.raw) this.rawMessages(out, false);
    return out;
  }

  /**
   * The body ended: a raw message without its newline is returned (incomplete); an incomplete
   * frame is dropped and said in `cutShort` (Docker ends a stream between frames: a body that
   * ends inside one was cut short).
   */
  end(): DockerMessage[] {
    const out: DockerMessage[] = [];
    this.cutShort = null;
    if (this.raw) this.rawMessages(out, true);
    else if (this.queued > 0) {
      this.cutShort =
        this.frameBytes < 0
          ? `${this.queued} of the 8 bytes of a frame header came`
          : `${this.queued} of the ${this.frameBytes} bytes of a frame came`;
    }
    this.chunks = [];
    this.queued = 0;
    this.frameBytes = -1;
    this.queuedNewline = false;
    return out;
  }

  /** The first `n` queued bytes (n ≤ queued), left queued: a view when one read holds them. */
  private peek(n: number): Buffer {
    if (this.chunks[0]!.length >= n) return this.chunks[0]!.subarray(0, n);
    const parts: Buffer[] = [];
    let got = 0;
    for (const c of this.chunks) {
      if (got >= n) break;
      parts.push(c);
      got += c.length;
    }
    return Buffer.concat(parts, n);
  }

  /** The first `n` queued bytes (n ≤ queued), taken off the queue: a view when one read holds them, else joined once. */
  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    this.queued -= n;
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const parts: Buffer[] = [];
    let got = 0;
    let used = 0;
    while (got < n) {
      const c = this.chunks[used]!;
      const want = n - got;
      if (c.length <= want) {
        parts.push(c);
        got += c.length;
        used++;
      } else {
        parts.push(c.subarray(0, want));
        this.chunks[used] = c.subarray(want);
        got = n;
      }
    }
    this.chunks.splice(0, used);
    return Buffer.concat(parts, n);
  }

  private frames(out: DockerMessage[]): void {
    for (;;) {
      if (this.frameBytes < 0) {
        if (this.queued < 8) return;
        const h = this.peek(8);
        const type = h[0]!;
        const size = h.readUInt32BE(4);
        if (type > 3 || h[1] !== 0 || h[2] !== 0 || h[3] !== 0 || size > MAX_FRAME_BYTES) {
          // Not a multiplexed stream after all (a TTY container whose Config we misread): raw from here.
          this.corrupt = true;
          this.corruptReason =
            size > MAX_FRAME_BYTES && type <= 3
              ? `a frame header declares ${size} bytes (Docker's frames hold at most 16 KiB)`
              : `bytes ${h.toString('hex')} are not a frame header`;
          this.raw = true;
          this.queuedNewline = true; // not looked at yet: the raw decoder looks
          return;
        }
        this.frameBytes = 8 + size;
      }
      if (this.queued < this.frameBytes) return;
      const f = this.take(this.frameBytes);
      this.frameBytes = -1;
      const type = f[0]!;
      this.frame(type === 2 ? 'stderr' : type === 3 ? 'system' : 'stdout', f.subarray(8), out);
    }
  }

  private frame(stream: DockerMessage['stream'], payload: Buffer, out: DockerMessage[]): void {
    let p = 0;
    while (p < payload.length) {
      let ts: string | null = null;
      const after = tsPrefixEnd(payload, p, payload.length);
      if (after >= 0) {
        ts = payload.toString('latin1', p, after - 1);
        p = after;
      }
      const nl = payload.indexOf(10, p);
      if (nl < 0) {
        out.push({ stream, ts, content: payload.subarray(p), complete: false });
        return;
      }
      out.push({ stream, ts, content: payload.subarray(p, nl), complete: true });
      p = nl + 1;
    }
  }

  private rawMessages(out: DockerMessage[], final: boolean): void {
    // Nothing can be decoded before a newline, more than a message's 16384 content bytes, or the end.
    if (this.queued === 0 || (!final && !this.queuedNewline && this.queued <= DOCKER_PARTIAL_BYTES)) return;
    const b = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.queued);
    let p = 0;
    /** Stopped before a timestamp prefix that may still be arriving (fewer than 41 bytes, no space). */
    let waitingForPrefix = false;
    while (p < b.length) {
      if (!this.inMessage) {
        const after = tsPrefixEnd(b, p, b.length);
        if (after < 0 && b.length - p < 41 && !final && b.indexOf(32, p) < 0) {
          waitingForPrefix = true;
          break;
        }
        if (after >= 0) {
          this.ts = b.toString('latin1', p, after - 1);
          p = after;
        } else this.ts = null;
        this.inMessage = true;
      }
      const limit = p + DOCKER_PARTIAL_BYTES;
      const nl = b.subarray(p, Math.min(b.length, limit + 1)).indexOf(10);
      if (nl >= 0) {
        out.push({ stream: 'stdout', ts: this.ts, content: b.subarray(p, p + nl), complete: true });
        p += nl + 1;
        this.inMessage = false;
        continue;
      }
      if (b.length > limit) {
        // 16384 content bytes and the next byte is not a newline: a partial message.
        out.push({ stream: 'stdout', ts: this.ts, content: b.subarray(p, limit), complete: false });
        p = limit;
        this.inMessage = false;
        continue;
      }
      if (final) {
        out.push({ stream: 'stdout', ts: this.ts, content: b.subarray(p), complete: false });
        p = b.length;
        this.inMessage = false;
      }
      break;
    }
    const rest = b.subarray(p);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.queued = rest.length;
    // What is left of a message was searched for a newline (none); only before its prefix may one wait.
    this.queuedNewline = waitingForPrefix && rest.includes(10);
  }
}

// ---- Engine API client ------------------------------------------------------------------

class EngineError extends Error {
  /** `malformed`: the engine answered 2xx, but not the JSON shape its API documents (not JSON, null, a list for an object, …). */
  constructor(message: string, readonly statusCode: number | null, readonly malformed = false) {
    super(message);
  }
}

/** A JSON object (not null, not a list): what the Engine API answers and streams as events. */
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What a JSON value is, in words, for an error saying it is not what the engine should have sent. */
function jsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

/**
 * GET `path` of the Engine API, its JSON answer checked to be a `shape` (an object or a list):
 * anything else (`null`, a string, …) is an EngineError like an answer that is not JSON —
 * used unchecked, a `null` from the engine (or whatever listens on its socket) threw a
 * TypeError that ended the agent (fix session, item 1).
 */
function engineRequest(socketPath: string, path: string, shape: 'object', timeoutMs: number): Promise<Record<string, unknown>>;
function engineRequest(socketPath: string, path: string, shape: 'list', timeoutMs: number): Promise<unknown[]>;
function engineRequest(socketPath: string, path: string, shape: 'object' | 'list', timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.get({ socketPath, path, agent: false, timeout: timeoutMs, headers: { Accept: 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_ENGINE_ANSWER_BYTES) chunks.push(c);
        else {
          chunks.length = 0;
          req.destroy();
          reject(new EngineError(`GET ${path}: the answer is larger than ${MAX_ENGINE_ANSWER_BYTES} bytes (is a Docker Engine listening at ${socketPath}?)`, res.statusCode ?? null, true));
        }
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) >= 300) {
          reject(new EngineError(`GET ${path}: HTTP ${res.statusCode}: ${errorMessage(text)}`, res.statusCode ?? null));
          return;
        }
        let v: unknown;
        try {
          v = JSON.parse(text);
        } catch {
          reject(new EngineError(`GET ${path}: response is not JSON`, res.statusCode ?? null, true));
          return;
        }
        if (shape === 'list' ? Array.isArray(v) : isObject(v)) resolve(v);
        else reject(new EngineError(`GET ${path}: the answer is ${jsonKind(v)}, not a JSON ${shape}`, res.statusCode ?? null, true));
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

function errorMessage(text: string): string {
  try {
    const o: unknown = JSON.parse(text);
    if (isObject(o) && typeof o.message === 'string') return o.message.slice(0, 500);
  } catch {
    /* not JSON */
  }
  return text.trim().slice(0, 200);
}

function containerName(names: unknown): string | null {
  if (typeof names === 'string') return names.replace(/^\//, '');
  if (!Array.isArray(names)) return null;
  // Names may include link aliases ("/other/alias"): the container's own name has one slash.
  const own = names.find((n): n is string => typeof n === 'string' && n.lastIndexOf('/') === 0) ?? names.find((n): n is string => typeof n === 'string');
  return own === undefined ? null : own.replace(/^\//, '');
}

// ---- selection ----------------------------------------------------------------------------

const NAME_RE = /^[A-Za-z0-9*?][A-Za-z0-9_.*?-]*$/;

/** `path`: one container name, or a glob (`*`, `?`) over names; absent = every container. */
export function compileContainerSelector(path: string | undefined): (name: string) => boolean {
  if (path === undefined || path === '' || path === '*') return () => true;
  const p = path.replace(/^\//, '');
  if (!NAME_RE.test(p) || p.length > 255) throw new SourceConfigError(`docker source path ${JSON.stringify(path)} is not a container name or a glob over names ([A-Za-z0-9_.-], * and ?)`);
  if (!/[*?]/.test(p)) return (name) => name === p;
  const re = new RegExp(`^${p.replace(/[.]/g, '\\.').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return (name) => re.test(name);
}

// ---- one container ----------------------------------------------------------------------------

interface Pending {
  /** Streaming decoder: a UTF-8 sequence cut by a 16 KiB split is completed by the next chunk. */
  dec: TextDecoder;
  text: string;
  firstNs: bigint | null;
  /** Parts already committed of this (over-long) line. */
  parts: number;
}

interface Counters {
  lines_read: number;
  bytes_read: number;
  lines_filtered: number;
  lines_split: number;
  lines_skipped: number;
}

interface Shared {
  sink: SourceSink;
  log: SourceLogger;
  clock: () => number;
  filter: RegExp | null;
  labels: Record<string, string> | null;
  retryMinMs: number;
  retryMaxMs: number;
  socketPath: string;
  /** How long the engine may take to begin its answer to a request (the logs request's too). */
  answerTimeoutMs: number;
  key: string;
  counters: Counters;
  isPaused: () => boolean;
  /** A container's logs request was answered 2xx (its stream is read). */
  onResponded: (c: ContainerStream) => void;
}

type ContainerState = 'reading' | 'paused' | 'retrying' | 'stopped' | 'error';

class ContainerStream {
  readonly source: `docker:${string}`;
  private req: http.ClientRequest | null = null;
  private res: http.IncomingMessage | null = null;
  /** Until the logs request's answer begins (Shared.answerTimeoutMs); none once it has. */
  private noAnswer: NodeJS.Timeout | null = null;
  private decoder: DockerStreamDecoder;
  private readonly pending: Record<Stream, Pending | null> = { stdout: null, stderr: null };
  /** Committed positions (ns) per stream; chunks at or before them are skipped. */
  private readonly pos: Record<Stream, bigint | null> = { stdout: null, stderr: null };
  /**
   * The stored positions this stream resumes after, per stream, until a message past them comes:
   * only the messages Docker sends again (its `since` is whole seconds) are skipped by their time.
   * Compared with the committed position instead, every line of a live stream whose time lay
   * before the last one committed — the host's clock stepped back (NTP at boot, a VM resumed) —
   * was dropped as if read already.
   */
  private readonly replayFloor: Record<Stream, bigint | null> = { stdout: null, stderr: null };
  /** Positions including what was read but is not yet committed. */
  private readonly seen: Record<Stream, bigint | null> = { stdout: null, stderr: null };
  private held: { entries: NewLogEntry[]; pos: DockerPosition } | null = null;
  private retryMs = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  committed: DockerPosition | null = null;
  lastError: string | null = null;
  state: ContainerState = 'reading';
  linesRead = 0;
  /** When the logs request was made (Shared.clock): a stream that lasted STABLE_STREAM_MS resets the container's retry backoff. */
  openedAt = 0;
  /** The engine answered the logs request with 2xx (its stream is being read). */
  responded = false;

  constructor(
    readonly id: string,
    readonly name: string,
    readonly tty: boolean,
    private readonly s: Shared,
    /** The stream ended: `clean` when it ended by itself (the container stopped), `error` what cut it or refused it. */
    private readonly onEnd: (c: ContainerStream, clean: boolean, error: string | null) => void,
  ) {
    this.source = `docker:${name}`;
    this.decoder = new DockerStreamDecoder(tty);
    const stored = s.sink.position(this.source);
    if (isDockerPosition(stored) && stored.id === id) {
      this.committed = stored;
      for (const st of ['stdout', 'stderr'] as const) {
        const v = stored[st];
        this.pos[st] = typeof v === 'string' ? dockerTsNanos(v) : null;
        this.replayFloor[st] = this.pos[st];
      }
    }
  }

  /** `since` for the logs request: the whole second of the older stream position (0: from the start). */
  since(): number {
    const ps = [this.pos.stdout, this.pos.stderr].filter((p): p is bigint => p !== null);
    if (ps.length === 0) return 0;
    const min = ps.reduce((a, b) => (a < b ? a : b));
    return Number(min / 1_000_000_000n);
  }

  open(): void {
    this.openedAt = this.s.clock();
    const path = `/containers/${encodeURIComponent(this.id)}/logs?follow=1&stdout=1&stderr=1&timestamps=1&since=${this.since()}`;
    // A bounded wait until the answer begins (not after it: a followed log may rightly say
    // nothing for hours). An engine that accepted the request and never answered it (a hung
    // dockerd, a proxy) left the container `reading` for good, with no error and no retry.
    const ms = this.s.answerTimeoutMs;
    this.noAnswer = setTimeout(() => {
      this.noAnswer = null;
      req.destroy(new Error(`no answer within ${ms} ms (is the Docker Engine at ${this.s.socketPath} hung? \`docker logs ${this.name}\` should answer at once)`));
    }, ms);
    this.noAnswer.unref?.();
    const req = http.get({ socketPath: this.s.socketPath, path, agent: false }, (res) => {
      this.answered();
      if ((res.statusCode ?? 0) >= 300) {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < 64 * 1024) chunks.push(c); // what the error says: its beginning is enough
          size += c.length;
        });
        res.on('end', () => this.finish(false, `logs of ${this.name}: HTTP ${res.statusCode}: ${errorMessage(Buffer.concat(chunks).toString('utf8'))}`));
        res.on('error', (err) => this.finish(false, `logs of ${this.name}: ${err.message}`));
        return;
      }
      this.res = res;
      this.responded = true;
      this.s.onResponded(this);
      if (this.s.isPaused() || this.held !== null) res.pause();
      res.on('data', (c: Buffer) => this.onData(c));
      res.on('end', () => this.finish(true, null));
      res.on('error', (err) => this.finish(false, `logs of ${this.name}: ${err.message}`));
      res.on('close', () => this.finish(res.complete, res.complete ? null : `logs of ${this.name}: the stream was cut`));
    });
    req.on('error', (err) => {
      this.answered();
      this.finish(false, `logs of ${this.name}: ${err.message}`);
    });
    this.req = req;
  }

  /** The logs request was answered (or failed, or was closed): no more waiting for its answer. */
  private answered(): void {
    if (this.noAnswer === null) return;
    clearTimeout(this.noAnswer);
    this.noAnswer = null;
  }

  pause(): void {
    this.res?.pause();
    if (this.state === 'reading') this.state = 'paused';
  }

  resume(): void {
    if (this.state === 'paused') this.state = 'reading';
    this.retryMs = 0;
    if (this.held !== null) this.flushHeld();
    else this.res?.resume();
  }

  close(): void {
    this.closed = true;
    this.state = 'stopped';
    if (this.timer) clearTimeout(this.timer);
    this.answered();
    this.req?.destroy();
    this.res?.destroy();
  }

  private finished = false;
  /** Set when the stream ended; onEnd is called once nothing is held any more. */
  private endedClean: boolean | null = null;
  /** What ended the stream (null: it ended by itself); logged by the source, rate-limited per container. */
  private endError: string | null = null;
  private finish(clean: boolean, error: string | null): void {
    if (this.finished) return;
    this.finished = true;
    if (this.closed) return;
    let last: DockerMessage[] = [];
    if (clean && error === null) {
      last = this.decoder.end();
      // Docker ends a logs stream between frames: one that ends inside a frame was cut short
      // (whatever answers on the socket, a proxy): an error, and that frame is read again.
      if (this.decoder.cutShort !== null) {
        clean = false;
        error = `logs of ${this.name}: the stream ended inside a frame (${this.decoder.cutShort}): cut short; read again from the last position stored`;
      }
    }
    if (error !== null) {
      this.lastError = error;
      this.endError = error;
    }
    // The container stopped: a partial last line will never get its newline. (A stream
    // cut by an error keeps it pending: the position excludes it and it is read again.)
    if (clean) this.process(last, true);
    this.endedClean = clean && error === null;
    this.maybeEnded();
  }

  private maybeEnded(): void {
    if (this.endedClean === null || this.held !== null || this.closed) return;
    this.state = 'stopped';
    const clean = this.endedClean;
    this.endedClean = null;
    this.onEnd(this, clean, this.endError);
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.s.counters.bytes_read += chunk.length;
    const wasCorrupt = this.decoder.corrupt;
    const msgs = this.decoder.push(chunk);
    if (!wasCorrupt && this.decoder.corrupt) {
      this.lastError = `logs of ${this.name} are not a multiplexed stream: ${this.decoder.corruptReason}; read as plain text from there`;
      this.s.log.warn({ source: this.source }, `docker: ${this.lastError}`);
    }
    this.process(msgs, false);
  }

  private process(msgs: DockerMessage[], final: boolean): void {
    const entries: NewLogEntry[] = [];
    for (const m of msgs) {
      if (m.stream === 'system') {
        this.lastError = `engine: ${m.content.toString('utf8').trim().slice(0, 500)}`;
        this.s.log.warn({ source: this.source }, `docker: ${this.lastError}`);
        continue;
      }
      const st = m.stream;
      const ns = m.ts === null ? null : dockerTsNanos(m.ts);
      const floor = this.replayFloor[st];
      if (ns !== null && floor !== null && this.pending[st] === null) {
        if (ns <= floor) {
          this.s.counters.lines_skipped++;
          continue;
        }
        this.replayFloor[st] = null; // past the stored position: what follows is new, whatever its time
      }
      let p = this.pending[st];
      if (p === null) {
        p = { dec: new TextDecoder('utf-8'), text: '', firstNs: ns, parts: 0 };
        this.pending[st] = p;
      }
      if (ns !== null) this.seen[st] = ns;
      if (m.complete) {
        p.text += p.dec.decode(m.content);
        this.line(st, p, entries, false);
        this.pending[st] = null;
      } else {
        p.text += p.dec.decode(m.content, { stream: true });
        if (p.text.length >= MAX_PENDING_UNITS) this.line(st, p, entries, true);
      }
    }
    if (final) {
      for (const st of ['stdout', 'stderr'] as const) {
        const p = this.pending[st];
        if (p !== null) {
          p.text += p.dec.decode();
          this.line(st, p, entries, false);
        }
        this.pending[st] = null;
      }
    }
    const pos = this.position();
    if (entries.length === 0 && samePosition(pos, this.held?.pos ?? this.committed)) return;
    this.held = this.held === null ? { entries, pos } : { entries: [...this.held.entries, ...entries], pos };
    this.flushHeld();
  }

  /** Per stream: everything before a pending line is committed; without one, everything seen. */
  private position(): DockerPosition {
    const out: Record<Stream, string | null> = { stdout: null, stderr: null };
    for (const st of ['stdout', 'stderr'] as const) {
      const p = this.pending[st];
      let v: bigint | null;
      // A restart re-reads a pending line whole (parts of a > 256 Ki line already committed repeat).
      if (p !== null) v = p.firstNs !== null ? p.firstNs - 1n : this.pos[st];
      else v = this.seen[st] ?? this.pos[st];
      if (v !== null && this.pos[st] !== null && v < this.pos[st]!) v = this.pos[st];
      out[st] = v === null ? null : formatNanos(v);
    }
    return { id: this.id, stdout: out.stdout, stderr: out.stderr };
  }

  /**
   * A complete line (more=false), or the whole parts of a line still being reassembled
   * (more=true: the last, incomplete part stays pending). Lines over 65536 code points
   * are split as D8 says.
   */
  private line(st: Stream, p: Pending, entries: NewLogEntry[], more: boolean): void {
    let text = p.text;
    if (!more && text.charCodeAt(text.length - 1) === 13) text = text.slice(0, -1); // TTY lines end in CRLF
    const ms = p.firstNs !== null ? Number(p.firstNs / 1_000_000n) : this.s.clock();
    if (!more) {
      this.s.counters.lines_read++;
      this.linesRead++;
    }
    if (!more && p.parts === 0 && text.length <= MAX_MESSAGE_CODE_POINTS) {
      if (text.length > 0) this.emit(st, text, ms, null, entries); // empty lines are skipped (as D9)
      return;
    }
    const pieces = text.length === 0 ? [] : splitCodePoints(text, MAX_MESSAGE_CODE_POINTS);
    if (!more && p.parts === 0 && pieces.length === 1) {
      this.emit(st, text, ms, null, entries);
      return;
    }
    if (p.parts === 0) this.s.counters.lines_split++;
    const keep = more ? pieces.pop() ?? '' : '';
    pieces.forEach((piece, k) => {
      p.parts++;
      this.emit(st, piece, ms, { part: p.parts, more: more || k < pieces.length - 1 }, entries);
    });
    p.text = keep;
  }

  private emit(st: Stream, text: string, ms: number, split: { part: number; more: boolean } | null, entries: NewLogEntry[]): void {
    if (this.s.filter !== null && !this.s.filter.test(text)) {
      this.s.counters.lines_filtered++;
      return;
    }
    let parsed: ParsedLine | null = null;
    if (split === null) parsed = parseLine(text, ms);
    const metadata: Record<string, unknown> = { ...(parsed?.metadata ?? {}), container_id: this.id.slice(0, 12), stream: st };
    if (this.s.labels !== null) metadata.labels = this.s.labels;
    if (split !== null) metadata.split = split;
    const e: NewLogEntry = {
      ts: parsed?.ts ?? new Date(ms).toISOString(),
      severity: st === 'stderr' && (parsed === null || !hasOwnSeverity(parsed)) ? 'err' : (parsed?.severity ?? 'info'),
      message: parsed?.message ?? text,
      source: this.source,
      metadata,
    };
    if (parsed !== null) {
      if (parsed.facility !== null) e.facility = parsed.facility;
      if (parsed.app_name !== null) e.app_name = parsed.app_name;
      if (parsed.process_id !== null) e.process_id = parsed.process_id;
    }
    entries.push(e);
  }

  /** Commits the held batch; on failure pauses the HTTP response and retries with backoff. */
  private flushHeld(): void {
    if (this.held === null || this.closed) return;
    if (this.s.isPaused()) {
      this.res?.pause();
      return;
    }
    try {
      this.s.sink.append(this.held.entries, { source: this.source, position: this.held.pos });
      this.committed = this.held.pos;
      for (const st of ['stdout', 'stderr'] as const) {
        const v = this.held.pos[st];
        if (v !== null) this.pos[st] = dockerTsNanos(v);
      }
      this.held = null;
      this.retryMs = 0;
      if (this.state === 'retrying') this.state = 'reading';
      if (this.lastError !== null && /storage|buffer|disk|SQLITE/i.test(this.lastError)) this.lastError = null;
      this.res?.resume();
      this.maybeEnded();
    } catch (err) {
      if (!(err instanceof BufferStorageError)) this.s.log.error({ source: this.source, err: (err as Error).message }, 'docker: append failed');
      this.res?.pause();
      this.lastError = `buffer storage: ${(err as Error).message}`;
      this.state = 'retrying';
      this.retryMs = Math.min(this.s.retryMaxMs, this.retryMs === 0 ? this.s.retryMinMs : this.retryMs * 2);
      this.timer = setTimeout(() => this.flushHeld(), this.retryMs);
      this.timer.unref?.();
    }
  }
}

/** A line parsed with a severity of its own (PRI, JSON level): stderr does not override it. */
function hasOwnSeverity(p: ParsedLine): boolean {
  if (p.format === 'rfc5424') return true;
  if (p.format === 'rfc3164') return p.facility !== null; // the PRI-less form has no severity
  if (p.format === 'json') {
    const m = p.metadata ?? {};
    return mapLevel(m.level) !== null || mapLevel(m.severity) !== null || mapLevel(m.lvl) !== null;
  }
  return false;
}

function samePosition(a: DockerPosition, b: DockerPosition | null): boolean {
  return b !== null && a.id === b.id && a.stdout === b.stdout && a.stderr === b.stderr;
}

// ---- the source ------------------------------------------------------------------------------

export class DockerSource implements LogSourceRunner {
  readonly kind = 'docker' as const;
  /** "docker:<path>" (a name or a glob), or "docker:*" for every container. Entries and positions use "docker:<container name>". */
  readonly key: string;
  readonly socketPath: string;
  private readonly selector: (name: string) => boolean;
  private readonly selection: string | null;
  private readonly shared: Shared;
  private readonly restartMinMs: number;
  private readonly restartMaxMs: number;
  /** How long the engine may take to begin an answer (REQUEST_TIMEOUT_MS; deps.dockerAnswerTimeoutMs). */
  private readonly answerTimeoutMs: number;

  private readonly streams = new Map<string, ContainerStream>();
  /** Containers whose logs stream ended and that were started again meanwhile. */
  private readonly restartWanted = new Set<string>();
  /** Containers removed (`destroy`) while their logs stream was still open: forgotten when it ends. */
  private readonly destroyed = new Set<string>();
  /** Container id → name, for every container seen (status). */
  private readonly last = new Map<string, ContainerStream>();
  private events: http.ClientRequest | null = null;
  private started = false;
  private stopped = false;
  private paused = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private restartMs = 0;
  private generation = 0;
  private engineError: string | null = null;
  private loggedEngineError: string | null = null;
  private loggedEngineErrorAt = 0;
  private connected = false;
  /** When the last connection listed the containers (Shared.clock). */
  private connectedAt = 0;
  /** "engine reachable again" was said after the last error logged. */
  private reachableTold = true;
  private readonly counters: Counters = { lines_read: 0, bytes_read: 0, lines_filtered: 0, lines_split: 0, lines_skipped: 0 };
  /**
   * Containers whose logs stream ended and that are asked about again after a backoff (by full
   * id). A logs request the engine refuses (HTTP 501 for `--log-driver none`) was made again
   * every second for good, with a warn line each time and nothing in status (fix session, item 3).
   */
  private readonly retries = new Map<string, ContainerRetry>();
  /** Events stream lines that are not a JSON object (status `events_malformed`), and when that was last logged. */
  private eventsMalformed = 0;
  private eventsMalformedToldAt = 0;

  constructor(config: LogSourceConfig, deps: SourceDeps) {
    const path = typeof config.path === 'string' ? config.path : undefined;
    this.selector = compileContainerSelector(path);
    this.selection = path === undefined || path === '' ? null : path.replace(/^\//, '');
    this.key = `docker:${this.selection ?? '*'}`;
    const socket = config.socket;
    if (socket !== undefined && (typeof socket !== 'string' || !socket.startsWith('/'))) throw new SourceConfigError(`docker source socket must be an absolute path: ${JSON.stringify(socket)}`);
    this.socketPath = socket ?? DEFAULT_DOCKER_SOCKET;
    const sink = sinkOf(deps);
    if (sink === null) throw new SourceConfigError('docker source needs deps.sink or deps.buffer');
    this.restartMinMs = deps.restartMinMs ?? 1000;
    this.restartMaxMs = deps.restartMaxMs ?? 30_000;
    this.answerTimeoutMs = deps.dockerAnswerTimeoutMs ?? REQUEST_TIMEOUT_MS;
    this.shared = {
      sink,
      log: deps.logger ?? silentLogger,
      clock: deps.clock ?? Date.now,
      filter: compileFilter(config.filter),
      labels: config.labels && Object.keys(config.labels).length > 0 ? { ...config.labels } : null,
      retryMinMs: deps.retryMinMs ?? 250,
      retryMaxMs: deps.retryMaxMs ?? 5000,
      socketPath: this.socketPath,
      answerTimeoutMs: this.answerTimeoutMs,
      key: this.key,
      counters: this.counters,
      isPaused: () => this.paused,
      onResponded: (c) => {
        const r = this.retries.get(c.id);
        if (r !== undefined && r.error !== null && r.logged !== null) this.shared.log.info({ source: c.source }, `docker: logs of ${c.name} readable again`);
      },
    };
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.events?.destroy();
    this.events = null;
    for (const c of this.streams.values()) c.close();
    this.streams.clear();
    this.retries.clear();
  }

  pause(): void {
    this.paused = true;
    for (const c of this.streams.values()) c.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    for (const c of this.streams.values()) c.resume();
  }

  status(): SourceRunnerStatus & { containers: ContainerStatus[]; lines_skipped: number; events_malformed: number; socket: string } {
    const open = new Set(this.streams.values());
    const containers: ContainerStatus[] = [...this.last.values()].map((c) => {
      // A container whose logs request failed: `error` (with what the engine said) while its
      // retry is due, and while the retry's request has no answer yet.
      const r = this.retries.get(c.id);
      const failing = r !== undefined && r.error !== null && (open.has(c) ? !c.responded : r.timer !== null);
      const state = failing ? 'error' : open.has(c) ? c.state : 'stopped';
      const lastError = failing ? `${r.error}; retried after ${r.ms} ms` : c.lastError;
      return { name: c.name, id: c.id.slice(0, 12), tty: c.tty, state, position: c.committed, last_error: lastError, lines_read: c.linesRead };
    });
    const position: Record<string, JsonValue> = {};
    for (const c of containers) if (c.position !== null) position[c.name] = c.position;
    const containerError = containers.find((c) => c.last_error !== null && c.state !== 'stopped')?.last_error ?? null;
    let state: SourceRunnerStatus['state'];
    if (this.stopped) state = 'stopped';
    else if (this.engineError !== null) state = 'error';
    else if (this.paused) state = 'paused';
    else if (containers.some((c) => c.state === 'retrying')) state = 'retrying';
    else if (containers.some((c) => c.state === 'reading')) state = 'reading';
    else if (containers.some((c) => c.state === 'error')) state = 'error';
    else state = this.connected ? 'waiting' : 'idle';
    return {
      kind: 'docker', key: this.key, path: this.selection, name: this.selection, state,
      position: Object.keys(position).length > 0 ? position : null,
      last_error: this.engineError ?? containerError,
      lines_read: this.counters.lines_read, bytes_read: this.counters.bytes_read, lines_filtered: this.counters.lines_filtered,
      lines_lost: 0, bytes_lost: 0, lost_estimated: false, truncations: 0, rotations: 0, lines_split: this.counters.lines_split,
      lines_skipped: this.counters.lines_skipped, events_malformed: this.eventsMalformed, socket: this.socketPath, containers,
    };
  }

  // -- engine connection --

  private connect(): void {
    if (this.stopped) return;
    const gen = ++this.generation;
    const filters = encodeURIComponent(JSON.stringify({ type: ['container'], event: ['start', 'die', 'destroy'] }));
    // Events first, then the list: a container started in between is in one or the other.
    // Until its answer begins (then it may rightly say nothing for hours): whatever accepts
    // connections on the socket and never answers (another program's socket) left the source
    // `idle` with no error, for good.
    const noAnswer = setTimeout(() => req.destroy(new Error(`GET /events: no answer within ${this.answerTimeoutMs} ms`)), this.answerTimeoutMs);
    noAnswer.unref?.();
    const req = http.get({ socketPath: this.socketPath, path: `/events?filters=${filters}`, agent: false }, (res) => {
      clearTimeout(noAnswer);
      if ((res.statusCode ?? 0) >= 300) {
        res.resume();
        this.engineDown(gen, `GET /events: HTTP ${res.statusCode}`);
        return;
      }
      res.setEncoding('utf8');
      // The line still arriving, in pieces joined once its newline comes: only each new piece is
      // looked at. Joined and split again at every read, a long line sent in small pieces cost
      // time quadratic in its length — a minute of the agent's event loop for 1 MiB in 64-byte
      // HTTP chunks from whatever listens on a wrong `socket`.
      let pieces: string[] = [];
      let pieceChars = 0;
      let skipping = false;
      res.on('data', (s: string) => {
        let from = 0;
        for (let nl = s.indexOf('\n'); nl >= 0; nl = s.indexOf('\n', from)) {
          if (skipping) skipping = false; // the rest of a line too long to be an event
          else {
            const l = pieces.length === 0 ? s.slice(from, nl) : pieces.join('') + s.slice(from, nl);
            if (l.trim() !== '') this.onEvent(gen, l);
          }
          pieces = [];
          pieceChars = 0;
          from = nl + 1;
        }
        if (from >= s.length || skipping) return;
        pieces.push(from === 0 ? s : s.slice(from));
        pieceChars += s.length - from;
        if (pieceChars > MAX_EVENT_CHARS) {
          // An event is a few hundred bytes: a "line" without end is not one (memory stays bounded).
          this.malformedEvent(pieces.join(''), `over ${MAX_EVENT_CHARS} characters`);
          pieces = [];
          pieceChars = 0;
          skipping = true;
        }
      });
      res.on('end', () => this.engineDown(gen, 'the events stream ended'));
      res.on('error', (err) => this.engineDown(gen, err.message));
      res.on('close', () => this.engineDown(gen, 'the events stream was cut'));
      void this.list(gen);
    });
    req.on('error', (err) => {
      clearTimeout(noAnswer);
      this.engineDown(gen, err.message);
    });
    this.events = req;
  }

  private async list(gen: number): Promise<void> {
    let list: unknown[];
    try {
      list = await engineRequest(this.socketPath, '/containers/json?all=1', 'list', this.answerTimeoutMs);
    } catch (err) {
      this.engineDown(gen, (err as Error).message);
      return;
    }
    if (gen !== this.generation || this.stopped) return;
    // Every element a container with an id: one that is not is an answer not to be trusted, an
    // error in status retried with backoff (not a TypeError that ends the agent, nor a container
    // left unread without a word).
    const bad = list.findIndex((c) => !isObject(c) || typeof c.Id !== 'string' || c.Id === '' || containerName(c.Names) === null);
    if (bad >= 0) {
      const c = list[bad];
      this.engineDown(gen, `GET /containers/json: element ${bad} is ${isObject(c) ? `a container without ${typeof c.Id !== 'string' || c.Id === '' ? 'an Id' : 'a name (Names)'}` : `${jsonKind(c)}, not a JSON object`}`);
      return;
    }
    this.connected = true;
    this.connectedAt = this.shared.clock();
    // The backoff and the memory of the error logged are reset once the connection has lasted
    // (engineDown): an engine that lists its containers and then answers a container's inspect
    // with garbage was otherwise asked again every restartMinMs, with two log lines each time.
    if (this.engineError !== null && !this.reachableTold) {
      this.reachableTold = true;
      this.shared.log.info({ source: this.key }, 'docker: engine reachable again');
    }
    this.engineError = null;
    const names = new Set<string>();
    const ids = new Set<string>();
    for (const c of list as Record<string, unknown>[]) {
      const id = c.Id as string;
      const name = containerName(c.Names)!;
      names.add(name);
      ids.add(id);
      if (!this.selector(name)) continue;
      const running = c.State === 'running';
      // A stopped container is read only to finish what it wrote after our stored position
      // (it stopped while the agent was away); never-seen stopped containers are left alone.
      if (!running) {
        let p: JsonValue | null = null;
        try {
          p = this.shared.sink.position(`docker:${name}`);
        } catch {
          /* unreadable: treated as never seen */
        }
        if (!isDockerPosition(p) || p.id !== id) continue;
      }
      void this.follow(gen, id);
    }
    for (const id of this.retries.keys()) if (!ids.has(id)) this.retries.delete(id); // removed meanwhile
    this.forgetRemoved(names);
  }

  /**
   * Drops the stored positions of this source's containers the engine no longer has (removed
   * while the agent was away, or while it was not connected): their logs went with them, and
   * without this a host running short-lived containers kept a row per container for good, each
   * listed by `status` (DECISIONS H35).
   */
  private forgetRemoved(names: ReadonlySet<string>): void {
    const sink = this.shared.sink;
    if (sink.positions === undefined || sink.forget === undefined) return;
    const reading = new Set([...this.streams.values()].map((c) => c.name));
    try {
      for (const { source } of sink.positions()) {
        if (!source.startsWith('docker:')) continue;
        const name = source.slice('docker:'.length);
        if (!names.has(name) && !reading.has(name) && this.selector(name)) sink.forget(source);
      }
    } catch (err) {
      this.shared.log.warn({ source: this.key, err: (err as Error).message }, 'docker: the positions of removed containers could not be dropped now (tried at the next connection)');
    }
  }

  /** A removed container's position, unless its name now belongs to another container. */
  private forgetContainer(name: string, id: string): void {
    const key = `docker:${name}`;
    try {
      const p = this.shared.sink.position(key);
      if (isDockerPosition(p) && p.id === id) this.shared.sink.forget?.(key);
    } catch {
      // kept: dropped at the next connection's listing
    }
  }

  private onEvent(gen: number, line: string): void {
    if (gen !== this.generation || this.stopped) return;
    let ev: unknown;
    try {
      ev = JSON.parse(line);
    } catch {
      ev = undefined;
    }
    if (!isObject(ev)) {
      this.malformedEvent(line, ev === undefined ? 'not JSON' : jsonKind(ev));
      return;
    }
    const actor = isObject(ev.Actor) ? ev.Actor : null;
    const attributes = actor !== null && isObject(actor.Attributes) ? actor.Attributes : null;
    const action = typeof ev.Action === 'string' ? ev.Action : ev.status;
    const id = typeof actor?.ID === 'string' && actor.ID !== '' ? actor.ID : typeof ev.id === 'string' && ev.id !== '' ? ev.id : null;
    if (id === null || (ev.Type !== undefined && ev.Type !== 'container')) return;
    const name = typeof attributes?.name === 'string' ? attributes.name : null;
    if (name !== null && !this.selector(name.replace(/^\//, ''))) return;
    if (action === 'start') {
      if (this.streams.has(id)) this.restartWanted.add(id); // the old stream has not ended yet
      else void this.follow(gen, id);
    }
    if (action === 'destroy') {
      // removed (docker rm, --rm): its position goes once its stream has ended (H35)
      const open = this.streams.get(id);
      if (open !== undefined) this.destroyed.add(open.id);
      else if (name !== null) this.forgetContainer(name.replace(/^\//, ''), id);
    }
    // die: the logs stream ends by itself.
  }

  /**
   * An events stream line that is not a JSON object: ignored, counted (status
   * `events_malformed`) and logged at most once a minute with the count and a short excerpt.
   */
  private malformedEvent(line: string, what: string): void {
    this.eventsMalformed++;
    const now = this.shared.clock();
    if (this.eventsMalformedToldAt !== 0 && now - this.eventsMalformedToldAt < 60_000) return;
    this.eventsMalformedToldAt = now;
    this.shared.log.warn(
      { source: this.key, events_malformed: this.eventsMalformed, excerpt: line.slice(0, 200) },
      `docker: an events stream line is ${what}, not a JSON object: ignored (said at most once a minute)`,
    );
  }

  private async follow(gen: number, id: string): Promise<void> {
    if (this.streams.has(id)) return;
    let info: Record<string, unknown>;
    const path = `/containers/${encodeURIComponent(id)}/json`;
    try {
      info = await engineRequest(this.socketPath, path, 'object', this.answerTimeoutMs);
    } catch (err) {
      if (err instanceof EngineError && err.statusCode === 404) return; // removed meanwhile
      this.engineDown(gen, (err as Error).message);
      return;
    }
    if (gen !== this.generation || this.stopped || this.streams.has(id)) return;
    const name = typeof info.Name === 'string' ? containerName(info.Name) : null;
    if (name === null || name === '') {
      this.engineDown(gen, `GET ${path}: the answer has no container name (Name)`);
      return;
    }
    if (!this.selector(name)) return;
    const fullId = typeof info.Id === 'string' && info.Id !== '' ? info.Id : id;
    const tty = isObject(info.Config) && info.Config.Tty === true;
    let c: ContainerStream;
    try {
      c = new ContainerStream(fullId, name, tty, this.shared, (cs, clean, error) => this.onStreamEnd(gen, cs, clean, error));
    } catch (err) {
      // The stored position could not be read (buffer storage): try again later.
      this.shared.log.error({ source: `docker:${name}`, err: (err as Error).message }, 'docker: cannot read the stored position');
      const t = setTimeout(() => {
        this.timers.delete(t);
        if (gen === this.generation && !this.stopped) void this.follow(gen, id);
      }, this.shared.retryMaxMs);
      t.unref?.();
      this.timers.add(t);
      return;
    }
    this.streams.set(id, c);
    this.last.set(fullId, c);
    if (this.paused) c.pause();
    // not at each retry of a container whose logs keep failing (logStreamError says those)
    const failing = this.retries.get(fullId)?.error ?? null;
    if (failing === null) this.shared.log.info({ source: c.source, since: c.since(), tty: c.tty }, 'docker: following container logs');
    c.open();
  }

  private onStreamEnd(gen: number, c: ContainerStream, clean: boolean, error: string | null): void {
    for (const [k, v] of this.streams) if (v === c) this.streams.delete(k);
    if (this.destroyed.delete(c.id)) this.forgetContainer(c.name, c.id);
    // Status keeps stopped containers, but not forever (containers come and go).
    if (this.last.size > 200) {
      for (const [k, v] of this.last) {
        if (this.last.size <= 100) break;
        if (![...this.streams.values()].includes(v)) this.last.delete(k);
      }
    }
    if (this.stopped || gen !== this.generation) return;
    const again = this.restartWanted.delete(c.id) || this.restartWanted.delete(c.id.slice(0, 12));
    // Asked about again after a backoff per container: the first delay is short (a clean end:
    // 100 ms; an error: restartMinMs), doubling while its streams keep ending within
    // STABLE_STREAM_MS, up to restartMaxMs; a stream that lasted starts the count afresh.
    const now = this.shared.clock();
    let r = this.retries.get(c.id);
    if (r !== undefined && c.responded && now - c.openedAt >= STABLE_STREAM_MS) {
      if (r.timer !== null) clearTimeout(r.timer);
      this.retries.delete(c.id);
      r = undefined;
    }
    if (r === undefined) {
      r = { ms: 0, error: null, timer: null, logged: null, loggedAt: 0, repeated: 0 };
      this.retries.set(c.id, r);
    }
    if (r.timer !== null) {
      // a retry still due (the container was followed again on its `start` event meanwhile): this one replaces it
      clearTimeout(r.timer);
      this.timers.delete(r.timer);
      r.timer = null;
    }
    const base = clean ? Math.min(100, this.restartMinMs) : this.restartMinMs;
    r.ms = r.ms === 0 ? base : Math.min(this.restartMaxMs, r.ms * 2);
    r.error = error;
    if (error !== null) this.logStreamError(c, r, error);
    const retry = r;
    // The container may still run (the stream was cut, or it restarted before we saw `die`): ask.
    const path = `/containers/${encodeURIComponent(c.id)}/json`;
    const t = setTimeout(() => {
      this.timers.delete(t);
      retry.timer = null;
      if (this.stopped || gen !== this.generation) return;
      void engineRequest(this.socketPath, path, 'object', this.answerTimeoutMs).then(
        (info) => {
          if (this.stopped || gen !== this.generation) return;
          if (!isObject(info.State) || typeof info.State.Running !== 'boolean') {
            this.engineDown(gen, `GET ${path}: the answer has no State.Running`);
            return;
          }
          if (info.State.Running || again) void this.follow(gen, c.id);
          else if (this.retries.get(c.id) === retry) this.retries.delete(c.id); // stopped: nothing to retry
        },
        (err: unknown) => {
          if (err instanceof EngineError && err.statusCode === 404) {
            if (this.retries.get(c.id) === retry) this.retries.delete(c.id); // removed
            return;
          }
          // Anything else as at follow(): an error in status, the engine asked again with backoff
          // (its listing follows the container again). Left to the events stream, a request with no
          // answer — a hung engine, whose events stream stays open and silent — or an HTTP error
          // was dropped: a running container was never asked about again, and nothing said so.
          this.engineDown(gen, (err as Error).message);
        },
      );
    }, r.ms);
    t.unref?.();
    this.timers.add(t);
    r.timer = t;
  }

  /**
   * A container's logs stream ended with an error (refused: HTTP 501 for a container without a
   * readable log driver; cut): logged when it differs from the container's last one logged, then
   * every ENGINE_ERROR_LOG_EVERY_MS with how many times it repeated. Status always has it.
   */
  private logStreamError(c: ContainerStream, r: ContainerRetry, error: string): void {
    const now = this.shared.clock();
    if (error === r.logged && now - r.loggedAt < ENGINE_ERROR_LOG_EVERY_MS) {
      r.repeated++;
      return;
    }
    const again = error === r.logged && r.repeated > 0 ? ` (the same ${r.repeated} more times since it was last logged)` : '';
    this.shared.log.warn(
      { source: c.source, retry_ms: r.ms, ...(again !== '' ? { repeated: r.repeated } : {}) },
      `docker: ${error}; retrying in ${r.ms} ms, less often while it fails${again}`,
    );
    r.logged = error;
    r.loggedAt = now;
    r.repeated = 0;
  }

  private engineDown(gen: number, message: string): void {
    if (gen !== this.generation || this.stopped) return;
    this.generation++; // ignore everything else from this connection
    if (this.connected && this.shared.clock() - this.connectedAt >= STABLE_STREAM_MS) {
      // it worked for a while: a new outage, told again and retried soon
      this.restartMs = 0;
      this.loggedEngineError = null;
    }
    this.connected = false;
    this.events?.destroy();
    this.events = null;
    for (const c of this.streams.values()) c.close();
    this.streams.clear();
    // Retries due belong to this connection (their timers do nothing now); the next listing follows again.
    for (const r of this.retries.values()) r.timer = null;
    this.engineError = `Docker Engine unreachable at ${this.socketPath}: ${message}${engineHint(this.socketPath, message)}`;
    this.restartMs = Math.min(this.restartMaxMs, this.restartMs === 0 ? this.restartMinMs : this.restartMs * 2);
    // Logged when it changes, then every 10 minutes (a host without Docker under a fleet-wide
    // config would log it at every retry, for good); status always has it (DECISIONS D24).
    const now = Date.now();
    if (this.engineError !== this.loggedEngineError || now - this.loggedEngineErrorAt >= ENGINE_ERROR_LOG_EVERY_MS) {
      this.loggedEngineError = this.engineError;
      this.loggedEngineErrorAt = now;
      this.reachableTold = false;
      this.shared.log.error({ source: this.key, retry_ms: this.restartMs }, `docker: ${this.engineError}; retrying`);
    }
    this.timer = setTimeout(() => this.connect(), this.restartMs);
    this.timer.unref?.();
  }
}

/** How often the same engine error (or the same error of one container's logs) is logged again while it lasts. */
const ENGINE_ERROR_LOG_EVERY_MS = 10 * 60_000;
/** An events stream line longer than this is not an event: dropped up to its newline, counted as malformed. */
const MAX_EVENT_CHARS = 1024 * 1024;
/** A container's logs stream that lasted this long restarts its retry backoff (as the custom source's STABLE_RUN_MS). */
export const STABLE_STREAM_MS = 10_000;

/** A container whose logs stream ended, asked about again after `ms`. */
interface ContainerRetry {
  ms: number;
  /** What ended its last stream (null: it ended by itself). */
  error: string | null;
  timer: NodeJS.Timeout | null;
  /** Rate-limited logging (logStreamError). */
  logged: string | null;
  loggedAt: number;
  repeated: number;
}

/** What to do when the Docker socket cannot be used: no Docker there, or this user may not use it. */
export function engineHint(socketPath: string, message: string): string {
  if (/EACCES|EPERM/.test(message)) {
    const user = currentUserName();
    return ` — the agent runs as ${user}, who may not use the Docker socket: add it to the docker group (usermod -aG docker ${user}, then restart the agent), or give the source a socket it may use`;
  }
  // `socket` names something that is not a socket (any path is accepted): say what it is and what to set.
  const setIt = `set the source's \`socket\` to the Docker Engine's unix socket (the default is ${DEFAULT_DOCKER_SOCKET})`;
  if (/ECONNREFUSED|ENOTSOCK|ENOTDIR|EPROTOTYPE/.test(message)) {
    const what = notASocket(socketPath);
    if (what !== null) return ` — ${socketPath} is ${what}, not a socket: ${setIt}`;
    if (/EPROTOTYPE/.test(message)) return ` — ${socketPath} is a datagram socket, not the Docker Engine's: ${setIt}`;
  }
  if (/ENOENT|ECONNREFUSED/.test(message)) return ` — is Docker running on this host? (no engine listens at ${socketPath}; a host without Docker can leave this source out of its config)`;
  // An engine that answered the events request and then not another one: hung, not another program.
  if (/no answer within/.test(message) && !message.startsWith('GET /events:')) return ` — is the Docker Engine at ${socketPath} hung? (\`docker info\` should answer at once)`;
  // Something listens there but does not speak HTTP, or says nothing (another program's socket).
  if (/Parse Error|HPE_|no answer within|^GET \/events: HTTP 404/.test(message)) return ` — what listens at ${socketPath} does not answer as a Docker Engine does (another program's socket?): ${setIt}`;
  return '';
}

/** What the file at `path` is when it is not a socket (a regular file, a directory, a FIFO, …); null for a socket or nothing there. */
function notASocket(path: string): string | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(path);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOTDIR' ? 'under a file that is not a directory' : null;
  }
  if (st.isSocket()) return null;
  if (st.isFile()) return 'a regular file';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return 'not a socket';
}

export interface ContainerStatus {
  [k: string]: JsonValue;
  name: string;
  id: string;
  tty: boolean;
  state: string;
  position: DockerPosition | null;
  last_error: string | null;
  lines_read: number;
}

export function createDockerSource(config: LogSourceConfig, deps: SourceDeps): LogSourceRunner {
  return new DockerSource(config, deps);
}
