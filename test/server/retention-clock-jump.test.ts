// A clock stepped far ahead under a running server (DECISIONS H76). Before, the next retention
// pass took the new time: with the clock 60 days ahead and retention_days 30 it deleted every row
// stored, logged as an ordinary `retention: old rows deleted`. Now the cutoff moves only as far as
// the time the process has seen pass (a monotonic clock, which a step does not move): the rows
// are kept, one warning says so, and rows that truly age are still deleted.
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { issueAgent } from '../../server/db/agents.repository.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { createCapturingLogger } from '../../server/log.js';
import { ServerMetrics } from '../../server/metrics.js';
import { CLOCK_JUMP_TOLERANCE_MS, PassClock, Retention } from '../../server/control/retention.js';
import { systemElapsedMs } from '../../server/elapsed.js';
import { itOn } from '../support/dialects.js';
import { metricValue } from './control-helpers.js';
import { entries, makeTempDir, openTempDb } from './helpers.js';
import { requireServerCli, ROOT, serve } from './spawn.js';
import { nextStderrLine } from '../support/procs.js';

const DAY = 86_400_000;
const MIN = 60_000;
const JUMPED = /^retention: .* jumped .* ahead of the time this process has seen pass/;

describe('PassClock', () => {
  it('takes the clock while it advances with the elapsed clock (steps within the tolerance too); a step ahead beyond it is held, told once per jump', () => {
    let wall = Date.UTC(2026, 5, 1);
    let el = 5_000;
    const c = new PassClock(() => new Date(wall), () => el);
    c.anchorNow();
    wall += 10 * MIN + 2_000; // NTP's step of a few seconds within a pass interval
    el += 10 * MIN;
    expect(c.read()).toEqual({ now: new Date(wall), clock: new Date(wall), heldMs: 0 });
    wall += CLOCK_JUMP_TOLERANCE_MS - 1_000; // a step just within the tolerance: taken
    expect(c.read()).toMatchObject({ now: new Date(wall), heldMs: 0 });
    expect(c.read().event).toBeUndefined();
    const seen = wall;
    wall += 60 * DAY;
    expect(c.read()).toEqual({ now: new Date(seen), clock: new Date(wall), heldMs: 60 * DAY, event: 'jumped' });
    el += 10 * MIN;
    wall += 10 * MIN;
    expect(c.read()).toEqual({ now: new Date(seen + 10 * MIN), clock: new Date(wall), heldMs: 60 * DAY }); // told already
    wall += 30 * DAY; // a second jump
    expect(c.read()).toMatchObject({ now: new Date(seen + 10 * MIN), heldMs: 90 * DAY, event: 'jumped' });
    wall = seen + 10 * MIN + 3_000; // put right
    expect(c.read()).toEqual({ now: new Date(wall), clock: new Date(wall), heldMs: 0, event: 'agrees' });
    expect(c.read().event).toBeUndefined();
  });

  it('a clock set back is taken (it keeps rows longer), told once; put right again, it is no jump', () => {
    let wall = Date.UTC(2026, 5, 1);
    let el = 0;
    const c = new PassClock(() => new Date(wall), () => el);
    c.anchorNow();
    wall -= 2 * DAY;
    el += MIN;
    expect(c.read()).toEqual({ now: new Date(wall), clock: new Date(wall), heldMs: 0, event: 'back' });
    el += MIN;
    wall += MIN;
    expect(c.read()).toEqual({ now: new Date(wall), clock: new Date(wall), heldMs: 0 });
    wall += 2 * DAY;
    expect(c.read()).toEqual({ now: new Date(wall), clock: new Date(wall), heldMs: 0 });
  });

  it("the system's elapsed clock advances with performance.now()", async () => {
    const elapsed = systemElapsedMs();
    const [e0, p0] = [elapsed(), performance.now()];
    await new Promise<void>((r) => setTimeout(r, 50));
    const [e1, p1] = [elapsed(), performance.now()];
    expect(e1 - e0).toBeGreaterThanOrEqual(30); // /proc/uptime has 10 ms steps
    expect(Math.abs(e1 - e0 - (p1 - p0))).toBeLessThan(25);
  });
});

describe('retention under a clock that jumps', () => {
  it('a clock stepped 60 days ahead deletes nothing and is told once; rows that age by the time seen pass still go', async () => {
    const tdb = await openTempDb();
    const T0 = Date.UTC(2026, 5, 1);
    let wall = T0;
    let el = 1_000_000;
    const log = createCapturingLogger();
    const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
    const r = new Retention(tdb.storage, log.logger, metrics, {
      retentionDays: 30,
      maxDbBytes: null,
      batchRows: 50,
      pauseMs: 0,
      firstRunDelayMs: 3_600_000,
      now: () => new Date(wall),
      elapsedMs: () => el,
    });
    try {
      const h = await issueAgent(tdb.storage.db, 'jumped');
      // 200 rows received 29.5 days before T0, 100 a day before; a metric row of each age
      await tdb.storage.ingest.commitBatch(h.host_id, entries(1, 200), new Date(T0 - 29.5 * DAY).toISOString());
      await tdb.storage.ingest.commitBatch(h.host_id, entries(201, 300), new Date(T0 - DAY).toISOString());
      await tdb.storage.ingest.insertMetrics(h.host_id, new Date(T0 - 29.5 * DAY).toISOString(), [{ name: 'cpu', value: 1 }], new Date(T0 - 29.5 * DAY).toISOString());
      await tdb.storage.ingest.insertMetrics(h.host_id, new Date(T0 - DAY).toISOString(), [{ name: 'cpu', value: 2 }], new Date(T0 - DAY).toISOString());
      const logs = async () => (await tdb.storage.db.selectFrom('logs').select('seq').execute()).length;
      const warnings = () => log.records().filter((x) => JUMPED.test(String(x['msg'])));
      const held = async () => metricValue(await metrics.text(), 'cortex_retention_clock_held_seconds');
      r.start(); // the time seen pass counts from here

      // the clock steps 60 days ahead a minute later: the pass keeps everything
      wall += 60 * DAY + MIN;
      el += MIN;
      expect(await r.run()).toEqual({ logs: 0, metrics: 0, sizeLogs: 0, sizeMetrics: 0, audit: 0 });
      expect(await logs()).toBe(300);
      expect(log.records().some((x) => x['msg'] === 'retention: old rows deleted')).toBe(false);
      const [warning, ...more] = warnings();
      expect(more).toEqual([]);
      expect(warning).toMatchObject({ level: 'warn', clock_jump_s: (60 * DAY) / 1000, counted_from: new Date(T0 + MIN).toISOString(), cutoff: new Date(T0 + MIN - 30 * DAY).toISOString() });
      expect(String(warning?.['msg'])).toMatch(/jumped 60\.0 days ahead .*keeps the rows .*timedatectl status, chronyc tracking/);
      expect(await held()).toBe((60 * DAY) / 1000);

      // ten minutes on: still held, not told again
      wall += 10 * MIN;
      el += 10 * MIN;
      expect((await r.run()).logs).toBe(0);
      expect(warnings()).toHaveLength(1);

      // a day passes by both clocks: the rows now 30.5 days old by the time seen pass go, the rest stay
      wall += DAY;
      el += DAY;
      expect(await r.run()).toEqual({ logs: 200, metrics: 1, sizeLogs: 0, sizeMetrics: 0, audit: 0 });
      expect(await logs()).toBe(100);
      expect(log.records().find((x) => x['msg'] === 'retention: old rows deleted')?.['cutoff']).toBe(new Date(T0 + DAY + 11 * MIN - 30 * DAY).toISOString());
      expect(warnings()).toHaveLength(1);

      // the clock put right: counted from again, said once
      wall = T0 + DAY + 11 * MIN + 5_000;
      expect((await r.run()).logs).toBe(0);
      expect(log.records().filter((x) => /is back in step with the time this process has seen pass/.test(String(x['msg'])))).toHaveLength(1);
      expect(await held()).toBe(0);
      expect(await logs()).toBe(100);
    } finally {
      await r.stop();
      await tdb.cleanup();
    }
  });

  it('a time given to run() is taken as it is (no clock read)', async () => {
    const tdb = await openTempDb();
    try {
      const h = await issueAgent(tdb.storage.db, 'given');
      await tdb.storage.ingest.commitBatch(h.host_id, entries(1, 10), new Date(Date.UTC(2026, 0, 1)).toISOString());
      const log = createCapturingLogger();
      const metrics = new ServerMetrics({ activeSessions: () => 0, queueDepth: () => 0 });
      const r = new Retention(tdb.storage, log.logger, metrics, { retentionDays: 30, maxDbBytes: null, batchRows: 50, pauseMs: 0, now: () => new Date(Date.UTC(2026, 0, 2)), elapsedMs: () => 0 });
      expect((await r.run()).logs).toBe(0); // anchors at Jan 2
      expect((await r.run(new Date(Date.UTC(2026, 3, 1)))).logs).toBe(10);
      expect(log.records().filter((x) => JUMPED.test(String(x['msg'])))).toEqual([]);
    } finally {
      await tdb.cleanup();
    }
  });
});


describe('a real `serve` on SQLite', () => {
  beforeAll(() => requireServerCli(), 60_000);

  itOn('sqlite')('whose clock is stepped 60 days ahead after start: its first pass deletes only the rows 40 days old, warns once, and /metrics shows the hold', async () => {
    const dir = makeTempDir();
    const db = join(dir, 'data', 'c.db');
    const st = openSqliteStorage({ path: db });
    await migrateToLatest(st);
    const h = await issueAgent(st.db, 'stepped');
    await st.ingest.commitBatch(h.host_id, entries(1, 50), new Date(Date.now() - 40 * DAY).toISOString());
    await st.ingest.commitBatch(h.host_id, entries(51, 150), new Date(Date.now() - DAY).toISOString());
    await st.close();
    const preload = resolve(ROOT, 'test/support/clock-step-on-signal.mjs');
    // retention_days 30 (the default); the first pass runs 5 s after start, after the step
    const s = await serve(['--db', db], { NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import=${preload}`.trim(), CORTEX_TEST_CLOCK_STEP_MS: String(60 * DAY) });
    try {
      const stepped = nextStderrLine(s.child, (r) => String(r['line']).startsWith('test clock: stepped'), 5_000);
      const deleted = nextStderrLine(s.child, (r) => r['msg'] === 'retention: old rows deleted', 20_000);
      s.child.kill('SIGUSR2');
      await stepped;
      expect(await deleted).toMatchObject({ logs: 50 });
      const warned = s.stderr().split('\n').filter((l) => l.includes('ahead of the time this process has seen pass'));
      expect(warned).toHaveLength(1);
      expect(JSON.parse(warned[0] as string)).toMatchObject({ level: 'warn', msg: expect.stringMatching(/^retention: this machine's clock jumped 60\.0 days ahead/) });
      const held = metricValue(await (await fetch(`http://127.0.0.1:${s.port}/metrics`)).text(), 'cortex_retention_clock_held_seconds');
      expect(Math.abs(held - 60 * 86_400)).toBeLessThan(60); // the step (/proc/uptime counts in steps of 10 ms)
      const check = openSqliteStorage({ path: db });
      try {
        const rows = await check.db.selectFrom('logs').select('seq').orderBy('seq').execute();
        expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 100 }, (_, i) => 51 + i));
      } finally {
        await check.close();
      }
    } finally {
      s.child.kill('SIGKILL');
      await s.exited;
    }
  }, 40_000);
});
