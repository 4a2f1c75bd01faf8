// DIR/status.json: the live state `run` publishes for `status` (which also reads
// buffer.db read-only for the counters). Written by temp file + rename, so a reader
// sees the old or the new file; not fsynced — it is advisory and rewritten every
// second while anything changes. Never contains the token.

import { promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentState } from '@cortex/agent-protocol';
import type { RecoveryReport } from './buffer/heal.js';
import type { SourceStatus } from './agent-sources.js';

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
  session_id: string | null;
  host_id: string;
  last_error: string | null;
  sources_paused: boolean;
  sources: SourceStatus[];
  batch_entries: number;
  send_rate_cap: number | null;
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
  /** Set while the buffer is degraded: it was damaged and replaced, and the server has not acked past the lost range. */
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
    session_id: s.session_id,
    host_id: s.host_id,
    last_error: s.last_error,
    sources_paused: s.sources_paused,
    sources: s.sources,
    batch_entries: s.batch_entries,
    send_rate_cap: s.send_rate_cap === null ? null : Math.round(s.send_rate_cap),
    ...(s.degraded !== undefined ? { degraded: s.degraded } : {}),
  };
}

export async function writeStatusFile(dir: string, status: StatusFile): Promise<void> {
  const path = join(dir, STATUS_FILE);
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    await fsp.writeFile(tmp, `${JSON.stringify(status)}\n`, { mode: 0o644 });
    await fsp.rename(tmp, path);
  } catch (err) {
    // A full disk leaves a short or empty temp file: never keep it (DECISIONS H4).
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

export function readStatusFile(dir: string): StatusFile | null {
  try {
    return JSON.parse(readFileSync(join(dir, STATUS_FILE), 'utf8')) as StatusFile;
  } catch {
    return null;
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}
