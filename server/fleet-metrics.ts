// Fleet gauges of GET /metrics, read from the database at scrape time:
//   cortex_agents{state}                 agents by connection_state
//   cortex_agents_silent                 agents not seen for silent_after_secs (not revoked,
//                                        seen at least once)
//   cortex_agents_gone_silent_total      agents that became silent (counted at the scrape
//                                        that first sees them silent; again after they were
//                                        heard from and went silent once more)
// so that an alert rule can fire on `cortex_agents_silent > 0` or on
// `increase(cortex_agents_gone_silent_total[15m]) > 0` (docs/operations.md).
//
// A scrape never waits long for the database (DECISIONS G41): while it is known to be out of
// reach (cortex_database_up 0) nothing is read, and otherwise the read is waited for at most
// FLEET_READ_TIMEOUT_MS. Without a read of this scrape, the two gauges are left out of it (a
// figure from before would say the fleet is as it was); the counter stays as it is. Before,
// a scrape waited for the pool's connection timeout (10 s) on a database that did not answer,
// and Prometheus (scrape_timeout 10 s) never collected cortex_database_up 0.
import type { Kysely } from 'kysely';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Database } from './db/schema.js';
import { CONNECTION_STATES } from './db/schema.js';

/** The longest a scrape waits for the fleet read (ms). */
export const FLEET_READ_TIMEOUT_MS = 2000;

export interface FleetMetricsOptions {
  silentAfterSecs: number;
  now?: () => number;
  /** A failed read (database busy, closing): logged by the caller, the scrape goes on. */
  onError?: (error: unknown) => void;
  /**
   * Whether the database is known to be out of reach now: then the scrape reads nothing.
   * Default: what the registry's cortex_database_up says (ServerMetrics, from the outage account).
   */
  databaseDown?: () => boolean | Promise<boolean>;
  /** The longest a scrape waits for the read (default FLEET_READ_TIMEOUT_MS). */
  readTimeoutMs?: number;
}

/** What one read of the agents table found. */
interface FleetRead {
  silent: Set<string>;
  states: Map<string, number>;
}

/** A gauge that leaves its samples out of a scrape that has no figure for it. */
class ReadGauge<T extends string = string> extends Gauge<T> {
  fresh = false;
  override async get(): ReturnType<Gauge<T>['get']> {
    const m = await super.get();
    return this.fresh ? m : { ...m, values: [] };
  }
}

/** `p`'s value, or undefined when it takes longer than `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([p, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]).finally(() => clearTimeout(timer));
}

export function registerFleetMetrics(registry: Registry, db: Kysely<Database>, options: FleetMetricsOptions): void {
  const now = options.now ?? Date.now;
  const timeoutMs = options.readTimeoutMs ?? FLEET_READ_TIMEOUT_MS;
  const databaseDown =
    options.databaseDown ??
    (async () => {
      const up = registry.getSingleMetric('cortex_database_up');
      return up !== undefined && (await up.get()).values[0]?.value === 0;
    });
  const silentSince = new Set<string>();
  let newlySilent = 0;
  // One database read at a time, shared by the families of a scrape (a scrape collects every
  // family at once) and by a scrape that comes while the read of an earlier one still runs —
  // unless that read has run longer than a scrape waits for one: begun on a path that froze or
  // a database that hung, it may only fail later, even once the database answers again, and a
  // scrape that joined it would go without figures as long (the health check does the same).
  let inFlight: { at: number; read: Promise<FleetRead | undefined> } | null = null;
  // when the read whose figures were taken last began (an older one ending after it changes nothing)
  let takenAt = Number.NEGATIVE_INFINITY;
  const read = (): Promise<FleetRead | undefined> => {
    if (inFlight !== null && performance.now() - inFlight.at < timeoutMs) return inFlight.read;
    const at = performance.now();
    const p: Promise<FleetRead | undefined> = (async () => {
      try {
        const cutoff = new Date(now() - options.silentAfterSecs * 1000).toISOString();
        const [rows, states] = await Promise.all([
          db.selectFrom('agents').select('host_id').where('connection_state', '<>', 'Revoked').where('last_seen', 'is not', null).where('last_seen', '<', cutoff).execute(),
          db
            .selectFrom('agents')
            .select((eb) => ['connection_state', eb.fn.countAll<number | string | bigint>().as('n')])
            .groupBy('connection_state')
            .execute(),
        ]);
        const silent = new Set(rows.map((r) => r.host_id));
        if (at > takenAt) {
          takenAt = at;
          for (const id of silent) if (!silentSince.has(id)) newlySilent++;
          silentSince.clear();
          for (const id of silent) silentSince.add(id);
        }
        return { silent, states: new Map(states.map((r) => [r.connection_state as string, Number(r.n)])) };
      } catch (error) {
        options.onError?.(error);
        return undefined;
      }
    })().finally(() => {
      if (inFlight?.read === p) inFlight = null;
    });
    inFlight = { at, read: p };
    return p;
  };
  // The read of one scrape: its three families ask together (registry.metrics() collects them
  // at once), so the first asks and the others get the same answer.
  let scrape: Promise<FleetRead | undefined> | null = null;
  const forScrape = (): Promise<FleetRead | undefined> => {
    scrape ??= (async () => ((await databaseDown()) ? undefined : within(read(), timeoutMs)))().finally(() => {
      setImmediate(() => (scrape = null));
    });
    return scrape;
  };
  new Counter({
    name: 'cortex_agents_gone_silent_total',
    help: `Agents that went silent: not seen (heartbeat, push, hello) for silent_after_secs (${options.silentAfterSecs} s), counted once per silence at the scrape that sees it`,
    registers: [registry],
    async collect() {
      await forScrape();
      if (newlySilent > 0) this.inc(newlySilent);
      newlySilent = 0;
    },
  });
  new ReadGauge({
    name: 'cortex_agents_silent',
    help: `Agents (not revoked, seen at least once) not seen for silent_after_secs (${options.silentAfterSecs} s); left out while the database does not answer`,
    registers: [registry],
    async collect() {
      const r = await forScrape();
      (this as ReadGauge).fresh = r !== undefined;
      if (r !== undefined) this.set(r.silent.size);
    },
  });
  new ReadGauge({
    name: 'cortex_agents',
    help: 'Agents in the database by connection_state (every server on the database reports the same figures); left out while the database does not answer',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const r = await forScrape();
      (this as ReadGauge).fresh = r !== undefined;
      if (r !== undefined) for (const state of CONNECTION_STATES) this.labels(state).set(r.states.get(state) ?? 0);
    },
  });
}
