// A fake Docker Engine API on a unix socket, for the docker source tests. It implements
// what the source uses: GET /events (container start/die/destroy, streamed), /containers/json,
// /containers/{id}/json and /containers/{id}/logs?follow&timestamps&since — multiplexed
// frames for non-TTY containers, a raw stream for TTY ones — and records every request.
// Frames can be written in pieces (header split, payload split) with pauses between them
// so the client sees them in separate reads.

import { randomBytes } from 'node:crypto';
import { existsSync, unlinkSync } from 'node:fs';
import * as http from 'node:http';
import type { Socket } from 'node:net';

export interface FakeLog {
  stream: 1 | 2;
  /** Docker timestamp, 9-digit fraction. */
  ts: string;
  /** The message content, with its newline (a partial message has none). */
  content: Buffer;
}

interface Container {
  id: string;
  name: string;
  tty: boolean;
  running: boolean;
  logs: FakeLog[];
  followers: Set<http.ServerResponse>;
  /** The logs endpoint answers this error (a container whose log driver cannot be read: `--log-driver none`). */
  logsError: { status: number; message: string } | null;
}

const BASE_S = 1_718_452_800; // 2024-06-15T12:00:00Z

export function dockerTs(ns: bigint): string {
  const s = ns / 1_000_000_000n;
  const iso = new Date(Number(s) * 1000).toISOString().slice(0, 19);
  return `${iso}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}Z`;
}

export function frame(stream: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h[0] = stream;
  h.writeUInt32BE(payload.length, 4);
  return Buffer.concat([h, payload]);
}

export class FakeDocker {
  readonly requests: string[] = [];
  /** Date.now() of each request, in the order of `requests`. */
  readonly requestTimes: number[] = [];
  /**
   * A misbehaving engine: answers a request (path with query) with this status and raw body
   * when it returns one (not for /events).
   */
  answer: ((path: string) => { status: number; body: string } | undefined) | null = null;
  private server: http.Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly containers = new Map<string, Container>();
  private readonly eventStreams = new Set<http.ServerResponse>();
  /** Next log timestamp: 100 ms apart, so ten messages share each second. */
  private clockNs = BigInt(BASE_S) * 1_000_000_000n + 123_456_789n;
  /** Byte counts a frame/raw message is cut into when written live (a pause between pieces). */
  splitPlan: number[] = [];
  /** Serialises live writes so pieces of different messages never interleave. */
  private writing: Promise<void> = Promise.resolve();

  constructor(readonly socketPath: string) {}

  async listen(): Promise<void> {
    if (existsSync(this.socketPath)) unlinkSync(this.socketPath);
    const server = http.createServer((req, res) => this.handle(req, res));
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(this.socketPath, resolve));
    this.server = server;
  }

  /** The engine goes away: every connection is cut and the socket closed. */
  async close(): Promise<void> {
    const s = this.server;
    this.server = null;
    for (const sock of this.sockets) sock.destroy();
    this.eventStreams.clear();
    for (const c of this.containers.values()) c.followers.clear();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  add(name: string, opts: { tty?: boolean; running?: boolean } = {}): string {
    const id = randomBytes(32).toString('hex');
    this.containers.set(id, { id, name, tty: opts.tty ?? false, running: opts.running ?? true, logs: [], followers: new Set(), logsError: null });
    return id;
  }

  start(id: string): void {
    const c = this.containers.get(id)!;
    c.running = true;
    this.event('start', c);
  }

  stop(id: string): void {
    const c = this.containers.get(id)!;
    c.running = false;
    void this.writing.then(() => {
      for (const r of c.followers) r.end();
      c.followers.clear();
      this.event('die', c);
    });
  }

  /**
   * `docker rm -f`: stopped if it runs (its streams end, `die`), then gone (`destroy`).
   * `eventsFirst`: the events reach the client before its logs stream ends (they travel on
   * another connection).
   */
  remove(id: string, opts: { eventsFirst?: boolean } = {}): void {
    const c = this.containers.get(id)!;
    if (opts.eventsFirst === true) {
      c.running = false;
      this.containers.delete(id);
      this.event('die', c);
      this.event('destroy', c);
      setTimeout(() => {
        for (const r of c.followers) r.end();
        c.followers.clear();
      }, 50);
      return;
    }
    if (c.running) this.stop(id);
    void this.writing.then(() => {
      this.containers.delete(id);
      this.event('destroy', c);
    });
  }

  /** Next timestamp (advances 100 ms). */
  nextTs(): string {
    const ts = dockerTs(this.clockNs);
    this.clockNs += 100_000_000n;
    return ts;
  }

  /** Logs one message (content as given: with "\n" for a full line, without for a partial). */
  log(id: string, content: string | Buffer, stream: 1 | 2 = 1): FakeLog {
    const c = this.containers.get(id)!;
    const l: FakeLog = { stream, ts: this.nextTs(), content: typeof content === 'string' ? Buffer.from(content) : content };
    c.logs.push(l);
    for (const r of c.followers) this.writeLive(r, this.encode(c, l));
    return l;
  }

  /** Logs a line the way Docker's copier does: 16 KiB partial messages, the last with the newline. */
  logLong(id: string, line: string, stream: 1 | 2 = 1): void {
    const b = Buffer.from(line);
    let p = 0;
    while (b.length - p > 16384) {
      this.log(id, b.subarray(p, p + 16384), stream);
      p += 16384;
    }
    this.log(id, Buffer.concat([b.subarray(p), Buffer.from('\n')]), stream);
  }

  /** Writes bytes as they are to the container's live log streams (a stream that is not Docker's framing). */
  writeBytes(id: string, bytes: Buffer): void {
    for (const r of this.containers.get(id)!.followers) this.writeLive(r, bytes);
  }

  /** The container's logs endpoint answers an HTTP error from now on (null: its logs again). */
  failLogs(id: string, error: { status: number; message: string } | null): void {
    this.containers.get(id)!.logsError = error;
  }

  /** Cuts the container's live logs streams (the connection destroyed mid-stream). */
  cutLogs(id: string): void {
    const c = this.containers.get(id)!;
    for (const r of c.followers) r.socket?.destroy();
    c.followers.clear();
  }

  /** Writes a raw line to every events stream (with its newline). */
  writeEvent(raw: string): void {
    for (const r of this.eventStreams) r.write(raw + '\n');
  }

  /** Resolves once every live write issued so far is on the wire. */
  flushed(): Promise<void> {
    return this.writing;
  }

  private encode(c: Container, l: FakeLog): Buffer {
    const payload = Buffer.concat([Buffer.from(`${l.ts} `), l.content]);
    return c.tty ? payload : frame(l.stream, payload);
  }

  private writeLive(res: http.ServerResponse, bytes: Buffer): void {
    this.writing = this.writing.then(async () => {
      let p = 0;
      for (const n of this.splitPlan) {
        if (p + n >= bytes.length) break;
        res.write(bytes.subarray(p, p + n));
        p += n;
        await new Promise((r) => setTimeout(r, 15));
      }
      res.write(bytes.subarray(p));
      await new Promise((r) => setTimeout(r, 1));
    });
  }

  private event(action: 'start' | 'die' | 'destroy', c: Container): void {
    const ev = { status: action, id: c.id, from: 'img', Type: 'container', Action: action, Actor: { ID: c.id, Attributes: { name: c.name, image: 'img' } }, time: BASE_S, timeNano: 0 };
    for (const r of this.eventStreams) r.write(JSON.stringify(ev) + '\n');
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://docker');
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    this.requestTimes.push(Date.now());
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/events') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
      this.eventStreams.add(res);
      res.on('close', () => this.eventStreams.delete(res));
      return;
    }
    const odd = url.pathname === '/events' ? undefined : this.answer?.(`${url.pathname}${url.search}`);
    if (odd !== undefined) {
      res.writeHead(odd.status, { 'Content-Type': 'application/json' });
      res.end(odd.body);
      return;
    }
    if (url.pathname === '/containers/json') {
      const all = url.searchParams.get('all') === '1';
      json(200, [...this.containers.values()].filter((c) => all || c.running).map((c) => ({ Id: c.id, Names: [`/${c.name}`], State: c.running ? 'running' : 'exited' })));
      return;
    }
    const m = /^\/containers\/([^/]+)\/(json|logs)$/.exec(url.pathname);
    const c = m ? [...this.containers.values()].find((x) => x.id === m[1] || x.id.startsWith(m[1]!)) : undefined;
    if (!m || !c) {
      json(404, { message: `No such container: ${m?.[1] ?? url.pathname}` });
      return;
    }
    if (m[2] === 'json') {
      json(200, { Id: c.id, Name: `/${c.name}`, Config: { Tty: c.tty }, State: { Running: c.running, Status: c.running ? 'running' : 'exited' } });
      return;
    }
    if (c.logsError !== null) {
      json(c.logsError.status, { message: c.logsError.message });
      return;
    }
    const since = Number(url.searchParams.get('since') ?? '0');
    res.writeHead(200, { 'Content-Type': c.tty ? 'application/vnd.docker.raw-stream' : 'application/vnd.docker.multiplexed-stream' });
    res.flushHeaders();
    for (const l of c.logs) {
      if (Date.parse(l.ts.slice(0, 19) + 'Z') / 1000 >= Math.floor(since)) res.write(this.encode(c, l));
    }
    if (url.searchParams.get('follow') === '1' && c.running) {
      c.followers.add(res);
      res.on('close', () => c.followers.delete(res));
    } else res.end();
  }
}
