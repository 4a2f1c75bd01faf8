// From one line of text to a LogBatchEntry (DESIGN.md 5.12, DECISIONS.md D2–D4, D8):
// the parsed fields when the line was parsed, else the plain line at the read time;
// `labels` and the split mark go into metadata. Shared by the file and custom sources.

import type { LogSource, NewLogEntry } from '../buffer/entry.js';
import { FACILITIES, SEVERITIES, parseLine, scanRfc5424, type ParsedLine } from './syslog-parse.js';
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

/**
 * lineEntry(text, parseLine(text, nowMs, nowIso), source, labels, null, nowIso), the same
 * entry key for key, for a whole line (not a split part). An RFC 5424 line goes from the
 * scanned fields straight into the entry and its metadata (no ParsedLine between, and the
 * metadata object is built with its labels instead of growing by one property); any other
 * line takes the lineEntry path.
 */
export function parsedLineEntry(text: string, nowMs: number, nowIso: string, source: LogSource, labels: Record<string, string> | null): NewLogEntry {
  // parseLine strips a BOM and a trailing CR first: those lines take the general path
  const last = text.charCodeAt(text.length - 1);
  const f = text.charCodeAt(0) === 60 /* < */ && last !== 13 ? scanRfc5424(text, nowMs) : null;
  if (f === null) return lineEntry(text, parseLine(text, nowMs, nowIso), source, labels, null, nowIso);
  const h = f.hostname, m = f.msgid, sd = f.structured_data;
  let metadata: Record<string, unknown> | null = null;
  if (h !== null && m !== null && sd !== null) {
    metadata = labels !== null ? { hostname: h, msgid: m, structured_data: sd, labels } : { hostname: h, msgid: m, structured_data: sd };
  } else if (h !== null || m !== null || sd !== null || labels !== null) {
    metadata = {};
    if (h !== null) metadata.hostname = h;
    if (m !== null) metadata.msgid = m;
    if (sd !== null) metadata.structured_data = sd;
    if (labels !== null) metadata.labels = labels;
  }
  const severity = SEVERITIES[f.pri & 7]!, facility = FACILITIES[f.pri >> 3]!;
  // the usual line, all fields there: one literal (its properties in the object, no backing store to grow)
  if (f.app_name !== null && f.process_id !== null && metadata !== null) {
    return { ts: f.ts, severity, message: f.message, source, facility, app_name: f.app_name, process_id: f.process_id, metadata };
  }
  const e: NewLogEntry = { ts: f.ts, severity, message: f.message, source, facility };
  if (f.app_name !== null) e.app_name = f.app_name;
  if (f.process_id !== null) e.process_id = f.process_id;
  if (metadata !== null) e.metadata = metadata;
  return e;
}
