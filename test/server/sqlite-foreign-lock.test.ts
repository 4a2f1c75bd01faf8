// Another process holds the SQLite database locked (a sqlite3 shell in BEGIN EXCLUSIVE, a copy or
// backup tool). better-sqlite3's busy handler waits synchronously: before, each write on the
// server's main connection that met the lock slept the event loop for the whole busy timeout (5 s
// by default), so /healthz, /metrics, every agent's WebSocket pings and the admin API froze with it,
// and blocked writes queued behind each other (N writes, N × the timeout). Now the main connection
// never sleeps in SQLite: a write that meets the lock waits asynchronously and tries again, up to
// the same busy timeout, then fails as before (J19's 503).
//
// The first cases run with the ingest writer inline (on the main thread, the single-thread path)
// and on its writer thread (the default of a built server; the worker runs from dist/). The writer
// thread itself waits in SQLite's busy handler, on its own thread: the event loop is not held by
// it, but a main-side write waiting for its turn (the WriteGate) must not hold the connection
// meanwhile, and several may wait together. Last, J19's race: a request that committed a write
// before it met the lock says so instead of "nothing was done".
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { InsertQueryNode, sql, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import type { Storage } from '../../server/db/storage.js';
import type { SqliteThreadWriter } from '../../server/db/sqlite-writer.js';
import { MAIN, STATE, WRITER, type WriteGate } from '../../server/db/write-gate.js';
import { httpBase, httpRequest, type HttpReply } from './control-helpers.js';
import { makeTempDir } from './helpers.js';
import { enroll, logEntries, startTestServer, waitFor, type TestClient, type TestServer } from './wire.js';

const TOKEN = 'foreign-lock-token-7c19d2ab';
/** The server's busy timeout here (5 s by default). */
const BUSY_MS = 2500;
/** What "answered promptly" means while the lock is held. */
const PROMPT_MS = 500;
const WORKER = pathToFileURL(resolve(import.meta.dirname, '..', '..', 'dist/server/db/sqlite-writer-worker.js'));
const bearer = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };

/** How long `f` took, and its value. */
async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await f();
  return { ms: performance.now() - start, value };
}

/** A WebSocket ping of the agent's connection, answered by the server's pong. */
function ping(client: TestClient): Promise<void> {
  return new Promise((done) => {
    client.ws.once('pong', () => done());
    client.ws.ping();
  });
}

/** A promise with its state readable. */
function tracked<T>(p: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  void p.finally(() => (settled = true)).catch(() => undefined);
  return { promise: p, settled: () => settled };
}

/**
 * While `busy()` holds: /healthz and a WebSocket ping answered, one after the other, each within
 * PROMPT_MS (for at least `minMs`). Returns how many of each were answered.
 */
async function probeWhile(base: string, client: TestClient, busy: () => boolean, minMs: number): Promise<number> {
  const until = Date.now() + minMs;
  let n = 0;
  while (busy() || Date.now() < until) {
    const h = await timed(() => httpRequest(`${base}/healthz`));
    expect(h.ms, '/healthz answered promptly while another process holds the lock').toBeLessThan(PROMPT_MS);
    // its `select 1` answered: not "unreachable" (a check that waited past its 2 s)
    expect((h.value.body as { database?: string }).database).not.toBe('unreachable');
    const p = await timed(() => ping(client));
    expect(p.ms, 'a WebSocket ping answered promptly while another process holds the lock').toBeLessThan(PROMPT_MS);
    n++;
    if (!busy() && Date.now() >= until) break;
  }
  return n;
}

/** Another connection to the database file: it holds the file locked (BEGIN EXCLUSIVE) from take() until release() or close(). */
class LockHolder {
  private readonly db: Database.Database;
  held = false;

  constructor(file: string) {
    this.db = new Database(file);
  }

  take(): void {
    this.db.exec('BEGIN EXCLUSIVE');
    this.held = true;
  }

  release(): void {
    if (!this.held) return;
    this.db.exec('ROLLBACK');
    this.held = false;
  }

  close(): void {
    this.release();
    this.db.close();
  }
}

/** One number read from the database file (a connection of its own). */
function countIn(file: string, sql: string, ...args: unknown[]): number {
  const reader = new Database(file, { readonly: true });
  try {
    return reader.prepare(sql).pluck().get(...args) as number;
  } finally {
    reader.close();
  }
}

describe.each(['inline', 'thread'] as const)('the SQLite database held locked by another process (%s writer)', (writer) => {
  let t: TestServer;
  let storage: Storage;
  let file: string;
  let base: string;

  beforeAll(async () => {
    file = join(makeTempDir('cortex-foreign-lock-'), 'cortex.db');
    storage = openSqliteStorage({ path: file, busyTimeoutMs: BUSY_MS, writer, writerWorker: WORKER });
    await migrateToLatest(storage);
    t = await startTestServer({ admin_token: TOKEN, db: file }, { dialect: 'sqlite', storage });
    base = httpBase(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await storage?.close();
  });

  const count = (sql: string, ...args: unknown[]) => countIn(file, sql, ...args);

  it('the event loop keeps answering while blocked writes wait; once released they complete, each once, nothing lost', async () => {
    const agent = await enroll(t, await t.issue('lock-agent'));
    const holder = new LockHolder(file);
    try {
      holder.take();
      const loopDelay = monitorEventLoopDelay({ resolution: 10 });
      loopDelay.enable();
      // two admin writes and an agent's push (the ingest commit), all blocked by the lock
      const issue1 = tracked(httpRequest(`${base}/admin/agents`, { method: 'POST', headers: bearer, body: { hostname: 'locked-1' } }));
      const issue2 = tracked(httpRequest(`${base}/admin/agents`, { method: 'POST', headers: bearer, body: { hostname: 'locked-2' } }));
      const push = tracked(agent.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 20) }));
      agent.client.notify('agent.heartbeat', { ts: new Date().toISOString(), queue_depth: 0, buffer_bytes: 0 });
      const blocked = () => !issue1.settled() || !issue2.settled() || !push.settled();

      const probes = await probeWhile(base, agent.client, () => false, 1000);
      expect(probes).toBeGreaterThan(1);
      // still waiting for the lock: nothing answered, nothing stored
      expect([issue1.settled(), issue2.settled(), push.settled()]).toEqual([false, false, false]);

      const released = Date.now();
      holder.release();
      await probeWhile(base, agent.client, blocked, 0);
      const [a, b, p] = await Promise.all([issue1.promise, issue2.promise, push.promise]);
      loopDelay.disable();
      // the event loop never stalled (before: the busy timeout, once per blocked write)
      expect(loopDelay.max / 1e6).toBeLessThan(PROMPT_MS);
      // the waiting writes went on as soon as the lock was free (not after a busy timeout each)
      expect(Date.now() - released).toBeLessThan(1500);
      for (const r of [a, b] as HttpReply[]) {
        expect(r.status, r.text).toBe(201);
        t.tokens.push(r.body.token as string);
      }
      expect(p.error, JSON.stringify(p.error)).toBeUndefined();
      expect(p.result.up_to_seq).toBe(20);
      // each done once
      expect(count("SELECT count(*) FROM agents WHERE hostname IN ('locked-1', 'locked-2')")).toBe(2);
      expect(count('SELECT count(*) FROM logs WHERE host_id = ?', agent.host_id)).toBe(20);
      expect(count('SELECT count(*) FROM enrollment_tokens WHERE host_id IN (?, ?)', a.body.host_id, b.body.host_id)).toBe(2);
      agent.client.ws.close();
    } finally {
      holder.close();
    }
  }, 30_000);

  it('a write that waits past the busy timeout still ends in the 503 of J19, the event loop answering meanwhile', async () => {
    const agent = await enroll(t, await t.issue('lock-agent-2'));
    const holder = new LockHolder(file);
    try {
      holder.take();
      const started = Date.now();
      const issue = tracked(httpRequest(`${base}/admin/agents`, { method: 'POST', headers: bearer, body: { hostname: 'too-long' } }));
      await probeWhile(base, agent.client, () => !issue.settled(), 0);
      const r = await issue.promise;
      const waited = Date.now() - started;
      expect(r.status, r.text).toBe(503);
      expect(r.headers['retry-after']).toBe('5');
      expect(r.body.error.data).toEqual({ reason: 'database_locked' });
      expect(r.body.error.message).toMatch(/is locked by another process \(SQLITE_BUSY\): waited \d+(\.\d)? s for its lock; nothing was done; try again/);
      // it waited for the busy timeout, once (not longer: one deadline for the request's write)
      expect(waited).toBeGreaterThanOrEqual(BUSY_MS - 50);
      expect(waited).toBeLessThan(BUSY_MS + 1500);
      holder.release();
      expect(count("SELECT count(*) FROM agents WHERE hostname = 'too-long'")).toBe(0);
      agent.client.ws.close();
    } finally {
      holder.close();
    }
  }, 30_000);

  it("retention's page release (a write outside kysely) waits for the lock the same way, then does its work", async () => {
    const agent = await enroll(t, await t.issue('pages-agent'));
    // free pages to hand back: rows written, then deleted
    const filler = new Database(file);
    filler.exec("CREATE TABLE IF NOT EXISTS filler (x TEXT); INSERT INTO filler SELECT hex(randomblob(2000)) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) SELECT i FROM n); DELETE FROM filler;");
    filler.close();
    const holder = new LockHolder(file);
    try {
      holder.take();
      const released = tracked(storage.releaseFreePages(100_000));
      await probeWhile(base, agent.client, () => false, 600);
      expect(released.settled()).toBe(false);
      holder.release();
      expect(await released.promise).toBeGreaterThan(0);
      agent.client.ws.close();
    } finally {
      holder.close();
    }
  }, 30_000);
});

describe('a transaction that SQLite itself rolled back', () => {
  it("fails with its own error, not ROLLBACK's \"no transaction is active\"", async () => {
    const file = join(makeTempDir('cortex-foreign-lock-rollback-'), 'cortex.db');
    const storage = openSqliteStorage({ path: file, writer: 'inline' });
    try {
      await sql`CREATE TABLE t (x INTEGER)`.execute(storage.db);
      // RAISE(ROLLBACK) ends the whole transaction inside SQLite
      await sql`CREATE TRIGGER t_refuse BEFORE INSERT ON t WHEN NEW.x < 0 BEGIN SELECT RAISE(ROLLBACK, 'negative x refused'); END`.execute(storage.db);
      const tx = storage.db.transaction().execute(async (trx) => {
        await sql`INSERT INTO t (x) VALUES (1)`.execute(trx);
        await sql`INSERT INTO t (x) VALUES (-1)`.execute(trx);
      });
      await expect(tx).rejects.toThrow('negative x refused');
      // nothing of it stored, and the connection goes on
      expect((await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(storage.db)).rows[0]?.n).toBe(0);
      await storage.db.transaction().execute((trx) => sql`INSERT INTO t (x) VALUES (2)`.execute(trx));
      expect((await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(storage.db)).rows[0]?.n).toBe(1);
    } finally {
      await storage.close();
    }
  });
});

describe('the writer thread waiting for the lock (on its own thread) while a main-side write wants its turn', () => {
  let t: TestServer;
  let storage: Storage;
  let file: string;

  beforeAll(async () => {
    file = join(makeTempDir('cortex-foreign-lock-gate-'), 'cortex.db');
    storage = openSqliteStorage({ path: file, busyTimeoutMs: BUSY_MS, writer: 'thread', writerWorker: WORKER });
    await migrateToLatest(storage);
    t = await startTestServer({ admin_token: TOKEN, db: file }, { dialect: 'sqlite', storage });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await storage?.close();
  });

  it('the write waits for its turn with the connection let go: /healthz (its select 1) answers meanwhile', async () => {
    const base = httpBase(t);
    const agent = await enroll(t, await t.issue('gate-agent'));
    // the turn-taking between this connection and the writer thread (./write-gate.ts), as the thread sees it
    const gate = new Int32Array(((storage.ingest as SqliteThreadWriter)['options'].gate as WriteGate).shared);
    const holder = new LockHolder(file);
    try {
      holder.take();
      const push = tracked(agent.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 10) }));
      // the thread has its turn and waits in SQLite's busy handler (its own thread) for the lock
      await waitFor(() => Atomics.load(gate, STATE) === WRITER);
      // two of them: they wait for the turn together (and then share it)
      const issue1 = tracked(httpRequest(`${base}/admin/agents`, { method: 'POST', headers: bearer, body: { hostname: 'after-the-writer' } }));
      const issue2 = tracked(httpRequest(`${base}/admin/agents`, { method: 'POST', headers: bearer, body: { hostname: 'after-the-writer' } }));
      await probeWhile(base, agent.client, () => false, 1000);
      expect([push.settled(), issue1.settled(), issue2.settled()]).toEqual([false, false, false]);
      holder.release();
      await probeWhile(base, agent.client, () => !push.settled() || !issue1.settled() || !issue2.settled(), 0);
      const [p, r1, r2] = await Promise.all([push.promise, issue1.promise, issue2.promise]);
      expect(p.error, JSON.stringify(p.error)).toBeUndefined();
      expect(p.result.up_to_seq).toBe(10);
      for (const r of [r1, r2]) {
        expect(r.status, r.text).toBe(201);
        t.tokens.push(r.body.token as string);
      }
      expect(countIn(file, "SELECT count(*) FROM agents WHERE hostname = 'after-the-writer'")).toBe(2);
      expect(countIn(file, 'SELECT count(*) FROM logs WHERE host_id = ?', agent.host_id)).toBe(10);
      agent.client.ws.close();
    } finally {
      holder.close();
    }
  }, 30_000);

  it('transactions that wait for the lock together each commit once it is free, and the writer thread gets its turn back', async () => {
    const agent = await enroll(t, await t.issue('gate-agent-2'));
    const gate = new Int32Array(((storage.ingest as SqliteThreadWriter)['options'].gate as WriteGate).shared);
    const holder = new LockHolder(file);
    try {
      holder.take();
      // three kysely transactions at BEGIN IMMEDIATE, each letting the connection go while it waits
      const txs = ['tx-1', 'tx-2', 'tx-3'].map((name) =>
        tracked(storage.db.transaction().execute(async (trx) => {
          await trx.updateTable('agents').set({ hostname: name }).where('host_id', '=', agent.host_id).execute();
          return name;
        })),
      );
      await probeWhile(httpBase(t), agent.client, () => false, 300);
      expect(txs.map((x) => x.settled())).toEqual([false, false, false]);
      holder.release();
      expect(await Promise.all(txs.map((x) => x.promise))).toEqual(['tx-1', 'tx-2', 'tx-3']);
      // every turn given back: the writer thread commits again
      expect(Atomics.load(gate, STATE)).not.toBe(MAIN);
      const p = await agent.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 5) });
      expect(p.error, JSON.stringify(p.error)).toBeUndefined();
      expect(p.result.up_to_seq).toBe(5);
      agent.client.ws.close();
    } finally {
      holder.close();
    }
  }, 30_000);
});

/** Once armed: right after the next INSERT INTO `table` returned (committed), `take()` runs. */
class AfterInsert implements KyselyPlugin {
  armed = false;
  take: () => void = () => undefined;
  private readonly inserts = new WeakSet<object>();

  constructor(private readonly table: string) {}

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    if (this.armed && InsertQueryNode.is(node) && node.into?.table.identifier.name === this.table) this.inserts.add(queryId);
    return node;
  }

  async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.inserts.has(queryId)) {
      this.armed = false;
      this.take();
    }
    return result;
  }
}

describe('an admin request that meets the lock after one of its writes committed', () => {
  let t: TestServer;
  let storage: Storage;
  let file: string;
  const afterAgentRow = new AfterInsert('agents');

  beforeAll(async () => {
    file = join(makeTempDir('cortex-foreign-lock-race-'), 'cortex.db');
    storage = openSqliteStorage({ path: file, busyTimeoutMs: 300, writer: 'inline' });
    await migrateToLatest(storage);
    // the server's queries pass through the plugin: another process takes the lock between two writes of one request
    t = await startTestServer({ admin_token: TOKEN, db: file }, { dialect: 'sqlite', storage: { ...storage, db: storage.db.withPlugin(afterAgentRow) } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await storage?.close();
  });

  it('says what was done (the new agent row), not "nothing was done"', async () => {
    const holder = new LockHolder(file);
    try {
      // POST /admin/agents writes the agent row, then its enrollment token's expiry: the lock is taken in between
      afterAgentRow.take = () => {
        holder.take();
      };
      afterAgentRow.armed = true;
      const r = await httpRequest(`${httpBase(t)}/admin/agents`, { method: 'POST', headers: bearer, body: { hostname: 'half-done' } });
      expect(holder.held).toBe(true);
      expect(r.status, r.text).toBe(503);
      expect(r.headers['retry-after']).toBe('5');
      expect(r.body.error.data).toEqual({ reason: 'database_locked' });
      const message = r.body.error.message as string;
      expect(message).toContain('is locked by another process (SQLITE_BUSY)');
      expect(message).toContain('part of the request was done before it met the lock (1 row written), the rest was not: look at what it left (GET it) before you try again');
      expect(message).not.toContain('nothing was done');
      expect(message).toContain('find the process that holds it');
      // and so it is: the agent row is there, its token's expiry is not
      expect(countIn(file, "SELECT count(*) FROM agents WHERE hostname = 'half-done'")).toBe(1);
      expect(countIn(file, "SELECT count(*) FROM enrollment_tokens e JOIN agents a USING (host_id) WHERE a.hostname = 'half-done'")).toBe(0);
      expect(t.log.lines.some((l) => l.includes('"rows_written_before":1'))).toBe(true);
    } finally {
      holder.close();
    }
  }, 20_000);
});
