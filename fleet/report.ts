// The fleet's figures: a progress record per interval (stderr) and the final report
// (human lines, then one JSON line on stdout). Also the server's RSS from /proc.
import { readFileSync } from 'node:fs';
import type { FdReport, FleetSnapshot, LostWorker } from './fleet.js';
import type { LatencySummary } from './stats.js';

/** VmRSS of a process in bytes (Linux /proc); null when it cannot be read. */
export function rssBytes(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Samples a server's RSS: first, peak, last. */
export class RssWatch {
  first: number | null = null;
  peak: number | null = null;
  last: number | null = null;

  constructor(readonly pid: number) {}

  sample(): number | null {
    const v = rssBytes(this.pid);
    if (v === null) return null;
    this.first ??= v;
    this.peak = Math.max(this.peak ?? 0, v);
    this.last = v;
    return v;
  }
}

export interface FleetReport {
  url: string;
  agents: number;
  workers: number;
  elapsed_s: number;
  rate_per_agent: number;
  states: Record<string, number>;
  active: number;
  attempts: number;
  hellos: number;
  hellos_per_s: number;
  hellos_peak_per_s: number;
  hello_latency_ms: LatencySummary;
  entries_generated: number;
  entries_acked: number;
  /** Entries the server acked past without receiving them: never stored. */
  entries_lost: number;
  entries_pending: number;
  entries_per_s: number;
  pushes: number;
  ack_latency_ms: LatencySummary;
  reconnects: number;
  reconnect_time_ms: LatencySummary;
  heartbeats: number;
  config_updates: number;
  rotated_tokens: number;
  shutdowns: number;
  probes: Record<string, number>;
  errors: Record<string, number>;
  gave_up: Record<string, number>;
  /** Worst event-loop delay of the emulator's processes: high values mean the emulator, not the server, limited the figures. */
  emulator_loop_delay_ms: { p99: number; max: number };
  /** RSS of the emulator's agent processes together, at the end. */
  emulator_rss_bytes: number;
  server_rss_bytes: { first: number | null; peak: number | null; last: number | null } | null;
  fd_limit: FdReport;
  /** Worker processes that died during the run: their agents are in states.Lost and their figures stop at its last snapshot. */
  lost_workers: LostWorker[];
}

export function buildReport(s: FleetSnapshot, meta: { url: string; workers: number; startedAt: number; rate: number; rss: RssWatch | null; fd: FdReport }): FleetReport {
  const elapsed = Math.max(0.001, (s.takenAt - meta.startedAt) / 1000);
  return {
    url: meta.url,
    agents: s.agents,
    workers: meta.workers,
    elapsed_s: Math.round(elapsed * 10) / 10,
    rate_per_agent: meta.rate,
    states: Object.fromEntries(Object.entries(s.states).filter(([, n]) => n > 0)),
    active: s.states.Active,
    attempts: s.attempts.between(0, Number.MAX_SAFE_INTEGER),
    hellos: s.hellos.between(0, Number.MAX_SAFE_INTEGER),
    hellos_per_s: Math.round(s.hellos.between(0, Number.MAX_SAFE_INTEGER) / elapsed),
    hellos_peak_per_s: s.hellos.peakPerSecond(),
    hello_latency_ms: s.helloLatency.summary(),
    entries_generated: s.counters.entries_generated,
    entries_acked: s.counters.entries_acked,
    entries_lost: s.counters.entries_lost,
    entries_pending: s.entriesPending,
    entries_per_s: Math.round(s.counters.entries_acked / elapsed),
    pushes: s.counters.pushes,
    ack_latency_ms: s.ackLatency.summary(),
    reconnects: s.reconnectTime.count,
    reconnect_time_ms: s.reconnectTime.summary(),
    heartbeats: s.counters.heartbeats,
    config_updates: s.counters.config_updates,
    rotated_tokens: s.counters.rotated_tokens,
    shutdowns: s.counters.shutdowns,
    probes: s.probes.toJSON(),
    errors: s.errors.toJSON(),
    gave_up: s.gaveUp.toJSON(),
    emulator_loop_delay_ms: s.loopDelay,
    emulator_rss_bytes: s.rssBytes,
    server_rss_bytes: meta.rss ? { first: meta.rss.first, peak: meta.rss.peak, last: meta.rss.last } : null,
    fd_limit: meta.fd,
    lost_workers: s.lostWorkers,
  };
}

const mib = (b: number | null) => (b === null ? '-' : `${(b / 1048576).toFixed(1)} MiB`);
const lat = (l: FleetReport['ack_latency_ms']) => (l.count === 0 ? 'none' : `p50 ${l.p50} ms, p90 ${l.p90} ms, p99 ${l.p99} ms, max ${l.max} ms (${l.count})`);

/** The human-readable lines before the JSON line. */
export function formatReport(r: FleetReport): string {
  const kv = (o: Record<string, number>) => (Object.keys(o).length === 0 ? 'none' : Object.entries(o).map(([k, v]) => `${k} ${v}`).join(', '));
  const lines = [
    `fleet: ${r.agents} agents in ${r.workers === 0 ? 'this process' : `${r.workers} worker process(es)`} against ${r.url}, ${r.elapsed_s} s`,
    `states: ${kv(r.states)}`,
    `hellos: ${r.hellos} (${r.hellos_per_s}/s average, peak ${r.hellos_peak_per_s}/s), attempts ${r.attempts}; hello latency ${lat(r.hello_latency_ms)}`,
    `entries: ${r.entries_acked} acked of ${r.entries_generated} generated (${r.entries_per_s}/s), ${r.entries_pending} pending, ${r.pushes} pushes; ack latency ${lat(r.ack_latency_ms)}` +
      (r.entries_lost > 0 ? `; LOST ${r.entries_lost} (acked past by the server without being sent)` : ''),
    `reconnects: ${r.reconnects}; time from losing a session to Active again ${lat(r.reconnect_time_ms)}`,
    `heartbeats ${r.heartbeats}, config updates applied ${r.config_updates}, rotated tokens ${r.rotated_tokens}, agent.shutdown received ${r.shutdowns}`,
    `probes answered: ${kv(r.probes)}`,
    `errors: ${kv(r.errors)}`,
    `gave up: ${kv(r.gave_up)}`,
    `emulator: RSS ${mib(r.emulator_rss_bytes)} (${Math.round(r.emulator_rss_bytes / Math.max(1, r.agents))} bytes per agent), event-loop delay p99 ${r.emulator_loop_delay_ms.p99} ms, max ${r.emulator_loop_delay_ms.max} ms${r.emulator_loop_delay_ms.p99 > 100 ? ' — the emulator was saturated: add --workers or cores, or fewer agents per process' : ''}`,
  ];
  for (const w of r.lost_workers) {
    lines.push(`LOST: worker ${w.worker} (pid ${w.pid ?? '?'}) died (${w.exit}) with ${w.agents} agents (indexes ${w.indexes[0]}..${w.indexes[1]}): their figures above stop at its last snapshot`);
  }
  if (r.server_rss_bytes) lines.push(`server RSS: first ${mib(r.server_rss_bytes.first)}, peak ${mib(r.server_rss_bytes.peak)}, last ${mib(r.server_rss_bytes.last)}`);
  const fd = r.fd_limit;
  lines.push(
    `open-file limit: soft ${fd.soft ?? '?'}, hard ${fd.hard ?? '?'}, needed per process ${fd.needed_per_process}` +
      (fd.raised ? `, workers raised to ${fd.worker_limit}` : '') +
      (fd.insufficient ? ' — INSUFFICIENT: add workers (--workers) or raise the hard limit' : ''),
  );
  return lines.join('\n');
}
