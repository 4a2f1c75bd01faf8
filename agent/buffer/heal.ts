// A damaged buffer is checked and healed, never silently stuck (DECISIONS H5).
//
//   checkBuffer(path)    SQLite's integrity_check plus the buffer's own invariants (seqs
//                        contiguous up to next_seq - 1 from the first row after acked_seq,
//                        meta counters equal to the rows, source positions that parse).
//   openHealing(dir)     opens DIR/buffer.db; when it is damaged, moves it (with -wal/-shm)
//                        aside as buffer.db.corrupt-<time>, salvages what still reads (meta,
//                        source positions, unsent entries), and starts a fresh buffer that
//                        continues the seqs after everything ever assigned (DIR/seq.json, a
//                        reservation kept outside buffer.db). What could not be salvaged are
//                        seq ranges the server sees as eviction gaps; they are written to
//                        DIR/buffer-recovery.json, which `status` shows as "degraded" until
//                        the server has acked past them.
//   seq.json             {"reserved_next_seq": R, "running": bool}: every seq ever assigned is
//                        below R (raised in blocks before the buffer assigns beyond it).
//                        After an unclean stop with buffer.db-wal missing (deleted), the
//                        committed tail may be gone, so next_seq moves up to R.
//   buffer.db.closed     an empty file: SQLite closed buffer.db cleanly (its -wal checkpointed
//                        into it and removed) when seq.json could not be told so — a full disk,
//                        where an empty file still fits. Like "running": false, it makes a
//                        missing -wal normal; the next open removes it before any seq is assigned.

import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { DurableBuffer, PAGE_SIZE_REBUILD_MARK, type BufferOptions } from './buffer.js';
import { isDiskFullCode } from '../../common/errors.js';
import { BufferStorageError } from './errors.js';
import { replaceDurably, syncFolder } from './durable.js';
import { Database } from '../cjs.js';
import { liveTotals, runLengthSql, splitRun } from './runs.js';

export const SEQ_FILE = 'seq.json';
/** Beside buffer.db: SQLite closed it cleanly and seq.json could not say so (see the header). */
export const CLEAN_CLOSE_MARK = '.closed';
export const RECOVERY_FILE = 'buffer-recovery.json';
/** Seqs reserved per write of seq.json. */
export const SEQ_BLOCK = 65_536;

export interface CheckProblem {
  /** integrity | meta | seq | position | open */
  kind: 'integrity' | 'meta' | 'seq' | 'position' | 'open';
  message: string;
}

export interface CheckReport {
  ok: boolean;
  path: string;
  integrity: string;
  problems: CheckProblem[];
  next_seq: number | null;
  acked_seq: number | null;
  queue_depth: number | null;
  /** Entries the file holds above acked_seq (one a row before schema 2; rows are runs of entries since, DECISIONS P21). */
  rows: number | null;
  sources: number | null;
}

/** Checks a buffer file read-only. Never throws for a damaged file: the report says what is wrong. */
export function checkBuffer(path: string, healedGaps?: readonly (readonly [number, number])[] | null): CheckReport {
  const report: CheckReport = { ok: false, path, integrity: 'not run', problems: [], next_seq: null, acked_seq: null, queue_depth: null, rows: null, sources: null };
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 2000');
    const rows = db.pragma('integrity_check(20)') as { integrity_check: string }[];
    report.integrity = rows.map((r) => r.integrity_check).join('; ');
    if (report.integrity !== 'ok') report.problems.push({ kind: 'integrity', message: `integrity_check: ${report.integrity}` });
    const meta = db.prepare('SELECT next_seq, acked_seq, queue_depth, buffer_bytes FROM meta WHERE id = 1').get() as
      | { next_seq: number; acked_seq: number; queue_depth: number; buffer_bytes: number }
      | undefined;
    if (meta === undefined) report.problems.push({ kind: 'meta', message: 'the meta row is missing' });
    const live = liveTotals(db, meta?.acked_seq ?? 0);
    report.rows = live.entries;
    for (const bad of live.bad.slice(0, 5)) report.problems.push({ kind: 'seq', message: bad });
    if (live.bad.length > 5) report.problems.push({ kind: 'seq', message: `and ${live.bad.length - 5} more damaged rows` });
    if (meta !== undefined) {
      report.next_seq = meta.next_seq;
      report.acked_seq = meta.acked_seq;
      report.queue_depth = meta.queue_depth;
      if (!(meta.next_seq > meta.acked_seq)) report.problems.push({ kind: 'meta', message: `next_seq ${meta.next_seq} is not above acked_seq ${meta.acked_seq}` });
      if (meta.queue_depth !== live.entries) report.problems.push({ kind: 'meta', message: `queue_depth ${meta.queue_depth} but the rows hold ${live.entries} entries` });
      if (meta.buffer_bytes !== live.bytes) report.problems.push({ kind: 'meta', message: `buffer_bytes ${meta.buffer_bytes} but the rows hold ${live.bytes}` });
      if (live.hi !== null && live.hi >= meta.next_seq) report.problems.push({ kind: 'seq', message: `row seq ${live.hi} is not below next_seq ${meta.next_seq}` });
      // Eviction drops the oldest entries, so the entries are contiguous from the lowest, except
      // across the ranges a damaged buffer lost (buffer-recovery.json).
      const missing = live.lo === null || live.hi === null ? 0 : live.hi - live.lo + 1 - live.entries;
      const lo = live.lo;
      const hi = live.hi;
      const gap = lo === null || hi === null ? 0 : rangesSize(mergeRanges(healedGaps ?? []).map(([from, to]): [number, number] => [Math.max(from, lo), Math.min(to, hi)]).filter(([from, to]) => from <= to));
      if (missing !== gap) {
        report.problems.push({ kind: 'seq', message: `entries ${live.lo}..${live.hi} are not contiguous (${live.entries} entries)` });
      }
    }
    const positions = db.prepare('SELECT source, position FROM source_positions').all() as { source: string; position: string }[];
    report.sources = positions.length;
    for (const p of positions) {
      let v: unknown;
      try {
        v = JSON.parse(p.position);
      } catch {
        report.problems.push({ kind: 'position', message: `position of ${p.source} is not JSON` });
        continue;
      }
      const off = (v as { offset?: unknown } | null)?.offset;
      if (p.source.startsWith('file:') && off !== undefined && !(Number.isSafeInteger(off) && (off as number) >= 0)) {
        report.problems.push({ kind: 'position', message: `position of ${p.source} has offset ${String(off)}` });
      }
    }
  } catch (err) {
    report.problems.push({ kind: 'open', message: `cannot read it: ${(err as Error).message}` });
  } finally {
    try {
      db?.close();
    } catch {
      // already reported
    }
  }
  report.ok = report.problems.length === 0;
  return report;
}

// ---- seq.json ----------------------------------------------------------------------

export interface SeqState {
  reserved_next_seq: number;
  running: boolean;
}

export function readSeqState(dir: string): SeqState | null {
  try {
    const v = JSON.parse(readFileSync(join(dir, SEQ_FILE), 'utf8')) as Partial<SeqState>;
    if (typeof v.reserved_next_seq !== 'number' || !Number.isSafeInteger(v.reserved_next_seq)) return null;
    return { reserved_next_seq: v.reserved_next_seq, running: v.running === true };
  } catch {
    return null;
  }
}

/** Writes seq.json atomically and durably (temp file, fsync, rename). */
export function writeSeqState(dir: string, s: SeqState): void {
  // Durable with its folder: a rename the folder has not recorded can come back after a power
  // cut as the old seq.json, whose lower reservation would let a lost WAL reuse seqs.
  replaceDurably(join(dir, SEQ_FILE), `${JSON.stringify(s)}\n`);
}

// ---- healing -------------------------------------------------------------------------

export interface RecoveryReport {
  /**
   * 'file' (or absent, as written before 2026-12-07): buffer.db was moved aside and replaced.
   * 'rows': damaged rows were set aside in place, their texts kept in `moved_to` (DECISIONS P22).
   */
  kind?: 'file' | 'rows';
  at: string;
  /** Where the damaged file went (kind 'rows': the file that keeps the damaged rows' texts). */
  moved_to: string;
  reason: string;
  salvaged_entries: number;
  positions_recovered: number;
  /**
   * Seqs that could not be salvaged (the server sees them as an eviction gap); null when none.
   * With more than one range lost (`lost_ranges`), the first seq of the first and the last of
   * the last: the entries between the ranges were kept.
   */
  lost_from: number | null;
  lost_to: number | null;
  /** Each range of seqs lost, in order (since 2026-12-07; absent: lost_from..lost_to is the one range). */
  lost_ranges?: [number, number][];
  /** next_seq of the fresh buffer. */
  next_seq: number;
}

export interface HealingOpen {
  buffer: DurableBuffer;
  /** Set when the buffer was damaged and replaced (this open or an earlier one still unresolved). */
  recovery: RecoveryReport | null;
  /** Set when next_seq moved up because buffer.db-wal was missing after an unclean stop. */
  walLost: { from: number; to: number } | null;
}

/**
 * Opens DIR/buffer.db for the agent, healing a damaged file (see the header), and keeps
 * DIR/seq.json's reservation ahead of next_seq through BufferOptions.onSeqReserve.
 *
 * A start that fails after the buffer opened (seq.json cannot be written, next_seq cannot be
 * raised: a full disk) closes it here, and marks the clean close when buffer.db then holds every
 * seq ever assigned: SQLite's close checkpoints the -wal into buffer.db and removes it, which
 * read at the next start, with seq.json still saying "running" from a killed run, as a lost WAL
 * (next_seq jumped up to 65,536 ahead, a false eviction gap on the server: DECISIONS F16). A
 * full disk is thrown as BufferStorageError disk_full, operation "open": `run` waits for space
 * and tries again (H12), as for the open itself.
 */
export function openHealing(dir: string, options: BufferOptions = {}): HealingOpen {
  const path = join(dir, 'buffer.db');
  const seq = readSeqState(dir);
  const closedCleanly = existsSync(`${path}${CLEAN_CLOSE_MARK}`);
  // No -wal while a page size rebuild was under way (DECISIONS P14) is not a lost WAL: the
  // rebuild checkpointed it whole before leaving WAL mode. Nor after a clean close.
  const walMissing = existsSync(path) && !existsSync(`${path}-wal`) && !existsSync(`${path}${PAGE_SIZE_REBUILD_MARK}`) && !closedCleanly;
  // buffer.db holds every seq ever assigned: a clean close of it now loses nothing. Not when its
  // -wal is missing after a run was killed — until next_seq has been raised past the reservation.
  let whole = !(walMissing && seq !== null && seq.running);
  const afterFailure = (): void => closedAfterOpen(dir, whole);
  let recovery: RecoveryReport | null = null;
  let buffer: DurableBuffer | undefined;
  let reason: string | undefined;
  try {
    if (existsSync(path)) {
      try {
        buffer = DurableBuffer.open(path, withReserve(dir, options));
        const quick = buffer.quickCheck();
        if (quick !== 'ok') reason = `quick_check: ${quick}`;
      } catch (err) {
        if (!(err instanceof BufferStorageError) || (err.kind !== 'corrupt' && err.kind !== 'schema')) throw err;
        reason = err.message;
      }
      if (reason !== undefined) {
        buffer?.close();
        buffer = undefined;
        recovery = heal(dir, path, reason, seq, options);
      }
    }
    buffer ??= DurableBuffer.open(path, withReserve(dir, options));
  } catch (err) {
    // (not after a heal that failed half way: its fresh buffer.db is not the buffer's whole)
    if (reason === undefined) afterFailure();
    throw openFailure(err, path);
  }
  if (recovery !== null) whole = true; // the fresh buffer's next_seq is past every seq ever assigned
  try {
    let walLost: HealingOpen['walLost'] = null;
    if (recovery === null && seq !== null && seq.running && walMissing && buffer.nextSeq < seq.reserved_next_seq) {
      // Unclean stop and no WAL: committed transactions may be gone with it. Never reuse a seq.
      const from = buffer.nextSeq;
      buffer.raiseNextSeq(seq.reserved_next_seq);
      walLost = { from, to: seq.reserved_next_seq - 1 };
    }
    whole = true; // (raised, or nothing to raise)
    // This run assigns seqs from now on: a -wal missing after it is killed must read as lost again.
    if (closedCleanly) {
      rmSync(`${path}${CLEAN_CLOSE_MARK}`, { force: true });
      syncFolder(dir);
    }
    writeSeqState(dir, { reserved_next_seq: Math.max(seq?.reserved_next_seq ?? 0, buffer.nextSeq + SEQ_BLOCK), running: true });
    if (recovery === null) recovery = readRecovery(dir);
    return { buffer, recovery, walLost };
  } catch (err) {
    try {
      buffer.close();
      afterFailure();
    } catch {
      // not closed: SQLite closes it at exit
    }
    throw openFailure(err, err instanceof BufferStorageError ? path : join(dir, SEQ_FILE));
  }
}

/**
 * A full disk met while opening — by SQLite (SQLITE_FULL raising next_seq) or writing seq.json
 * (ENOSPC, EDQUOT) — as the open's own disk_full error, which `run` waits out (H12, F15); it was
 * E_AGENT_START, an exit, and systemd gave up after its start limit. `file`: what could not be
 * written. Anything else as it was.
 */
function openFailure(err: unknown, file: string): unknown {
  if (err instanceof BufferStorageError) {
    if (err.kind !== 'disk_full' || err.operation === 'open') return err;
    return new BufferStorageError('disk_full', 'open', file, err.code, err);
  }
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return isDiskFullCode(code) ? new BufferStorageError('disk_full', 'open', file, code, err) : err;
}

/**
 * Records a clean stop: the next open trusts buffer.db even without its -wal. Called once
 * buffer.db is closed. Where seq.json cannot be written (a full disk), the clean-close mark says it.
 */
export function markCleanStop(dir: string, nextSeq: number): void {
  const seq = readSeqState(dir);
  try {
    writeSeqState(dir, { reserved_next_seq: Math.max(seq?.reserved_next_seq ?? 0, nextSeq), running: false });
  } catch {
    // the next start would treat it as unclean, and take a -wal checkpointed by the close for a
    // lost one (a false eviction gap of up to SEQ_BLOCK seqs): an empty file fits where seq.json did not
    markCleanClose(dir);
  }
}

/**
 * Whether buffer.db, closed, holds every seq ever assigned: its -wal is there (the next open
 * reads it), or its last close was clean (seq.json "running": false, or the clean-close mark), or
 * no run ever reserved seqs. A program that opens it for a moment (enroll) marks its clean close
 * only then (markCleanClose): else it would hide a -wal lost before it.
 */
export function bufferWhole(dir: string): boolean {
  const path = join(dir, 'buffer.db');
  if (!existsSync(path) || existsSync(`${path}-wal`) || existsSync(`${path}${CLEAN_CLOSE_MARK}`)) return true;
  const seq = readSeqState(dir);
  return seq === null || !seq.running;
}

/**
 * After buffer.db, opened for a moment (a start that failed, enroll), is closed again: `whole` —
 * it held every seq ever assigned when it was opened (bufferWhole) — marks the clean close;
 * else the -wal this open made is removed (it holds nothing of the entries: the open assigned no
 * seq), which would otherwise hide the lost one from the next start, and that start would not
 * raise next_seq (DECISIONS F16).
 */
export function closedAfterOpen(dir: string, whole: boolean): void {
  if (whole) markCleanClose(dir);
  else rmSync(join(dir, 'buffer.db-wal'), { force: true });
}

/**
 * Marks that SQLite closed buffer.db cleanly (its -wal checkpointed into it and removed), for a
 * buffer that held every seq ever assigned when it was opened (openHealing; bufferWhole). Not
 * when the -wal is still there (the checkpoint could not complete): the next open reads it.
 * Best effort and durable: without the mark the next start is only more careful.
 */
export function markCleanClose(dir: string): void {
  const path = join(dir, 'buffer.db');
  if (!existsSync(path) || existsSync(`${path}-wal`)) return;
  try {
    closeSync(openSync(`${path}${CLEAN_CLOSE_MARK}`, 'a', 0o600));
    syncFolder(dir);
  } catch {
    // no inode left either
  }
}

/** The ranges of seqs a report says were lost, in order: `lost_ranges`, or lost_from..lost_to as one (a report written before). */
export function lostRanges(r: Pick<RecoveryReport, 'lost_from' | 'lost_to' | 'lost_ranges'>): [number, number][] {
  if (Array.isArray(r.lost_ranges)) {
    const valid = r.lost_ranges.filter((x): x is [number, number] => Array.isArray(x) && x.length === 2 && Number.isSafeInteger(x[0]) && Number.isSafeInteger(x[1]) && x[0] <= x[1]);
    if (valid.length > 0) return mergeRanges(valid);
  }
  return r.lost_from !== null && r.lost_to !== null && r.lost_from <= r.lost_to ? [[r.lost_from, r.lost_to]] : [];
}

/** The seqs a report says were lost, as status and buffer check write them: "501..600, 900..950", or "-". */
export function lostText(r: Pick<RecoveryReport, 'lost_from' | 'lost_to' | 'lost_ranges'>): string {
  const ranges = lostRanges(r);
  return ranges.length === 0 ? '-' : ranges.map(([from, to]) => (from === to ? `${from}` : `${from}..${to}`)).join(', ');
}

/** `ranges` sorted, with ranges that overlap or touch made one. */
export function mergeRanges(ranges: readonly (readonly [number, number])[]): [number, number][] {
  const out: [number, number][] = [];
  for (const [from, to] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const last = out[out.length - 1];
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/** How many seqs `ranges` (merged) hold. */
export function rangesSize(ranges: readonly (readonly [number, number])[]): number {
  return ranges.reduce((n, [from, to]) => n + (to - from + 1), 0);
}

/** A report's lost_from, lost_to and lost_ranges for `ranges` (lost_ranges only when there are two or more). */
export function lostFields(ranges: readonly (readonly [number, number])[]): Pick<RecoveryReport, 'lost_from' | 'lost_to' | 'lost_ranges'> {
  const merged = mergeRanges(ranges);
  const first = merged[0];
  const last = merged[merged.length - 1];
  return { lost_from: first?.[0] ?? null, lost_to: last?.[1] ?? null, ...(merged.length > 1 ? { lost_ranges: merged } : {}) };
}

export function readRecovery(dir: string): RecoveryReport | null {
  try {
    return JSON.parse(readFileSync(join(dir, RECOVERY_FILE), 'utf8')) as RecoveryReport;
  } catch {
    return null;
  }
}

/** Records what a damaged buffer lost (status shows it as degraded until the server has acked past it). */
export function writeRecovery(dir: string, report: RecoveryReport): void {
  writeFileSync(join(dir, RECOVERY_FILE), `${JSON.stringify(report)}\n`, { mode: 0o600 });
}

/** The server has acked past the recovered range: the buffer is whole again. */
export function clearRecovery(dir: string): void {
  rmSync(join(dir, RECOVERY_FILE), { force: true });
}

function withReserve(dir: string, options: BufferOptions): BufferOptions {
  return {
    ...options,
    onSeqReserve: (upTo: number) => {
      const seq = readSeqState(dir);
      if (seq !== null && seq.reserved_next_seq >= upTo) return seq.reserved_next_seq;
      const reserved = upTo + SEQ_BLOCK;
      writeSeqState(dir, { reserved_next_seq: reserved, running: true });
      return reserved;
    },
  };
}

interface Salvage {
  acked: number;
  next: number;
  /** The meta row read back: next is the damaged buffer's own next_seq. */
  metaOk: boolean;
  entries: { seq: number; bytes: number; json: string }[];
  positions: { source: string; position: string; updated_at: string }[];
}

/** At most this many seeks to step over damaged pages of the entries table (each is one b-tree descent). */
const SALVAGE_MAX_PROBES = 10_000;

/**
 * The rows (their seq and length, not their text) of a damaged file that hold seqs above
 * `acked`, in order, stepping over pages that do not read: a listing that fails after seq s is
 * taken up again at the lowest seq whose seek reads, found by looking further and further
 * (1, 2, 4 … seqs past s, up to `limit`) and then back by halves, so that only the rows of the
 * damaged page are skipped.
 */
function rowHeads(db: BetterSqlite3.Database, nSql: string, acked: number, limit: number): { seq: number; n: number }[] {
  const heads: { seq: number; n: number }[] = [];
  const list = db.prepare(`SELECT seq, ${nSql} AS n FROM entries WHERE seq > ? ORDER BY seq`);
  const firstFrom = db.prepare('SELECT seq FROM entries WHERE seq >= ? ORDER BY seq LIMIT 1');
  let probes = 0;
  /** The first row at or after `seq`: its seq, null when none, undefined when the seek does not read. */
  const seek = (seq: number): number | null | undefined => {
    probes++;
    try {
      return (firstFrom.get(seq) as { seq: number } | undefined)?.seq ?? null;
    } catch {
      return undefined;
    }
  };
  try {
    // the oldest row may straddle acked_seq
    const straddling = db.prepare(`SELECT seq, ${nSql} AS n FROM entries WHERE seq <= ? ORDER BY seq DESC LIMIT 1`).get(acked) as { seq: number; n: number } | undefined;
    if (straddling !== undefined && straddling.seq + straddling.n - 1 > acked) heads.push(straddling);
  } catch {
    // on a damaged page: lost with it
  }
  let after = acked;
  for (;;) {
    try {
      for (const r of list.iterate(after) as Iterable<{ seq: number; n: number }>) {
        heads.push(r);
        after = r.seq;
      }
      return heads;
    } catch {
      // A damaged page after `after`: look further until a seek reads …
      let bad = after + 1;
      let step = 1;
      let found: number | null | undefined;
      for (;;) {
        if (probes >= SALVAGE_MAX_PROBES || bad + step > limit) return heads;
        found = seek(bad + step);
        if (found !== undefined) break;
        bad += step;
        step *= 2;
      }
      if (found === null) return heads; // nothing beyond
      // … then back by halves, to the lowest seq past `bad` whose seek reads
      let good = bad + step;
      while (good - bad > 1 && probes < SALVAGE_MAX_PROBES) {
        const mid = bad + Math.floor((good - bad) / 2);
        const at = seek(mid);
        if (at === undefined) bad = mid;
        else {
          good = mid;
          found = at ?? found;
        }
      }
      if (found === null) return heads;
      after = found - 1;
    }
  }
}

/** Reads what still reads from a damaged buffer file; every part is optional. */
function salvage(file: string): Salvage {
  const out: Salvage = { acked: 0, next: 1, metaOk: false, entries: [], positions: [] };
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    return out;
  }
  try {
    try {
      const m = db.prepare('SELECT next_seq, acked_seq FROM meta WHERE id = 1').get() as { next_seq: number; acked_seq: number } | undefined;
      if (m !== undefined && Number.isSafeInteger(m.next_seq) && Number.isSafeInteger(m.acked_seq)) {
        out.acked = m.acked_seq;
        out.next = m.next_seq;
        out.metaOk = true;
      }
    } catch {
      // meta unreadable: seq.json decides
    }
    try {
      out.positions = db.prepare('SELECT source, position, updated_at FROM source_positions').all() as Salvage['positions'];
    } catch {
      // positions unreadable: sources start over (counted as duplicates by the server side only if re-read)
    }
    try {
      // a row is a run of entries (schema 2; a schema 1 file's rows are runs of one). Row by
      // row, past the damage: a row whose text does not read or split is skipped, and a damaged
      // page of the table is stepped over to the next row that reads (DECISIONS P23).
      const one = db.prepare('SELECT json FROM entries WHERE seq = ?');
      for (const r of rowHeads(db, runLengthSql(db), out.acked, out.metaOk ? out.next : Number.MAX_SAFE_INTEGER)) {
        let parts: string[] | null = null;
        try {
          const json = (one.get(r.seq) as { json?: unknown } | undefined)?.json;
          parts = typeof json === 'string' ? splitRun(json, r.n) : null;
        } catch {
          // its text is on a damaged page
        }
        if (parts === null) continue;
        for (let k = Math.max(0, out.acked + 1 - r.seq); k < r.n; k++) {
          const part = parts[k]!;
          try {
            JSON.parse(part);
          } catch {
            continue; // this entry's text is damaged, not its neighbours'
          }
          out.entries.push({ seq: r.seq + k, bytes: Buffer.byteLength(part, 'utf8'), json: part });
        }
      }
    } catch {
      // the table itself does not read: nothing more
    }
  } finally {
    db.close();
  }
  return out;
}

function heal(dir: string, path: string, reason: string, seq: SeqState | null, options: BufferOptions): RecoveryReport {
  const at = new Date().toISOString();
  const moved = join(dir, `${basename(path)}.corrupt-${at.replace(/[:.]/g, '-')}`);
  renameSync(path, moved);
  for (const ext of ['-wal', '-shm']) if (existsSync(path + ext)) renameSync(path + ext, moved + ext);
  // the damaged files are out of the way on disk before a fresh buffer.db takes the name
  syncFolder(dir);
  const s = salvage(moved);
  // Every entry that reads is kept, gaps and all: a gap is sent as after an eviction (the server
  // sees it), as the damaged rows P22 sets aside in place are.
  const entries: Salvage['entries'] = [];
  for (const e of s.entries) {
    if (e.seq <= s.acked || (entries.length > 0 && e.seq <= entries[entries.length - 1]!.seq)) continue;
    entries.push(e);
  }
  const lastSalvaged = entries.length > 0 ? entries[entries.length - 1]!.seq : s.acked;
  // Never reuse a seq: the damaged file's own next_seq when it reads, else the reservation.
  const next = Math.max(lastSalvaged + 1, s.acked + 1, s.metaOk ? s.next : (seq?.reserved_next_seq ?? 1));
  // What was not salvaged: every seq in (acked, next) no kept entry has.
  const lost: [number, number][] = [];
  let expect = s.acked + 1;
  for (const e of entries) {
    if (e.seq > expect) lost.push([expect, e.seq - 1]);
    expect = e.seq + 1;
  }
  if (expect < next) lost.push([expect, next - 1]);
  const fresh = DurableBuffer.open(path, { ...options, reserveBytes: 0 });
  fresh.close();
  const db = new Database(path);
  try {
    db.transaction(() => {
      const ins = db.prepare('INSERT INTO entries (seq, bytes, json) VALUES (?, ?, ?)');
      let bytes = 0;
      for (const e of entries) {
        ins.run(e.seq, e.bytes, e.json);
        bytes += e.bytes;
      }
      const pos = db.prepare('INSERT INTO source_positions (source, position, updated_at) VALUES (?, ?, ?)');
      for (const p of s.positions) pos.run(p.source, p.position, p.updated_at);
      db.prepare('UPDATE meta SET next_seq = ?, acked_seq = ?, queue_depth = ?, buffer_bytes = ? WHERE id = 1').run(next, s.acked, entries.length, bytes);
    })();
  } finally {
    db.close();
  }
  const report: RecoveryReport = {
    kind: 'file',
    at,
    moved_to: moved,
    reason,
    salvaged_entries: entries.length,
    positions_recovered: s.positions.length,
    ...lostFields(lost),
    next_seq: next,
  };
  writeRecovery(dirname(path), report);
  return report;
}
