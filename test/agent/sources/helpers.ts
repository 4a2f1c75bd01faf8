import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DurableBuffer } from '../../../agent/buffer/buffer.js';
import type { LogBatchEntry } from '../../../agent/buffer/entry.js';

export function tempDir(prefix = 'cortex-src-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function openBuffer(dir: string): DurableBuffer {
  return DurableBuffer.open(join(dir, 'buffer.db'), { synchronous: 'NORMAL' });
}

/** Every entry in the buffer, in seq order. */
export function allEntries(buffer: DurableBuffer): LogBatchEntry[] {
  const out: LogBatchEntry[] = [];
  let from = 1;
  for (;;) {
    const b = buffer.readBatch(from, 10_000, 64 * 1024 * 1024);
    if (b === null) break;
    for (const e of b.entries) out.push(JSON.parse(e) as LogBatchEntry);
    from = b.seqEnd + 1;
  }
  return out;
}

export function messages(buffer: DurableBuffer): string[] {
  return allEntries(buffer).map((e) => e.message);
}

export async function waitFor(cond: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Asserts no duplicates and returns a sorted copy. */
export function sorted(xs: string[]): string[] {
  return [...xs].sort();
}

/** One line a source logged through capturingLogger(). */
export interface Logged {
  level: 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

/** A logger for a source's deps that keeps what it is told, in order. */
export function capturingLogger(): { logged: Logged[]; logger: { info: (o: object, m?: string) => void; warn: (o: object, m?: string) => void; error: (o: object, m?: string) => void } } {
  const logged: Logged[] = [];
  const at = (level: Logged['level']) => (obj: object, msg = '') => void logged.push({ level, obj: obj as Record<string, unknown>, msg });
  return { logged, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

/** Whether a process of that pid exists (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
