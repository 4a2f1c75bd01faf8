// `cortex-agent buffer check --state-dir DIR [--json]` (DECISIONS H5): SQLite's integrity
// check plus the buffer's invariants, read-only (works while `run` is running). Exit 0 when
// the buffer is sound, 1 when it is damaged (with what to do), 2 bad usage.
import { accessSync, constants as fsConstants, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Database } from './cjs.js';
import { classifyStorageCode } from './buffer/errors.js';
import { checkBuffer, lostRanges, lostText, readRecovery, type CheckReport } from './buffer/heal.js';
import { isDamagedRowProblem } from './buffer/runs.js';
import { DAMAGED_ROWS_SUFFIX, foreignTables } from './buffer/buffer.js';
import { BUFFER_DB_FILE, stateDirReadDenied, statePaths } from './state-dir.js';
import { ERROR_CODES, formatCliError, type ErrorCodeName } from '../common/errors.js';
import { currentUserName } from '../common/process.js';
import { shellQuote } from '../common/shell-quote.js';

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

/**
 * A check that could not be made, said as an error (human line on stderr; with --json also one
 * object on stdout: `{ok: false, path, error: {code, message, hint}}`), exit 1.
 */
function notChecked(path: string, json: boolean, code: ErrorCodeName, message: string, hint: string = ERROR_CODES[code]): BufferCheckResult {
  return {
    code: 1,
    stdout: json ? `${JSON.stringify({ ok: false, path, error: { code, message, hint } })}\n` : '',
    stderr: `cortex-agent: ${formatCliError(code, message, hint)}\n`,
  };
}

/**
 * Why buffer.db cannot be opened to be checked when that says nothing of the file itself: no
 * room on the disk for SQLite to open it (its -shm index: SQLITE_IOERR_SHMSIZE), or no
 * permission. Null otherwise (a file that does not open for any other reason is damaged).
 * Such a buffer was reported DAMAGED, with "restart run to move it aside": a sound buffer set
 * aside for want of space.
 */
export function bufferUncheckable(path: string, verb: 'check' | 'read' = 'check'): { code: ErrorCodeName; message: string; hint: string } | null {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return null;
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? '');
    const kind = classifyStorageCode(code);
    if (kind === 'disk_full') {
      return {
        code: 'E_DISK_FULL',
        message: `cannot ${verb} ${path}: disk full (${code}: SQLite needs a little room on the disk to open it); this says nothing of the buffer, which is not damaged by it`,
        hint: `free space on the state dir's filesystem (df ${shellQuote(dirname(path))}), then run the command again; nothing in the buffer is lost`,
      };
    }
    if (kind === 'read_only' || kind === 'cannot_open') {
      const denied: string[] = [];
      for (const [what, p, mode] of [
        ['the folder', dirname(path), fsConstants.R_OK | fsConstants.X_OK],
        ['the file', path, fsConstants.R_OK],
      ] as const) {
        try {
          accessSync(p, mode);
        } catch (e) {
          const c = (e as NodeJS.ErrnoException).code;
          if (c === 'EACCES' || c === 'EPERM') denied.push(`${what} ${p} (${c})`);
        }
      }
      if (denied.length > 0) {
        return {
          code: 'E_FILE_ACCESS',
          message: `cannot ${verb} ${path}: permission denied: this user (${currentUserName()}) may not read ${denied.join(' nor ')} (${code}); this says nothing of the buffer`,
          hint: "run the command as the agent's user or as root (sudo cortex-agent …)",
        };
      }
    }
    return null;
  } finally {
    try {
      db?.close();
    } catch {
      // not open
    }
  }
}

/**
 * The tables of a buffer.db that is a SQLite database of another program (it has tables, and
 * not the buffer's `meta`), listed as the buffer's open lists them (at most five); null for a
 * buffer, an empty file, or a file that does not open. A `--state-dir` pointed at another
 * program's folder, or a file copied over buffer.db: `status` said only "readBufferSnapshot
 * failed: no such table: meta — unexpected storage error".
 */
export function foreignBufferTables(path: string): string | null {
  return readOnly(path, foreignTables);
}

/** `read(db)` on `path` opened read-only; null when it does not open or the read fails. */
function readOnly<T>(path: string, read: (db: BetterSqlite3.Database) => T | null): T | null {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    return read(db);
  } catch {
    return null;
  } finally {
    try {
      db?.close();
    } catch {
      // not open
    }
  }
}

/** What `status` and `buffer check` say of a buffer.db that is another program's database (foreignBufferTables). */
export function foreignBufferText(path: string, tables: string): { message: string; hint: string } {
  return {
    message: `${path} is not a Cortex agent buffer: it is a SQLite database of another program (tables: ${tables}), without the buffer's meta table`,
    hint:
      `check that --state-dir is the agent's state folder (the packaged unit's is /var/lib/cortex-agent); if it is, "cortex-agent run" moves that file aside whole ` +
      `(kept as ${BUFFER_DB_FILE}.corrupt-<time>; nothing of it is sent) and starts a new, empty buffer — or move it aside yourself (mv ${shellQuote(path)} ${shellQuote(`${path}.not-cortex`)})`,
  };
}

/** What `buffer check` and `status` both say of a buffer.db that holds nothing (emptyBuffer). */
export function emptyBufferText(path: string, empty: 'zero_bytes' | 'no_table'): { message: string; hint: string } {
  return {
    message: `${path} holds nothing (${empty === 'zero_bytes' ? '0 bytes' : 'a SQLite file without a table'}): not a buffer yet`,
    hint: '"cortex-agent run" sets it up as a new buffer, and its seqs continue after what the server has; entries the agent had not sent when the file lost its content (a truncated copy, a disk that filled) are gone with it',
  };
}

/**
 * 'zero_bytes' or 'no_table' when buffer.db holds nothing at all (a file cut to 0 bytes, a SQLite
 * file without a table): not a damaged buffer — `run` sets it up as a new one — but whatever it
 * held is gone. Null otherwise (or when that cannot be told here: the check says why).
 */
export function emptyBuffer(path: string): 'zero_bytes' | 'no_table' | null {
  try {
    if (statSync(path).size === 0) return 'zero_bytes';
  } catch {
    return null;
  }
  return readOnly(path, (db) => ((db.prepare('SELECT count(*) AS n FROM sqlite_master').get() as { n: number }).n === 0 ? 'no_table' : null));
}

export function bufferCheck(stateDir: string, json: boolean): BufferCheckResult {
  const path = statePaths(stateDir).bufferDb;
  const denied = stateDirReadDenied(stateDir);
  if (denied !== null) return notChecked(path, json, 'E_FILE_ACCESS', denied);
  if (!existsSync(path)) {
    // as status says it
    return notChecked(path, json, 'E_NOT_ENROLLED', `${stateDir} has no buffer.db; is it an enrolled agent's state dir?`, `cortex-agent enroll --state-dir ${shellQuote(stateDir)}`);
  }
  // Nothing in it: said as such, not as DAMAGED (run makes it a new buffer; it did not move it aside).
  const empty = emptyBuffer(path);
  if (empty !== null) {
    const what = empty === 'zero_bytes' ? '0 bytes' : 'a SQLite file without a table';
    const text = emptyBufferText(path, empty);
    const message = `${text.message}; ${text.hint}`;
    if (json) return { code: 1, stdout: `${JSON.stringify({ ok: false, path, integrity: 'empty', empty, problems: [{ kind: 'empty', message }] })}\n`, stderr: '' };
    return { code: 1, stdout: `buffer:     ${path}\nintegrity:  empty (${what})\nresult:     EMPTY: not a buffer yet\n`, stderr: `cortex-agent: ${message}\n` };
  }
  const recovery = readRecovery(stateDir);
  const report: CheckReport & { degraded?: unknown } = checkBuffer(path, recovery === null ? null : lostRanges(recovery));
  if (!report.ok && report.problems.length === 1 && report.problems[0]!.kind === 'open') {
    const cannot = bufferUncheckable(path);
    if (cannot !== null) return notChecked(path, json, cannot.code, cannot.message, cannot.hint);
  }
  if (recovery !== null) report.degraded = recovery;
  // another program's database: still DAMAGED (run moves it aside as it does a damaged file), said as what it is
  const foreign = report.ok ? null : foreignBufferTables(path);
  if (foreign !== null) report.problems = [{ kind: 'open', message: foreignBufferText(path, foreign).message }];
  const code = report.ok ? 0 : 1;
  if (json) return { code, stdout: `${JSON.stringify(report)}\n`, stderr: '' };
  const lines = [
    `buffer:     ${path}`,
    `integrity:  ${report.integrity}`,
    `next_seq:   ${report.next_seq ?? '-'}   acked_seq: ${report.acked_seq ?? '-'}   rows: ${report.rows ?? '-'}   sources: ${report.sources ?? '-'}`,
    report.ok ? 'result:     ok' : `result:     DAMAGED (${report.problems.length} problem(s))`,
    ...report.problems.map((p) => `  ${p.kind}: ${p.message}`),
  ];
  if (recovery !== null) {
    const what = recovery.kind === 'rows' ? `damaged rows set aside since ${recovery.at}; their text kept in ${recovery.moved_to}` : `replaced at ${recovery.at}; damaged file kept at ${recovery.moved_to}`;
    lines.push(`degraded:   ${what}; lost seqs ${lostText(recovery)}`);
  }
  // Rows whose text no longer splits into their entries in a file SQLite finds sound (the counts
  // and the seqs then disagree with the rows too): a restart would not move it aside; the agent
  // sets each such row aside as it reaches it (DECISIONS P22).
  const onlyRows = report.integrity === 'ok' && report.problems.some((p) => p.kind === 'seq' && isDamagedRowProblem(p.message));
  const remedy = report.ok
    ? ''
    : foreign !== null
      ? `cortex-agent: ${foreignBufferText(path, foreign).hint}\n`
      : onlyRows
        ? `cortex-agent: rows of the buffer are damaged (a damaged byte on the disk; SQLite finds the file sound, and the counts that disagree follow from those rows); "cortex-agent run" sets each aside when it reaches it, with no restart: its text is kept in ${BUFFER_DB_FILE}${DAMAGED_ROWS_SUFFIX}, its entries are not sent, everything else is; check the disk (dmesg, smartctl)\n`
        : 'cortex-agent: the buffer is damaged; restart "cortex-agent run": it moves the file aside (kept), salvages what still reads and continues\n';
  return { code, stdout: `${lines.join('\n')}\n`, stderr: remedy };
}
