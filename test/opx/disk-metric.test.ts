// The disk_used_pct host metric is the figure that the fs.disk_usage probe and df show
// (used / (used + available)), not used / all blocks (which counts root's reserve as free).
import { execFileSync } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { collectHostMetrics } from '../../agent/host-metrics.js';
import { diskUsageFromStatfs } from '../../agent/probes/disk-usage.probe.js';

const inputs = { mounts: ['/'], bufferBytes: 0, queueDepth: 0, pushLagSeq: 0, evictedEntries: 0, evictedOldestSeq: null };

it('disk_used_pct for / equals the fs.disk_usage probe figure and is within 1 point of df', () => {
  const sample = collectHostMetrics(inputs).find((m) => m.name === 'disk_used_pct');
  expect(sample?.labels).toEqual({ mount: '/' });
  const probe = diskUsageFromStatfs('/', statfsSync('/', { bigint: true })).used_percent;
  // the file system may change between the two reads by a block or two
  expect(Math.abs((sample?.value as number) - probe)).toBeLessThan(0.05);
  // df -P: "Filesystem 1024-blocks Used Available Capacity Mounted on"; Capacity is rounded up
  const line = execFileSync('df', ['-P', '/'], { encoding: 'utf8' }).trim().split('\n').at(-1) as string;
  const [, , usedK, availK] = line.split(/\s+/).map(Number) as number[];
  const df = ((usedK as number) / ((usedK as number) + (availK as number))) * 100;
  expect(Math.abs((sample?.value as number) - df)).toBeLessThan(1);
});

it('a file system with blocks reserved for root: used / (used + available), as df computes it', () => {
  // 1000 blocks, 100 used, 900 free of which 400 are reserved: df says 100 / (100 + 500) = 16.67%
  const s = { bsize: 4096n, blocks: 1000n, bfree: 900n, bavail: 500n, files: 10n, ffree: 5n };
  expect(diskUsageFromStatfs('/x', s).used_percent).toBe(16.67);
});
