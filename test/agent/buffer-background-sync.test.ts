// DECISIONS P16: with syncInBackground the buffer commits with synchronous=NORMAL and fsyncs
// the WAL on libuv's thread pool; an entry is handed to the sender (readBatch) only once
// the fsync that covers it has returned, so what the server sees is always on disk.
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DurableBuffer, type BufferOptions, type SyncListener } from '../../agent/buffer/buffer.js';
import type { NewLogEntry } from '../../agent/buffer/entry.js';

let dir: string;
let path: string;
const open: DurableBuffer[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cortex-bgsync-'));
  path = join(dir, 'buffer.db');
});
afterEach(() => {
  for (const b of open.splice(0)) b.close();
  rmSync(dir, { recursive: true, force: true });
});

function openBuffer(options: BufferOptions = {}): DurableBuffer {
  const b = DurableBuffer.open(path, { reserveBytes: 0, ...options });
  open.push(b);
  return b;
}

function entries(n: number, tag = 'm'): NewLogEntry[] {
  return Array.from({ length: n }, (_, i) => ({ ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: `${tag}${i}`, source: 'file:/var/log/app.log' }));
}

/** A syncWal hook that holds every fdatasync until released (or failed). */
function heldSyncs(): { hook: NonNullable<NonNullable<BufferOptions['hooks']>['syncWal']>; pending: Array<(err: NodeJS.ErrnoException | null) => void>; fds: number[] } {
  const pending: Array<(err: NodeJS.ErrnoException | null) => void> = [];
  const fds: number[] = [];
  return {
    pending,
    fds,
    hook: (fd, done) => {
      fds.push(fd);
      pending.push(done);
    },
  };
}

function listener(): SyncListener & { syncedTo: number[]; failures: Error[] } {
  const l = {
    syncedTo: [] as number[],
    failures: [] as Error[],
    synced: (seq: number) => void l.syncedTo.push(seq),
    failed: (err: Error) => void l.failures.push(err),
  };
  return l;
}

/** Paths this process has open under the test folder. */
function openFilesInDir(): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

describe('background fsync (syncInBackground, DECISIONS P16)', () => {
  it('readBatch returns an entry only once the fdatasync covering it returned; appends meanwhile share the next one', () => {
    const syncs = heldSyncs();
    const b = openBuffer({ syncInBackground: true, hooks: { syncWal: syncs.hook } });
    const l = listener();
    b.setSyncListener(l);
    expect(b.syncedSeq).toBe(0);
    b.append(entries(3, 'a'));
    expect(b.nextSeq).toBe(4);
    expect(syncs.pending).toHaveLength(1);
    expect(b.readBatch(1, 100)).toBeNull(); // committed, not yet on disk: not sendable
    b.append(entries(2, 'b')); // while the first sync runs: no second one yet
    expect(syncs.pending).toHaveLength(1);
    syncs.pending.shift()!(null);
    expect(b.syncedSeq).toBe(3);
    expect(l.syncedTo).toEqual([3]);
    const first = b.readBatch(1, 100)!;
    expect([first.seqStart, first.seqEnd]).toEqual([1, 3]); // not seqs 4-5
    expect(syncs.pending).toHaveLength(1); // the appends made meanwhile got their own sync
    syncs.pending.shift()!(null);
    expect(b.syncedSeq).toBe(5);
    const all = b.readBatch(1, 100)!;
    expect([all.seqStart, all.seqEnd]).toEqual([1, 5]);
    expect(l.syncedTo).toEqual([3, 5]);
    expect(l.failures).toEqual([]);
  });

  it('the cap holds when the batch is read from SQLite (past the in-memory tail) too', () => {
    const syncs = heldSyncs();
    const b = openBuffer({ syncInBackground: true, tailMaxBytes: 1, hooks: { syncWal: syncs.hook } });
    b.append(entries(10));
    syncs.pending.shift()!(null);
    b.append(entries(10, 'late'));
    const batch = b.readBatch(1, 1000)!;
    expect(b.readCounts.sqlite).toBeGreaterThan(0);
    expect([batch.seqStart, batch.seqEnd]).toEqual([1, 10]);
    expect(b.readBatch(11, 1000)).toBeNull();
  });

  it('with the real fdatasync: entries become sendable once it returns, and survive a reopen', async () => {
    const b = openBuffer({ syncInBackground: true });
    const synced = new Promise<number>((resolve) => b.setSyncListener({ synced: resolve, failed: (err) => resolve(Promise.reject(err) as never) }));
    b.append(entries(5));
    expect(await synced).toBe(5);
    expect(b.readBatch(1, 100)!.entries).toHaveLength(5);
    b.close();
    open.pop();
    const again = openBuffer({ syncInBackground: true });
    expect(again.syncedSeq).toBe(5); // what is in the WAL at open is synced then, and sendable at once
    expect(again.readBatch(1, 100)!.seqEnd).toBe(5);
  });

  it('a failed fdatasync: the listener hears it, the buffer goes to FULL commits and makes everything so far sendable through one', () => {
    const syncs = heldSyncs();
    const b = openBuffer({ syncInBackground: true, hooks: { syncWal: syncs.hook } });
    const l = listener();
    b.setSyncListener(l);
    b.append(entries(4));
    const walHandles = (): number => openFilesInDir().filter((p) => p.endsWith('buffer.db-wal')).length;
    expect(walHandles()).toBe(2); // SQLite's and the one the syncs use
    const eio = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    syncs.pending.shift()!(eio);
    expect(l.failures).toEqual([eio]);
    expect(b.syncedSeq).toBe(4); // through a FULL commit of the meta row
    expect(l.syncedTo).toEqual([4]);
    b.append(entries(2, 'after'));
    expect(syncs.pending).toHaveLength(0); // FULL: the commit synced itself
    expect(b.syncedSeq).toBe(6);
    expect(b.readBatch(1, 100)!.seqEnd).toBe(6);
    expect(walHandles()).toBe(1); // the syncs' descriptor is closed
  });

  it('close while an fdatasync runs: its descriptor is closed when it returns, not before', () => {
    const syncs = heldSyncs();
    const b = openBuffer({ syncInBackground: true, hooks: { syncWal: syncs.hook } });
    const l = listener();
    b.setSyncListener(l);
    b.append(entries(2));
    const fd = syncs.fds[0]!;
    b.close();
    open.pop();
    expect(readlinkSync(`/proc/self/fd/${fd}`)).toContain('buffer.db-wal'); // still ours while the sync uses it
    syncs.pending.shift()!(null);
    expect(openFilesInDir()).toEqual([]);
    expect(l.syncedTo).toEqual([]); // nothing told after close
  });

  it('without syncInBackground an append is sendable at once (FULL commits), as before', () => {
    const b = openBuffer();
    b.append(entries(3));
    expect(b.syncedSeq).toBe(3);
    expect(b.readBatch(1, 100)!.seqEnd).toBe(3);
  });

  it('a next_seq jump (applyAccepted) is synced too, and entries after it are sent from there', () => {
    const syncs = heldSyncs();
    const b = openBuffer({ syncInBackground: true, hooks: { syncWal: syncs.hook } });
    b.applyAccepted(100);
    expect(b.nextSeq).toBe(101);
    expect(syncs.pending).toHaveLength(1);
    syncs.pending.shift()!(null);
    expect(b.syncedSeq).toBe(100);
    b.append(entries(2));
    expect(b.readBatch(101, 100)).toBeNull();
    syncs.pending.shift()!(null);
    expect(b.readBatch(101, 100)!.seqEnd).toBe(102);
  });
});
