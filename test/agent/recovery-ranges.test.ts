// The ranges of seqs a damaged buffer lost (buffer-recovery.json, DECISIONS P23): a report keeps
// each range (lost_ranges) rather than one range over all of them, which counted the entries
// sent between them as lost too; a report written before (lost_from..lost_to) reads as one range.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { checkBuffer, lostFields, lostRanges, lostText, mergeRanges, rangesSize } from '../../agent/buffer/heal.js';
import Database from 'better-sqlite3';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('lost ranges', () => {
  it('merge overlapping and touching ranges, in order; count and say them', () => {
    expect(mergeRanges([[20, 22], [5, 9], [10, 10], [21, 30], [40, 40]])).toEqual([[5, 10], [20, 30], [40, 40]]);
    expect(rangesSize(mergeRanges([[20, 22], [5, 9], [10, 10], [21, 30], [40, 40]]))).toBe(6 + 11 + 1);
    expect(lostText({ lost_from: 5, lost_to: 40, lost_ranges: [[5, 10], [20, 30], [40, 40]] })).toBe('5..10, 20..30, 40');
    expect(lostText({ lost_from: null, lost_to: null })).toBe('-');
  });

  it('a report of one range (as written before) reads as that range; lost_ranges that do not parse fall back to it', () => {
    expect(lostRanges({ lost_from: 3, lost_to: 9 })).toEqual([[3, 9]]);
    expect(lostRanges({ lost_from: null, lost_to: null })).toEqual([]);
    const damaged = { lost_from: 3, lost_to: 9, lost_ranges: [['x', 1], [9, 3], 'nope'] } as unknown as Parameters<typeof lostRanges>[0];
    expect(lostRanges(damaged)).toEqual([[3, 9]]);
  });

  it('lostFields: the hull as lost_from/lost_to, and lost_ranges only when there are two or more', () => {
    expect(lostFields([])).toEqual({ lost_from: null, lost_to: null });
    expect(lostFields([[4, 6]])).toEqual({ lost_from: 4, lost_to: 6 });
    expect(lostFields([[30, 31], [4, 6]])).toEqual({ lost_from: 4, lost_to: 31, lost_ranges: [[4, 6], [30, 31]] });
  });

  it('buffer check allows each lost range, and only those seqs', () => {
    const d = mkdtempSync(join(tmpdir(), 'cortex-ranges-'));
    dirs.push(d);
    const path = join(d, 'buffer.db');
    const b = DurableBuffer.open(path, { synchronous: 'NORMAL', reserveBytes: 0 });
    for (let i = 0; i < 5; i++) b.append(Array.from({ length: 10 }, (_, k) => ({ ts: '2026-12-07T00:00:00.000Z', severity: 'info' as const, message: `m${i * 10 + k}`, source: 'custom:test' })));
    b.close();
    // rows 11..20 and 31..40 gone (as damaged rows set aside, or not salvaged)
    const db = new Database(path);
    expect(db.prepare('SELECT seq, n FROM entries ORDER BY seq').all()).toEqual([1, 11, 21, 31, 41].map((seq) => ({ seq, n: 10 })));
    db.prepare('DELETE FROM entries WHERE seq IN (11, 31)').run();
    db.prepare('UPDATE meta SET queue_depth = 30, buffer_bytes = (SELECT sum(bytes) FROM entries)').run();
    db.close();
    expect(checkBuffer(path, [[11, 20], [31, 40]])).toMatchObject({ ok: true, problems: [] });
    expect(checkBuffer(path, [[11, 40]]).ok).toBe(false); // a hull over seqs that are there is not what is missing
    expect(checkBuffer(path, [[11, 20]]).problems).toEqual([{ kind: 'seq', message: 'entries 1..50 are not contiguous (30 entries)' }]);
    expect(checkBuffer(path).ok).toBe(false);
  });
});
