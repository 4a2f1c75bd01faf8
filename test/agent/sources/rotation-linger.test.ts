// A file rotated away is kept open beside the new file for writes that still reach it
// (DECISIONS D6): a daemon reopens its log only at logrotate's postrotate signal, later on a
// busy machine. Seen in the fault suite on a loaded machine: 1,140 lines written to the renamed
// file after the agent had moved on to the new one were lost, and nothing said so.
//
// Deterministic: no poll timer fires during a test (poll intervals of a day, a clock of our
// own); the test drives each tailer's polls (kick, the clock moved on by a poll interval) and
// the glob's listings (scanNow) itself. The rotate wait is counted in those poll intervals.
import { appendFileSync, closeSync, mkdirSync, openSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { sinkFromBuffer, type SourceSink } from '../../../agent/sources/index.js';
import { FileTailer, GlobFileSource, type FileTailerStatus, type TailerOptions } from '../../../agent/sources/file.source.js';
import { DEFAULT_CHUNK } from '../../../agent/sources/file/tailer.js';
import { HANDOFF_WAIT_POLLS } from '../../../agent/sources/file/glob.js';
import { budgetFor, heldFileDescriptors, setFileBudgetForTests } from '../../../agent/sources/file/identity.js';
import { sourceLines } from '../../../agent/cli-main.js';
import { capturingLogger, messages, openBuffer, tempDir, type Logged } from './helpers.js';

const POLL = 86_400_000; // no timer fires during a test: polls are driven
const WAIT = 3 * POLL; // rotateWaitMs: closed once not grown for three polls
const WAIT_MAX = 8 * POLL; // rotateWaitMaxMs

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let sink: SourceSink;
let now = 1_000_000;
let logged: Logged[];
let logger: ReturnType<typeof capturingLogger>['logger'];
const running: { stop(): Promise<void> }[] = [];
const fds: number[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-linger-'));
  buffer = openBuffer(dir);
  sink = sinkFromBuffer(buffer);
  ({ logged, logger } = capturingLogger());
});
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
  for (const fd of fds.splice(0)) closeSync(fd);
  buffer.close();
  cleanup();
});

/** Lets every pending immediate and 0 ms timer run (a first poll, kicks, the glob's rescans). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 0));
    for (let j = 0; j < 12; j++) await new Promise((r) => setImmediate(r));
  }
}

function options(path: string, extra: Partial<TailerOptions> = {}): TailerOptions {
  return {
    path, key: `file:${path}`, filter: null, labels: null, sink, logger, clock: () => now,
    pollMs: POLL, chunkBytes: DEFAULT_CHUNK, watch: false, retryMinMs: POLL, retryMaxMs: POLL,
    rotateQuietPolls: 1, findRotated: true, rotateWaitMs: WAIT, rotateWaitMaxMs: WAIT_MAX, ...extra,
  };
}

async function startTailer(path: string, extra: Partial<TailerOptions> = {}): Promise<FileTailer> {
  const t = new FileTailer(options(path, extra));
  running.push(t);
  t.start();
  await settle();
  return t;
}

async function stop(r: { stop(): Promise<void> }): Promise<void> {
  await r.stop();
  running.splice(running.indexOf(r), 1);
}

/** One poll of each tailer, the clock moved on by a poll interval. */
async function poll(...ts: FileTailer[]): Promise<void> {
  now += POLL;
  for (const t of ts) t.kick();
  await settle();
}

/** Polls until `cond` holds (at most `max` polls). */
async function pollUntil(ts: FileTailer[], cond: () => boolean, what: string, max = 10): Promise<void> {
  for (let i = 0; i < max && !cond(); i++) await poll(...ts);
  expect(cond(), what).toBe(true);
}

const text = (ls: string[]) => ls.map((l) => `${l}\n`).join('');
function append(path: string, ls: string[]): void {
  const fd = openSync(path, 'a');
  try {
    writeSync(fd, text(ls));
  } finally {
    closeSync(fd);
  }
}
/** The daemon's descriptor of the log: it keeps writing there after the rename, until it reopens. */
function daemonFd(path: string): number {
  const fd = openSync(path, 'a');
  fds.push(fd);
  return fd;
}
function closeDaemonFd(fd: number): void {
  closeSync(fd);
  fds.splice(fds.indexOf(fd), 1);
}

function expectEachOnce(got: string[], want: string[]): void {
  expect(got.length, `stored: ${got.join(', ')}`).toBe(new Set(got).size);
  expect([...got].sort()).toEqual([...want].sort());
}

const positionOf = (key: string) => buffer.getSourcePosition(key) as { dev: number; ino: number; offset: number } | null;

/**
 * app.log (a1..a3) read; the daemon holds it; logrotate renames it to app.log.1 and creates a new
 * app.log, where another writer puts b1; polled until b1 is stored: the tailer has moved on.
 */
async function rotatedAndMovedOn(p: string, extra: Partial<TailerOptions> = {}): Promise<{ t: FileTailer; old: number }> {
  append(p, ['a1', 'a2', 'a3']);
  const t = await startTailer(p, extra);
  expect(messages(buffer)).toEqual(['a1', 'a2', 'a3']);
  const old = daemonFd(p);
  renameSync(p, `${p}.1`);
  writeFileSync(p, text(['b1']));
  await pollUntil([t], () => messages(buffer).includes('b1'), 'the new file read');
  expect(positionOf(`file:${p}`)).toMatchObject({ ino: statSync(p).ino });
  return { t, old };
}

describe('file source: a rotated file is kept open for late writes', () => {
  it('lines the daemon writes to the renamed file after the agent moved on to the new file are stored exactly once, said once at info', async () => {
    const p = join(dir, 'app.log');
    const { t, old } = await rotatedAndMovedOn(p);
    const held = heldFileDescriptors();
    // the daemon reopens its log late: two more lines to the old file, and the new file grows
    writeSync(old, text(['late 1', 'late 2']));
    append(p, ['b2']);
    await poll(t);
    expectEachOnce(messages(buffer), ['a1', 'a2', 'a3', 'b1', 'late 1', 'late 2', 'b2']);
    expect(t.status().late_lines).toBe(2);
    // and `cortex-agent status` says so on the source's line
    expect(sourceLines(t.status())[0]).toContain(', 2 lines read late from rotated files (their writer reopened its log late)');
    // the key's position is still the new file's: a restart never reads the old file again
    expect(positionOf(`file:${p}`)).toMatchObject({ ino: statSync(p).ino, offset: statSync(p).size });
    // the window restarts with each write: one more line two polls later is read too
    await poll(t);
    await poll(t);
    writeSync(old, 'late 3\n');
    await poll(t);
    expect(messages(buffer).filter((m) => m.startsWith('late'))).toEqual(['late 1', 'late 2', 'late 3']);
    expect(logged.filter((l) => /after the agent had moved on/.test(l.msg))).toEqual([]); // said once, when closed
    // not grown for rotateWaitMs: closed, its descriptor given back, said once at info
    await pollUntil([t], () => heldFileDescriptors() === held - 1, 'the rotated file closed', 5);
    const said = logged.filter((l) => /after the agent had moved on to the new file/.test(l.msg));
    expect(said.map((l) => l.level)).toEqual(['info']);
    expect(said[0]!.obj).toMatchObject({ late_lines: 3 });
    expect(said[0]!.msg).toMatch(/^3 line\(s\) \(\d+ bytes\) were written to the file rotated away from .*app\.log after the agent had moved on to the new file, .* and were read: its writer reopens its log late/);
    // written after that: not read (the documented limit of the wait)
    writeSync(old, 'too late\n');
    await poll(t);
    await poll(t);
    expect(messages(buffer)).not.toContain('too late');
    expect(t.status().last_error).toBeNull();
    expect(t.status().late_lines).toBe(3);
  });

  it('a daemon still writing to the rotated file at rotateWaitMaxMs: read until then, then closed with a warning and last_error naming the bytes; what comes after is not read', async () => {
    const p = join(dir, 'busy.log');
    const { t, old } = await rotatedAndMovedOn(p);
    const written: string[] = [];
    for (let k = 1; k <= 12; k++) {
      const line = `late ${k}`;
      writeSync(old, `${line}\n`);
      written.push(line);
      await poll(t);
    }
    const late = messages(buffer).filter((m) => m.startsWith('late'));
    // read while kept open (in order, each once), not after the bound
    expect(late.length).toBeGreaterThanOrEqual(7);
    expect(late.length).toBeLessThan(written.length);
    expect(late).toEqual(written.slice(0, late.length));
    const warned = logged.filter((l) => l.level === 'warn' && /rotated file still written to/.test(l.msg));
    expect(warned).toHaveLength(1);
    expect(warned[0]!.msg).toMatch(/^rotated file still written to \d+(\.\d+)? s after the rotation of .*busy\.log \(\d+ bytes in its last \d+(\.\d+)? s; \d+ line\(s\) read from it since the rotation\): closed, and what its writer writes to it from now on is not read — make the writer reopen its log/);
    expect(Number(warned[0]!.obj['recent_bytes'])).toBeGreaterThan(0);
    const st = t.status();
    expect(st.rotated_still_written).toBe(1);
    expect(st.late_lines).toBe(late.length);
    expect(st.last_error).toMatch(/^rotated file still written to/);
    // the status keeps saying it while the source reads on
    append(p, ['b2']);
    await poll(t);
    expect(messages(buffer)).toContain('b2');
    expect(t.status().last_error).toMatch(/^rotated file still written to/);
  });

  it('a restart while the rotated file is kept open, after lines of the new file were stored: nothing read twice, the new file read on', async () => {
    const p = join(dir, 'r1.log');
    const { t, old } = await rotatedAndMovedOn(p);
    writeSync(old, 'late 1\n');
    await poll(t);
    expect(messages(buffer)).toContain('late 1');
    await stop(t); // a restart (or crash) during the wait
    writeSync(old, 'late 2\n'); // written while the agent is stopped
    append(p, ['b2']);
    const t2 = await startTailer(p);
    await poll(t2);
    await poll(t2);
    const got = messages(buffer);
    expect(got.length).toBe(new Set(got).size);
    expect(got).toEqual(expect.arrayContaining(['a1', 'a2', 'a3', 'b1', 'late 1', 'b2']));
    // after the wait: still nothing twice, and the new file read on
    for (let i = 0; i < 5; i++) await poll(t2);
    append(p, ['b3']);
    await poll(t2);
    const after = messages(buffer);
    expect(after.length).toBe(new Set(after).size);
    expect(after).toContain('b3');
  });

  it('a restart while the rotated file is kept open, before the new file had a line: the old file is found by its identity and read on where the late lines ended', async () => {
    const p = join(dir, 'r2.log');
    append(p, ['a1', 'a2']);
    const t = await startTailer(p);
    const old = daemonFd(p);
    renameSync(p, `${p}.1`);
    writeFileSync(p, ''); // logrotate's create: the daemon has not reopened yet
    await poll(t);
    await poll(t);
    await poll(t); // moved on to the (empty) new file
    writeSync(old, 'late 1\n');
    await poll(t);
    expect(messages(buffer)).toEqual(['a1', 'a2', 'late 1']);
    // nothing of the new file committed: the key still stores the old file, where the late lines end
    expect(positionOf(`file:${p}`)).toMatchObject({ ino: statSync(`${p}.1`).ino, offset: statSync(`${p}.1`).size });
    await stop(t);
    writeSync(old, 'late 2\n'); // while stopped
    closeDaemonFd(old); // it reopens
    append(p, ['b1']);
    const t2 = await startTailer(p);
    await pollUntil([t2], () => messages(buffer).includes('b1'), 'the new file read after the old one');
    expect(messages(buffer)).toEqual(['a1', 'a2', 'late 1', 'late 2', 'b1']);
  });

  it('while a rotated file is kept open the tailer polls at its poll interval, not spaced out like an idle file (the folder watch does not wake it for that file: another name)', async () => {
    const delays: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      if (typeof ms === 'number' && ms >= POLL) delays.push(ms); // the poller's; not settle()'s
      return realSetTimeout(fn, ms);
    }) as unknown as typeof setTimeout);
    try {
      const p = join(dir, 'idle.log');
      const { t } = await rotatedAndMovedOn(p, { watch: true });
      const held = heldFileDescriptors();
      const idlePolls = async () => {
        for (let i = 0; i < 24; i++) {
          t.kick(); // nothing new; the clock does not move, so the rotated file stays open
          await settle();
        }
      };
      await idlePolls();
      expect(delays.slice(-8)).toEqual(Array(8).fill(POLL));
      // once it is closed, the same idle polls are spaced out (the folder is watched)
      await pollUntil([t], () => heldFileDescriptors() === held - 1, 'the rotated file closed', 5);
      await idlePolls();
      expect(delays.at(-1)).toBeGreaterThan(POLL);
    } finally {
      spy.mockRestore();
    }
  });

  it('after the wait a restart reads nothing again', async () => {
    const p = join(dir, 'r3.log');
    const { t, old } = await rotatedAndMovedOn(p);
    writeSync(old, 'late 1\n');
    for (let i = 0; i < 6; i++) await poll(t); // read, then closed after the wait
    expect(t.status().late_lines).toBe(1);
    await stop(t);
    const t2 = await startTailer(p);
    await poll(t2);
    append(p, ['b2']);
    await poll(t2);
    expect(messages(buffer)).toEqual(['a1', 'a2', 'a3', 'b1', 'late 1', 'b2']);
  });

  it('the rotated file kept open counts in the descriptor budget, and is closed (read to its end first) when a file to read needs the descriptor', async () => {
    const p = join(dir, 'budget.log');
    const { t, old } = await rotatedAndMovedOn(p);
    const before = heldFileDescriptors();
    // the tailer holds two: the new file and the rotated one kept open; the budget is full
    setFileBudgetForTests({ ...budgetFor(1024), files: before });
    try {
      writeSync(old, 'late 1\n');
      // another file source's file appears: opening it closes the rotated file first
      const q = join(dir, 'other.log');
      append(q, ['other 1']);
      const t2 = await startTailer(q);
      expect(messages(buffer)).toContain('other 1');
      expect(t2.status().last_error).toBeNull();
      expect(heldFileDescriptors()).toBe(before); // one closed, one opened
      expect(messages(buffer).filter((m) => m === 'late 1')).toHaveLength(1); // read before it was closed
      expect(logged.filter((l) => l.level === 'warn' && /closed early: the file sources need its descriptor/.test(l.msg))).toHaveLength(1);
      writeSync(old, 'late 2\n');
      await poll(t, t2);
      expect(messages(buffer)).not.toContain('late 2');
      expect(t.status().late_lines).toBe(1);
    } finally {
      setFileBudgetForTests(undefined);
    }
  });
});

/** A glob whose listings (scan) and tailers' polls (poll, the clock moved on by a poll interval) the test drives. */
interface Driven {
  glob: GlobFileSource;
  tailers: FileTailer[];
  poll(): Promise<void>;
  scan(): Promise<void>;
}

async function startGlob(pattern: string): Promise<Driven> {
  const tailers: FileTailer[] = [];
  const make = (path: string, key: `file:${string}`, extra: Partial<TailerOptions>): FileTailer => {
    const t = new FileTailer({ ...options(path), key, findRotated: false, ...extra });
    tailers.push(t);
    return t;
  };
  const glob = new GlobFileSource(pattern, make, POLL, false, { all: () => sink.positions!(), forget: (k) => sink.forget!(k) }, { clock: () => now, forgetAfterMs: POLL * 1000 }, logger);
  running.push(glob);
  glob.start();
  await settle();
  return {
    glob,
    tailers,
    poll: async () => {
      now += POLL;
      for (const t of tailers) t.kick();
      await settle();
    },
    scan: async () => {
      glob.scanNow();
      await settle();
    },
  };
}

/** A listing of the folder, then one poll of every tailer. */
async function round(d: Driven): Promise<void> {
  await d.scan();
  await d.poll();
}

describe('glob: a rotated file is kept open only when no name of the glob reads it on', () => {

  async function quiesce(d: Driven, rounds = 6): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      await d.scan();
      await d.poll();
    }
  }

  const lateOf = (d: Driven) => (d.glob.status() as FileTailerStatus).late_lines;

  it('renamed to a name the glob does not match (*.log, app.log → app.log.1): kept open, late lines stored once; renamed back into the glob while kept open: handed over, nothing twice; a restart reads nothing twice', async () => {
    const g = join(dir, 'g');
    mkdirSync(g);
    const p = join(g, 'app.log');
    append(p, ['a1', 'a2']);
    const d = await startGlob(join(g, '*.log'));
    expect(messages(buffer)).toEqual(['a1', 'a2']);
    const old = daemonFd(p);
    renameSync(p, `${p}.1`);
    writeFileSync(p, text(['b1']));
    await quiesce(d, 3);
    expect(messages(buffer)).toContain('b1');
    writeSync(old, 'late 1\n');
    await d.poll();
    expectEachOnce(messages(buffer), ['a1', 'a2', 'b1', 'late 1']);
    expect(lateOf(d)).toBe(1);
    // the rotated file is renamed to a name the glob matches while it is kept open: its new
    // name's tailer waits for it, takes it over where the late lines ended, and reads on
    renameSync(`${p}.1`, join(g, 'old.log'));
    writeSync(old, 'late 2\n');
    await quiesce(d, 4);
    writeSync(old, 'late 3\n');
    await quiesce(d, 2);
    expectEachOnce(messages(buffer), ['a1', 'a2', 'b1', 'late 1', 'late 2', 'late 3']);
    expect(lateOf(d)).toBe(1); // late 2 and 3 were read under its new name
    expect(buffer.getSourcePosition(`file:${join(g, 'old.log')}`)).toMatchObject({ ino: statSync(join(g, 'old.log')).ino, offset: statSync(join(g, 'old.log')).size });
    // a restart reads nothing twice
    await stop(d.glob);
    const d2 = await startGlob(join(g, '*.log'));
    await quiesce(d2, 3);
    append(p, ['b2']);
    await quiesce(d2, 2);
    expectEachOnce(messages(buffer), ['a1', 'a2', 'b1', 'late 1', 'late 2', 'late 3', 'b2']);
  });

  it('renamed to a name the glob matches: the old name does not keep it open (its new name takes it over at once), so the new file is read at once and a restart right after reads nothing twice', async () => {
    const g = join(dir, 'w');
    mkdirSync(g);
    const p = join(g, 'app.log');
    append(p, ['a1', 'a2']);
    const d = await startGlob(join(g, 'app.log*'));
    const t = d.tailers[0]!; // app.log's
    const old = daemonFd(p);
    renameSync(p, `${p}.1`);
    writeFileSync(p, text(['b1']));
    // only app.log's tailer polls: it finishes the old file and commits b1 under its key
    for (let i = 0; i < 3; i++) await poll(t);
    expect(messages(buffer)).toEqual(['a1', 'a2', 'b1']);
    writeSync(old, 'late 1\n');
    await poll(t);
    expect(t.status().late_lines).toBe(0);
    // a crash now: app.log.1 must be found where it was read to, not read again from its start
    await stop(d.glob);
    const d2 = await startGlob(join(g, 'app.log*'));
    await quiesce(d2, 3);
    expectEachOnce(messages(buffer), ['a1', 'a2', 'b1', 'late 1']);
  });

  it('renamed to a name the glob matches (app.log*, app.log → app.log.1): not kept open by the old name (its new name reads it on), late lines stored once', async () => {
    const g = join(dir, 'm');
    mkdirSync(g);
    const p = join(g, 'app.log');
    append(p, ['a1', 'a2']);
    const d = await startGlob(join(g, 'app.log*'));
    const held = heldFileDescriptors();
    const old = daemonFd(p);
    renameSync(p, `${p}.1`);
    writeFileSync(p, text(['b1']));
    await quiesce(d, 4);
    writeSync(old, 'late 1\n');
    await quiesce(d, 2);
    expectEachOnce(messages(buffer), ['a1', 'a2', 'b1', 'late 1']);
    expect(lateOf(d)).toBe(0); // read by app.log.1's tailer, not as a late line of app.log
    expect(heldFileDescriptors() - held).toBe(1); // app.log and app.log.1, no rotated file kept open beside them
    // beside it, a file renamed to a name its glob does not match: kept open, as in the test above
    const q = join(g, 'x.log');
    append(q, ['x1']);
    const d2 = await startGlob(join(g, 'x*.log'));
    const oldX = daemonFd(q);
    renameSync(q, join(g, 'x.old'));
    writeFileSync(q, '');
    await quiesce(d2, 3);
    writeSync(oldX, 'x late\n');
    await quiesce(d2, 1);
    expect(messages(buffer).filter((m) => m === 'x late')).toHaveLength(1);
    expect(lateOf(d2)).toBe(1);
  });
});

// DECISIONS D28's bound on hand-overs that cannot happen (HANDOFF_WAIT_POLLS): a glob's tailer whose
// stored position is of a file now under another name of the glob waits for that name to take the
// file over, and reads on anyway after HANDOFF_WAIT_POLLS polls. Three names whose files went round
// a ring (a → b → c → a) while the agent was stopped wait on each other in a ring the two-name check
// (names that swapped) does not see: without the bound none of the three would be read again.
describe('glob: a hand-over that cannot happen is bounded (D28, HANDOFF_WAIT_POLLS)', () => {
  it('three names whose files went round a ring while the agent was stopped wait on each other, then read on after HANDOFF_WAIT_POLLS polls: each line once, said in a warning', async () => {
    const [a, b, c] = ['a.log', 'b.log', 'c.log'].map((n) => join(dir, n)) as [string, string, string];
    writeFileSync(a, 'a1\n');
    writeFileSync(b, 'b1\n');
    writeFileSync(c, 'c1\n');
    const first = await startGlob(join(dir, '*.log'));
    await round(first);
    expect(messages(buffer).sort()).toEqual(['a1', 'b1', 'c1']);
    await stop(first.glob);

    // while the agent is stopped: a → b → c → a, through a name the glob does not match
    renameSync(a, join(dir, 'ring.tmp'));
    renameSync(c, a);
    renameSync(b, c);
    renameSync(join(dir, 'ring.tmp'), b);
    appendFileSync(b, 'a2\n'); // b.log is the file that was a.log
    appendFileSync(c, 'b2\n');
    appendFileSync(a, 'c2\n');
    const d = await startGlob(join(dir, '*.log'));

    // each name waits for the next to take over the file its stored position belongs to: nothing read
    const waitRounds = Math.floor(HANDOFF_WAIT_POLLS / 2);
    for (let i = 0; i < waitRounds; i++) await round(d);
    expect(messages(buffer).sort()).toEqual(['a1', 'b1', 'c1']);
    expect(logged.filter((l) => l.msg.includes('has not taken it over'))).toEqual([]);

    // past the bound one reads on where its file was; the others' hand-overs follow
    for (let i = waitRounds; i < HANDOFF_WAIT_POLLS + 4; i++) await round(d);
    expect(messages(buffer).sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'c1', 'c2']);
    const warned = logged.filter((l) => l.level === 'warn' && l.msg.includes('has not taken it over'));
    expect(warned.length).toBeGreaterThanOrEqual(1);
    expect(warned[0]!.msg).toMatch(/^file source: .*\.log stored the position of the file now named .*\.log, which has not taken it over; reading on \(were the agent stopped before .* has, that file would be read again from its start\)$/);

    // a restart reads nothing twice, and reads on
    await stop(d.glob);
    const d2 = await startGlob(join(dir, '*.log'));
    for (let i = 0; i < 3; i++) await round(d2);
    appendFileSync(a, 'c3\n');
    await round(d2);
    expect(messages(buffer).sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'c1', 'c2', 'c3']);
  });
});
