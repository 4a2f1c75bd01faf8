// The file source's parsing step: one chunk of file bytes → the entries to commit with
// it (line splitting from ../text.ts, parsing from ../syslog-parse.ts, the entry shape
// from ../entry.ts). Lines whose metadata breaks a contract cap are sent degraded
// (DECISIONS H2): plain text with metadata {"cortex_metadata_dropped": …}, reported
// through onDegraded.

import { LIMITS } from '@cortex/agent-protocol';
import type { BufferEntry, LogSource } from '../../buffer/entry.js';
import { lineEntry, parsedLineEntry } from '../entry.js';
import { METADATA_DROPPED, entryJsonContext, rfc5424EntryJson, type EntryJsonContext } from '../syslog-parse.js';
import { entryBytesContext, rfc5424EntryBytes, type EntryBytesContext } from './rfc5424-bytes.js';
import { scanLines, type ScannedChunk, type SplitMark } from '../text.js';

export interface FileLineOptions {
  source: LogSource;
  filter: RegExp | null;
  labels: Record<string, string> | null;
  /** A line was dropped by `filter`. */
  onFiltered: () => void;
  /** A line was sent degraded, and why. */
  onDegraded: (why: string) => void;
}

export interface ParsedChunk extends ScannedChunk {
  entries: BufferEntry[];
}

/** entryJsonContext and entryBytesContext per source and labels: one source's chunks share them. */
let lastCtx: { source: string; labels: Record<string, string> | null; ctx: EntryJsonContext | null; bytes: EntryBytesContext | null } | null = null;

function jsonContext(source: string, labels: Record<string, string> | null): NonNullable<typeof lastCtx> {
  if (lastCtx === null || lastCtx.source !== source || lastCtx.labels !== labels) {
    const ctx = entryJsonContext(source, labels);
    lastCtx = { source, labels, ctx, bytes: ctx === null ? null : entryBytesContext(ctx) };
  }
  return lastCtx;
}

/** Why a parsed line's metadata was dropped, as the status and the log say it. */
function degradedWhy(dropped: string): string {
  return dropped === 'depth'
    ? `JSON nested deeper than metadata_max_depth = ${LIMITS.metadata_max_depth}`
    : `JSON metadata larger than metadata_max_bytes = ${LIMITS.metadata_max_bytes}`;
}

/**
 * Turns buf[0, n) (file bytes at a line start, or inside a line `part` parts in) into
 * entries read at nowMs. `final`: the tail without a newline is a line too.
 */
export function parseChunk(buf: Buffer, n: number, final: boolean, part: number, nowMs: number, o: FileLineOptions): ParsedChunk {
  const nowIso = new Date(nowMs).toISOString();
  const entries: BufferEntry[] = [];
  const filter = o.filter;
  const { ctx, bytes } = jsonContext(o.source, o.labels);
  // A printable-ASCII RFC 5424 line as JSON text from its bytes, before any string of it is made (DECISIONS P19)
  const take =
    bytes === null || filter !== null
      ? undefined
      : (a: number, end: number): boolean => {
          const j = rfc5424EntryBytes(buf, a, end, nowIso, bytes);
          if (j === null) return false;
          entries.push(j);
          return true;
        };
  const scanned = scanLines(buf, n, final, part, (text: string, split: SplitMark | null) => {
    if (filter !== null && !filter.test(text)) {
      o.onFiltered();
      return;
    }
    if (split !== null) {
      entries.push(lineEntry(text, null, o.source, o.labels, split, nowIso));
      return;
    }
    // An RFC 5424 line (no trailing CR, which parseLine strips) as JSON text straight from the scan (DECISIONS P18)
    if (ctx !== null && text.charCodeAt(0) === 60 /* < */ && text.charCodeAt(text.length - 1) !== 13) {
      const j = rfc5424EntryJson(text, nowMs, ctx);
      if (j !== null) {
        entries.push(j);
        return;
      }
    }
    const e = parsedLineEntry(text, nowMs, nowIso, o.source, o.labels);
    const dropped = e.metadata?.[METADATA_DROPPED];
    if (typeof dropped === 'string') o.onDegraded(degradedWhy(dropped));
    entries.push(e);
  }, take);
  return { ...scanned, entries };
}
