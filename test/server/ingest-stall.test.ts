// Ingest commits held up by the database (DECISIONS H45): what the watch logs and reports, on a
// fake clock (the PostgreSQL case with a real lock is in db-outage.pg.test.ts).
import { describe, expect, it } from 'vitest';
import { createCapturingLogger } from '../../server/log.js';
import { CommitStallWatch } from '../../server/ingest-stall.js';

function setup(dialect: 'sqlite' | 'postgres') {
  let now = 0;
  let waiting = { oldestMs: 0, count: 0 };
  const log = createCapturingLogger({ name: 'stall' });
  const watch = new CommitStallWatch({ commitsWaiting: () => waiting }, { logger: log.logger, dialect, stallMs: 10_000, summaryEveryMs: 60_000, now: () => now });
  const at = (ms: number, oldestMs: number, count = 1) => {
    now = ms;
    waiting = { oldestMs, count };
    watch.check();
  };
  return { watch, log, at };
}

describe('CommitStallWatch', () => {
  it('says nothing under the threshold; warns once past it, a summary a minute later, the end with how long it lasted', () => {
    const { watch, log, at } = setup('postgres');
    at(5_000, 9_999);
    expect(log.records()).toHaveLength(0);
    expect(watch.stalledMs()).toBe(0);
    at(6_000, 10_000, 3);
    expect(watch.stalledMs()).toBe(10_000);
    let recs = log.records();
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ level: 'warn', waiting_secs: 10, commits_waiting: 3 });
    expect(recs[0]!['msg']).toMatch(/^ingest commits held up: the oldest has waited 10 s for the database, which neither stores nor refuses them; pushes are not acked meanwhile .* pg_stat_activity/);
    at(30_000, 34_000);
    expect(log.records()).toHaveLength(1); // within the minute: nothing more
    at(66_000, 70_000, 2);
    recs = log.records();
    expect(recs).toHaveLength(2);
    expect(recs[1]).toMatchObject({ level: 'warn', msg: 'ingest commits still held up', waiting_secs: 70, commits_waiting: 2, held_up_secs: 70 });
    at(80_000, 0, 0);
    expect(watch.stalledMs()).toBe(0);
    recs = log.records();
    expect(recs).toHaveLength(3);
    expect(recs[2]).toMatchObject({ level: 'info', msg: 'ingest commits go through again', held_up_secs: 84 });
    at(81_000, 0, 0);
    expect(log.records()).toHaveLength(3);
  });

  it('on SQLite the hint names the disk and another process', () => {
    const { log, at } = setup('sqlite');
    at(20_000, 12_000);
    expect(log.records()[0]!['msg']).toContain('on SQLite the database file');
  });
});
