// The docker source's leftovers from DECISIONS D29 and what was found checking them: the frame
// decoder's copying (a frame arriving in many reads was copied whole at each read), a logs stream
// that ends inside a frame, frame headers no Docker sends, a `socket` that is not a socket (a
// regular file, a directory, a FIFO) or a socket that does not answer as an engine, and an
// events line sent in small pieces.

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { createSource, DockerStreamDecoder, type DockerMessage, type DockerSource, type LogSourceRunner } from '../../../agent/sources/index.js';
import { FakeDocker, frame } from './fake-docker.js';
import { capturingLogger, messages, openBuffer, tempDir, waitFor } from './helpers.js';

const ts1 = '2024-06-15T12:00:01.000000001Z';

/**
 * Bytes of every Buffer made (Buffer.concat, Buffer.from, Buffer.alloc*) while `fn` runs: what
 * decoding costs in copies. (Buffer.concat makes its result with Buffer.allocUnsafe: counted twice.)
 */
function bytesCopiedWhile(fn: () => void): number {
  type Maker = (...a: unknown[]) => Buffer;
  const B = Buffer as unknown as Record<string, Maker>;
  const names = ['concat', 'from', 'alloc', 'allocUnsafe', 'allocUnsafeSlow'];
  const orig = names.map((n) => B[n]!);
  let bytes = 0;
  names.forEach((n, i) => {
    B[n] = function (this: unknown, ...a: unknown[]): Buffer {
      const r = orig[i]!.apply(this, a);
      bytes += r.length;
      return r;
    };
  });
  try {
    fn();
  } finally {
    names.forEach((n, i) => {
      B[n] = orig[i]!;
    });
  }
  return bytes;
}

function pieces(b: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let p = 0; p < b.length; p += size) out.push(b.subarray(p, p + size));
  return out;
}

const text = (ms: DockerMessage[]) => ms.map((m) => [m.stream, m.ts, m.content.toString('latin1'), m.complete]);

describe('docker decoder: a frame arriving in many reads is copied about once (D29 leftover)', () => {
  const MiB = 1 << 20;

  it('a 1 MiB frame in 1 KiB reads: about its own size copied, not the frame again at every read (1.6 GB before)', () => {
    const payload = Buffer.from(`${ts1} ${'y'.repeat(MiB - ts1.length - 2)}\n`);
    const reads = pieces(frame(1, payload), 1024);
    const d = new DockerStreamDecoder(false);
    const out: DockerMessage[] = [];
    const copied = bytesCopiedWhile(() => {
      for (const r of reads) out.push(...d.push(r));
    });
    expect(text(out)).toEqual([['stdout', ts1, 'y'.repeat(MiB - ts1.length - 2), true]]);
    expect(copied).toBeLessThan(4 * MiB);
  });

  it('a TTY (raw) line of 1 MiB in 16-byte reads: its 64 partial messages of 16 KiB, about 1 MiB copied (1.6 GB before)', () => {
    const reads = pieces(Buffer.from(`${ts1} ${'y'.repeat(MiB)}\n`), 16);
    const d = new DockerStreamDecoder(true);
    const out: DockerMessage[] = [];
    const copied = bytesCopiedWhile(() => {
      for (const r of reads) out.push(...d.push(r));
    });
    expect(out).toHaveLength(64);
    expect(out.map((m) => m.content.length)).toEqual(Array.from({ length: 64 }, () => 16384));
    expect(out.map((m) => m.complete)).toEqual([...Array.from({ length: 63 }, () => false), true]);
    expect(copied).toBeLessThan(4 * MiB);
  });

  it('many frames in one read are not copied at all; the same frames in reads of any size decode the same', () => {
    const frames = Buffer.concat(Array.from({ length: 200 }, (_, i) => frame(1 + (i % 2), Buffer.from(`${ts1} line ${i}\n`))));
    const whole = new DockerStreamDecoder(false);
    let out: DockerMessage[] = [];
    expect(bytesCopiedWhile(() => void (out = whole.push(frames)))).toBe(0);
    expect(out).toHaveLength(200);
    for (const size of [1, 3, 7, 8, 9, 64, 1000]) {
      const d = new DockerStreamDecoder(false);
      const got: DockerMessage[] = [];
      for (const r of pieces(frames, size)) got.push(...d.push(r));
      got.push(...d.end());
      expect(text(got), `reads of ${size}`).toEqual(text(out));
    }
  });
});

describe('docker decoder: hostile frames', () => {
  it('stream 0 (stdin) is read as stdout, 3 is the engine\'s error; any other type is no frame header: raw from there, said why', () => {
    const ok = new DockerStreamDecoder(false);
    expect(text(ok.push(Buffer.concat([frame(0, Buffer.from(`${ts1} from stdin\n`)), frame(3, Buffer.from('engine says no\n'))])))).toEqual([
      ['stdout', ts1, 'from stdin', true],
      ['system', null, 'engine says no', true],
    ]);
    expect(ok.corrupt).toBe(false);
    for (const type of [4, 7, 128, 255]) {
      const d = new DockerStreamDecoder(false);
      const out = d.push(Buffer.concat([frame(1, Buffer.from(`${ts1} good\n`)), frame(type, Buffer.from('x\n'))]));
      expect(d.corrupt).toBe(true);
      expect(d.corruptReason).toBe(`bytes ${type.toString(16).padStart(2, '0')}00000000000002 are not a frame header`);
      expect(out[0]).toMatchObject({ stream: 'stdout', ts: ts1, complete: true });
      const rest = [...out.slice(1), ...d.end()];
      expect(rest.every((m) => m.stream === 'stdout')).toBe(true); // read on as text
      expect(rest.map((m) => m.content.toString('latin1')).join('')).toMatch(/x$/);
    }
  });

  it('a body that ends inside a frame is said (cutShort): in its header, or in its payload; not between frames, nor in a raw stream', () => {
    const f = frame(1, Buffer.from(`${ts1} forty bytes or so\n`));
    const at = (cut: number) => {
      const d = new DockerStreamDecoder(false);
      d.push(Buffer.concat([frame(2, Buffer.from(`${ts1} before\n`)), f.subarray(0, cut)]));
      d.end();
      return d.cutShort;
    };
    expect(at(0)).toBeNull();
    expect(at(5)).toBe('5 of the 8 bytes of a frame header came');
    expect(at(20)).toBe(`20 of the ${f.length} bytes of a frame came`);
    expect(at(f.length)).toBeNull();
    const raw = new DockerStreamDecoder(true);
    expect(text(raw.push(Buffer.from(`${ts1} no newline yet`)))).toEqual([]);
    expect(text(raw.end())).toEqual([['stdout', ts1, 'no newline yet', false]]);
    expect(raw.cutShort).toBeNull();
  });
});

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
const runners: LogSourceRunner[] = [];
const closers: (() => Promise<void>)[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-dkl-'));
  buffer = openBuffer(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  for (const c of closers.splice(0)) await c();
  buffer.close();
  cleanup();
});

function start(socket: string, deps: Record<string, unknown> = {}): DockerSource {
  const r = createSource({ kind: 'docker', socket }, { buffer, retryMinMs: 10, retryMaxMs: 40, restartMinMs: 20, restartMaxMs: 100, ...deps }) as DockerSource;
  runners.push(r);
  r.start();
  return r;
}

describe('docker source: a logs stream that ends inside a frame', () => {
  it('is an error in status (not a clean end), logged once, read again from the position: the line before it stored once', async () => {
    const socket = join(dir, 'docker.sock');
    const docker = new FakeDocker(socket);
    await docker.listen();
    closers.push(() => docker.close());
    const id = docker.add('cut');
    const before = '2024-06-15T11:59:59.000000001Z'; // before the fake engine's own log times
    const whole = frame(1, Buffer.from(`${before} first line\n`));
    const cutFrame = frame(1, Buffer.from(`${before} the line cut short\n`));
    const cut = cutFrame.subarray(0, 20);
    // every logs request of it is answered with a whole frame, then the first 20 bytes of another, and the end
    docker.answer = (path) => (path.includes('/logs?') ? { status: 200, body: Buffer.concat([whole, cut]).toString('latin1') } : undefined);
    const { logged, logger } = capturingLogger();
    const r = start(socket, { logger });
    const said = `logs of cut: the stream ended inside a frame (20 of the ${cutFrame.length} bytes of a frame came): cut short; read again from the last position stored`;
    await waitFor(() => {
      const s = r.status();
      return s.state === 'error' && (s.last_error ?? '').startsWith(said);
    }, 5000, 'the cut frame said in status');
    expect(r.status().containers[0]).toMatchObject({ name: 'cut', state: 'error' });
    await waitFor(() => docker.requests.filter((q) => q.includes('/logs?')).length >= 3, 5000, 'asked again');
    expect(messages(buffer)).toEqual(['first line']);
    expect(r.status().lines_skipped).toBeGreaterThanOrEqual(1); // read again, skipped by its position
    expect(logged.filter((l) => l.msg.includes('inside a frame'))).toHaveLength(1);
    // the engine sends it whole: read
    docker.answer = null;
    docker.log(id, 'after\n');
    await waitFor(() => messages(buffer).includes('after'), 5000, 'read on');
    expect(messages(buffer)).toEqual(['first line', 'after']);
    await waitFor(() => r.status().state === 'reading', 5000, 'reading again');
    expect(r.status().last_error).toBeNull();
  });
});

describe('docker source: a `socket` that is not the Docker Engine\'s', () => {
  const setIt = "set the source's `socket` to the Docker Engine's unix socket (the default is /var/run/docker.sock)";

  it('a regular file, a directory, a FIFO, a path under a file: an error in status saying what it is and what to set, at once', async () => {
    const file = join(dir, 'file');
    writeFileSync(file, 'not a socket\n');
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const cases: [string, string][] = [
      [file, 'a regular file'],
      [folder, 'a directory'],
      [fifo, 'a FIFO (named pipe)'],
      [join(file, 'docker.sock'), 'under a file that is not a directory'],
    ];
    const rs = cases.map(([p]) => start(p));
    for (const [i, [p, what]] of cases.entries()) {
      await waitFor(() => rs[i]!.status().state === 'error', 5000, `${what}: error`);
      expect(rs[i]!.status().last_error).toMatch(new RegExp(`^Docker Engine unreachable at ${p}: connect E[A-Z]+ ${p} — `));
      expect(rs[i]!.status().last_error!.endsWith(` — ${p} is ${what}, not a socket: ${setIt}`)).toBe(true);
    }
    rmSync(fifo);
  });

  it('a socket that accepts and never answers: an error once the answer is overdue (it stayed `idle`, no error, for good)', async () => {
    const socket = join(dir, 'silent.sock');
    const held: net.Socket[] = [];
    const server = net.createServer((s) => void held.push(s));
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    closers.push(async () => {
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const r = start(socket, { dockerAnswerTimeoutMs: 200 });
    await waitFor(() => r.status().state === 'error', 5000, 'no answer said');
    expect(r.status().last_error).toBe(`Docker Engine unreachable at ${socket}: GET /events: no answer within 200 ms — what listens at ${socket} does not answer as a Docker Engine does (another program's socket?): ${setIt}`);
  });

  it('a socket that answers something other than HTTP, or HTTP without /events: the same hint', async () => {
    const socket = join(dir, 'garbage.sock');
    const conns = new Set<net.Socket>();
    const server = net.createServer((s) => {
      conns.add(s);
      s.on('close', () => conns.delete(s));
      s.end('hello, this is not HTTP\r\n\r\n');
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    closers.push(async () => {
      for (const c of conns) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const r = start(socket);
    await waitFor(() => r.status().state === 'error', 5000, 'garbage said');
    expect(r.status().last_error).toMatch(/: Parse Error: .* — what listens at .*garbage\.sock does not answer as a Docker Engine does \(another program's socket\?\): set the source's `socket`/);

    const socket2 = join(dir, 'web.sock');
    const web = http.createServer((_q, res) => {
      res.writeHead(404);
      res.end('not found');
    });
    await new Promise<void>((resolve) => web.listen(socket2, resolve));
    closers.push(async () => {
      web.closeAllConnections();
      await new Promise<void>((resolve) => web.close(() => resolve()));
    });
    const r2 = start(socket2);
    await waitFor(() => r2.status().state === 'error', 5000, '404 said');
    expect(r2.status().last_error).toBe(`Docker Engine unreachable at ${socket2}: GET /events: HTTP 404 — what listens at ${socket2} does not answer as a Docker Engine does (another program's socket?): ${setIt}`);
  });
});

describe('docker source: an events line sent in small pieces', () => {
  it('a line of over 1 MiB in 128-byte HTTP chunks is dropped and counted in well under a second of work (a minute of the event loop before)', async () => {
    const socket = join(dir, 'events.sock');
    const server = http.createServer((req, res) => {
      if ((req.url ?? '').startsWith('/events')) {
        res.writeHead(200);
        res.flushHeaders();
        const piece = 'x'.repeat(128);
        let i = 0;
        const more = (): void => {
          while (i < (1.2 * (1 << 20)) / 128) {
            i++;
            if (!res.write(piece)) {
              res.once('drain', more);
              return;
            }
          }
          res.write('\n');
        };
        more();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('[]');
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const r = start(socket);
    const t0 = Date.now();
    await waitFor(() => r.status().events_malformed === 1, 20_000, 'the long line counted');
    expect(Date.now() - t0).toBeLessThan(5000); // ~0.5 s here; the quadratic join took ~30 s
    expect(r.status()).toMatchObject({ state: 'waiting', last_error: null });
  });
});
