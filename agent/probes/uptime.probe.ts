// sys.uptime: /proc/uptime (seconds since boot), /proc/stat btime (boot time) and
// /proc/loadavg; outside Linux (no procfs) it falls back to os.uptime() and os.loadavg().

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadavg, uptime } from 'node:os';
import type { SysUptimeOutput } from '@cortex/agent-protocol';
import { defineProbe } from './types.js';

async function readOptional(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

/** First field of /proc/uptime, in seconds. */
export function parseProcUptime(text: string): number | null {
  const n = Number(text.trim().split(/\s+/)[0]);
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/** btime (seconds since the epoch) from /proc/stat. */
export function parseBtime(text: string): number | null {
  const m = /^btime\s+(\d+)\s*$/m.exec(text);
  return m ? Number(m[1]) : null;
}

export function parseLoadavg(text: string): { one: number; five: number; fifteen: number } | null {
  const [a, b, c] = text.trim().split(/\s+/).map(Number);
  if (![a, b, c].every((x) => x !== undefined && Number.isFinite(x) && x >= 0)) return null;
  return { one: a!, five: b!, fifteen: c! };
}

export const uptimeProbe = defineProbe('sys.uptime', async (_args, ctx) => {
  const root = ctx.settings.procRoot;
  const [uptimeText, statText, loadText] = await Promise.all([
    readOptional(join(root, 'uptime')),
    readOptional(join(root, 'stat')),
    readOptional(join(root, 'loadavg')),
  ]);
  const uptimeSecs = (uptimeText !== null ? parseProcUptime(uptimeText) : null) ?? uptime();
  const btime = statText !== null ? parseBtime(statText) : null;
  const bootMs = btime !== null ? btime * 1000 : Date.now() - Math.round(uptimeSecs * 1000);
  const load = (loadText !== null ? parseLoadavg(loadText) : null) ?? (() => {
    const [one = 0, five = 0, fifteen = 0] = loadavg();
    return { one, five, fifteen };
  })();
  const output: SysUptimeOutput = {
    uptime_secs: Math.round(uptimeSecs * 100) / 100,
    boot_time: new Date(bootMs).toISOString(),
    load_average: load,
  };
  return { output, exit_code: null, stderr: null };
});
