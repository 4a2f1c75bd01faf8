// A file source does not ship files that are not text (DECISIONS D25): logrotate's compressed
// copies, login records (wtmp, lastlog), UTF-16 text. Each is said in status and once in the log.
import { appendFileSync, mkdirSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { sourceLines, sourceStateText } from '../../../agent/cli-main.js';
import { createSource, type LogSourceRunner, type SourceDeps, type SourceRunnerStatus } from '../../../agent/sources/index.js';
import { SNIFF_BYTES, notTextReason } from '../../../agent/sources/file/content.js';
import { messages, openBuffer, tempDir, waitFor } from './helpers.js';

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
const runners: LogSourceRunner[] = [];
const warnings: string[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  buffer = openBuffer(dir);
  warnings.length = 0;
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  buffer.close();
  cleanup();
});

const logger = { info: () => undefined, warn: (_o: object, msg?: string) => void warnings.push(msg ?? ''), error: () => undefined, debug: () => undefined };

function start(path: string, extra: Record<string, unknown> = {}, deps: Partial<SourceDeps> = {}): LogSourceRunner {
  const r = createSource({ kind: 'file', path, ...extra }, { buffer, pollMs: 20, logger, ...deps } as SourceDeps);
  runners.push(r);
  r.start();
  return r;
}

const textLines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix} ${i}\n`).join('');

/** utmp records as login(1) writes them to wtmp: 384 bytes, mostly NUL. */
function utmpRecords(n: number): Buffer {
  const out = Buffer.alloc(384 * n);
  for (let i = 0; i < n; i++) {
    const r = out.subarray(384 * i, 384 * (i + 1));
    r.writeInt32LE(7, 0); // USER_PROCESS
    r.writeInt32LE(1000 + i, 4);
    r.write('pts/0', 8, 'latin1');
    r.write('ts/0', 40, 'latin1');
    r.write('root', 44, 'latin1');
    r.write('192.0.2.10', 76, 'latin1');
    r.writeInt32LE(1_764_000_000 + i, 340);
  }
  return out;
}

const fileOf = (r: LogSourceRunner, path: string): SourceRunnerStatus | undefined => r.status().files?.find((f) => f.path === path);

describe('which first bytes are text', () => {
  it('compressed formats, NUL-heavy binaries and UTF-16 are not; text, a few NULs and a line starting "BZh" are', () => {
    expect(notTextReason(gzipSync(Buffer.from(textLines('x', 100))))).toMatch(/^gzip-compressed/);
    expect(notTextReason(Buffer.from('BZh91AY&SY\u0001\u0002', 'latin1'))).toMatch(/^bzip2-compressed/);
    expect(notTextReason(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04]))).toMatch(/^xz-compressed/);
    expect(notTextReason(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x10]))).toMatch(/^zstd-compressed/);
    expect(notTextReason(Buffer.from([0x04, 0x22, 0x4d, 0x18, 0x64, 0x40]))).toMatch(/^lz4-compressed/);
    expect(notTextReason(utmpRecords(30))).toMatch(/^binary: \d+ % of its first 8192 bytes are NUL/);
    expect(notTextReason(Buffer.alloc(SNIFF_BYTES * 4))).toBe('binary: 100 % of its first 8192 bytes are NUL (login records such as wtmp or lastlog, a database, a core file)');
    expect(notTextReason(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello world\n', 'utf16le')]))).toMatch(/^UTF-16 text/);
    expect(notTextReason(Buffer.from(textLines('plain line', 500)))).toBeNull();
    expect(notTextReason(Buffer.from('BZh is how this line starts\n'))).toBeNull();
    expect(notTextReason(Buffer.from('héllo wörld ✓ 日本\n'))).toBeNull();
    // a crash left a few NULs (under a tenth of the first bytes): still text, the NULs stored as U+FFFD
    expect(notTextReason(Buffer.concat([Buffer.from(textLines('before', 200)), Buffer.alloc(300), Buffer.from(textLines('after', 200))]))).toBeNull();
    expect(notTextReason(Buffer.alloc(0))).toBeNull();
  });
});

describe('file source: files that are not text', () => {
  it('a glob over a log folder reads the logs only: not the .gz copy, wtmp or a sparse lastlog; status and the log say why', async () => {
    dir = join(dir, 'log');
    mkdirSync(dir);
    writeFileSync(join(dir, 'app.log'), textLines('app', 50));
    writeFileSync(join(dir, 'app.log.2.gz'), gzipSync(Buffer.from(textLines('old', 5000))));
    writeFileSync(join(dir, 'wtmp'), utmpRecords(40));
    writeFileSync(join(dir, 'lastlog'), '');
    truncateSync(join(dir, 'lastlog'), 1024 ** 3); // 1 GiB of holes, as lastlog with a large uid
    const r = start(join(dir, '*'));
    await waitFor(() => messages(buffer).length === 50 && warnings.length === 3);
    for (const name of ['app.log.2.gz', 'wtmp', 'lastlog']) {
      expect(fileOf(r, join(dir, name))).toMatchObject({ state: 'skipped', lines_read: 0, bytes_read: 0 });
      expect(fileOf(r, join(dir, name))?.last_error).toMatch(/^not read: /);
    }
    expect(fileOf(r, join(dir, 'app.log.2.gz'))?.last_error).toMatch(/gzip-compressed/);
    expect(fileOf(r, join(dir, 'lastlog'))?.last_error).toMatch(/100 % of its first 8192 bytes are NUL/);
    expect(warnings.sort()).toEqual([
      expect.stringMatching(`^${join(dir, 'app.log.2.gz')} is not read: gzip-compressed`),
      expect.stringMatching(`^${join(dir, 'lastlog')} is not read: binary`),
      expect.stringMatching(`^${join(dir, 'wtmp')} is not read: binary`),
    ]);
    // the glob's own error stays clear: a skipped file is no fault of the source
    expect(r.status()).toMatchObject({ state: 'reading', last_error: null, lines_read: 50 });
    expect(sourceStateText(r.status())).toBe('reading 1 file (3 not read: not text), 50 lines read');
    // a stored position with no running source behind it (the agent stopped): not "0 lines read"
    expect(sourceStateText({ kind: 'file', state: undefined })).toBe('not being read (stored position)');
    const shown = sourceLines({ ...r.status(), position: r.status().position });
    expect(shown[0]).toBe(`  file ${join(dir, '*')}: reading 1 file (3 not read: not text), 50 lines read`);
    expect(shown).toContain(`    ${join(dir, 'app.log')}: reading, 50 lines read`);
    expect(shown.find((l) => l.includes('/wtmp:'))).toMatch(/^ {4}.*wtmp: skipped, 0 lines read error: not read: binary/);
    // what they gain later is not read either, and nothing was committed for them
    appendFileSync(join(dir, 'wtmp'), utmpRecords(5));
    appendFileSync(join(dir, 'app.log'), textLines('more', 3));
    await waitFor(() => messages(buffer).length === 53);
    expect(buffer.getSourcePosition(`file:${join(dir, 'wtmp')}`)).toBeNull();
    expect(buffer.getSourcePosition(`file:${join(dir, 'lastlog')}`)).toBeNull();
    expect(warnings).toHaveLength(3); // said once per file
  });

  it('a skipped file truncated and written as text, or replaced by a text file, is read', async () => {
    const p = join(dir, 'odd.log');
    writeFileSync(p, utmpRecords(10));
    const r = start(p);
    await waitFor(() => r.status().state === 'skipped');
    expect(r.status().last_error).toMatch(/^not read: binary/);
    truncateSync(p, 0);
    appendFileSync(p, textLines('now text', 4));
    await waitFor(() => messages(buffer).length === 4);
    expect(r.status()).toMatchObject({ state: 'reading', last_error: null });
    // rotated away, a gzip copy put at the path: not read; then a fresh text file: read
    renameSync(p, `${p}.1`);
    writeFileSync(p, gzipSync(Buffer.from(textLines('x', 100))));
    await waitFor(() => r.status().state === 'skipped');
    rmSync(p);
    writeFileSync(p, textLines('fresh', 2));
    await waitFor(() => messages(buffer).length === 6);
    expect(messages(buffer).slice(4)).toEqual(['fresh 0', 'fresh 1']);
  });

  it('start_at "end" on a binary file does not read what is appended to it; a restart looks again and still skips it', async () => {
    const p = join(dir, 'btmp');
    writeFileSync(p, utmpRecords(3));
    const r = start(p, { start_at: 'end' });
    await waitFor(() => r.status().state === 'skipped');
    appendFileSync(p, utmpRecords(3));
    await r.stop();
    runners.splice(0);
    const again = start(p, { start_at: 'end' });
    await waitFor(() => again.status().state === 'skipped');
    expect(messages(buffer)).toEqual([]);
    expect(statSync(p).size).toBe(6 * 384);
  });
});
