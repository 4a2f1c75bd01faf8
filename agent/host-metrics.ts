// Host metrics for metrics.push (DESIGN 5.9/issue 5): load averages, memory used %,
// disk used % per mount as df shows it (statfs of a few mount points, deduplicated by device), the
// agent's RSS and its buffer. Never more than LIMITS.metrics_push_max_samples samples.

import { statSync, statfsSync } from 'node:fs';
import os from 'node:os';
import { LIMITS, type MetricSample } from '@cortex/agent-protocol';
import { diskUsageFromStatfs } from './probes/disk-usage.probe.js';

export const DEFAULT_MOUNTS = ['/', '/var', '/var/log', '/home', '/tmp'];

export interface HostMetricInputs {
  mounts: readonly string[];
  bufferBytes: number;
  queueDepth: number;
  pushLagSeq: number;
  evictedEntries: number;
  evictedOldestSeq: number | null;
}

export function collectHostMetrics(inputs: HostMetricInputs): MetricSample[] {
  const samples: MetricSample[] = [];
  const [l1, l5, l15] = os.loadavg();
  samples.push({ name: 'load1', value: round(l1!) }, { name: 'load5', value: round(l5!) }, { name: 'load15', value: round(l15!) });
  const total = os.totalmem();
  if (total > 0) samples.push({ name: 'mem_used_pct', value: round(((total - os.freemem()) / total) * 100) });
  const seen = new Set<number>();
  for (const mount of inputs.mounts) {
    try {
      const dev = statSync(mount).dev;
      if (seen.has(dev)) continue;
      seen.add(dev);
      const s = statfsSync(mount, { bigint: true });
      if (s.blocks > 0n) {
        // The same figure as the fs.disk_usage probe and df: used / (used + available to
        // unprivileged users), so blocks reserved for root count as neither.
        samples.push({ name: 'disk_used_pct', value: diskUsageFromStatfs(mount, s).used_percent, labels: { mount } });
      }
    } catch {
      // mount point absent or unreadable: skip it
    }
  }
  samples.push(
    { name: 'agent_rss_bytes', value: process.memoryUsage.rss() },
    { name: 'buffer_bytes', value: inputs.bufferBytes },
    { name: 'buffer_queue_depth', value: inputs.queueDepth },
    { name: 'push_lag_seq', value: inputs.pushLagSeq },
    { name: 'buffer_evicted_entries', value: inputs.evictedEntries },
  );
  if (inputs.evictedOldestSeq !== null) samples.push({ name: 'buffer_evicted_oldest_seq', value: inputs.evictedOldestSeq });
  return samples.slice(0, LIMITS.metrics_push_max_samples);
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
