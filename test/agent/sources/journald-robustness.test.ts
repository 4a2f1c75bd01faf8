// The journald source against journalctl output gone wrong (a JSON `null`, garbage, lines cut
// short), a journalctl that keeps ending, and its stop: nothing of it may end the agent or leave
// journalctl running behind it.

import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { BufferStorageError } from '../../../agent/buffer/errors.js';
import { BasicSourceManager, createSource, sinkFromBuffer, type JournaldSource, type LogSourceRunner, type SourceFactory, type SourceSink } from '../../../agent/sources/index.js';
import { STABLE_RUN_MS } from '../../../agent/sources/journald.source.js';
import { sourceLines } from '../../../agent/cli-main.js';
import { alive, allEntries, capturingLogger, messages, openBuffer, tempDir, waitFor } from './helpers.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let journal: string;
let argsFile: string;
let pidsFile: string;
/** While this file exists, the fake journalctl fails at once (exit 1, a line on stderr). */
let failFile: string;
const savedEnv = { ...process.env };
const runners: LogSourceRunner[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-jdr-'));
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
      // gone, as it should be
    }
  }
  process.env = { ...savedEnv };
  buffer.close();
  cleanup();
});



function start(deps: Record<string, unknown> = {}): JournaldSource {
  const r = createSource({ kind: 'journald' }, { buffer, retryMinMs: 10, journalDirs: [join(fixtures, 'journal')], ...deps }) as JournaldSource;
  runners.push(r);
  r.start();
  return r;
}

const calls = (): string[][] => readFileSync(argsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]);
const pids = (): number[] => readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number);
const entry = (i: number, message = `entry ${i}`) => JSON.stringify({ __CURSOR: `s=m;i=${i}`, __REALTIME_TIMESTAMP: `${1718452800 + i}000000`, PRIORITY: '6', MESSAGE: message });

describe('journald: output lines that are not entries (fix items 2 and 5)', () => {
  it('a `null` line, garbage and a line cut short are skipped, counted as lines_malformed (not as read), logged once with a short excerpt; the entries around them are read; a restart meets them again without harm', async () => {
    const { logged, logger } = capturingLogger();
    const r = start({ logger });
    await waitFor(() => calls().length === 1, 10_000, 'journalctl started');
    const long = `garbage ${'x'.repeat(5000)}`;
    appendFileSync(journal, [entry(1), long, 'null', entry(2), 'this is not json', entry(3).slice(0, 30), '[1,2]', '42', '"str"', entry(3), '{"MESSAGE": "no cursor"}', entry(4)].join('\n') + '\n');
    await waitFor(() => messages(buffer).includes('entry 4'), 10_000, 'entry 4');
    expect(messages(buffer)).toEqual(['entry 1', 'entry 2', 'entry 3', 'no cursor', 'entry 4']);
    expect(r.status()).toMatchObject({ lines_malformed: 7, lines_read: 5, last_error: null, position: { cursor: 's=m;i=4' } });
    const said = logged.filter((l) => l.msg.includes("line of journalctl's output"));
    expect(said).toHaveLength(1); // at most once a minute
    expect(said[0]).toMatchObject({ level: 'warn', obj: { lines_malformed: 1, chars: long.length } });
    expect(said[0]!.msg).toBe("journald: a line of journalctl's output is not JSON, not a JSON object: skipped (said at most once a minute)");
    expect(said[0]!.obj.excerpt).toBe(long.slice(0, 200));
    expect(sourceLines(r.status())[0]).toContain(', 7 malformed lines, not read position=');

    // the agent restarted: the `null` after the stored cursor is met again, and skipped again
    await r.stop();
    runners.splice(runners.indexOf(r), 1);
    appendFileSync(journal, ['null', entry(5)].join('\n') + '\n');
    const r2 = start();
    await waitFor(() => messages(buffer).includes('entry 5'), 10_000, 'entry 5');
    expect(calls()[1]).toContain('--after-cursor=s=m;i=4');
    expect(r2.status()).toMatchObject({ lines_malformed: 1, lines_read: 1 });
  });

  it('lines_malformed reaches the agent status (the manager passes it through, as entries_too_large)', async () => {
    const factory: SourceFactory = {
      kind: 'journald',
      start: (cfg, sink) => {
        const r = createSource(cfg, { sink, retryMinMs: 10, journalDirs: [join(fixtures, 'journal')] });
        r.start();
        return r;
      },
    };
    const m = new BasicSourceManager(sinkFromBuffer(buffer), [factory]);
    m.apply([{ kind: 'journald' }]);
    await waitFor(() => calls().length === 1, 10_000, 'journalctl started');
    appendFileSync(journal, ['null', entry(1)].join('\n') + '\n');
    await waitFor(() => messages(buffer).length === 1, 10_000, 'entry 1');
    expect(m.status()[0]).toMatchObject({ kind: 'journald', lines_malformed: 1, lines_read: 1 });
    await m.close();
  });

  it('an entry whose __REALTIME_TIMESTAMP no date can hold is read with the read time, not a crash', async () => {
    start({ clock: () => Date.parse('2024-01-01T00:00:00Z') });
    await waitFor(() => calls().length === 1, 10_000, 'journalctl started');
    appendFileSync(journal, JSON.stringify({ __CURSOR: 's=t;i=1', __REALTIME_TIMESTAMP: '9'.repeat(30), MESSAGE: 'far future' }) + '\n');
    await waitFor(() => messages(buffer).length === 1, 10_000, 'entry');
    expect(allEntries(buffer)[0]).toMatchObject({ message: 'far future', ts: '2024-01-01T00:00:00.000Z' });
  });
});

describe('journald: the journalctl child (fix item 2: verified)', () => {
  it('stop() ends journalctl; a stop while a restart is due starts none', async () => {
    const r = start({ restartMinMs: 200, restartMaxMs: 400 });
    await waitFor(() => pids().length === 1, 10_000, 'journalctl started');
    const [pid] = pids();
    expect(alive(pid!)).toBe(true);
    await r.stop();
    runners.splice(runners.indexOf(r), 1);
    expect(alive(pid!)).toBe(false);

    const r2 = start({ restartMinMs: 200, restartMaxMs: 400 });
    await waitFor(() => pids().length === 2, 10_000, 'second journalctl');
    process.kill(pids()[1]!, 'SIGKILL');
    await waitFor(() => r2.status().state === 'error', 10_000, 'exit seen');
    await r2.stop();
    runners.splice(runners.indexOf(r2), 1);
    await new Promise((res) => setTimeout(res, 400)); // past the restart that was due
    expect(pids()).toHaveLength(2);
  });
});

describe('journald: restart backoff (fix item 6)', () => {
  it('grows while journalctl keeps ending at once, and starts afresh after a run of STABLE_RUN_MS', async () => {
    let now = 1_000_000;
    const { logged, logger } = capturingLogger();
    start({ logger, clock: () => now, restartMinMs: 20, restartMaxMs: 2000 });
    const killRun = async (n: number) => {
      await waitFor(() => pids().length === n, 10_000, `run ${n}`);
      await waitFor(() => existsSync(argsFile) && calls().length === n, 10_000, `run ${n} running`);
      process.kill(pids()[n - 1]!, 'SIGKILL');
      await waitFor(() => logged.filter((l) => l.level === 'error').length === n, 10_000, `exit ${n} seen`);
    };
    await killRun(1);
    await killRun(2);
    await killRun(3);
    // the fourth run lasts (by the source's clock)
    await waitFor(() => pids().length === 4 && calls().length === 4, 10_000, 'run 4');
    now += STABLE_RUN_MS;
    process.kill(pids()[3]!, 'SIGKILL');
    await waitFor(() => logged.filter((l) => l.level === 'error').length === 4, 10_000, 'exit 4 seen');
    const errors = logged.filter((l) => l.level === 'error');
    expect(errors.map((l) => l.obj.retry_ms)).toEqual([20, 40, 80, 20]);
    expect(errors[3]!.msg).toBe('journald source: journalctl exited with SIGKILL; restarting in 20 ms');
  });
});

// Timestamps no date can hold meeting a refused cursor, journalctl ending while entries wait for
// the buffer (DECISIONS D29).

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
    const r = start({ sink, buffer: undefined, retryMinMs: 50, retryMaxMs: 50, restartMinMs: 30, restartMaxMs: 60 });
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
    const r = start({ logger, clock: () => now, restartMinMs: 30, restartMaxMs: 60 });
    await waitFor(() => calls().length === 1, 10_000, 'journalctl started');
    appendFileSync(journal, JSON.stringify({ __CURSOR: 's=t;i=1', __REALTIME_TIMESTAMP: '9'.repeat(30), MESSAGE: 'far future' }) + '\n');
    await waitFor(() => messages(buffer).length === 1, 10_000, 'entry');
    expect(r.status().position).toEqual({ cursor: 's=t;i=1', realtime_usec: `${now}000` });
    await r.stop();
    runners.splice(0);

    process.env.FAKE_JOURNAL_BAD_CURSORS = 's=t;i=1';
    appendFileSync(journal, entry(0, 'before the stored time') + '\n' + JSON.stringify({ __CURSOR: 's=t;i=2', __REALTIME_TIMESTAMP: `${now + 1000}000`, MESSAGE: 'after' }) + '\n');
    const r2 = start({ logger, clock: () => now, restartMinMs: 30, restartMaxMs: 60 });
    await waitFor(() => messages(buffer).includes('after'), 10_000, 'read after the fallback');
    expect(calls()[2]).toContain(`--since=@${now / 1000}`);
    // (the far-future entry itself is met again by --since: its time is after any)
    expect(messages(buffer)).not.toContain('before the stored time');
    expect(r2.status()).toMatchObject({ cursor_fallbacks: 1 });
    await r2.stop();
    runners.splice(0);

    // A position an older agent stored with that timestamp as it was.
    buffer.append([], { source: 'journald', position: { cursor: 's=t;i=1', realtime_usec: '9'.repeat(30) } });
    const r3 = start({ logger, clock: () => now, restartMinMs: 30, restartMaxMs: 60 });
    await waitFor(() => r3.status().cursor_fallbacks === 1 && calls().length === 5, 10_000, 'fallback of the legacy position');
    expect(calls()[4]).toContain('--lines=0');
    expect(r3.status().last_error).toContain('fell back to entries after a time no date can hold ("999999999999999999999999999999"): from now on');
    expect(logged.filter((l) => l.msg.includes('stored journal cursor refused'))).toHaveLength(2);
  });
});

// The state across pause() and resume() (a DECISIONS D29 leftover, D33): the agent pauses every
// source while its buffer cannot store and resumes them after; a source whose journalctl had
// failed was then shown `reading`, with no journalctl running and its error still in last_error,
// and one restarted while paused was shown `reading` while it read nothing.
const runs = (): number => readFileSync(argsFile, 'utf8').split('\n').filter(Boolean).length;
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
