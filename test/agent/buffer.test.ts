import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { storedEntries, storedTotals } from '../support/buffer-rows.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUFFER_PAGE_SIZE, DAMAGED_ROWS_SUFFIX, DurableBuffer, RUN_MAX_BYTES, readBufferSnapshot, type BufferOptions, type DamagedRowReport } from '../../agent/buffer/buffer.js';
import { checkBuffer } from '../../agent/buffer/heal.js';
import { BufferStorageError, classifyStorageCode } from '../../agent/buffer/errors.js';
import { SerializedEntry, type NewLogEntry } from '../../agent/buffer/entry.js';
import { logsPushParamsJson, logsPushRequestFrame } from '../../agent/buffer/frame.js';

let dir: string;
let path: string;
const open: DurableBuffer[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cortex-buffer-'));
  path = join(dir, 'buffer.db');
});
afterEach(() => {
  for (const b of open.splice(0)) b.close();
  rmSync(dir, { recursive: true, force: true });
});

function openBuffer(options: BufferOptions = {}): DurableBuffer {
  const b = DurableBuffer.open(path, options);
  open.push(b);
  return b;
}

function reopen(b: DurableBuffer, options: BufferOptions = {}): DurableBuffer {
  b.close();
  return openBuffer(options);
}

function entries(n: number, tag = 'm', size = 0): NewLogEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    ts: '2026-05-16T19:42:50.123Z',
    severity: 'info',
    app_name: 'sshd',
    message: `${tag}${i}${'x'.repeat(size)}`,
    source: 'journald',
  }));
}

/** Ground truth straight from the file, bypassing the module. */
function rawState(): { seqs: number[]; meta: Record<string, number | null>; positions: Record<string, string> } {
  const db = new Database(path, { readonly: true });
  try {
    const seqs = storedEntries(db).map((r) => r.seq);
    const meta = db.prepare<[], Record<string, number | null>>('SELECT * FROM meta').get()!;
    const positions = Object.fromEntries(
      db.prepare<[], { source: string; position: string }>('SELECT source, position FROM source_positions').all().map((r) => [r.source, r.position]),
    );
    const sum = storedTotals(db);
    expect(meta.queue_depth).toBe(sum.n);
    expect(meta.buffer_bytes).toBe(sum.b);
    return { seqs, meta, positions };
  } finally {
    db.close();
  }
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe('seq assignment', () => {
  it('assigns seqs from 1, gap-free, and persists next_seq across reopen', () => {
    let b = openBuffer();
    expect(b.stats()).toMatchObject({ nextSeq: 1, ackedSeq: 0, queueDepth: 0, bufferBytes: 0, oldestSeq: null });
    expect(b.append(entries(3))).toEqual({ firstSeq: 1, lastSeq: 3, count: 3, evicted: null });
    expect(b.append(entries(2))).toMatchObject({ firstSeq: 4, lastSeq: 5, count: 2 });
    b = reopen(b);
    expect(b.nextSeq).toBe(6);
    expect(b.append(entries(1))).toMatchObject({ firstSeq: 6, lastSeq: 6 });
    expect(rawState().seqs).toEqual(range(1, 6));
    expect(b.stats()).toMatchObject({ nextSeq: 7, queueDepth: 6, oldestSeq: 1, pushLagSeq: 6 });
  });

  it('stores each entry as final JSON with its seq first, spliceable into a logs.push frame', () => {
    const b = openBuffer();
    const input = entries(3);
    input[1] = { ...input[1]!, metadata: { unit: 'ssh.service', n: 'é€😀' }, facility: null };
    b.append(input);
    const batch = b.readBatch(1, 10)!;
    expect(batch.seqStart).toBe(1);
    expect(batch.seqEnd).toBe(3);
    expect(batch.entries[0]!.startsWith('{"seq":1,')).toBe(true);
    expect(batch.entries.map((e) => JSON.parse(e) as unknown)).toEqual(input.map((e, i) => ({ seq: i + 1, ...e })));
    expect(batch.bytes).toBe(batch.entries.reduce((s, e) => s + Buffer.byteLength(e), 0));
    expect(JSON.parse(logsPushParamsJson(batch))).toEqual({ seq_start: 1, entries: input.map((e, i) => ({ seq: i + 1, ...e })) });
    expect(JSON.parse(logsPushRequestFrame(7, batch))).toMatchObject({ jsonrpc: '2.0', id: 7, method: 'logs.push', params: { seq_start: 1 } });
  });

  it('readBatch honours maxEntries and maxBytes and keeps frames under 128 KiB by default', () => {
    const b = openBuffer();
    b.append(entries(1000, 'm', 200));
    expect(b.readBatch(1, 10)!.entries).toHaveLength(10);
    expect(b.readBatch(995, 10)).toMatchObject({ seqStart: 995, seqEnd: 1000 });
    expect(b.readBatch(1001, 10)).toBeNull();
    const one = Buffer.byteLength(b.readBatch(1, 1)!.entries[0]!);
    expect(b.readBatch(1, 100, one * 3 + 2)!.entries).toHaveLength(3);
    expect(b.readBatch(1, 100, one * 3 + 1)!.entries).toHaveLength(2);
    expect(b.readBatch(1, 100, 1)!.entries).toHaveLength(1); // always at least one
    const full = b.readBatch(1, 1000)!;
    expect(full.entries.length).toBeLessThan(1000);
    expect(Buffer.byteLength(logsPushRequestFrame(123456, full))).toBeLessThan(128 * 1024);
  });
});

describe('ack', () => {
  it('deletes acked rows, never moves backwards, and persists', () => {
    let b = openBuffer();
    b.append(entries(10));
    expect(b.ack(4)).toMatchObject({ ackedSeq: 4, deleted: 4, jumped: false, nextSeq: 11 });
    expect(b.ack(2)).toMatchObject({ ackedSeq: 4, deleted: 0 });
    expect(b.ack(4)).toMatchObject({ ackedSeq: 4, deleted: 0 });
    expect(rawState().seqs).toEqual(range(5, 10));
    expect(b.stats()).toMatchObject({ ackedSeq: 4, queueDepth: 6, oldestSeq: 5, pushLagSeq: 6 });
    b = reopen(b);
    expect(b.ackedSeq).toBe(4);
    expect(b.ack(3).ackedSeq).toBe(4);
    expect(b.readBatch(b.ackedSeq + 1, 100)!.seqStart).toBe(5);
    b.ack(10);
    expect(b.stats()).toMatchObject({ ackedSeq: 10, queueDepth: 0, bufferBytes: 0, oldestSeq: null, nextSeq: 11 });
    expect(rawState().meta).toMatchObject({ acked_seq: 10, next_seq: 11 });
  });

  it('an ack beyond next_seq jumps next_seq so seqs are never reused', () => {
    const b = openBuffer();
    b.append(entries(3));
    expect(b.ack(7)).toMatchObject({ ackedSeq: 7, deleted: 3, jumped: true, previousNextSeq: 4, nextSeq: 8 });
    expect(b.append(entries(1)).firstSeq).toBe(8);
  });

  it('rejects a malformed seq without touching state', () => {
    const b = openBuffer();
    b.append(entries(2));
    expect(() => b.ack(-1)).toThrow(RangeError);
    expect(() => b.ack(1.5)).toThrow(RangeError);
    expect(b.stats()).toMatchObject({ ackedSeq: 0, queueDepth: 2 });
  });
});

describe('applyAccepted (replay after hello)', () => {
  it('fast-forwards acked_seq to max(local, accepted) and deletes rows <= it', () => {
    const b = openBuffer();
    b.append(entries(10));
    b.ack(2);
    expect(b.applyAccepted(6)).toMatchObject({ ackedSeq: 6, deleted: 4, jumped: false, nextSeq: 11 });
    expect(rawState().seqs).toEqual(range(7, 10));
    // a server behind the agent (restored database) never moves acked_seq back
    expect(b.applyAccepted(3)).toMatchObject({ ackedSeq: 6, deleted: 0, jumped: false });
    expect(b.readBatch(b.ackedSeq + 1, 1000)).toMatchObject({ seqStart: 7, seqEnd: 10 });
  });

  it('never numbers an entry past max_seq: an append that would is refused whole, seq_exhausted, not retryable (H53)', () => {
    const b = openBuffer();
    b.applyAccepted(Number.MAX_SAFE_INTEGER - 3);
    let refused: unknown;
    try {
      b.append(entries(4));
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(BufferStorageError);
    expect(refused).toMatchObject({ kind: 'seq_exhausted', retryable: false });
    expect((refused as Error).message).toContain('cortex-server agent reset-seq');
    expect(b.stats()).toMatchObject({ nextSeq: Number.MAX_SAFE_INTEGER - 2, queueDepth: 0 });
    expect(b.append(entries(3))).toMatchObject({ firstSeq: Number.MAX_SAFE_INTEGER - 2, lastSeq: Number.MAX_SAFE_INTEGER });
    expect(() => b.append(entries(1))).toThrow(BufferStorageError);
  });

  it('jumps next_seq past accepted_seq when the buffer was lost', () => {
    let b = openBuffer();
    expect(b.applyAccepted(42117)).toMatchObject({ ackedSeq: 42117, jumped: true, previousNextSeq: 1, nextSeq: 42118 });
    expect(b.append(entries(2))).toMatchObject({ firstSeq: 42118, lastSeq: 42119 });
    b = reopen(b);
    expect(b.stats()).toMatchObject({ nextSeq: 42120, ackedSeq: 42117, queueDepth: 2, oldestSeq: 42118 });
  });

  it('jumps when restored from an old copy with unacked rows the server already has', () => {
    const b = openBuffer();
    b.append(entries(10));
    b.ack(3);
    expect(b.applyAccepted(50)).toMatchObject({ ackedSeq: 50, deleted: 7, jumped: true, previousNextSeq: 11, nextSeq: 51 });
    expect(b.stats()).toMatchObject({ queueDepth: 0, bufferBytes: 0 });
    expect(b.append(entries(1)).firstSeq).toBe(51);
  });

  it('accepted_seq 0 on a fresh buffer changes nothing', () => {
    const b = openBuffer();
    expect(b.applyAccepted(0)).toMatchObject({ ackedSeq: 0, deleted: 0, jumped: false, nextSeq: 1 });
  });
});

describe('caps', () => {
  it('reports pressure at the soft cap and evicts the oldest entries at the hard cap', () => {
    const size = Buffer.byteLength(`{"seq":10,${JSON.stringify(entries(1, 'm', 100)[0]).slice(1)}`);
    let b = openBuffer({ softCapBytes: size * 5, hardCapBytes: size * 10 });
    b.append(entries(4, 'm', 100)); // seqs 1-4 (sizes vary by a digit or so)
    expect(b.pressure).toBe(false);
    b.append(entries(2, 'm', 100)); // 5-6
    expect(b.stats().pressure).toBe(true);
    b.ack(1);
    const r = b.append(entries(8, 'm', 100)); // 7-14: crosses the hard cap
    expect(r).toMatchObject({ firstSeq: 7, lastSeq: 14, count: 8 });
    expect(r.evicted).not.toBeNull();
    const ev = r.evicted!;
    expect(ev.fromSeq).toBe(2);
    expect(ev.toSeq).toBe(ev.fromSeq + ev.entries - 1);
    const s = b.stats();
    expect(s.bufferBytes).toBeLessThanOrEqual(size * 10);
    expect(s.bufferBytes + ev.bytes).toBeGreaterThan(size * 10);
    expect(s).toMatchObject({ evictedEntries: ev.entries, evictedOldestSeq: 2, evictedNewestSeq: ev.toSeq, oldestSeq: ev.toSeq + 1, ackedSeq: 1 });
    expect(rawState().seqs).toEqual(range(ev.toSeq + 1, 14));
    // the sender skips the gap: the next batch after acked_seq starts after the evicted range
    expect(b.readBatch(b.ackedSeq + 1, 1000)).toMatchObject({ seqStart: ev.toSeq + 1, seqEnd: 14 });
    // counters accumulate and persist
    const r2 = b.append(entries(3, 'm', 100));
    expect(r2.evicted).not.toBeNull();
    b = reopen(b, { softCapBytes: size * 5, hardCapBytes: size * 10 });
    expect(b.stats().evictedEntries).toBe(ev.entries + r2.evicted!.entries);
    expect(b.stats().evictedOldestSeq).toBe(r2.evicted!.fromSeq);
    expect(rawState().meta.evicted_entries).toBe(ev.entries + r2.evicted!.entries);
  });

  it('a batch larger than the hard cap keeps only its newest entries', () => {
    const b = openBuffer({ softCapBytes: 500, hardCapBytes: 1000 });
    const r = b.append(entries(50, 'm', 50));
    expect(r.evicted!.fromSeq).toBe(1);
    expect(b.stats().bufferBytes).toBeLessThanOrEqual(1000);
    expect(rawState().seqs).toEqual(range(r.evicted!.toSeq + 1, 50));
    expect(b.nextSeq).toBe(51);
  });

  it('rejects inconsistent caps', () => {
    expect(() => DurableBuffer.open(path, { softCapBytes: 10, hardCapBytes: 5 })).toThrow(RangeError);
  });
});

describe('source positions', () => {
  it('commits the position in the same transaction as the entries', () => {
    let b = openBuffer();
    b.append(entries(3), { source: 'file:/var/log/syslog', position: { offset: 300, ino: 12, dev: 2049 } });
    expect(b.getSourcePosition('file:/var/log/syslog')).toEqual({ offset: 300, ino: 12, dev: 2049 });
    b.append([], { source: 'journald', position: 's=abc;i=1' });
    b = reopen(b);
    expect(b.sourcePositions().map((p) => [p.source, p.position])).toEqual([
      ['file:/var/log/syslog', { offset: 300, ino: 12, dev: 2049 }],
      ['journald', 's=abc;i=1'],
    ]);
    expect(b.nextSeq).toBe(4);
    b.deleteSourcePosition('journald');
    expect(b.getSourcePosition('journald')).toBeNull();
  });

  it('a failure mid-transaction leaves neither the entries nor the position', () => {
    let fail = false;
    let b = openBuffer({
      hooks: {
        beforeCommit: () => {
          if (fail) throw new Error('injected crash before commit');
        },
      },
    });
    const source = 'file:/var/log/app.log';
    b.append(entries(5), { source, position: { offset: 500 } });
    const before = rawState();
    fail = true;
    expect(() => b.append(entries(7), { source, position: { offset: 1200 } })).toThrow('injected crash before commit');
    expect(rawState()).toEqual(before);
    expect(b.getSourcePosition(source)).toEqual({ offset: 500 });
    expect(b.stats()).toMatchObject({ nextSeq: 6, queueDepth: 5 });
    expect(() => b.ack(3)).toThrow('injected');
    expect(b.ackedSeq).toBe(0);
    fail = false;
    expect(b.append(entries(7), { source, position: { offset: 1200 } })).toMatchObject({ firstSeq: 6, lastSeq: 12 });
    b = reopen(b);
    expect(b.getSourcePosition(source)).toEqual({ offset: 1200 });
    expect(rawState().seqs).toEqual(range(1, 12));
  });
});

describe('file layout (DECISIONS P14)', () => {
  const pageSize = (): number => {
    const db = new Database(path, { readonly: true });
    try {
      return Number(db.pragma('page_size', { simple: true }));
    } finally {
      db.close();
    }
  };
  const walBytes = (): number => {
    try {
      return statSync(`${path}-wal`).size;
    } catch {
      return 0;
    }
  };
  /** Appends ~10 MiB in 100 KB commits, nothing acked; returns the largest WAL file seen after a commit. */
  const fillAndWatchWal = (b: DurableBuffer): number => {
    let largest = 0;
    for (let i = 0; i < 100; i++) {
      b.append(entries(100, `w${i}-`, 1000));
      largest = Math.max(largest, walBytes());
    }
    return largest;
  };

  it('a new buffer file has 16 KiB pages and is checkpointed every 4 MiB of WAL', () => {
    const b = openBuffer();
    expect(BUFFER_PAGE_SIZE).toBe(16384);
    expect(pageSize()).toBe(BUFFER_PAGE_SIZE);
    // SQLite's default of 1000 pages would let this WAL grow to 16 MiB: all ~10 MiB appended
    const largest = fillAndWatchWal(b);
    expect(b.stats().queueDepth).toBe(10_000);
    expect(largest).toBeGreaterThan(2 * 1024 * 1024);
    expect(largest).toBeLessThan(5 * 1024 * 1024);
  });

  /** A buffer file as an agent before P14 made it: 4 KiB pages (maxPageCount: no rebuild at this open). */
  const openOld = (): DurableBuffer => {
    const db = new Database(path);
    db.pragma('page_size = 4096');
    db.pragma('journal_mode = WAL');
    db.close();
    return openBuffer({ maxPageCount: 1_000_000 });
  };

  it('a file made with 4 KiB pages and more than 16 MiB of rows keeps its pages and works, with the same WAL bound', () => {
    let b = openOld();
    expect(pageSize()).toBe(4096);
    const largest = Math.max(fillAndWatchWal(b), fillAndWatchWal(b));
    expect(largest).toBeLessThan(5 * 1024 * 1024);
    b = reopen(b);
    expect(pageSize()).toBe(4096);
    const batch = b.readBatch(1, 50)!;
    expect(batch).toMatchObject({ seqStart: 1, seqEnd: 50 });
    expect(JSON.parse(batch.entries[0]!)).toMatchObject({ seq: 1, message: `w0-0${'x'.repeat(1000)}` });
    expect(b.ack(15_000).ackedSeq).toBe(15_000);
    expect(rawState().seqs).toEqual(range(15_001, 20_000));
  });

  it('a small file made with 4 KiB pages is rebuilt with 16 KiB pages when opened: every row, the counters and the positions kept', () => {
    let b = openOld();
    const source = 'file:/var/log/app.log';
    b.append(entries(1000, 'old-', 100), { source, position: { offset: 4242 } });
    b.ack(100);
    const before = rawState();
    expect(pageSize()).toBe(4096);
    b = reopen(b);
    expect(pageSize()).toBe(BUFFER_PAGE_SIZE);
    expect(rawState()).toEqual(before);
    // the WAL file is there again: the agent's next open does not take it for a lost WAL (heal.ts)
    expect(statSync(`${path}-wal`).isFile()).toBe(true);
    expect(b.getSourcePosition(source)).toEqual({ offset: 4242 });
    expect(b.readBatch(101, 5)).toMatchObject({ seqStart: 101, seqEnd: 105 });
    expect(b.append(entries(3))).toMatchObject({ firstSeq: 1001, lastSeq: 1003 });
    expect(b.stats()).toMatchObject({ ackedSeq: 100, queueDepth: 903 });
    b = reopen(b);
    expect(rawState().seqs).toEqual(range(101, 1003));
  });

  it('no rebuild without room on the disk for it, nor while another connection reads the file', () => {
    let b = openOld();
    b.append(entries(100));
    b = reopen(b, { diskSpace: () => ({ free: 10 * 1024 * 1024, total: 10 * 1024 ** 3 }) });
    expect(pageSize()).toBe(4096);
    b.close();
    open.splice(open.indexOf(b), 1);
    const reader = new Database(path, { readonly: true });
    try {
      const read = reader.prepare('SELECT seq FROM entries ORDER BY seq').iterate();
      read.next(); // holds a read transaction open
      b = openBuffer();
      expect(pageSize()).toBe(4096);
      read.return?.();
    } finally {
      reader.close();
    }
    expect(b.append(entries(2))).toMatchObject({ firstSeq: 101, lastSeq: 102 });
    b = reopen(b);
    expect(pageSize()).toBe(BUFFER_PAGE_SIZE);
    expect(rawState().seqs).toEqual(range(1, 102));
  });
});

describe('giving space back after a backlog (DECISIONS H22)', () => {
  const MB = 1024 * 1024;
  /** 80 MB of entries in 20 appends, the last with a source position. */
  function backlog(b: DurableBuffer): void {
    for (let i = 0; i < 19; i++) b.append(entries(1000, `b${i}-`, 4000));
    b.append(entries(1000, 'b19-', 4000), { source: 'file:/var/log/app.log', position: { offset: 123456 } });
  }

  it('a drained buffer gives its free pages back: the unacked rows, the counters and the positions kept; then it goes on', () => {
    const b = openBuffer();
    backlog(b);
    b.ack(19_990);
    const grown = statSync(path).size;
    expect(grown).toBeGreaterThan(80 * MB);
    const stats = b.stats();
    const batch = b.readBatch(19_991, 1000);
    const raw = rawState();
    const freed = b.reclaim();
    expect(freed).toBeGreaterThan(70 * MB);
    expect(statSync(path).size).toBeLessThan(2 * MB);
    expect(statSync(path).size).toBe(grown - freed);
    expect(b.stats()).toEqual(stats);
    expect(b.readBatch(19_991, 1000)).toEqual(batch);
    expect(batch).toMatchObject({ seqStart: 19_991, seqEnd: 20_000 });
    expect(batch?.entries).toHaveLength(10);
    expect(rawState()).toEqual(raw);
    expect(b.getSourcePosition('file:/var/log/app.log')).toEqual({ offset: 123456 });
    expect(b.reclaim()).toBe(0); // nothing more to give
    expect(b.append(entries(2))).toMatchObject({ firstSeq: 20_001, lastSeq: 20_002 });
    const again = reopen(b);
    expect(again.stats()).toMatchObject({ nextSeq: 20_003, ackedSeq: 19_990, queueDepth: 12 });
    expect(rawState().seqs).toEqual(range(19_991, 20_002));
  });

  it('not while much is still queued, nor for little free space, nor without room on the disk for the copy', () => {
    let b = openBuffer();
    backlog(b);
    b.ack(10_000); // 40 MB still queued: the rebuild would copy it all
    expect(b.reclaim()).toBe(0);
    b.ack(20_000);
    b.append(entries(10, 'live', 400_000)); // 4 MB live
    b = reopen(b, { diskSpace: () => ({ free: 65 * MB, total: 10 * 1024 ** 3 }) }); // the low-water mark is 64 MiB: no room for the copy above it
    expect(b.reclaim()).toBe(0);
    expect(statSync(path).size).toBeGreaterThan(80 * MB);
    b = reopen(b);
    expect(b.reclaim()).toBeGreaterThan(70 * MB);
    expect(rawState().seqs).toEqual(range(20_001, 20_010));
  });

  it('a reader holding the WAL (cortex-agent status) does not stop it; the file shrinks at a later checkpoint', () => {
    const b = openBuffer();
    backlog(b);
    b.ack(20_000);
    const reader = new Database(path, { readonly: true });
    try {
      const read = reader.prepare('SELECT source FROM source_positions').iterate();
      read.next(); // a read transaction open
      expect(() => b.reclaim()).not.toThrow();
      read.return?.();
    } finally {
      reader.close();
    }
    b.append(entries(1));
    b.reclaim();
    const c = reopen(b);
    expect(statSync(path).size).toBeLessThan(2 * MB);
    expect(c.stats()).toMatchObject({ nextSeq: 20_002, queueDepth: 1 });
  });
});

describe('storage errors', () => {
  it('a full disk gives a typed error, changes nothing, and the buffer recovers when space returns', () => {
    const b = openBuffer({ maxPageCount: 40 });
    const source = 'file:/var/log/big.log';
    let failure: unknown;
    let appended = 0;
    let before = rawState();
    for (let i = 0; i < 1000 && failure === undefined; i++) {
      before = rawState();
      try {
        b.append(entries(20, `b${i}-`, 300), { source, position: { offset: i } });
        appended += 20;
      } catch (err) {
        failure = err;
      }
    }
    expect(failure).toBeInstanceOf(BufferStorageError);
    const e = failure as BufferStorageError;
    expect(e).toMatchObject({ kind: 'disk_full', code: 'SQLITE_FULL', operation: 'append', retryable: true });
    expect(e.message).toContain(path);
    expect(e.message).toMatch(/full/);
    expect(rawState()).toEqual(before);
    expect(b.stats()).toMatchObject({ nextSeq: appended + 1, queueDepth: appended });
    // the sender keeps working while full: acks free pages
    expect(b.readBatch(1, 5)!.seqStart).toBe(1);
    // space returns
    b.setMaxPageCount(100_000);
    expect(b.append(entries(20), { source, position: { offset: 9999 } })).toMatchObject({ firstSeq: appended + 1 });
    expect(rawState().seqs).toEqual(range(1, appended + 20));
    expect(b.getSourcePosition(source)).toEqual({ offset: 9999 });
  });

  it('classifies storage error codes', () => {
    expect(classifyStorageCode('SQLITE_FULL')).toBe('disk_full');
    expect(classifyStorageCode('ENOSPC')).toBe('disk_full');
    expect(classifyStorageCode('SQLITE_IOERR_SHMSIZE')).toBe('disk_full'); // the WAL index could not grow: space
    expect(classifyStorageCode('SQLITE_IOERR_WRITE')).toBe('io');
    expect(classifyStorageCode('SQLITE_IOERR_FSYNC')).toBe('io');
    expect(classifyStorageCode('SQLITE_READONLY')).toBe('read_only');
    expect(classifyStorageCode('SQLITE_READONLY_DBMOVED')).toBe('read_only');
    expect(classifyStorageCode('EROFS')).toBe('read_only');
    expect(classifyStorageCode('SQLITE_BUSY')).toBe('busy');
    expect(classifyStorageCode('SQLITE_NOTADB')).toBe('corrupt');
    expect(classifyStorageCode('SQLITE_CANTOPEN')).toBe('cannot_open');
    expect(classifyStorageCode('ERR_SOMETHING')).toBeUndefined();
  });

  it('opening a file that is not a buffer gives a typed error', async () => {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path, 'this is not a database, just some text that is long enough to have a header '.repeat(20));
    expect(() => DurableBuffer.open(path)).toThrow(BufferStorageError);
    try {
      DurableBuffer.open(path);
    } catch (err) {
      expect(err).toMatchObject({ kind: 'corrupt', operation: 'open' });
    }
  });

  it('opening in a missing folder gives a typed error', () => {
    try {
      DurableBuffer.open(join(dir, 'missing', 'buffer.db'));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(BufferStorageError);
      expect(err).toMatchObject({ kind: 'cannot_open', operation: 'open' });
    }
  });
});

describe('readBufferSnapshot', () => {
  it('reads the live state from another connection while the buffer is open', () => {
    const b = openBuffer();
    b.append(entries(5), { source: 'journald', position: 'cursor-1' });
    b.ack(2);
    const snap = readBufferSnapshot(path);
    expect(snap.stats).toMatchObject({ nextSeq: 6, ackedSeq: 2, queueDepth: 3, oldestSeq: 3, pressure: false });
    expect(snap.sources).toEqual([{ source: 'journald', position: 'cursor-1', updatedAt: expect.any(String) as unknown }]);
    expect(() => readBufferSnapshot(join(dir, 'nope.db'))).toThrow(BufferStorageError);
  });
});

describe('entry text (DECISIONS P8: JSON without a backslash-u escape skips the text scans)', () => {
  it('stores exactly what the full path stores, for texts with and without escapes', async () => {
    const { storableText } = await import('@cortex/agent-protocol/runtime');
    const base = { ts: '2026-05-16T19:42:50.123Z', severity: 'info' as const, source: 'journald' as const };
    const cases: { entry: NewLogEntry; chars: number }[] = [
      { entry: { ...base, message: 'plain text' }, chars: 0 },
      { entry: { ...base, message: 'C:\\users\\u0041 literal backslash-u' }, chars: 0 },
      { entry: { ...base, message: 'ctl \u0001 and tab \t' }, chars: 0 },
      { entry: { ...base, message: 'nul \u0000 here' }, chars: 1 },
      { entry: { ...base, message: 'pair 😀 ok', app_name: 'lone \ud800 high' }, chars: 1 },
      { entry: { ...base, message: 'low \udc00 and \u0000', process_id: '\udfff' }, chars: 3 },
      { entry: { ...base, message: 'metadata keeps its own text', metadata: { k: 'lone \ud800 in metadata', n: 1 } }, chars: 0 },
    ];
    const b = openBuffer();
    for (const { entry, chars } of cases) {
      const r = b.append([entry]);
      if (chars === 0) expect(r.degraded).toBeUndefined();
      else expect(r.degraded).toEqual({ metadata: 0, chars });
      const expected: Record<string, unknown> = { ...entry };
      for (const k of ['message', 'facility', 'app_name', 'process_id', 'source'] as const) {
        const v = expected[k];
        if (typeof v === 'string') expected[k] = storableText(v).text;
      }
      const stored = b.readBatch(r.firstSeq, 1)!.entries[0]!;
      expect(stored).toBe(`{"seq":${r.firstSeq},${JSON.stringify(expected).slice(1)}`);
      expect(b.readBatch(r.firstSeq, 1)!.bytes).toBe(Buffer.byteLength(stored));
    }
    // the sizes and texts from the tail are the ones SQLite holds
    const reopened = reopen(b);
    expect(rawState().seqs).toHaveLength(cases.length);
    expect(reopened.readBatch(1, 100)!.bytes).toBe(cases.reduce((n, _, i) => n + reopened.readBatch(i + 1, 1)!.bytes, 0));
  });
});

describe('runs: one row per append (schema 2, DECISIONS P21)', () => {
  const rowsOf = (): { seq: number; n: number }[] => {
    const db = new Database(path, { readonly: true });
    try {
      return db.prepare<[], { seq: number; n: number }>('SELECT seq, n FROM entries ORDER BY seq').all();
    } finally {
      db.close();
    }
  };

  it('an append is one row; a large one is cut into rows of at most RUN_MAX_BYTES', () => {
    const b = openBuffer();
    b.append(entries(300)); // ~30 KB: one row
    expect(rowsOf()).toEqual([{ seq: 1, n: 300 }]);
    b.append(entries(400, 'big', 1000)); // ~430 KB: four rows
    const rows = rowsOf();
    expect(rows.length).toBe(5);
    expect(rows.slice(1).reduce((a, r) => a + r.n, 0)).toBe(400);
    const db = new Database(path, { readonly: true });
    try {
      for (const r of storedEntries(db)) expect(JSON.parse(r.json)).toMatchObject({ seq: r.seq });
      for (const r of db.prepare<[], { bytes: number }>('SELECT bytes FROM entries WHERE seq > 300').all()) expect(r.bytes).toBeLessThanOrEqual(RUN_MAX_BYTES);
    } finally {
      db.close();
    }
    expect(rawState().seqs).toEqual(range(1, 700));
  });

  it('an ack inside a run keeps the row until all of it is acked; a reopened buffer reads from acked_seq + 1 and counts only what is left', () => {
    let b = openBuffer();
    b.append(entries(100)); // row 1..100
    b.append(entries(100)); // row 101..200
    const r = b.ack(40);
    expect(r).toMatchObject({ ackedSeq: 40, deleted: 40 });
    expect(rowsOf()).toEqual([{ seq: 1, n: 100 }, { seq: 101, n: 100 }]);
    b = reopen(b); // no in-memory tail: every read and count comes from SQLite
    expect(b.stats()).toMatchObject({ queueDepth: 160, oldestSeq: 41, ackedSeq: 40 });
    expect(b.readBatch(1, 10)).toMatchObject({ seqStart: 41, seqEnd: 50 }); // the acked part of the row is not read
    const batch = b.readBatch(41, 1000)!;
    expect(batch.seqStart).toBe(41);
    expect(batch.entries.map((e) => (JSON.parse(e) as { seq: number }).seq)).toEqual(range(41, 200));
    expect(readBufferSnapshot(path).stats).toMatchObject({ queueDepth: 160, oldestSeq: 41 });
    const r2 = b.ack(150); // across the row boundary, counted from the rows
    expect(r2).toMatchObject({ ackedSeq: 150, deleted: 110 });
    expect(rowsOf()).toEqual([{ seq: 101, n: 100 }]);
    expect(rawState().seqs).toEqual(range(151, 200)); // counters = what the rows hold above acked_seq
    b.ack(200);
    expect(rowsOf()).toEqual([]);
    expect(b.stats()).toMatchObject({ queueDepth: 0, bufferBytes: 0, oldestSeq: null });
  });

  it('eviction at the hard cap can stop inside a run: the rest of it stays, from its first kept seq', () => {
    const size = Buffer.byteLength(`{"seq":10,${JSON.stringify(entries(1, 'm', 100)[0]).slice(1)}`);
    const caps = { softCapBytes: size * 20, hardCapBytes: size * 50 };
    let b = openBuffer(caps);
    b.append(entries(40, 'm', 100)); // one row 1..40
    b.ack(5); // the row now straddles acked_seq
    b = reopen(b, caps); // no in-memory tail: the next read splits the row from SQLite (and keeps it split)
    expect(b.readBatch(6, 5)).toMatchObject({ seqStart: 6, seqEnd: 10 });
    const r = b.append(entries(20, 'm', 100)); // 41..60: 55 entries live, over the cap by about 5
    const ev = r.evicted!;
    expect(ev.fromSeq).toBe(6); // acked entries are not evicted again
    expect(ev.entries).toBeGreaterThan(0);
    expect(ev.entries).toBeLessThan(35);
    expect(rowsOf()[0]).toEqual({ seq: ev.toSeq + 1, n: 40 - ev.toSeq });
    expect(rawState().seqs).toEqual(range(ev.toSeq + 1, 60));
    expect(b.readBatch(6, 1000)).toMatchObject({ seqStart: ev.toSeq + 1, seqEnd: 60 });
  });

  it('a file of the layout before (schema 1, one entry a row) opens as runs of one: rows read, acked and checked, then appends make runs', () => {
    const db = new Database(path);
    db.exec(`PRAGMA journal_mode = WAL;
      CREATE TABLE entries (seq INTEGER PRIMARY KEY, bytes INTEGER NOT NULL, json TEXT NOT NULL);
      CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), schema_version INTEGER NOT NULL, next_seq INTEGER NOT NULL, acked_seq INTEGER NOT NULL, queue_depth INTEGER NOT NULL, buffer_bytes INTEGER NOT NULL, evicted_entries INTEGER NOT NULL, evicted_oldest_seq INTEGER, evicted_newest_seq INTEGER);
      CREATE TABLE source_positions (source TEXT PRIMARY KEY, position TEXT NOT NULL, updated_at TEXT NOT NULL);`);
    const texts = Array.from({ length: 10 }, (_, i) => `{"seq":${i + 1},"ts":"2026-05-16T19:42:50.123Z","severity":"info","message":"old ${i + 1}","source":"journald"}`);
    const ins = db.prepare('INSERT INTO entries (seq, bytes, json) VALUES (?, ?, ?)');
    texts.forEach((t, i) => ins.run(i + 1, Buffer.byteLength(t), t));
    const total = texts.reduce((a, t) => a + Buffer.byteLength(t), 0);
    db.prepare('INSERT INTO meta VALUES (1, 1, 11, 0, 10, ?, 0, NULL, NULL)').run(total);
    db.prepare("INSERT INTO source_positions VALUES ('journald', '{\"cursor\":\"c1\"}', '2026-05-16T19:42:50.123Z')").run();
    db.close();
    // buffer check reads it as it is (read-only: nothing migrated)
    expect(checkBuffer(path)).toMatchObject({ ok: true, rows: 10, queue_depth: 10, problems: [] });

    const b = openBuffer();
    expect(rawState().meta.schema_version).toBe(2);
    expect(b.stats()).toMatchObject({ queueDepth: 10, bufferBytes: total, nextSeq: 11 });
    expect(b.readBatch(1, 1000)!.entries).toEqual(texts);
    expect(b.getSourcePosition('journald')).toEqual({ cursor: 'c1' });
    expect(b.ack(4)).toMatchObject({ deleted: 4, deletedBytes: texts.slice(0, 4).reduce((a, t) => a + Buffer.byteLength(t), 0) });
    expect(b.append(entries(5))).toMatchObject({ firstSeq: 11, lastSeq: 15 });
    expect(rowsOf()).toEqual([...range(5, 10).map((seq) => ({ seq, n: 1 })), { seq: 11, n: 5 }]);
    expect(rawState().seqs).toEqual(range(5, 15));
  });

  it('a prepared entry text holding a raw line feed (JSON whitespace) is stored without it, one entry', () => {
    const b = openBuffer();
    const rest = '"ts":"2026-05-16T19:42:50.123Z",\n"severity":"info","message":"lf","source":"journald"}';
    b.append([...entries(2), new SerializedEntry(rest, Buffer.byteLength(rest)), ...entries(2)]);
    const reread = reopen(b).readBatch(1, 100)!;
    expect(reread.entries.length).toBe(5);
    expect(JSON.parse(reread.entries[2]!)).toEqual({ seq: 3, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'lf', source: 'journald' });
    expect(reread.entries[2]).not.toContain('\n');
    expect(rawState().meta.buffer_bytes).toBe(reread.bytes);
  });

  it('buffer check names a row whose text does not split into its n entries', () => {
    const b = openBuffer();
    b.append(entries(10));
    b.close();
    open.splice(open.indexOf(b), 1);
    const db = new Database(path);
    db.prepare('UPDATE entries SET n = 11').run();
    db.close();
    expect(checkBuffer(path).problems).toContainEqual({ kind: 'seq', message: 'row 1 does not hold its 11 entries' });
  });
});

describe('a damaged row is set aside where it is met (DECISIONS P22)', () => {
  /** Closes `b`, then removes the line feeds of the row at `seq` (a damaged byte: the row no longer splits into its n entries); returns the damaged text. */
  const damageRow = (b: DurableBuffer, seq: number): string => {
    b.close();
    open.splice(open.indexOf(b), 1);
    const db = new Database(path);
    try {
      db.prepare('UPDATE entries SET json = replace(json, char(10), \' \') WHERE seq = ?').run(seq);
      return db.prepare<[number], { json: string }>('SELECT json FROM entries WHERE seq = ?').get(seq)!.json;
    } finally {
      db.close();
    }
  };
  const damagedFile = (): string => `${path}${DAMAGED_ROWS_SUFFIX}`;
  const keptRows = (): { seq: number; n: number; acked_seq: number; json: string }[] =>
    existsSync(damagedFile()) ? readFileSync(damagedFile(), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { seq: number; n: number; acked_seq: number; json: string }) : [];
  const listen = (b: DurableBuffer): DamagedRowReport[] => {
    const heard: DamagedRowReport[] = [];
    b.setDamagedRowListener((r) => heard.push(r));
    return heard;
  };

  it('read: the row text is kept aside, its seqs are a gap, and every entry before and after it is read; the counters stay exact', () => {
    const b = openBuffer();
    b.append(entries(10)); // row 1..10
    b.append(entries(10)); // row 11..20
    b.append(entries(10)); // row 21..30
    const text = damageRow(b, 11);
    const again = openBuffer();
    const heard = listen(again);
    expect(again.readBatch(1, 100)).toMatchObject({ seqStart: 1, seqEnd: 10 }); // stops at the gap
    expect(heard).toEqual([{ rowSeq: 11, rowEnd: 20, lostFrom: 11, lostTo: 20, file: damagedFile(), reason: expect.stringContaining('row 11..20 of entries does not hold its 10 entries') }]);
    expect(keptRows()).toEqual([expect.objectContaining({ seq: 11, n: 10, acked_seq: 0, json: text })]);
    expect(again.readBatch(11, 100)).toMatchObject({ seqStart: 21, seqEnd: 30 });
    expect(rawState().seqs).toEqual([...range(1, 10), ...range(21, 30)]); // (rawState checks queue_depth and buffer_bytes against the rows)
    expect(again.stats()).toMatchObject({ queueDepth: 20, nextSeq: 31 });
    expect(checkBuffer(path, [[11, 20]])).toMatchObject({ ok: true, problems: [] });
    expect(again.ack(30)).toMatchObject({ ackedSeq: 30 });
    expect(again.stats()).toMatchObject({ queueDepth: 0, bufferBytes: 0 });
    expect(heard).toHaveLength(1);
  });

  it('ack: a damaged row that straddles acked_seq is set aside and the ack goes through; only its unacked seqs are lost', () => {
    let b = openBuffer();
    b.append(entries(10)); // row 1..10
    b.append(entries(10)); // row 11..20
    b.ack(4);
    damageRow(b, 1);
    b = openBuffer();
    const heard = listen(b);
    expect(b.ack(15)).toMatchObject({ ackedSeq: 15 });
    expect(heard).toEqual([expect.objectContaining({ rowSeq: 1, rowEnd: 10, lostFrom: 5, lostTo: 10 })]);
    expect(keptRows()).toEqual([expect.objectContaining({ seq: 1, n: 10, acked_seq: 4 })]);
    expect(rawState().seqs).toEqual(range(16, 20));
    expect(b.stats()).toMatchObject({ queueDepth: 5, ackedSeq: 15 });
  });

  it('append: an eviction that stops in a damaged row sets it aside and the append is stored', () => {
    const size = Buffer.byteLength(`{"seq":10,${JSON.stringify(entries(1, 'm', 100)[0]).slice(1)}`);
    const caps = { softCapBytes: size * 20, hardCapBytes: size * 50 };
    let b = openBuffer(caps);
    b.append(entries(40, 'm', 100)); // row 1..40
    b.ack(5); // it straddles acked_seq: eviction splits it
    damageRow(b, 1);
    b = openBuffer(caps);
    const heard = listen(b);
    const r = b.append(entries(20, 'm', 100)); // 41..60: over the cap only with row 1
    expect(r).toMatchObject({ firstSeq: 41, lastSeq: 60, evicted: null });
    expect(heard).toEqual([expect.objectContaining({ rowSeq: 1, lostFrom: 6, lostTo: 40 })]);
    expect(rawState().seqs).toEqual(range(41, 60));
    expect(b.readBatch(6, 1000)).toMatchObject({ seqStart: 41, seqEnd: 60 });
  });

  it('several damaged rows in one read are each set aside; a damaged row whose seqs were all acked is only removed', () => {
    let b = openBuffer();
    for (let i = 0; i < 5; i++) b.append(entries(4)); // rows 1, 5, 9, 13, 17
    damageRow(b, 5);
    b = openBuffer();
    damageRow(b, 9);
    b = openBuffer();
    damageRow(b, 13);
    b = openBuffer();
    const heard = listen(b);
    expect(b.readBatch(5, 100)).toMatchObject({ seqStart: 17, seqEnd: 20 });
    expect(heard.map((r) => [r.lostFrom, r.lostTo])).toEqual([[5, 8], [9, 12], [13, 16]]);
    expect(keptRows().map((r) => r.seq)).toEqual([5, 9, 13]);
    expect(rawState().seqs).toEqual([...range(1, 4), ...range(17, 20)]);
  });
});
