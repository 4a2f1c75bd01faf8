import { appendFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { createSource, createSourceManager, mapJournalEntry, parseJournalMatches, type JournaldSource, type LogSourceRunner } from '../../../agent/sources/index.js';
import { allEntries, messages, openBuffer, tempDir, waitFor } from './helpers.js';
import { silentLogger } from '../../../agent/sources/types.js';
import { JOURNAL_FIELDS } from '../../../agent/sources/journald.source.js';
import { sourceLines } from '../../../agent/cli-main.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const recorded = readFileSync(join(fixtures, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let journal: string;
let argsFile: string;
const savedEnv = { ...process.env };
const runners: LogSourceRunner[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  buffer = openBuffer(dir);
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const script = join(bin, 'journalctl');
  writeFileSync(script, `#!/bin/sh\nexec "${process.execPath}" "${join(fixtures, 'fake-journalctl.mjs')}" "$@"\n`);
  chmodSync(script, 0o755);
  journal = join(dir, 'journal.jsonl');
  argsFile = join(dir, 'args.jsonl');
  writeFileSync(journal, '');
  writeFileSync(argsFile, '');
  process.env.PATH = `${bin}:${savedEnv.PATH ?? ''}`;
  process.env.FAKE_JOURNAL = journal;
  process.env.FAKE_JOURNAL_ARGS = argsFile;
  delete process.env.FAKE_JOURNAL_BAD_CURSORS;
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  process.env = { ...savedEnv };
  buffer.close();
  cleanup();
});

function start(extra: Record<string, unknown> = {}, deps: Record<string, unknown> = {}): JournaldSource {
  // journalDirs: a folder with a journal file (this machine may have no journal at all)
  const r = createSource({ kind: 'journald', ...extra }, { buffer, retryMinMs: 10, journalDirs: [join(fixtures, 'journal')], ...deps }) as JournaldSource;
  runners.push(r);
  r.start();
  return r;
}
const calls = (): string[][] => readFileSync(argsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as string[]);

describe('journald source (fake journalctl on PATH)', () => {
  it('maps recorded entries; a never-seen journal starts at its end; cursor committed with the entries', async () => {
    appendFileSync(journal, 'x'.repeat(0) + recorded[0]! + '\n'); // history before start: not read
    const r = start({ labels: { role: 'web' } });
    await waitFor(() => calls().length === 1);
    expect(calls()[0]).toEqual(['--follow', '--output=json', '--no-pager', '--all', `--output-fields=${JOURNAL_FIELDS.join(',')}`, '--lines=0']);
    appendFileSync(journal, recorded.slice(1).join('\n') + '\n');
    await waitFor(() => messages(buffer).length === 3);
    const es = allEntries(buffer);
    expect(es[0]).toMatchObject({
      source: 'journald', ts: '2024-06-15T12:00:01.123Z', severity: 'err', facility: 'auth', app_name: 'sshd', process_id: '812',
      message: 'error: kex_exchange_identification: Connection closed',
      metadata: { unit: 'ssh.service', hostname: 'web1', transport: 'syslog', labels: { role: 'web' } },
    });
    expect(es[1]).toMatchObject({ severity: 'warning', facility: null, app_name: 'kernel', process_id: null, message: 'bad \uFFFD utf' });
    expect(es[2]).toMatchObject({ severity: 'debug', message: 'debug line', app_name: 'app', process_id: '99' });
    expect(buffer.getSourcePosition('journald')).toEqual({ cursor: 's=abc;i=4', realtime_usec: '1718452803000000' });
    expect(r.status()).toMatchObject({ kind: 'journald', last_error: null, lines_read: 3 });
  });

  it('an entry over the line cap is not read, counted and said; one under it is read across many pieces; the entries around both arrive (DECISIONS H27)', async () => {
    const logged: { obj: unknown; msg: string }[] = [];
    const logger = { ...silentLogger, warn: (obj: unknown, msg?: string) => void logged.push({ obj, msg: msg ?? '' }) };
    const r = start({}, { journalMaxLineChars: 1024 * 1024, logger });
    await waitFor(() => calls().length === 1);
    const entry = (i: number, message: string) => JSON.stringify({ __CURSOR: `s=big;i=${i}`, __REALTIME_TIMESTAMP: `${1718452800 + i}000000`, PRIORITY: '6', MESSAGE: message });
    appendFileSync(journal, [entry(1, 'before'), entry(2, 'x'.repeat(2 * 1024 * 1024)), entry(3, 'between'), entry(4, 'y'.repeat(900 * 1024)), entry(5, 'after')].join('\n') + '\n');
    await waitFor(() => messages(buffer).includes('after'), 10_000);
    const ms = messages(buffer);
    expect(ms.filter((m) => !m.startsWith('y'))).toEqual(['before', 'between', 'after']);
    expect(ms.filter((m) => m.startsWith('y')).join('')).toBe('y'.repeat(900 * 1024)); // split in parts of 65536 (D8)
    expect(r.status()).toMatchObject({ entries_too_large: 1, last_error: null });
    expect(sourceLines(r.status())[0]).toContain(', 1 entries too large, not read position=');
    expect(buffer.getSourcePosition('journald')).toMatchObject({ cursor: 's=big;i=5' });
    expect(logged.filter((l) => l.msg.startsWith('journald: an entry of more than 1048576 characters of JSON was not read'))).toHaveLength(1);
  });

  it('asks journalctl for the fields it maps only; a journalctl without --output-fields is run without it', async () => {
    process.env.FAKE_JOURNAL_OLD = '1';
    start();
    await waitFor(() => calls().length === 2);
    expect(calls()[0]).toContain(`--output-fields=${JOURNAL_FIELDS.join(',')}`);
    expect(calls()[1]!.some((a) => a.startsWith('--output-fields'))).toBe(false);
    appendFileSync(journal, recorded[0]! + '\n');
    await waitFor(() => messages(buffer).length === 1);
  });

  it('resumes after the stored cursor: no duplicate, no loss (entries written while stopped)', async () => {
    const r1 = start();
    await waitFor(() => calls().length === 1);
    appendFileSync(journal, recorded.slice(0, 2).join('\n') + '\n');
    await waitFor(() => messages(buffer).length === 2);
    await r1.stop();
    runners.splice(runners.indexOf(r1), 1);
    appendFileSync(journal, recorded.slice(2).join('\n') + '\n');
    start();
    await waitFor(() => messages(buffer).length === 4);
    expect(calls()[1]).toContain('--after-cursor=s=abc;i=2');
    expect(allEntries(buffer).map((e) => e.process_id)).toEqual(['1', '812', null, '99']);
  });

  it('a refused cursor falls back explicitly to the cursor time, counted, without duplicates or a loop', async () => {
    appendFileSync(journal, recorded.join('\n') + '\n');
    buffer.setSourcePosition({ source: 'journald', position: { cursor: 's=gone;i=2', realtime_usec: '1718452801123456' } });
    process.env.FAKE_JOURNAL_BAD_CURSORS = 's=gone;i=2';
    const r = start();
    await waitFor(() => messages(buffer).length === 2);
    expect(calls().map((c) => c[5])).toEqual(['--after-cursor=s=gone;i=2', '--since=@1718452801']);
    expect(allEntries(buffer).map((e) => e.message)).toEqual(['bad \uFFFD utf', 'debug line']);
    expect(r.status().cursor_fallbacks).toBe(1);
    expect(r.status().last_error).toMatch(/cursor refused/);
    await new Promise((res) => setTimeout(res, 100));
    expect(calls().length).toBe(2);
  });

  it('filter is passed as journal matches; option-like or malformed matches are refused', async () => {
    start({ filter: '_TRANSPORT=journal _SYSTEMD_UNIT=ssh.service' });
    await waitFor(() => calls().length === 1);
    expect(calls()[0]!.slice(-2)).toEqual(['_TRANSPORT=journal', '_SYSTEMD_UNIT=ssh.service']);
    for (const bad of ['--help', 'lower=x', '-n 5', '../../etc/shadow']) expect(() => parseJournalMatches(bad)).toThrow(/not a journal match/);
    expect(parseJournalMatches('A=1 + B=2')).toEqual(['A=1', '+', 'B=2']);
  });

  it('missing journalctl: clear error in status, other sources unaffected', async () => {
    process.env.PATH = join(dir, 'nothing-here');
    const f = join(dir, 'f.log');
    writeFileSync(f, 'file line\n');
    const m = createSourceManager({ buffer, pollMs: 20 });
    m.apply([{ kind: 'journald' }, { kind: 'file', path: f }]);
    await waitFor(() => messages(buffer).length === 1);
    await waitFor(() => (m.status()[0]!.last_error ?? '').length > 0);
    expect(m.status()[0]!.last_error).toMatch(/journalctl not found on PATH/);
    await m.close();
  });

  it('no journal file on the machine (no systemd-journald, a container): said in status and once in the log; journalctl started again once one appears, and read (D22)', async () => {
    const journalDirs = [join(dir, 'run-log-journal'), join(dir, 'var-log-journal')];
    mkdirSync(journalDirs[1]!);
    const warned: string[] = [];
    const logger = { ...silentLogger, warn: (_o: unknown, msg: string) => void warned.push(msg), info: () => undefined };
    const r = createSource({ kind: 'journald' }, { buffer, retryMinMs: 10, journalDirs, journalRecheckMs: 50, logger }) as JournaldSource;
    runners.push(r);
    r.start();
    await waitFor(() => r.status().last_error !== null);
    expect(r.status().last_error).toBe(
      `no journal on this machine: ${journalDirs.join(' and ')} hold no journal file (is systemd-journald running? in a container, mount the host's /var/log/journal read-only); reading none until one appears`,
    );
    expect(r.status().state).toBe('reading');
    // the one journalctl run recorded (its start took over 200 ms in a loaded fresh-clone run)
    await waitFor(() => calls().length === 1);
    // looked at again every 50 ms: told once, journalctl not started again
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(warned.filter((m) => m.includes('no journal on this machine'))).toHaveLength(1);
    expect(calls()).toHaveLength(1);
    // systemd-journald starts: a machine-id folder with a journal file
    mkdirSync(join(journalDirs[1]!, '0123456789abcdef0123456789abcdef'));
    writeFileSync(join(journalDirs[1]!, '0123456789abcdef0123456789abcdef', 'system.journal'), '');
    await waitFor(() => calls().length === 2);
    await waitFor(() => r.status().last_error === null);
    appendFileSync(journal, recorded.join('\n') + '\n');
    await waitFor(() => messages(buffer).length === recorded.length);
  });

  it('a journal file present: nothing said', async () => {
    const journalDirs = [join(dir, 'var-log-journal')];
    mkdirSync(journalDirs[0]!);
    writeFileSync(join(journalDirs[0]!, 'system.journal'), '');
    const r = createSource({ kind: 'journald' }, { buffer, retryMinMs: 10, journalDirs, journalRecheckMs: 50 }) as JournaldSource;
    runners.push(r);
    r.start();
    await waitFor(() => calls().length === 1);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(r.status().last_error).toBeNull();
  });

  it('mapJournalEntry defaults', () => {
    expect(mapJournalEntry({ MESSAGE: null }, Date.parse('2024-01-01T00:00:00Z'))).toEqual({
      ts: '2024-01-01T00:00:00.000Z', severity: 'info', facility: null, app_name: null, process_id: null, message: '', metadata: null,
    });
  });
});
