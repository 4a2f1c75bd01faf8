// readBatch serves the newest committed rows from memory (the buffer's tail): every answer
// must be the one SQLite gives for the same rows (a second connection, reopened, has no tail).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { storedTotals } from '../support/buffer-rows.js';
import fc from 'fast-check';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DurableBuffer, TAIL_MAX_BYTES, type BufferBatch } from '../../agent/buffer/buffer.js';
import type { NewLogEntry } from '../../agent/buffer/entry.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cortex-tail-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const entries = (n: number, size: number): NewLogEntry[] =>
  Array.from({ length: n }, (_, i) => ({ ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: `m${i}${'x'.repeat(size)}`, source: 'custom:t' }));

/** What a buffer without a tail (reopened) answers for the same reads. */
function fromDisk(path: string, reads: [number, number, number][], options = {}): (BufferBatch | null)[] {
  const b = DurableBuffer.open(path, options);
  try {
    return reads.map(([from, max, bytes]) => b.readBatch(from, max, bytes));
  } finally {
    b.close();
  }
}

type Op = { op: 'append'; n: number; size: number } | { op: 'ack'; k: number } | { op: 'raise'; by: number };

it('readBatch from the tail equals readBatch from SQLite after any appends, acks, raised next_seq and evictions', () => {
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ op: fc.constant('append' as const), n: fc.integer({ min: 0, max: 60 }), size: fc.integer({ min: 0, max: 300 }) }),
    fc.record({ op: fc.constant('ack' as const), k: fc.integer({ min: 0, max: 80 }) }),
    fc.record({ op: fc.constant('raise' as const), by: fc.integer({ min: 1, max: 5 }) }),
  );
  let run = 0;
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 12 }), fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 70 }), fc.integer({ min: 1, max: 6000 })), { minLength: 1, maxLength: 8 }), (ops, reads) => {
      const path = join(dir, `b${run++}.db`);
      const options = { hardCapBytes: 16 * 1024, softCapBytes: 8 * 1024 }; // small: evictions happen
      const b = DurableBuffer.open(path, options);
      let got: (BufferBatch | null)[];
      try {
        for (const o of ops) {
          if (o.op === 'append') b.append(entries(o.n, o.size));
          else if (o.op === 'ack') b.ack(Math.min(b.nextSeq - 1, b.ackedSeq + o.k));
          else b.raiseNextSeq(b.nextSeq + o.by);
        }
        got = reads.map(([from, max, bytes]) => b.readBatch(from, max, bytes));
      } finally {
        b.close();
      }
      expect(got).toEqual(fromDisk(path, reads, options));
      // acks count the deleted rows from the tail when it covers them (DECISIONS P8): the
      // counters must still equal the rows in the file
      const db = new Database(path, { readonly: true });
      try {
        const meta = db.prepare<[], { queue_depth: number; buffer_bytes: number }>('SELECT queue_depth, buffer_bytes FROM meta').get()!;
        const rows = storedTotals(db);
        expect([meta.queue_depth, meta.buffer_bytes]).toEqual([rows.n, rows.b]);
      } finally {
        db.close();
      }
    }),
    { numRuns: 60 },
  );
});

it('past the tail budget (nothing acked for a while) the older rows come from SQLite, the answers unchanged', () => {
  const path = join(dir, 'big.db');
  const b = DurableBuffer.open(path, { tailMaxBytes: 4 * 1024 * 1024 });
  const reads: [number, number, number][] = [];
  let got: (BufferBatch | null)[];
  try {
    // ~5.5 MiB of rows in appends of 500: more than the 4 MiB tail budget
    for (let i = 0; i < 44; i++) b.append(entries(500, 200));
    for (const from of [1, 500, 10_000, 20_000, 21_500, 21_999, 22_000, 22_001]) reads.push([from, 1000, 100 * 1024]);
    got = reads.map(([from, max, bytes]) => b.readBatch(from, max, bytes));
    // the oldest rows from memory, the ones past the budget from SQLite
    expect(b.readCounts.tail).toBeGreaterThan(0);
    expect(b.readCounts.sqlite).toBeGreaterThan(0);
  } finally {
    b.close();
  }
  expect(got.at(-1)).toBeNull();
  expect(got).toEqual(fromDisk(path, reads));
});

it('the default tail budget (TAIL_MAX_BYTES, 16 MiB) holds a ~5.5 MiB backlog: every read from memory', () => {
  expect(TAIL_MAX_BYTES).toBe(16 * 1024 * 1024);
  const b = DurableBuffer.open(join(dir, 'default.db'));
  try {
    for (let i = 0; i < 44; i++) b.append(entries(500, 200));
    let from = 1;
    for (let batch = b.readBatch(from, 1000); batch !== null; batch = b.readBatch(from, 1000)) from = batch.seqEnd + 1;
    expect(from).toBe(22_001);
    expect(b.readCounts).toEqual({ tail: 22_000, sqlite: 0 });
  } finally {
    b.close();
  }
});

it('a sender behind by more than the tail budget reads the oldest rows from memory, then SQLite, and the tail starts again once acks empty it', () => {
  const path = join(dir, 'behind.db');
  const b = DurableBuffer.open(path, { tailMaxBytes: 4 * 1024 * 1024 });
  const disk = DurableBuffer.open(path); // a second connection: never appends, so every read is SQLite's
  const counters = (): number[] => {
    const db = new Database(path, { readonly: true });
    try {
      const meta = db.prepare<[], { queue_depth: number; buffer_bytes: number }>('SELECT queue_depth, buffer_bytes FROM meta').get()!;
      const rows = storedTotals(db);
      return [meta.queue_depth - rows.n, meta.buffer_bytes - rows.b];
    } finally {
      db.close();
    }
  };
  try {
    let sent = 1;
    const sendAndAck = (batches: number): void => {
      for (let i = 0; i < batches; i++) {
        const got = b.readBatch(sent, 1000, 100 * 1024);
        expect(got).toEqual(disk.readBatch(sent, 1000, 100 * 1024));
        if (got === null) return;
        sent = got.seqEnd + 1;
        b.ack(got.seqEnd);
        expect(counters()).toEqual([0, 0]);
      }
    };
    // ~5.5 MiB appended with nothing acked: past the 4 MiB budget, the tail closes
    for (let i = 0; i < 44; i++) b.append(entries(500, 200));
    sendAndAck(30);
    for (let i = 0; i < 10; i++) {
      b.append(entries(500, 200)); // while the sender catches up: the tail reopens after it empties
      sendAndAck(3);
    }
    sendAndAck(1000);
    expect(b.readBatch(sent, 1000)).toBeNull();
    expect(b.stats()).toMatchObject({ queueDepth: 0, bufferBytes: 0, ackedSeq: 27_000 });
    expect(b.readCounts.tail).toBeGreaterThan(0);
    expect(b.readCounts.sqlite).toBeGreaterThan(0);
  } finally {
    disk.close();
    b.close();
  }
});
