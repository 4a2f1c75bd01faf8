// proc.top: processes from /proc/<pid>/stat and /proc/<pid>/status, sampled twice
// settings.procTopSampleMs (default 200 ms) apart. cpu_percent is the CPU time (utime + stime)
// a process used between the two samples over the window's length, in percent of one core
// (as top shows it). A process is matched across samples by pid and start time, so a reused
// pid is not mistaken for the same process. Memory is VmRSS (0 for kernel threads).

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ProbeExecutionFailedError, type ProcTopOutput, type ProcTopProcess } from '@cortex/agent-protocol';
import { defineProbe } from './types.js';

export interface ProcStat {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  /** utime + stime, in clock ticks. */
  cpuTicks: number;
  /** starttime, in clock ticks since boot. */
  startTicks: number;
}

/**
 * Parses /proc/<pid>/stat. comm is between the first '(' and the LAST ')' (it may itself
 * contain spaces and parentheses). Returns null for malformed text.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const comm = text.slice(open + 1, close);
  const rest = text.slice(close + 1).trim().split(/\s+/);
  // rest[0] is field 3 (state); field n is rest[n - 3].
  const state = rest[0] ?? '';
  const ppid = Number(rest[1]);
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  const start = Number(rest[19]);
  if (!Number.isInteger(pid) || pid <= 0 || ![ppid, utime, stime, start].every(Number.isFinite)) return null;
  return { pid, comm, state, ppid, cpuTicks: utime + stime, startTicks: start };
}

/** VmRSS (bytes; 0 when absent, as for kernel threads) and the real uid from /proc/<pid>/status. */
export function parseProcStatus(text: string): { rssBytes: number; uid: number | null } {
  const rss = /^VmRSS:\s+(\d+)\s*kB/m.exec(text);
  const uid = /^Uid:\s+(\d+)/m.exec(text);
  return { rssBytes: rss ? Number(rss[1]) * 1024 : 0, uid: uid ? Number(uid[1]) : null };
}

/** uid → user name from passwd(5) text. */
export function parsePasswd(text: string): Map<number, string> {
  const users = new Map<number, string>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const parts = line.split(':');
    if (parts.length < 3) continue;
    const uid = Number(parts[2]);
    if (parts[0] && Number.isInteger(uid) && !users.has(uid)) users.set(uid, parts[0]);
  }
  return users;
}

async function listPids(procRoot: string): Promise<number[]> {
  const names = await readdir(procRoot);
  return names.filter((n) => /^[1-9]\d*$/.test(n)).map(Number);
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null; // the process exited meanwhile, or is not readable
  }
}

async function sampleStats(procRoot: string): Promise<Map<number, ProcStat>> {
  const pids = await listPids(procRoot);
  const stats = await Promise.all(pids.map(async (pid) => {
    const text = await readOrNull(join(procRoot, String(pid), 'stat'));
    return text === null ? null : parseProcStat(text);
  }));
  const out = new Map<number, ProcStat>();
  for (const s of stats) if (s) out.set(s.pid, s);
  return out;
}

export interface TopCandidate {
  stat: ProcStat;
  cpuPercent: number;
  rssBytes: number;
  uid: number | null;
}

/** Ranks candidates: by cpu (then memory) or by memory (then cpu), ties by pid. */
export function rankTop(candidates: TopCandidate[], by: 'cpu' | 'memory', limit: number): TopCandidate[] {
  const sorted = [...candidates].sort((a, b) =>
    by === 'cpu'
      ? b.cpuPercent - a.cpuPercent || b.rssBytes - a.rssBytes || a.stat.pid - b.stat.pid
      : b.rssBytes - a.rssBytes || b.cpuPercent - a.cpuPercent || a.stat.pid - b.stat.pid,
  );
  return sorted.slice(0, limit);
}

export const procTopProbe = defineProbe('proc.top', async (args, ctx) => {
  const by = args.by ?? 'cpu';
  const limit = args.limit ?? 10;
  const { procRoot, procTopSampleMs, clockTicks, passwdPath } = ctx.settings;

  let first: Map<number, ProcStat>;
  const t0 = performance.now();
  try {
    first = await sampleStats(procRoot);
  } catch (err) {
    throw new ProbeExecutionFailedError({ stderr: `cannot list processes in ${procRoot}: ${(err as Error).message}`, exit_code: null, probe: ctx.probe });
  }
  await ctx.sleep(procTopSampleMs);
  const t1 = performance.now();
  const second = await sampleStats(procRoot);
  const elapsedSecs = Math.max((t1 - t0) / 1000, 0.001);

  const matched = [...second.values()].filter((s) => first.get(s.pid)?.startTicks === s.startTicks);
  const candidates: TopCandidate[] = await Promise.all(matched.map(async (s) => {
    const before = first.get(s.pid)!;
    const ticks = Math.max(0, s.cpuTicks - before.cpuTicks);
    const cpuPercent = Math.round((ticks / clockTicks / elapsedSecs) * 10000) / 100;
    const status = await readOrNull(join(procRoot, String(s.pid), 'status'));
    const { rssBytes, uid } = status === null ? { rssBytes: 0, uid: null } : parseProcStatus(status);
    return { stat: s, cpuPercent, rssBytes, uid };
  }));
  ctx.signal.throwIfAborted();

  const top = rankTop(candidates, by, limit);
  const passwd = await readOrNull(passwdPath);
  const users = passwd === null ? new Map<number, string>() : parsePasswd(passwd);
  const processes: ProcTopProcess[] = top.map((c) => {
    const p: ProcTopProcess = {
      pid: c.stat.pid,
      ppid: c.stat.ppid,
      command: c.stat.comm.slice(0, 64),
      state: c.stat.state.slice(0, 1),
      cpu_percent: c.cpuPercent,
      mem_rss_bytes: c.rssBytes,
    };
    if (c.uid !== null) {
      p.uid = c.uid;
      const name = users.get(c.uid);
      if (name !== undefined) p.user = name;
    }
    return p;
  });
  const output: ProcTopOutput = { by, sample_ms: Math.round(t1 - t0), total_processes: matched.length, processes };
  return { output, exit_code: null, stderr: null };
});
