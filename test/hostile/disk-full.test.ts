// Issue 18, "a full disk is survivable" (DECISIONS H4), on a real 8 MiB tmpfs mounted by the
// test (root only). Where mounting is not allowed, the low-water case runs with an injected
// free-space figure instead, and the cases that need a real ENOSPC are reported as not run
// in the test output (they are asserted whenever the mount works, as it does in CI here).
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, statfsSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { BufferStorageError } from '../../agent/buffer/errors.js';
import type { NewLogEntry } from '../../agent/buffer/entry.js';
import { RunLockHeldError, acquireRunLock } from '../../agent/run-lock.js';
import { SERVER_CLI } from '../support/procs.js';
import { storedTotals } from '../support/buffer-rows.js';
import { readStatusFile, writeStatusFile, type StatusFile } from '../../agent/status-file.js';

interface SmallDisk {
  dir: string;
  mounted: boolean;
  cleanup(): void;
}

const disks: SmallDisk[] = [];
afterEach(() => {
  for (const d of disks.splice(0)) d.cleanup();
});

function smallDisk(bytes: number): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'cortex-smalldisk-'));
  let mounted = false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
    mounted = true;
  } catch {
    // not root, or no mount in this container: callers fall back to injection
  }
  const d: SmallDisk = {
    dir,
    mounted,
    cleanup: () => {
      if (mounted) execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
  disks.push(d);
  return d;
}

/** Writes zeros to `path` until the filesystem is full; returns the bytes written. */
function fillDisk(path: string): number {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024, 0);
  let n = 0;
  try {
    for (;;) n += writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return n;
}

const entries = (n: number, pad = 900): NewLogEntry[] =>
  Array.from({ length: n }, (_, i) => ({ ts: new Date().toISOString(), severity: 'info', message: `line ${i} ${'x'.repeat(pad)}`, source: 'custom:disk' }));

function appendUntilRefused(b: DurableBuffer): BufferStorageError {
  for (let i = 0; i < 100_000; i++) {
    try {
      b.append(entries(50));
    } catch (err) {
      if (err instanceof BufferStorageError) return err;
      throw err;
    }
  }
  throw new Error('the buffer never refused an append');
}

function integrity(path: string): { check: string; rows: number; depth: number } {
  const db = new Database(path, { readonly: true });
  try {
    const check = (db.pragma('integrity_check') as { integrity_check: string }[])[0]!.integrity_check;
    const rows = storedTotals(db).n;
    const depth = (db.prepare('SELECT queue_depth AS d FROM meta').get() as { d: number }).d;
    return { check, rows, depth };
  } finally {
    db.close();
  }
}

describe('buffer on a full disk', () => {
  it('refuses appends at the low-water mark (before ENOSPC); acks still succeed when another program fills the disk; recovers when space is freed', () => {
    const disk = smallDisk(8 * 1024 * 1024);
    if (!disk.mounted) {
      console.warn('disk-full: tmpfs mount not allowed here; the real-ENOSPC case did not run (the injected low-water case below did)');
      return;
    }
    const path = join(disk.dir, 'buffer.db');
    // Another program's 2 MiB, deleted at the end to show when the reserve is taken back.
    const ballast = join(disk.dir, 'other-program.data');
    writeFileSync(ballast, Buffer.alloc(2 * 1024 * 1024));
    const b = DurableBuffer.open(path, { synchronous: 'NORMAL' });
    try {
      expect(b.diskStatus().reserveHeld).toBe(true);
      const refused = appendUntilRefused(b);
      expect(refused.kind).toBe('disk_full');
      expect(refused.code).toBe('LOW_DISK_SPACE');
      expect(refused.message).toContain('low-water mark');
      // Refused before the disk was full: the low-water mark (1 MiB on 8 MiB) is still free.
      const free = statfsSync(disk.dir).bavail * statfsSync(disk.dir).bsize;
      expect(free).toBeGreaterThan(512 * 1024);
      const before = b.stats();
      // Another program now takes every byte that is left.
      fillDisk(join(disk.dir, 'other-program.log'));
      const half = before.ackedSeq + Math.floor(before.queueDepth / 2);
      const ack = b.ack(half);
      expect(ack.ackedSeq).toBe(half);
      expect(ack.deleted).toBeGreaterThan(0);
      expect(b.diskStatus().reserveHeld).toBe(false); // given back so the ack could commit
      expect(() => b.append(entries(1))).toThrow(BufferStorageError);
      // The operator frees space: appends resume. The reserve is not taken back while that
      // would leave less than twice the low-water mark free (taken at the mark itself, it left
      // appends no room above the mark, and the agent paused and resumed for ever: DECISIONS H4).
      unlinkSync(join(disk.dir, 'other-program.log'));
      b.assertSpace();
      const more = b.append(entries(10));
      expect(more.firstSeq).toBe(before.nextSeq);
      b.ack(more.firstSeq);
      const { freeBytes, minFreeBytes } = b.diskStatus();
      expect(freeBytes! - 1024 * 1024).toBeLessThan(2 * minFreeBytes);
      expect(b.diskStatus().reserveHeld).toBe(false);
      expect(b.append(entries(10)).firstSeq).toBe(more.lastSeq + 1);
      // More room: the next ack takes it back.
      unlinkSync(ballast);
      b.ack(more.lastSeq + 1);
      expect(b.diskStatus().reserveHeld).toBe(true);
      const s = b.stats();
      expect(s.nextSeq).toBe(more.lastSeq + 11);
    } finally {
      b.close();
    }
    const check = integrity(path);
    expect(check.check).toBe('ok');
    expect(check.rows).toBe(check.depth);
  });

  it('the low-water mark counts free disk space (injected figure)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cortex-lowwater-'));
    disks.push({ dir, mounted: false, cleanup: () => rmSync(dir, { recursive: true, force: true }) });
    let free = 100 * 1024 * 1024;
    const b = DurableBuffer.open(join(dir, 'buffer.db'), { synchronous: 'NORMAL', reserveBytes: 0, diskSpace: () => ({ free, total: 1024 * 1024 * 1024 }) });
    try {
      expect(b.diskStatus().minFreeBytes).toBe(Math.floor(1024 * 1024 * 1024 * 0.05));
      b.append(entries(10));
      free = 50 * 1024 * 1024; // below 5% of 1 GiB
      const err = (() => {
        try {
          b.append(entries(1));
        } catch (e) {
          return e as BufferStorageError;
        }
        throw new Error('append was not refused');
      })();
      expect(err.kind).toBe('disk_full');
      expect(err.retryable).toBe(true);
      expect(b.stats().nextSeq).toBe(11); // nothing stored
      expect(b.ack(5).ackedSeq).toBe(5); // acks are not refused
      free = 100 * 1024 * 1024;
      expect(b.append(entries(1)).firstSeq).toBe(11);
    } finally {
      b.close();
    }
  });
});

/** A running agent's status.json content, nothing wrong. */
const activeStatus = (): StatusFile => ({ pid: process.pid, updated_at: new Date().toISOString(), state: 'Active', stopped: false, server_url: 'ws://x', session_id: null, host_id: 'h', last_error: null, sources_paused: false, sources: [], batch_entries: 1, send_rate_cap: null });

describe('status.json on a full disk', () => {
  it('a failed write leaves no temp file and keeps the previous status.json', async () => {
    const disk = smallDisk(1024 * 1024);
    if (!disk.mounted) {
      console.warn('disk-full: tmpfs mount not allowed here; the status-file ENOSPC case did not run');
      return;
    }
    const status = activeStatus();
    await writeStatusFile(disk.dir, status);
    fillDisk(join(disk.dir, 'filler'));
    const big = { ...status, last_error: 'x'.repeat(256 * 1024) };
    await expect(writeStatusFile(disk.dir, big)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(readdirSync(disk.dir).sort()).toEqual(['filler', 'status.json']);
  });

  it('with no room for a temp file, status.json is rewritten in place (padded with spaces), so status still says why the sources paused', async () => {
    const disk = smallDisk(1024 * 1024);
    if (!disk.mounted) {
      console.warn('disk-full: tmpfs mount not allowed here; the status-file in-place case did not run');
      return;
    }
    const status = activeStatus();
    await writeStatusFile(disk.dir, { ...status, last_error: 'an older and longer error '.repeat(10) });
    const before = statSync(join(disk.dir, 'status.json')).size;
    fillDisk(join(disk.dir, 'filler'));
    expect(statfsSync(disk.dir).bavail).toBe(0);
    const paused = { ...status, sources_paused: true, last_error: 'append failed: 0 bytes free (LOW_DISK_SPACE)' };
    await writeStatusFile(disk.dir, paused);
    expect(readStatusFile(disk.dir)).toEqual(paused);
    const text = readFileSync(join(disk.dir, 'status.json'), 'utf8');
    expect(text.length).toBe(before); // padded to the old length, ends in a newline
    expect(text.endsWith(' \n')).toBe(true);
    expect(readdirSync(disk.dir).sort()).toEqual(['filler', 'status.json']);
    // Larger than the old file but within its block: written whole.
    const sources = Array.from({ length: 8 }, (_, i) => ({ kind: 'file', path: `/var/log/app-${i}.log`, name: null, position: null, last_error: null, paused: true }));
    const longer = { ...paused, sources } as StatusFile;
    await writeStatusFile(disk.dir, longer);
    expect(readStatusFile(disk.dir)).toEqual(longer);
    // Once space is back, the usual temp file + rename writes an unpadded file.
    unlinkSync(join(disk.dir, 'filler'));
    await writeStatusFile(disk.dir, status);
    expect(readFileSync(join(disk.dir, 'status.json'), 'utf8')).toBe(`${JSON.stringify(status)}\n`);
  });
});

describe('starting on a full disk', () => {
  it('the run lock is taken as a symlink, the buffer opens by giving back its reserve, and without a reserve the open says to free space', () => {
    const disk = smallDisk(8 * 1024 * 1024);
    if (!disk.mounted) {
      console.warn('disk-full: tmpfs mount not allowed here; the full-disk start case did not run');
      return;
    }
    const dir = join(disk.dir, 'state');
    mkdirSync(dir);
    const path = join(dir, 'buffer.db');
    const first = DurableBuffer.open(path, { reserveBytes: 1024 * 1024, minFreeBytes: 1024 * 1024 });
    first.append(entries(100));
    first.close();
    expect(existsSync(`${path}.reserve`)).toBe(true);
    expect(existsSync(`${path}-shm`)).toBe(false); // a clean close removes the WAL index
    fillDisk(join(disk.dir, 'filler'));

    const release = acquireRunLock(dir);
    expect(lstatSync(join(dir, 'run.lock')).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readlinkSync(join(dir, 'run.lock')))).toMatchObject({ pid: process.pid });
    expect(() => acquireRunLock(dir)).toThrow(RunLockHeldError); // the symlink is read as a held lock

    const b = DurableBuffer.open(path, { reserveBytes: 1024 * 1024, minFreeBytes: 1024 * 1024 });
    expect(existsSync(`${path}.reserve`)).toBe(false);
    expect(b.stats().queueDepth).toBe(100);
    b.close();
    release();
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);

    // No reserve left and the disk full again: the open fails as disk_full, saying what to do.
    fillDisk(join(disk.dir, 'filler2'));
    let err: unknown;
    try {
      DurableBuffer.open(path, { reserveBytes: 1024 * 1024, minFreeBytes: 1024 * 1024 }).close();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BufferStorageError);
    expect((err as BufferStorageError).kind).toBe('disk_full');
    expect((err as Error).message).toMatch(/the disk is full; free space on it .*cortex-agent run waits and starts once there is room/);
  });
});

describe('the server on a full disk', () => {
  it('serve on a database whose disk has no byte free exits 1 with E_DISK_FULL, not "a bug" (E_INTERNAL)', () => {
    const disk = smallDisk(4 * 1024 * 1024);
    if (!disk.mounted) {
      console.warn('disk-full: tmpfs mount not allowed here; the server full-disk start did not run');
      return;
    }
    const db = join(disk.dir, 'cortex.db');
    const issue = spawnSync(process.execPath, [SERVER_CLI, 'agent', 'issue', '--host', 'h', '--db', db], { encoding: 'utf8' });
    expect(issue.status).toBe(0);
    fillDisk(join(disk.dir, 'filler'));
    const r = spawnSync(process.execPath, [SERVER_CLI, 'serve', '--db', db, '--listen', '127.0.0.1:0'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/error\[E_DISK_FULL\]: SQLITE_IOERR_SHMSIZE: .* — free space on the disk of the database/);
  });
});

