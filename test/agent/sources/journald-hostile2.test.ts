// The journald source against a journal (a fake journalctl) gone hostile: timestamps no date can
// hold meeting a refused cursor, journalctl ending while entries wait for the buffer.

import { appendFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { BufferStorageError } from '../../../agent/buffer/errors.js';
import { createSource, sinkFromBuffer, type JournaldSource, type LogSourceRunner, type SourceSink } from '../../../agent/sources/index.js';
import { capturingLogger, messages, openBuffer, tempDir, waitFor } from './helpers.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let journal: string;
let argsFile: string;
let pidsFile: string;
const savedEnv = { ...process.env };
const runners: LogSourceRunner[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-jh2-'));
  buffer = openBuffer(dir);
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const script = join(bin, 'journalctl');
  writeFileSync(script, `#!/bin/sh\nexec "${process.execPath}" "${join(fixtures, 'fake-journalctl.mjs')}" "$@"\n`);
  chmodSync(script, 0o755);
  journal = join(dir, 'journal.jsonl');
  argsFile = join(dir, 'args.jsonl');
  pidsFile = join(dir, 'pids');
  writeFileSync(journal, '');
  writeFileSync(argsFile, '');
  writeFileSync(pidsFile, '');
  process.env.PATH = `${bin}:${savedEnv.PATH ?? ''}`;
  process.env.FAKE_JOURNAL = journal;
  process.env.FAKE_JOURNAL_ARGS = argsFile;
  process.env.FAKE_JOURNAL_PIDS = pidsFile;
  delete process.env.FAKE_JOURNAL_BAD_CURSORS;
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  for (const pid of pids()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  process.env = { ...savedEnv };
  buffer.close();
  cleanup();
});

function start(deps: Record<string, unknown> = {}): JournaldSource {
  const r = createSource({ kind: 'journald' }, { buffer, retryMinMs: 10, restartMinMs: 30, restartMaxMs: 60, journalDirs: [join(fixtures, 'journal')], ...deps }) as JournaldSource;
  runners.push(r);
  r.start();
  return r;
}

const calls = (): string[][] => readFileSync(argsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]);
const pids = (): number[] => readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number);
const entry = (i: number, message = `entry ${i}`) => JSON.stringify({ __CURSOR: `s=m;i=${i}`, __REALTIME_TIMESTAMP: `${1718452800 + i}000000`, PRIORITY: '6', MESSAGE: message });

describe('journald: a journalctl that ends while entries wait for the buffer', () => {
  it('starts the next journalctl after the held entries: each stored once, none lost', async () => {
    let failing = false;
    const base = sinkFromBuffer(buffer);
    const sink: SourceSink = {
      ...base,
      append: (e, p) => {
        if (failing) throw new BufferStorageError('disk_full', 'append', 'buffer.db', 'SQLITE_FULL');
        return base.append(e, p);
      },
    };
    const r = start({ sink, buffer: undefined, retryMinMs: 50, retryMaxMs: 50 });
    await waitFor(() => calls().length === 1, 10_000, 'journalctl started');
    appendFileSync(journal, entry(1) + '\n');
    await waitFor(() => messages(buffer).length === 1, 10_000, 'entry 1');
    failing = true;
    appendFileSync(journal, entry(2) + '\n' + entry(3) + '\n');
    await waitFor(() => r.status().state === 'retrying', 10_000, 'retrying');
    process.kill(pids()[0]!, 'SIGKILL'); // journalctl ends (OOM killer, journald restarted, …)
    await waitFor(() => calls().length === 2, 10_000, 'journalctl restarted');
    expect(calls()[1]).toContain('--after-cursor=s=m;i=3');
    failing = false;
    appendFileSync(journal, entry(4) + '\n');
    await waitFor(() => messages(buffer).includes('entry 4'), 10_000, 'entry 4');
    expect(messages(buffer)).toEqual(['entry 1', 'entry 2', 'entry 3', 'entry 4']);
    expect(r.status()).toMatchObject({ position: { cursor: 's=m;i=4' }, last_error: null });
  });
});

describe('journald: a refused cursor whose entry has a timestamp no date can hold', () => {
  it('falls back without a crash: the stored time is the read time, and a legacy stored one is said in words', async () => {
    const now = Date.parse('2024-06-15T12:00:00Z');
    const { logged, logger } = capturingLogger();
    const r = start({ logger, clock: () => now });
    await waitFor(() => calls().length === 1, 10_000, 'journalctl started');
    appendFileSync(journal, JSON.stringify({ __CURSOR: 's=t;i=1', __REALTIME_TIMESTAMP: '9'.repeat(30), MESSAGE: 'far future' }) + '\n');
    await waitFor(() => messages(buffer).length === 1, 10_000, 'entry');
    expect(r.status().position).toEqual({ cursor: 's=t;i=1', realtime_usec: `${now}000` });
    await r.stop();
    runners.splice(0);

    process.env.FAKE_JOURNAL_BAD_CURSORS = 's=t;i=1';
    appendFileSync(journal, entry(0, 'before the stored time') + '\n' + JSON.stringify({ __CURSOR: 's=t;i=2', __REALTIME_TIMESTAMP: `${now + 1000}000`, MESSAGE: 'after' }) + '\n');
    const r2 = start({ logger, clock: () => now });
    await waitFor(() => messages(buffer).includes('after'), 10_000, 'read after the fallback');
    expect(calls()[2]).toContain(`--since=@${now / 1000}`);
    // (the far-future entry itself is met again by --since: its time is after any)
    expect(messages(buffer)).not.toContain('before the stored time');
    expect(r2.status()).toMatchObject({ cursor_fallbacks: 1 });
    await r2.stop();
    runners.splice(0);

    // A position an older agent stored with that timestamp as it was.
    buffer.append([], { source: 'journald', position: { cursor: 's=t;i=1', realtime_usec: '9'.repeat(30) } });
    const r3 = start({ logger, clock: () => now });
    await waitFor(() => r3.status().cursor_fallbacks === 1 && calls().length === 5, 10_000, 'fallback of the legacy position');
    expect(calls()[4]).toContain('--lines=0');
    expect(r3.status().last_error).toContain('fell back to entries after a time no date can hold ("999999999999999999999999999999"): from now on');
    expect(logged.filter((l) => l.msg.includes('stored journal cursor refused'))).toHaveLength(2);
  });
});
