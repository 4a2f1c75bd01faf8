// agent/sources/file/identity.ts: which file a file source is reading, found again after
// rotation and copytruncate.
import { closeSync, openSync, renameSync, statSync, writeFileSync, copyFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  FileCursor, endOfLastLine, findByIdentity, findCopy, fingerprint, isFilePosition, prefixMatches, readPrefix, sameFile, statOrNull, truncationLoss,
  type FilePosition,
} from '../../../agent/sources/file/identity.js';
import { tempDir } from './helpers.js';

const cleanups: (() => void)[] = [];
const fds: number[] = [];
afterEach(() => {
  while (fds.length > 0) closeSync(fds.pop()!);
  while (cleanups.length > 0) cleanups.pop()!();
});

function dir(): string {
  const t = tempDir('cortex-ident-');
  cleanups.push(t.cleanup);
  return t.dir;
}

function open(path: string): number {
  const fd = openSync(path, 'r');
  fds.push(fd);
  return fd;
}

/** The position a tailer commits after reading `offset` bytes of the file at path. */
function positionAfter(path: string, offset: number): FilePosition {
  const cur = new FileCursor();
  const fd = openSync(path, 'r');
  cur.openAt(statSync(path), fd);
  cur.offset = offset;
  cur.updateFingerprint();
  const p = cur.position();
  cur.close();
  return p;
}

describe('positions and fingerprints', () => {
  it('the fingerprint covers min(offset, 1024) bytes and is stable while the file is appended to', () => {
    const d = dir();
    const f = join(d, 'a.log');
    writeFileSync(f, 'line one\nline two\n');
    const p = positionAfter(f, 9);
    expect(p).toMatchObject({ offset: 9, part: 0, fp_len: 9, fp: fingerprint(Buffer.from('line one\n')) });
    expect(p.fp).toMatch(/^[0-9a-f]{32}$/);
    writeFileSync(f, `line one\nline two\n${'x'.repeat(5000)}\n`);
    const big = positionAfter(f, 3000);
    expect(big.fp_len).toBe(1024);
    expect(prefixMatches(p, open(f))).toBe(true);
    expect(isFilePosition(p)).toBe(true);
    expect(isFilePosition({ dev: 1, ino: 2 })).toBe(false);
    expect(isFilePosition(null)).toBe(false);
    expect(fingerprint(Buffer.alloc(0))).toBeNull();
    expect(readPrefix(open(f), 4).toString()).toBe('line');
  });

  it('sameFile: same identity, long enough and same first bytes; a rewritten inode is not the same file', () => {
    const d = dir();
    const f = join(d, 'a.log');
    writeFileSync(f, 'hello\nworld\n');
    const p = positionAfter(f, 6);
    expect(sameFile(p, statSync(f), open(f))).toBe(true);
    writeFileSync(f, 'HELLO\nworld\n'); // same inode, other content
    expect(sameFile(p, statSync(f), open(f))).toBe(false);
    truncateSync(f, 3);
    expect(sameFile(p, statSync(f), open(f))).toBe(false); // shorter than the offset
  });

  it('FileCursor: isAt, prefixChanged, rewind', () => {
    const d = dir();
    const f = join(d, 'a.log');
    writeFileSync(f, 'abc\ndef\n');
    const cur = new FileCursor();
    cur.openAt(statSync(f), open(f));
    cur.offset = 4;
    cur.updateFingerprint();
    expect(cur.isAt(statSync(f))).toBe(true);
    expect(cur.isAt(null)).toBe(false);
    expect(cur.prefixChanged()).toBe(false);
    writeFileSync(f, 'xyz\ndef\n');
    expect(cur.prefixChanged()).toBe(true);
    renameSync(f, `${f}.1`);
    writeFileSync(f, 'new\n');
    expect(cur.isAt(statSync(f))).toBe(false);
    cur.rewind();
    expect(cur).toMatchObject({ offset: 0, part: 0, fpLen: 0, fp: null });
    cur.fd = null; // closed by afterEach
  });

  it('statOrNull: null for a missing file or a missing folder', () => {
    const d = dir();
    expect(statOrNull(join(d, 'nope'))).toBeNull();
    writeFileSync(join(d, 'file'), 'x');
    expect(statOrNull(join(d, 'file', 'under'))).toBeNull(); // ENOTDIR
    expect(statOrNull(join(d, 'file'))!.size).toBe(1);
  });
});

describe('rotation: findByIdentity', () => {
  it('finds the file renamed away in the same folder (same inode, same first bytes, long enough)', () => {
    const d = dir();
    const f = join(d, 'app.log');
    writeFileSync(f, 'a1\na2\na3\n');
    const p = positionAfter(f, 6);
    renameSync(f, join(d, 'app.log.1'));
    writeFileSync(f, 'b1\n');
    const found = findByIdentity(f, p);
    expect(found).not.toBeNull();
    fds.push(found!.fd);
    expect(found!.path).toBe(join(d, 'app.log.1'));
    expect(found!.st.ino).toBe(p.ino);
  });

  it('does not take a file whose first bytes changed, or nothing at all', () => {
    const d = dir();
    const f = join(d, 'app.log');
    writeFileSync(f, 'a1\na2\n');
    const p = positionAfter(f, 3);
    writeFileSync(f, 'zz\na2\n'); // same inode, rewritten
    expect(findByIdentity(f, p)).toBeNull();
    expect(findByIdentity(join(d, 'missing-dir', 'x.log'), p)).toBeNull();
  });
});

describe('copytruncate: findCopy and truncationLoss', () => {
  it('counts the bytes and lines the copy holds beyond the offset (a last line without newline counts)', () => {
    const d = dir();
    const f = join(d, 'app.log');
    writeFileSync(f, 'l1\nl2\nl3\nl4');
    const p = positionAfter(f, 3);
    copyFileSync(f, `${f}.1`);
    truncateSync(f, 0);
    const copy = findCopy(f, p.ino, p.offset, p.fp_len, p.fp);
    expect(copy).toEqual({ bytes: 8, lines: 3 });
    const cur = new FileCursor();
    cur.openAt(statSync(`${f}.1`), open(f));
    cur.ident = { dev: p.dev, ino: p.ino };
    cur.resumeAt(p);
    expect(truncationLoss(f, cur, 1, 3)).toEqual({ bytes: 8, lines: 3, estimated: false });
    cur.fd = null;
  });

  it('without a copy: estimated from the size seen and the average line length read', () => {
    const d = dir();
    const f = join(d, 'app.log');
    writeFileSync(f, 'x'.repeat(100));
    const cur = new FileCursor();
    cur.openAt(statSync(f), open(f));
    cur.offset = 40;
    cur.lastSize = 100;
    expect(truncationLoss(f, cur, 4, 40)).toEqual({ bytes: 60, lines: 6, estimated: true }); // 10 bytes a line
    expect(truncationLoss(f, cur, 0, 0)).toEqual({ bytes: 60, lines: 1, estimated: true }); // 100 bytes assumed
    cur.lastSize = 40;
    expect(truncationLoss(f, cur, 4, 40)).toEqual({ bytes: 0, lines: 0, estimated: true });
    cur.fd = null;
  });
});

describe('start_at "end": endOfLastLine', () => {
  it('is the offset after the last complete line; 0 for one line still being written; the size for an empty file', () => {
    const d = dir();
    const f = join(d, 'a.log');
    writeFileSync(f, 'one\ntwo\npart');
    expect(endOfLastLine(open(f), statSync(f).size)).toBe(8);
    writeFileSync(f, 'only a partial line');
    expect(endOfLastLine(open(f), statSync(f).size)).toBe(0);
    writeFileSync(f, '');
    expect(endOfLastLine(open(f), 0)).toBe(0);
    writeFileSync(f, 'a\n');
    expect(endOfLastLine(open(f), 2)).toBe(2);
  });
});
