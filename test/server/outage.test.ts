// The account of the database out of reach (server/db/outage.ts, DECISIONS G11): which errors
// count, and the three kinds of lines an outage gives however many operations fail.
import { describe, expect, it, vi } from 'vitest';
import { postgresOpenError } from '../../server/cli-db.js';
import { DatabaseOutage, isDatabaseUnreachable, noteWaited, waitedFor, writeRefusal } from '../../server/db/outage.js';
import { createCapturingLogger } from '../../server/log.js';

const err = (message: string, code?: string) => Object.assign(new Error(message), code === undefined ? {} : { code });

describe('isDatabaseUnreachable', () => {
  it('counts a refused, reset or timed-out connection, PostgreSQL shutting down or starting, its 08 class and a lost connection', () => {
    for (const e of [
      err('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      err('read ECONNRESET', 'ECONNRESET'),
      err('getaddrinfo ENOTFOUND db.internal', 'ENOTFOUND'),
      err('the database system is shutting down', '57P03'),
      err('terminating connection due to administrator command', '57P01'),
      err('connection failure', '08006'),
      err('sorry, too many clients already', '53300'),
      err('database "cortex" is not currently accepting connections', '55000'), // ALLOW_CONNECTIONS false (H44)
      err('Connection terminated unexpectedly'),
      err('timeout exceeded when trying to connect'),
      Object.assign(err('connect ENOENT /var/run/postgresql/.s.PGSQL.5432', 'ENOENT'), { syscall: 'connect' }), // a Unix socket PostgreSQL removed (G37)
    ]) {
      expect(isDatabaseUnreachable(e), e.message).toBe(true);
    }
  });

  it('does not count what a statement did itself', () => {
    for (const e of [err("ENOENT: no such file or directory, open '/x/cortex.db'", 'ENOENT'), err('duplicate key value violates unique constraint', '23505'), err('disk I/O error', 'SQLITE_IOERR'), err('database or disk is full', 'SQLITE_FULL'), err('relation "logs" does not exist', '42P01'), err('partition "logs_p20260101" already pending detach in partitioned table "public.logs"', '55000'), err('boom'), null, undefined, 'a string']) {
      expect(isDatabaseUnreachable(e)).toBe(false);
    }
  });
});

describe('postgresOpenError: what serve waited on (--db-wait-secs) is named when it gives up', () => {
  it('PostgreSQL still starting (57P03) is "cannot reach", not E_INTERNAL "this is a bug"; an errno stays as it was', () => {
    const db = 'postgres://cortex:hunter2@db.internal:5432/cortex';
    const starting = postgresOpenError(err('the database system is starting up', '57P03'), db);
    expect(starting?.code).toBe('E_DB_OPEN');
    expect(starting?.message).toBe('cannot reach PostgreSQL at db.internal:5432: 57P03 the database system is starting up (--db postgres://cortex:***@db.internal:5432/cortex)');
    expect(postgresOpenError(err('connect ECONNREFUSED 10.0.0.5:5432', 'ECONNREFUSED'), db)?.message).toBe('cannot reach PostgreSQL at db.internal:5432: ECONNREFUSED (--db postgres://cortex:***@db.internal:5432/cortex)');
    expect(postgresOpenError(err('Connection terminated unexpectedly'), db)?.message).toContain('cannot reach PostgreSQL at db.internal:5432: Connection terminated unexpectedly');
    // what a statement did is not this error
    expect(postgresOpenError(err('duplicate key', '23505'), db)).toBeUndefined();
  });

  it('every connection slot taken (53300) is not "is PostgreSQL running there?": it names max_connections and --db-pool', () => {
    const full = postgresOpenError(err('sorry, too many clients already', '53300'), 'postgres://cortex@db.internal:5432/cortex');
    expect(full?.code).toBe('E_DB_OPEN');
    expect(full?.message).toBe('PostgreSQL at db.internal:5432 has no connection slot left: 53300 sorry, too many clients already (--db postgres://cortex@db.internal:5432/cortex)');
    expect(full?.hint).toMatch(/max_connections; see pg_stat_activity\): each cortex-server opens up to --db-pool \+ 4 .*lower --db-pool, or raise max_connections$/);
  });
});

describe('DatabaseOutage', () => {
  function setup() {
    const log = createCapturingLogger();
    let now = 1_000_000;
    const outage = new DatabaseOutage({ logger: log.logger, now: () => now, summaryEveryMs: 60_000 });
    return { log, outage, advance: (ms: number) => (now += ms), msgs: () => log.records().map((r) => r['msg'] as string) };
  }
  const refused = err('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED');

  it("a pool whose connections all stayed busy is not told as a database that does not run: the line names the load too (G15)", () => {
    const { log, outage, msgs } = setup();
    expect(outage.failed('hello', err('timeout exceeded when trying to connect'))).toBe(true);
    expect(msgs()).toEqual([expect.stringMatching(/^database unusable: no pool connection came free in time .*this server overloaded.*--db-pool or add servers/)]);
    expect(msgs()[0]).not.toContain('check that the database runs');
    expect(log.records()[0]).toMatchObject({ err: 'timeout exceeded when trying to connect: every connection of the pool stayed busy', failed: 'hello' });
  });

  it('no connection slot left (53300) says so, not "check that the database runs"', () => {
    const { outage, msgs } = setup();
    expect(outage.failed('ingest', err('sorry, too many clients already', '53300'))).toBe(true);
    expect(outage.down).toBe(true);
    expect(msgs()).toEqual([expect.stringMatching(/^database unusable: PostgreSQL has no connection slot left for this server; .*raise max_connections$/)]);
  });

  it('one line when it starts, one a minute while it lasts, one when it ends, whatever the number of failures', () => {
    const { log, outage, advance, msgs } = setup();
    expect(outage.down).toBe(false);
    outage.succeeded(); // nothing to end
    expect(log.lines).toHaveLength(0);
    for (let i = 0; i < 500; i++) {
      expect(outage.failed(i % 2 === 0 ? 'ingest' : 'control watcher', refused)).toBe(true);
      advance(100);
    }
    expect(outage.down).toBe(true);
    expect(outage.retryAfterMs()).toBe(5_000); // 50 s into it (1 s in its first 10 s: below)
    // 50 s: the first line only
    expect(msgs()).toEqual([expect.stringMatching(/^database out of reach: .*check that the database runs/)]);
    expect(log.records()[0]).toMatchObject({ level: 'error', err: 'connect ECONNREFUSED 127.0.0.1:5432', failed: 'ingest' });
    for (let i = 0; i < 200; i++) {
      outage.failed('ingest', refused);
      advance(100);
    }
    // 70 s: and one summary
    expect(msgs()).toHaveLength(2);
    expect(log.records()[1]).toMatchObject({ msg: 'database still out of reach', down_secs: 60, failed_operations: { ingest: 351, 'control watcher': 250 } });
    advance(5_000);
    outage.succeeded();
    outage.succeeded();
    expect(outage.down).toBe(false);
    expect(msgs()).toHaveLength(3);
    expect(log.records()[2]).toMatchObject({ level: 'info', msg: 'database reachable again', down_secs: 75, failed_operations: { ingest: 450, 'control watcher': 250 } });
    // a new outage starts over
    outage.failed('lease renewal', refused);
    expect(outage.retryAfterMs()).toBe(1_000);
    advance(9_999);
    expect(outage.retryAfterMs()).toBe(1_000);
    advance(1);
    expect(outage.retryAfterMs()).toBe(5_000);
    outage.succeeded();
    expect(log.records().slice(3).map((r) => [r['msg'], r['failed_operations']])).toEqual([
      [expect.stringMatching(/^database out of reach/), undefined],
      ['database reachable again', { 'lease renewal': 1 }],
    ]);
  });

  it('a failure of an operation begun before the outage ended (it says how long it waited) opens no new one; one begun after does (G46)', () => {
    const { outage, log, advance, msgs } = setup();
    outage.failed('ingest', refused);
    advance(3_000);
    outage.succeeded();
    expect(outage.down).toBe(false);
    advance(1_000);
    // a statement sent 5 s ago, while the path was frozen, cut for silence only now
    const late = noteWaited(Object.assign(new Error('a statement got no answer from PostgreSQL within 5 s'), { code: 'CORTEX_DB_SILENT' }), 5_000);
    expect(outage.failed('fleet metrics', late)).toBe(true); // the caller says nothing of it either
    expect(outage.report('health check', noteWaited(err('Connection terminated due to connection timeout'), 1_001), () => log.logger.warn('said'))).toBe(true);
    expect(outage.down).toBe(false);
    expect(outage.condition).toBeNull();
    // begun after the end (waited 999 ms of the 1,000 since): a new outage
    expect(outage.failed('health check', noteWaited(err('Connection terminated due to connection timeout'), 999))).toBe(true);
    expect(outage.down).toBe(true);
    expect(msgs()).toEqual([expect.stringMatching(/^database out of reach/), 'database reachable again', expect.stringMatching(/^database out of reach/)]);
    // and nothing that says no wait of its own is taken for a late one
    advance(10);
    outage.succeeded();
    advance(10);
    outage.failed('ingest', refused);
    expect(outage.down).toBe(true);
  });

  it('keeps its times by a clock no wall-clock step moves (G45): a step of an hour ahead is not an hour down, nor a failure begun before the end a new outage', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const log = createCapturingLogger();
      const outage = new DatabaseOutage({ logger: log.logger });
      outage.failed('ingest', refused);
      vi.setSystemTime(Date.now() + 3_600_000);
      outage.succeeded();
      expect(log.records()[1]).toMatchObject({ msg: 'database reachable again' });
      expect(log.records()[1]!['down_secs']).toBeLessThan(60);
      vi.setSystemTime(Date.now() - 7_200_000);
      expect(outage.failed('health check', noteWaited(err('Connection terminated due to connection timeout'), 10_000))).toBe(true);
      expect(outage.down).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('noteWaited keeps the first wait noted for an error (shared by the callers a cut statement fails)', () => {
    const e = noteWaited(new Error('x'), 5_000);
    expect(noteWaited(e, 10)).toBe(e);
    expect(waitedFor(e)).toBe(5_000);
    expect(waitedFor(new Error('y'))).toBeUndefined();
    expect(waitedFor('a string')).toBeUndefined();
    expect(noteWaited(-1, 3)).toBe(-1);
  });

  it('leaves other failures to their caller: not logged, not an outage', () => {
    const { log, outage } = setup();
    expect(outage.failed('ingest', err('duplicate key', '23505'))).toBe(false);
    expect(outage.down).toBe(false);
    expect(log.lines).toHaveLength(0);
  });

  it('a database that refuses writes (read-only, disk full) is told in its own words; reads do not end it, a write does (G21)', () => {
    const { log, outage, advance, msgs } = setup();
    const readOnly = err('cannot execute UPDATE in a read-only transaction', '25006');
    for (let i = 0; i < 100; i++) {
      expect(outage.failed(i % 2 === 0 ? 'ingest' : 'lease renewal', readOnly)).toBe(true);
      outage.readSucceeded(); // the control watcher's read, between the failed writes
      advance(1000);
    }
    expect(outage.down).toBe(false); // the database answers: cortex_database_up stays 1
    expect(msgs()).toEqual([expect.stringMatching(/^database refuses writes: it is read-only \(a standby .*point --db at the primary/), 'database still refusing writes']);
    expect(log.records()[0]).toMatchObject({ level: 'error', err: '25006: cannot execute UPDATE in a read-only transaction', failed: 'ingest' });
    outage.succeeded();
    expect(log.records()[2]).toMatchObject({ msg: 'database takes writes again', down_secs: 100, failed_operations: { ingest: 50, 'lease renewal': 50 } });

    expect(outage.failed('ingest', err('could not extend file: No space left on device', '53100'))).toBe(true);
    expect(outage.failed('ingest', err('database or disk is full', 'SQLITE_FULL'))).toBe(true);
    outage.readSucceeded();
    expect(msgs().slice(3)).toEqual([expect.stringMatching(/^database refuses writes: its disk is full; .*free space where the database lives \(or cap it with --max-db-bytes\)$/)]);
    // an outage that began out of reach ends with a read, as before
    outage.succeeded();
    outage.failed('control watcher', err('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'));
    outage.readSucceeded();
    expect(msgs().slice(-2)).toEqual([expect.stringMatching(/^database out of reach/), 'database reachable again']);
  });

  it("a refused login (a password rotated under the running server) is one account, not ended by the old connections' successes between the refusals", () => {
    const { outage, advance, msgs, log } = setup();
    const refused = err('password authentication failed for user "cortex"', '28P01');
    for (let i = 0; i < 40; i++) {
      expect(outage.failed('control watcher', refused)).toBe(true);
      advance(500);
      outage.readSucceeded(); // a pooled connection opened before the change still works
      outage.succeeded();
      advance(500);
    }
    expect(outage.down).toBe(true);
    expect(msgs()).toEqual([expect.stringMatching(/^database unusable: PostgreSQL refused this server's login \(its password was changed, .*start serve again with the --db that has the new password$/)]);
    expect(log.records()[0]).toMatchObject({ err: '28P01: password authentication failed for user "cortex"' });
    // 30 s without a refused login (the last one 1 s ago): over
    advance(28_000);
    outage.succeeded();
    expect(msgs()).toHaveLength(1);
    advance(1_000);
    outage.succeeded();
    expect(msgs()[1]).toBe("database takes this server's login again");
    expect(outage.down).toBe(false);
  });

  it('writeRefusal: read-only and disk full only', () => {
    expect(writeRefusal(err('cannot execute INSERT in a read-only transaction', '25006'))).toBe('read_only');
    for (const code of ['53100', 'SQLITE_FULL', 'ENOSPC']) expect(writeRefusal(err('full', code))).toBe('disk_full');
    for (const e of [err('duplicate key', '23505'), err('connect ECONNREFUSED', 'ECONNREFUSED'), err('boom'), null, undefined]) expect(writeRefusal(e)).toBeUndefined();
  });
});

describe('shouldLog: a failure that is not the database down, repeated (G30)', () => {
  it('the first is logged, the same again within a minute only counted, the next after it logged with how many were not; other callers and messages apart', () => {
    let now = 1_000_000;
    const outage = new DatabaseOutage({ logger: createCapturingLogger({}).logger, now: () => now });
    const gone = err('relation "logs" does not exist', '42P01');
    expect(outage.failed('ingest', gone)).toBe(false);
    expect(outage.shouldLog('ingest', gone)).toEqual({});
    for (let i = 0; i < 500; i++) {
      now += 100;
      expect(outage.shouldLog('ingest', gone)).toBeUndefined();
    }
    // another caller, another message: each logged at once
    expect(outage.shouldLog('control watcher', gone)).toEqual({});
    expect(outage.shouldLog('ingest', err('permission denied for table logs', '42501'))).toEqual({});
    now += 10_001; // a minute after the first
    expect(outage.shouldLog('ingest', gone)).toEqual({ repeated: 500 });
    now += 1_000;
    expect(outage.shouldLog('ingest', gone)).toBeUndefined();
    now += 60_000;
    expect(outage.shouldLog('ingest', gone)).toEqual({ repeated: 1 });
    now += 60_000; // nothing in between: logged plainly
    expect(outage.shouldLog('ingest', gone)).toEqual({});
  });
});
