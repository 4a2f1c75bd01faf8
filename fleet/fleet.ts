// The coordinator: splits the identities over worker processes (or one pool in this
// process), raises each worker's open-file limit as far as the hard limit allows, merges
// their snapshots, and turns them into the report.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { compactTokenFile, type Identity } from './identities.js';
import { Pool, type PoolSettings, type PoolSnapshot } from './pool.js';
import { AGENT_STATES, type AgentInfo, type AgentState } from './sim-agent.js';
import { Counts, LatencyHistogram, Timeline } from './stats.js';
import type { FromWorker, ToWorker } from './worker.js';

const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));
/** File descriptors a worker needs beyond one socket per agent. */
const FD_HEADROOM = 128;
/** Agents one worker takes before another one is worth a core. */
const AGENTS_PER_WORKER = 5000;

export interface FdLimits {
  soft: number | null;
  hard: number | null;
}

/** This process's open-file limit (Linux /proc; null elsewhere). */
export function fdLimits(): FdLimits {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (!m) return { soft: null, hard: null };
    const n = (v: string) => (v === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(v));
    return { soft: n(m[1] as string), hard: n(m[2] as string) };
  } catch {
    return { soft: null, hard: null };
  }
}

/** Worker count for `agents`: enough cores for the load and enough descriptors under the hard limit. */
export function planWorkers(agents: number, limits: FdLimits = fdLimits(), cores = availableParallelism()): number {
  const byLoad = Math.ceil(agents / AGENTS_PER_WORKER);
  const byFds = limits.hard !== null ? Math.ceil(agents / Math.max(1, limits.hard - FD_HEADROOM)) : 1;
  return Math.max(1, byFds, Math.min(byLoad, Math.max(1, cores)));
}

export interface FleetOptions extends PoolSettings {
  identities: readonly Identity[];
  /** Worker processes; 0 runs every agent in this process. */
  workers: number;
}

/** The open-file limit situation, reported with the figures. */
export interface FdReport {
  soft: number | null;
  hard: number | null;
  needed_per_process: number;
  /** The limit each worker runs with (raised with `ulimit -n` in its shell when needed). */
  worker_limit: number | null;
  raised: boolean;
  /** True when the hard limit is below what a worker needs: some connections will fail with EMFILE. */
  insufficient: boolean;
}

/** A worker process that died while the fleet ran (killed, crashed): its agents are gone. */
export interface LostWorker {
  /** 0-based worker number. */
  worker: number;
  pid: number | null;
  /** The signal or exit code. */
  exit: string;
  agents: number;
  /** Its agents' place in the identities: [first, last] index (0-based). */
  indexes: [number, number];
  /** Its agents' host ids (the first 10 when there are more). */
  host_ids: string[];
}

interface Handle {
  /** Set once the worker died outside stop(). */
  readonly lost: LostWorker | null;
  snapshot(): Promise<PoolSnapshot>;
  inspect(host_id: string): Promise<AgentInfo | undefined>;
  setRate(rate: number): Promise<void>;
  resetLoopDelay(): Promise<void>;
  stop(drainMs: number): Promise<PoolSnapshot>;
}

class LocalHandle implements Handle {
  readonly lost = null;
  constructor(private readonly pool: Pool) {}
  async snapshot() {
    return this.pool.snapshot();
  }
  async inspect(host_id: string) {
    return this.pool.inspect(host_id);
  }
  async setRate(rate: number) {
    this.pool.setRate(rate);
  }
  async resetLoopDelay() {
    this.pool.resetLoopDelay();
  }
  stop(drainMs: number) {
    return this.pool.stop(drainMs);
  }
}

/** What a dead worker's agents look like in a snapshot: its last figures, every agent Lost. */
function lostView(last: PoolSnapshot | undefined, agents: number): PoolSnapshot {
  const states = Object.fromEntries(AGENT_STATES.map((s) => [s, 0])) as Record<AgentState, number>;
  states.Lost = agents;
  const zero = { buckets: {}, count: 0, max: 0 };
  const base: PoolSnapshot = last ?? {
    agents,
    states,
    attempt_counters: [],
    entries_pending: 0,
    counters: { entries_generated: 0, entries_sent: 0, entries_acked: 0, entries_lost: 0, pushes: 0, heartbeats: 0, config_updates: 0, rotated_tokens: 0, shutdowns: 0 },
    attempts: {},
    hellos: {},
    lost: {},
    acked: {},
    hello_latency: zero,
    ack_latency: zero,
    reconnect_time: zero,
    errors: {},
    gave_up: {},
    probes: {},
    last_active_at: 0,
    loop_delay_ms: { p99: 0, max: 0 },
    rss_bytes: 0,
    taken_at: Date.now(),
  };
  return { ...base, agents, states, attempt_counters: [], rss_bytes: 0 };
}

class ChildHandle implements Handle {
  private nextId = 1;
  private readonly waiting = new Map<number, (msg: Extract<FromWorker, { type: 'reply' }>) => void>();
  private exited = false;
  private started = false;
  private stopReplied = false;
  private last: PoolSnapshot | undefined;
  lost: LostWorker | null = null;

  private constructor(
    private readonly child: ChildProcess,
    private readonly worker: number,
    private readonly identities: readonly Identity[],
    private readonly indexBase: number,
    private readonly onLost: (w: LostWorker) => void,
  ) {
    child.on('message', (raw: unknown) => {
      const msg = raw as FromWorker;
      if (msg.type !== 'reply') return;
      if (msg.snapshot) this.last = msg.snapshot;
      this.waiting.get(msg.id)?.(msg);
      this.waiting.delete(msg.id);
    });
    child.once('exit', (code, signal) => {
      this.exited = true;
      for (const [, w] of this.waiting) w({ type: 'reply', id: 0 });
      this.waiting.clear();
      // Died outside stop() (or during it, before its last snapshot): its agents are gone,
      // and its figures stop at the last snapshot it sent.
      if (this.started && !this.stopReplied) {
        const n = this.identities.length;
        this.lost = {
          worker: this.worker,
          pid: child.pid ?? null,
          exit: signal ?? `exit code ${code}`,
          agents: n,
          indexes: [this.indexBase, this.indexBase + n - 1],
          host_ids: this.identities.slice(0, 10).map((i) => i.host_id),
        };
        this.onLost(this.lost);
      }
    });
  }

  static start(settings: PoolSettings, identities: Identity[], fdLimit: number | null, worker: number, onLost: (w: LostWorker) => void): Promise<ChildHandle> {
    const args = ['--max-old-space-size=4096', WORKER];
    // Node cannot raise its own descriptor limit: the worker's shell does, then execs node
    // (the IPC descriptor survives the exec).
    const child =
      fdLimit !== null
        ? spawn('/bin/sh', ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, ...args], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
        : spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const handle = new ChildHandle(child, worker, identities, settings.indexBase ?? 0, onLost);
    return new Promise((resolve, reject) => {
      const onMsg = (raw: unknown) => {
        const msg = raw as FromWorker;
        if (msg.type === 'started') {
          child.off('message', onMsg);
          handle.started = true;
          resolve(handle);
        } else if (msg.type === 'failed') {
          child.off('message', onMsg);
          child.kill();
          reject(new Error(`a worker could not start: ${msg.message}`));
        }
      };
      child.on('message', onMsg);
      child.once('exit', (code, signal) => reject(new Error(`a worker exited before starting (${signal ?? code})`)));
      child.once('spawn', () => child.send({ type: 'start', settings, identities } satisfies ToWorker));
    });
  }

  private ask(msg: ToWorker & { id: number }): Promise<Extract<FromWorker, { type: 'reply' }>> {
    if (this.exited) return Promise.resolve({ type: 'reply', id: msg.id });
    return new Promise((resolve) => {
      this.waiting.set(msg.id, resolve);
      this.child.send(msg);
    });
  }

  async snapshot() {
    const r = await this.ask({ type: 'snapshot', id: this.nextId++ });
    if (r.snapshot) return r.snapshot;
    if (this.lost) return lostView(this.last, this.identities.length);
    if (this.last) return this.last;
    throw new Error('a worker exited without a snapshot');
  }
  async inspect(host_id: string) {
    return (await this.ask({ type: 'inspect', id: this.nextId++, host_id })).info ?? undefined;
  }
  async setRate(rate: number) {
    await this.ask({ type: 'rate', id: this.nextId++, rate });
  }
  async resetLoopDelay() {
    await this.ask({ type: 'reset-loop-delay', id: this.nextId++ });
  }
  async stop(drainMs: number) {
    const r = await this.ask({ type: 'stop', id: this.nextId++, drainMs });
    if (r.snapshot) this.stopReplied = true;
    if (!this.exited) await new Promise((res) => this.child.once('exit', res));
    if (r.snapshot) return r.snapshot;
    return lostView(this.last, this.identities.length);
  }
}

/** Lost workers reported to listeners, also to those that listen after the fact. */
class LostWorkerEvents {
  private readonly seen: LostWorker[] = [];
  private readonly listeners: Array<(w: LostWorker) => void> = [];
  emit(w: LostWorker): void {
    this.seen.push(w);
    for (const l of this.listeners) l(w);
  }
  listen(l: (w: LostWorker) => void): void {
    this.listeners.push(l);
    for (const w of this.seen) l(w);
  }
}

/** The merged view of every worker. */
export interface FleetSnapshot {
  agents: number;
  states: Record<AgentState, number>;
  attemptCounters: number[];
  entriesPending: number;
  counters: PoolSnapshot['counters'];
  attempts: Timeline;
  hellos: Timeline;
  lost: Timeline;
  acked: Timeline;
  helloLatency: LatencyHistogram;
  ackLatency: LatencyHistogram;
  reconnectTime: LatencyHistogram;
  errors: Counts;
  gaveUp: Counts;
  probes: Counts;
  lastActiveAt: number;
  /** Worst event-loop delay over the processes (ms). */
  loopDelay: { p99: number; max: number };
  /** RSS of the emulator's processes together (bytes). */
  rssBytes: number;
  takenAt: number;
  /** Worker processes that died while the fleet ran (their agents are in states.Lost). */
  lostWorkers: LostWorker[];
}

export function mergeSnapshots(parts: readonly PoolSnapshot[]): FleetSnapshot {
  const out: FleetSnapshot = {
    agents: 0,
    states: Object.fromEntries(AGENT_STATES.map((s) => [s, 0])) as Record<AgentState, number>,
    attemptCounters: [],
    entriesPending: 0,
    counters: { entries_generated: 0, entries_sent: 0, entries_acked: 0, entries_lost: 0, pushes: 0, heartbeats: 0, config_updates: 0, rotated_tokens: 0, shutdowns: 0 },
    attempts: new Timeline(),
    hellos: new Timeline(),
    lost: new Timeline(),
    acked: new Timeline(),
    helloLatency: new LatencyHistogram(),
    ackLatency: new LatencyHistogram(),
    reconnectTime: new LatencyHistogram(),
    errors: new Counts(),
    gaveUp: new Counts(),
    probes: new Counts(),
    lastActiveAt: 0,
    loopDelay: { p99: 0, max: 0 },
    rssBytes: 0,
    takenAt: 0,
    lostWorkers: [],
  };
  for (const p of parts) {
    out.agents += p.agents;
    for (const s of AGENT_STATES) out.states[s] += p.states[s] ?? 0;
    p.attempt_counters.forEach((n, i) => (out.attemptCounters[i] = (out.attemptCounters[i] ?? 0) + n));
    out.entriesPending += p.entries_pending;
    for (const k of Object.keys(out.counters) as (keyof PoolSnapshot['counters'])[]) out.counters[k] += p.counters[k];
    out.attempts.merge(p.attempts);
    out.hellos.merge(p.hellos);
    out.lost.merge(p.lost);
    out.acked.merge(p.acked);
    out.helloLatency.merge(p.hello_latency);
    out.ackLatency.merge(p.ack_latency);
    out.reconnectTime.merge(p.reconnect_time);
    out.errors.merge(p.errors);
    out.gaveUp.merge(p.gave_up);
    out.probes.merge(p.probes);
    out.lastActiveAt = Math.max(out.lastActiveAt, p.last_active_at);
    out.takenAt = Math.max(out.takenAt, p.taken_at);
    out.rssBytes += p.rss_bytes;
    out.loopDelay = { p99: Math.max(out.loopDelay.p99, p.loop_delay_ms.p99), max: Math.max(out.loopDelay.max, p.loop_delay_ms.max) };
  }
  for (let i = 0; i < out.attemptCounters.length; i++) out.attemptCounters[i] ??= 0;
  return out;
}

export class Fleet {
  readonly startedAt = Date.now();
  private stopped: Promise<FleetSnapshot> | undefined;
  /** Why the token file could not be compacted when the fleet stopped (null: it was, or there is none). */
  compactionError: string | null = null;

  private constructor(
    private readonly handles: Handle[],
    readonly options: FleetOptions,
    readonly fd: FdReport,
    private readonly lostWorkers: LostWorkerEvents,
  ) {}

  /** Calls `listener` for every worker process that died while the fleet ran (also for those that died before this call). */
  onWorkerLost(listener: (w: LostWorker) => void): void {
    this.lostWorkers.listen(listener);
  }

  static async start(o: FleetOptions): Promise<Fleet> {
    const limits = fdLimits();
    const workers = Math.max(0, Math.floor(o.workers));
    const perProcess = Math.ceil(o.identities.length / Math.max(1, workers)) + FD_HEADROOM;
    const canRaise = workers > 0 && limits.soft !== null && limits.hard !== null && limits.soft < perProcess;
    const workerLimit = canRaise ? Math.min(limits.hard as number, perProcess) : limits.soft;
    const fd: FdReport = {
      soft: limits.soft,
      hard: limits.hard,
      needed_per_process: perProcess,
      worker_limit: workerLimit,
      raised: canRaise,
      insufficient: workerLimit !== null && workerLimit < perProcess,
    };
    const { identities: _ids, workers: _workers, ...settings } = o;
    const events = new LostWorkerEvents();
    if (workers === 0) {
      const pool = new Pool(settings, o.identities);
      void pool.start();
      return new Fleet([new LocalHandle(pool)], o, fd, events);
    }
    const chunk = Math.ceil(o.identities.length / workers);
    const handles = await Promise.all(
      Array.from({ length: workers }, (_, w) =>
        ChildHandle.start(
          { ...settings, indexBase: w * chunk },
          o.identities.slice(w * chunk, (w + 1) * chunk),
          canRaise ? workerLimit : null,
          w,
          (l) => events.emit(l),
        ),
      ),
    );
    return new Fleet(handles, o, fd, events);
  }

  async snapshot(): Promise<FleetSnapshot> {
    return this.merged(await Promise.all(this.handles.map((h) => h.snapshot())));
  }

  private merged(parts: PoolSnapshot[]): FleetSnapshot {
    const out = mergeSnapshots(parts);
    out.lostWorkers = this.handles.map((h) => h.lost).filter((l): l is LostWorker => l !== null);
    return out;
  }

  async inspect(host_id: string): Promise<AgentInfo | undefined> {
    for (const h of this.handles) {
      const info = await h.inspect(host_id);
      if (info) return info;
    }
    return undefined;
  }

  async setRate(ratePerAgent: number): Promise<void> {
    await Promise.all(this.handles.map((h) => h.setRate(ratePerAgent)));
  }

  /** Starts a new event-loop delay measurement in every process (e.g. at the start of a phase). */
  async resetLoopDelay(): Promise<void> {
    await Promise.all(this.handles.map((h) => h.resetLoopDelay()));
  }

  /** Polls snapshots every `everyMs` until `pred` holds; rejects after `timeoutMs`. */
  async waitFor(pred: (s: FleetSnapshot) => boolean, timeoutMs: number, everyMs = 100): Promise<FleetSnapshot> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await this.snapshot();
      if (pred(s)) return s;
      if (Date.now() > deadline) throw new Error(`fleet condition not reached within ${timeoutMs} ms (states ${JSON.stringify(s.states)}, errors ${JSON.stringify(s.errors.toJSON())})`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  /** Polls one agent every `everyMs` until `pred` holds; rejects after `timeoutMs`. */
  async waitForAgent(host_id: string, pred: (a: AgentInfo) => boolean, timeoutMs: number, everyMs = 50): Promise<AgentInfo> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const info = await this.inspect(host_id);
      if (info === undefined) throw new Error(`no simulated agent has host_id ${host_id}`);
      if (pred(info)) return info;
      if (Date.now() > deadline) throw new Error(`agent ${host_id} did not reach the condition within ${timeoutMs} ms (state ${info.state})`);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  /**
   * Stops generating entries, waits up to `drainMs` for the generated ones to be acked,
   * closes every session (final_seq), stops the workers and compacts the token file.
   */
  stop(drainMs = 0): Promise<FleetSnapshot> {
    this.stopped ??= (async () => {
      const parts = await Promise.all(this.handles.map((h) => h.stop(drainMs)));
      if (this.options.tokenFile !== undefined) {
        // A file that cannot be compacted is still valid (the last line of a host wins): the
        // run's figures are not lost for it; compactionError says why.
        try {
          compactTokenFile(this.options.tokenFile);
        } catch (err) {
          this.compactionError = (err as Error).message;
        }
      }
      return this.merged(parts);
    })();
    return this.stopped;
  }
}
