// A glob over a log and its numbered rotations (`app.log*`, logrotate's `rotate 2, create`)
// while the agent runs: each line stored exactly once, in order, and the stored positions such
// that a restart (or a crash) at any moment reads nothing twice (DECISIONS D11, D28).
//
// Deterministic: no poll timer fires during a test (poll intervals of a day, a clock of our
// own); the test drives the glob's folder listings (scanNow) and the tailers' polls (kick, with
// the clock moved on by a poll interval) itself, in orders drawn from a seeded generator.
import { appendFileSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { FileTailer, GlobFileSource, isFilePosition, silentLogger, sinkFromBuffer, type FilePosition } from '../../../agent/sources/index.js';
import { DEFAULT_CHUNK } from '../../../agent/sources/file/tailer.js';
import { messages, openBuffer, tempDir } from './helpers.js';

const POLL = 86_400_000; // no timer of a tailer or of the glob fires during a test: polls are driven

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let now = 1_000_000;
const globs: GlobFileSource[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-glob-rot-'));
  buffer = openBuffer(dir);
});
afterEach(async () => {
  for (const g of globs.splice(0)) await g.stop();
  buffer.close();
  cleanup();
});

/** A small seeded generator (mulberry32): the same orders every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Lets every pending immediate and 0 ms timer run (a tailer's first poll, kicks, the glob's rescans). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 0));
    for (let j = 0; j < 12; j++) await new Promise((r) => setImmediate(r));
  }
}

interface Driven {
  glob: GlobFileSource;
  tailers: FileTailer[];
  /** The folder listed now. */
  scan(): Promise<void>;
  /** One poll of every tailer (the clock moved on by a poll interval), in `order` (default: as made). */
  poll(order?: (ts: FileTailer[]) => FileTailer[]): Promise<void>;
}

async function startGlob(pattern: string): Promise<Driven> {
  const sink = sinkFromBuffer(buffer);
  const tailers: FileTailer[] = [];
  const make = (path: string, key: `file:${string}`, extra: Partial<ConstructorParameters<typeof FileTailer>[0]>): FileTailer => {
    const t = new FileTailer({
      path, key, filter: null, labels: null, sink, logger: silentLogger, clock: () => now,
      pollMs: POLL, chunkBytes: DEFAULT_CHUNK, watch: false, retryMinMs: POLL, retryMaxMs: POLL,
      rotateQuietPolls: 1, findRotated: false, ...extra,
    });
    tailers.push(t);
    return t;
  };
  const glob = new GlobFileSource(pattern, make, POLL, false, { all: () => sink.positions!(), forget: (k) => sink.forget!(k) }, { clock: () => now, forgetAfterMs: POLL * 1000 }, silentLogger);
  globs.push(glob);
  glob.start();
  await settle();
  return {
    glob,
    tailers,
    scan: async () => {
      glob.scanNow();
      await settle();
    },
    poll: async (order = (ts) => ts) => {
      now += POLL;
      for (const t of order([...tailers])) t.kick();
      await settle();
    },
  };
}

async function stopGlob(d: Driven): Promise<void> {
  await d.glob.stop();
  globs.splice(globs.indexOf(d.glob), 1);
}

/** Each file written: its lines, by identity. */
const written = new Map<string, string[]>();
const idOf = (path: string) => {
  const st = statSync(path);
  return `${st.dev}:${st.ino}`;
};
/** A new file (an inode number may be that of a file deleted before: a new generation). */
function create(path: string, content: string | Buffer = ''): void {
  writeFileSync(path, content);
  written.set(idOf(path), []);
}
function write(path: string, ls: string[], all: string[]): void {
  let fresh = false;
  try {
    statSync(path);
  } catch {
    fresh = true;
  }
  appendFileSync(path, ls.map((l) => `${l}\n`).join(''));
  const id = idOf(path);
  if (fresh) written.set(id, []);
  written.set(id, [...(written.get(id) ?? []), ...ls]);
  all.push(...ls);
}

/**
 * What a restart (or a crash) now would need: every file of the folder whose lines are (partly)
 * stored has a stored position, under some name of the glob, at least as far as the bytes stored
 * of it — else it would be read again from its start (every stored line twice).
 */
function assertPositionsCover(folder: string, names: string[]): void {
  const stored = new Set(messages(buffer));
  const rows = buffer.sourcePositions().map((r) => r.position).filter((p): p is FilePosition => isFilePosition(p));
  for (const name of names) {
    let id: string;
    try {
      id = idOf(join(folder, name));
    } catch {
      continue;
    }
    const ls = written.get(id) ?? [];
    const bytes = ls.filter((l) => stored.has(l)).reduce((a, l) => a + Buffer.byteLength(l) + 1, 0);
    if (bytes === 0) continue;
    const furthest = Math.max(-1, ...rows.filter((p) => `${p.dev}:${p.ino}` === id).map((p) => p.offset));
    expect(furthest, `${name}: ${bytes} bytes of it stored, furthest stored position ${furthest}`).toBeGreaterThanOrEqual(bytes);
  }
}

/** Every hand-over done: each name's stored position is of the file now there, at its end. */
function assertEachNameHoldsItsFile(names: string[]): void {
  const rows = new Map(buffer.sourcePositions().map((r) => [r.source, r.position]));
  for (const name of names) {
    let st;
    try {
      st = statSync(join(dir, name));
    } catch {
      continue;
    }
    expect(rows.get(`file:${join(dir, name)}`), name).toMatchObject({ dev: st.dev, ino: st.ino, offset: st.size });
  }
}

type Step = 'none' | 'scan' | 'poll' | 'poll-reversed' | 'scan+poll';
const STEPS: Step[] = ['none', 'scan', 'poll', 'poll-reversed', 'scan+poll'];

async function step(d: Driven, s: Step): Promise<void> {
  if (s === 'scan' || s === 'scan+poll') await d.scan();
  if (s === 'poll' || s === 'scan+poll') await d.poll();
  if (s === 'poll-reversed') await d.poll((ts) => ts.reverse());
}

/**
 * logrotate `rotate 2`, `create` (and `compress` without delaycompress: .2 is gzipped to
 * app.log.2.gz, which the glob also matches and skips as not text), each of its steps followed
 * by what `pick` says the agent does meanwhile; `late` lines reach app.log.1 after its rename (a
 * writer that still holds it).
 */
async function rotate(d: Driven, log: string, pick: () => Step, opts: { compress: boolean; late: string[] | null }, all: string[]): Promise<void> {
  const names = ['app.log', 'app.log.1', 'app.log.2', 'app.log.2.gz'];
  const after = async () => {
    await step(d, pick());
    assertPositionsCover(dir, names);
  };
  rmSync(`${log}.2`, { force: true });
  if (opts.compress) rmSync(`${log}.2.gz`, { force: true });
  await after();
  try {
    renameSync(`${log}.1`, `${log}.2`);
  } catch {
    // the first rotation: no .1 yet
  }
  await after();
  if (opts.compress) {
    try {
      create(`${log}.2.gz`, gzipSync(readFileSync(`${log}.2`)));
      rmSync(`${log}.2`);
    } catch {
      // no .2 yet
    }
    await after();
  }
  renameSync(log, `${log}.1`);
  await after();
  if (opts.late !== null) {
    write(`${log}.1`, opts.late, all);
    await after();
  }
  create(log);
  await after();
}

/** Polls (with listings) until nothing moves any more; at most `rounds`. */
async function quiesce(d: Driven, rounds = 8): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await d.scan();
    await d.poll();
  }
}

async function numberedRotation(seed: number, opts: { compress: boolean; cycles: number }): Promise<void> {
  written.clear();
  const next = rng(seed);
  const pick = () => STEPS[Math.floor(next() * STEPS.length)]!;
  const log = join(dir, 'app.log');
  const all: string[] = [];
  write(log, ['boot line'], all);
  const d = await startGlob(join(dir, 'app.log*'));
  for (let c = 1; c <= opts.cycles; c++) {
    write(log, Array.from({ length: 5 }, (_, i) => `cycle${c} line${i + 1}`), all);
    if (next() < 0.5) await step(d, pick()); // read before the rotation, or while draining it
    await rotate(d, log, pick, { compress: opts.compress, late: next() < 0.5 ? [`cycle${c} late`] : null }, all);
    await quiesce(d);
    expect(messages(buffer), `seed ${seed}, cycle ${c}`).toEqual(all);
    assertPositionsCover(dir, ['app.log', 'app.log.1', 'app.log.2']);
    assertEachNameHoldsItsFile(['app.log.1', 'app.log.2']);
  }
  // a restart reads nothing twice, and reads on
  await stopGlob(d);
  const d2 = await startGlob(join(dir, 'app.log*'));
  await quiesce(d2, 3);
  expect(messages(buffer), `seed ${seed}, after a restart`).toEqual(all);
  write(log, ['after the restart'], all);
  await rotate(d2, log, () => 'none', { compress: opts.compress, late: null }, all);
  await quiesce(d2);
  expect(messages(buffer), `seed ${seed}, rotated after a restart`).toEqual(all);
}

describe('glob: numbered rotation while running (app.log*, rotate 2, create)', () => {
  it('three cycles, each step of the rotation then a listing and a poll of every file: each line stored once, in order', async () => {
    written.clear();
    const log = join(dir, 'app.log');
    const all: string[] = [];
    const d = await startGlob(join(dir, 'app.log*'));
    for (let c = 1; c <= 3; c++) {
      write(log, Array.from({ length: 5 }, (_, i) => `cycle${c} line${i + 1}`), all);
      await d.poll();
      await rotate(d, log, () => 'scan+poll', { compress: false, late: null }, all);
      await quiesce(d);
      expect(messages(buffer), `cycle ${c}`).toEqual(all);
    }
    assertEachNameHoldsItsFile(['app.log.1', 'app.log.2']);
  });

  it('the whole rotation between two polls (logrotate is fast), the agent then listing before or after polling: the same', async () => {
    for (const listFirst of [true, false]) {
      written.clear();
      const log = join(dir, `x${listFirst ? 1 : 2}`, 'app.log');
      const folder = join(dir, `x${listFirst ? 1 : 2}`);
      mkdirSync(folder);
      const all: string[] = [];
      const d = await startGlob(join(folder, 'app.log*'));
      for (let c = 1; c <= 3; c++) {
        write(log, Array.from({ length: 4 }, (_, i) => `${folder} c${c} l${i}`), all);
        rmSync(`${log}.2`, { force: true });
        try {
          renameSync(`${log}.1`, `${log}.2`);
        } catch {
          // first rotation
        }
        renameSync(log, `${log}.1`);
        create(log);
        if (listFirst) await d.scan();
        await d.poll((ts) => ts.reverse());
        await d.poll();
        await quiesce(d);
        expect(messages(buffer).filter((m) => m.startsWith(folder))).toEqual(all);
      }
      await stopGlob(d);
    }
  });

  it('two names that swap files (through a name the glob does not match) are read on where they were, at once: not read again, nor left waiting for each other', async () => {
    written.clear();
    const all: string[] = [];
    const a = join(dir, 'a.log');
    const b = join(dir, 'b.log');
    write(a, ['a1', 'a2'], all);
    write(b, ['b1'], all);
    const d = await startGlob(join(dir, '*.log'));
    await d.poll();
    expect(messages(buffer).sort()).toEqual(['a1', 'a2', 'b1']);
    renameSync(a, join(dir, 'swap.tmp'));
    renameSync(b, a);
    renameSync(join(dir, 'swap.tmp'), b);
    write(a, ['b2'], all); // a.log is the file that was b.log
    write(b, ['a3'], all);
    await quiesce(d, 4); // far fewer polls than HANDOFF_WAIT_POLLS
    expect(messages(buffer).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);
    assertEachNameHoldsItsFile(['a.log', 'b.log']);
    await stopGlob(d);
    const d2 = await startGlob(join(dir, '*.log'));
    await quiesce(d2, 2);
    expect(messages(buffer).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);
  });

  for (const seed of Array.from({ length: 16 }, (_, i) => i + 1)) {
    it(`rotation steps interleaved with listings and polls in a seeded order (seed ${seed}); then a restart`, async () => {
      await numberedRotation(seed, { compress: false, cycles: 4 });
    });
  }

  for (const seed of Array.from({ length: 8 }, (_, i) => i + 101)) {
    it(`with compress (.2 → app.log.2.gz, matched and skipped as not text) (seed ${seed})`, async () => {
      await numberedRotation(seed, { compress: true, cycles: 4 });
    });
  }
});
