// The push pump (seed 7, DESIGN 5.4/5.6): reads batches from the buffer and sends them as
// logs.push over the session, with up to `window` requests in flight.
//
//   - Batch size: min(config.max_batch_entries, capabilities.max_batch_entries, 1000, the
//     cap a -32008 PayloadTooLarge halved) entries and ~127 KiB (batchMaxBytes; frames stay under 128 KiB).
//   - A batch goes when it is full, or flush_interval_ms after entries arrived (at once
//     under buffer pressure or while draining).
//   - Acks advance acked_seq and delete rows in one transaction (buffer.ack); an ack beyond
//     the highest seq ever sent is clipped (it must not delete what was never sent).
//   - -32020/-32030: the send rate halves (send-rate.ts) and recovers over 10 s, with one
//     push at a time until it has; -32021 pauses; any refused batch is resent (the server
//     drops duplicates).

import type { EventEmitter } from 'node:events';
import { ErrorCode, LIMITS, PeerError, RpcError, type AgentConfig, type AgentPeer, type LogsPushResult, type RetryAfterData } from '@cortex/agent-protocol';
import { DEFAULT_BATCH_MAX_BYTES, type BufferBatch, type DurableBuffer } from './buffer/buffer.js';
import { logsPushParamsJson } from './buffer/frame.js';
import type { Logger } from './log.js';
import { SendRate } from './send-rate.js';

/**
 * The longest pause the agent takes on a server's retry_after_ms (-32020, -32030, -32007): as long
 * as the longest drain a server may announce (max_drain_seconds, 300 s). The contract sets no
 * maximum, and a longer advice — a bug, a hostile peer — would stop the agent for days (DECISIONS F11).
 */
export const RETRY_AFTER_MAX_MS = LIMITS.max_drain_seconds * 1000;

/**
 * The shortest pause after a refused push (-32020, -32030, -32007, -32008), whatever
 * retry_after_ms says. A server advising 0 (a bug, a hostile peer) had the agent resend in a
 * tight loop: 88,000 pushes in 12 s at 80 % of a core, 4,800 log lines a second (DECISIONS H54).
 * The reference server never advises less than half its flush interval (100 ms).
 */
export const MIN_REFUSAL_PAUSE_MS = 100;
/** Acked pushes in a row after which a batch size halved by -32008 doubles again (up to the configured size). */
export const BATCH_RECOVER_AFTER_ACKS = 8;
/** At most one "cannot read the buffer" line this often for one error; the failed reads between are counted. */
export const READ_ERROR_LOG_EVERY_MS = 60_000;
/** At most one "server asked to slow down" line this often; the refusals between are counted. */
const SLOW_DOWN_LOG_EVERY_MS = 10_000;

export interface PushPumpOptions {
  /** capabilities.max_batch_entries (default 1000). */
  maxBatchEntries?: number;
  /** Byte budget per batch (default 127 KiB, frames stay < 128 KiB). */
  batchMaxBytes?: number;
  /** logs.push requests in flight (default 4). */
  window?: number;
}

/** The part of a session the pump sends over. */
export interface PushConn {
  readonly peer: Pick<AgentPeer, 'requestSerialized'>;
  readonly ws: { terminate(): void };
  /** logs.push requests of this connection awaiting an answer (kept by the pump). */
  inFlight: number;
}

export type PumpBuffer = Pick<DurableBuffer, 'syncedSeq' | 'ackedSeq' | 'pressure' | 'readBatch' | 'ack'>;

export interface PushPumpDeps {
  options: PushPumpOptions;
  log: Logger;
  buffer: PumpBuffer;
  /** The config in force (max_batch_entries, flush_interval_ms). */
  config(): Pick<AgentConfig, 'max_batch_entries' | 'flush_interval_ms'>;
  /** The session's current connection (whatever its state), or null. */
  connection(): PushConn | null;
  /** Active or Draining, and not stopping. */
  canSend(): boolean;
  draining(): boolean;
  /** acked_seq advanced to `ackedSeq` (rows deleted). */
  acked(ackedSeq: number): void;
  /** After an ack on the current connection: true when that ended the session (drain done). */
  afterAck(): boolean;
  /** Recording an ack failed (storage error handling). */
  storageError(err: unknown): void;
  /** Records last_error (scrubbed); returns what was stored. */
  setError(message: string): string;
  /** Clears last_error when it is still `message` (what setError returned). */
  clearErrorIf(message: string): void;
  /** -32004 UnknownHost: close the connection cleanly (its close handler reconnects). */
  closeConnection(conn: PushConn): void;
  /** Something status shows changed (acked_seq). */
  markDirty(): void;
  /** Emits 'push_error'. */
  events: Pick<EventEmitter, 'emit'>;
  rate?: SendRate;
  now?: () => number;
}

export class PushPump {
  readonly rate: SendRate;
  private nextSendSeq: number;
  /**
   * Highest seq the server can have from this agent: the largest seq_end ever sent, or the
   * accepted_seq a hello reported. An ack beyond it (a broken or hostile server) must not
   * delete entries that were never sent.
   */
  private highestSentSeq = 0;
  private batchCap: number = LIMITS.logs_push_max_entries; // lowered by -32008, doubled back after BATCH_RECOVER_AFTER_ACKS acks
  /** Acked pushes since the batch size was last halved. */
  private acksSinceHalving = 0;
  /** The "slow down" line last logged, and the refusals since. */
  private slowWarned: { at: number; since: number } | null = null;
  private pausedUntil = 0;
  private flushDue = false;
  /** last_error set by a -32007 (the server could not store a batch): cleared by the next ack. */
  private storeError: string | null = null;
  /** The -32007 warning last logged, and the refusals since (logged again on a new reason, or after a minute). */
  private storeWarned: { reason: string; at: number; since: number } | null = null;
  /** The "cannot read the buffer" line last logged, the failed reads since, and the last_error it set. */
  private readWarned: { message: string; at: number; since: number; stored: string } | null = null;
  private avgEntryBytes = 250;
  private scheduled = false;
  private flushTimer: NodeJS.Timeout | null = null;
  private pumpTimer: NodeJS.Timeout | null = null;
  private idleWaiter: (() => void) | null = null;
  private readonly now: () => number;

  constructor(private readonly deps: PushPumpDeps) {
    this.rate = deps.rate ?? new SendRate();
    this.now = deps.now ?? Date.now;
    this.nextSendSeq = deps.buffer.ackedSeq + 1;
  }

  /** capabilities.max_batch_entries of the hello. */
  capabilityBatch(): number {
    return Math.min(this.deps.options.maxBatchEntries ?? LIMITS.logs_push_max_entries, 65535);
  }

  /** min(config, capabilities, 1000, the -32008 cap). */
  batchSize(): number {
    return Math.max(1, Math.min(this.deps.config().max_batch_entries, this.capabilityBatch(), LIMITS.logs_push_max_entries, this.batchCap));
  }

  /** The send-rate cap in entries/s, or null when unthrottled. */
  rateCap(): number | null {
    return this.rate.cap();
  }

  /**
   * A hello was accepted with `acceptedSeq`: sending resumes after what the server has.
   * Returns the first seq to send.
   */
  resume(acceptedSeq: number): number {
    const acked = this.deps.buffer.ackedSeq;
    this.nextSendSeq = Math.max(acked, acceptedSeq) + 1;
    this.highestSentSeq = Math.max(this.highestSentSeq, acked, acceptedSeq);
    this.pausedUntil = 0;
    this.flushDue = false;
    // A new session (perhaps another server): the batch size its -32008s set starts over.
    this.batchCap = LIMITS.logs_push_max_entries;
    this.acksSinceHalving = 0;
    return this.nextSendSeq;
  }

  /** Wakes the pump on the next turn of the event loop (coalesced). */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** Resolves when `conn` has no push in flight, the session ends, or after `timeoutMs`. */
  waitIdle(conn: PushConn, timeoutMs: number): Promise<void> {
    if (conn.inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        this.idleWaiter = null;
        resolve();
      };
      const t = setTimeout(done, timeoutMs);
      this.idleWaiter = done;
    });
  }

  /** The session ended: timers stop, a waitIdle resolves. */
  sessionEnded(): void {
    this.stop();
    this.idleWaiter?.();
  }

  /** Stops the flush and pause timers. */
  stop(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    this.flushTimer = null;
    this.pumpTimer = null;
  }

  private armPumpTimer(ms: number): void {
    if (this.pumpTimer) return;
    this.pumpTimer = setTimeout(() => {
      this.pumpTimer = null;
      this.pump();
    }, ms);
  }

  private armFlushTimer(): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flushDue = true;
      this.pump();
    }, this.deps.config().flush_interval_ms);
  }

  private pump(): void {
    const conn = this.deps.connection();
    if (conn === null || !this.deps.canSend()) return;
    const buffer = this.deps.buffer;
    const draining = this.deps.draining();
    // After a backpressure/quota/overflow error, one push at a time until the rate has
    // recovered: a later batch accepted while an earlier one was refused would move the
    // server's accepted_seq past the refused one (DESIGN 5.4 accepts gaps).
    const window = this.rate.cap() !== null || this.pausedUntil > this.now() ? 1 : (this.deps.options.window ?? 4);
    const maxBytes = this.deps.options.batchMaxBytes ?? DEFAULT_BATCH_MAX_BYTES;
    while (conn.inFlight < window) {
      const wait = this.pausedUntil - this.now();
      if (wait > 0) return this.armPumpTimer(wait);
      const size = this.batchSize();
      // up to syncedSeq: an entry is sent once it is on disk (next_seq - 1 when appends fsync themselves)
      const sendable = buffer.syncedSeq + 1;
      const unsent = sendable - this.nextSendSeq;
      if (unsent <= 0) {
        this.flushDue = false;
        return;
      }
      const eager = this.flushDue || buffer.pressure || draining;
      const looksFull = unsent >= size || unsent * this.avgEntryBytes >= maxBytes;
      if (!looksFull && !eager) return this.armFlushTimer();
      const rateWait = this.rate.delayFor(Math.min(unsent, size));
      if (rateWait > 0) return this.armPumpTimer(rateWait);
      let batch: BufferBatch | null;
      try {
        batch = buffer.readBatch(this.nextSendSeq, size, maxBytes);
      } catch (err) {
        // Retried every second; said once a minute per error (a disk that keeps failing a read
        // wrote a line a second), with the failures between counted.
        const message = (err as Error).message;
        const stored = this.deps.setError(message);
        const w = this.readWarned;
        const now = this.now();
        if (w === null || w.message !== message || now - w.at >= READ_ERROR_LOG_EVERY_MS) {
          this.deps.log.error({ err: message, ...(w !== null ? { failed_since_last_line: w.since } : {}) }, 'cannot read the buffer; retrying every second');
          this.readWarned = { message, at: now, since: 0, stored };
        } else {
          w.since++;
          w.stored = stored;
        }
        return this.armPumpTimer(1000);
      }
      if (this.readWarned !== null) {
        this.deps.log.info({ failed_since_last_line: this.readWarned.since }, 'the buffer reads again');
        this.deps.clearErrorIf(this.readWarned.stored);
        this.readWarned = null;
      }
      if (batch === null) {
        this.nextSendSeq = sendable;
        return;
      }
      const n = batch.entries.length;
      this.avgEntryBytes = Math.max(1, Math.round(batch.bytes / n));
      const full = n >= size || batch.seqEnd < sendable - 1;
      if (!full && !eager) return this.armFlushTimer();
      if (!full) this.flushDue = false;
      this.send(conn, batch);
    }
  }

  private send(conn: PushConn, batch: BufferBatch): void {
    conn.inFlight++;
    this.nextSendSeq = batch.seqEnd + 1;
    this.highestSentSeq = Math.max(this.highestSentSeq, batch.seqEnd);
    this.rate.record(batch.entries.length);
    // The buffer holds each entry as its final JSON text, validated when it was ingested:
    // splice it into the frame instead of parsing, re-validating and re-serializing it.
    conn.peer.requestSerialized('logs.push', logsPushParamsJson(batch)).then(
      (res) => this.onAck(conn, batch, res),
      (err: unknown) => this.onPushError(conn, batch, err),
    );
  }

  private onAck(conn: PushConn, batch: BufferBatch, res: LogsPushResult): void {
    conn.inFlight--;
    this.deps.markDirty();
    if (this.batchCap < LIMITS.logs_push_max_entries && ++this.acksSinceHalving >= BATCH_RECOVER_AFTER_ACKS) {
      // -32008 halvings are not for good (a batch of 1 drained 20 entries/s while 100/s came in):
      // the size doubles back while pushes are taken, and halves again if refused again.
      this.batchCap = Math.min(LIMITS.logs_push_max_entries, this.batchCap * 2);
      this.acksSinceHalving = 0;
    }
    if (this.storeError !== null) {
      this.deps.clearErrorIf(this.storeError);
      this.storeError = null;
      if (this.storeWarned !== null && this.storeWarned.since > 0) this.deps.log.info({ refused_since_last_line: this.storeWarned.since }, 'the server stores logs.push again');
      this.storeWarned = null;
    }
    const buffer = this.deps.buffer;
    let upTo = res.up_to_seq;
    if (upTo > this.highestSentSeq) {
      this.deps.log.warn({ up_to_seq: upTo, highest_sent_seq: this.highestSentSeq }, 'server acknowledged entries that were never sent; ignoring the excess');
      upTo = this.highestSentSeq;
    }
    if (upTo > buffer.ackedSeq) {
      try {
        const r = buffer.ack(upTo);
        if (r.jumped) this.deps.log.warn({ up_to_seq: res.up_to_seq, next_seq: r.nextSeq }, 'ack beyond next_seq: next_seq jumped');
        this.deps.acked(r.ackedSeq);
      } catch (err) {
        // rows stay and are resent later; the server drops the duplicates
        this.deps.log.error({ err: (err as Error).message }, 'cannot record the ack in the buffer');
        this.deps.storageError(err);
      }
    }
    if (res.up_to_seq < batch.seqEnd && conn === this.deps.connection()) {
      this.deps.log.debug({ up_to_seq: res.up_to_seq, seq_end: batch.seqEnd }, 'partial ack');
    }
    if (conn.inFlight === 0) this.idleWaiter?.();
    if (conn !== this.deps.connection()) return;
    if (this.deps.afterAck()) return;
    this.schedule();
  }

  private onPushError(conn: PushConn, batch: BufferBatch, err: unknown): void {
    conn.inFlight--;
    if (conn.inFlight === 0) this.idleWaiter?.();
    if (conn !== this.deps.connection()) return;
    // Resend the batch (later entries may be resent too; the server drops duplicates).
    this.nextSendSeq = Math.min(this.nextSendSeq, batch.seqStart);
    const code = err instanceof RpcError ? err.code : err instanceof PeerError ? err.code : 'unknown';
    this.deps.events.emit('push_error', { code, seq_start: batch.seqStart, seq_end: batch.seqEnd });
    const log = this.deps.log;
    if (err instanceof RpcError) {
      const retry = (err.data as Partial<RetryAfterData> | undefined)?.retry_after_ms;
      const advised = typeof retry === 'number' && retry >= 0 ? retry : LIMITS.retry_after_default_ms;
      // A server's advice is followed up to RETRY_AFTER_MAX_MS (DECISIONS F11): a longer one
      // (a bug, a hostile peer: retry_after_ms has no maximum) would stop the agent for days.
      const pause = Math.max(MIN_REFUSAL_PAUSE_MS, Math.min(advised, RETRY_AFTER_MAX_MS));
      const capped = advised > pause ? { advised_retry_after_ms: advised } : {};
      switch (err.code) {
        case ErrorCode.Backpressure:
        case ErrorCode.QuotaExceeded:
          // A push refused only because an earlier one was (DECISIONS B6a) says nothing new
          // about the server's load: pause, but do not halve the rate again.
          if (typeof (err.data as { resend_from_seq?: unknown } | undefined)?.resend_from_seq !== 'number') this.rate.halve();
          this.pauseFor(pause);
          {
            const w = this.slowWarned;
            if (w === null || this.now() - w.at >= SLOW_DOWN_LOG_EVERY_MS) {
              log.warn({ code: err.code, retry_after_ms: pause, ...capped, rate_cap: Math.round(this.rate.cap() ?? 0), ...(w !== null && w.since > 0 ? { refused_since_last_line: w.since } : {}) }, 'server asked to slow down');
              this.slowWarned = { at: this.now(), since: 0 };
            } else w.since++;
          }
          break;
        case ErrorCode.PayloadTooLarge:
          this.batchCap = Math.max(1, Math.floor(this.batchSize() / 2));
          this.acksSinceHalving = 0;
          this.pauseFor(MIN_REFUSAL_PAUSE_MS);
          log.warn({ batch_entries: this.batchCap }, 'payload too large: halving the batch size');
          break;
        case ErrorCode.BufferOverflow: {
          this.pauseFor(pause);
          // The server's reason (its disk is full, its writer restarted, …) is what an operator
          // looking at this agent needs; status shows it until an ack comes (DECISIONS H12).
          const reason = (err.data as { reason?: unknown } | undefined)?.reason;
          const why = typeof reason === 'string' && reason !== '' ? reason.slice(0, 300) : err.message;
          this.storeError = this.deps.setError(`the server could not store logs.push (-32007: ${why}); the entries are kept and resent`);
          // Every push in flight is refused, again at each retry: one line per reason and minute,
          // not four a second for as long as the server's database is out.
          const w = this.storeWarned;
          if (w === null || w.reason !== why || this.now() - w.at >= 60_000) {
            log.warn({ retry_after_ms: pause, ...capped, reason: why, ...(w !== null && w.since > 0 ? { refused_since_last_line: w.since } : {}) }, 'server could not store the batch; keeping it and resending after a pause');
            this.storeWarned = { reason: why, at: this.now(), since: 0 };
          } else w.since++;
          break;
        }
        case ErrorCode.UnknownHost:
          log.warn(this.deps.setError('server no longer knows this host (-32004 UnknownHost); reconnecting'));
          this.deps.closeConnection(conn);
          return;
        default:
          this.pauseFor(LIMITS.retry_after_default_ms);
          this.deps.setError(`logs.push rejected (${err.code} ${err.message})`);
          log.error({ code: err.code, data: err.data }, 'logs.push rejected; retrying after a pause');
      }
    } else if (err instanceof PeerError && err.code === 'closed') {
      return; // the close handler takes over
    } else if (err instanceof PeerError && err.code === 'timeout') {
      log.warn('logs.push timed out; treating the connection as dead');
      conn.ws.terminate();
      return;
    } else {
      this.pauseFor(LIMITS.retry_after_default_ms);
      log.error({ err: (err as Error)?.message }, 'logs.push failed locally; retrying after a pause');
    }
    this.schedule();
  }

  private pauseFor(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + ms);
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    this.pumpTimer = null;
  }
}
