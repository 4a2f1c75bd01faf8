// Local mirror of the contract's LogBatchEntry (contract/schemas/defs.json, seed 4.4).
// Replace with the type exported by `@cortex/agent-protocol` once generated/ lands;
// the shapes are identical, so the swap is an import change only.

export type Severity = 'emerg' | 'alert' | 'crit' | 'err' | 'warning' | 'notice' | 'info' | 'debug';

/** "journald", "file:<path>", "docker:<container>" or "custom:<name>". */
export type LogSource = string;

export interface LogBatchEntry {
  seq: number;
  ts: string;
  severity: Severity;
  facility?: string | null;
  app_name?: string | null;
  process_id?: string | null;
  message: string;
  source: LogSource;
  metadata?: { [key: string]: unknown } | null;
}

/** An entry as a source produces it: the buffer assigns `seq` when it commits it. */
export type NewLogEntry = Omit<LogBatchEntry, 'seq'>;

/** Any JSON value (used for source positions, which the buffer stores opaquely). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
