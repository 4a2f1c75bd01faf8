import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackpressureError, BufferOverflowError, PayloadTooLargeError, PeerError, UnknownHostError, type LogsPushResult } from '@cortex/agent-protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import type { NewLogEntry } from '../../agent/buffer/entry.js';
import { createLogger } from '../../agent/log.js';
import { BATCH_RECOVER_AFTER_ACKS, MIN_REFUSAL_PAUSE_MS, READ_ERROR_LOG_EVERY_MS, PushPump, type PushConn, type PushPumpDeps } from '../../agent/push-pump.js';
import { SendRate } from '../../agent/send-rate.js';

interface Push {
  seqStart: number;
  seqs: number[];
  resolve: (r: LogsPushResult) => void;
  reject: (e: unknown) => void;
}

/** A connection whose logs.push answers the test gives; resolves waiters as pushes arrive. */
function fakeConn() {
  const pushes: Push[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let terminated = 0;
  const conn: PushConn = {
    inFlight: 0,
    ws: { terminate: () => void terminated++ },
    peer: {
      requestSerialized: ((method: string, json: string) => {
        expect(method).toBe('logs.push');
        const params = JSON.parse(json) as { seq_start: number; entries: { seq: number }[] };
        return new Promise((resolve, reject) => {
          pushes.push({ seqStart: params.seq_start, seqs: params.entries.map((e) => e.seq), resolve, reject });
          for (const w of waiters.splice(0)) if (pushes.length >= w.n) w.resolve();
            else waiters.push(w);
        });
      }) as PushConn['peer']['requestSerialized'],
    },
  };
  return {
    conn,
    pushes,
    terminated: () => terminated,
    /** Resolves once `n` pushes were sent in all. */
    sent: (n: number) => new Promise<void>((resolve) => (pushes.length >= n ? resolve() : waiters.push({ n, resolve }))),
  };
}

let dir: string;
let buffer: DurableBuffer;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cortex-pump-'));
  buffer = DurableBuffer.open(join(dir, 'buffer.db'));
});
afterEach(() => {
  buffer.close();
  rmSync(dir, { recursive: true, force: true });
});

function entries(n: number): NewLogEntry[] {
  return Array.from({ length: n }, (_, i) => ({ ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: `m${i}`, source: 'custom:test' }));
}

/** A pump over the temp buffer and a fake connection; `state` says what the session is doing. */
function pumpFor(overrides: Partial<PushPumpDeps> = {}, config = { max_batch_entries: 1000, flush_interval_ms: 10 }) {
  const c = fakeConn();
  const events = new EventEmitter();
  const state = { draining: false, sending: true, acked: [] as number[], closed: 0, errors: [] as string[], lastError: null as string | null };
  const pump = new PushPump({
    options: {},
    log: createLogger({ level: 'silent' }),
    buffer,
    config: () => config,
    connection: () => c.conn,
    canSend: () => state.sending,
    draining: () => state.draining,
    acked: (seq) => state.acked.push(seq),
    afterAck: () => false,
    storageError: () => undefined,
    setError: (m) => (state.errors.push(m), (state.lastError = m)),
    clearErrorIf: (m) => void (state.lastError === m && (state.lastError = null)),
    closeConnection: () => void state.closed++,
    markDirty: () => undefined,
    events,
    ...overrides,
  });
  return { pump, ...c, state, events };
}

describe('push pump: batch sizing and window', () => {
  it('batch size is min(config, capabilities, 1000); batches are contiguous from acked_seq + 1', async () => {
    buffer.append(entries(25));
    const p = pumpFor({ options: { maxBatchEntries: 10 } }, { max_batch_entries: 1000, flush_interval_ms: 10 });
    expect(p.pump.batchSize()).toBe(10);
    expect(p.pump.capabilityBatch()).toBe(10);
    p.pump.schedule();
    await p.sent(3); // 10 + 10 + the last 5 after the flush interval
    expect(p.pushes.map((x) => [x.seqStart, x.seqs.length])).toEqual([
      [1, 10],
      [11, 10],
      [21, 5],
    ]);
    for (const x of p.pushes) expect(x.seqs).toEqual(Array.from({ length: x.seqs.length }, (_, i) => x.seqStart + i));
    const small = pumpFor({}, { max_batch_entries: 7, flush_interval_ms: 10 });
    expect(small.pump.batchSize()).toBe(7);
  });

  it('keeps at most `window` pushes in flight and sends the next on an ack', async () => {
    buffer.append(entries(60));
    const p = pumpFor({ options: { maxBatchEntries: 10, window: 2 } });
    p.pump.schedule();
    await p.sent(2);
    await new Promise((r) => setImmediate(r));
    expect(p.pushes).toHaveLength(2);
    expect(p.conn.inFlight).toBe(2);
    p.pushes[0]!.resolve({ up_to_seq: 10 });
    await p.sent(3);
    expect(p.pushes[2]!.seqStart).toBe(21);
    expect(p.state.acked).toEqual([10]);
    expect(buffer.ackedSeq).toBe(10);
  });

  it('sends nothing while the session cannot send', async () => {
    buffer.append(entries(5));
    const p = pumpFor();
    p.state.sending = false;
    p.pump.schedule();
    await new Promise((r) => setTimeout(r, 30)); // longer than the flush interval
    expect(p.pushes).toHaveLength(0);
    p.state.sending = true;
    p.pump.schedule();
    await p.sent(1);
    expect(p.pushes[0]!.seqs).toEqual([1, 2, 3, 4, 5]);
  });

  it('resume(accepted_seq) sends from after what the server has', async () => {
    buffer.append(entries(30));
    const p = pumpFor({ options: { maxBatchEntries: 10 } });
    expect(p.pump.resume(12)).toBe(13);
    p.pump.schedule();
    await p.sent(1);
    expect(p.pushes[0]!.seqStart).toBe(13);
  });
});

describe('push pump: acks', () => {
  it('an ack deletes rows up to up_to_seq; one beyond the highest seq sent is clipped', async () => {
    buffer.append(entries(10));
    const p = pumpFor({ options: { maxBatchEntries: 5, window: 1 } });
    p.pump.schedule();
    await p.sent(1);
    p.pushes[0]!.resolve({ up_to_seq: 999 }); // a broken server
    await p.sent(2);
    expect(buffer.ackedSeq).toBe(5); // not 999: entries 6..10 were never sent
    expect(buffer.stats().queueDepth).toBe(5);
    p.pushes[1]!.resolve({ up_to_seq: 10 });
    await new Promise((r) => setImmediate(r));
    expect(p.state.acked).toEqual([5, 10]);
  });

  it('waitIdle resolves when the last push in flight is answered', async () => {
    buffer.append(entries(5));
    const p = pumpFor();
    p.pump.schedule();
    await p.sent(1);
    let idle = false;
    const w = p.pump.waitIdle(p.conn, 60_000).then(() => (idle = true));
    await new Promise((r) => setImmediate(r));
    expect(idle).toBe(false);
    p.pushes[0]!.resolve({ up_to_seq: 5 });
    await w;
    expect(p.conn.inFlight).toBe(0);
  });
});

describe('push pump: errors', () => {
  it('-32020 halves the send rate, narrows the window to 1 and resends the refused batch after retry_after_ms', async () => {
    buffer.append(entries(40));
    const rate = new SendRate();
    const p = pumpFor({ options: { maxBatchEntries: 10, window: 4 }, rate });
    const errors: unknown[] = [];
    p.events.on('push_error', (e) => errors.push(e));
    p.pump.schedule();
    await p.sent(4);
    expect(p.pump.rateCap()).toBeNull();
    p.pushes[0]!.reject(new BackpressureError({ retry_after_ms: 5 }));
    await new Promise((r) => setImmediate(r));
    const cap = p.pump.rateCap();
    // half of max(observed 40/s, twice the 50/s floor) = 50, recovering linearly towards 100
    // over 10 s from the halving: a loaded machine reads it a millisecond or more later (50.005)
    expect(cap).toBeGreaterThanOrEqual(50);
    expect(cap).toBeLessThan(51);
    expect(errors).toEqual([{ code: -32020, seq_start: 1, seq_end: 10 }]);
    // the later pushes of the old window come back refused because the first was
    // (DECISIONS B6a, resend_from_seq): that is no new load signal, no second halving
    for (const x of p.pushes.slice(1)) x.reject(new BackpressureError({ retry_after_ms: 5, resend_from_seq: 1 } as { retry_after_ms: number }));
    await p.sent(5);
    expect(p.pump.rateCap()!).toBeGreaterThanOrEqual(cap!);
    expect(p.pushes[4]!.seqStart).toBe(1); // resent from the refused batch
    // one push at a time while the rate recovers
    await new Promise((r) => setTimeout(r, 50));
    expect(p.conn.inFlight).toBe(1);
    expect(p.pushes).toHaveLength(5);
  });

  it("-32007 keeps the batch, resends it after retry_after_ms and shows the server's reason as last_error until an ack", async () => {
    buffer.append(entries(5));
    const p = pumpFor({ options: { window: 1 } });
    p.pump.schedule();
    await p.sent(1);
    p.pushes[0]!.reject(new BufferOverflowError({ retry_after_ms: 5, reason: "commit failed: the server's disk is full; nothing of the batch was stored" } as never));
    await p.sent(2);
    expect(p.pushes[1]!.seqStart).toBe(1);
    expect(p.state.lastError).toBe("the server could not store logs.push (-32007: commit failed: the server's disk is full; nothing of the batch was stored); the entries are kept and resent");
    p.pushes[1]!.resolve({ up_to_seq: 5 } as LogsPushResult);
    await new Promise((r) => setImmediate(r));
    expect(p.state.lastError).toBeNull();
    expect(buffer.ackedSeq).toBe(5);
  });

  it('-32007 again and again (the server database out): one warning per reason and minute, then one line when pushes are stored again', async () => {
    buffer.append(entries(5));
    const lines: Record<string, unknown>[] = [];
    let now = 1_000_000;
    const p = pumpFor({ options: { window: 1 }, now: () => now, log: createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }) });
    p.pump.schedule();
    const refuse = async (i: number, reason: string) => {
      await p.sent(i + 1);
      p.pushes[i]!.reject(new BufferOverflowError({ retry_after_ms: 0, reason } as never));
      await new Promise((r) => setImmediate(r)); // the refusal handled: paused from `now`
      now += MIN_REFUSAL_PAUSE_MS; // an advice of 0 still pauses this long (H54)
    };
    const out = 'commit failed: the server cannot reach its database; nothing of the batch was stored';
    for (let i = 0; i < 10; i++) {
      await refuse(i, out);
      now += 1000;
    }
    const warned = () => lines.filter((l) => l['msg'] === 'server could not store the batch; keeping it and resending after a pause');
    expect(warned()).toHaveLength(1);
    now += 60_000;
    await refuse(10, out);
    expect(warned()).toHaveLength(2);
    expect(warned()[1]).toMatchObject({ reason: out, refused_since_last_line: 9 });
    const full = "commit failed: the server's disk is full; nothing of the batch was stored";
    await refuse(11, full); // another reason: said at once
    await refuse(12, full);
    await refuse(13, full);
    expect(warned()).toHaveLength(3);
    await p.sent(15);
    p.pushes[14]!.resolve({ up_to_seq: 5 } as LogsPushResult);
    await new Promise((r) => setImmediate(r));
    expect(lines.filter((l) => l['msg'] === 'the server stores logs.push again')).toEqual([expect.objectContaining({ refused_since_last_line: 2 })]);
    expect(p.state.lastError).toBeNull();
  });

  it('a buffer that cannot be read is retried every second and said once a minute per error; once it reads again, one line and last_error cleared', async () => {
    buffer.append(entries(5));
    const lines: Record<string, unknown>[] = [];
    let now = 1_000_000;
    let failing: string | null = 'buffer x: readBatch failed: disk I/O error (SQLITE_IOERR_READ)';
    let reads = 0;
    const reading: PushPumpDeps['buffer'] = {
      get syncedSeq() {
        return buffer.syncedSeq;
      },
      get ackedSeq() {
        return buffer.ackedSeq;
      },
      get pressure() {
        return buffer.pressure;
      },
      ack: (n) => buffer.ack(n),
      readBatch: (from, max, bytes) => {
        reads++;
        if (failing !== null) throw new Error(failing);
        return buffer.readBatch(from, max, bytes);
      },
    };
    const p = pumpFor({ buffer: reading, now: () => now, log: createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }) });
    const said = () => lines.filter((l) => String(l['msg']).startsWith('cannot read the buffer'));
    const attempt = async () => {
      const before = reads;
      p.pump.schedule();
      while (reads === before) await new Promise((r) => setImmediate(r));
      now += 1000;
    };
    for (let i = 0; i < 5; i++) await attempt();
    expect(reads).toBe(5);
    expect(said()).toEqual([expect.objectContaining({ level: 'error', err: failing })]);
    expect(p.state.lastError).toBe(failing);
    now += READ_ERROR_LOG_EVERY_MS;
    await attempt();
    expect(said()).toHaveLength(2);
    expect(said()[1]).toMatchObject({ failed_since_last_line: 4 });
    failing = 'buffer x: readBatch failed: another error';
    await attempt(); // another error: said at once
    expect(said()).toHaveLength(3);
    expect(p.state.lastError).toBe(failing);
    failing = null;
    p.pump.schedule();
    await p.sent(1);
    expect(p.pushes[0]!.seqs).toEqual([1, 2, 3, 4, 5]);
    expect(lines.filter((l) => l['msg'] === 'the buffer reads again')).toEqual([expect.objectContaining({ failed_since_last_line: 0 })]);
    expect(p.state.lastError).toBeNull();
  });

  it('-32008 halves the batch size', async () => {
    buffer.append(entries(20));
    const p = pumpFor({ options: { window: 1 } });
    p.pump.schedule();
    await p.sent(1);
    expect(p.pushes[0]!.seqs).toHaveLength(20);
    p.pushes[0]!.reject(new PayloadTooLargeError({ max_frame_bytes: 1 } as never));
    await p.sent(2);
    expect(p.pump.batchSize()).toBe(500);
  });

  it('-32008 halvings are not for good: the size doubles back after acks, and a new session starts at full size (H54)', async () => {
    buffer.append(entries(400));
    const p = pumpFor({ options: { window: 1 } });
    p.pump.schedule();
    let i = 0;
    for (; i < 10; i++) {
      await p.sent(i + 1);
      p.pushes[i]!.reject(new PayloadTooLargeError({ max_frame_bytes: 1 } as never));
    }
    await p.sent(i + 1);
    expect(p.pump.batchSize()).toBe(1); // 1000 halved ten times
    // acked pushes: after each BATCH_RECOVER_AFTER_ACKS the size doubles
    let acks = 0;
    while (p.pump.batchSize() < 4) {
      const push = p.pushes[i]!;
      push.resolve({ up_to_seq: push.seqs.at(-1)! } as LogsPushResult);
      acks++;
      i++;
      await p.sent(i + 1);
    }
    expect(acks).toBe(2 * BATCH_RECOVER_AFTER_ACKS);
    expect(p.pushes[i]!.seqs).toHaveLength(4);
    p.pump.resume(buffer.ackedSeq);
    expect(p.pump.batchSize()).toBe(1000);
  });

  it('-32020 again and again: one "slow down" line per 10 s, with the refusals between counted (H54)', async () => {
    buffer.append(entries(5));
    const lines: Record<string, unknown>[] = [];
    let now = 1_000_000;
    const p = pumpFor({ options: { window: 1 }, now: () => now, log: createLogger({ level: 'info', destination: { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) } }) });
    p.pump.schedule();
    for (let i = 0; i < 6; i++) {
      await p.sent(i + 1);
      p.pushes[i]!.reject(new BackpressureError({ retry_after_ms: 0, resend_from_seq: 1 } as { retry_after_ms: number }));
      await new Promise((r) => setImmediate(r));
      now += i === 4 ? 10_000 : MIN_REFUSAL_PAUSE_MS;
    }
    await p.sent(7);
    const slow = lines.filter((l) => l['msg'] === 'server asked to slow down');
    expect(slow).toHaveLength(2);
    expect(slow[1]).toMatchObject({ refused_since_last_line: 4 });
  });

  it('a refusal advising retry_after_ms 0 still pauses MIN_REFUSAL_PAUSE_MS: no tight resend loop (H54)', async () => {
    buffer.append(entries(10));
    const p = pumpFor({ options: { window: 1 } });
    p.pump.schedule();
    await p.sent(1);
    const refusedAt = performance.now();
    p.pushes[0]!.reject(new BackpressureError({ retry_after_ms: 0, resend_from_seq: 1 } as { retry_after_ms: number }));
    await p.sent(2);
    expect(performance.now() - refusedAt).toBeGreaterThanOrEqual(MIN_REFUSAL_PAUSE_MS - 5);
    p.pushes[1]!.reject(new PayloadTooLargeError({ max_frame_bytes: 1 } as never));
    const halvedAt = performance.now();
    await p.sent(3);
    expect(performance.now() - halvedAt).toBeGreaterThanOrEqual(MIN_REFUSAL_PAUSE_MS - 5);
  });

  it('-32004 closes the connection cleanly (the close handler reconnects); a timeout terminates it', async () => {
    buffer.append(entries(5));
    const p = pumpFor({ options: { window: 1 } });
    p.pump.schedule();
    await p.sent(1);
    p.pushes[0]!.reject(new UnknownHostError());
    await new Promise((r) => setImmediate(r));
    expect(p.state.closed).toBe(1);
    expect(p.state.errors[0]).toMatch(/-32004 UnknownHost/);
    p.pump.schedule();
    await p.sent(2);
    p.pushes[1]!.reject(new PeerError('timeout', 'timed out'));
    await new Promise((r) => setImmediate(r));
    expect(p.terminated()).toBe(1);
  });

  it('an answer for a connection that is no longer current changes nothing but the count in flight', async () => {
    buffer.append(entries(5));
    let current: PushConn | null = null;
    const p = pumpFor({ connection: () => current });
    current = p.conn;
    p.pump.schedule();
    await p.sent(1);
    current = null;
    p.pushes[0]!.reject(new BackpressureError({ retry_after_ms: 5 }));
    await new Promise((r) => setImmediate(r));
    expect(p.conn.inFlight).toBe(0);
    expect(p.pump.rateCap()).toBeNull();
  });
});
