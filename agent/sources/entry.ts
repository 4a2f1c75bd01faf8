// From one line of text to a LogBatchEntry (DESIGN.md 5.12, DECISIONS.md D2–D4, D8):
// the parsed fields when the line was parsed, else the plain line at the read time;
// `labels` and the split mark go into metadata. Shared by the file and custom sources.

import type { LogSource, NewLogEntry } from '../buffer/entry.js';
import type { ParsedLine } from './syslog-parse.js';
import type { SplitMark } from './text.js';

/**
 * The entry for `text` read at nowIso. `p` is parseLine(text) (null: a part of a split
 * line, sent as it is); its metadata object is fresh for every line and is extended in
 * place. Optional fields that are null are left out: smaller entries, same meaning.
 */
export function lineEntry(
  text: string,
  p: ParsedLine | null,
  source: LogSource,
  labels: Record<string, string> | null,
  split: SplitMark | null,
  nowIso: string,
): NewLogEntry {
  let metadata: Record<string, unknown> | null = p?.metadata ?? null;
  if (labels !== null || split !== null) {
    if (metadata === null) metadata = {};
    if (labels !== null) metadata.labels = labels;
    if (split !== null) metadata.split = split;
  }
  const e: NewLogEntry = { ts: p?.ts ?? nowIso, severity: p?.severity ?? 'info', message: p?.message ?? text, source };
  if (p !== null) {
    if (p.facility !== null) e.facility = p.facility;
    if (p.app_name !== null) e.app_name = p.app_name;
    if (p.process_id !== null) e.process_id = p.process_id;
  }
  if (metadata !== null) e.metadata = metadata;
  return e;
}
