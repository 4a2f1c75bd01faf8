// The buffer's entry types, derived from the generated contract type LogBatchEntry
// (contract/schemas/defs.json#/$defs/LogBatchEntry): a change to the contract changes
// these with it.

import type { LogBatchEntry, LogSource, Severity } from '@cortex/agent-protocol';

export type { LogBatchEntry, LogSource, Severity };

/** An entry as a source produces it: the buffer assigns `seq` when it commits it. */
export type NewLogEntry = Omit<LogBatchEntry, 'seq'>;

/** Any JSON value (used for source positions, which the buffer stores opaquely). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
