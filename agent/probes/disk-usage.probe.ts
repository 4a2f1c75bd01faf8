// fs.disk_usage: statfs(2) of the filesystem holding a path (fs.promises.statfs, no child).
// Figures as df computes them: used = blocks - bfree, free = bavail (what unprivileged users
// can still use), used_percent = used / (used + bavail).

import { statfs } from 'node:fs/promises';
import { ProbeExecutionFailedError, type FsDiskUsageOutput } from '@cortex/agent-protocol';
import { defineProbe } from './types.js';

export interface StatFsLike {
  bsize: bigint;
  blocks: bigint;
  bfree: bigint;
  bavail: bigint;
  files: bigint;
  ffree: bigint;
}

export function diskUsageFromStatfs(path: string, s: StatFsLike): FsDiskUsageOutput {
  const bsize = s.bsize;
  const total = s.blocks * bsize;
  const used = (s.blocks > s.bfree ? s.blocks - s.bfree : 0n) * bsize;
  const free = s.bavail * bsize;
  const denom = used + free;
  const pct = denom === 0n ? 0 : Math.min(100, Math.round((Number(used) / Number(denom)) * 10000) / 100);
  const noInodes = s.files === 0n; // btrfs and some network filesystems report no inode figures
  return {
    path,
    total_bytes: Number(total),
    used_bytes: Number(used),
    free_bytes: Number(free),
    used_percent: pct,
    inodes_total: noInodes ? null : Number(s.files),
    inodes_used: noInodes ? null : Number(s.files > s.ffree ? s.files - s.ffree : 0n),
    inodes_free: noInodes ? null : Number(s.ffree),
  };
}

export const diskUsageProbe = defineProbe('fs.disk_usage', async (args, ctx) => {
  let s: StatFsLike;
  try {
    s = await statfs(args.path, { bigint: true });
  } catch (err) {
    const e = err as Error;
    throw new ProbeExecutionFailedError({ stderr: e.message, exit_code: null, probe: ctx.probe });
  }
  return { output: diskUsageFromStatfs(args.path, s), exit_code: null, stderr: null };
});
