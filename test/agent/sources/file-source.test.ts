import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, closeSync, statSync, copyFileSync, mkdirSync, openSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { BufferStorageError } from '../../../agent/buffer/errors.js';
import { createSource, createSourceManager, sinkFromBuffer, type LogSourceRunner, type SourceDeps, type SourceSink } from '../../../agent/sources/index.js';
import { allEntries, messages, openBuffer, sorted, tempDir, waitFor } from './helpers.js';
import { watchedFolderCount } from '../../../agent/sources/file/poll.js';
import { nextPollMs } from '../../../agent/sources/file/tailer.js';
import { budgetFor, heldFileDescriptors, openRegular, setFileBudgetForTests } from '../../../agent/sources/file/identity.js';

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
const runners: LogSourceRunner[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  buffer = openBuffer(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  buffer.close();
  cleanup();
});

function start(path: string, extra: Record<string, unknown> = {}, deps: Partial<SourceDeps> = {}): LogSourceRunner {
  const r = createSource({ kind: 'file', path, ...extra }, { buffer, pollMs: 20, ...deps });
  runners.push(r);
  r.start();
  return r;
}

async function stopRunner(r: LogSourceRunner): Promise<void> {
  await r.stop();
  runners.splice(runners.indexOf(r), 1);
}

const lines = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}`);
const write = (p: string, ls: string[]) => appendFileSync(p, ls.map((l) => `${l}\n`).join(''));

describe('file source: basics', () => {
  it('reads a never-seen file from the start, then follows appends; key file:<path>; parses syslog', async () => {
    const p = join(dir, 'a.log');
    write(p, ['one', '<13>1 2024-01-01T00:00:00.5Z host app 42 - - hello']);
    const r = start(p);
    await waitFor(() => messages(buffer).length === 2);
    write(p, ['three']);
    await waitFor(() => messages(buffer).length === 3);
    const es = allEntries(buffer);
    expect(es.map((e) => e.message)).toEqual(['one', 'hello', 'three']);
    expect(es[1]).toMatchObject({ source: `file:${p}`, app_name: 'app', process_id: '42', ts: '2024-01-01T00:00:00.500Z', severity: 'notice', facility: 'user' });
    expect(es[0]).toMatchObject({ severity: 'info' });
    expect(es[0]!.facility ?? null).toBeNull();
    expect(Object.keys(es[0]!)).toEqual(['seq', 'ts', 'severity', 'message', 'source']); // null optional fields omitted
    const st = r.status();
    expect(st).toMatchObject({ kind: 'file', key: `file:${p}`, lines_read: 3, last_error: null });
    expect(buffer.getSourcePosition(`file:${p}`)).toMatchObject({ offset: statSync(p).size, part: 0 });
  });

  it('a missing file is waited for and read from the start when it appears (and a missing folder)', async () => {
    const p = join(dir, 'later', 'x.log');
    const r = start(p);
    await waitFor(() => r.status().state === 'waiting');
    mkdirSync(join(dir, 'later'));
    write(p, ['first', 'second']);
    await waitFor(() => messages(buffer).length === 2);
    expect(messages(buffer)).toEqual(['first', 'second']);
  });

  it('holds a partial last line until its newline', async () => {
    const p = join(dir, 'p.log');
    appendFileSync(p, 'complete\npart');
    const r = start(p);
    await waitFor(() => messages(buffer).length === 1);
    await waitFor(() => r.status().lines_read === 1);
    // a few polls later the partial line is still not an entry
    const polls = r.status().bytes_read;
    await new Promise((res) => setTimeout(res, 100));
    expect(messages(buffer)).toEqual(['complete']);
    expect(polls).toBe(9);
    appendFileSync(p, 'ial\r\n');
    await waitFor(() => messages(buffer).length === 2);
    expect(messages(buffer)).toEqual(['complete', 'partial']);
  });

  it('a FIFO, a character device (a link to /dev/zero) or a directory at the path is never read: the error says what it is', async () => {
    const fifo = join(dir, 'fifo.log');
    execFileSync('mkfifo', [fifo]);
    const zero = join(dir, 'zero.log');
    symlinkSync('/dev/zero', zero);
    const folder = join(dir, 'folder.log');
    mkdirSync(folder);
    const runs = [start(fifo), start(zero), start(folder)];
    await waitFor(() => runs.every((r) => r.status().last_error !== null));
    expect(runs.map((r) => r.status().state)).toEqual(['error', 'error', 'error']);
    expect(runs[0]!.status().last_error).toMatch(/fifo\.log: EINVAL is a FIFO \(named pipe\): a file source reads regular files only/);
    expect(runs[1]!.status().last_error).toMatch(/zero\.log: EINVAL is a character device: a file source reads regular files only/);
    expect(runs[2]!.status().last_error).toMatch(/folder\.log: EISDIR is a directory, not a file: give a file, or a glob such as DIR\/\*\.log/);
    expect(messages(buffer)).toEqual([]);
  });

  // H39: the path was looked at (a regular file), then renamed onto by a FIFO before the open:
  // a blocking open waited for a writer with the agent's one thread (no heartbeat, SIGTERM
  // ignored) — found by renaming a file and a FIFO onto the path in a loop.
  it('a FIFO that takes the path between its stat and its open is refused at once, not waited on', async () => {
    const fifo = join(dir, 'swapped.log');
    execFileSync('mkfifo', [fifo]);
    // a writer comes only after 2 s: an open that waits for one takes that long
    const writer = spawn('sh', ['-c', `sleep 2; exec 3>"${fifo}"; sleep 1`], { stdio: 'ignore' });
    try {
      const t0 = performance.now();
      expect(() => openRegular(fifo)).toThrow(/is a FIFO \(named pipe\): a file source reads regular files only/);
      expect(performance.now() - t0).toBeLessThan(1000);
    } finally {
      writer.kill('SIGKILL');
    }
    // a regular file opens, with its stats
    const p = join(dir, 'plain.log');
    write(p, ['x']);
    const { fd, st } = openRegular(p);
    closeSync(fd);
    expect(st.isFile() && st.size === 2).toBe(true);
  });

  it('invalid UTF-8 is replaced with U+FFFD, never dropped; empty lines are skipped', async () => {
    const p = join(dir, 'u.log');
    writeFileSync(p, Buffer.concat([Buffer.from('ok \xff\xfe x\n', 'latin1'), Buffer.from([0x61, 0xe2, 0x82, 0x0a]), Buffer.from('\n\nlast é\n')]));
    start(p);
    await waitFor(() => messages(buffer).length === 3);
    expect(messages(buffer)).toEqual(['ok \uFFFD\uFFFD x', 'a\uFFFD', 'last é']);
  });

  it('lines over 65536 code points are split into parts of exactly 65536 with split metadata', async () => {
    const p = join(dir, 'long.log');
    const big = '€'.repeat(65536 * 2 + 10); // 3 bytes each: 393 KiB, more than one read chunk
    const ascii = 'a'.repeat(65536);
    write(p, ['short', big, ascii, 'after']);
    const r = start(p);
    await waitFor(() => messages(buffer).length === 6);
    const es = allEntries(buffer);
    expect(es.map((e) => [...e.message].length)).toEqual([5, 65536, 65536, 10, 65536, 5]);
    expect(es.slice(1, 4).map((e) => e.metadata)).toEqual([{ split: { part: 1, more: true } }, { split: { part: 2, more: true } }, { split: { part: 3, more: false } }]);
    expect(es[4]!.metadata ?? null).toBeNull(); // exactly 65536: not split
    expect(es.slice(1, 4).map((e) => e.message).join('')).toBe(big);
    expect(r.status().lines_split).toBe(1);
  });

  it('a long line still being written is committed in parts as they arrive, and resumes after a restart', async () => {
    const p = join(dir, 'grow.log');
    appendFileSync(p, 'x'.repeat(65536 + 100)); // no newline yet
    const r1 = start(p);
    await waitFor(() => messages(buffer).length === 1);
    expect(buffer.getSourcePosition(`file:${p}`)).toMatchObject({ offset: 65536, part: 1 });
    await stopRunner(r1);
    appendFileSync(p, 'y'.repeat(65536) + '\nnext\n');
    start(p);
    await waitFor(() => messages(buffer).length === 4);
    const es = allEntries(buffer);
    expect(es.map((e) => e.metadata?.split ?? null)).toEqual([{ part: 1, more: true }, { part: 2, more: true }, { part: 3, more: false }, null]);
    expect(es.slice(0, 3).map((e) => e.message).join('')).toBe('x'.repeat(65636) + 'y'.repeat(65536));
    expect(es[3]!.message).toBe('next');
  });

  it('filter: lines not matching are skipped but the offset advances; labels go to metadata.labels', async () => {
    const p = join(dir, 'f.log');
    write(p, ['ERROR a', 'info b', 'ERROR c', 'debug d']);
    const r = start(p, { filter: '^ERROR', labels: { env: 'prod', team: 'x' } });
    await waitFor(() => r.status().lines_read === 4);
    expect(messages(buffer)).toEqual(['ERROR a', 'ERROR c']);
    expect(allEntries(buffer)[0]!.metadata).toEqual({ labels: { env: 'prod', team: 'x' } });
    expect(r.status().lines_filtered).toBe(2);
    const size = 8 + 7 + 8 + 8;
    expect(buffer.getSourcePosition(`file:${p}`)).toMatchObject({ offset: size });
  });

  it('an invalid filter is a clear error and the source is not started; the manager shows it and keeps the others', async () => {
    expect(() => createSource({ kind: 'file', path: join(dir, 'x'), filter: '([' }, { buffer })).toThrow(/filter "\(\[" is not a valid JavaScript regular expression/);
    expect(() => createSource({ kind: 'file', path: 'rel.log' }, { buffer })).toThrow(/absolute/);
    const good = join(dir, 'good.log');
    write(good, ['fine']);
    const m = createSourceManager({ buffer, pollMs: 20 });
    m.apply([
      { kind: 'file', path: join(dir, 'bad.log'), filter: '(' },
      { kind: 'file', path: good },
      { kind: 'docker', path: 'web', socket: join(dir, 'no-engine.sock') },
    ]);
    await waitFor(() => messages(buffer).length === 1);
    await waitFor(() => m.status()[2]!.last_error !== null);
    const st = m.status();
    expect(st[0]!.last_error).toMatch(/not a valid JavaScript regular expression/);
    expect(st[1]!.last_error).toBeNull();
    expect(st[2]!.last_error).toMatch(/Docker Engine unreachable/);
    // config.update removes the good source: it stops reading
    m.apply([]);
    write(good, ['after removal']);
    await new Promise((res) => setTimeout(res, 100));
    expect(messages(buffer)).toEqual(['fine']);
    await m.close();
  });
});

describe('file source: restart', () => {
  it('resumes at the stored offset: no duplicate, no loss, also with lines appended while stopped', async () => {
    const p = join(dir, 'r.log');
    write(p, lines('a', 0, 50));
    const r1 = start(p);
    await waitFor(() => messages(buffer).length === 50);
    await stopRunner(r1);
    write(p, lines('a', 50, 80));
    const r2 = start(p);
    await waitFor(() => messages(buffer).length === 80);
    write(p, lines('a', 80, 90));
    await waitFor(() => messages(buffer).length === 90);
    expect(messages(buffer)).toEqual(lines('a', 0, 90));
    expect(r2.status().truncations).toBe(0);
  });

  it('truncation while stopped (offset past size): reads from the start', async () => {
    const p = join(dir, 't.log');
    write(p, lines('old', 0, 20));
    const r1 = start(p);
    await waitFor(() => messages(buffer).length === 20);
    await stopRunner(r1);
    truncateSync(p, 0);
    write(p, ['new0', 'new1']);
    const r2 = start(p);
    await waitFor(() => messages(buffer).length === 22);
    expect(messages(buffer).slice(20)).toEqual(['new0', 'new1']);
    expect(r2.status().truncations).toBe(1);
  });

  it('inode reuse is caught by the fingerprint (same dev/ino, different first bytes)', async () => {
    const p = join(dir, 'i.log');
    write(p, lines('first-file-', 0, 10));
    const r1 = start(p);
    await waitFor(() => messages(buffer).length === 10);
    await stopRunner(r1);
    // Same inode, new content at least as long: simulate reuse by rewriting in place.
    writeFileSync(p, lines('second-file-', 0, 12).map((l) => `${l}\n`).join(''));
    start(p);
    await waitFor(() => messages(buffer).length === 22);
    expect(messages(buffer).slice(10)).toEqual(lines('second-file-', 0, 12));
  });

  it('rotated while stopped: finishes the rotated file from the offset, then the new file', async () => {
    const p = join(dir, 'rs.log');
    write(p, lines('a', 0, 10));
    const r1 = start(p);
    await waitFor(() => messages(buffer).length === 10);
    await stopRunner(r1);
    write(p, lines('a', 10, 15));
    renameSync(p, `${p}.1`);
    write(p, lines('b', 0, 5));
    start(p);
    await waitFor(() => messages(buffer).length === 20);
    expect(messages(buffer)).toEqual([...lines('a', 0, 15), ...lines('b', 0, 5)]);
  });
});

describe('file source: rotation and truncation', () => {
  it('rename rotation under continuous writes: exact multiset, no loss, no duplicate', async () => {
    const p = join(dir, 'rot.log');
    const r = start(p, {}, { pollMs: 15 });
    const written: string[] = [];
    let n = 0;
    for (let round = 0; round < 4; round++) {
      for (let k = 0; k < 20; k++) {
        const batch = lines('m', n, n + 50);
        n += 50;
        write(p, batch);
        written.push(...batch);
        await new Promise((res) => setTimeout(res, 2));
      }
      renameSync(p, `${p}.${round}`);
    }
    write(p, ['tail']);
    written.push('tail');
    await waitFor(() => messages(buffer).length >= written.length, 20_000, `${written.length} entries`);
    await new Promise((res) => setTimeout(res, 100));
    const got = messages(buffer);
    expect(got.length).toBe(written.length);
    expect(sorted(got)).toEqual(sorted(written));
    expect(new Set(got).size).toBe(got.length);
    expect(r.status().rotations).toBe(4);
  });

  it('a writer that still holds the renamed file: lines it writes there within one poll interval arrive (watch events do not end the grace)', async () => {
    const p = join(dir, 'held.log');
    const r = start(p, {}, { pollMs: 300 });
    write(p, ['before']);
    await waitFor(() => messages(buffer).length === 1);
    const old = openSync(p, 'a');
    try {
      renameSync(p, `${p}.1`);
      writeFileSync(p, ''); // the new file: its creation and the rename are watch events
      // another writer starts the new file at once: more watch events, each a tick
      for (const line of ['new 1', 'new 2', 'new 3']) {
        write(p, [line]);
        await new Promise((res) => setTimeout(res, 15));
      }
      // the daemon writes to the old file a little longer, before its HUP
      await new Promise((res) => setTimeout(res, 30));
      writeSync(old, 'late 1\n');
      await new Promise((res) => setTimeout(res, 60));
      writeSync(old, 'late 2\n');
    } finally {
      closeSync(old);
    }
    write(p, ['after']);
    await waitFor(() => messages(buffer).length >= 7, 10_000, '7 entries');
    expect(messages(buffer)).toEqual(['before', 'late 1', 'late 2', 'new 1', 'new 2', 'new 3', 'after']);
    expect(r.status().rotations).toBe(1);
  });

  it('a partial last line is flushed when the file is rotated away', async () => {
    const p = join(dir, 'pr.log');
    appendFileSync(p, 'full\nno-newline');
    start(p);
    await waitFor(() => messages(buffer).length === 1);
    renameSync(p, `${p}.1`);
    write(p, ['new']);
    await waitFor(() => messages(buffer).length === 3);
    expect(messages(buffer)).toEqual(['full', 'no-newline', 'new']);
  });

  // H39: an error looking at the path (a symlink loop put there, its folder's permissions for a
  // moment) closed the open file; rotated meanwhile, the lines written to it before were lost,
  // unsaid (the reopen took the new file at the path from its start).
  it('the path cannot be looked at for a while (a symlink loop) and the file is rotated meanwhile: its lines still arrive', async () => {
    const p = join(dir, 'loop.log');
    write(p, ['first']);
    const r = start(p);
    await waitFor(() => messages(buffer).length === 1);
    r.pause(); // so that the lines are not read before the loop is there
    write(p, ['unread 1', 'unread 2', 'unread 3']);
    renameSync(p, `${p}.1`);
    symlinkSync(p, p); // a link to itself: ELOOP
    r.resume();
    await waitFor(() => /ELOOP/.test(r.status().last_error ?? ''));
    rmSync(p);
    write(p, ['new file']);
    await waitFor(() => messages(buffer).length === 5);
    expect(messages(buffer)).toEqual(['first', 'unread 1', 'unread 2', 'unread 3', 'new file']);
    await waitFor(() => r.status().last_error === null);
  });

  it('deletion and re-creation: the new file is read from its start', async () => {
    const p = join(dir, 'd.log');
    write(p, ['a', 'b']);
    const r = start(p);
    await waitFor(() => messages(buffer).length === 2);
    rmSync(p);
    await waitFor(() => r.status().state === 'waiting');
    write(p, ['c']);
    await waitFor(() => messages(buffer).length === 3);
    expect(messages(buffer)).toEqual(['a', 'b', 'c']);
  });

  it('copytruncate: lines after the truncate arrive exactly once', async () => {
    const p = join(dir, 'ct.log');
    write(p, lines('before', 0, 30));
    const r = start(p);
    await waitFor(() => messages(buffer).length === 30);
    copyFileSync(p, `${p}.1`);
    truncateSync(p, 0);
    write(p, lines('after', 0, 3)); // shorter than before: size < offset
    await waitFor(() => messages(buffer).length === 33);
    write(p, lines('after', 3, 60)); // now longer than the old offset
    await waitFor(() => messages(buffer).length === 90);
    await new Promise((res) => setTimeout(res, 80));
    expect(messages(buffer)).toEqual([...lines('before', 0, 30), ...lines('after', 0, 60)]);
    expect(r.status()).toMatchObject({ truncations: 1, lines_lost: 0 });
  });

  it('copytruncate with unread lines: they are counted (from the copy) and never duplicated; regrown past the offset is detected by the fingerprint', async () => {
    const p = join(dir, 'ct2.log');
    write(p, lines('before', 0, 10));
    const r = start(p, {}, { pollMs: 60_000, watch: false });
    await waitFor(() => messages(buffer).length === 10);
    // Between two polls: 5 more lines, then copy + truncate, then more than the old size.
    write(p, lines('unread', 0, 5));
    copyFileSync(p, `${p}.1`);
    truncateSync(p, 0);
    write(p, lines('after-the-truncate-', 0, 20));
    (r as unknown as { kick(): void }).kick();
    await waitFor(() => messages(buffer).length === 30);
    expect(messages(buffer)).toEqual([...lines('before', 0, 10), ...lines('after-the-truncate-', 0, 20)]);
    expect(r.status()).toMatchObject({ truncations: 1, lines_lost: 5, bytes_lost: 5 * 8, lost_estimated: false });
    expect(r.status().last_error).toMatch(/lost 5 line/);
  });
});

describe('file source: globs', () => {
  it('a glob whose folder does not exist, or that matches nothing: waiting, the missing folder said; read once a file appears', async () => {
    const folder = join(dir, 'later');
    const r = start(join(folder, '*.log'));
    await waitFor(() => r.status().last_error !== null);
    expect(r.status()).toMatchObject({ state: 'waiting', files: [], last_error: `${join(folder, '*.log')}: the folder ${folder} does not exist (yet); files that match are read once it does` });
    mkdirSync(folder);
    await waitFor(() => r.status().last_error === null);
    expect(r.status().state).toBe('waiting'); // the folder is there, nothing matches yet
    write(join(folder, 'app.log'), ['at last']);
    await waitFor(() => messages(buffer).length === 1);
    expect(r.status()).toMatchObject({ state: 'reading', last_error: null });
    const { sourceStateText } = await import('../../../agent/cli-main.js');
    expect(sourceStateText(r.status())).toBe('reading 1 file, 1 lines read');
    expect(sourceStateText({ kind: 'file', state: 'waiting', files: [] })).toBe('waiting: no file matches yet');
    expect(sourceStateText({ kind: 'file', state: 'waiting' })).toBe('waiting: no such file yet');
    expect(sourceStateText({ kind: 'docker', state: 'retrying', lines_read: 3 })).toBe('retrying, 3 lines read');
  });

  it('a glob whose folder cannot be listed (a symlink loop; its permissions) says so in the log once, not only in status', async () => {
    const loop = join(dir, 'loop');
    symlinkSync(loop, loop);
    const said: string[] = [];
    const logger = { info: () => undefined, warn: () => undefined, error: (_f: Record<string, unknown>, msg: string) => void said.push(msg) };
    const r = start(join(loop, '*.log'), {}, { logger });
    await waitFor(() => /ELOOP/.test(r.status().last_error ?? ''));
    await waitFor(() => said.length > 0);
    const polls = r.status().last_error;
    await new Promise((res) => setTimeout(res, 100)); // several polls of 20 ms
    expect(r.status().last_error).toBe(polls);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^file source error: .*loop\/\*\.log: ELOOP/);
  });

  // H42: a config stored before the server refused overlapping file sources, or a glob through
  // a symlinked folder: two sources of one file stored every line twice under one position key
  it('a second source of a file already read (a glob and the file itself) does not read it, says why, and takes over when the first stops', async () => {
    const ov = join(dir, 'ov');
    mkdirSync(ov);
    const p = join(ov, 'x.log');
    write(p, ['one', 'two']);
    const glob = start(join(ov, '*.log'));
    await waitFor(() => messages(buffer).length === 2);
    const single = start(p, {}, { retryMaxMs: 20 });
    await waitFor(() => single.status().state === 'error');
    expect(single.status().last_error).toMatch(/another file source of this config reads this file already .* each file is read by one source only/);
    write(p, ['three']);
    await waitFor(() => messages(buffer).length === 3);
    await stopRunner(glob);
    write(p, ['four']);
    await waitFor(() => messages(buffer).length === 4);
    expect(messages(buffer)).toEqual(['one', 'two', 'three', 'four']); // each once: the second resumed at the first's position
    expect(single.status()).toMatchObject({ state: 'reading', last_error: null });
  });

  it('the same file under another spelling of its path (a doubled slash, a symlink) resumes where it was, not from its start (H56)', async () => {
    const p = join(dir, 'spelled.log');
    write(p, ['one', 'two']);
    const first = start(p);
    await waitFor(() => messages(buffer).length === 2);
    await stopRunner(first);
    write(p, ['three']);
    const doubled = start(`${dir}//spelled.log`);
    await waitFor(() => messages(buffer).length === 3);
    await stopRunner(doubled);
    write(p, ['four']);
    const link = join(dir, 'spelled-link.log');
    symlinkSync(p, link);
    const linked = start(link);
    await waitFor(() => messages(buffer).length === 4);
    await new Promise((res) => setTimeout(res, 100)); // several polls: nothing read twice
    expect(messages(buffer)).toEqual(['one', 'two', 'three', 'four']);
    await stopRunner(linked);
  });

  it('a file source naming a symlink into a glob\'s folder: the second to start does not read the file; each line once (H50)', async () => {
    const real = join(dir, 'realdir');
    mkdirSync(real);
    const target = join(real, 'app.log');
    write(target, ['one', 'two']);
    const link = join(dir, 'current.log');
    symlinkSync(target, link);
    const glob = start(join(real, '*.log'));
    await waitFor(() => messages(buffer).length === 2);
    const single = start(link, {}, { retryMaxMs: 20 });
    await waitFor(() => single.status().state === 'error');
    expect(single.status().last_error).toMatch(/another file source of this config reads this file already/);
    write(target, ['three']);
    await waitFor(() => messages(buffer).length === 3);
    await new Promise((res) => setTimeout(res, 100)); // several polls of the waiting source
    expect(messages(buffer)).toEqual(['one', 'two', 'three']);
    await stopRunner(single);
    await stopRunner(glob);
  });

  it('each matching file is its own source file:<real path>; a new matching file is picked up', async () => {
    write(join(dir, 'a.log'), ['a1']);
    write(join(dir, 'b.txt'), ['not matched']);
    mkdirSync(join(dir, 'real'));
    write(join(dir, 'real', 'target'), ['via link']);
    symlinkSync(join(dir, 'real', 'target'), join(dir, 'c.log'));
    const r = start(join(dir, '*.log'));
    await waitFor(() => messages(buffer).length === 2);
    write(join(dir, 'n?w.log'.replace('?', 'e')), ['new file']);
    await waitFor(() => messages(buffer).length === 3);
    const bySource = Object.fromEntries(allEntries(buffer).map((e) => [e.message, e.source]));
    expect(bySource).toEqual({ a1: `file:${join(dir, 'a.log')}`, 'via link': `file:${join(dir, 'real', 'target')}`, 'new file': `file:${join(dir, 'new.log')}` });
    expect(r.status().files?.length).toBe(3);
    write(join(dir, 'a.log'), ['a2']);
    await waitFor(() => messages(buffer).length === 4);
    const q = start(join(dir, 'a.lo?'));
    await waitFor(() => (q.status().files?.length ?? 0) === 1);
  });

  it('300 matching files share one read buffer: memory does not grow by 256 KiB per file (it held 750 MB for 3,000)', async () => {
    const many = join(dir, 'many');
    mkdirSync(many);
    for (let i = 0; i < 300; i++) write(join(many, `f${i}.log`), [`file ${i}`]);
    const before = process.memoryUsage().arrayBuffers;
    const r = start(join(many, '*.log'));
    await waitFor(() => messages(buffer).length === 300, 20_000);
    expect(r.status().files?.length).toBe(300);
    // one buffer per file would be 300 × 256 KiB = 75 MiB of ArrayBuffer memory
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
    expect(new Set(messages(buffer))).toEqual(new Set(Array.from({ length: 300 }, (_, i) => `file ${i}`)));
  });

  it('one folder watch serves every file of a folder (a watch each ran every file\'s callback on every write), closed with the last', async () => {
    const many = join(dir, 'watched');
    mkdirSync(many);
    for (let i = 0; i < 50; i++) write(join(many, `w${i}.log`), [`w ${i}`]);
    const before = watchedFolderCount();
    const r = start(join(many, '*.log'), {}, { watch: true });
    await waitFor(() => messages(buffer).length === 50);
    expect(watchedFolderCount() - before).toBe(1);
    write(join(many, 'w7.log'), ['w 7 again']);
    await waitFor(() => messages(buffer).includes('w 7 again'));
    await stopRunner(r);
    expect(watchedFolderCount()).toBe(before);
  });

  // H40: 1,000 files under `ulimit -n 400` took every descriptor: the agent could not read its
  // token to reconnect nor write status.json, retried 2,500 opens a second, said nothing useful.
  it('the file sources hold at most the open-file limit less a reserve; the files past it say why and are read once others close', async () => {
    setFileBudgetForTests(budgetFor(74)); // 64 kept: 10 for the file sources
    try {
      expect(budgetFor(74)).toEqual({ limit: 74, reserve: 64, files: 10 });
      expect(budgetFor(1024)).toEqual({ limit: 1024, reserve: 128, files: 896 });
      expect(budgetFor(65536)).toEqual({ limit: 65536, reserve: 256, files: 65280 });
      const many = join(dir, 'many');
      mkdirSync(many);
      for (let i = 0; i < 15; i++) write(join(many, `f${String(i).padStart(2, '0')}.log`), [`file ${i}`]);
      const held = heldFileDescriptors();
      const r = start(join(many, '*.log'), {}, { forgetAfterMs: 0, retryMaxMs: 100 });
      await waitFor(() => messages(buffer).length === 10 && (r.status().files ?? []).filter((f) => f.state === 'error').length === 5);
      expect(heldFileDescriptors() - held).toBe(10);
      const failing = (r.status().files ?? []).find((f) => f.state === 'error');
      expect(failing?.last_error).toMatch(/EMFILE not opened: the file sources hold 10 files open, all that the agent's open-file limit allows them \(ulimit -n 74, less 64 kept for its buffer and connection\); raise LimitNOFILE/);
      const { sourceStateText } = await import('../../../agent/cli-main.js');
      expect(sourceStateText(r.status())).toBe('reading 10 files (5 in error), 10 lines read');
      // five of the files read are deleted: once finished, their descriptors go to the others
      for (const m of messages(buffer).slice(0, 5)) rmSync(join(many, `f${m.slice(5).padStart(2, '0')}.log`));
      await waitFor(() => messages(buffer).length === 15, 20_000);
      expect(new Set(messages(buffer))).toEqual(new Set(Array.from({ length: 15 }, (_, i) => `file ${i}`)));
      await waitFor(() => (r.status().files ?? []).every((f) => f.state === 'reading'));
      expect(heldFileDescriptors() - held).toBe(10);
      await stopRunner(r);
      expect(heldFileDescriptors()).toBe(held);
    } finally {
      setFileBudgetForTests(undefined);
    }
  });

  it('an idle file is polled less often only while its folder is watched, up to 8 × the poll interval', () => {
    expect([0, 7, 8, 16, 55, 56, 1000].map((n) => nextPollMs(250, n, true))).toEqual([250, 250, 500, 750, 1750, 2000, 2000]);
    expect(nextPollMs(250, 1000, false)).toBe(250);
  });

  it('files deleted from the folder are forgotten once finished: tailer, status line and stored position go (they polled on for good); one still written after its deletion is read to its end first', async () => {
    const pods = join(dir, 'pods');
    mkdirSync(pods);
    for (let i = 0; i < 50; i++) write(join(pods, `p${i}.log`), [`pod ${i}`]);
    const r = start(join(pods, '*.log'), {}, { forgetAfterMs: 0 });
    await waitFor(() => messages(buffer).length === 50);
    const stored = () => buffer.sourcePositions().filter((p) => p.source.startsWith(`file:${pods}/`)).map((p) => p.source);
    expect(stored()).toHaveLength(50);
    // a writer still holds p0.log when it is deleted, and writes to it afterwards
    const held = openSync(join(pods, 'p0.log'), 'a');
    for (let i = 0; i < 40; i++) rmSync(join(pods, `p${i}.log`));
    writeSync(held, 'pod 0 after its deletion\n');
    closeSync(held);
    await waitFor(() => r.status().files?.length === 10);
    expect(messages(buffer)).toContain('pod 0 after its deletion');
    expect(r.status().lines_read).toBe(51); // the glob's totals keep the files forgotten
    expect(new Set(r.status().files?.map((f) => f.path))).toEqual(new Set(Array.from({ length: 10 }, (_, i) => join(pods, `p${40 + i}.log`))));
    await waitFor(() => stored().length === 10);
    expect(new Set(stored())).toEqual(new Set(Array.from({ length: 10 }, (_, i) => `file:${join(pods, `p${40 + i}.log`)}`)));
    // a name that comes back is a new file: read from its start
    write(join(pods, 'p1.log'), ['pod 1 again']);
    await waitFor(() => messages(buffer).includes('pod 1 again'));
    expect(r.status().files?.length).toBe(11);
    expect(messages(buffer)).toHaveLength(52);
  });

  it('a folder that empties and fills again (a mount not there yet, or gone for a while) keeps its files\' positions for forgetAfterMs: nothing is read twice', async () => {
    const mnt = join(dir, 'mnt');
    const away = join(dir, 'away');
    mkdirSync(mnt);
    for (let i = 0; i < 5; i++) write(join(mnt, `m${i}.log`), lines(`m${i}-`, 0, 3));
    const r = start(join(mnt, '*.log'), {}, { forgetAfterMs: 60_000 });
    await waitFor(() => messages(buffer).length === 15);
    renameSync(mnt, away);
    mkdirSync(mnt); // the empty mount point
    await waitFor(() => r.status().files?.length === 0);
    await new Promise((res) => setTimeout(res, 1000)); // 50 polls: over two full looks at the folder (every 20th)
    expect(buffer.sourcePositions().filter((p) => p.source.startsWith(`file:${mnt}/`))).toHaveLength(5);
    rmSync(mnt, { recursive: true });
    renameSync(away, mnt);
    write(join(mnt, 'm0.log'), ['m0-new']);
    await waitFor(() => messages(buffer).includes('m0-new'));
    await waitFor(() => r.status().files?.length === 5);
    await new Promise((res) => setTimeout(res, 100));
    expect(sorted(messages(buffer))).toEqual(sorted([...Array.from({ length: 5 }, (_, i) => lines(`m${i}-`, 0, 3)).flat(), 'm0-new']));
  });

  it('rotation to a name the glob also matches: no duplicates', async () => {
    const p = join(dir, 'app.log');
    write(p, lines('x', 0, 20));
    start(join(dir, 'app.log*'));
    await waitFor(() => messages(buffer).length === 20);
    write(p, lines('x', 20, 25));
    renameSync(p, `${p}.1`);
    write(p, lines('y', 0, 5));
    await waitFor(() => messages(buffer).length === 30);
    await new Promise((res) => setTimeout(res, 200));
    expect(sorted(messages(buffer))).toEqual(sorted([...lines('x', 0, 25), ...lines('y', 0, 5)]));
  });
});

describe('file source: glob restart', () => {
  /** svc.log (x0..x19) read by `svc.log*`, the glob stopped, x20..x24 appended, `rotate(path)`, the glob started again. */
  async function rotatedWhileStopped(rotate: (p: string) => void): Promise<void> {
    const p = join(dir, 'svc.log');
    write(p, lines('x', 0, 20));
    const r1 = start(join(dir, 'svc.log*'));
    await waitFor(() => messages(buffer).length === 20);
    await stopRunner(r1);
    write(p, lines('x', 20, 25));
    rotate(p);
    start(join(dir, 'svc.log*'));
  }

  it('rotated while stopped to a name the glob matches: resumes under the new name, no duplicates', async () => {
    await rotatedWhileStopped((p) => {
      renameSync(p, `${p}.1`);
      write(p, lines('y', 0, 5));
    });
    await waitFor(() => messages(buffer).length >= 30);
    await new Promise((res) => setTimeout(res, 150));
    expect(sorted(messages(buffer))).toEqual(sorted([...lines('x', 0, 25), ...lines('y', 0, 5)]));
  });
  it('numbered rotation while stopped (svc.log.1 → .2, svc.log → .1, a new svc.log): each file resumes by its identity, not by the stale position its new name had', async () => {
    const p = join(dir, 'svc.log');
    write(`${p}.1`, lines('o', 0, 5));
    write(p, lines('x', 0, 20));
    const r1 = start(join(dir, 'svc.log*'));
    await waitFor(() => messages(buffer).length === 25);
    await stopRunner(r1);
    write(p, lines('x', 20, 25));
    renameSync(`${p}.1`, `${p}.2`);
    renameSync(p, `${p}.1`);
    write(p, lines('y', 0, 5));
    start(join(dir, 'svc.log*'));
    await waitFor(() => messages(buffer).length >= 35);
    await new Promise((res) => setTimeout(res, 150));
    expect(sorted(messages(buffer))).toEqual(sorted([...lines('o', 0, 5), ...lines('x', 0, 25), ...lines('y', 0, 5)]));
  });

  it('names deleted while stopped: their stored positions are dropped at start; one renamed while stopped resumes under its new name, which then holds its position', async () => {
    write(join(dir, 'a.log'), lines('a', 0, 3));
    write(join(dir, 'b.log'), lines('b', 0, 2));
    write(join(dir, 'c.log'), lines('c', 0, 1));
    const r1 = start(join(dir, '*.log'));
    await waitFor(() => messages(buffer).length === 6);
    await stopRunner(r1);
    rmSync(join(dir, 'b.log'));
    renameSync(join(dir, 'c.log'), join(dir, 'd.log'));
    const keys = () => buffer.sourcePositions().map((p) => p.source).sort();
    expect(keys()).toEqual(['a.log', 'b.log', 'c.log'].map((n) => `file:${join(dir, n)}`));
    const r2 = start(join(dir, '*.log'), {}, { forgetAfterMs: 0 });
    await waitFor(() => keys().join() === ['a.log', 'd.log'].map((n) => `file:${join(dir, n)}`).join());
    write(join(dir, 'd.log'), ['c1']);
    await waitFor(() => messages(buffer).includes('c1'));
    expect(sorted(messages(buffer))).toEqual(sorted([...lines('a', 0, 3), ...lines('b', 0, 2), ...lines('c', 0, 2)]));
    expect(r2.status().files?.map((f) => f.path).sort()).toEqual([join(dir, 'a.log'), join(dir, 'd.log')]);
  });

  it('the same through a folder reached by a symlink (the keys are real paths)', async () => {
    mkdirSync(join(dir, 'real-logs'));
    symlinkSync(join(dir, 'real-logs'), join(dir, 'logs'));
    write(join(dir, 'real-logs', 'a.log'), ['a0']);
    write(join(dir, 'real-logs', 'b.log'), ['b0']);
    const r1 = start(join(dir, 'logs', '*.log'));
    await waitFor(() => messages(buffer).length === 2);
    await stopRunner(r1);
    rmSync(join(dir, 'real-logs', 'b.log'));
    start(join(dir, 'logs', '*.log'), {}, { forgetAfterMs: 0 });
    await waitFor(() => buffer.sourcePositions().map((p) => p.source).join() === `file:${join(dir, 'real-logs', 'a.log')}`);
  });

  it('rotated while running to a name the glob matches and not made again: the new name holds the position, so a restart reads nothing twice', async () => {
    const p = join(dir, 'app.log');
    write(p, lines('x', 0, 10));
    const r1 = start(join(dir, 'app.log*'));
    await waitFor(() => messages(buffer).length === 10);
    renameSync(p, `${p}.1`);
    const keys = () => buffer.sourcePositions().map((q) => q.source);
    await waitFor(() => keys().join() === `file:${p}.1`);
    expect(r1.status().files?.map((f) => f.path)).toEqual([`${p}.1`]);
    await stopRunner(r1);
    write(`${p}.1`, lines('x', 10, 12));
    start(join(dir, 'app.log*'));
    await waitFor(() => messages(buffer).length >= 12);
    await new Promise((res) => setTimeout(res, 150));
    expect(sorted(messages(buffer))).toEqual(sorted(lines('x', 0, 12)));
  });

  it('rotated while stopped and the name not yet made again (svc.log → svc.log.1 only): resumes by identity', async () => {
    await rotatedWhileStopped((p) => renameSync(p, `${p}.1`));
    await waitFor(() => messages(buffer).length >= 25);
    await new Promise((res) => setTimeout(res, 150));
    expect(sorted(messages(buffer))).toEqual(sorted(lines('x', 0, 25)));
  });
});

describe('file source: back-pressure', () => {
  it('a buffer that throws BufferStorageError pauses the source without advancing the offset; nothing lost once it recovers', async () => {
    const p = join(dir, 'bp.log');
    write(p, lines('l', 0, 10));
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
    const r = start(p, {}, { sink, buffer: undefined, retryMinMs: 10, retryMaxMs: 40 });
    await waitFor(() => failures >= 3);
    expect(r.status()).toMatchObject({ state: 'retrying', lines_read: 0 });
    expect(r.status().last_error).toMatch(/disk/);
    expect(buffer.getSourcePosition(`file:${p}`)).toBeNull();
    write(p, lines('l', 10, 15));
    failing = false;
    await waitFor(() => messages(buffer).length === 15);
    expect(messages(buffer)).toEqual(lines('l', 0, 15));
    expect(r.status().last_error).toBeNull();
  });

  it('pause()/resume(): nothing is read while paused', async () => {
    const p = join(dir, 'pz.log');
    write(p, ['a']);
    const r = start(p);
    await waitFor(() => messages(buffer).length === 1);
    r.pause();
    write(p, ['b']);
    await new Promise((res) => setTimeout(res, 100));
    expect(messages(buffer)).toEqual(['a']);
    r.resume();
    await waitFor(() => messages(buffer).length === 2);
  });
});
