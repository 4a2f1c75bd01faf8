// A start that opens buffer.db and then fails — seq.json cannot take the start's reservation, or
// next_seq cannot be raised past a lost -wal's seqs, for lack of space — is a full disk that
// `run` waits out (DECISIONS H12, F16), and its clean close of the buffer (SQLite checkpoints the
// -wal into buffer.db and removes it) must not read as a lost -wal at the next start: that moved
// next_seq up to 65,536 ahead, which the server logged as entries missing. node:fs is wrapped so
// that writes of seq.json's temp file fail with ENOSPC while `full` is set.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { DurableBuffer as OpenBuffer } from '../../agent/buffer/buffer.js';
import type { NewLogEntry } from '../../agent/buffer/entry.js';

let full = false;

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const wrapped = {
    ...fs,
    writeSync: (fd: number, ...rest: unknown[]): number => {
      let target = '';
      try {
        target = fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        // not on Linux: never full
      }
      if (full && /seq\.json\.tmp-/.test(target)) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
      return (fs.writeSync as (fd: number, ...a: unknown[]) => number)(fd, ...rest);
    },
  };
  return { ...wrapped, default: wrapped };
});

const { openHealing, markCleanStop, readSeqState, bufferWhole, closedAfterOpen, CLEAN_CLOSE_MARK } = await import('../../agent/buffer/heal.js');
const { DurableBuffer } = await import('../../agent/buffer/buffer.js');
const { BufferStorageError } = await import('../../agent/buffer/errors.js');

const root = mkdtempSync(join(tmpdir(), 'cortex-startfail-'));
let n = 0;
const dir = (): string => mkdtempSync(join(root, `d${n++}-`));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  full = false;
  vi.restoreAllMocks();
});

const entries = (count: number): NewLogEntry[] => Array.from({ length: count }, (_, i) => ({ ts: '2026-01-01T00:00:00.000Z', severity: 'info', source: 'custom:c', message: `m ${i}` }));

/**
 * What a SIGKILLed run leaves: buffer.db, its -wal (50 entries committed there) and seq.json
 * saying "running". Copied while the buffer is still open, as the kill leaves them.
 */
function killedRun(): string {
  const d = dir();
  const h = openHealing(d, { synchronous: 'FULL', reserveBytes: 0 });
  h.buffer.append(entries(50));
  const image = dir();
  for (const f of ['buffer.db', 'buffer.db-wal', 'seq.json']) copyFileSync(join(d, f), join(image, f));
  h.buffer.close();
  expect(readSeqState(image)).toMatchObject({ running: true });
  return image;
}

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
}

describe('a start that fails after opening the buffer', () => {
  it('seq.json cannot be written (ENOSPC): a disk_full open naming seq.json, which run waits out; the clean close is marked, so the next start sees no lost -wal', () => {
    const d = killedRun();
    full = true;
    const err = thrown(() => openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 }));
    expect(err).toBeInstanceOf(BufferStorageError);
    expect(err).toMatchObject({ kind: 'disk_full', operation: 'open', code: 'ENOSPC', path: join(d, 'seq.json') });
    expect((err as Error).message).toMatch(/seq\.json: open failed: ENOSPC.*cortex-agent run waits and starts once there is room/);
    // SQLite's clean close took the -wal (checkpointed into buffer.db); the mark says so
    expect(existsSync(join(d, 'buffer.db-wal'))).toBe(false);
    expect(existsSync(join(d, `buffer.db${CLEAN_CLOSE_MARK}`))).toBe(true);
    expect(readSeqState(d)).toMatchObject({ running: true }); // what the killed run left
    // and again while the disk stays full: the same, nothing moves
    expect(thrown(() => openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 }))).toMatchObject({ kind: 'disk_full', operation: 'open' });

    full = false; // space freed
    const again = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    try {
      expect(again.walLost).toBeNull();
      expect(again.buffer.nextSeq).toBe(51);
      expect(again.buffer.readBatch(1, 100)).toMatchObject({ seqStart: 1, seqEnd: 50 });
      expect(again.buffer.append(entries(1)).firstSeq).toBe(51);
    } finally {
      again.buffer.close();
    }
    expect(existsSync(join(d, `buffer.db${CLEAN_CLOSE_MARK}`))).toBe(false); // removed by the start that ran
    expect(readSeqState(d)).toMatchObject({ running: true });
  });

  it('whatever ends the start (seq.json\'s temp file a folder: EISDIR), its clean close is no lost -wal at the next start (next_seq jumped 65,536 ahead)', () => {
    const d = killedRun();
    mkdirSync(join(d, `seq.json.tmp-${process.pid}`));
    const err = thrown(() => openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 }));
    expect(err).not.toBeInstanceOf(BufferStorageError); // not a full disk: as it was (run exits E_AGENT_START)
    expect(existsSync(join(d, 'buffer.db-wal'))).toBe(false); // SQLite's clean close
    rmSync(join(d, `seq.json.tmp-${process.pid}`), { recursive: true });
    const again = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    try {
      expect(again.walLost).toBeNull();
      expect(again.buffer.nextSeq).toBe(51);
    } finally {
      again.buffer.close();
    }
  });

  it('the mark is removed before the run assigns seqs: killed again and the -wal deleted, the loss is seen', () => {
    const d = killedRun();
    full = true;
    thrown(() => openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 }));
    full = false;
    const h = openHealing(d, { synchronous: 'FULL', reserveBytes: 0 });
    h.buffer.append(entries(10));
    const image = dir();
    for (const f of ['buffer.db', 'seq.json']) copyFileSync(join(d, f), join(image, f)); // killed, and its -wal deleted
    h.buffer.close();
    const after = openHealing(image, { synchronous: 'NORMAL', reserveBytes: 0 });
    try {
      expect(after.walLost).not.toBeNull();
      expect(after.buffer.nextSeq).toBeGreaterThan(60);
    } finally {
      after.buffer.close();
    }
  });

  it('next_seq cannot be raised past a lost -wal (SQLITE_FULL): a disk_full open; nothing marked, and the -wal that open made is gone, so the next start raises it', () => {
    const d = killedRun();
    rmSync(join(d, 'buffer.db-wal')); // the -wal lost after the kill: next_seq must jump
    const raise = vi.spyOn(DurableBuffer.prototype, 'raiseNextSeq').mockImplementation(function (this: OpenBuffer) {
      throw new BufferStorageError('disk_full', 'raiseNextSeq', this.path, 'SQLITE_FULL', new Error('database or disk is full'));
    });
    const err = thrown(() => openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 }));
    expect(err).toMatchObject({ kind: 'disk_full', operation: 'open', code: 'SQLITE_FULL', path: join(d, 'buffer.db') });
    expect(existsSync(join(d, `buffer.db${CLEAN_CLOSE_MARK}`))).toBe(false);
    expect(existsSync(join(d, 'buffer.db-wal'))).toBe(false);
    raise.mockRestore();
    const again = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    try {
      expect(again.walLost).not.toBeNull();
      expect(again.buffer.nextSeq).toBeGreaterThanOrEqual(65_537);
    } finally {
      again.buffer.close();
    }
  });

  it('a clean stop on a full disk (seq.json not rewritten) is marked all the same', () => {
    const d = killedRun();
    const h = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    h.buffer.append(entries(5));
    const next = h.buffer.nextSeq;
    h.buffer.close();
    full = true;
    markCleanStop(d, next);
    expect(readSeqState(d)).toMatchObject({ running: true }); // not rewritten
    expect(existsSync(join(d, `buffer.db${CLEAN_CLOSE_MARK}`))).toBe(true);
    full = false;
    const again = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    try {
      expect(again.walLost).toBeNull();
      expect(again.buffer.nextSeq).toBe(next);
    } finally {
      again.buffer.close();
    }
  });

  it('a program that opens the buffer for a moment (enroll) marks its clean close only when the buffer was whole', () => {
    const d = killedRun();
    expect(bufferWhole(d)).toBe(true); // its -wal is there
    DurableBuffer.open(join(d, 'buffer.db'), { reserveBytes: 0 }).close();
    closedAfterOpen(d, true);
    const again = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    expect(again.walLost).toBeNull();
    again.buffer.close();

    const lost = killedRun();
    rmSync(join(lost, 'buffer.db-wal'));
    expect(bufferWhole(lost)).toBe(false);
    DurableBuffer.open(join(lost, 'buffer.db'), { reserveBytes: 0 }).close();
    closedAfterOpen(lost, false);
    expect(readFileSync(join(lost, 'seq.json'), 'utf8')).toContain('"running":true');
    const after = openHealing(lost, { synchronous: 'NORMAL', reserveBytes: 0 });
    expect(after.walLost).not.toBeNull();
    after.buffer.close();
  });
});
