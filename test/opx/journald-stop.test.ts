// Ctrl-C or a service stop signals the whole process group, so journalctl ends a moment
// before the agent stops its sources: that clean stop is not logged as an error.
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { DurableBuffer } from '../../agent/buffer/buffer.js';
import { createSource, type JournaldSource } from '../../agent/sources/index.js';
import { openBuffer, tempDir, waitFor } from '../agent/sources/helpers.js';

const fixtures = fileURLToPath(new URL('../agent/sources/fixtures/', import.meta.url));
let cleanup: () => void;
let buffer: DurableBuffer;
let argsFile: string;
const savedEnv = { ...process.env };
let runner: JournaldSource | undefined;
const logged: { level: string; msg: string }[] = [];
const logger = {
  info: (_o: object, msg = '') => logged.push({ level: 'info', msg }),
  warn: (_o: object, msg = '') => logged.push({ level: 'warn', msg }),
  error: (_o: object, msg = '') => logged.push({ level: 'error', msg }),
};

beforeEach(() => {
  let dir: string;
  ({ dir, cleanup } = tempDir());
  buffer = openBuffer(dir);
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'journalctl'), `#!/bin/sh\nexec "${process.execPath}" "${join(fixtures, 'fake-journalctl.mjs')}" "$@"\n`);
  chmodSync(join(bin, 'journalctl'), 0o755);
  writeFileSync(join(dir, 'journal.jsonl'), '');
  argsFile = join(dir, 'args.jsonl');
  writeFileSync(argsFile, '');
  process.env.PATH = `${bin}:${savedEnv.PATH ?? ''}`;
  process.env.FAKE_JOURNAL = join(dir, 'journal.jsonl');
  process.env.FAKE_JOURNAL_ARGS = argsFile;
  logged.length = 0;
});
afterEach(async () => {
  await runner?.stop();
  process.env = { ...savedEnv };
  buffer.close();
  cleanup();
});

const calls = () => readFileSync(argsFile, 'utf8').split('\n').filter(Boolean).length;
const childOf = (r: JournaldSource) => (r as unknown as { child: ChildProcess | null }).child;

async function startAndSignal(signal: NodeJS.Signals): Promise<JournaldSource> {
  runner = createSource({ kind: 'journald' }, { buffer, retryMinMs: 10, logger, journalDirs: [join(fixtures, 'journal')] }) as JournaldSource;
  runner.start();
  await waitFor(() => calls() === 1);
  const child = childOf(runner) as ChildProcess;
  const gone = new Promise((r) => child.once('close', r));
  child.kill(signal); // what the terminal's Ctrl-C / systemd's stop does to the group
  await gone;
  return runner;
}

it('journalctl ended by SIGINT, then the agent stops the source: nothing logged, no error in status', async () => {
  const r = await startAndSignal('SIGINT');
  await r.stop();
  expect(logged).toEqual([]);
  expect(r.status().last_error).toBeNull();
});

it('journalctl ended by SIGTERM while the agent keeps running: restarted, with a warning, not an error', async () => {
  const r = await startAndSignal('SIGTERM');
  await waitFor(() => calls() === 2);
  expect(logged.map((l) => l.level)).toEqual(['warn']);
  expect(logged[0]?.msg).toMatch(/ended by (SIGTERM|a signal \(exit 0\))/);
  await waitFor(() => r.status().state === 'reading');
});

it('journalctl ended by SIGTERM (it exits 0, as the real one does), then the agent stops the source: nothing logged', async () => {
  const r = await startAndSignal('SIGTERM');
  await r.stop();
  expect(logged).toEqual([]);
});

it('journalctl failing on its own is still an error', async () => {
  process.env.FAKE_JOURNAL = '/nonexistent/journal.jsonl'; // the fake crashes reading it
  runner = createSource({ kind: 'journald' }, { buffer, retryMinMs: 10, logger, journalDirs: [join(fixtures, 'journal')] }) as JournaldSource;
  runner.start();
  await waitFor(() => logged.some((l) => l.level === 'error'));
  expect(runner.status().last_error).toMatch(/journalctl exited with 1/);
});
