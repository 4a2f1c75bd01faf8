import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MetricSample } from '@cortex/agent-protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { SerializedEntry, type NewLogEntry } from '../../agent/buffer/entry.js';
import { BufferStorageError } from '../../agent/buffer/errors.js';
import { readRecovery, type RecoveryReport } from '../../agent/buffer/heal.js';
import { createLogger } from '../../agent/log.js';
import { StorageGuard, type GuardedBuffer } from '../../agent/storage-guard.js';

let dir: string;
let buffer: DurableBuffer;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cortex-guard-'));
  buffer = DurableBuffer.open(join(dir, 'buffer.db'));
});
afterEach(() => {
  buffer.close();
  rmSync(dir, { recursive: true, force: true });
});

const entry = (m: string): NewLogEntry => ({ ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: m, source: 'custom:test' });

/** A guard over `buf`; sources and effects recorded in `s`. */
function guardFor(buf: GuardedBuffer, recovery: RecoveryReport | null = null, extra: { lines?: string[]; now?: () => number } = {}) {
  const s = { paused: null as string | null, resumed: 0, stored: 0, errors: [] as string[], cleared: 0, metrics: [] as MetricSample[][], statusWrites: 0, events: [] as string[] };
  const events = new EventEmitter();
  for (const e of ['storage_error', 'storage_recovered', 'evicted', 'acked']) events.on(e, () => s.events.push(e));
  const guard = new StorageGuard({
    stateDir: dir,
    retryMs: 10,
    log: extra.lines ? createLogger({ destination: { write: (l: string) => void extra.lines!.push(l) } }) : createLogger({ level: 'silent' }),
    ...(extra.now ? { now: extra.now } : {}),
    buffer: buf,
    recovery,
    sources: {
      get paused() {
        return s.paused !== null;
      },
      pause: (r) => void (s.paused = r),
      resume: () => {
        s.paused = null;
        s.resumed++;
      },
    },
    events,
    stopping: () => false,
    setError: (m) => (s.errors.push(m), m),
    clearError: () => void s.cleared++,
    stored: () => void s.stored++,
    markDirty: () => undefined,
    writeStatus: () => void s.statusWrites++,
    sendMetrics: (m) => void s.metrics.push(m),
  });
  return { guard, s, events };
}

describe('storage guard', () => {
  it('validates every entry before anything is stored', () => {
    const { guard, s } = guardFor(buffer);
    expect(() => guard.append([entry('ok'), { ...entry('bad'), severity: 'loud' } as unknown as NewLogEntry])).toThrow(/entry 1 is not a valid LogBatchEntry/);
    expect(buffer.nextSeq).toBe(1);
    expect(guard.append([entry('a'), entry('b')]).count).toBe(2);
    expect(buffer.nextSeq).toBe(3);
    expect(s.stored).toBe(1);
  });

  it('stores an entry the agent parser wrote as JSON text (SerializedEntry, DECISIONS P18) beside objects, still checking the objects', () => {
    const { guard } = guardFor(buffer);
    const rest = '"ts":"2026-05-16T19:42:50.123Z","severity":"info","message":"pre-written","source":"file:/var/log/x.log"}';
    const serialized = new SerializedEntry(rest, Buffer.byteLength(rest));
    expect(() => guard.append([serialized, { ...entry('bad'), severity: 'loud' } as unknown as NewLogEntry])).toThrow(/entry 1 is not a valid LogBatchEntry/);
    expect(guard.append([entry('a'), serialized]).count).toBe(2);
    expect(buffer.readBatch(1, 10)!.entries).toEqual([JSON.stringify({ seq: 1, ...entry('a') }), `{"seq":2,${rest}`]);
  });

  it('a storage error pauses the sources and probes until a write works, then resumes them', async () => {
    let full = true;
    const failing: GuardedBuffer = Object.assign(Object.create(buffer) as DurableBuffer, {
      append: (e: readonly NewLogEntry[]) => {
        if (full) throw new BufferStorageError('disk_full', 'append', 'buffer.db', 'SQLITE_FULL');
        return buffer.append(e);
      },
      assertSpace: () => {
        if (full) throw new BufferStorageError('disk_full', 'append', 'buffer.db', 'SQLITE_FULL');
      },
      setSourcePosition: (p: Parameters<DurableBuffer['setSourcePosition']>[0]) => buffer.setSourcePosition(p),
    });
    const { guard, s, events } = guardFor(failing);
    expect(() => guard.append([entry('x')])).toThrow(BufferStorageError);
    expect(s.paused).toMatch(/SQLITE_FULL/);
    expect(s.errors[0]).toMatch(/SQLITE_FULL/);
    expect(s.events).toEqual(['storage_error']);
    const recovered = new Promise((r) => events.once('storage_recovered', r));
    full = false;
    await recovered; // the probe found space again
    expect(s.paused).toBeNull();
    expect(s.resumed).toBe(1);
    expect(s.cleared).toBe(1);
    expect(s.statusWrites).toBe(1);
    guard.stop();
  });

  it('refused at the low-water mark, the sources resume only once the refused write has room (not at the mark itself)', async () => {
    const MIB = 1024 * 1024;
    let free = MIB + 200 * 1024; // above the 1 MiB mark, but not by what the batch needs
    const b = DurableBuffer.open(join(dir, 'low.db'), { reserveBytes: 0, minFreeBytes: MIB, diskSpace: () => ({ free, total: 1024 * MIB }) });
    try {
      let probes = 0;
      let fifthProbe: () => void = () => undefined;
      const probed = new Promise<string>((r) => (fifthProbe = () => r('probed')));
      const watched: GuardedBuffer = {
        append: (e, p) => b.append(e, p),
        applyAccepted: (n) => b.applyAccepted(n),
        assertSpace: (op, bytes, probe) => {
          if (op === 'storage probe' && ++probes === 5) fifthProbe();
          b.assertSpace(op, bytes, probe);
        },
        setSourcePosition: (p) => b.setSourcePosition(p),
        get ackedSeq() {
          return b.ackedSeq;
        },
        get bufferBytes() {
          return b.bufferBytes;
        },
        get queueDepth() {
          return b.queueDepth;
        },
        get nextSeq() {
          return b.nextSeq;
        },
        stats: () => b.stats(),
        reclaim: () => b.reclaim(),
        hardCapBytes: b.hardCapBytes,
      };
      const { guard, s, events } = guardFor(watched);
      const batch = Array.from({ length: 100 }, (_, i) => entry(`${i} ${'x'.repeat(3000)}`));
      let refused: unknown;
      try {
        guard.append(batch);
      } catch (err) {
        refused = err;
      }
      expect(refused).toMatchObject({ kind: 'disk_full', code: 'LOW_DISK_SPACE' });
      expect((refused as BufferStorageError).bytes).toBeGreaterThan(300_000);
      expect((refused as BufferStorageError).message).toMatch(/needs about \d+ of them and the low-water mark keeps 1048576 free/);
      expect(s.paused).not.toBeNull();
      const recovered = new Promise<string>((r) => events.once('storage_recovered', () => r('recovered')));
      // With room for the mark alone, resuming would only be refused the same batch again.
      expect(await Promise.race([probed, recovered])).toBe('probed');
      expect(s.resumed).toBe(0);
      expect(b.nextSeq).toBe(1);
      free = 10 * MIB;
      expect(await recovered).toBe('recovered');
      expect(s.resumed).toBe(1);
      expect(guard.append(batch).count).toBe(100);
      guard.stop();
    } finally {
      b.close();
    }
  });

  it('a corrupt buffer asks for a restart only when someone listens for it', () => {
    const corrupt: GuardedBuffer = Object.assign(Object.create(buffer) as DurableBuffer, {
      append: () => {
        throw new BufferStorageError('corrupt', 'append', 'buffer.db', 'SQLITE_CORRUPT');
      },
    });
    const { guard, events } = guardFor(corrupt);
    const asked: unknown[] = [];
    expect(() => guard.append([entry('x')])).toThrow(BufferStorageError);
    expect(asked).toHaveLength(0);
    events.on('buffer_corrupt', (e) => asked.push(e));
    expect(() => guard.append([entry('x')])).toThrow(BufferStorageError);
    expect(asked).toHaveLength(1);
  });

  it('applyAccepted replays against the server: rows it has are deleted and acked is emitted', () => {
    buffer.append([entry('1'), entry('2'), entry('3')]);
    const { guard, s } = guardFor(buffer);
    guard.applyAccepted(2);
    expect(buffer.ackedSeq).toBe(2);
    expect(buffer.stats().queueDepth).toBe(1);
    expect(s.events).toEqual(['acked']);
    guard.applyAccepted(2); // nothing new: nothing emitted
    expect(s.events).toEqual(['acked']);
  });

  it('a damaged row the buffer set aside (DECISIONS P22): logged, degraded and in buffer-recovery.json until acked past next_seq; a second one adds its range beside the first', () => {
    const lines: string[] = [];
    const { guard } = guardFor(buffer, null, { lines });
    buffer.append([entry('a'), entry('b'), entry('c')]); // next_seq 4
    const file = join(dir, 'buffer.db.damaged-rows');
    guard.damagedRow({ rowSeq: 1, rowEnd: 2, lostFrom: 2, lostTo: 2, file, reason: 'row 1..2 of entries does not hold its 2 entries (a damaged byte in buffer.db)' });
    expect(guard.recovery).toMatchObject({ kind: 'rows', moved_to: file, lost_from: 2, lost_to: 2, next_seq: 4, salvaged_entries: 3 });
    expect(readRecovery(dir)).toEqual(guard.recovery);
    expect(guard.lostRangeMetrics()).toEqual([
      { name: 'buffer_recovery_lost_entries', value: 1 },
      { name: 'buffer_recovery_lost_oldest_seq', value: 2 },
    ]);
    const said = lines.map((l) => JSON.parse(l) as { level: string; msg: string; lost_from: number });
    expect(said).toContainEqual(expect.objectContaining({ level: 'error', lost_from: 2, msg: expect.stringContaining(`its text is kept in ${file} and the row was removed, so sending goes on after it (seqs 2..2 are not sent`) }));
    buffer.append([entry('d'), entry('e')]); // next_seq 6
    guard.damagedRow({ rowSeq: 4, rowEnd: 5, lostFrom: 4, lostTo: 5, file, reason: 'row 4..5 of entries does not hold its 2 entries' });
    expect(guard.recovery).toMatchObject({ kind: 'rows', lost_from: 2, lost_to: 5, lost_ranges: [[2, 2], [4, 5]], next_seq: 6, reason: expect.stringMatching(/row 1\.\.2 .*; then row 4\.\.5/) });
    // seq 3 was sent: not counted as lost (the hull 2..5 said 4)
    expect(guard.lostRangeMetrics()).toEqual([
      { name: 'buffer_recovery_lost_entries', value: 3 },
      { name: 'buffer_recovery_lost_oldest_seq', value: 2 },
    ]);
    expect(readRecovery(dir)).toEqual(guard.recovery);
    guard.acked(5);
    expect(readRecovery(dir)).not.toBeNull();
    guard.acked(6);
    expect(guard.recovery).toBeNull();
    expect(readRecovery(dir)).toBeNull();
  });

  it('degraded until acked past the lost range; the lost range is reported as metrics', () => {
    const rec = { next_seq: 10, lost_from: 3, lost_to: 9 } as unknown as RecoveryReport;
    const { guard } = guardFor(buffer, rec);
    expect(guard.recovery).toBe(rec);
    expect(guard.lostRangeMetrics()).toEqual([
      { name: 'buffer_recovery_lost_entries', value: 7 },
      { name: 'buffer_recovery_lost_oldest_seq', value: 3 },
    ]);
    guard.acked(9);
    expect(guard.recovery).toBe(rec);
    guard.acked(10);
    expect(guard.recovery).toBeNull();
    expect(guard.lostRangeMetrics()).toEqual([]);
  });

  it('an ack with little left queued has a drained buffer give its file space back, looked at most every 10 s and once after the last ack (DECISIONS H22)', async () => {
    let reclaims = 0;
    let now = 1_000_000;
    const counting: GuardedBuffer = {
      append: (e, p) => buffer.append(e, p),
      applyAccepted: (n) => buffer.applyAccepted(n),
      assertSpace: (op, bytes, probe) => buffer.assertSpace(op, bytes, probe),
      setSourcePosition: (p) => buffer.setSourcePosition(p),
      get ackedSeq() {
        return buffer.ackedSeq;
      },
      get bufferBytes() {
        return buffer.bufferBytes;
      },
      get queueDepth() {
        return buffer.queueDepth;
      },
      get nextSeq() {
        return buffer.nextSeq;
      },
      stats: () => buffer.stats(),
      reclaim: () => (reclaims++, buffer.reclaim()),
      hardCapBytes: buffer.hardCapBytes,
    };
    const file = join(dir, 'buffer.db');
    const lines: string[] = [];
    const { guard } = guardFor(counting, null, { lines, now: () => now });
    const backlog = () => {
      for (let i = 0; i < 20; i++) guard.append(Array.from({ length: 1000 }, () => entry('z'.repeat(4000))));
    };
    backlog();
    buffer.ack(10_000);
    guard.acked(10_000); // 40 MB still queued: not looked at
    expect(reclaims).toBe(0);
    let grown = statSync(file).size;
    buffer.ack(20_000);
    guard.acked(20_000); // drained: looked at, given back
    expect(reclaims).toBe(1);
    expect(statSync(file).size).toBeLessThan(grown / 20);
    const said = () => lines.map((l) => JSON.parse(l) as { msg: string; freed_bytes: number });
    expect(said()).toHaveLength(1);
    expect(said()[0]!.msg).toMatch(/^buffer\.db gave \d+\.\d MiB back to the filesystem: the backlog it grew for has been sent$/);
    expect(said()[0]!.freed_bytes).toBe(grown - statSync(file).size);
    // a second backlog drained within 10 s of that look: not at once, but once the 10 s are over
    backlog();
    grown = statSync(file).size;
    now += 9_950;
    buffer.ack(40_000);
    guard.acked(40_000);
    expect(reclaims).toBe(1);
    now += 100; // the look left for the end of the acks comes due (its timer: the 50 ms left)
    await new Promise<void>((resolve) => {
      const t = setInterval(() => reclaims === 2 && (clearInterval(t), resolve()), 10);
    });
    expect(statSync(file).size).toBeLessThan(grown / 20);
    expect(said()).toHaveLength(2);
    guard.acked(40_000); // nothing new: not looked at again within 10 s
    expect(reclaims).toBe(2);
    // at a hello (the agent started on a drained file and reads nothing): looked at too
    now += 10_000;
    guard.applyAccepted(40_000);
    expect(reclaims).toBe(3);
    guard.stop();
  });

  it('evictions at the hard cap are emitted and reported as metrics', () => {
    const small = DurableBuffer.open(join(dir, 'small.db'), { hardCapBytes: 4096, softCapBytes: 2048 });
    try {
      const { guard, s } = guardFor(small);
      for (let i = 0; i < 40 && s.metrics.length === 0; i++) guard.append(Array.from({ length: 5 }, () => entry('y'.repeat(200))));
      expect(s.events).toContain('evicted');
      expect(s.metrics[0]!.map((m) => m.name)).toEqual(['buffer_evicted_entries', 'buffer_evicted_oldest_seq']);
    } finally {
      small.close();
    }
  });
});
