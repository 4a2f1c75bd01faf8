// The file source with file names the protocol cannot carry (fix item 4) and files cut short
// in place (fix item 7).

import { appendFileSync, renameSync, symlinkSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validateLogBatchEntry } from '@cortex/agent-protocol';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { createSource, type LogSourceRunner, type SourceDeps } from '../../../agent/sources/index.js';
import { sourceLines } from '../../../agent/cli-main.js';
import { allEntries, capturingLogger, messages, openBuffer, tempDir, waitFor, type Logged } from './helpers.js';

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
const runners: LogSourceRunner[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-frb-'));
  buffer = openBuffer(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  buffer.close();
  cleanup();
});


function start(path: string, deps: Partial<SourceDeps> = {}): { r: LogSourceRunner; logged: Logged[] } {
  const { logged, logger } = capturingLogger();
  const r = createSource({ kind: 'file', path }, { buffer, pollMs: 20, logger, ...deps });
  runners.push(r);
  r.start();
  return { r, logged };
}

const lines = (prefix: string, from: number, to: number) => Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}`);
const write = (p: string, ls: string[]) => appendFileSync(p, ls.map((l) => `${l}\n`).join(''));
const why = (path: string) =>
  `${JSON.stringify(path)}: file name contains a newline (or another line break: CR, U+2028, U+2029), which the source name of its entries (file:<path>) may not hold: not read; rename it`;

describe('file source: names a source cannot carry (fix item 4)', () => {
  it('a glob leaves files whose name holds a line break alone, said once per file in the log and in status; the other files are read; renamed, it is read', async () => {
    const good = join(dir, 'good.log');
    const tab = join(dir, 'tab\tname.log'); // a tab is allowed by the source pattern: read
    const bad = ['new\nline.log', 'carriage\rreturn.log', 'line\u2028separator.log', 'para\u2029separator.log'].map((n) => join(dir, n));
    const target = join(dir, 'target\nof-link.txt'); // not matched itself; reached through a symlink that is
    for (const p of [good, tab, ...bad, target]) write(p, [`first of ${JSON.stringify(p)}`]);
    symlinkSync(target, join(dir, 'link.log'));
    const { r, logged } = start(join(dir, '*.log'));
    await waitFor(() => messages(buffer).length === 2, 5000, 'good and tab files');
    // several scans later: still said once per file
    write(good, ['second']);
    await waitFor(() => messages(buffer).includes('second'), 5000, 'second');
    await new Promise((res) => setTimeout(res, 150));
    write(good, ['third']);
    await waitFor(() => messages(buffer).includes('third'), 5000, 'third');
    expect(messages(buffer).sort()).toEqual([`first of ${JSON.stringify(good)}`, `first of ${JSON.stringify(tab)}`, 'second', 'third'].sort());
    expect(allEntries(buffer).every((e) => validateLogBatchEntry(e))).toBe(true);
    const refused = [...bad, target];
    const warned = logged.filter((l) => l.msg.includes('file name contains a newline'));
    expect(warned.map((l) => l.msg).sort()).toEqual(refused.map((p) => `file source: ${why(p)}`).sort());
    expect(warned.every((l) => l.level === 'warn')).toBe(true);
    const st = r.status();
    const files = st.files!;
    for (const p of refused) expect(files.find((f) => f.path === p)).toMatchObject({ state: 'error', last_error: why(p), lines_read: 0, position: null });
    expect(files.find((f) => f.path === good)).toMatchObject({ state: 'reading', last_error: null });
    expect(refused.map(why)).toContain(st.last_error);
    expect(sourceLines(st)[0]).toContain('reading 2 files (5 in error)');

    // renamed: read, no longer said
    renameSync(bad[0]!, join(dir, 'renamed.log'));
    await waitFor(() => messages(buffer).includes(`first of ${JSON.stringify(bad[0]!)}`), 5000, 'renamed file read');
    expect(r.status().files!.some((f) => f.path === bad[0])).toBe(false);
    expect(r.status().files!.filter((f) => f.state === 'error')).toHaveLength(4);
  });

  it('a configured path with a line break is a config error (its entries could never be sent)', () => {
    for (const p of ['/var/log/a\nb.log', '/var/log/x\r/*.log', '/var/log/a\u2028b.log']) {
      expect(() => createSource({ kind: 'file', path: p }, { buffer })).toThrow(/contains a newline \(or another line break: CR, U\+2028, U\+2029\)/);
    }
    expect(() => createSource({ kind: 'file', path: '/var/log/a\tb.log' }, { buffer })).not.toThrow();
  });
});

describe('file source: cut short in place (fix item 7)', () => {
  const truncWarn = (logged: Logged[]) => logged.filter((l) => l.level === 'warn' && /truncated/.test(l.msg));

  it('truncate -s to a non-zero size with the first bytes unchanged: read again from its start, and the warning says those lines are sent again', async () => {
    const p = join(dir, 'shrink.log');
    write(p, lines('line-with-some-padding-', 0, 200)); // ~5 KB: fingerprint of 1 KiB
    const { r, logged } = start(p);
    await waitFor(() => messages(buffer).length === 200, 5000, 'all lines');
    truncateSync(p, 2000);
    await waitFor(() => truncWarn(logged).length === 1, 5000, 'truncation seen');
    const w = truncWarn(logged)[0]!;
    expect(w.msg).toBe(
      'file truncated in place (size below offset); reading from its start; its first 2000 bytes are those read before, so it was most likely cut short in place (truncate -s) rather than emptied by copytruncate: the lines in them are sent again (duplicates; a copytruncate whose writer wrote the same first bytes again cannot be told apart, and skipping them could lose its lines)',
    );
    expect(w.obj).toMatchObject({ size: 2000, lost_lines: 0, first_bytes_same: true, may_resend_bytes: 2000 });
    // the documented behaviour: the lines in those 2000 bytes come again (the last one cut: flushed whole only at rotation)
    const again = Math.floor(2000 / 'line-with-some-padding-000\n'.length);
    await waitFor(() => messages(buffer).length >= 200 + again - 1, 5000, 'read again');
    expect(r.status().truncations).toBe(1);
  });

  it('emptied and written anew (copytruncate) before the next poll: the warning says the bytes there are new', async () => {
    const p = join(dir, 'ct.log');
    write(p, lines('before-before-before-', 0, 100)); // ~2.3 KB
    const { logged } = start(p);
    await waitFor(() => messages(buffer).length === 100, 5000, 'all lines');
    truncateSync(p, 0);
    write(p, lines('after-', 0, 150)); // ~1.4 KB: more than the 1 KiB fingerprinted, less than read (size below offset), first bytes differ
    await waitFor(() => truncWarn(logged).length === 1, 5000, 'truncation seen');
    const w = truncWarn(logged)[0]!;
    expect(w.msg).toMatch(/; its first bytes differ from those read before: the \d+ bytes there are new lines \(emptied and written anew\)$/);
    expect(w.obj).toMatchObject({ first_bytes_same: false, may_resend_bytes: 0 });
    await waitFor(() => messages(buffer).length === 250, 5000, 'new lines');
    expect(messages(buffer).slice(100)).toEqual(lines('after-', 0, 150));
  });

  it('cut below the fingerprinted bytes (cannot be told), and cut while the agent was stopped: said that the lines may be sent again', async () => {
    const p = join(dir, 'small.log');
    write(p, lines('s', 0, 50)); // < 1 KiB: all of it fingerprinted
    const { r, logged } = start(p);
    await waitFor(() => messages(buffer).length === 50, 5000, 'all lines');
    truncateSync(p, 60);
    await waitFor(() => truncWarn(logged).length === 1, 5000, 'truncation seen');
    expect(truncWarn(logged)[0]!.msg).toMatch(/; if it was cut short in place \(truncate -s\) rather than emptied by copytruncate, the lines in its first 60 bytes were read before and are sent again \(duplicates; which of the two it was cannot be told\)$/);
    expect(truncWarn(logged)[0]!.obj).toMatchObject({ first_bytes_same: null, may_resend_bytes: 60 });
    await r.stop();
    runners.splice(runners.indexOf(r), 1);

    // the agent stopped; the file grows past 1 KiB, is read, then cut to 1500 bytes while stopped
    const big = join(dir, 'big.log');
    write(big, lines('big-line-padding-', 0, 150));
    const a = start(big);
    await waitFor(() => messages(buffer).filter((m) => m.startsWith('big-')).length === 150, 5000, 'big read');
    await a.r.stop();
    runners.splice(runners.indexOf(a.r), 1);
    truncateSync(big, 1500);
    const b = start(big);
    await waitFor(() => truncWarn(b.logged).length === 1, 5000, 'truncation while stopped seen');
    expect(truncWarn(b.logged)[0]!.msg).toBe(
      'file was truncated while the agent was stopped; reading from its start (lines unread at the truncation are lost, count unknown); its first 1500 bytes are those read before, so it was most likely cut short in place (truncate -s) rather than emptied by copytruncate: the lines in them are sent again (duplicates; a copytruncate whose writer wrote the same first bytes again cannot be told apart, and skipping them could lose its lines)',
    );
  });
});
