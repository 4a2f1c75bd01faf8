// The buffer's entry types, derived from the generated contract type LogBatchEntry
// (contract/schemas/defs.json#/$defs/LogBatchEntry): a change to the contract changes
// these with it.

import type { LogBatchEntry, LogSource, Severity } from '@cortex/agent-protocol';

export type { LogBatchEntry, LogSource, Severity };

/** An entry as a source produces it: the buffer assigns `seq` when it commits it. */
export type NewLogEntry = Omit<LogBatchEntry, 'seq'>;

/** Any JSON value (used for source positions, which the buffer stores opaquely). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * An entry a source has already written as JSON text (DECISIONS P18): what JSON.stringify
 * would give for the NewLogEntry it stands for, with its text fields storable (no NUL, no
 * lone surrogate) and its metadata within the contract's caps, so the buffer stores it as
 * it is. `rest` is the text after the opening brace (the buffer puts `"seq":N,` there);
 * `bytes` its UTF-8 length. Only the agent's own parsers make these (a test compares each
 * with the object path's text and validates it as a LogBatchEntry).
 */
export class SerializedEntry {
  constructor(
    readonly rest: string,
    readonly bytes: number,
  ) {}
}

/** What a source hands the buffer: an entry, or one already written as JSON text. */
export type BufferEntry = NewLogEntry | SerializedEntry;
