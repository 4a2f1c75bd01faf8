// Fleet gauges of GET /metrics, read from the database at scrape time:
//   cortex_agents{state}                 agents by connection_state
//   cortex_agents_silent                 agents not seen for silent_after_secs (not revoked,
//                                        seen at least once)
//   cortex_agents_gone_silent_total      agents that became silent (counted at the scrape
//                                        that first sees them silent; again after they were
//                                        heard from and went silent once more)
// so that an alert rule can fire on `cortex_agents_silent > 0` or on
// `increase(cortex_agents_gone_silent_total[15m]) > 0` (docs/operations.md).
import type { Kysely } from 'kysely';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Database } from './db/schema.js';
import { CONNECTION_STATES } from './db/schema.js';

export interface FleetMetricsOptions {
  silentAfterSecs: number;
  now?: () => number;
  /** A failed read (database busy, closing): logged by the caller, the scrape goes on. */
  onError?: (error: unknown) => void;
}

export function registerFleetMetrics(registry: Registry, db: Kysely<Database>, options: FleetMetricsOptions): void {
  const now = options.now ?? Date.now;
  const silentSince = new Set<string>();
  let silentCount = 0;
  let newlySilent = 0;
  // One database read per scrape, shared by the gauge and the counter (both collect it:
  // a scrape reads every family at once, so neither may rely on the other's order).
  let inFlight: Promise<void> | null = null;
  const refresh = (): Promise<void> => {
    inFlight ??= (async () => {
      try {
        const cutoff = new Date(now() - options.silentAfterSecs * 1000).toISOString();
        const rows = await db
          .selectFrom('agents')
          .select('host_id')
          .where('connection_state', '<>', 'Revoked')
          .where('last_seen', 'is not', null)
          .where('last_seen', '<', cutoff)
          .execute();
        const silent = new Set(rows.map((r) => r.host_id));
        for (const id of silent) if (!silentSince.has(id)) newlySilent++;
        silentSince.clear();
        for (const id of silent) silentSince.add(id);
        silentCount = silent.size;
      } catch (error) {
        options.onError?.(error);
      }
    })().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
  new Counter({
    name: 'cortex_agents_gone_silent_total',
    help: `Agents that went silent: not seen (heartbeat, push, hello) for silent_after_secs (${options.silentAfterSecs} s), counted once per silence at the scrape that sees it`,
    registers: [registry],
    async collect() {
      await refresh();
      if (newlySilent > 0) this.inc(newlySilent);
      newlySilent = 0;
    },
  });
  new Gauge({
    name: 'cortex_agents_silent',
    help: `Agents (not revoked, seen at least once) not seen for silent_after_secs (${options.silentAfterSecs} s)`,
    registers: [registry],
    async collect() {
      await refresh();
      this.set(silentCount);
    },
  });
  new Gauge({
    name: 'cortex_agents',
    help: 'Agents in the database by connection_state (every server on the database reports the same figures)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      try {
        const rows = await db
          .selectFrom('agents')
          .select((eb) => ['connection_state', eb.fn.countAll<number | string | bigint>().as('n')])
          .groupBy('connection_state')
          .execute();
        const counts = new Map(rows.map((r) => [r.connection_state as string, Number(r.n)]));
        for (const state of CONNECTION_STATES) this.labels(state).set(counts.get(state) ?? 0);
      } catch (error) {
        options.onError?.(error);
      }
    },
  });
}
