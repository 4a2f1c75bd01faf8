import { describe, expect, it } from 'vitest';
import { createCapturingLogger, createLogger } from '../../agent/log.js';
import { STATUS_RECHECK_MS, STATUS_REFRESH_MS, StatusWriter } from '../../agent/status-writer.js';
import { toStatusFile, type AgentStatus, type StatusFile } from '../../agent/status-file.js';

const base: AgentStatus = {
  state: 'Active',
  stopped: false,
  host_id: 'h',
  server_url: 'ws://x/ws/agent',
  server_urls: ['ws://x/ws/agent'],
  proxy: null,
  session_id: 's',
  next_seq: 1,
  acked_seq: 0,
  queue_depth: 0,
  buffer_bytes: 0,
  push_lag_seq: 0,
  evicted_entries: 0,
  sources_paused: false,
  sources: [],
  last_error: null,
  batch_entries: 1000,
  send_rate_cap: null,
  clock_offset_ms: null,
};

/** A writer whose file writes the test completes by hand. */
function writerFor(status: () => AgentStatus, logger = createLogger({ level: 'silent' })) {
  let t = 1_000_000;
  const writes: { status: StatusFile; done: () => void; fail: (e: Error) => void }[] = [];
  let computed = 0;
  const w = new StatusWriter(
    '/nonexistent',
    () => {
      computed++;
      return toStatusFile(status(), 42, new Date(t));
    },
    logger,
    {
      now: () => t,
      write: (_dir, s) => new Promise<void>((resolve, reject) => writes.push({ status: s, done: resolve, fail: reject })),
    },
  );
  return { w, writes, computed: () => computed, advance: (ms: number) => (t += ms) };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('status writer', () => {
  it('status.json carries the status without the buffer counters; send_rate_cap rounded; degraded only when set', () => {
    const f = toStatusFile({ ...base, send_rate_cap: 123.6 }, 7, new Date(0));
    expect(f).toEqual({
      pid: 7,
      updated_at: '1970-01-01T00:00:00.000Z',
      state: 'Active',
      stopped: false,
      server_url: 'ws://x/ws/agent',
      server_urls: ['ws://x/ws/agent'],
      proxy: null,
      session_id: 's',
      host_id: 'h',
      last_error: null,
      sources_paused: false,
      sources: [],
      batch_entries: 1000,
      send_rate_cap: 124,
      clock_offset_ms: null,
    });
    const degraded = { next_seq: 5, lost_from: 1, lost_to: 4 } as unknown as NonNullable<AgentStatus['degraded']>;
    expect(toStatusFile({ ...base, degraded }).degraded).toBe(degraded);
  });

  it('writes when something changed, skips an unchanged status, and refreshes it every 30 s', async () => {
    let s = base;
    const h = writerFor(() => s);
    h.w.write(false); // dirty at first
    expect(h.writes).toHaveLength(1);
    h.writes[0]!.done();
    await settle();
    h.w.write(false); // nothing changed: not even recomputed
    expect(h.computed()).toBe(1);
    h.w.markDirty();
    h.w.write(false); // marked dirty but the same content: recomputed, not written
    expect(h.computed()).toBe(2);
    expect(h.writes).toHaveLength(1);
    s = { ...base, last_error: 'boom' };
    h.w.markDirty();
    h.w.write(false);
    expect(h.writes).toHaveLength(2);
    expect(h.writes[1]!.status.last_error).toBe('boom');
    h.writes[1]!.done();
    await settle();
    h.advance(STATUS_REFRESH_MS);
    h.w.write(false);
    expect(h.writes).toHaveLength(3);
  });

  it('a change nobody marked (a source that failed on its own) is written within STATUS_RECHECK_MS, not at the 30 s refresh', async () => {
    let s = base;
    const h = writerFor(() => s);
    h.w.write(false);
    h.writes[0]!.done();
    await settle();
    s = { ...base, sources: [{ kind: 'file', path: '/x/fifo.log', name: null, position: null, last_error: '/x/fifo.log: EINVAL is a FIFO (named pipe)', paused: false }] };
    h.advance(STATUS_RECHECK_MS - 1);
    h.w.write(false);
    expect(h.writes).toHaveLength(1); // not yet recomputed
    h.advance(1);
    h.w.write(false);
    expect(h.writes).toHaveLength(2);
    expect(h.writes[1]!.status.sources[0]!.last_error).toMatch(/FIFO/);
    h.writes[1]!.done();
    await settle();
    h.advance(STATUS_RECHECK_MS);
    h.w.write(false); // recomputed, unchanged: not written
    expect(h.computed()).toBe(3);
    expect(h.writes).toHaveLength(2);
  });

  it('one write at a time: a write asked for meanwhile runs after it, forced', async () => {
    let s = base;
    const h = writerFor(() => s);
    h.w.write(true);
    s = { ...base, state: 'Reconnecting' };
    h.w.write(true);
    expect(h.writes).toHaveLength(1);
    h.writes[0]!.done();
    await settle();
    expect(h.writes).toHaveLength(2);
    expect(h.writes[1]!.status.state).toBe('Reconnecting');
  });

  it('a failed write is logged, not thrown; flush waits for the final write', async () => {
    const h = writerFor(() => ({ ...base, stopped: true }));
    h.w.write(true);
    h.writes[0]!.fail(new Error('ENOSPC'));
    await settle();
    let flushed = false;
    const f = h.w.flush().then(() => (flushed = true));
    await settle();
    expect(h.writes).toHaveLength(2);
    expect(flushed).toBe(false);
    h.writes[1]!.done();
    await f;
    expect(h.writes[1]!.status.stopped).toBe(true);
  });

  it('after a failed write the next tick writes again, not 30 s later (a full disk must not leave status.json stale)', async () => {
    const h = writerFor(() => ({ ...base, sources_paused: true }));
    h.w.write(true);
    h.writes[0]!.fail(Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }));
    await settle();
    h.w.write(false); // the periodic tick, content unchanged
    expect(h.writes).toHaveLength(2);
    h.writes[1]!.done();
    await settle();
    h.w.write(false); // written now: an unchanged status waits for the refresh again
    expect(h.writes).toHaveLength(2);
  });

  // H40: an agent out of descriptors (EMFILE) kept an old status.json for good, said at debug only
  it('a failing write is said once at warn (not at every retry), and its recovery once at info', async () => {
    const cap = createCapturingLogger('info');
    const h = writerFor(() => base, cap.logger);
    for (let i = 0; i < 3; i++) {
      h.w.write(true);
      h.writes[i]!.fail(Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' }));
      await settle();
    }
    const said = () => cap.lines.map((l) => `${String(l['level'])} ${String(l['msg'])}`);
    expect(said()).toEqual(['warn cannot write status.json: `cortex-agent status` shows what it held before; trying again']);
    h.w.write(true);
    h.writes[3]!.done();
    await settle();
    expect(said()).toEqual(['warn cannot write status.json: `cortex-agent status` shows what it held before; trying again', 'info status.json written again']);
  });

  it('disabled: never writes', async () => {
    let writes = 0;
    const w = new StatusWriter('/nonexistent', () => toStatusFile(base), createLogger({ level: 'silent' }), {
      enabled: false,
      write: async () => void writes++,
    });
    w.start();
    w.write(true);
    await w.flush();
    w.stop();
    expect(writes).toBe(0);
  });
});
