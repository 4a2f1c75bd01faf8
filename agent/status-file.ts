// DIR/status.json: the live state `run` publishes for `status` (which also reads
// buffer.db read-only for the counters). Written by temp file + rename, so a reader
// sees the old or the new file (on a full disk it is rewritten in place instead:
// overwriteInPlace); not fsynced — it is advisory and rewritten every second while
// anything changes. Never contains the token.

import { promises as fsp, readFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_STATE_MACHINE, type AgentState } from '@cortex/agent-protocol';
import type { RecoveryReport } from './buffer/heal.js';
import type { SourceStatus } from './agent-sources.js';
import { isDiskFullCode } from '../common/errors.js';
import { nodeProcessAlive } from '../common/process.js';

export const STATUS_FILE = 'status.json';

export interface StatusFile {
  pid: number;
  updated_at: string;
  state: AgentState;
  stopped: boolean;
  /** The server held (or of the latest attempt). */
  server_url: string;
  /** Every server the agent may connect to (absent in files of older agents). */
  server_urls?: string[];
  /** The proxy of the latest connection attempt, without user and password; null: direct (absent in files of older agents). */
  proxy?: string | null;
  session_id: string | null;
  host_id: string;
  last_error: string | null;
  sources_paused: boolean;
  sources: SourceStatus[];
  batch_entries: number;
  send_rate_cap: number | null;
  /** The host's clock against the server's at the last hello, ms (> 0: behind; absent in files of older agents). */
  clock_offset_ms?: number | null;
  /** The buffer was damaged and replaced (agent/buffer/heal.ts); until the server acked past what was lost. */
  degraded?: RecoveryReport;
}

/** What Agent.status() reports (the live view; status.json carries most of it). */
export interface AgentStatus {
  state: AgentState;
  stopped: boolean;
  host_id: string;
  /** The server of the latest connection attempt (the one held while a session is open). */
  server_url: string;
  /** Every server the agent may connect to, in configured order. */
  server_urls: string[];
  /** The proxy of the latest connection attempt, without user and password; null: direct or none yet (F13). */
  proxy: string | null;
  session_id: string | null;
  next_seq: number;
  acked_seq: number;
  queue_depth: number;
  buffer_bytes: number;
  push_lag_seq: number;
  evicted_entries: number;
  sources_paused: boolean;
  sources: SourceStatus[];
  last_error: string | null;
  batch_entries: number;
  send_rate_cap: number | null;
  /** The host's clock against the server's at the last hello, ms (> 0: this host is behind); null before a hello. */
  clock_offset_ms: number | null;
  /** Set while the buffer is degraded: it was damaged and replaced, or damaged rows were set aside (kind 'rows'), and the server has not acked past the lost range. */
  degraded?: RecoveryReport;
}

/** The status.json content for an agent status (no token in either). */
export function toStatusFile(s: AgentStatus, pid: number = process.pid, now: Date = new Date()): StatusFile {
  return {
    pid,
    updated_at: now.toISOString(),
    state: s.state,
    stopped: s.stopped,
    server_url: s.server_url,
    server_urls: s.server_urls,
    proxy: s.proxy,
    session_id: s.session_id,
    host_id: s.host_id,
    last_error: s.last_error,
    sources_paused: s.sources_paused,
    sources: s.sources,
    batch_entries: s.batch_entries,
    send_rate_cap: s.send_rate_cap === null ? null : Math.round(s.send_rate_cap),
    clock_offset_ms: s.clock_offset_ms,
    ...(s.degraded !== undefined ? { degraded: s.degraded } : {}),
  };
}

export async function writeStatusFile(dir: string, status: StatusFile): Promise<void> {
  const path = join(dir, STATUS_FILE);
  const tmp = `${path}.tmp-${process.pid}`;
  const text = `${JSON.stringify(status)}\n`;
  try {
    await fsp.writeFile(tmp, text, { mode: 0o644 });
    await fsp.rename(tmp, path);
  } catch (err) {
    // A full disk leaves a short or empty temp file: never keep it (DECISIONS H4).
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    if (isDiskFullCode((err as { code?: unknown } | null)?.code) && (await overwriteInPlace(path, status))) return;
    throw err;
  }
}

/**
 * On a full disk no new file can be made, yet that is when `status` must say why the sources
 * paused (DECISIONS H12). status.json's own blocks can still be rewritten: the new text goes
 * over the old one in place when it fits in the space the file already holds (st_blocks),
 * padded with spaces to the old length so that no byte of the old text is left after it
 * (trailing whitespace is valid JSON); a read that lands mid-write may see a mix and is read
 * again (readStatusFile). Without room for the sources, they are left out. Returns false when even that does not fit or the write fails (a copy-on-write
 * filesystem needs new blocks for any write).
 */
async function overwriteInPlace(path: string, status: StatusFile): Promise<boolean> {
  let fh: FileHandle;
  try {
    fh = await fsp.open(path, 'r+');
  } catch {
    return false;
  }
  try {
    const st = await fh.stat();
    const room = Math.max(st.size, st.blocks * 512);
    let json = JSON.stringify(status);
    if (Buffer.byteLength(json) + 1 > room) json = JSON.stringify({ ...status, sources: [] });
    const length = Buffer.byteLength(json) + 1;
    if (length > room) return false;
    const data = Buffer.alloc(Math.max(length, st.size), ' ');
    data.write(json, 0);
    data[data.length - 1] = 0x0a;
    const { bytesWritten } = await fh.write(data, 0, data.length, 0);
    return bytesWritten === data.length;
  } catch {
    return false;
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** DIR/status.json, or null when absent, unreadable or damaged (readStatusFileChecked says why). */
export function readStatusFile(dir: string): StatusFile | null {
  return readStatusFileChecked(dir).file;
}

/**
 * DIR/status.json and, when it is there but cannot be shown, why (`problem`): not JSON, or a
 * field without the type the agent writes (a damaged disk block, a hand edit). Read twice: a
 * rewrite in place may be under way.
 */
export function readStatusFileChecked(dir: string): { file: StatusFile | null; problem: string | null } {
  let problem: string | null = null;
  for (let attempt = 0; attempt < 2; attempt++) {
    let text: string;
    try {
      text = readFileSync(join(dir, STATUS_FILE), 'utf8');
    } catch {
      return { file: null, problem: null }; // absent, or unreadable: status says what it can without it
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      problem = `not valid JSON (${(err as Error).message})`;
      continue;
    }
    problem = statusFileProblem(value);
    if (problem === null) return { file: value as StatusFile, problem: null };
  }
  return { file: null, problem };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const stringOrNull = (v: unknown): boolean => v === null || typeof v === 'string';

/** Why a parsed status.json cannot be shown, or null when its fields have the types the agent writes. */
export function statusFileProblem(v: unknown): string | null {
  if (!isRecord(v)) return 'not a JSON object';
  if (!(typeof v.pid === 'number' && Number.isSafeInteger(v.pid) && v.pid > 0)) return 'pid is not a process id';
  if (typeof v.updated_at !== 'string' || Number.isNaN(Date.parse(v.updated_at))) return 'updated_at is not a time';
  if (!AGENT_STATE_MACHINE.states.some((st) => st.name === v.state)) return 'state is not an agent state';
  if (typeof v.stopped !== 'boolean') return 'stopped is not a boolean';
  for (const key of ['server_url', 'host_id'] as const) if (typeof v[key] !== 'string') return `${key} is not a string`;
  for (const key of ['session_id', 'last_error'] as const) if (!stringOrNull(v[key])) return `${key} is not a string or null`;
  if (v.server_urls !== undefined && !(Array.isArray(v.server_urls) && v.server_urls.every((u) => typeof u === 'string'))) return 'server_urls is not a list of URLs';
  if (v.proxy !== undefined && v.proxy !== null && typeof v.proxy !== 'string') return 'proxy is not a URL or null';
  if (v.clock_offset_ms !== undefined && v.clock_offset_ms !== null && typeof v.clock_offset_ms !== 'number') return 'clock_offset_ms is not a number';
  if (typeof v.sources_paused !== 'boolean') return 'sources_paused is not a boolean';
  const sourceOk = (x: unknown): boolean =>
    isRecord(x) && typeof x.kind === 'string' && (x.files === undefined || (Array.isArray(x.files) && x.files.every(sourceOk)));
  if (!Array.isArray(v.sources) || !v.sources.every(sourceOk)) return 'sources is not a list of sources';
  if (v.degraded !== undefined && !isRecord(v.degraded)) return 'degraded is not an object';
  return null;
}

/**
 * Whether the agent that wrote status.json (its pid) still runs: the test run.lock uses
 * (common/process.ts nodeProcessAlive: a node or cortex process at that pid, as /proc says).
 * kill(pid, 0) alone took a dead agent for a running one once its pid was reused.
 */
export function processAlive(pid: number): boolean {
  return nodeProcessAlive(pid);
}
