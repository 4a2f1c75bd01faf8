// DIR/status.json: the live state `run` publishes for `status` (which also reads
// buffer.db read-only for the counters). Written by temp file + rename, so a reader
// sees the old or the new file; not fsynced — it is advisory and rewritten every
// second while anything changes. Never contains the token.

import { promises as fsp, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentState } from '@cortex/agent-protocol';
import type { RecoveryReport } from './buffer/heal.js';
import type { SourceStatus } from './sources.js';

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
