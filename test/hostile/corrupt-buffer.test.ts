// Issue 18, "a corrupt buffer is checked and healed, never silently stuck" (DECISIONS H5):
// `cortex-agent buffer check`, healing at start (file moved aside and kept, seqs continued,
// source positions kept, the unrecoverable range reported), and a deleted -wal that used to
// move next_seq back.
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { copyFileSync, existsSync, mkdtempSync, openSync, closeSync, readSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import type { NewLogEntry } from '../../agent/buffer/entry.js';
import { checkBuffer, lostRanges, markCleanStop, openHealing, rangesSize, readRecovery } from '../../agent/buffer/heal.js';
import { createLogger } from '../../agent/log.js';
import { StorageGuard } from '../../agent/storage-guard.js';
import { bundleChild } from '../agent/fixtures/bundle.js';

const dirs: string[] = [];
const dir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'cortex-corrupt-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let cli = '';
beforeAll(async () => {
  cli = await bundleChild(new URL('../../agent/cli.ts', import.meta.url).pathname, dir(), 'cli');
}, 60_000);

const run = (args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

const entries = (n: number, from = 0): NewLogEntry[] =>
  Array.from({ length: n }, (_, i) => ({ ts: '2026-01-01T00:00:00.000Z', severity: 'info', message: `m ${from + i} ${'y'.repeat(300)}`, source: 'custom:c' }));

/** Every entry the buffer holds from `from` on, batch after batch (a batch stops at a gap): its seq and message. */
function readAll(b: DurableBuffer, from: number): { seq: number; message: string }[] {
  const out: { seq: number; message: string }[] = [];
  let next = from;
  for (;;) {
    const batch = b.readBatch(next, 10_000, 64 * 1024 * 1024);
    if (batch === null) return out;
    batch.entries.forEach((t, i) => {
      const e = JSON.parse(t) as { seq: number; message: string };
      expect(e.seq).toBe(batch.seqStart + i);
      out.push({ seq: e.seq, message: e.message });
    });
    next = batch.seqStart + batch.entries.length;
  }
}

/** The seqs from..to less those in `lost`. */
function keptSeqs(from: number, to: number, lost: [number, number][]): number[] {
  const out: number[] = [];
  for (let s = from; s <= to; s++) if (!lost.some(([a, b]) => s >= a && s <= b)) out.push(s);
  return out;
}

/** A buffer with 2,000 entries, the first 500 acked, and a file source position. */
function filledBuffer(d: string): void {
  const b = DurableBuffer.open(join(d, 'buffer.db'), { synchronous: 'NORMAL', reserveBytes: 0 });
  for (let i = 0; i < 20; i++) b.append(entries(100, i * 100), { source: 'file:/var/log/app.log', position: { dev: 1, ino: 2, fp: 'x', fp_len: 1, offset: (i + 1) * 1000, part: 0 } });
  b.ack(500);
  b.close();
}

/** Overwrites one page in the second half of the file (an entries leaf) with garbage. */
function smashPage(path: string): void {
  const size = statSync(path).size;
  // the file's page size (header bytes 16-17, big-endian): a whole page, its header included
  const header = Buffer.alloc(18);
  const rd = openSync(path, 'r');
  readSync(rd, header, 0, 18, 0);
  closeSync(rd);
  const page = header.readUInt16BE(16);
  const at = Math.floor((size * 0.7) / page) * page;
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(page, 0xa5), 0, page, at);
  closeSync(fd);
}

describe('cortex-agent buffer check', () => {
  it('a sound buffer: exit 0 and --json {ok: true}; a garbage page: exit 1 naming the integrity problem; bad counters: exit 1 naming meta', () => {
    const d = dir();
    filledBuffer(d);
    const good = run(['buffer', 'check', '--state-dir', d, '--json']);
    expect(good.status, good.stderr).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, integrity: 'ok', next_seq: 2001, acked_seq: 500, rows: 1500, problems: [] });

    const d2 = dir();
    filledBuffer(d2);
    const db = new Database(join(d2, 'buffer.db'));
    db.prepare('UPDATE meta SET queue_depth = 7').run();
    db.close();
    const meta = run(['buffer', 'check', '--state-dir', d2, '--json']);
    expect(meta.status).toBe(1);
    expect(JSON.parse(meta.stdout).problems).toEqual([{ kind: 'meta', message: 'queue_depth 7 but the rows hold 1500 entries' }]);

    smashPage(join(d, 'buffer.db'));
    const bad = run(['buffer', 'check', '--state-dir', d]);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('DAMAGED');
    expect(bad.stderr).toContain('cortex-agent run');
    expect(run(['buffer', 'check']).status).toBe(2);
    expect(run(['buffer', 'nope', '--state-dir', d]).status).toBe(2);
  });
});

describe('healing at start', () => {
  it('moves the damaged file aside, keeps what reads (past the damage too) and the source positions, continues the seqs, reports the lost ranges; status says degraded', () => {
    const d = dir();
    filledBuffer(d);
    smashPage(join(d, 'buffer.db'));
    expect(checkBuffer(join(d, 'buffer.db')).ok).toBe(false);
    const h = openHealing(d, { synchronous: 'NORMAL' });
    let lost: [number, number][];
    try {
      const r = h.recovery!;
      expect(r).not.toBeNull();
      expect(existsSync(r.moved_to)).toBe(true);
      lost = lostRanges(r);
      expect(lost.length).toBeGreaterThan(0);
      expect(r.salvaged_entries).toBeGreaterThan(0);
      expect(r.salvaged_entries + rangesSize(lost)).toBe(1500); // every unacked seq kept, or named lost
      expect(r.positions_recovered).toBe(1);
      expect(r.lost_from).toBe(lost[0]![0]);
      expect(r.lost_to).toBe(lost[lost.length - 1]![1]);
      expect(h.buffer.nextSeq).toBe(2001); // never reuses a seq
      expect(h.buffer.ackedSeq).toBe(500);
      expect(h.buffer.getSourcePosition('file:/var/log/app.log')).toMatchObject({ offset: 20_000 });
      // what was kept reads back in order, with its own text, around the gaps
      const kept = readAll(h.buffer, 501);
      expect(kept.map((e) => e.seq)).toEqual(keptSeqs(501, 2000, lost));
      expect(kept.map((e) => e.message)).toEqual(kept.map((e) => entries(1, e.seq - 1)[0]!.message));
      // past the damaged page too (before: everything from the first damaged page on was lost)
      expect(kept[kept.length - 1]!.seq).toBeGreaterThan(lost[0]![1]);
      expect(h.buffer.stats()).toMatchObject({ queueDepth: r.salvaged_entries });
      expect(h.buffer.append(entries(1)).firstSeq).toBe(2001);
    } finally {
      h.buffer.close();
    }
    const rec = readRecovery(d)!;
    expect(lostRanges(rec)).toEqual(lost);
    expect(checkBuffer(join(d, 'buffer.db'), lostRanges(rec)).problems).toEqual([]);
    expect(checkBuffer(join(d, 'buffer.db')).ok).toBe(false); // without the recorded gap it is a hole
    expect(run(['buffer', 'check', '--state-dir', d]).status).toBe(0); // the recorded gap is allowed
    writeFileSync(join(d, 'host_id'), '7d1f3a52-1c7e-4b8f-9a51-0a3c2f4e8b11\n');
    const st = run(['status', '--state-dir', d, '--json']);
    expect(st.status, st.stderr).toBe(0);
    expect(JSON.parse(st.stdout).degraded).toMatchObject({ lost_from: rec.lost_from, lost_to: rec.lost_to, moved_to: expect.stringContaining('buffer.db.corrupt-') });
    const text = run(['status', '--state-dir', d]);
    expect(text.stdout).toContain(`seqs ${lost!.map(([a, b]) => (a === b ? `${a}` : `${a}..${b}`)).join(', ')} lost`);
    expect(readRecovery(d)).not.toBeNull();
  });

  it('a damaged file of the layout before (schema 1: one entry a row, 4 KiB pages) is healed the same way', () => {
    const d = dir();
    const db = new Database(join(d, 'buffer.db'));
    db.exec(`PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;
      CREATE TABLE entries (seq INTEGER PRIMARY KEY, bytes INTEGER NOT NULL, json TEXT NOT NULL);
      CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), schema_version INTEGER NOT NULL, next_seq INTEGER NOT NULL, acked_seq INTEGER NOT NULL, queue_depth INTEGER NOT NULL, buffer_bytes INTEGER NOT NULL, evicted_entries INTEGER NOT NULL, evicted_oldest_seq INTEGER, evicted_newest_seq INTEGER);
      CREATE TABLE source_positions (source TEXT PRIMARY KEY, position TEXT NOT NULL, updated_at TEXT NOT NULL);`);
    const ins = db.prepare('INSERT INTO entries (seq, bytes, json) VALUES (?, ?, ?)');
    let bytes = 0;
    db.transaction(() => {
      entries(1500, 500).forEach((e, i) => {
        const json = JSON.stringify({ seq: 501 + i, ...e });
        ins.run(501 + i, Buffer.byteLength(json), json);
        bytes += Buffer.byteLength(json);
      });
      db.prepare('INSERT INTO meta VALUES (1, 1, 2001, 500, 1500, ?, 0, NULL, NULL)').run(bytes);
      db.prepare("INSERT INTO source_positions VALUES ('file:/var/log/app.log', '{\"offset\":20000}', '2026-01-01T00:00:00.000Z')").run();
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    expect(checkBuffer(join(d, 'buffer.db'))).toMatchObject({ ok: true, rows: 1500 });
    smashPage(join(d, 'buffer.db'));
    const h = openHealing(d, { synchronous: 'NORMAL' });
    try {
      const r = h.recovery!;
      expect(r).not.toBeNull();
      const lost = lostRanges(r);
      expect(lost.length).toBeGreaterThan(0);
      expect(r.salvaged_entries + rangesSize(lost)).toBe(1500);
      // one damaged leaf page of small rows: its rows only (a 4 KiB page holds about a dozen of these)
      expect(rangesSize(lost)).toBeLessThan(100);
      expect(h.buffer.nextSeq).toBe(2001);
      expect(h.buffer.getSourcePosition('file:/var/log/app.log')).toEqual({ offset: 20_000 });
      const kept = readAll(h.buffer, 501);
      expect(kept.map((e) => e.seq)).toEqual(keptSeqs(501, 2000, lost));
      expect(kept.map((e) => e.message)).toEqual(kept.map((e) => entries(1, e.seq - 1)[0]!.message));
    } finally {
      h.buffer.close();
    }
  });

  it('a file that is not a database at all is replaced too; seqs continue from seq.json', () => {
    const d = dir();
    const h0 = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    h0.buffer.append(entries(10));
    h0.buffer.close();
    writeFileSync(join(d, 'buffer.db'), Buffer.alloc(8192, 0x42));
    rmSync(join(d, 'buffer.db-wal'), { force: true });
    const h = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    try {
      expect(h.recovery).not.toBeNull();
      expect(h.buffer.nextSeq).toBeGreaterThan(10);
      expect(h.recovery!.salvaged_entries).toBe(0);
    } finally {
      h.buffer.close();
    }
    expect(readdirSync(d).some((n) => n.startsWith('buffer.db.corrupt-'))).toBe(true);
  });
});

describe('a damaged row at run time (DECISIONS P22)', () => {
  it('is set aside by the buffer: buffer check names it before, allows its gap after; status says which seqs were lost and where its text is', () => {
    const d = dir();
    filledBuffer(d); // rows of 100: 1..100, ..., 1901..2000; 500 acked
    const path = join(d, 'buffer.db');
    const db = new Database(path);
    db.prepare("UPDATE entries SET json = replace(json, char(10), ' ') WHERE seq = 1001").run();
    db.close();
    const before = run(['buffer', 'check', '--state-dir', d]);
    expect(before.status).toBe(1);
    expect(before.stdout).toContain('row 1001 does not hold its 100 entries');
    expect(before.stderr).toContain('"cortex-agent run" sets each aside when it reaches it, with no restart: its text is kept in buffer.db.damaged-rows');

    const b = DurableBuffer.open(path, { synchronous: 'NORMAL', reserveBytes: 0 });
    const guard = new StorageGuard({
      stateDir: d,
      log: createLogger({ level: 'silent' }),
      buffer: b,
      recovery: null,
      sources: { paused: false, pause: () => undefined, resume: () => undefined },
      events: new EventEmitter(),
      stopping: () => false,
      setError: (m) => m,
      clearError: () => undefined,
      stored: () => undefined,
      markDirty: () => undefined,
      writeStatus: () => undefined,
      sendMetrics: () => undefined,
    });
    b.setDamagedRowListener((r) => guard.damagedRow(r)); // as the agent wires it
    try {
      const batch = b.readBatch(501, 10_000, 64 * 1024 * 1024)!;
      expect([batch.seqStart, batch.seqEnd]).toEqual([501, 1000]);
      expect(b.readBatch(1001, 10_000, 64 * 1024 * 1024)).toMatchObject({ seqStart: 1101, seqEnd: 2000 });
    } finally {
      b.close();
    }
    const after = run(['buffer', 'check', '--state-dir', d]);
    expect(after.status, after.stdout).toBe(0); // the recorded gap is allowed
    expect(after.stdout).toContain(`degraded:   damaged rows set aside since `);
    expect(after.stdout).toContain(`their text kept in ${path}.damaged-rows; lost seqs 1001..1100`);
    writeFileSync(join(d, 'host_id'), '7d1f3a52-1c7e-4b8f-9a51-0a3c2f4e8b11\n');
    const st = run(['status', '--state-dir', d]);
    expect(st.status, st.stderr).toBe(0);
    expect(st.stdout).toMatch(/degraded: +damaged rows of the buffer set aside since \S+ \(their text kept in \S+buffer\.db\.damaged-rows\); seqs 1001\.\.1100 lost/);
    const json = run(['status', '--state-dir', d, '--json']);
    expect(JSON.parse(json.stdout).degraded).toMatchObject({ kind: 'rows', lost_from: 1001, lost_to: 1100 });
  });
});

describe('a deleted -wal', () => {
  it('after an unclean stop, next_seq does not move back: it continues past every reserved seq', () => {
    const d = dir();
    const h = openHealing(d, { synchronous: 'FULL', reserveBytes: 0 });
    h.buffer.append(entries(50));
    // A crash: the process is gone without closing; only the main file survives (the -wal is deleted).
    const copy = dir();
    copyFileSync(join(d, 'buffer.db'), join(copy, 'buffer.db'));
    copyFileSync(join(d, 'seq.json'), join(copy, 'seq.json'));
    h.buffer.close();
    const again = openHealing(copy, { synchronous: 'NORMAL', reserveBytes: 0 });
    try {
      expect(again.walLost).not.toBeNull();
      expect(again.buffer.nextSeq).toBeGreaterThan(50);
      expect(again.buffer.append(entries(1)).firstSeq).toBeGreaterThan(50);
    } finally {
      again.buffer.close();
    }
  });

  it('a crash while a page size rebuild has the file out of WAL mode (DECISIONS P14) is not a lost WAL', () => {
    // A buffer an agent before P14 made (4 KiB pages), 50 entries committed to its WAL, the
    // agent killed while running: the crash image is buffer.db, its -wal and seq.json.
    const d = dir();
    const db = new Database(join(d, 'buffer.db'));
    db.pragma('page_size = 4096');
    db.pragma('journal_mode = WAL');
    db.close();
    const h = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0, maxPageCount: 1_000_000 });
    h.buffer.append(entries(50));
    const crashed = dir();
    for (const f of ['buffer.db', 'buffer.db-wal', 'seq.json']) copyFileSync(join(d, f), join(crashed, f));
    h.buffer.close();
    // The next start rebuilds the file with 16 KiB pages; a second crash just before its VACUUM
    // (the -wal checkpointed and gone, the file in rollback-journal mode) leaves `again`.
    const again = dir();
    const exec = Database.prototype.exec;
    Database.prototype.exec = function (this: Database.Database, source: string) {
      if (source === 'VACUUM') for (const f of readdirSync(crashed)) copyFileSync(join(crashed, f), join(again, f));
      return exec.call(this, source);
    };
    try {
      const restarted = openHealing(crashed, { synchronous: 'NORMAL', reserveBytes: 0 });
      expect(restarted.walLost).toBeNull();
      restarted.buffer.close();
    } finally {
      Database.prototype.exec = exec;
    }
    expect(readdirSync(again).sort()).toEqual(['buffer.db', 'buffer.db.rebuild', 'seq.json']);
    // Without the mark this image reads as a lost WAL (what happened before the mark existed).
    const unmarked = dir();
    for (const f of ['buffer.db', 'seq.json']) copyFileSync(join(again, f), join(unmarked, f));
    const lost = openHealing(unmarked, { synchronous: 'NORMAL', reserveBytes: 0 });
    expect(lost.walLost).toEqual({ from: 51, to: expect.any(Number) });
    lost.buffer.close();
    // With it, the third start keeps next_seq and every entry, rebuilds, and clears the mark.
    const third = openHealing(again, { synchronous: 'NORMAL', reserveBytes: 0 });
    try {
      expect(third.walLost).toBeNull();
      expect(third.recovery).toBeNull();
      expect(third.buffer.nextSeq).toBe(51);
      const batch = third.buffer.readBatch(1, 100)!;
      expect(batch).toMatchObject({ seqStart: 1, seqEnd: 50 });
      expect(JSON.parse(batch.entries[49]!)).toMatchObject({ seq: 50, message: expect.stringMatching(/^m 49 /) });
      expect(third.buffer.append(entries(1)).firstSeq).toBe(51);
    } finally {
      third.buffer.close();
    }
    expect(existsSync(join(again, 'buffer.db.rebuild'))).toBe(false);
    const check = new Database(join(again, 'buffer.db'), { readonly: true });
    try {
      expect(check.pragma('page_size', { simple: true })).toBe(16384);
    } finally {
      check.close();
    }
  });

  it('after a clean stop, a missing -wal is normal and nothing moves', () => {
    const d = dir();
    const h = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    h.buffer.append(entries(5));
    h.buffer.close();
    markCleanStop(d, 6);
    const again = openHealing(d, { synchronous: 'NORMAL', reserveBytes: 0 });
    try {
      expect(again.walLost).toBeNull();
      expect(again.buffer.nextSeq).toBe(6);
    } finally {
      again.buffer.close();
    }
  });
});
