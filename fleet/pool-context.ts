// What a simulated agent sees of the pool it lives in: the shared settings, the counters
// and timelines it writes, and the entry generator. ./pool.ts implements it; ./sim-agent.ts
// depends on this interface only, so the two never import each other.
import type { BackoffSettings } from './backoff.js';
import type { TokenJournal } from './identities.js';
import type { Counts, LatencyHistogram, Timeline } from './stats.js';

export interface PoolSettings {
  /** ws:// or wss:// URL of the server's agent endpoint. */
  url: string;
  /** Log entries per second per agent (0: idle agents, heartbeats only). */
  ratePerAgent: number;
  backoff: BackoffSettings;
  /** How long a connection attempt may take to upgrade (ms). */
  connectTimeoutMs: number;
  /** How long the agent waits for the hello answer (ms). */
  helloTimeoutMs: number;
  /** Timeout of a logs.push (ms); then the connection is treated as dead. */
  requestTimeoutMs: number;
  /** logs.push requests in flight per agent. */
  window: number;
  /** capabilities.max_batch_entries (and the agent's own cap). */
  maxBatchEntries: number;
  /** Approximate size of each entry's message (bytes). */
  messageBytes: number;
  /** supported_probes. */
  probes: readonly string[];
  agentVersion: string;
  /** Fixed heartbeat interval (ms) instead of the config's ± jitter (tests). */
  heartbeatMs?: number;
  /** Append rotated tokens to this token file. */
  tokenFile?: string;
  /** PEM text of a CA to trust for wss://. */
  ca?: string;
  /** First connections in flight at once while the fleet starts. */
  startConcurrency: number;
  /** Index of this pool's first agent in the whole fleet (for hostnames and varied answers). */
  indexBase?: number;
}

export interface PoolCounters {
  entries_generated: number;
  entries_sent: number;
  entries_acked: number;
  /** Entries the server acked past without ever receiving them (a push refused here while a later one went out): never stored. */
  entries_lost: number;
  pushes: number;
  heartbeats: number;
  config_updates: number;
  rotated_tokens: number;
  shutdowns: number;
}

export interface PoolContext {
  readonly settings: PoolSettings;
  readonly counters: PoolCounters;
  readonly attempts: Timeline;
  readonly hellos: Timeline;
  readonly lost: Timeline;
  readonly acked: Timeline;
  readonly helloLatency: LatencyHistogram;
  readonly ackLatency: LatencyHistogram;
  readonly reconnectTime: LatencyHistogram;
  readonly errors: Counts;
  readonly gaveUp: Counts;
  readonly probes: Counts;
  readonly journal: TokenJournal | null;
  readonly entryBytes: number;
  /** The newest time an agent became Active (ms since the epoch). */
  lastActiveAt: number;
  /** One entry's JSON text for this agent and seq. */
  entryJson(seq: number, ts: string, index: number): string;
}
