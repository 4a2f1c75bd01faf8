// The reference agent: one instance = one host identity, one state dir, one buffer.
// Many instances can run in one process (tests, benchmarks).
//
// This class only wires the parts and offers the public API (start, ingest, status,
// waitForState, waitForAck, stop, events):
//   session.ts        connect, hello, state transitions (seed 6), backoff, the token file
//   push-pump.ts      batches, window, acks, the -32020 send-rate (send-rate.ts)
//   control.ts        agent.shutdown (drain), probe.request, config.update
//   telemetry.ts      heartbeats and metrics
//   storage-guard.ts  validated durable appends, storage errors and their recovery, healing
//   status-writer.ts  DIR/status.json
//   agent-sources.ts  the log sources (the only use of agent/sources.ts)
//
// Events: state, hello, acked, push_error, heartbeat, metrics, config_applied,
// config_rejected, reconnect_scheduled, evicted, storage_error, storage_recovered,
// buffer_corrupt (only when listened to: `run` restarts to heal), state_dir_read_only (only
// when listened to: `run` stops, waits for the folder to be writable and starts again),
// buffer_gone (buffer.db deleted or replaced: the agent stops, copies its open buffer back,
// and `run` starts again on the copy; see bufferRescued), stopped.

import { EventEmitter } from 'node:events';
import type { AgentConfig, AgentState, MetricSample } from '@cortex/agent-protocol';
import type { Backoff } from './backoff.js';
import type { AppendResult, DurableBuffer } from './buffer/buffer.js';
import type { NewLogEntry } from './buffer/entry.js';
import { markCleanStop } from './buffer/heal.js';
import { createAgentSources, sourceStatusWithPositions, type SourceManager } from './agent-sources.js';
import { BufferRescue, type BufferRescueOutcome } from './buffer-rescue.js';
import { probeRegistryFor, type AgentOptions, type IngestOptions } from './options.js';
import { ConfigStore } from './config-store.js';
import { Control, DEFAULT_CONFIG } from './control.js';
import { createLogger, type Logger } from './log.js';
import type { ProbeRegistry } from './probes/index.js';
import { PushPump } from './push-pump.js';
import type { ServerList } from './server-list.js';
import { Session } from './session.js';
import type { Transition } from './state.js';
import { toStatusFile, type AgentStatus } from './status-file.js';
import { StatusWriter } from './status-writer.js';
import { StorageGuard, openAgentBuffer } from './storage-guard.js';
import { Telemetry } from './telemetry.js';

// The public names of this module before the parts were split out, kept where they were.
export { AGENT_VERSION, authErrorMessage, closeSocket } from './handshake.js';
export { DEFAULT_CONFIG } from './control.js';
export { DEFAULT_PROBE_FILE_TAIL_PATHS, type AgentOptions, type IngestOptions } from './options.js';
export type { AgentStatus } from './status-file.js';
export { heartbeatDelayMs } from './telemetry.js';

export class Agent extends EventEmitter {
  readonly options: AgentOptions;
  readonly log: Logger;
  readonly buffer: DurableBuffer;
  readonly sources: SourceManager;
  readonly probes: ProbeRegistry;
  private readonly session: Session;
  private readonly pump: PushPump;
  private readonly control: Control;
  private readonly telemetry: Telemetry;
  private readonly storage: StorageGuard;
  private readonly statusWriter: StatusWriter;
  private readonly configStore: ConfigStore;
  private readonly ownsBuffer: boolean;
  private readonly rescue: BufferRescue;
  private lastError: string | null = null;
  private stoppedFlag = false;
  /** The status when the agent stopped, taken before its buffer closed (status() answers it after). */
  private finalStatus: AgentStatus | undefined;
  private stopPromise: Promise<void> | null = null;
  private shutdownDone = false;
  private readonly finished: Promise<AgentState>;
  private resolveFinished!: (s: AgentState) => void;

  constructor(options: AgentOptions, buffer?: DurableBuffer) {
    super();
    this.options = options;
    const log = (this.log = (options.logger ?? createLogger()).child({ host_id: options.hostId }));
    const random = options.random ?? Math.random;
    this.ownsBuffer = buffer === undefined;
    // A damaged buffer is moved aside and replaced here, and a lost -wal cannot move next_seq back (DECISIONS H5).
    const opened = buffer !== undefined ? { buffer, recovery: null } : openAgentBuffer(options.stateDir, { syncInBackground: true, ...options.bufferOptions }, log);
    this.buffer = opened.buffer;
    const setError = (message: string): string => {
      this.statusWriter.markDirty();
      return (this.lastError = this.session.scrub(message));
    };
    const clearError = (): void => void (this.lastError = null);
    const base = { log, buffer: this.buffer, events: this, setError, clearError };
    const markDirty = (): void => this.statusWriter.markDirty();
    const writeStatus = (): void => this.statusWriter.write(true);
    this.statusWriter = new StatusWriter(options.stateDir, () => toStatusFile(this.status()), log, { enabled: options.statusFile, intervalMs: options.statusIntervalMs });
    this.sources = createAgentSources(this.buffer, (e, p) => this.storage.append(e, p), options.sourceFactories ?? [], (msg, fields, level) => log[level](fields, msg));
    this.storage = new StorageGuard({
      ...base,
      stateDir: options.stateDir,
      retryMs: options.storageRetryMs,
      recovery: opened.recovery,
      sources: this.sources,
      stopping: () => this.session.stopping,
      stored: () => this.pump.schedule(),
      markDirty,
      writeStatus,
      sendMetrics: (samples) => this.telemetry.sendMetrics(samples),
    });
    this.probes = probeRegistryFor(options, DEFAULT_CONFIG.probe_concurrency, log);
    this.session = new Session({
      ...base,
      // A hello that succeeds ends a connection error, not a storage one: sources paused because
      // the buffer cannot store (the sources run from the start, before any hello: F9) stay said.
      clearError: () => {
        if (!this.sources.paused) clearError();
      },
      options,
      random,
      capabilities: () => ({ supported_probes: this.probes.names(), sources: [...this.sources.kinds], max_batch_entries: this.pump.capabilityBatch(), compression: [] }),
      handlers: (conn) => this.control.handlersFor(conn),
      onPeerEvent: (e) => this.control.onPeerEvent(e),
      hooks: {
        transition: (t) => this.onTransition(t),
        accepted: (acceptedSeq) => {
          this.storage.applyAccepted(acceptedSeq);
          return this.pump.resume(acceptedSeq);
        },
        active: (result) => {
          this.control.applyConfig(result.config, 'hello');
          this.telemetry.start();
          this.pump.schedule();
          this.telemetry.sendMetrics(this.storage.lostRangeMetrics());
        },
        ended: () => {
          this.telemetry.stop();
          this.control.sessionEnded();
          this.pump.sessionEnded();
        },
      },
    });
    this.configStore = new ConfigStore(options.stateDir, log);
    this.control = new Control({
      ...base,
      keep: (config) => void this.configStore.store(config),
      probes: this.probes,
      sources: this.sources,
      session: this.session,
      pump: () => this.pump.schedule(),
      reschedule: (previous, config) => this.telemetry.configChanged(previous, config),
      writeStatus,
    });
    const sending = (): boolean => this.session.current !== null && this.session.sending();
    const config = (): AgentConfig => this.control.config;
    this.telemetry = new Telemetry({ ...base, options, config, random, client: () => (sending() ? this.session.current!.client : null) });
    this.pump = new PushPump({
      ...base,
      options,
      config,
      connection: () => this.session.current,
      canSend: () => sending() && !this.session.stopping,
      draining: () => this.session.draining(),
      acked: (seq) => {
        this.emit('acked', seq);
        this.storage.acked(seq);
      },
      afterAck: () => this.control.afterAck(),
      storageError: (err) => this.storage.storageError(err),
      closeConnection: (conn) => this.session.closeConnection(conn),
      clearErrorIf: (message) => {
        if (this.lastError !== message) return;
        this.lastError = null;
        markDirty();
      },
      markDirty,
    });
    // Entries become sendable once their background fdatasync is done (DECISIONS P16).
    this.buffer.setSyncListener({
      synced: () => this.pump.schedule(),
      failed: (err) => {
        const text = `cannot fsync ${this.buffer.path}-wal (${err.message}): from now on every append waits for its own fsync (synchronous=FULL), and entries are sent once such a commit has succeeded; check the disk (dmesg) and the state folder's filesystem`;
        log.error({ code: (err as NodeJS.ErrnoException).code }, text);
        setError(text);
      },
    });
    // A damaged row set aside by the buffer (DECISIONS P22): reported, and sending goes on after it.
    this.buffer.setDamagedRowListener((report) => {
      this.storage.damagedRow(report);
      this.pump.schedule();
    });
    this.rescue = new BufferRescue({
      stateDir: options.stateDir,
      buffer: this.buffer,
      log,
      restoreToken: () => this.session.restoreTokenFile(),
      restoreConfig: () => this.configStore.restore(),
    });
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve));
  }

  // ---- public API -------------------------------------------------------------

  get state(): AgentState {
    return this.session.state;
  }

  get stopped(): boolean {
    return this.stoppedFlag;
  }

  get transitions(): readonly Transition[] {
    return this.session.machine.history;
  }

  get currentConfig(): AgentConfig {
    return this.control.config;
  }

  get backoff(): Backoff {
    return this.session.backoff;
  }

  get servers(): ServerList {
    return this.session.servers;
  }

  /** Set once the agent stopped because buffer.db was deleted or replaced under it: where its copy went (H25). */
  get bufferRescued(): BufferRescueOutcome | null {
    return this.rescue.outcome;
  }

  /** Resolves when the agent stops for good (stop(), FatalAuth or Revoked), with the state. */
  get done(): Promise<AgentState> {
    return this.finished;
  }

  /** Starts connecting (Disconnected → Connecting). */
  start(): void {
    if (this.session.state !== 'Disconnected' || this.session.stopping) return;
    this.statusWriter.start();
    if (this.ownsBuffer) {
      this.rescue.start(this.options.bufferFileCheckMs ?? 2000, () => {
        this.emit('buffer_gone');
        void this.stop();
      });
    }
    // What the server last put in force is read from now on, whether or not a server answers (F9).
    const stored = this.configStore.read();
    if (stored !== null) this.control.applyConfig(stored, 'stored');
    else this.sources.apply(this.control.config.log_sources);
    this.session.start();
  }

  /**
   * Commits entries to buffer.db (durable before this returns) and wakes the sender.
   * Throws TypeError for an invalid entry (nothing stored) and BufferStorageError when
   * storage fails (nothing stored; sources are paused until storage recovers).
   */
  ingest(entries: readonly NewLogEntry[], options: IngestOptions = {}): AppendResult {
    return this.storage.append(entries, options.position);
  }

  status(): AgentStatus {
    // once stopped, the buffer may be closed: the status taken just before it closed
    if (this.finalStatus !== undefined) return this.finalStatus;
    const s = this.buffer.stats();
    const recovery = this.storage.recovery;
    return {
      state: this.session.state,
      stopped: this.stoppedFlag,
      host_id: this.options.hostId,
      server_url: this.servers.held ?? this.servers.urls[0]!,
      server_urls: [...this.servers.urls],
      proxy: this.session.proxyInUse,
      session_id: this.session.sessionId,
      next_seq: s.nextSeq,
      acked_seq: s.ackedSeq,
      queue_depth: s.queueDepth,
      buffer_bytes: s.bufferBytes,
      push_lag_seq: s.pushLagSeq,
      evicted_entries: s.evictedEntries,
      sources_paused: this.sources.paused,
      sources: sourceStatusWithPositions(this.sources, this.buffer),
      last_error: this.lastError,
      batch_entries: this.pump.batchSize(),
      send_rate_cap: this.pump.rateCap(),
      clock_offset_ms: this.session.clockOffsetMs,
      ...(recovery !== null ? { degraded: recovery } : {}),
    };
  }

  /** Entries per logs.push now: min(config, capabilities, 1000, the -32008 cap). */
  batchSize(): number {
    return this.pump.batchSize();
  }

  hostMetrics(): MetricSample[] {
    return this.telemetry.hostMetrics();
  }

  /** Resolves when the state is `state` (now or later); rejects after timeoutMs. */
  waitForState(state: AgentState, timeoutMs = 10_000): Promise<void> {
    return this.waitFor('state', (t: Transition) => t.to === state, this.session.state === state, timeoutMs, () => `timed out waiting for state ${state} (now ${this.session.state})`);
  }

  /** Resolves once acked_seq >= seq. */
  waitForAck(seq: number, timeoutMs = 10_000): Promise<void> {
    return this.waitFor('acked', (acked: number) => acked >= seq, this.buffer.ackedSeq >= seq, timeoutMs, () => `timed out waiting for ack of ${seq} (acked ${this.buffer.ackedSeq})`);
  }

  /**
   * Clean stop: waits (up to stopFlushMs) for in-flight pushes to be acked, closes
   * with reason final_seq=<acked_seq>, stops timers and sources, closes the buffer.
   */
  stop(): Promise<void> {
    if (this.stopPromise) return this.stopPromise;
    this.session.halt();
    this.stopPromise = (async () => {
      this.control.cancelStaged();
      await this.session.stop((conn) => this.pump.waitIdle(conn, this.options.stopFlushMs ?? 2000));
      await this.shutdownLocal();
    })();
    return this.stopPromise;
  }

  // ---- wiring -----------------------------------------------------------------

  private waitFor<T>(event: string, done: (v: T) => boolean, already: boolean, timeoutMs: number, why: () => string): Promise<void> {
    if (already) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off(event, on);
        reject(new Error(why()));
      }, timeoutMs);
      const on = (v: T): void => {
        if (!done(v)) return;
        clearTimeout(timer);
        this.off(event, on);
        resolve();
      };
      this.on(event, on);
    });
  }

  private onTransition(t: Transition): void {
    this.log.info({ from: t.from, to: t.to, event: t.event }, 'state');
    this.emit('state', t);
    this.statusWriter.write(true);
    if (this.session.machine.terminal) void this.shutdownLocal();
  }

  private async shutdownLocal(): Promise<void> {
    if (this.shutdownDone) return;
    this.shutdownDone = true;
    this.session.halt();
    this.telemetry.stop();
    this.control.stop();
    this.pump.stop();
    this.storage.stop();
    this.statusWriter.stop();
    this.rescue.stop();
    await Promise.resolve(this.sources.close()).catch(() => undefined);
    if (this.state === 'Revoked') {
      await this.session.forgetToken(); // idempotent; makes sure it is gone
      await this.configStore.forget();
    } else await this.configStore.settled();
    // Nothing more is appended now: the buffer's copy holds every entry read (H25).
    if (this.ownsBuffer) await this.rescue.rescue();
    this.stoppedFlag = true;
    await this.statusWriter.flush();
    if (this.ownsBuffer) {
      const next = this.buffer.nextSeq;
      // what status() answers from now on: `run` reads last_error after the stop, and a revoked
      // agent with unsent entries failed there on the closed buffer ("The database connection is
      // not open", E_INTERNAL "this is a bug") instead of saying it was revoked (H44)
      this.finalStatus = this.status();
      this.buffer.close();
      markCleanStop(this.options.stateDir, next);
    }
    this.log.info({ state: this.state }, 'agent stopped');
    this.emit('stopped', this.state);
    this.resolveFinished(this.state);
  }
}
