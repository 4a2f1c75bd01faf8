// journal.tail: `journalctl -u <unit> -n <lines> --output=json --no-pager`, one JSON object per
// line. The unit cannot start with '-' (schema), so it is never read as an option; journalctl
// takes no positional paths (its positionals are FIELD=value matches, which the unit pattern
// cannot form: it has no '=').

import { ProbeExecutionFailedError, type JournalTailEntry, type JournalTailOutput } from '@cortex/agent-protocol';
import { defineProbe } from './types.js';

export const DEFAULT_JOURNAL_LINES = 100;
export const MAX_MESSAGE_CHARS = 65536;
/** Total message characters returned; older entries beyond it are left out (frames are at most 1 MiB). */
export const JOURNAL_BUDGET_CHARS = 512 * 1024;

export function journalctlArgs(unit: string, lines: number): string[] {
  return ['-u', unit, '-n', String(lines), '--output=json', '--no-pager'];
}

/** journalctl JSON field values: a string, null, an array of byte values (binary or invalid UTF-8), or an array of those (repeated field). */
function fieldText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) {
    if (value.length > 0 && value.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return Buffer.from(value as number[]).toString('utf8');
    for (const v of value) {
      const t = fieldText(v);
      if (t !== null) return t;
    }
  }
  return null;
}

/** __REALTIME_TIMESTAMP (microseconds since the epoch) as ISO 8601 UTC with microseconds. */
export function realtimeToIso(us: string): string | null {
  if (!/^\d{1,17}$/.test(us)) return null;
  const micros = BigInt(us);
  const secs = micros / 1_000_000n;
  const frac = (micros % 1_000_000n).toString().padStart(6, '0');
  const d = new Date(Number(secs) * 1000);
  if (Number.isNaN(d.getTime())) return null;
  return `${d.toISOString().slice(0, 19)}.${frac}Z`;
}

export interface ParsedJournal {
  entries: JournalTailEntry[];
  truncated: boolean;
  /** Lines that were not JSON objects with a timestamp (skipped). */
  skipped: number;
}

/** journalctl --output=json text → entries (oldest first), cut to the character budget. */
export function parseJournalJson(text: string, budgetChars = JOURNAL_BUDGET_CHARS): ParsedJournal {
  const all: JournalTailEntry[] = [];
  let truncated = false;
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch {
      skipped++;
      continue;
    }
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      skipped++;
      continue;
    }
    const rec = obj as Record<string, unknown>;
    const ts = realtimeToIso(fieldText(rec['__REALTIME_TIMESTAMP']) ?? '');
    if (ts === null) {
      skipped++;
      continue;
    }
    let message = fieldText(rec['MESSAGE']) ?? '';
    if (message.length > MAX_MESSAGE_CHARS) {
      message = message.slice(0, MAX_MESSAGE_CHARS);
      truncated = true;
    }
    const entry: JournalTailEntry = { ts, message };
    const prio = fieldText(rec['PRIORITY']);
    if (prio !== null && /^[0-7]$/.test(prio)) entry.priority = Number(prio);
    const ident = fieldText(rec['SYSLOG_IDENTIFIER']);
    if (ident !== null) entry.identifier = ident.slice(0, 256);
    const pid = fieldText(rec['_PID']);
    if (pid !== null && /^[1-9]\d{0,9}$/.test(pid)) entry.pid = Number(pid);
    all.push(entry);
  }
  // Keep the newest entries that fit the budget.
  let used = 0;
  let from = all.length;
  while (from > 0) {
    const cost = all[from - 1]!.message.length + (all[from - 1]!.identifier?.length ?? 0) + 64;
    if (used + cost > budgetChars) {
      truncated = true;
      break;
    }
    used += cost;
    from--;
  }
  return { entries: all.slice(from), truncated, skipped };
}

export const journalTailProbe = defineProbe('journal.tail', async (args, ctx) => {
  const lines = args.lines ?? DEFAULT_JOURNAL_LINES;
  const env = { ...ctx.settings.env, LC_ALL: 'C', SYSTEMD_COLORS: '0', SYSTEMD_PAGER: '' };
  const res = await ctx.runTool(ctx.settings.commands.journalctl, journalctlArgs(args.unit, lines), { env, maxStdoutBytes: 32 * 1024 * 1024 });
  const parsed = parseJournalJson(res.stdout);
  if (parsed.entries.length === 0 && parsed.skipped > 0) {
    throw new ProbeExecutionFailedError({ stderr: res.stderr ?? `journalctl output was not JSON (${parsed.skipped} lines)`, exit_code: res.exitCode, probe: ctx.probe });
  }
  const output: JournalTailOutput = { unit: args.unit, entries: parsed.entries, truncated: parsed.truncated };
  return { output, exit_code: res.exitCode, stderr: res.stderr };
});
