// SessionIngest without storage: the commits are promises these tests settle, the timers
// (and performance.now) fake.
//
// After a failed commit (DECISIONS H72): one -32007 while a later push of the session waited
// used to leave the session committing nothing more until K entries (or 256 KiB) piled up —
// the T timer was never armed again, so a quiet agent's resend went unanswered and 30 s later
// the agent took the session for dead and reconnected (a 0.4 s PostgreSQL restart made 137 of
// 150 agents reconnect). The wire test on both dialects is in ingest-wire.test.ts.
//
// The per-host bucket is charged only for what the queue took (DECISIONS H75).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LogsPushParams, LogsPushResult } from '@cortex/agent-protocol';
import { Ingest, type SessionIngest } from '../../server/ingest.js';
import { createCapturingLogger } from '../../server/log.js';
import type { CommitResult, Storage } from '../../server/db/storage.js';

const T = 200;

interface HeldCommit {
  seqs: number[];
  resolve(r: CommitResult): void;
  reject(e: Error): void;
}

/** An Ingest on a storage whose every commit waits until the test settles it. */
function setup(o: { queueCapacityEntries?: number; agentRatePerSec?: number; flushEntries?: number } = {}): { session: SessionIngest; commits: HeldCommit[]; ingest: Ingest } {
  const commits: HeldCommit[] = [];
  const storage = {
    ingest: {
      commitBatch: (_host: string, entries: readonly { seq: number }[]) =>
        new Promise<CommitResult>((resolve, reject) => commits.push({ seqs: entries.map((e) => e.seq), resolve, reject })),
    },
  } as unknown as Storage;
  const { logger } = createCapturingLogger();
  const ingest = new Ingest(storage, logger, { maxBatchEntries: 1000, queueCapacityEntries: 10_000, agentRatePerSec: 1_000_000, flushMs: T, ...o });
  return { session: ingest.session('host-1'), commits, ingest };
}

/** The code of the error a push is refused with at once (before anything is queued). */
function refusedAt(session: SessionIngest, from: number, count: number): number | undefined {
  try {
    void push(session, from, count);
  } catch (error) {
    return (error as { code?: number }).code;
  }
  return undefined;
}

function push(session: SessionIngest, from: number, count: number): Promise<LogsPushResult> {
  const entries = Array.from({ length: count }, (_, i) => ({ seq: from + i, ts: '2026-01-01T00:00:00.000Z', severity: 'info', message: `m${from + i}`, source: 'custom:test' }));
  return session.push({ seq_start: from, entries } as LogsPushParams);
}

/** What became of a push by now: its ack, its error code, or 'waiting'. */
function outcome(p: Promise<LogsPushResult>): () => string {
  let seen = 'waiting';
  p.then(
    (r) => (seen = `acked ${r.up_to_seq}`),
    (e: { code?: number }) => (seen = `refused ${e.code}`),
  );
  return () => seen;
}

/** PostgreSQL terminated the backend the commit waited on (pg_terminate_backend, a restart). */
const terminated = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

const committed = (accepted_seq: number, previous: number): CommitResult => ({ accepted_seq, previous_accepted_seq: previous, inserted: accepted_seq - previous });

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'], now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('after a failed commit with a later push of the session waiting, a resend below K is committed within T', () => {
  it('the T timer of the later push fired while the commit waited', async () => {
    const { session, commits } = setup();
    const a = outcome(push(session, 1, 1));
    await vi.advanceTimersByTimeAsync(T);
    expect(commits).toHaveLength(1); // A is being committed (the database holds it up)
    const b = outcome(push(session, 2, 1));
    await vi.advanceTimersByTimeAsync(T + 50); // B's T passes while A's commit waits
    commits[0]!.reject(terminated());
    await vi.advanceTimersByTimeAsync(0);
    expect([a(), b()]).toEqual(['refused -32007', 'refused -32007']);
    // The agent resends from seq 1, one small push.
    const resend = outcome(push(session, 1, 2));
    await vi.advanceTimersByTimeAsync(T + 50);
    expect(commits, 'the resend was not committed within T').toHaveLength(2);
    expect(commits[1]!.seqs).toEqual([1, 2]);
    commits[1]!.resolve(committed(2, 0));
    await vi.advanceTimersByTimeAsync(0);
    expect(resend()).toBe('acked 2');
    // and the next push goes the same way
    const next = outcome(push(session, 3, 1));
    await vi.advanceTimersByTimeAsync(T + 50);
    expect(commits).toHaveLength(3);
    commits[2]!.resolve(committed(3, 2));
    await vi.advanceTimersByTimeAsync(0);
    expect(next()).toBe('acked 3');
  });

  it('the commit failed before the later push had waited T (its timer left armed)', async () => {
    const { session, commits, ingest } = setup();
    const a = outcome(push(session, 1, 1));
    await vi.advanceTimersByTimeAsync(T);
    const b = outcome(push(session, 2, 1));
    await vi.advanceTimersByTimeAsync(50);
    commits[0]!.reject(terminated());
    await vi.advanceTimersByTimeAsync(0);
    expect([a(), b()]).toEqual(['refused -32007', 'refused -32007']);
    expect(ingest.queuedEntries).toBe(0);
    // B's timer is due now: nothing is pending for it
    await vi.advanceTimersByTimeAsync(T);
    expect(commits).toHaveLength(1);
    const resend = outcome(push(session, 1, 2));
    await vi.advanceTimersByTimeAsync(T + 50);
    expect(commits, 'the resend was not committed within T').toHaveLength(2);
    commits[1]!.resolve(committed(2, 0));
    await vi.advanceTimersByTimeAsync(0);
    expect(resend()).toBe('acked 2');
  });

  it('a commit that succeeds while a later push waits: the later one is committed next, within T', async () => {
    const { session, commits } = setup();
    const a = outcome(push(session, 1, 1));
    await vi.advanceTimersByTimeAsync(T);
    const b = outcome(push(session, 2, 1));
    await vi.advanceTimersByTimeAsync(T + 50);
    commits[0]!.resolve(committed(1, 0));
    await vi.advanceTimersByTimeAsync(0);
    expect(a()).toBe('acked 1');
    expect(commits).toHaveLength(2); // B's T had passed: committed at once
    commits[1]!.resolve(committed(2, 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(b()).toBe('acked 2');
    // nothing pending, no commit of nothing; the next push waits its T as usual
    await vi.advanceTimersByTimeAsync(5 * T);
    expect(commits).toHaveLength(2);
    const c = outcome(push(session, 3, 1));
    await vi.advanceTimersByTimeAsync(T - 10);
    expect(commits).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(20);
    expect(commits).toHaveLength(3);
    commits[2]!.resolve(committed(3, 2));
    await vi.advanceTimersByTimeAsync(0);
    expect(c()).toBe('acked 3');
  });
});

describe('the per-host bucket (DECISIONS H75)', () => {
  it('a push the queue refuses (-32020) is not charged: the resend fits where it would not if it had been', async () => {
    // rate 100/s (a burst of 100); time stands still, so nothing leaks out of the bucket; K = 50
    const { session, commits, ingest } = setup({ queueCapacityEntries: 60, agentRatePerSec: 100, flushEntries: 50 });
    const first = outcome(push(session, 1, 50)); // committed at once (K), held
    expect(refusedAt(session, 51, 20)).toBe(-32020); // 70 > 60 queued
    expect(refusedAt(session, 51, 20)).toBe(-32020); // and again
    commits[0]!.resolve(committed(50, 0));
    await vi.advanceTimersByTimeAsync(0);
    expect(first()).toBe('acked 50');
    expect(ingest.queuedEntries).toBe(0);
    // 50 taken, 50 left: the resend of 50 fits (charged for the refused ones, it would be 90 + 50)
    const resend = outcome(push(session, 51, 50));
    expect(commits).toHaveLength(2);
    commits[1]!.resolve(committed(100, 50));
    await vi.advanceTimersByTimeAsync(0);
    expect(resend()).toBe('acked 100');
    expect(refusedAt(session, 101, 1)).toBe(-32030); // the bucket is full now
  });
});
