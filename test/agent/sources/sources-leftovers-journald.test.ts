// The journald source's state across pause() and resume() (a DECISIONS D29 leftover): the agent
// pauses every source while its buffer cannot store and resumes them after; a source whose
// journalctl had failed was then shown `reading`, with no journalctl running and its error still
// in last_error, and one restarted while paused was shown `reading` while it read nothing.

import { appendFileSync, chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { createSource, type JournaldSource, type LogSourceRunner } from '../../../agent/sources/index.js';
import { messages, openBuffer, tempDir, waitFor } from './helpers.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let journal: string;
let argsFile: string;
/** While this file exists, the fake journalctl fails at once (exit 1, a line on stderr). */
let failFile: string;
const savedEnv = { ...process.env };
const runners: LogSourceRunner[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-jdl-'));
  buffer = openBuffer(dir);
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  failFile = join(dir, 'fail');
  const script = join(bin, 'journalctl');
  writeFileSync(
    script,
    `#!/bin/sh\nif [ -e "${failFile}" ]; then echo "Failed to open the journal: Input/output error" >&2; exit 1; fi\nexec "${process.execPath}" "${join(fixtures, 'fake-journalctl.mjs')}" "$@"\n`,
  );
  chmodSync(script, 0o755);
  journal = join(dir, 'journal.jsonl');
  argsFile = join(dir, 'args.jsonl');
  writeFileSync(journal, '');
  writeFileSync(argsFile, '');
  process.env.PATH = `${bin}:${savedEnv.PATH ?? ''}`;
  process.env.FAKE_JOURNAL = journal;
  process.env.FAKE_JOURNAL_ARGS = argsFile;
  delete process.env.FAKE_JOURNAL_BAD_CURSORS;
  delete process.env.FAKE_JOURNAL_PIDS;
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  process.env = { ...savedEnv };
  buffer.close();
  cleanup();
});

function start(deps: Record<string, unknown>): JournaldSource {
  const r = createSource({ kind: 'journald' }, { buffer, retryMinMs: 10, journalDirs: [join(fixtures, 'journal')], ...deps }) as JournaldSource;
  runners.push(r);
  r.start();
  return r;
}

const runs = (): number => readFileSync(argsFile, 'utf8').split('\n').filter(Boolean).length;
const entry = (i: number) => JSON.stringify({ __CURSOR: `s=m;i=${i}`, __REALTIME_TIMESTAMP: `${1718452800 + i}000000`, PRIORITY: '6', MESSAGE: `entry ${i}` });
const failed = 'journalctl exited with 1: Failed to open the journal: Input/output error';

describe('journald: pause() and resume() leave a source in error in error', () => {
  it('a source whose journalctl failed (its restart due) is `error` while paused and after resume(), with its error; not `reading`', async () => {
    writeFileSync(failFile, '');
    const r = start({ restartMinMs: 60_000, restartMaxMs: 60_000 }); // no restart during the test
    await waitFor(() => r.status().state === 'error', 10_000, 'journalctl failed');
    expect(r.status().last_error).toBe(failed);
    r.pause();
    expect(r.status()).toMatchObject({ state: 'error', last_error: failed });
    r.resume();
    expect(r.status()).toMatchObject({ state: 'error', last_error: failed });
    // twice, as the agent's storage pauses come and go
    r.pause();
    r.resume();
    expect(r.status().state).toBe('error');
  });

  it('a journalctl restarted while the source is paused: `paused` (reading nothing) until resume(), then `reading` and its entries stored', async () => {
    writeFileSync(failFile, '');
    const r = start({ restartMinMs: 100, restartMaxMs: 100 });
    await waitFor(() => r.status().state === 'error', 10_000, 'journalctl failed');
    r.pause();
    rmSync(failFile); // the next run works
    await waitFor(() => runs() === 1, 10_000, 'journalctl restarted');
    await waitFor(() => r.status().state !== 'error', 10_000, 'the restart seen');
    expect(r.status().state).toBe('paused');
    appendFileSync(journal, entry(1) + '\n');
    r.resume();
    expect(r.status().state).toBe('reading');
    await waitFor(() => messages(buffer).includes('entry 1'), 10_000, 'entry 1');
    expect(r.status()).toMatchObject({ state: 'reading', last_error: null });
  });
});
