// The agent's writes to buffer.db and what happens when storage fails (DECISIONS H4/H5):
//
//   - open: a damaged buffer is moved aside and replaced, and a lost -wal cannot move
//     next_seq back (buffer/heal.ts); the lost range is kept as `recovery` (status:
//     degraded) until the server has acked past it, and reported once per session as metrics.
//   - append: every entry (agent.ingest() or a source) is validated once, then committed;
//     the sender later splices the stored JSON into frames without checking again.
//   - a storage error pauses the sources (nothing is read that cannot be stored) and, when
//     retryable (disk full, busy), probes storage every storageRetryMs until a write works;
//     a corrupt buffer at run time asks `run` to restart ('buffer_corrupt'), which heals it.
//   - evictions at the hard cap are logged, emitted and reported as metrics.
//   - a damaged row the buffer set aside (DECISIONS P22) is logged and kept as `recovery`
//     (status: degraded) like a healed file's lost range.

import type { EventEmitter } from 'node:events';
import { describeIssues, toIssues, validateLogBatchEntry, type MetricSample } from '@cortex/agent-protocol';
import { RECLAIM_MAX_LIVE_BYTES, type AppendResult, type BufferOptions, type DamagedRowReport, type DurableBuffer, type EvictionReport, type SourcePositionUpdate } from './buffer/buffer.js';
import { SerializedEntry, type BufferEntry } from './buffer/entry.js';
import { BufferStorageError } from './buffer/errors.js';
import { RECOVERY_FILE, clearRecovery, lostFields, lostRanges, openHealing, rangesSize, writeRecovery, type RecoveryReport } from './buffer/heal.js';
import type { SourceControl } from './agent-sources.js';
import type { Logger } from './log.js';
import { readOnlyStateDirText, stateDirWriteProblem } from './state-dir.js';

/** Opens DIR/buffer.db, healing a damaged one; logs what healing did. */
export function openAgentBuffer(stateDir: string, options: BufferOptions | undefined, log: Logger): { buffer: DurableBuffer; recovery: RecoveryReport | null } {
  const healed = openHealing(stateDir, options);
  if (healed.walLost !== null) {
    log.warn({ from_seq: healed.walLost.from, to_seq: healed.walLost.to }, 'buffer.db-wal was missing after an unclean stop: next_seq moved past every seq ever reserved (the server sees an eviction gap)');
  }
  if (healed.recovery !== null) log.error({ ...healed.recovery }, 'buffer was damaged: moved aside and replaced; the seqs it could not give back are reported as an eviction gap');
  return { buffer: healed.buffer, recovery: healed.recovery };
}

export type GuardedBuffer = Pick<DurableBuffer, 'append' | 'applyAccepted' | 'assertSpace' | 'setSourcePosition' | 'ackedSeq' | 'bufferBytes' | 'queueDepth' | 'nextSeq' | 'stats' | 'hardCapBytes' | 'reclaim'>;

/** How often, at most, an ack looks whether a drained buffer can give its file space back. */
export const RECLAIM_CHECK_MS = 10_000;

export interface StorageGuardDeps {
  stateDir: string;
  /** While storage is failing: how often to probe for recovery. Default 5 s. */
  retryMs?: number;
  log: Logger;
  buffer: GuardedBuffer;
  /** Set when the buffer was healed at open (the range it lost). */
  recovery: RecoveryReport | null;
  sources: SourceControl;
  /** Emits storage_error, storage_recovered, buffer_corrupt and state_dir_read_only (only when someone listens), evicted, acked (replay). */
  events: Pick<EventEmitter, 'emit' | 'listenerCount'>;
  stopping(): boolean;
  setError(message: string): string;
  clearError(): void;
  /** Entries were stored: wake the sender. */
  stored(): void;
  /** Something status shows changed. */
  markDirty(): void;
  /** Writes status.json now (storage recovered). */
  writeStatus(): void;
  sendMetrics(samples: MetricSample[]): void;
  /** Epoch milliseconds (the reclaim check's spacing). Default Date.now. */
  now?: () => number;
}

export class StorageGuard {
  private retryTimer: NodeJS.Timeout | null = null;
  private reclaimCheckedAt = 0;
  private reclaimTimer: NodeJS.Timeout | null = null;
  /** The largest write refused at the low-water mark since the sources paused: what the probe must find room for. */
  private refusedBytes = 0;
  private recoveryReport: RecoveryReport | null;

  constructor(private readonly deps: StorageGuardDeps) {
    this.recoveryReport = deps.recovery;
  }

  /** The range a damaged buffer lost, until the server has acked past it (status: degraded). */
  get recovery(): RecoveryReport | null {
    return this.recoveryReport;
  }

  /**
   * Validates and commits entries (durable before this returns). Throws TypeError for an
   * invalid entry and BufferStorageError when storage fails (nothing stored either way).
   * A SerializedEntry is the agent's own parser's JSON text, valid by construction (DECISIONS
   * P18; a test validates what it writes), so it is not parsed back to be checked here.
   */
  append(entries: readonly BufferEntry[], position?: SourcePositionUpdate): AppendResult {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (e instanceof SerializedEntry) continue;
      if (!validateLogBatchEntry({ seq: 1, ...e })) {
        throw new TypeError(`entry ${i} is not a valid LogBatchEntry (nothing stored): ${describeIssues(toIssues(validateLogBatchEntry.errors))}`);
      }
    }
    let result: AppendResult;
    try {
      result = this.deps.buffer.append(entries, position);
    } catch (err) {
      this.storageError(err);
      throw err;
    }
    if (this.deps.sources.paused) this.recovered();
    if (result.evicted) this.onEvicted(result.evicted);
    if (result.count > 0) this.deps.stored();
    this.deps.markDirty();
    return result;
  }

  /** A buffer operation failed: pause the sources and (if retryable) probe for recovery. */
  storageError(err: unknown): void {
    if (!(err instanceof BufferStorageError)) return;
    const { log, events, sources } = this.deps;
    // A write refused because the state folder's filesystem went read-only (the kernel does
    // that after an I/O error; SQLite reports SQLITE_IOERR_WRITE or SQLITE_READONLY): say so.
    // `run` then stops the agent, which lets go of the folder so that it can be unmounted and
    // repaired, and starts it again once it can write there (DECISIONS H18).
    const readOnly = (err.kind === 'io' || err.kind === 'read_only') && stateDirWriteProblem(this.deps.stateDir)?.kind === 'read_only';
    const restarts = readOnly && events.listenerCount('state_dir_read_only') > 0;
    const text = !readOnly
      ? err.message
      : restarts
        ? `${readOnlyStateDirText(this.deps.stateDir)}; the agent stops (letting go of the folder so that it can be unmounted) and starts by itself once it can write there; sources resume where they stopped (${err.message})`
        : `${readOnlyStateDirText(this.deps.stateDir)}, after stopping the agent (it holds the buffer open), then start it again; nothing is read from the sources until then, and they resume where they stopped (${err.message})`;
    this.deps.setError(text);
    if (err.bytes !== undefined) this.refusedBytes = Math.max(this.refusedBytes, err.bytes);
    if (err.kind === 'corrupt' && events.listenerCount('buffer_corrupt') > 0) {
      // `run` restarts the agent, and opening heals the buffer (DECISIONS H5).
      log.error({ code: err.code }, `buffer damaged at run time: restarting to move it aside and heal it (${err.message})`);
      events.emit('buffer_corrupt', err);
    }
    if (!sources.paused) {
      log.error({ kind: readOnly ? 'read_only' : err.kind, code: err.code }, `buffer write failed, sources paused: ${text}`);
      sources.pause(err.message);
      events.emit('storage_error', err);
    }
    if (restarts) {
      events.emit('state_dir_read_only', err);
      return;
    }
    if (err.retryable && !this.retryTimer && !this.deps.stopping()) {
      this.retryTimer = setInterval(() => this.probe(), this.deps.retryMs ?? 5000);
    }
  }

  /**
   * A hello reported the server's accepted_seq: rows it already has are deleted, and a
   * next_seq at or below it jumps past it. The server's accepted_seq acknowledges entries
   * too (their ack may have been lost): 'acked' is emitted when acked_seq moved.
   */
  applyAccepted(acceptedSeq: number): void {
    const { buffer, log } = this.deps;
    try {
      const ackedBefore = buffer.ackedSeq;
      const r = buffer.applyAccepted(acceptedSeq);
      if (r.jumped) {
        log.warn(
          { accepted_seq: acceptedSeq, previous_next_seq: r.previousNextSeq, next_seq: r.nextSeq },
          'next_seq was <= the server accepted_seq (buffer lost or restored from an old copy): next_seq jumped past it',
        );
      }
      if (r.deleted > 0) log.info({ accepted_seq: acceptedSeq, deleted: r.deleted }, 'replay: rows the server already has were deleted');
      if (r.ackedSeq > ackedBefore) this.deps.events.emit('acked', r.ackedSeq);
    } catch (err) {
      log.error({ err: (err as Error).message }, 'replay: cannot apply accepted_seq to the buffer');
      this.storageError(err);
      return;
    }
    // At each hello too: an agent that starts on a drained file and reads nothing acks nothing.
    this.maybeReclaim();
  }

  /**
   * The buffer set a damaged row aside (DECISIONS P22): logged, and kept as the recovery report
   * (status: degraded, the lost-range metrics) until the server has acked past next_seq. With a
   * report still open, its ranges and this row's are kept side by side (lost_ranges).
   */
  damagedRow(r: DamagedRowReport): void {
    const { buffer, log } = this.deps;
    const before = this.recoveryReport;
    const ranges = before === null ? [] : lostRanges(before);
    if (r.lostFrom !== null && r.lostTo !== null) ranges.push([r.lostFrom, r.lostTo]);
    const report: RecoveryReport = {
      kind: before === null ? 'rows' : (before.kind ?? 'file'),
      at: before?.at ?? new Date().toISOString(),
      moved_to: before?.moved_to ?? r.file,
      reason: before === null ? r.reason : `${before.reason}; then ${r.reason}`.slice(0, 2000),
      salvaged_entries: before?.salvaged_entries ?? buffer.queueDepth,
      positions_recovered: before?.positions_recovered ?? 0,
      ...lostFields(ranges),
      next_seq: buffer.nextSeq,
    };
    this.recoveryReport = report;
    log.error(
      { row_seq: r.rowSeq, row_end: r.rowEnd, lost_from: r.lostFrom, lost_to: r.lostTo, kept_in: r.file },
      `buffer.db: ${r.reason}; its text is kept in ${r.file} and the row was removed, so sending goes on after it${r.lostFrom !== null ? ` (seqs ${r.lostFrom}..${r.lostTo} are not sent: the server sees a gap)` : ''}; check the disk (dmesg, smartctl) that holds the state folder`,
    );
    try {
      writeRecovery(this.deps.stateDir, report);
    } catch (err) {
      log.warn({ err: (err as Error).message }, `cannot write ${RECOVERY_FILE}: the damaged row is reported only until the agent stops`);
    }
    this.deps.markDirty();
  }

  /** acked_seq advanced: once past the range a damaged buffer lost, no longer degraded. */
  acked(ackedSeq: number): void {
    this.maybeReclaim();
    if (this.recoveryReport === null || ackedSeq < this.recoveryReport.next_seq) return;
    this.deps.log.info({ acked_seq: this.deps.buffer.ackedSeq, ...this.recoveryReport }, 'the server has acked past the range lost with the damaged buffer: no longer degraded');
    this.recoveryReport = null;
    clearRecovery(this.deps.stateDir);
    this.deps.markDirty();
  }

  /**
   * After an ack with at most RECLAIM_MAX_LIVE_BYTES left queued: a buffer file grown by a
   * backlog gives its free pages back (DurableBuffer.reclaim, DECISIONS H22). Looked at most
   * every RECLAIM_CHECK_MS; an ack inside that time leaves one look for its end, so the last
   * acks of a backlog, after which the agent may be idle for hours, are not missed.
   */
  private maybeReclaim(): void {
    if (this.retryTimer !== null || this.deps.stopping()) return;
    // on every ack: the in-memory figure (stats() would query the oldest seq each time)
    if (this.deps.buffer.bufferBytes > RECLAIM_MAX_LIVE_BYTES) return;
    const now = (this.deps.now ?? Date.now)();
    const wait = this.reclaimCheckedAt + RECLAIM_CHECK_MS - now;
    if (wait > 0) {
      if (this.reclaimTimer === null) {
        this.reclaimTimer = setTimeout(() => {
          this.reclaimTimer = null;
          this.maybeReclaim();
        }, wait);
        this.reclaimTimer.unref();
      }
      return;
    }
    this.reclaimCheckedAt = now;
    const started = performance.now();
    const freed = this.deps.buffer.reclaim();
    if (freed > 0) {
      this.deps.log.info(
        { freed_bytes: freed, queue_depth: this.deps.buffer.queueDepth, took_ms: Math.round(performance.now() - started) },
        `buffer.db gave ${(freed / 1048576).toFixed(1)} MiB back to the filesystem: the backlog it grew for has been sent`,
      );
    }
  }

  /** The range a damaged buffer took with it, reported like an eviction (DECISIONS H5), or [] . */
  lostRangeMetrics(): MetricSample[] {
    const rec = this.recoveryReport;
    const ranges = rec === null ? [] : lostRanges(rec);
    if (ranges.length === 0) return [];
    return [
      { name: 'buffer_recovery_lost_entries', value: rangesSize(ranges) },
      { name: 'buffer_recovery_lost_oldest_seq', value: ranges[0]![0] },
    ];
  }

  /** Stops probing for recovery. */
  stop(): void {
    if (this.retryTimer) clearInterval(this.retryTimer);
    this.retryTimer = null;
    if (this.reclaimTimer) clearTimeout(this.reclaimTimer);
    this.reclaimTimer = null;
  }

  private probe(): void {
    try {
      // Room above the low-water mark again (DECISIONS H4) for the write that was refused: with
      // less, the sources would resume, be refused the same write and pause again, forever.
      this.deps.buffer.assertSpace('storage probe', this.refusedBytes, true);
      this.deps.buffer.setSourcePosition({ source: 'agent:storage-probe', position: Date.now() });
      this.recovered();
    } catch {
      // still failing
    }
  }

  private recovered(): void {
    this.stop();
    this.refusedBytes = 0;
    if (!this.deps.sources.paused) return;
    this.deps.sources.resume();
    this.deps.clearError();
    this.deps.log.info('buffer writable again; sources resumed');
    this.deps.events.emit('storage_recovered');
    this.deps.writeStatus();
  }

  private onEvicted(ev: EvictionReport): void {
    this.deps.log.warn(
      { evicted_entries: ev.entries, from_seq: ev.fromSeq, to_seq: ev.toSeq, hard_cap_bytes: this.deps.buffer.hardCapBytes },
      'buffer hard cap reached: oldest entries dropped',
    );
    this.deps.events.emit('evicted', ev);
    const s = this.deps.buffer.stats();
    this.deps.sendMetrics([
      { name: 'buffer_evicted_entries', value: s.evictedEntries },
      { name: 'buffer_evicted_oldest_seq', value: ev.fromSeq },
    ]);
  }
}
