// The buffer's small files (seq.json, the page size rebuild mark) and a healed buffer's renames
// are durable with their folder: the folder is fsynced after the name changed, so a power cut
// cannot bring back an older seq.json (whose lower seq reservation would let a lost WAL reuse
// seqs the server already holds). node:fs is wrapped to record, in order, every rename and every
// fsync with the path its descriptor points at (/proc/self/fd).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

const events: string[] = [];

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const fdPath = (fd: number): string => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return `fd ${fd}`;
    }
  };
  const wrapped = {
    ...fs,
    fsyncSync: (fd: number): void => {
      events.push(`fsync ${fdPath(fd)}`);
      fs.fsyncSync(fd);
    },
    renameSync: (from: string, to: string): void => {
      fs.renameSync(from, to);
      events.push(`rename ${to}`);
    },
  };
  return { ...wrapped, default: wrapped };
});

const { readSeqState, writeSeqState, openHealing } = await import('../../agent/buffer/heal.js');

const root = mkdtempSync(join(tmpdir(), 'cortex-durable-'));
let n = 0;
const dir = (): string => mkdtempSync(join(root, `d${n++}-`));

afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeEach(() => {
  events.length = 0;
});

describe('buffer files survive a power cut with their folder', () => {
  it('seq.json: the new content is fsynced, renamed into place, then the folder is fsynced', () => {
    const d = dir();
    writeSeqState(d, { reserved_next_seq: 65_537, running: true });
    const file = join(d, 'seq.json');
    const rename = events.indexOf(`rename ${file}`);
    expect(rename).toBeGreaterThan(0);
    // the temp file's data before the rename, the folder after it
    expect(events.slice(0, rename).some((e) => e.startsWith(`fsync ${file}.tmp-`))).toBe(true);
    expect(events.slice(rename + 1)).toContain(`fsync ${d}`);
    expect(readSeqState(d)).toEqual({ reserved_next_seq: 65_537, running: true });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ reserved_next_seq: 65_537, running: true });
  });

  it('a damaged buffer.db is moved aside and the move is on disk before a fresh file takes the name', () => {
    const d = dir();
    writeFileSync(join(d, 'buffer.db'), 'this is not a database '.repeat(200));
    writeSeqState(d, { reserved_next_seq: 70_000, running: true });
    events.length = 0;
    const { buffer, recovery } = openHealing(d);
    try {
      expect(recovery?.reason).toBeTruthy();
      expect(buffer.nextSeq).toBe(70_000);
    } finally {
      buffer.close();
    }
    const moved = events.findIndex((e) => e.startsWith(`rename ${join(d, 'buffer.db.corrupt-')}`));
    expect(moved).toBeGreaterThanOrEqual(0);
    expect(events.slice(moved + 1)).toContain(`fsync ${d}`);
  });
});
