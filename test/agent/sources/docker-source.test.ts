import { existsSync, unlinkSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { BufferStorageError } from '../../../agent/buffer/errors.js';
import {
  createSource,
  createSourceManager,
  DOCKER_PARTIAL_BYTES,
  DockerStreamDecoder,
  MAX_FRAME_BYTES,
  dockerTsNanos,
  formatNanos,
  sinkFromBuffer,
  type DockerMessage,
  type DockerSource,
  type LogSourceRunner,
  type SourceSink,
} from '../../../agent/sources/index.js';
import { MAX_ENGINE_ANSWER_BYTES } from '../../../agent/sources/docker.source.js';
import { FakeDocker, frame } from './fake-docker.js';
import { allEntries, capturingLogger, messages, openBuffer, sleep, tempDir, waitFor } from './helpers.js';

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let docker: FakeDocker;
let socket: string;
const runners: LogSourceRunner[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = tempDir('cortex-dk-'));
  buffer = openBuffer(dir);
  socket = join(dir, 'docker.sock');
  docker = new FakeDocker(socket);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  await docker.close();
  buffer.close();
  cleanup();
});

function start(extra: Record<string, unknown> = {}, deps: Record<string, unknown> = {}): DockerSource {
  const r = createSource({ kind: 'docker', socket, ...extra }, { buffer, retryMinMs: 10, retryMaxMs: 40, restartMinMs: 20, restartMaxMs: 100, ...deps }) as DockerSource;
  runners.push(r);
  r.start();
  return r;
}

async function stopRunner(r: LogSourceRunner): Promise<void> {
  await r.stop();
  runners.splice(runners.indexOf(r), 1);
}

const logsRequests = () => docker.requests.filter((r) => r.includes('/logs?'));

/** Concatenated decoder output per (stream, ts, complete) for comparing split decodings. */
function decodeAll(tty: boolean, pieces: Buffer[]): { stream: string; ts: string | null; content: string; complete: boolean }[] {
  const d = new DockerStreamDecoder(tty);
  const out: DockerMessage[] = [];
  for (const p of pieces) out.push(...d.push(p));
  out.push(...d.end());
  return out.map((m) => ({ stream: m.stream, ts: m.ts, content: m.content.toString('utf8'), complete: m.complete }));
}

describe('docker: stream decoding', () => {
  const ts1 = '2024-06-15T12:00:01.000000001Z';
  const ts2 = '2024-06-15T12:00:01.500000000Z';

  it('multiplexed frames split at every byte (header split across reads, payload split)', () => {
    const body = Buffer.concat([
      frame(1, Buffer.from(`${ts1} hello out\n`)),
      frame(2, Buffer.from(`${ts2} héllo err\n`)),
      frame(1, Buffer.from(`${ts2} partial`)),
      frame(1, Buffer.from(`${ts2} rest\n`)),
    ]);
    const whole = decodeAll(false, [body]);
    expect(whole).toEqual([
      { stream: 'stdout', ts: ts1, content: 'hello out', complete: true },
      { stream: 'stderr', ts: ts2, content: 'héllo err', complete: true },
      { stream: 'stdout', ts: ts2, content: 'partial', complete: false },
      { stream: 'stdout', ts: ts2, content: 'rest', complete: true },
    ]);
    for (let a = 1; a < body.length; a++) {
      for (const b of [a + 1, a + 3, a + 9]) {
        if (b >= body.length) continue;
        expect(decodeAll(false, [body.subarray(0, a), body.subarray(a, b), body.subarray(b)])).toEqual(whole);
      }
    }
    // one byte at a time
    expect(decodeAll(false, [...body].map((x) => Buffer.from([x])))).toEqual(whole);
  });

  it('raw (TTY) stream: lines end at LF; a message of exactly 16384 bytes without LF is partial', () => {
    const long = 'x'.repeat(16384);
    const body = Buffer.from(`${ts1} one\r\n${ts1} ${long}${ts2} tail\r\n${ts2} ${'y'.repeat(16384)}\n${ts2} last-no-newline`);
    const whole = decodeAll(true, [body]);
    expect(whole.map((m) => [m.ts, m.content.length, m.complete])).toEqual([
      [ts1, 4, true], // "one\r"
      [ts1, 16384, false],
      [ts2, 5, true],
      [ts2, 16384, true], // exactly 16384 bytes followed by LF: a whole line
      [ts2, 15, false], // flushed at the end of the body
    ]);
    for (const cut of [1, 10, 31, 40, 16384, 16420, 16425, body.length - 3]) {
      expect(decodeAll(true, [body.subarray(0, cut), body.subarray(cut)])).toEqual(whole);
    }
  });

  it('a stream that is not multiplexed after all (bad header) is decoded as raw', () => {
    const d = new DockerStreamDecoder(false);
    const out = d.push(Buffer.from(`${ts1} tty line\n`));
    expect(d.corrupt).toBe(true);
    expect(d.corruptReason).toBe('bytes 323032342d30362d are not a frame header'); // "2024-06-"
    expect(out.map((m) => m.content.toString())).toEqual(['tty line']);
  });

  it('a frame header declaring more than Docker ever frames is not waited for: raw from there, nothing held (H31)', () => {
    const d = new DockerStreamDecoder(false);
    const good = frame(1, Buffer.from(`${ts1} framed line\n`));
    const huge = Buffer.from([1, 0, 0, 0, 0x7f, 0xff, 0xff, 0xf0]); // 2 GiB declared
    const out = d.push(Buffer.concat([good, huge, Buffer.from(` after the header\n${ts2} next line\n`)]));
    expect(d.corrupt).toBe(true);
    expect(d.corruptReason).toBe("a frame header declares 2147483632 bytes (Docker's frames hold at most 16 KiB)");
    expect(out.map((m) => [m.ts, m.content.toString('latin1'), m.complete])).toEqual([
      [ts1, 'framed line', true],
      [null, '\x01\x00\x00\x00\x7f\xff\xff\xf0 after the header', true],
      [ts2, 'next line', true],
    ]);
    // nothing waits for the declared payload: a megabyte more comes out as it arrives
    const more = d.push(Buffer.from('x'.repeat(1 << 20)));
    expect(more.reduce((n, m) => n + m.content.length, 0)).toBeGreaterThanOrEqual((1 << 20) - DOCKER_PARTIAL_BYTES);
    // a frame of MAX_FRAME_BYTES is still a frame
    const big = `${ts1} ${'y'.repeat(MAX_FRAME_BYTES - ts1.length - 2)}\n`;
    expect(decodeAll(false, [frame(1, Buffer.from(big))])).toEqual([{ stream: 'stdout', ts: ts1, content: big.slice(ts1.length + 1, -1), complete: true }]);
  });

  it('timestamps: nanosecond precision, offsets, formatting', () => {
    expect(dockerTsNanos('2024-06-15T12:00:01.123456789Z')).toBe(1718452801123456789n);
    expect(dockerTsNanos('2024-06-15T12:00:01Z')).toBe(1718452801000000000n);
    expect(dockerTsNanos('2024-06-15T14:00:01.5+02:00')).toBe(1718452801500000000n);
    expect(dockerTsNanos('garbage')).toBeNull();
    expect(formatNanos(1718452801000000007n)).toBe('2024-06-15T12:00:01.000000007Z');
  });
});

describe('docker source (fake Engine API on a unix socket)', () => {
  it('reads stdout and stderr of a running container; frames written in awkward pieces; stderr → err unless parsed; labels, metadata', async () => {
    await docker.listen();
    const id = docker.add('web-1');
    docker.log(id, 'before start\n');
    const r = start({ labels: { role: 'web' } });
    await waitFor(() => messages(buffer).length === 1, 5000, 'history');
    docker.splitPlan = [3, 4, 5, 7]; // header split 3+4+1, then the payload in pieces
    docker.log(id, 'plain out\n');
    docker.log(id, 'plain err\n', 2);
    docker.log(id, '<12>1 2024-06-15T12:00:00.000Z host app 42 - - a warning on stderr\n', 2);
    docker.log(id, '{"level":"debug","msg":"json err"}\n', 2);
    docker.log(id, 'héllo ✓ ünïcode\n');
    await waitFor(() => messages(buffer).length === 6, 5000, 'live lines');
    const es = allEntries(buffer);
    expect(es.map((e) => [e.message, e.severity])).toEqual([
      ['before start', 'info'],
      ['plain out', 'info'],
      ['plain err', 'err'],
      ['a warning on stderr', 'warning'],
      ['json err', 'debug'],
      ['héllo ✓ ünïcode', 'info'],
    ]);
    expect(es[1]).toMatchObject({
      source: 'docker:web-1', ts: '2024-06-15T12:00:00.223Z',
      metadata: { container_id: id.slice(0, 12), stream: 'stdout', labels: { role: 'web' } },
    });
    expect(es[2]!.metadata).toMatchObject({ stream: 'stderr' });
    expect(es[3]).toMatchObject({ app_name: 'app', process_id: '42', facility: 'user' });
    const pos = buffer.getSourcePosition('docker:web-1') as Record<string, string>;
    expect(pos).toMatchObject({ id, stdout: '2024-06-15T12:00:00.623456789Z', stderr: '2024-06-15T12:00:00.523456789Z' });
    expect(r.status()).toMatchObject({ kind: 'docker', key: 'docker:*', last_error: null, lines_read: 6, position: { 'web-1': pos } });
    expect(r.status().containers).toEqual([expect.objectContaining({ name: 'web-1', tty: false, state: 'reading' })]);
    expect(logsRequests()[0]).toMatch(/follow=1&stdout=1&stderr=1&timestamps=1&since=0$/);
  });

  it('a 40 KiB line split by Docker into 16 KiB partial messages is one entry (multiplexed and TTY)', async () => {
    await docker.listen();
    const a = docker.add('mux');
    const t = docker.add('tty', { tty: true });
    const line = Array.from({ length: 40 * 1024 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    docker.logLong(a, line);
    docker.logLong(t, line + '\r'); // a TTY line ends in CRLF
    docker.log(t, 'tty short\r\n');
    const r = start();
    await waitFor(() => messages(buffer).length === 3, 5000, 'long lines');
    docker.splitPlan = [5000, 8000];
    docker.logLong(a, 'B'.repeat(40 * 1024)); // live, in pieces
    await waitFor(() => messages(buffer).length === 4, 5000, 'live long line');
    const es = allEntries(buffer);
    const bySource = (s: string) => es.filter((e) => e.source === s).map((e) => e.message);
    expect(bySource('docker:mux')).toEqual([line, 'B'.repeat(40 * 1024)]);
    expect(bySource('docker:tty')).toEqual([line, 'tty short']);
    expect(es.every((e) => !(e.metadata as Record<string, unknown>).split)).toBe(true);
    expect(r.status().containers.find((c) => c.name === 'tty')).toMatchObject({ tty: true });
  });

  it('lines over 65536 code points are split into parts (D8)', async () => {
    await docker.listen();
    const id = docker.add('big');
    docker.logLong(id, 'z'.repeat(70_000));
    start();
    await waitFor(() => messages(buffer).length === 2, 5000);
    const es = allEntries(buffer);
    expect(es.map((e) => e.message.length)).toEqual([65536, 70_000 - 65536]);
    expect(es.map((e) => (e.metadata as Record<string, unknown>).split)).toEqual([{ part: 1, more: true }, { part: 2, more: false }]);
  });

  it('follows containers announced by events; path selects by name or glob; filter applies to lines', async () => {
    await docker.listen();
    const db = docker.add('db');
    docker.log(db, 'db line\n');
    const r = start({ path: 'web-*', filter: 'keep' });
    await waitFor(() => docker.requests.some((q) => q.startsWith('GET /containers/json')), 5000);
    await sleep(50);
    const w = docker.add('web-2', { running: false });
    docker.log(w, 'keep: logged before start\n');
    docker.start(w);
    await waitFor(() => messages(buffer).length === 1, 5000, 'new container');
    docker.log(w, 'drop me\n');
    docker.log(w, 'keep: live\n');
    await waitFor(() => messages(buffer).length === 2, 5000);
    expect(messages(buffer)).toEqual(['keep: logged before start', 'keep: live']);
    expect(allEntries(buffer).every((e) => e.source === 'docker:web-2')).toBe(true);
    expect(r.status()).toMatchObject({ key: 'docker:web-*', lines_filtered: 1 });
    expect(logsRequests().some((q) => q.includes(db))).toBe(false);
    // a filtered line still advances the position
    docker.log(w, 'drop me too\n');
    await waitFor(() => (buffer.getSourcePosition('docker:web-2') as { stdout: string }).stdout === '2024-06-15T12:00:00.523456789Z', 5000, 'position');
    expect(messages(buffer)).toHaveLength(2);
    expect(r.status().lines_filtered).toBe(2);
  });

  it('restart with the persisted position: since = whole second, lines at or before it skipped (no duplicate, no loss)', async () => {
    await docker.listen();
    const id = docker.add('app');
    for (let i = 0; i < 5; i++) docker.log(id, `a${i}\n`); // 12:00:00.1 .. 12:00:00.5
    const r1 = start({ path: 'app' });
    await waitFor(() => messages(buffer).length === 5, 5000);
    await stopRunner(r1);
    for (let i = 5; i < 12; i++) docker.log(id, `a${i}\n`, i % 2 === 0 ? 1 : 2); // same second, then the next one
    const r2 = start({ path: 'app' });
    await waitFor(() => messages(buffer).length === 12, 5000);
    await sleep(100);
    expect(messages(buffer)).toEqual(Array.from({ length: 12 }, (_, i) => `a${i}`));
    expect(logsRequests().at(-1)).toMatch(/since=1718452800$/);
    expect(r2.status()).toMatchObject({ lines_skipped: 5 });

    // The container stops (its stream ends) and is restarted: it resumes from its position.
    docker.stop(id);
    await waitFor(() => r2.status().containers[0]!.state === 'stopped', 5000, 'stream end');
    docker.log(id, 'after restart\n');
    docker.start(id);
    await waitFor(() => messages(buffer).length === 13, 5000, 'restarted container');
    await sleep(100);
    expect(messages(buffer).slice(-2)).toEqual(['a11', 'after restart']);
    expect(logsRequests()).toHaveLength(3);
  });

  it('a removed container\'s position is dropped (destroy event, or gone at the next listing); a stopped one keeps it; a name taken by a new container is not touched (H35)', async () => {
    await docker.listen();
    const keys = () => buffer.sourcePositions().map((p) => p.source).sort();
    const ids = ['a', 'b', 'c', 'd', 'e'].map((n) => docker.add(`job-${n}`));
    for (const id of ids) docker.log(id, 'line\n');
    const r1 = start({ path: 'job-*' });
    await waitFor(() => messages(buffer).length === 5, 5000);
    expect(keys()).toEqual(['docker:job-a', 'docker:job-b', 'docker:job-c', 'docker:job-d', 'docker:job-e']);
    // removed while followed (docker rm -f, or --rm): dropped once its stream has ended
    docker.remove(ids[0]!);
    await waitFor(() => !keys().includes('docker:job-a'), 5000, 'job-a dropped');
    // the same when the events arrive before the end of its logs stream
    docker.remove(ids[4]!, { eventsFirst: true });
    await waitFor(() => !keys().includes('docker:job-e'), 5000, 'job-e dropped');
    // stopped, not removed: kept (it may start again and resume)
    docker.stop(ids[1]!);
    await waitFor(() => r1.status().containers.find((c) => c.name === 'job-b')?.state === 'stopped', 5000, 'job-b stopped');
    // removed while the agent is away: dropped at the next listing of the containers
    await stopRunner(r1);
    docker.remove(ids[2]!);
    const again = docker.add('job-d-other'); // another container, not of a removed one
    docker.log(again, 'other\n');
    start({ path: 'job-*' });
    await waitFor(() => keys().join() === ['docker:job-b', 'docker:job-d', 'docker:job-d-other'].join(), 5000, 'job-c dropped');
    // a new container that took a removed one's name keeps its own position
    docker.remove(ids[3]!);
    await waitFor(() => !keys().includes('docker:job-d'), 5000, 'job-d dropped');
    const reborn = docker.add('job-d', { running: false });
    docker.log(reborn, 'reborn\n');
    docker.start(reborn);
    await waitFor(() => messages(buffer).includes('reborn'), 5000, 'reborn read');
    expect(keys()).toEqual(['docker:job-b', 'docker:job-d', 'docker:job-d-other']);
    expect((buffer.getSourcePosition('docker:job-d') as { id: string }).id).toBe(reborn);
  });

  it('a frame header declaring gigabytes: said once, the stream read on as text, the agent not held (H31)', async () => {
    await docker.listen();
    const id = docker.add('odd');
    docker.log(id, 'first\n');
    const warns: string[] = [];
    const logger = { info: () => undefined, warn: (_o: object, msg = '') => void warns.push(msg), error: () => undefined };
    const r = start({}, { logger });
    await waitFor(() => messages(buffer).length === 1, 5000, 'first line');
    docker.writeBytes(id, Buffer.concat([Buffer.from([1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]), Buffer.from(' after a bad header\n')]));
    await waitFor(() => messages(buffer).length === 2, 5000, 'the text after the header');
    expect(messages(buffer)[1]).toMatch(/ after a bad header$/);
    const said = `logs of odd are not a multiplexed stream: a frame header declares 4294967295 bytes (Docker's frames hold at most 16 KiB); read as plain text from there`;
    expect(warns).toEqual([`docker: ${said}`]);
    expect(r.status().last_error).toBe(said);
    docker.writeBytes(id, Buffer.from('more text\n'));
    await waitFor(() => messages(buffer).length === 3, 5000, 'read on');
    expect(messages(buffer)[2]).toBe('more text');
    expect(warns).toHaveLength(1);
  });

  it('a partial line pending when the source stops is read again whole, not cut', async () => {
    await docker.listen();
    const id = docker.add('p');
    docker.log(id, 'one\n');
    const r1 = start();
    await waitFor(() => messages(buffer).length === 1, 5000);
    docker.log(id, Buffer.alloc(16384, 'q')); // first partial of a long line
    await docker.flushed();
    await sleep(100);
    await stopRunner(r1);
    expect(buffer.getSourcePosition('docker:p')).toMatchObject({ stdout: '2024-06-15T12:00:00.223456788Z' });
    docker.log(id, 'end\n');
    start();
    await waitFor(() => messages(buffer).length === 2, 5000);
    expect(messages(buffer)[1]).toBe('q'.repeat(16384) + 'end');
  });

  it('engine down: clear last_error, retried with backoff; engine up: reads; other sources unaffected', async () => {
    const f = join(dir, 'f.log');
    writeFileSync(f, 'file line\n');
    const errors: string[] = [];
    const logger = { info: () => undefined, warn: () => undefined, error: (_o: object, msg = '') => void errors.push(msg) };
    const m = createSourceManager({ buffer, pollMs: 20, restartMinMs: 20, restartMaxMs: 50, logger });
    m.apply([{ kind: 'docker', socket }, { kind: 'file', path: f }]);
    await waitFor(() => messages(buffer).includes('file line'), 5000);
    await waitFor(() => (m.status()[0]!.last_error ?? '').length > 0, 5000);
    expect(m.status()[0]!.last_error).toMatch(/Docker Engine unreachable at .*docker\.sock: .*ENOENT.* — is Docker running on this host\? \(no engine listens at .*docker\.sock; a host without Docker can leave this source out of its config\)/);
    expect(m.status()[0]).toMatchObject({ kind: 'docker', state: 'error' });
    // retried every 20-50 ms, logged once (D24)
    await sleep(300);
    expect(errors.filter((e) => e.startsWith('docker: Docker Engine unreachable'))).toHaveLength(1);

    await docker.listen();
    const id = docker.add('late');
    docker.log(id, 'engine is up\n');
    await waitFor(() => messages(buffer).includes('engine is up'), 5000, 'engine up');
    expect(m.status()[0]!.last_error).toBeNull();

    // goes away again mid-stream, and comes back: nothing lost or duplicated
    await docker.close();
    await waitFor(() => /unreachable/.test(m.status()[0]!.last_error ?? ''), 5000, 'down again');
    expect(errors.filter((e) => e.startsWith('docker: Docker Engine unreachable'))).toHaveLength(2); // a new outage is told again
    docker.log(id, 'while down\n');
    await docker.listen();
    await waitFor(() => messages(buffer).includes('while down'), 5000, 'back up');
    await sleep(100);
    expect(messages(buffer).filter((x) => x !== 'file line')).toEqual(['engine is up', 'while down']);
    await m.close();
  });

  it('a socket this user may not use (EACCES): names the user and the docker group', async () => {
    const { engineHint } = await import('../../../agent/sources/docker.source.js');
    expect(engineHint('/var/run/docker.sock', 'connect EACCES /var/run/docker.sock')).toMatch(/^ — the agent runs as \S+, who may not use the Docker socket: add it to the docker group \(usermod -aG docker \S+, then restart the agent\), or give the source a socket it may use$/);
    expect(engineHint('/var/run/docker.sock', 'socket hang up')).toBe('');
  });

  it('back-pressure: a failing buffer pauses the HTTP stream; nothing is lost once it recovers; pause()/resume()', async () => {
    await docker.listen();
    const id = docker.add('bp');
    const real = sinkFromBuffer(buffer);
    let failing = true;
    let failures = 0;
    const sink: SourceSink = {
      position: real.position,
      append: (e, pos) => {
        if (failing) {
          failures++;
          throw new BufferStorageError('disk_full', 'append', 'buffer.db', 'SQLITE_FULL');
        }
        return real.append(e, pos);
      },
    };
    for (let i = 0; i < 3; i++) docker.log(id, `l${i}\n`);
    const r = start({}, { sink, buffer: undefined });
    await waitFor(() => failures >= 3, 5000);
    expect(r.status()).toMatchObject({ state: 'retrying' });
    expect(r.status().last_error).toMatch(/disk/);
    for (let i = 3; i < 6; i++) docker.log(id, `l${i}\n`);
    failing = false;
    await waitFor(() => messages(buffer).length === 6, 5000);
    expect(messages(buffer)).toEqual(['l0', 'l1', 'l2', 'l3', 'l4', 'l5']);
    expect(r.status().last_error).toBeNull();

    r.pause();
    docker.log(id, 'while paused\n');
    await sleep(150);
    expect(messages(buffer)).toHaveLength(6);
    expect(r.status().state).toBe('paused');
    r.resume();
    await waitFor(() => messages(buffer).length === 7, 5000);
  });

  it('config errors: bad path, relative socket, bad filter', () => {
    expect(() => createSource({ kind: 'docker', path: 'a b' }, { buffer })).toThrow(/not a container name/);
    expect(() => createSource({ kind: 'docker', socket: 'docker.sock' }, { buffer })).toThrow(/absolute/);
    expect(() => createSource({ kind: 'docker', filter: '(' }, { buffer })).toThrow(/regular expression/);
  });
});

// An engine an operator's host really has: a clock that steps back while a container logs (NTP at
// boot, a VM resumed), and whatever listens on the socket answering without end (DECISIONS D29).

/** Steps the fake engine's clock (the timestamps of the next messages) by `ns`. */
function stepClock(ns: bigint): void {
  (docker as unknown as { clockNs: bigint }).clockNs += ns;
}

describe('docker: the clock steps back while a container logs', () => {
  it('lines after the step are read (not taken for lines read before), once each; a restart after them duplicates nothing', async () => {
    await docker.listen();
    const id = docker.add('web');
    docker.log(id, 'a1\n');
    docker.log(id, 'a2\n');
    const r = start({ path: 'web' });
    await waitFor(() => messages(buffer).length === 2, 10_000, 'a1, a2');
    stepClock(-5_000_000_000n); // 5 s back
    docker.log(id, 'b1\n');
    docker.log(id, 'b2\n', 2);
    docker.log(id, 'b3\n');
    await docker.flushed();
    await waitFor(() => messages(buffer).includes('b3'), 5000, 'b3');
    expect(messages(buffer)).toEqual(['a1', 'a2', 'b1', 'b2', 'b3']);
    expect(r.status().lines_skipped).toBe(0);

    // the agent restarts: what it read is skipped once by time (Docker's `since` is whole seconds)
    await r.stop();
    runners.splice(0);
    stepClock(10_000_000_000n);
    docker.log(id, 'c1\n');
    const r2 = start({ path: 'web' });
    await waitFor(() => messages(buffer).includes('c1'), 5000, 'c1');
    await docker.flushed();
    docker.log(id, 'c2\n');
    await waitFor(() => messages(buffer).includes('c2'), 5000, 'c2');
    expect(messages(buffer)).toEqual(['a1', 'a2', 'b1', 'b2', 'b3', 'c1', 'c2']);
    expect(r2.status().lines_skipped).toBeGreaterThan(0);
  });
});

describe('docker: whatever listens on the socket answers without end', () => {
  it('an answer over MAX_ENGINE_ANSWER_BYTES is an error in status and the log, retried; memory stays bounded', async () => {
    const sock = join(dir, 'endless.sock');
    if (existsSync(sock)) unlinkSync(sock);
    let listRequests = 0;
    let sent = 0;
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (req.url?.startsWith('/events')) {
        res.flushHeaders();
        return; // an events stream that stays open
      }
      listRequests++;
      res.write('[');
      const more = (): void => {
        while (!res.destroyed && sent < 12 * MAX_ENGINE_ANSWER_BYTES) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', more);
            return;
          }
        }
      };
      more();
    });
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      const { logged, logger } = capturingLogger();
      const r = createSource({ kind: 'docker', socket: sock }, { buffer, logger, restartMinMs: 50, restartMaxMs: 100 }) as DockerSource;
      runners.push(r);
      const rss0 = process.memoryUsage().rss;
      r.start();
      await waitFor(() => r.status().state === 'error', 30_000, 'error in status');
      expect(r.status().last_error).toContain(`GET /containers/json?all=1: the answer is larger than ${MAX_ENGINE_ANSWER_BYTES} bytes (is a Docker Engine listening at ${sock}?)`);
      expect(logged.some((l) => l.level === 'error' && l.msg.includes('the answer is larger than'))).toBe(true);
      expect(sent).toBeLessThan(10 * MAX_ENGINE_ANSWER_BYTES); // not read on to the end
      expect(process.memoryUsage().rss - rss0).toBeLessThan(8 * MAX_ENGINE_ANSWER_BYTES);
      await waitFor(() => listRequests >= 2, 10_000, 'retried');
      await r.stop();
      runners.splice(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
