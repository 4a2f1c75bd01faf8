// Agent disk full, end to end against a real server process. A tmpfs is not available
// here, so the buffer's SQLite page limit (max_page_count) stands in for the disk: a write
// that needs one more page fails with SQLITE_FULL exactly like ENOSPC.
// - a full buffer refuses the ingest with a clear BufferStorageError (kind disk_full,
//   message naming the remedy), stores nothing, pauses sources, keeps the file intact
//   (integrity_check ok, counters consistent), and recovers by itself when space returns;
// - over the hard cap the oldest entries are evicted and reported (metrics.push
//   buffer_evicted_entries reaches the server's `metrics` table); the rest arrive once.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BufferStorageError, startAgent, type Agent } from '../../agent/index.js';
import { enroll } from '../../agent/enroll.js';
import { createCapturingLogger } from '../../agent/log.js';
import { recordFigure } from '../support/figures.js';
import { storedTotals } from '../support/buffer-rows.js';
import { assertNoTokenLeaks, captured, checkExactlyOnce, cleanupTempDirs, issueAgent, openDbReadOnly, rememberStateToken, requireDist, startServer, tempDir, until } from '../support/procs.js';
import { TcpProxy } from '../support/tcp-proxy.js';

beforeAll(() => requireDist());
afterAll(() => cleanupTempDirs());

function gen(from: number, n: number, pad = 0) {
  const ts = new Date().toISOString();
  return Array.from({ length: n }, (_, i) => ({ ts, severity: 'info' as const, message: `gen ${from + i}${pad ? ` ${'x'.repeat(pad)}` : ''}`, source: 'custom:gen' as const }));
}

function integrity(path: string): { check: string; rows: number; queueDepth: number; bytes: number; sumBytes: number } {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const check = (db.pragma('integrity_check') as { integrity_check: string }[])[0]!.integrity_check;
    const rows = storedTotals(db);
    const meta = db.prepare('SELECT queue_depth, buffer_bytes FROM meta WHERE id = 1').get() as { queue_depth: number; buffer_bytes: number };
    return { check, rows: rows.n, queueDepth: meta.queue_depth, bytes: meta.buffer_bytes, sumBytes: rows.b };
  } finally {
    db.close();
  }
}

it('disk full: clear error, nothing stored, no corruption, recovery when space returns', async () => {
  const dir = tempDir();
  const db = join(dir, 'server.db');
  const server = await startServer(db);
  const log = createCapturingLogger('info');
  let agent: Agent | undefined;
  try {
    const x = issueAgent(db, 'diskfull');
    const stateDir = join(dir, 'a');
    await enroll({ serverUrl: server.url, token: x.token, hostId: x.host_id, stateDir, allowInsecure: true, caFile: null, logger: log.logger });
    rememberStateToken(stateDir);
    agent = await startAgent({ stateDir, logger: log.logger, storageRetryMs: 100, statusIntervalMs: 100, metricsIntervalMs: 0 });
    await agent.waitForState('Active', 15_000);
    agent.ingest(gen(1, 200));
    await agent.waitForAck(200, 15_000);

    // the "disk" is full: the file cannot grow by a single page
    // (SQLite never sets the limit below the current size: asking for 1 pins it there)
    const pages = agent.buffer.setMaxPageCount(1);
    expect(pages).toBeGreaterThan(1);
    const storageError = new Promise<BufferStorageError>((r) => agent!.once('storage_error', r));
    const before = agent.status();
    let thrown: unknown;
    let next = 201;
    for (let i = 0; i < 50 && thrown === undefined; i++) {
      try {
        agent.ingest(gen(next, 500, 200));
        next += 500; // still fit in free pages
      } catch (err) {
        thrown = err;
      }
    }
    expect(thrown).toBeInstanceOf(BufferStorageError);
    const e = thrown as BufferStorageError;
    expect(e.kind).toBe('disk_full');
    expect(e.retryable).toBe(true);
    expect(e.message).toMatch(/full; free space and the agent resumes/);
    expect(e.message).toMatch(/nothing from this append was stored/);
    await storageError;
    const during = agent.status();
    expect(during.sources_paused).toBe(true);
    expect(during.last_error).toMatch(/full/);
    expect(during.next_seq).toBe(next); // the failed append assigned no seq
    expect(during.next_seq).toBeGreaterThanOrEqual(before.next_seq);
    const mid = integrity(join(stateDir, 'buffer.db'));
    expect(mid.check).toBe('ok');
    expect(mid.queueDepth).toBe(mid.rows);
    expect(mid.bytes).toBe(mid.sumBytes);

    // space returns: the agent notices by itself (storage probe) and resumes
    const recovered = new Promise<void>((r) => agent!.once('storage_recovered', () => r()));
    agent.buffer.setMaxPageCount(1_000_000);
    await recovered;
    expect(agent.status().sources_paused).toBe(false);
    agent.ingest(gen(next, 100));
    next += 100;
    await agent.waitForAck(next - 1, 20_000);
    await agent.stop();
    agent = undefined;
    expect(await server.stop()).toBe(0);
    const r = checkExactlyOnce(db, x.host_id, next - 1);
    expect(r).toMatchObject({ missing: 0, duplicates: 0, rows: next - 1 });
    const after = integrity(join(stateDir, 'buffer.db'));
    expect(after.check).toBe('ok');
    recordFigure('disk_full', { entries: next - 1, error_kind: e.kind, lost: r.missing, duplicates: r.duplicates, integrity: after.check });
    captured.push(...log.raw);
    assertNoTokenLeaks();
  } finally {
    await agent?.stop();
    await server.kill();
  }
}, 90_000);

it('hard cap: the oldest entries are evicted and reported to the server; the rest arrive exactly once', async () => {
  const dir = tempDir();
  const db = join(dir, 'server.db');
  const server = await startServer(db);
  const proxy = await TcpProxy.start({ targetPort: server.port });
  const log = createCapturingLogger('info');
  let agent: Agent | undefined;
  try {
    const x = issueAgent(db, 'hardcap');
    const stateDir = join(dir, 'a');
    await enroll({ serverUrl: proxy.url(), token: x.token, hostId: x.host_id, stateDir, allowInsecure: true, caFile: null, logger: log.logger });
    rememberStateToken(stateDir);
    agent = await startAgent({
      stateDir,
      logger: log.logger,
      metricsIntervalMs: 300,
      pingWatchdogMs: 1000,
      backoff: { baseMs: 100, capMs: 500 },
      bufferOptions: { softCapBytes: 32 * 1024, hardCapBytes: 64 * 1024 },
    });
    await agent.waitForState('Active', 15_000);
    // the server is unreachable (link stalled, then cut): nothing is acked while we write
    proxy.stall();
    const evicted = new Promise<{ entries: number; fromSeq: number; toSeq: number }>((r) => agent!.once('evicted', r));
    let next = 1;
    for (let i = 0; i < 20; i++) {
      agent.ingest(gen(next, 100, 100));
      next += 100;
    }
    const ev = await evicted;
    expect(ev.fromSeq).toBe(1);
    const st = agent.status();
    expect(st.evicted_entries).toBeGreaterThan(0);
    expect(st.buffer_bytes).toBeLessThanOrEqual(64 * 1024);
    proxy.resume();
    proxy.cut();
    await agent.waitForAck(next - 1, 30_000);
    // reported through metrics.push
    const reported = await until(
      'buffer_evicted_entries in the server metrics table',
      () => {
        const r = openDbReadOnly(db);
        try {
          return (r.prepare("SELECT value FROM metrics WHERE host_id = ? AND name = 'buffer_evicted_entries' AND value > 0 ORDER BY ts DESC LIMIT 1").get(x.host_id) as { value: number } | undefined)?.value;
        } finally {
          r.close();
        }
      },
      15_000,
      100,
    );
    expect(reported).toBe(st.evicted_entries);
    await agent.stop();
    agent = undefined;
    expect(await server.stop()).toBe(0);
    const r = checkExactlyOnce(db, x.host_id, next - 1, false);
    // exactly the evicted seqs are missing, nothing else, no duplicates
    expect(r.missing).toBe(st.evicted_entries);
    expect(r.duplicates).toBe(0);
    recordFigure('hard_cap', { written: next - 1, evicted: st.evicted_entries, reported, delivered: r.rows, duplicates: r.duplicates });
    captured.push(...log.raw);
    assertNoTokenLeaks();
  } finally {
    await agent?.stop();
    await server.kill();
    await proxy.close();
  }
}, 90_000);
