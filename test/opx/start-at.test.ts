// start_at: "beginning" | "end" per file source (additive contract field): where a file
// never seen before is first read from. The default stays "beginning".
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { validateAgentConfig } from '@cortex/agent-protocol';
import type { DurableBuffer } from '../../agent/buffer/buffer.js';
import { createSource, type LogSourceRunner } from '../../agent/sources/index.js';
import { allEntries, messages, openBuffer, tempDir, waitFor } from '../agent/sources/helpers.js';

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
const runners: LogSourceRunner[] = [];
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  buffer = openBuffer(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  buffer.close();
  cleanup();
});

function start(path: string, extra: Record<string, unknown> = {}): LogSourceRunner {
  const r = createSource({ kind: 'file', path, ...extra }, { buffer, pollMs: 20 });
  runners.push(r);
  r.start();
  return r;
}
const write = (p: string, ls: string[]) => appendFileSync(p, ls.map((l) => `${l}\n`).join(''));

it('the contract accepts start_at "beginning" and "end" on a source, and nothing else', () => {
  const base = { heartbeat_interval_secs: 30, max_batch_entries: 100, flush_interval_ms: 200, probe_concurrency: 1 };
  expect(validateAgentConfig({ ...base, log_sources: [{ kind: 'file', path: '/var/log/a', start_at: 'end' }] })).toBe(true);
  expect(validateAgentConfig({ ...base, log_sources: [{ kind: 'file', path: '/var/log/a', start_at: 'beginning' }] })).toBe(true);
  expect(validateAgentConfig({ ...base, log_sources: [{ kind: 'file', path: '/var/log/a', start_at: 'middle' }] })).toBe(false);
});

it('start_at "end": what the file held is skipped, new lines are read; a restart resumes at the stored position (nothing written meanwhile is skipped)', async () => {
  const p = join(dir, 'a.log');
  write(p, ['old-1', 'old-2']);
  appendFileSync(p, 'partial'); // a last line still being written is read whole
  const r = start(p, { start_at: 'end' });
  await waitFor(() => r.status().position !== null);
  appendFileSync(p, '-done\n');
  write(p, ['new-1']);
  await waitFor(() => messages(buffer).length === 2);
  expect(messages(buffer)).toEqual(['partial-done', 'new-1']);
  await r.stop();
  runners.splice(0);
  write(p, ['while-stopped']);
  const again = start(p, { start_at: 'end' });
  await waitFor(() => messages(buffer).length === 3);
  expect(messages(buffer)).toEqual(['partial-done', 'new-1', 'while-stopped']);
  expect(again.status().last_error).toBeNull();
});

it('default (and "beginning"): a never-seen file is read from its start', async () => {
  const a = join(dir, 'a.log');
  const b = join(dir, 'b.log');
  write(a, ['a-1', 'a-2']);
  write(b, ['b-1']);
  start(a);
  start(b, { start_at: 'beginning' });
  await waitFor(() => messages(buffer).length === 3);
  expect(messages(buffer).sort()).toEqual(['a-1', 'a-2', 'b-1']);
});

it('start_at "end": a file that appears after the start, and a glob match created later, are read from their start', async () => {
  const later = join(dir, 'later.log');
  const r = start(later, { start_at: 'end' });
  await waitFor(() => r.status().state === 'waiting');
  write(later, ['l-1', 'l-2']);
  await waitFor(() => messages(buffer).length === 2);

  const there = join(dir, 'app-1.log');
  write(there, ['there-old']);
  const g = start(join(dir, 'app-*.log'), { start_at: 'end' });
  await waitFor(() => (g.status().files ?? []).length === 1 && g.status().files?.[0]?.position !== null);
  write(there, ['there-new']);
  writeFileSync(join(dir, 'app-2.log'), 'fresh-1\nfresh-2\n');
  await waitFor(() => messages(buffer).length === 5);
  expect(messages(buffer).slice(2).sort()).toEqual(['fresh-1', 'fresh-2', 'there-new']);
  // a plain line keeps the time it was read (it has no timestamp of its own)
  const plain = allEntries(buffer).find((e) => e.message === 'fresh-1');
  expect(Math.abs(Date.parse(plain?.ts as string) - Date.now())).toBeLessThan(60_000);
});
