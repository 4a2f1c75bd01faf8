// `cortex-agent buffer check --state-dir DIR [--json]` (DECISIONS H5): SQLite's integrity
// check plus the buffer's invariants, read-only (works while `run` is running). Exit 0 when
// the buffer is sound, 1 when it is damaged (with what to do), 2 bad usage.
import { existsSync } from 'node:fs';
import { checkBuffer, readRecovery, type CheckReport } from './buffer/heal.js';
import { stateDirReadDenied, statePaths } from './state-dir.js';
import { formatCliError } from '../common/errors.js';

export const BUFFER_CHECK_USAGE = `Usage: cortex-agent buffer check --state-dir DIR [--json]

Checks DIR/buffer.db read-only: SQLite's integrity_check, then the buffer's invariants (rows
contiguous and between acked_seq and next_seq, meta counters equal to the rows, source
positions that parse). Exit 0 sound, 1 damaged. "cortex-agent run" heals a damaged buffer at
start: it moves the file aside, keeps what still reads, and continues the seqs.
  --state-dir DIR   state directory
  --json            print one JSON object {ok, path, integrity, problems, ...}
`;

export interface BufferCheckResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function bufferCheck(stateDir: string, json: boolean): BufferCheckResult {
  const path = statePaths(stateDir).bufferDb;
  const denied = stateDirReadDenied(stateDir);
  if (denied !== null) return { code: 1, stdout: '', stderr: `cortex-agent: ${formatCliError('E_FILE_ACCESS', denied)}\n` };
  if (!existsSync(path)) {
    return { code: 1, stdout: '', stderr: `cortex-agent: ${stateDir} has no buffer.db; is it an enrolled agent's state dir?\n` };
  }
  const recovery = readRecovery(stateDir);
  const gap = recovery?.lost_from != null && recovery.lost_to != null ? { from: recovery.lost_from, to: recovery.lost_to } : null;
  const report: CheckReport & { degraded?: unknown } = checkBuffer(path, gap);
  if (recovery !== null) report.degraded = recovery;
  const code = report.ok ? 0 : 1;
  if (json) return { code, stdout: `${JSON.stringify(report)}\n`, stderr: '' };
  const lines = [
    `buffer:     ${path}`,
    `integrity:  ${report.integrity}`,
    `next_seq:   ${report.next_seq ?? '-'}   acked_seq: ${report.acked_seq ?? '-'}   rows: ${report.rows ?? '-'}   sources: ${report.sources ?? '-'}`,
    report.ok ? 'result:     ok' : `result:     DAMAGED (${report.problems.length} problem(s))`,
    ...report.problems.map((p) => `  ${p.kind}: ${p.message}`),
  ];
  if (recovery !== null) lines.push(`degraded:   replaced at ${recovery.at}; damaged file kept at ${recovery.moved_to}; lost seqs ${recovery.lost_from ?? '-'}..${recovery.lost_to ?? '-'}`);
  const remedy = report.ok ? '' : 'cortex-agent: the buffer is damaged; restart "cortex-agent run": it moves the file aside (kept), salvages what still reads and continues\n';
  return { code, stdout: `${lines.join('\n')}\n`, stderr: remedy };
}
