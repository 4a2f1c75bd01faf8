// Many simulated agents on one event loop: the settings they share, the counters they
// write, the one generator tick that credits every agent with its entries, and the
// snapshot a worker sends to the coordinator.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { LIMITS, validateLogBatchEntry } from '@cortex/agent-protocol';
import type { PoolContext, PoolCounters, PoolSettings } from './pool-context.js';
import { TokenJournal, type Identity } from './identities.js';
import { AGENT_STATES, SimAgent, type AgentInfo, type AgentState } from './sim-agent.js';
import { Counts, LatencyHistogram, Timeline, type Sparse } from './stats.js';

export type { PoolCounters, PoolSettings } from './pool-context.js';

export interface HistogramJson {
  buckets: Sparse;
  count: number;
  max: number;
}

/** Everything a pool knows, as plain JSON (merged across workers by the coordinator). */
export interface PoolSnapshot {
  agents: number;
  states: Record<AgentState, number>;
  /** Agents by their backoff attempt counter (index = attempt). */
  attempt_counters: number[];
  entries_pending: number;
  counters: PoolCounters;
  attempts: Sparse;
  hellos: Sparse;
  lost: Sparse;
  acked: Sparse;
  hello_latency: HistogramJson;
  ack_latency: HistogramJson;
  reconnect_time: HistogramJson;
  errors: Sparse;
  gave_up: Sparse;
  probes: Sparse;
  last_active_at: number;
  /** Event-loop delay of this process since the pool started (ms): when it is high, the emulator itself is the bottleneck. */
  loop_delay_ms: { p99: number; max: number };
  /** RSS of this process (bytes). */
  rss_bytes: number;
  taken_at: number;
}

const TICK_MS = 100;

export class Pool implements PoolContext {
  readonly agents: SimAgent[] = [];
  readonly byHost = new Map<string, SimAgent>();
  readonly counters: PoolCounters = { entries_generated: 0, entries_sent: 0, entries_acked: 0, entries_lost: 0, pushes: 0, heartbeats: 0, config_updates: 0, rotated_tokens: 0, shutdowns: 0 };
  readonly attempts = new Timeline();
  readonly hellos = new Timeline();
  /** Sessions lost (an Active or Draining connection closed). */
  readonly lost = new Timeline();
  readonly acked = new Timeline();
  readonly helloLatency = new LatencyHistogram();
  readonly ackLatency = new LatencyHistogram();
  readonly reconnectTime = new LatencyHistogram();
  readonly errors = new Counts();
  readonly gaveUp = new Counts();
  readonly probes = new Counts();
  readonly journal: TokenJournal | null;
  readonly entryBytes: number;
  lastActiveAt = 0;
  private rate: number;
  private ticker: NodeJS.Timeout | null = null;
  private lastTick = Date.now();
  private readonly filler: string;
  private readonly loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });

  constructor(
    readonly settings: PoolSettings,
    identities: readonly Identity[],
  ) {
    this.rate = settings.ratePerAgent;
    if (settings.messageBytes > LIMITS.max_message_chars) {
      throw new Error(`messageBytes ${settings.messageBytes} is above the contract's max_message_chars (${LIMITS.max_message_chars})`);
    }
    this.filler = 'x'.repeat(Math.max(0, settings.messageBytes));
    const sample = JSON.parse(this.entryJson(LIMITS.max_seq, new Date().toISOString(), 9_999_999)) as unknown;
    if (!validateLogBatchEntry(sample)) throw new Error('internal: the generated log entry does not match the LogBatchEntry schema');
    this.entryBytes = this.entryJson(1, new Date().toISOString(), 0).length;
    this.journal = settings.tokenFile !== undefined ? new TokenJournal(settings.tokenFile) : null;
    const base = settings.indexBase ?? 0;
    identities.forEach((id, i) => {
      const a = new SimAgent(this, base + i, id.host_id, id.token, id.hostname ?? `fleet-${base + i}`);
      this.agents.push(a);
      this.byHost.set(id.host_id, a);
    });
  }

  /** One log entry as JSON text (valid LogBatchEntry: checked once in the constructor). */
  entryJson(seq: number, ts: string, index: number): string {
    // the message is messageBytes characters (ASCII), or just its head when that is longer
    const head = `fleet agent ${index} entry ${seq} `;
    const fill = this.settings.messageBytes - head.length;
    return `{"seq":${seq},"ts":"${ts}","severity":"info","app_name":"fleet","message":"${head}${fill > 0 ? this.filler.slice(0, fill) : ''}","source":"custom:fleet"}`;
  }

  /** Starts every agent, at most `startConcurrency` first attempts at once. Resolves when all had one. */
  start(): Promise<void> {
    this.lastTick = Date.now();
    this.loopDelay.enable();
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    let next = 0;
    let done = 0;
    const total = this.agents.length;
    return new Promise<void>((resolve) => {
      if (total === 0) return resolve();
      const launch = () => {
        const a = this.agents[next++];
        if (a === undefined) return;
        a.start(() => {
          done++;
          if (done === total) resolve();
          else launch();
        });
      };
      for (let i = 0; i < Math.min(this.settings.startConcurrency, total); i++) launch();
    });
  }

  /** Starts a new event-loop delay measurement (e.g. at the start of a phase). */
  resetLoopDelay(): void {
    this.loopDelay.reset();
  }

  setRate(ratePerAgent: number): void {
    this.rate = ratePerAgent;
  }

  private tick(): void {
    const now = Date.now();
    const dt = now - this.lastTick;
    this.lastTick = now;
    if (this.rate <= 0) return;
    const ts = new Date(now).toISOString();
    for (const a of this.agents) a.tick(this.rate, dt, ts);
  }

  inspect(host_id: string): AgentInfo | undefined {
    return this.byHost.get(host_id.toLowerCase())?.info();
  }

  snapshot(): PoolSnapshot {
    const states = Object.fromEntries(AGENT_STATES.map((s) => [s, 0])) as Record<AgentState, number>;
    const attemptCounters: number[] = [];
    let pending = 0;
    const now = Date.now();
    for (const a of this.agents) {
      states[a.state]++;
      const k = a.backoff.attempt(now);
      attemptCounters[k] = (attemptCounters[k] ?? 0) + 1;
      pending += a.unacked;
    }
    for (let i = 0; i < attemptCounters.length; i++) attemptCounters[i] ??= 0;
    return {
      agents: this.agents.length,
      states,
      attempt_counters: attemptCounters,
      entries_pending: pending,
      counters: { ...this.counters },
      attempts: this.attempts.toJSON(),
      hellos: this.hellos.toJSON(),
      lost: this.lost.toJSON(),
      acked: this.acked.toJSON(),
      hello_latency: this.helloLatency.toJSON(),
      ack_latency: this.ackLatency.toJSON(),
      reconnect_time: this.reconnectTime.toJSON(),
      errors: this.errors.toJSON(),
      gave_up: this.gaveUp.toJSON(),
      probes: this.probes.toJSON(),
      last_active_at: this.lastActiveAt,
      rss_bytes: process.memoryUsage.rss(),
      loop_delay_ms: { p99: Math.round(this.loopDelay.percentile(99) / 1e5) / 10, max: Math.round(this.loopDelay.max / 1e5) / 10 },
      taken_at: now,
    };
  }

  /**
   * Stops generating, waits up to `drainMs` for what was generated to be acked, then closes
   * every session (final_seq) and the token journal.
   */
  async stop(drainMs = 0): Promise<PoolSnapshot> {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    const deadline = Date.now() + drainMs;
    for (const a of this.agents) a.flushNow();
    while (Date.now() < deadline && this.agents.some((a) => a.unacked > 0 && !a.terminal)) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await Promise.all(this.agents.map((a) => a.stop()));
    this.journal?.close();
    const last = this.snapshot();
    this.loopDelay.disable();
    return last;
  }
}
