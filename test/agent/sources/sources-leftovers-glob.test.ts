// DECISIONS D28's bound on hand-overs that cannot happen (HANDOFF_WAIT_POLLS), untested until now
// (a D29 leftover): a glob's tailer whose stored position is of a file now under another name of
// the glob waits for that name to take the file over — and reads on anyway after
// HANDOFF_WAIT_POLLS polls. Three names whose files went round a ring (a → b → c → a) while the
// agent was stopped wait on each other in a ring the two-name check (names that swapped) does not
// see: without the bound none of the three would ever be read again. (While the agent runs, the
// same ring is handed over at once: each old file is drained under its old name first.)
//
// Deterministic, as file-glob-rotation.test.ts: no timer fires (poll intervals of a day, a clock
// of our own); the test lists the folder and polls the tailers itself.
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { FileTailer, GlobFileSource, sinkFromBuffer } from '../../../agent/sources/index.js';
import { HANDOFF_WAIT_POLLS } from '../../../agent/sources/file/glob.js';
import { DEFAULT_CHUNK } from '../../../agent/sources/file/tailer.js';
import { capturingLogger, messages, openBuffer, tempDir, type Logged } from './helpers.js';

const POLL = 86_400_000; // no timer of a tailer or of the glob fires during a test: polls are driven

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let now = 1_000_000;
const globs: GlobFileSource[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-glob-left-'));
  buffer = openBuffer(dir);
});
afterEach(async () => {
  for (const g of globs.splice(0)) await g.stop();
  buffer.close();
  cleanup();
});

/** Lets every pending immediate and 0 ms timer run (a tailer's first poll, kicks, the glob's rescans). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 0));
    for (let j = 0; j < 12; j++) await new Promise((r) => setImmediate(r));
  }
}

interface Driven {
  glob: GlobFileSource;
  logged: Logged[];
  /** A listing of the folder, then one poll of every tailer (the clock moved on by a poll interval). */
  round(): Promise<void>;
}

async function startGlob(pattern: string): Promise<Driven> {
  const sink = sinkFromBuffer(buffer);
  const { logged, logger } = capturingLogger();
  const tailers: FileTailer[] = [];
  const make = (path: string, key: `file:${string}`, extra: Partial<ConstructorParameters<typeof FileTailer>[0]>): FileTailer => {
    const t = new FileTailer({
      path, key, filter: null, labels: null, sink, logger, clock: () => now,
      pollMs: POLL, chunkBytes: DEFAULT_CHUNK, watch: false, retryMinMs: POLL, retryMaxMs: POLL,
      rotateQuietPolls: 1, findRotated: false, ...extra,
    });
    tailers.push(t);
    return t;
  };
  const glob = new GlobFileSource(pattern, make, POLL, false, { all: () => sink.positions!(), forget: (k) => sink.forget!(k) }, { clock: () => now, forgetAfterMs: POLL * 1000 }, logger);
  globs.push(glob);
  glob.start();
  await settle();
  return {
    glob,
    logged,
    round: async () => {
      glob.scanNow();
      await settle();
      now += POLL;
      for (const t of tailers) t.kick();
      await settle();
    },
  };
}

describe('glob: a hand-over that cannot happen is bounded (D28, HANDOFF_WAIT_POLLS)', () => {
  it('three names whose files went round a ring while the agent was stopped wait on each other, then read on after HANDOFF_WAIT_POLLS polls: each line once, said in a warning', async () => {
    const [a, b, c] = ['a.log', 'b.log', 'c.log'].map((n) => join(dir, n)) as [string, string, string];
    writeFileSync(a, 'a1\n');
    writeFileSync(b, 'b1\n');
    writeFileSync(c, 'c1\n');
    const first = await startGlob(join(dir, '*.log'));
    await first.round();
    expect(messages(buffer).sort()).toEqual(['a1', 'b1', 'c1']);
    await first.glob.stop();
    globs.splice(globs.indexOf(first.glob), 1);

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
    for (let i = 0; i < waitRounds; i++) await d.round();
    expect(messages(buffer).sort()).toEqual(['a1', 'b1', 'c1']);
    expect(d.logged.filter((l) => l.msg.includes('has not taken it over'))).toEqual([]);

    // past the bound one reads on where its file was; the others' hand-overs follow
    for (let i = waitRounds; i < HANDOFF_WAIT_POLLS + 4; i++) await d.round();
    expect(messages(buffer).sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'c1', 'c2']);
    const warned = d.logged.filter((l) => l.level === 'warn' && l.msg.includes('has not taken it over'));
    expect(warned.length).toBeGreaterThanOrEqual(1);
    expect(warned[0]!.msg).toMatch(/^file source: .*\.log stored the position of the file now named .*\.log, which has not taken it over; reading on \(were the agent stopped before .* has, that file would be read again from its start\)$/);

    // a restart reads nothing twice, and reads on
    await d.glob.stop();
    globs.splice(globs.indexOf(d.glob), 1);
    const d2 = await startGlob(join(dir, '*.log'));
    for (let i = 0; i < 3; i++) await d2.round();
    appendFileSync(a, 'c3\n');
    await d2.round();
    expect(messages(buffer).sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'c1', 'c2', 'c3']);
  });
});
