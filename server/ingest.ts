// Ingest: logs.push from frame to ack. The whole hot path is `SessionIngest.push` plus
// `SessionIngest.commitPending` below; everything else here is bookkeeping.
import {
  BackpressureError,
  BufferOverflowError,
  InvalidParamsError,
  LIMITS,
  PayloadTooLargeError,
  QuotaExceededError,
  UnknownHostError as UnknownHostRpcError,
  type LogBatchEntry,
  type LogsPushParams,
  type LogsPushResult,
  type MetricSample,
  type RetryAfterData,
} from '@cortex/agent-protocol';
import { metadataProblem, storableText } from '@cortex/agent-protocol/runtime';
import type { Logger } from './log.js';
import type { ServerMetrics } from './metrics.js';
import { SessionSupersededError, UnknownHostError, WriterStoppedError, type IngestLogEntry, type IngestMetricSample, type Storage } from './db/storage.js';
import { DatabaseOutage, OUTAGE_WHY, outageKind } from './db/outage.js';
import { utcTimestamp } from './timestamps.js';

/** Compiles only when T is never: here, when no field of the contract is left without a column. */
type NoneLeft<T extends never> = T;
/**
 * A field the contract adds to LogBatchEntry or MetricSample is valid on the wire as soon as
 * codegen runs, but the server stores only the fields it has columns for: these two lines stop
 * the build, naming the field ("Type '"trace_id"' does not satisfy the constraint 'never'"),
 * until it is stored — a column in a migration for both dialects, the field in IngestLogEntry
 * (or IngestMetricSample), packed rows and both ingest statements, the admin queries, and for a
 * free-text field makeStorable below. test/server/ingest-wire.test.ts then checks the round trip.
 */
export type EveryLogEntryFieldStored = NoneLeft<Exclude<keyof LogBatchEntry, keyof IngestLogEntry>>;
export type EveryMetricSampleFieldStored = NoneLeft<Exclude<keyof MetricSample, keyof IngestMetricSample>>;

export interface IngestOptions {
  /** The server's cap on entries per logs.push (more, up to 1000, is -32008). */
  maxBatchEntries: number;
  /** Capacity of the ingest queue in entries (accepted, not yet committed, all sessions). */
  queueCapacityEntries: number;
  /** Per-agent leaky bucket rate (entries/s); burst capacity is one second of it. One bucket per host, whatever its sessions (AgentBuckets). */
  agentRatePerSec: number;
  /** K: pending entries that trigger a commit and ack (default LIMITS.ack_flush_entries). */
  flushEntries?: number;
  /** T: longest a pending push waits for its commit (default LIMITS.ack_flush_ms). */
  flushMs?: number;
  /** Counters for /metrics (entries stored, ack lag, gaps). */
  metrics?: ServerMetrics;
  /** Where a database out of reach is told (default: one of this Ingest's own). */
  outage?: DatabaseOutage;
  /** The database's time (received_at is stamped in it: DECISIONS G31). Default: this machine's clock. */
  now?: () => Date;
}

/** The longest pause a -32020 advises (a queue that full drains slower than this only under a stall). */
const BACKPRESSURE_MAX_RETRY_MS = 5_000;

/** Shared by all sessions of one server: the bounded queue and the storage. */
export class Ingest {
  /** Entries accepted by some session and not yet committed (or failed). */
  queuedEntries = 0;
  /** Set when nothing more may be committed (the database file is gone, H20): every commit fails with it. */
  private halted: Error | undefined;
  /** Commits running now, and who waits for them to be over. */
  private inFlight = 0;
  /** When each running commit started (performance.now()), in start order: the first is the oldest. */
  private readonly running = new Set<{ at: number }>();
  private idleWaiters: (() => void)[] = [];
  readonly flushEntries: number;
  readonly flushMs: number;
  readonly outage: DatabaseOutage;
  /** Entries that left the queue (committed or failed), and the rate they leave at (entries/s, smoothed; 0 until measured). */
  private drainedEntries = 0;
  private drainSampleAt = performance.now();
  private drainSampleEntries = 0;
  private drainRate = 0;
  /** The per-agent leaky buckets (DESIGN 5.6), by host: a reconnect does not refill its host's. */
  readonly buckets: AgentBuckets;

  constructor(
    readonly storage: Storage,
    readonly logger: Logger,
    readonly options: IngestOptions,
  ) {
    this.flushEntries = options.flushEntries ?? LIMITS.ack_flush_entries;
    this.flushMs = options.flushMs ?? LIMITS.ack_flush_ms;
    this.outage = options.outage ?? new DatabaseOutage({ logger });
    this.buckets = new AgentBuckets(options.agentRatePerSec);
  }

  /** From now on every commit fails with `error` (answered as its outage kind says); resolves once the commits running now are over. */
  halt(error: Error): Promise<void> {
    this.halted = error;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Runs one commit, unless halted; counted so that halt() can wait for it. */
  async commit<T>(run: () => Promise<T>): Promise<T> {
    if (this.halted !== undefined) throw this.halted;
    this.inFlight++;
    const mark = { at: performance.now() };
    this.running.add(mark);
    try {
      return await run();
    } finally {
      this.running.delete(mark);
      if (--this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /** How long the oldest commit running now has been waiting for the database (ms; 0 when none runs), and how many run. */
  commitsWaiting(now = performance.now()): { oldestMs: number; count: number } {
    const oldest = this.running.values().next();
    return { oldestMs: oldest.done === true ? 0 : Math.max(0, now - oldest.value.at), count: this.running.size };
  }

  /** `n` entries left the queue (their commit returned or failed). */
  drained(n: number): void {
    this.queuedEntries -= n;
    this.drainedEntries += n;
    // The rate over windows of 1–5 s; a longer one was mostly idle and says nothing of what the writer can do.
    const now = performance.now();
    const dt = now - this.drainSampleAt;
    if (dt < 1000) return;
    if (dt <= 5000) {
      const rate = ((this.drainedEntries - this.drainSampleEntries) * 1000) / dt;
      this.drainRate = this.drainRate === 0 ? rate : (this.drainRate + rate) / 2;
    }
    this.drainSampleAt = now;
    this.drainSampleEntries = this.drainedEntries;
  }

  /**
   * The retry_after_ms of a -32020 (the queue full): about the time the queue takes to drain
   * at the rate it drained lately, at least T and at most 5 s, spread over half to one and a
   * half times that so the refused agents do not all come back at once (DECISIONS G17). A
   * fleet replaying its buffers after a server restart was refused every 200 ms: the server
   * spent its time parsing pushes it could only refuse.
   */
  backpressureRetryMs(): number {
    const drainMs = this.drainRate > 0 ? (this.queuedEntries / this.drainRate) * 1000 : this.flushMs;
    const base = Math.min(BACKPRESSURE_MAX_RETRY_MS, Math.max(this.flushMs, drainMs));
    return Math.round(base * (0.5 + Math.random()));
  }

  /**
   * With `session_id`, every commit of this session applies only while the host row still
   * names that session (a newer hello anywhere on the database replaces it).
   */
  session(host_id: string, session_id?: string): SessionIngest {
    return new SessionIngest(this, host_id, session_id);
  }
}

/** A leaky bucket: `rate` entries/s drain out, at most `capacity` may be in it. */
export class LeakyBucket {
  private level = 0;
  private last: number;

  constructor(
    private readonly rate: number,
    private readonly capacity: number,
    now = performance.now(),
  ) {
    this.last = now;
  }

  /** Adds n; returns 0 when they fit, else the ms to wait before they would (and adds nothing). */
  take(n: number, now = performance.now()): number {
    const wait = this.wait(n, now);
    if (wait === 0) this.level += n;
    return wait;
  }

  /** 0 when n more fit now, else the ms to wait before they would; adds nothing (see `add`). */
  wait(n: number, now = performance.now()): number {
    this.level = Math.max(0, this.level - ((now - this.last) * this.rate) / 1000);
    this.last = now;
    if (this.level + n <= this.capacity) return 0;
    return Math.max(1, Math.ceil(((this.level + n - this.capacity) * 1000) / this.rate));
  }

  /** Adds n that `wait` found room for. */
  add(n: number): void {
    this.level += n;
  }

  /** True once everything in it has drained out: it is then the same as a new bucket. */
  empty(now = performance.now()): boolean {
    return this.level - ((now - this.last) * this.rate) / 1000 <= 0;
  }
}

/** How often AgentBuckets drops the buckets that drained (ms). */
const BUCKET_SWEEP_MS = 10_000;

/**
 * One LeakyBucket per host for the whole server process (DESIGN 5.6 "per-agent"): a
 * session's bucket used to be its own, so an agent that reconnected started with a full
 * burst again — 10 reconnects a second pushed 10 times the rate (DECISIONS H66). A bucket
 * that drained is the same as none: they are dropped every BUCKET_SWEEP_MS, so the map
 * holds the hosts that pushed in the last seconds, not every host ever seen.
 */
export class AgentBuckets {
  private readonly buckets = new Map<string, LeakyBucket>();
  private lastSweep: number;

  constructor(
    private readonly rate: number,
    now = performance.now(),
  ) {
    this.lastSweep = now;
  }

  /** The host's bucket (a new, empty one when it has none). */
  get(host_id: string, now = performance.now()): LeakyBucket {
    if (now - this.lastSweep >= BUCKET_SWEEP_MS) this.sweep(now);
    let bucket = this.buckets.get(host_id);
    if (bucket === undefined) {
      bucket = new LeakyBucket(this.rate, this.rate, now);
      this.buckets.set(host_id, bucket);
    }
    return bucket;
  }

  /** Hosts with a bucket now (drained ones included until the next sweep). */
  get size(): number {
    return this.buckets.size;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [host_id, bucket] of this.buckets) if (bucket.empty(now)) this.buckets.delete(host_id);
  }
}

/** A push of a group being committed: its first seq and count instead of its entries (see commitPending). */
type CommittingPush = Omit<PendingPush, 'entries' | 'chars'> & { first: number | undefined; n: number };

/**
 * Pending message text (UTF-16 code units) that commits at once, below K entries (DECISIONS H16).
 * K = 100 entries is ~25 KB of ordinary lines; entries of 64 KiB (a long line's parts) reach
 * K only after ~6 MiB, more than an agent keeps in flight (4 pushes of 128 KiB), so each push
 * waited T = 200 ms: 1.4 MB/s. The protocol lets the server answer sooner than K or T.
 */
export const ACK_FLUSH_CHARS = 256 * 1024;

interface PendingPush {
  entries: readonly IngestLogEntry[];
  /** Summed message lengths (ACK_FLUSH_CHARS). */
  chars: number;
  /** performance.now() when the push arrived (ack lag). */
  at: number;
  resolve(result: LogsPushResult): void;
  reject(error: Error): void;
}

/** One authenticated session's ingest state: the pending (not yet committed) pushes. */
export class SessionIngest {
  private pending: PendingPush[] = [];
  private pendingEntries = 0;
  private pendingChars = 0;
  /** The T timer: armed while pushes are pending and no commit of them is asked for (see requestFlush). */
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** While commits run: another round is asked for (K or T reached meanwhile). False whenever none runs. */
  private flushWanted = false;
  private committing: Promise<void> | undefined;
  /** Set when the host row disappeared: every later push gets -32004 at once. */
  private hostGone = false;
  /**
   * The first seq of the earliest push this session refused (any error), until the agent
   * resends from there. While it is set, a push starting beyond it is refused too: an agent
   * keeps several pushes in flight, and committing a later one would move accepted_seq past
   * the refused entries, so their resend would be dropped as duplicates — silent loss.
   */
  private refusedFrom: number | undefined;
  /**
   * The highest seq this session acked. A commit whose previous accepted_seq is below it
   * found the database holding less than it acked before: restored from an older copy
   * under the running server (DECISIONS G28), not entries the agent evicted.
   */
  private ackedHigh = 0;

  constructor(
    private readonly ingest: Ingest,
    readonly host_id: string,
    readonly session_id?: string,
  ) {}

  /**
   * logs.push — the ingest hot path (seed 4.4 and 7, DESIGN.md 5.4–5.6).
   *
   * Before this runs, the generated peer has parsed the frame and checked it with the
   * generated LogsPushParams validator (schema failure, > 1000 entries → -32602). The
   * peer calls this synchronously, in frame order, so checks and queueing happen in the
   * order the agent sent; the returned promise resolves (= the ack is sent) later:
   *
   *   1. contiguity: entries[i].seq == seq_start + i          else -32602
   *   2. server cap: entries.length <= max_batch_entries      else -32008
   *   3. per-agent leaky bucket (one per host)                 else -32030 {retry_after_ms}
   *   4. bounded ingest queue (all sessions)                   else -32020 {retry_after_ms}
   *      (the bucket is charged only for a push that passes both)
   *   5. join the session's pending group; commit it when K entries are pending or T ms
   *      after the oldest pending push (commitPending).
   *
   * commitPending: one IngestWriter.commitBatch transaction stores the rows with
   * seq > accepted_seq (older ones are dropped, still acked) and advances accepted_seq and
   * last_seen; only after it returns are the pushes answered with
   * {up_to_seq: accepted_seq after the commit, received_at}. A missing host row → -32004;
   * any other failure → -32007 (the transaction stored nothing).
   */
  push(params: LogsPushParams): Promise<LogsPushResult> {
    const { seq_start, entries } = params;
    // An invalid push is answered as such (-32602) whatever came before it; it changes nothing.
    // Above max_seq (2^53 - 1) integer arithmetic on seqs is no longer exact (DECISIONS H1).
    // (Compared one seq at a time: seq_start + n itself may already be rounded.)
    if (seq_start > LIMITS.max_seq) throw invalid('/seq_start', beyondMaxSeq);
    let replaced = 0;
    let chars = 0;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i] as IngestLogEntry;
      if (e.seq > LIMITS.max_seq) throw invalid(`/entries/${i}/seq`, beyondMaxSeq);
      if (e.seq !== seq_start + i) {
        throw invalid(`/entries/${i}/seq`, `must be seq_start + ${i} = ${seq_start + i} (entries are contiguous from seq_start)`);
      }
      // A batch that can never be stored is refused for good (-32602), not as -32007 (DECISIONS H2).
      if (e.metadata != null) {
        const problem = metadataProblem(e.metadata, METADATA_LIMITS);
        if (problem !== undefined) throw invalid(`/entries/${i}/metadata`, problem.message);
      }
      replaced += makeStorable(e);
      e.ts = utcTimestamp(e.ts); // as the searches and retention compare it (DECISIONS H38)
      chars += e.message.length;
    }
    if (replaced > 0) {
      this.ingest.options.metrics?.charsReplaced.inc(replaced);
      this.ingest.logger.warn({ host_id: this.host_id, seq_start, chars: replaced }, 'lone surrogates / NUL in log text replaced by U+FFFD (DECISIONS H3)');
    }
    if (this.refusedFrom !== undefined) {
      if (seq_start > this.refusedFrom) {
        throw new BackpressureError({
          retry_after_ms: this.ingest.flushMs,
          reason: `an earlier push of this session (from seq ${this.refusedFrom}) was refused; resend from seq ${this.refusedFrom}`,
          resend_from_seq: this.refusedFrom,
        } as RetryAfterData);
      }
      this.refusedFrom = undefined; // the agent is resending from the refused point
    }
    try {
      return this.accept(params, chars);
    } catch (error) {
      this.refusedFrom = seq_start;
      throw error;
    }
  }

  /** `chars`: the entries' summed message lengths (push counts them in its pass over the entries). */
  private accept(params: LogsPushParams, chars: number): Promise<LogsPushResult> {
    const { entries } = params;
    const n = entries.length;
    if (n > this.ingest.options.maxBatchEntries) {
      throw new PayloadTooLargeError({ max_entries: this.ingest.options.maxBatchEntries, received: n });
    }
    if (this.hostGone) throw new UnknownHostRpcError({ host_id: this.host_id });
    // the host's bucket, whichever of its sessions pushes (looked up per push: a drained one may have been dropped)
    const bucket = this.ingest.buckets.get(this.host_id);
    const wait = bucket.wait(n);
    if (wait > 0) throw new QuotaExceededError({ retry_after_ms: wait });
    if (this.ingest.queuedEntries + n > this.ingest.options.queueCapacityEntries) {
      throw new BackpressureError({ retry_after_ms: this.ingest.backpressureRetryMs() });
    }
    // Charged only now: a push the queue refused is sent again and would count twice (DECISIONS H75).
    bucket.add(n);
    this.ingest.queuedEntries += n;
    return new Promise<LogsPushResult>((resolve, reject) => {
      this.pending.push({ entries: entries as readonly IngestLogEntry[], chars, at: performance.now(), resolve, reject });
      this.pendingEntries += n;
      this.pendingChars += chars;
      if (this.pendingEntries >= this.ingest.flushEntries || this.pendingChars >= ACK_FLUSH_CHARS) this.requestFlush();
      else if (this.timer === undefined && !this.flushWanted) {
        this.timer = setTimeout(() => this.requestFlush(), this.ingest.flushMs);
      }
    });
  }

  /**
   * Commit what is pending now (K or 256 KiB reached, T passed, the session closing). The
   * state it leaves once the commits are over, whether they succeeded or failed (DECISIONS H72):
   * `flushWanted` false, and the T timer armed exactly when pushes are pending — so the next
   * push below K is committed within T. A failed commit used to leave `flushWanted` true (the
   * timer had fired while it waited) or a timer armed for the pushes it refused (which then
   * fired on an empty queue and set it): accept() never armed T again, and a quiet agent's
   * resend waited for K entries that never came — 30 s later it took the session for dead.
   */
  private requestFlush(): void {
    this.clearTimer();
    // Nothing pending: the pushes this was for were answered already (refused with a failed commit).
    if (this.pending.length === 0) return;
    this.flushWanted = true;
    this.committing ??= this.commitPending().finally(() => {
      this.committing = undefined;
      this.flushWanted = false;
      // Pushes that arrived during the last commit and are still below K wait for T (the timer
      // one of them armed, else one armed now); none pending: no timer.
      if (this.pending.length === 0) this.clearTimer();
      else this.timer ??= setTimeout(() => this.requestFlush(), this.ingest.flushMs);
    });
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async commitPending(): Promise<void> {
    while (this.flushWanted && this.pending.length > 0) {
      this.flushWanted = false;
      const pushes = this.pending;
      const count = this.pendingEntries;
      this.pending = [];
      this.pendingEntries = 0;
      this.pendingChars = 0;
      // What the answers and the metrics need once the commit is done. The entries themselves
      // are not kept past the commit's start (the writer thread gets them packed), so they die
      // young instead of being copied by the scavenges that run while the commit waits.
      const group: CommittingPush[] = pushes.map((p) => ({ first: p.entries[0]?.seq, n: p.entries.length, at: p.at, resolve: p.resolve, reject: p.reject }));
      const received_at = (this.ingest.options.now?.() ?? new Date()).toISOString();
      try {
        // run() is called at once, inside commit(): the entries are handed over before pushes is emptied.
        const committed = this.ingest.commit(() =>
          this.ingest.storage.ingest.commitBatch(this.host_id, pushes.length === 1 ? (pushes[0] as PendingPush).entries : pushes.flatMap((p) => p.entries), received_at, this.session_id),
        );
        pushes.length = 0;
        const { accepted_seq, previous_accepted_seq, inserted } = await committed;
        const ack: LogsPushResult = { up_to_seq: accepted_seq, received_at };
        for (const p of group) p.resolve(ack);
        const ackedBefore = this.ackedHigh;
        if (accepted_seq > ackedBefore) this.ackedHigh = accepted_seq;
        this.ingest.outage.succeeded();
        const m = this.ingest.options.metrics;
        if (m !== undefined) {
          const now = performance.now();
          m.logsPushed.inc(inserted);
          let expected = previous_accepted_seq + 1;
          if (previous_accepted_seq < ackedBefore) {
            // This session acked up to ackedBefore; the database no longer holds it.
            const lost = ackedBefore - previous_accepted_seq;
            m.gaps.labels('lost').inc();
            m.gapEntries.labels('lost').inc(lost);
            this.ingest.logger.warn(
              { host_id: this.host_id, from: expected, to: ackedBefore, lost },
              'the database holds less than this server acked (restored from an older copy, or rows deleted by hand?): range lost',
            );
            expected = ackedBefore + 1;
          }
          for (const p of group) {
            m.ackLag.observe((now - p.at) / 1000);
            const first = p.first;
            if (first === undefined) continue;
            if (first > expected) {
              // seq_start beyond accepted_seq + 1: the agent evicted entries (DESIGN 5.4).
              m.gaps.labels('evicted').inc();
              m.gapEntries.labels('evicted').inc(first - expected);
              this.ingest.logger.warn({ host_id: this.host_id, from: expected, to: first - 1 }, 'sequence gap: entries missing (evicted by the agent?)');
            }
            expected = Math.max(expected, first + p.n);
          }
        }
      } catch (error) {
        let rpc: Error;
        if (error instanceof UnknownHostError) {
          this.hostGone = true;
          rpc = new UnknownHostRpcError({ host_id: this.host_id });
          this.ingest.logger.warn({ host_id: this.host_id }, 'logs.push for a host row that no longer exists (-32004)');
        } else if (error instanceof SessionSupersededError) {
          rpc = new BufferOverflowError({ retry_after_ms: 1000, reason: 'this session was replaced by a newer one (a later hello of this host); nothing of the batch was stored' });
          this.ingest.logger.info({ host_id: this.host_id, session_id: this.session_id, entries: count }, 'logs.push of a superseded session refused; nothing stored');
        } else if (error instanceof WriterStoppedError) {
          // Maybe committed, maybe not: the resend tells (stored seqs are dropped and acked).
          rpc = new BufferOverflowError({ retry_after_ms: 1000, reason: 'the ingest writer stopped before confirming the commit; resend the batch (entries it did store are acknowledged, not stored twice)' });
          this.ingest.options.metrics?.ingestFailures.labels('writer_stopped').inc();
          this.ingest.logger.error({ host_id: this.host_id, err: errorSummary(error), entries: count }, 'ingest writer thread stopped; commit unconfirmed (-32007), a new writer thread takes over');
        } else if (
          // the database down: logged by the outage, once; any other failure: once a minute,
          // however many pushes of however many hosts get it
          this.ingest.outage.report('ingest', error, (say) =>
            this.ingest.logger.error({ host_id: this.host_id, err: errorSummary(error), entries: count, ...say }, 'ingest commit failed (-32007)'),
          )
        ) {
          const kind = outageKind(error) ?? 'unreachable';
          rpc = new BufferOverflowError({ retry_after_ms: this.ingest.outage.retryAfterMs(), reason: `commit failed: ${OUTAGE_WHY[kind]}; nothing of the batch was stored` });
          this.ingest.options.metrics?.ingestFailures.labels(kind === 'read_only' || kind === 'disk_full' ? kind : 'db_unreachable').inc();
        } else {
          rpc = new BufferOverflowError({ retry_after_ms: 1000, reason: 'commit failed; nothing of the batch was stored' });
          this.ingest.options.metrics?.ingestFailures.labels('error').inc();
        }
        for (const p of group) p.reject(rpc);
        // Nothing after the failed group may be committed before it is resent (see refusedFrom).
        const first = group[0]?.first;
        if (first !== undefined) {
          this.refusedFrom = Math.min(this.refusedFrom ?? first, first);
          const later = this.pending.filter((p) => (p.entries[0]?.seq ?? 0) > first);
          if (later.length > 0) {
            this.pending = this.pending.filter((p) => !later.includes(p));
            for (const p of later) {
              this.pendingEntries -= p.entries.length;
              this.pendingChars -= p.chars;
              this.ingest.queuedEntries -= p.entries.length;
              p.reject(rpc);
            }
          }
        }
      } finally {
        this.ingest.drained(count);
      }
    }
  }

  /** Commits whatever is pending (session closing). Its answers go nowhere if the socket is gone. */
  async drain(): Promise<void> {
    if (this.pending.length > 0) this.requestFlush();
    while (this.committing) await this.committing;
  }
}

const beyondMaxSeq = `is beyond max_seq = ${LIMITS.max_seq} (2^53 - 1); an operator resets the host's sequence with \`cortex-server agent reset-seq\``;
const METADATA_LIMITS = { maxDepth: LIMITS.metadata_max_depth, maxBytes: LIMITS.metadata_max_bytes };

function invalid(path: string, message: string): InvalidParamsError {
  return new InvalidParamsError({ method: 'logs.push', errors: [{ path, message }] });
}

/** Replaces lone surrogates and NUL in the entry's text fields in place; returns how many. */
function makeStorable(e: IngestLogEntry): number {
  let n = 0;
  const m = storableText(e.message);
  if (m.replaced > 0) {
    e.message = m.text;
    n += m.replaced;
  }
  for (const k of ['facility', 'app_name', 'process_id', 'source'] as const) {
    const v = e[k];
    if (typeof v !== 'string') continue;
    const r = storableText(v);
    if (r.replaced > 0) {
      (e as unknown as Record<string, string>)[k] = r.text;
      n += r.replaced;
    }
  }
  return n;
}

function errorSummary(error: unknown): { name: string; message: string; code?: unknown } {
  if (error instanceof Error) return { name: error.name, message: error.message, code: (error as { code?: unknown }).code };
  return { name: 'Error', message: String(error) };
}
