import { afterEach, describe, expect, it } from 'vitest';
import { validateLogsPushResult } from '@cortex/agent-protocol';
import { getAgent } from '../../server/db/agents.repository.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import type { Storage } from '../../server/db/storage.js';
import { countRows, enroll, logEntries, startTestServer, waitFor, type TestServer } from './wire.js';
import { httpBase, httpRequest, metricValue } from './control-helpers.js';
import defs from '../../contract/schemas/defs.json' with { type: 'json' };

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('logs.push', () => {
  it('acks after commit; replay across reconnects is deduped (no duplicate rows, still acked)', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    const r1 = await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 150) });
    expect(validateLogsPushResult(r1.result)).toBe(true);
    expect(r1.result.up_to_seq).toBe(150);
    a.client.ws.close(1000, 'final_seq=150');
    await a.client.closed;
    const b = await enroll(t, { host_id: a.host_id, token: a.token });
    expect(b.hello.accepted_seq).toBe(150);
    // the agent replays 101..250 (it lost the ack of part of it): 101..150 are dropped, still acked
    const r2 = await b.client.request('logs.push', { seq_start: 101, entries: logEntries(101, 150) });
    expect(r2.result.up_to_seq).toBe(250);
    const r3 = await b.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 10) });
    expect(r3.result.up_to_seq).toBe(250);
    expect(await countRows(t, a.host_id)).toBe(250);
    b.client.ws.close();
    await b.client.closed;
  });

  it('ack coalescing by K: 10 pushes of 10 entries are committed and acked together, before T', async () => {
    t = await startTestServer({}, { flushMs: 5000 });
    const a = await enroll(t);
    const ids = Array.from({ length: 10 }, (_, i) => a.client.fire('logs.push', { seq_start: 1 + i * 10, entries: logEntries(1 + i * 10, 10) }));
    const first = await a.client.response(ids[0]!);
    // When the first ack arrives, every entry it covers is in the table already.
    expect(await countRows(t, a.host_id)).toBeGreaterThanOrEqual(first.result.up_to_seq);
    for (const id of ids) expect((await a.client.response(id)).result.up_to_seq).toBe(100);
    a.client.ws.close();
    await a.client.closed;
  });

  it('ack coalescing by T: a push below K is acked about 200 ms later, after its commit', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    const started = performance.now();
    const id1 = a.client.fire('logs.push', { seq_start: 1, entries: logEntries(1, 5) });
    await new Promise((r) => setTimeout(r, 50));
    const id2 = a.client.fire('logs.push', { seq_start: 6, entries: logEntries(6, 5) });
    const r1 = await a.client.response(id1);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(180);
    expect(elapsed).toBeLessThan(1500);
    expect(await countRows(t, a.host_id)).toBeGreaterThanOrEqual(r1.result.up_to_seq);
    expect(r1.result.up_to_seq).toBe(10); // both pushes were committed together
    expect((await a.client.response(id2)).result.up_to_seq).toBe(10);
    a.client.ws.close();
    await a.client.closed;
  });

  it('-32602 for non-contiguous entries and for more than 1000 entries; -32008 above the server cap', async () => {
    t = await startTestServer({ max_batch_entries: 50 });
    const a = await enroll(t);
    expect(a.hello.config.max_batch_entries).toBe(50);
    const gap = logEntries(1, 3);
    gap[2]!.seq = 9;
    const r1 = await a.client.request('logs.push', { seq_start: 1, entries: gap });
    expect(r1.error?.code).toBe(-32602);
    expect(JSON.stringify(r1.error?.data)).toContain('/entries/2/seq');
    const r2 = await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 1001) });
    expect(r2.error?.code).toBe(-32602);
    const r3 = await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 51) });
    expect(r3.error?.code).toBe(-32008);
    expect(r3.error?.data).toMatchObject({ max_entries: 50, received: 51 });
    const bad = logEntries(1, 1) as any[];
    bad[0].severity = 'loud';
    expect((await a.client.request('logs.push', { seq_start: 1, entries: bad })).error?.code).toBe(-32602);
    expect(await countRows(t, a.host_id)).toBe(0);
    a.client.ws.close();
    await a.client.closed;
  });

  it('-32020 with retry_after_ms when the ingest queue is full', async () => {
    t = await startTestServer({}, { ingestQueueEntries: 60 });
    const a = await enroll(t);
    const id1 = a.client.fire('logs.push', { seq_start: 1, entries: logEntries(1, 50) });
    const r2 = await a.client.request('logs.push', { seq_start: 51, entries: logEntries(51, 20) });
    expect(r2.error?.code).toBe(-32020);
    expect(r2.error?.data.retry_after_ms).toBeGreaterThan(0);
    // /metrics counts the refusal by code (an operator's sign the server is at capacity)
    expect(metricValue(await t.server.metrics!.text(), 'cortex_logs_push_refused_total', { code: '-32020' })).toBe(1);
    expect((await a.client.response(id1)).result.up_to_seq).toBe(50);
    // drained: accepted again
    expect((await a.client.request('logs.push', { seq_start: 51, entries: logEntries(51, 20) })).result.up_to_seq).toBe(70);
    a.client.ws.close();
    await a.client.closed;
  });

  it('-32030 with retry_after_ms past the per-agent leaky bucket (burst = one second of the rate)', async () => {
    t = await startTestServer({ agent_rate_entries_per_s: 200 });
    const a = await enroll(t);
    expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 150) })).result.up_to_seq).toBe(150);
    const r = await a.client.request('logs.push', { seq_start: 151, entries: logEntries(151, 100) });
    expect(r.error?.code).toBe(-32030);
    expect(r.error?.data.retry_after_ms).toBeGreaterThan(0);
    const text = await t.server.metrics!.text();
    expect(metricValue(text, 'cortex_logs_push_refused_total', { code: '-32030' })).toBe(1);
    expect(metricValue(text, 'cortex_logs_push_refused_total', { code: '-32020' })).toBeNaN(); // none refused for the queue
    await new Promise((res) => setTimeout(res, r.error!.data.retry_after_ms + 20));
    expect((await a.client.request('logs.push', { seq_start: 151, entries: logEntries(151, 100) })).result.up_to_seq).toBe(250);
    a.client.ws.close();
    await a.client.closed;
  });

  it('pushes of a few large entries commit once 256 KiB of text is pending, without waiting for K entries or T (set to 60 s here)', async () => {
    t = await startTestServer({}, { flushMs: 60_000 });
    const a = await enroll(t);
    const big = (from: number) => logEntries(from, 2).map((e) => ({ ...e, message: 'x'.repeat(65_536) }));
    // 2 pushes of 2 × 64 Ki characters: 256 Ki pending, 4 entries (K is 100).
    const ids = [a.client.fire('logs.push', { seq_start: 1, entries: big(1) }), a.client.fire('logs.push', { seq_start: 3, entries: big(3) })];
    const [r1, r2] = await Promise.all(ids.map((id) => a.client.response(id)));
    expect(r1!.result.up_to_seq).toBe(4);
    expect(r2!.result.up_to_seq).toBe(4);
    expect(await countRows(t, a.host_id)).toBe(4);
    a.client.ws.close();
    await a.client.closed;
  });

  it('-32007 when the commit fails: nothing stored; the resend succeeds', async () => {
    const dir = (await import('./helpers.js')).makeTempDir();
    const real = openSqliteStorage({ path: `${dir}/c.db` });
    await migrateToLatest(real);
    let failNext = true;
    const storage: Storage = {
      ...real,
      db: real.db,
      ingest: {
        commitBatch: (h, e, r) => {
          if (failNext) {
            failNext = false;
            return Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_FULL' }));
          }
          return real.ingest.commitBatch(h, e, r);
        },
        insertMetrics: (...args) => real.ingest.insertMetrics(...args),
      },
    };
    t = await startTestServer({}, { storage });
    const a = await enroll(t);
    const r1 = await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 100) });
    expect(r1.error?.code).toBe(-32007);
    // The agent shows this reason in its status; /metrics counts the failure by reason.
    expect(r1.error?.data.reason).toBe("commit failed: the server's disk is full; nothing of the batch was stored");
    expect(metricValue(await t.server.metrics!.text(), 'cortex_ingest_commit_failures_total', { reason: 'disk_full' })).toBe(1);
    expect(await countRows(t, a.host_id)).toBe(0);
    expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 100) })).result.up_to_seq).toBe(100);
    a.client.ws.close();
    await a.client.closed;
    await real.close();
  });

  it('a push pipelined behind a refused one is refused too, so the resend is never dropped as a duplicate', async () => {
    t = await startTestServer({ agent_rate_entries_per_s: 200 });
    const a = await enroll(t);
    // Three pushes in flight: the first exceeds the bucket (-32030); the two behind it would
    // otherwise be committed and move accepted_seq past 1..250, losing them on resend.
    const ids = [a.client.fire('logs.push', { seq_start: 1, entries: logEntries(1, 250) }), a.client.fire('logs.push', { seq_start: 251, entries: logEntries(251, 10) }), a.client.fire('logs.push', { seq_start: 261, entries: logEntries(261, 10) })];
    const [r1, r2, r3] = await Promise.all(ids.map((id) => a.client.response(id)));
    expect(r1!.error?.code).toBe(-32030);
    expect(r2!.error?.code).toBe(-32020);
    expect(r2!.error?.data.resend_from_seq).toBe(1);
    expect(r3!.error?.code).toBe(-32020);
    expect(await countRows(t, a.host_id)).toBe(0);
    // The agent resends from seq 1 (in smaller pushes, after the pause): everything is stored.
    await new Promise((res) => setTimeout(res, r1!.error!.data.retry_after_ms + 20));
    expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 150) })).result.up_to_seq).toBe(150);
    await new Promise((res) => setTimeout(res, 700));
    expect((await a.client.request('logs.push', { seq_start: 151, entries: logEntries(151, 120) })).result.up_to_seq).toBe(270);
    expect(await countRows(t, a.host_id)).toBe(270);
    a.client.ws.close();
    await a.client.closed;
  });

  it('after a failed commit, pushes queued behind it are refused and nothing past the failure is committed', async () => {
    const dir = (await import('./helpers.js')).makeTempDir();
    const real = openSqliteStorage({ path: `${dir}/g.db` });
    await migrateToLatest(real);
    let fail = true;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const storage: Storage = {
      ...real,
      db: real.db,
      ingest: {
        commitBatch: async (h, e, r) => {
          if (fail) {
            fail = false;
            await gate; // hold the failing commit until the next push is pending
            throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_FULL' });
          }
          return real.ingest.commitBatch(h, e, r);
        },
        insertMetrics: (...args) => real.ingest.insertMetrics(...args),
      },
    };
    t = await startTestServer({}, { storage });
    const a = await enroll(t);
    const id1 = a.client.fire('logs.push', { seq_start: 1, entries: logEntries(1, 100) });
    const id2 = a.client.fire('logs.push', { seq_start: 101, entries: logEntries(101, 10) });
    await waitFor(() => t!.server.ingest.queuedEntries === 110);
    release();
    const [r1, r2] = [await a.client.response(id1), await a.client.response(id2)];
    expect(r1.error?.code).toBe(-32007);
    expect(r2.error?.code).toBe(-32007);
    expect(await countRows(t, a.host_id)).toBe(0);
    expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 110) })).result.up_to_seq).toBe(110);
    a.client.ws.close();
    await a.client.closed;
    await real.close();
  });

  // DECISIONS H72: one failed commit with a later push of the session waiting left the session
  // committing nothing below K (100 entries) again: a quiet agent's resend was never answered,
  // and 30 s later the agent took the session for dead. On both dialects: the commit is held
  // (as a lock does) and then fails as a terminated backend does.
  it.each([
    ['after the later push waited T', 350],
    ['before the later push waited T', 0],
  ])('a failed commit while a later push waits (it fails %s): a resend of one small push is acked within T', async (_name, waitMs) => {
    t = await startTestServer();
    const writer = t.server.storage.ingest;
    const commitBatch = writer.commitBatch.bind(writer);
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => (release = r));
    let calls = 0;
    writer.commitBatch = async (...args) => {
      if (++calls === 1) {
        await held;
        throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
      }
      return commitBatch(...args);
    };
    const a = await enroll(t);
    const idA = a.client.fire('logs.push', { seq_start: 1, entries: logEntries(1, 1) });
    await waitFor(() => calls === 1);
    const idB = a.client.fire('logs.push', { seq_start: 2, entries: logEntries(2, 1) });
    await waitFor(() => t!.server.ingest.queuedEntries === 2);
    await new Promise((r) => setTimeout(r, waitMs));
    release();
    expect((await a.client.response(idA)).error?.code).toBe(-32007);
    expect((await a.client.response(idB)).error?.code).toBe(-32007);
    await new Promise((r) => setTimeout(r, 300)); // a stale timer of B would have fired by now
    const started = performance.now();
    const resend = a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 2) });
    const answer = await Promise.race([resend, new Promise<undefined>((r) => setTimeout(r, 3000))]);
    expect(answer?.result?.up_to_seq, 'the resend was not answered within 3 s').toBe(2);
    expect(performance.now() - started).toBeLessThan(1000); // T = 200 ms, plus the commit
    expect(await countRows(t, a.host_id)).toBe(2);
    a.client.ws.close();
    await a.client.closed;
  });

  it('-32004 when the host row disappears mid-session', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    await t.server.storage.db.deleteFrom('agents').where('host_id', '=', a.host_id).execute();
    const r = await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 100) });
    expect(r.error?.code).toBe(-32004);
    expect(await countRows(t, a.host_id)).toBe(0);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('entry and sample times (DECISIONS H38)', () => {
  it('times with an offset, in lower case, with a space or micro-seconds are stored in UTC with ms, so time ranges find them', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    const sent = ['2026-05-16T21:42:50.123456+02:00', '2026-05-16t19:40:00z', '2026-05-16 19:45:00Z', '2026-05-16T19:42:50.500Z', '2026-05-16T14:50:00-05:00'];
    const entries = logEntries(1, 5).map((e, i) => ({ ...e, ts: sent[i] as string }));
    expect((await a.client.request('logs.push', { seq_start: 1, entries })).result.up_to_seq).toBe(5);
    const base = httpBase(t);
    const page = async (q: string) => (JSON.parse((await httpRequest(`${base}/admin/agents/${a.host_id}/logs?limit=10${q}`)).text) as { items: { seq: number; ts: string }[] }).items;
    expect(Object.fromEntries((await page('')).map((r) => [r.seq, r.ts]))).toEqual({
      1: '2026-05-16T19:42:50.123Z',
      2: '2026-05-16T19:40:00.000Z',
      3: '2026-05-16T19:45:00.000Z',
      4: '2026-05-16T19:42:50.500Z',
      5: '2026-05-16T19:50:00.000Z',
    });
    // 19:42-19:46 UTC: the time sent at +02:00 and the one with a space are in it (before: only seq 4)
    expect((await page('&from=2026-05-16T19:42:00Z&to=2026-05-16T19:46:00Z')).map((r) => r.seq).sort()).toEqual([1, 3, 4]);
    expect((await a.client.request('metrics.push', { ts: '2026-05-16T21:43:00+02:00', samples: [{ name: 'load1', value: 0.5 }] })).result).toEqual({ accepted: 1, dropped: 0 });
    const m = JSON.parse((await httpRequest(`${base}/admin/agents/${a.host_id}/metrics?name=load1&from=2026-05-16T19:42:00Z&to=2026-05-16T19:44:00Z`)).text) as { samples: { ts: string }[] };
    expect(m.samples.map((x) => x.ts)).toEqual(['2026-05-16T19:43:00.000Z']);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('metrics.push and agent.heartbeat', () => {
  it('metrics.push stores the samples and answers {accepted, dropped}', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    const r = await a.client.request('metrics.push', { ts: '2026-05-16T19:43:00.000Z', samples: [{ name: 'load1', value: 0.42 }, { name: 'mem', value: 38.1, labels: { host: 'x' } }] });
    expect(r.result).toEqual({ accepted: 2, dropped: 0 });
    const rows = await t.server.storage.db.selectFrom('metrics').selectAll().where('host_id', '=', a.host_id).execute();
    expect(rows.map((x) => x.name).sort()).toEqual(['load1', 'mem']);
    expect((await a.client.request('metrics.push', { ts: 'x', samples: [] })).error?.code).toBe(-32602);
    a.client.ws.close();
    await a.client.closed;
  });

  // DECISIONS H73: each metrics.push the database could not take was logged "handler failed"
  // at error level and answered -32603 (no outage code, not one of metrics.push's codes).
  it('metrics.push while the database refuses writes: -32020 with retry_after_ms and the reason, told by the outage once (no "handler failed" per push)', async () => {
    // read-only (25006), as after a failover to a standby: unlike "out of reach" its account is
    // not ended by the reads that still succeed meanwhile, so it is one account here; no lease
    // renewal (a write) falls into the test
    t = await startTestServer({}, { leaseMs: 600_000 });
    const writer = t.server.storage.ingest;
    const insertMetrics = writer.insertMetrics.bind(writer);
    let readOnly = true;
    writer.insertMetrics = (...args) => (readOnly ? Promise.reject(Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' })) : insertMetrics(...args));
    const a = await enroll(t);
    const sample = { ts: '2026-05-16T19:43:00.000Z', samples: [{ name: 'load1', value: 0.42 }] };
    for (let i = 0; i < 5; i++) {
      const r = await a.client.request('metrics.push', sample);
      expect(r.error?.code).toBe(-32020);
      expect(r.error?.data).toEqual({ retry_after_ms: 1000, reason: "the server's database is read-only; none of the samples was stored" });
    }
    const msgs = () => t!.log.records().map((r) => String(r['msg']));
    expect(msgs().filter((m) => m.startsWith('database refuses writes: it is read-only'))).toHaveLength(1);
    expect(msgs()).not.toContain('handler failed');
    expect(msgs()).not.toContain('metrics.push failed: samples not stored (-32603)');
    readOnly = false;
    expect((await a.client.request('metrics.push', sample)).result).toEqual({ accepted: 1, dropped: 0 });
    // the stored push ends the account; its last line counts them
    const over = t.log.records().find((r) => r['msg'] === 'database takes writes again');
    expect(over?.['failed_operations']).toEqual({ metrics: 5 });
    a.client.ws.close();
    await a.client.closed;
  });

  it('metrics.push failing for another reason: -32603 as before, logged once a minute (not per push)', async () => {
    t = await startTestServer();
    const writer = t.server.storage.ingest;
    writer.insertMetrics = () => Promise.reject(new Error('injected storage fault'));
    const a = await enroll(t);
    for (let i = 0; i < 5; i++) {
      const r = await a.client.request('metrics.push', { ts: '2026-05-16T19:43:00.000Z', samples: [{ name: 'load1', value: 0.42 }] });
      expect(r.error?.code).toBe(-32603);
    }
    const lines = t.log.records().filter((r) => r['msg'] === 'metrics.push failed: samples not stored (-32603)');
    expect(lines).toHaveLength(1);
    expect(lines[0]?.['err']).toBe('Error: injected storage fault');
    expect(t.log.records().map((r) => r['msg'])).not.toContain('handler failed');
    a.client.ws.close();
    await a.client.closed;
  });

  it('heartbeat moves last_seen; a malformed heartbeat gets no response', async () => {
    t = await startTestServer();
    const a = await enroll(t);
    const old = '2000-01-01T00:00:00.000Z';
    await t.server.storage.db.updateTable('agents').set({ last_seen: old }).where('host_id', '=', a.host_id).execute();
    a.client.notify('agent.heartbeat', { ts: new Date().toISOString(), queue_depth: 0, buffer_bytes: 0 });
    await waitFor(async () => (await getAgent(t!.server.storage.db, a.host_id))?.last_seen !== old, 1000);
    a.client.notify('agent.heartbeat', { ts: 'nope' });
    const r = await a.client.request('metrics.push', { ts: '2026-05-16T19:43:00.000Z', samples: [{ name: 'x', value: 1 }] });
    expect(r.result.accepted).toBe(1);
    expect(a.client.messages.length).toBe(2); // the hello result and the metrics answer, nothing for the heartbeats
    expect(t.log.lines.some((l) => l.includes('malformed notification dropped'))).toBe(true);
    // a request sent as a notification (no id): nothing stored, nothing answered, but said (K13)
    a.client.notify('logs.push', { seq_start: 1, entries: logEntries(1, 3) });
    await waitFor(() => t!.log.lines.some((l) => l.includes('logs.push sent without an id dropped, nothing done: send it as a request (with an id) to get its answer')), 5000);
    expect(await t.server.storage.db.selectFrom('logs').select('seq').where('host_id', '=', a.host_id).execute()).toEqual([]);
    // last_seen also moves on logs.push
    await t.server.storage.db.updateTable('agents').set({ last_seen: old }).where('host_id', '=', a.host_id).execute();
    await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 1) });
    expect((await getAgent(t.server.storage.db, a.host_id))?.last_seen).not.toBe(old);
    a.client.ws.close();
    await a.client.closed;
  });
});

// A field the contract adds to a log entry or a metric sample is valid on the wire at once
// (codegen), but the server keeps only the columns it has: these fail, naming the field, until
// it is stored and shown (README "Changing the protocol"). Every free-text field carries a NUL
// and a lone surrogate: each must be made storable (H3; a NUL left in would split the SQLite
// writer's packed rows).
describe('every field of the contract is stored and read back', () => {
  it('a log entry with every LogBatchEntry field comes back whole from GET /admin/agents/{id}/logs', async () => {
    const entry: Record<string, unknown> = {
      seq: 1,
      ts: '2026-05-16T19:42:50.123Z',
      severity: 'notice',
      facility: 'auth\u0000x',
      app_name: 'sshd\ud800',
      process_id: '1431\u0000',
      message: 'Accepted publickey\u0000 for jmagar \udfff',
      source: 'file:/var/log/auth\u0000.log',
      metadata: { unit: 'ssh.service', n: 3, nested: { ok: true } },
    };
    const stored = (v: unknown) => (typeof v === 'string' ? v.replace(/\u0000|[\ud800-\udfff]/g, '\ufffd') : v);
    expect(Object.keys(entry).sort(), 'this test gives every LogBatchEntry field of the contract a value').toEqual(Object.keys(defs.$defs.LogBatchEntry.properties).sort());
    t = await startTestServer();
    const a = await enroll(t);
    const r = await a.client.request('logs.push', { seq_start: 1, entries: [entry, { ...logEntries(2, 1)[0], message: 'after' }] });
    expect(r.result?.up_to_seq).toBe(2);
    const page = await httpRequest(`${httpBase(t)}/admin/agents/${a.host_id}/logs?limit=10`, { method: 'GET' });
    expect(page.status).toBe(200);
    const [second, first] = page.body.items as Record<string, unknown>[];
    for (const [k, v] of Object.entries(entry)) expect(first?.[k], `field ${k}`).toEqual(stored(v));
    expect(second).toMatchObject({ seq: 2, message: 'after', facility: null, app_name: null, process_id: null, metadata: null });
    a.client.ws.close();
    await a.client.closed;
  });

  it('a metric sample with every MetricSample field comes back whole from GET /admin/agents/{id}/metrics', async () => {
    const sample: Record<string, unknown> = { name: 'disk_used_pct', value: 71.25, labels: { mount: '/var', device: 'nvme0n1p2' } };
    expect(Object.keys(sample).sort(), 'this test gives every MetricSample field of the contract a value').toEqual(Object.keys(defs.$defs.MetricSample.properties).sort());
    t = await startTestServer();
    const a = await enroll(t);
    const ts = new Date(Date.now() - 60_000).toISOString();
    expect((await a.client.request('metrics.push', { ts, samples: [sample] })).result).toEqual({ accepted: 1, dropped: 0 });
    const got = await httpRequest(`${httpBase(t)}/admin/agents/${a.host_id}/metrics?name=${String(sample['name'])}`, { method: 'GET' });
    expect(got.status).toBe(200);
    expect(got.body.samples).toEqual([{ ts, value: sample['value'], labels: sample['labels'] }]);
    a.client.ws.close();
    await a.client.closed;
  });
});
