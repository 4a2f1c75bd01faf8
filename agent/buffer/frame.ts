// Splices buffered entry texts into logs.push JSON without parsing or re-serializing
// them: the buffer stores each LogBatchEntry as its final JSON text.

import type { BufferBatch } from './buffer.js';

/** The logs.push params object as JSON text: {"seq_start":S,"entries":[...]}. */
export function logsPushParamsJson(batch: BufferBatch): string {
  return `{"seq_start":${batch.seqStart},"entries":[${batch.entries.join(',')}]}`;
}

/** A complete logs.push JSON-RPC request frame with the given id. */
export function logsPushRequestFrame(id: number | string, batch: BufferBatch): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"logs.push","params":${logsPushParamsJson(batch)}}`;
}

