// The SQLite writer thread (server/db/sqlite-writer.ts): the same rows as the in-process
// writer, acks only after COMMIT, order per host, a thread that dies mid-stream.
// The worker runs from dist/ (a worker thread cannot load the TypeScript sources).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LogBatchEntry } from '@cortex/agent-protocol';
import { getAgent, issueAgent } from '../../server/db/agents.repository.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { PIECE_MAX_CHARS, forEachRow, packRows } from '../../server/db/packed-rows.js';
import { INSERT_LOG, LOG_ROWS_PER_INSERT, LogRowInserter, insertLogRowsSql, type RunStatement } from '../../server/db/sqlite-ingest-sql.js';
import { SqliteThreadWriter } from '../../server/db/sqlite-writer.js';
import { SessionSupersededError, UnknownHostError, WriterStoppedError, type IngestLogEntry, type Storage } from '../../server/db/storage.js';
import { Ingest } from '../../server/ingest.js';
import { createLogger } from '../../server/log.js';
import { entries, makeTempDir } from './helpers.js';
import { ROOT, requireServerCli } from './spawn.js';

/** helpers.entries as logs.push entries (severity 'info', source 'journald': valid ones). */
const pushEntries = (from: number, to: number): LogBatchEntry[] => entries(from, to) as LogBatchEntry[];

const WORKER = pathToFileURL(join(ROOT, 'dist/server/db/sqlite-writer-worker.js'));

beforeAll(() => {
  requireServerCli();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function open(writer: 'thread' | 'inline' = 'thread'): Promise<{ storage: Storage; path: string }> {
  const dir = makeTempDir();
  const path = join(dir, 'cortex.db');
  const storage = openSqliteStorage({ path, writer, writerWorker: WORKER });
  cleanups.push(async () => {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await migrateToLatest(storage);
  return { storage, path };
}

/** A writer thread on its own (test hooks), over an already migrated database. */
function threadWriter(path: string, exitAt?: { commit: number; when: 'before' | 'after' }): SqliteThreadWriter {
  const w = new SqliteThreadWriter({ path, busyTimeoutMs: 5000, workerUrl: WORKER, ...(exitAt ? { exitAt } : {}) });
  cleanups.push(() => w.close());
  return w;
}

async function rows(storage: Storage, host_id: string) {
  return storage.db.selectFrom('logs').selectAll().where('host_id', '=', host_id).orderBy('seq').execute();
}

const awkward: IngestLogEntry[] = [
  { seq: 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', app_name: 'sshd', process_id: '1431', message: 'Accepted publickey', source: 'journald' },
  { seq: 2, ts: '2026-05-16T19:42:50.501Z', severity: 'warning', facility: 'daemon', message: 'ünïcödé ✓ 日本語 😀 \t\n"q"', source: 'docker:cortex', metadata: { container: 'cortex', n: 1, nested: { a: [1, 'x'] } } },
  { seq: 3, ts: '2026-05-16T19:42:51.000Z', severity: 'err', facility: null, app_name: '', process_id: null, message: '', source: 'file:/var/log/x' },
  { seq: 4, ts: '2026-05-16T19:42:52.000Z', severity: 'debug', message: 'x'.repeat(70_000), source: 'journald', metadata: {} },
];

describe('packed rows', () => {
  it('round-trip every field, NULLs and empty strings apart', () => {
    const packed = packRows(awkward);
    const out: unknown[] = [];
    forEachRow(packed.texts, packed.rows, (seq, f) => out.push([seq, ...f]));
    expect(out).toEqual(
      awkward.map((e) => [e.seq, e.ts, e.severity, e.facility ?? null, e.app_name ?? null, e.process_id ?? null, e.message, e.source, e.metadata == null ? null : JSON.stringify(e.metadata)]),
    );
  });

  it('a large batch goes in pieces of whole rows, each under the large-object size, in order', () => {
    const many: IngestLogEntry[] = Array.from({ length: 1000 }, (_, i) => ({ seq: i + 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', app_name: 'sshd', message: `line ${i} `.padEnd(200, 'x'), source: 'journald' }));
    const packed = packRows(many);
    expect(packed.texts.length).toBeGreaterThan(4);
    // under V8's 128 KiB large-object threshold, and full: a piece ends only where the next row would cross the bound
    for (const t of packed.texts) expect(t.length).toBeLessThanOrEqual(PIECE_MAX_CHARS);
    for (const t of packed.texts.slice(0, -1)) expect(t.length).toBeGreaterThan(PIECE_MAX_CHARS - 300);
    const seqs: number[] = [];
    forEachRow(packed.texts, packed.rows, (seq, f) => {
      seqs.push(seq);
      expect(f[5]).toBe(many[seq - 1]?.message);
    });
    expect(seqs).toEqual(many.map((e) => e.seq));
    // one long row is a piece of its own (awkward[3] holds 70,000 characters)
    expect(packRows(awkward).texts.map((t) => t.length > 70_000)).toEqual([false, true]);
    expect(packRows([...awkward.slice(3), ...awkward.slice(0, 3)]).texts.map((t) => t.length > 70_000)).toEqual([true, false]);
  });

  it('a NUL in a later piece refuses the whole batch before any row is handed on', () => {
    const many: IngestLogEntry[] = Array.from({ length: 1000 }, (_, i) => ({ seq: i + 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: `line ${i} `.padEnd(200, 'x'), source: 'journald' }));
    const packed = packRows(many);
    const texts = [...packed.texts];
    texts[2] = (texts[2] as string).replace('line', 'li\u0000ne');
    let calls = 0;
    expect(() => forEachRow(texts, packed.rows, () => calls++)).toThrow(/NUL/);
    expect(calls).toBe(0);
  });

  it('a NUL inside a field is refused whole, not stored shifted', () => {
    const packed = packRows([{ ...(awkward[0] as IngestLogEntry), message: 'a\u0000b' }]);
    expect(() => forEachRow(packed.texts, packed.rows, () => undefined)).toThrow(/NUL/);
  });
});

describe('LogRowInserter', () => {
  /**
   * A statement that records its rows as full 11-column rows and reports `changes` of its
   * own: `layout` 'chunk' is insertLogRowsSql's (host_id, received_at, then 9 per row),
   * 'row' INSERT_LOG's (11 values in column order).
   */
  function recorder(layout: 'chunk' | 'row', changesPerRow: (row: unknown[]) => number) {
    const calls: unknown[][][] = [];
    const stmt: RunStatement = {
      run(...params: unknown[]) {
        expect(params.some((p) => Array.isArray(p))).toBe(false); // values as arguments, never an array
        const rowsOf: unknown[][] = [];
        if (layout === 'row') rowsOf.push(params);
        else {
          const [host, received, ...rest] = params;
          expect(rest.length % 9).toBe(0);
          for (let i = 0; i < rest.length; i += 9) {
            const [seq, ts, ...tail] = rest.slice(i, i + 9);
            rowsOf.push([host, seq, ts, received, ...tail]);
          }
        }
        calls.push(rowsOf);
        return { changes: rowsOf.reduce((n, r) => n + changesPerRow(r), 0) };
      },
    };
    return { calls, stmt };
  }
  const add = (w: LogRowInserter, seq: number) => w.add(seq, 'ts', 'info', null, `app${seq}`, null, `m${seq}`, 'journald', seq % 2 ? null : '{}');

  it(`hands full chunks of ${LOG_ROWS_PER_INSERT} rows to the multi-row statement, the rest one by one, in order, and counts what was inserted`, () => {
    const one = recorder('row', () => 1);
    const many = recorder('chunk', (r) => ((r[1] as number) % 10 === 0 ? 0 : 1)); // every 10th a duplicate
    const w = new LogRowInserter(one.stmt, many.stmt);
    w.begin('h', 'rcv');
    const n = 2 * LOG_ROWS_PER_INSERT + 3;
    for (let s = 1; s <= n; s++) add(w, s);
    expect(many.calls).toHaveLength(2);
    expect(one.calls).toHaveLength(0); // the remainder waits for finish()
    const inserted = w.finish();
    expect(one.calls).toHaveLength(3);
    const rows = [...many.calls, ...one.calls].flat();
    expect(rows.map((r) => r[1])).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(rows[1]).toEqual(['h', 2, 'ts', 'rcv', 'info', null, 'app2', null, 'm2', 'journald', '{}']);
    expect(rows[n - 1]).toEqual(['h', n, 'ts', 'rcv', 'info', null, `app${n}`, null, `m${n}`, 'journald', n % 2 ? null : '{}']);
    expect(inserted).toBe(n - (2 * LOG_ROWS_PER_INSERT) / 10);
    expect(w.finish()).toBe(0); // counted once
  });

  it('begin() drops rows held from a transaction that failed, so the next one does not insert them, and takes the new host and time', () => {
    const one = recorder('row', () => 1);
    const many = recorder('chunk', () => 1);
    const w = new LogRowInserter(one.stmt, many.stmt);
    w.begin('h1', 'rcv1');
    add(w, 1);
    add(w, 2);
    w.begin('h2', 'rcv2');
    add(w, 3);
    expect(w.finish()).toBe(1);
    expect(one.calls.flat().map((r) => [r[0], r[1], r[3]])).toEqual([['h2', 3, 'rcv2']]);
  });

  it('the multi-row statement stores in SQLite exactly the rows one-row inserts store, in seq order, and skips duplicates', () => {
    const schema = 'create table logs (host_id text not null, seq bigint not null, ts text not null, received_at text not null, severity text not null, facility text, app_name text, process_id text, message text not null, source text not null, metadata_json text, unique (host_id, seq))';
    const chunked = new Database(':memory:');
    const single = new Database(':memory:');
    cleanups.push(async () => {
      chunked.close();
      single.close();
    });
    chunked.exec(schema);
    single.exec(schema);
    const w = new LogRowInserter(chunked.prepare(INSERT_LOG), chunked.prepare(insertLogRowsSql(LOG_ROWS_PER_INSERT)));
    const s = single.prepare(INSERT_LOG);
    const n = 3 * LOG_ROWS_PER_INSERT + 7;
    const row = (seq: number) => [seq, `2026-12-03T10:00:${String(seq % 60).padStart(2, '0')}.000Z`, seq % 3 ? 'info' : 'err', seq % 4 ? null : 'auth', `app${seq}`, seq % 5 ? String(seq) : null, `message ${seq} ✓`, 'file', seq % 2 ? null : `{"k":${seq}}`] as const;
    const store = (from: number, to: number) => {
      w.begin('host-a', `rcv-${from}`);
      let inserted = 0;
      for (let q = from; q <= to; q++) {
        const [seq, ts, sev, fac, app, pid, msg, src, meta] = row(q);
        w.add(seq, ts, sev, fac, app, pid, msg, src, meta);
        inserted += s.run('host-a', seq, ts, `rcv-${from}`, sev, fac, app, pid, msg, src, meta).changes;
      }
      expect(w.finish()).toBe(inserted);
    };
    store(1, n);
    store(n - LOG_ROWS_PER_INSERT - 2, n + 60); // an overlap: its first rows are duplicates
    const all = (db: Database.Database) => db.prepare('select rowid, * from logs order by rowid').all();
    expect(all(chunked)).toEqual(all(single));
    expect(all(chunked)).toHaveLength(n + 60);
    expect((all(chunked) as { seq: number }[]).map((r) => r.seq)).toEqual(Array.from({ length: n + 60 }, (_, i) => i + 1));
  });
});

describe('which writer', () => {
  it('the thread where the compiled worker is, inline for :memory:; CORTEX_SQLITE_WRITER=inline is the way back', async () => {
    const dir = makeTempDir();
    const opened: Storage[] = [];
    cleanups.push(async () => {
      for (const st of opened) await st.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const at = (name: string, extra: Partial<Parameters<typeof openSqliteStorage>[0]> = {}) => {
      const st = openSqliteStorage({ path: join(dir, name), writerWorker: WORKER, ...extra });
      opened.push(st);
      return st;
    };
    expect(at('a.db').ingest).toBeInstanceOf(SqliteThreadWriter);
    expect(at(':memory:', { path: ':memory:' }).ingest).not.toBeInstanceOf(SqliteThreadWriter);
    const saved = process.env['CORTEX_SQLITE_WRITER'];
    process.env['CORTEX_SQLITE_WRITER'] = 'inline';
    try {
      expect(at('b.db').ingest).not.toBeInstanceOf(SqliteThreadWriter);
      expect(at('c.db', { writer: 'thread' }).ingest).toBeInstanceOf(SqliteThreadWriter);
    } finally {
      if (saved === undefined) delete process.env['CORTEX_SQLITE_WRITER'];
      else process.env['CORTEX_SQLITE_WRITER'] = saved;
    }
    // forced without a worker file (none beside the TypeScript sources): a clear error, not a silent fallback
    expect(() => new SqliteThreadWriter({ path: join(dir, 'd.db'), busyTimeoutMs: 100 })).toThrow(/compiled sqlite-writer-worker\.js/);
  });
});

describe('SQLite writer thread', () => {
  it('stores exactly the rows the in-process writer stores', async () => {
    const received = '2026-05-16T19:42:50.612Z';
    const stored = [];
    for (const mode of ['inline', 'thread'] as const) {
      const { storage } = await open(mode);
      const { host_id } = await issueAgent(storage.db, 'h');
      expect(await storage.ingest.commitBatch(host_id, awkward, received)).toEqual({ accepted_seq: 4, previous_accepted_seq: 0, inserted: 4 });
      stored.push((await rows(storage, host_id)).map((r) => ({ ...r, host_id: 'h' })));
      expect((await getAgent(storage.db, host_id))?.last_seen).toBe(received);
    }
    expect(stored[1]).toEqual(stored[0]);
    expect(stored[0]).toHaveLength(4);
  });

  it(`multi-row inserts (${LOG_ROWS_PER_INSERT} rows a statement): every batch size around the chunk stores exactly its rows, in both writers`, async () => {
    const received = '2026-05-16T19:42:50.612Z';
    const sizes = [1, LOG_ROWS_PER_INSERT - 1, LOG_ROWS_PER_INSERT, LOG_ROWS_PER_INSERT + 1, 3 * LOG_ROWS_PER_INSERT + 7];
    const stored: unknown[][] = [];
    for (const mode of ['inline', 'thread'] as const) {
      const { storage } = await open(mode);
      const { host_id } = await issueAgent(storage.db, 'h');
      let next = 1;
      for (const n of sizes) {
        // every row different (the awkward ones in turn, NULLs included), seqs contiguous
        const batch = Array.from({ length: n }, (_, i) => ({ ...(awkward[(next + i) % awkward.length] as IngestLogEntry), seq: next + i, message: `m${next + i}` }));
        const r = await storage.ingest.commitBatch(host_id, batch, received);
        expect(r).toEqual({ accepted_seq: next + n - 1, previous_accepted_seq: next - 1, inserted: n });
        next += n;
      }
      // a resend overlapping what is stored: only the new tail is inserted and counted
      const overlap = Array.from({ length: LOG_ROWS_PER_INSERT + 3 }, (_, i) => ({ ...(awkward[0] as IngestLogEntry), seq: next - LOG_ROWS_PER_INSERT + i, message: `again${i}` }));
      expect(await storage.ingest.commitBatch(host_id, overlap, received)).toEqual({ accepted_seq: next + 2, previous_accepted_seq: next - 1, inserted: 3 });
      const all = await rows(storage, host_id);
      expect(all.map((r) => r.seq)).toEqual(Array.from({ length: next + 2 }, (_, i) => i + 1));
      expect(all.slice(-4).map((r) => r.message)).toEqual([`m${next - 1}`, `again${LOG_ROWS_PER_INSERT}`, `again${LOG_ROWS_PER_INSERT + 1}`, `again${LOG_ROWS_PER_INSERT + 2}`]);
      stored.push(all.map((r) => ({ ...r, host_id: 'h' })));
    }
    expect(stored[1]).toEqual(stored[0]);
  });

  it('answers only after COMMIT: when the promise resolves another connection sees the rows', async () => {
    const { storage, path } = await open();
    const { host_id } = await issueAgent(storage.db, 'h');
    const reader = new Database(path, { readonly: true });
    cleanups.push(async () => {
      reader.close();
    });
    const count = reader.prepare('SELECT count(*) AS n FROM logs WHERE host_id = ?');
    for (let b = 0; b < 20; b++) {
      const r = await storage.ingest.commitBatch(host_id, entries(b * 100 + 1, b * 100 + 100), new Date().toISOString());
      expect(r.accepted_seq).toBe(b * 100 + 100);
      expect((count.get(host_id) as { n: number }).n).toBe(b * 100 + 100);
    }
  });

  it('keeps the order of the requests per host with many in flight, across hosts', async () => {
    const { storage } = await open();
    const hosts = [(await issueAgent(storage.db, 'a')).host_id, (await issueAgent(storage.db, 'b')).host_id];
    const answers: Promise<{ host: number; accepted: number; previous: number }>[] = [];
    for (let b = 0; b < 30; b++) {
      for (let h = 0; h < 2; h++) {
        const host_id = hosts[h] as string;
        answers.push(storage.ingest.commitBatch(host_id, entries(b * 50 + 1, b * 50 + 50), new Date().toISOString()).then((r) => ({ host: h, accepted: r.accepted_seq, previous: r.previous_accepted_seq })));
      }
    }
    const all = await Promise.all(answers);
    for (let h = 0; h < 2; h++) {
      const mine = all.filter((a) => a.host === h);
      // each commit saw exactly the one before it: in order, none skipped or merged
      expect(mine.map((a) => a.previous)).toEqual(mine.map((_, b) => b * 50));
      expect(mine.map((a) => a.accepted)).toEqual(mine.map((_, b) => b * 50 + 50));
      expect((await rows(storage, hosts[h] as string)).map((r) => r.seq)).toEqual(Array.from({ length: 1500 }, (_, i) => i + 1));
    }
  });

  it('refuses an unknown host and a superseded session like the in-process writer, storing nothing', async () => {
    const { storage } = await open();
    await expect(storage.ingest.commitBatch('00000000-0000-4000-8000-000000000000', entries(1, 3), new Date().toISOString())).rejects.toBeInstanceOf(UnknownHostError);
    const { host_id } = await issueAgent(storage.db, 'h');
    await storage.db.updateTable('agents').set({ session_id: 'session-new' }).where('host_id', '=', host_id).execute();
    await expect(storage.ingest.commitBatch(host_id, entries(1, 3), new Date().toISOString(), 'session-old')).rejects.toBeInstanceOf(SessionSupersededError);
    expect(await rows(storage, host_id)).toEqual([]);
    await expect(storage.ingest.insertMetrics('00000000-0000-4000-8000-000000000000', new Date().toISOString(), [{ name: 'm', value: 1 }])).rejects.toBeInstanceOf(UnknownHostError);
    expect(await storage.ingest.insertMetrics(host_id, new Date().toISOString(), [{ name: 'm', value: 1, labels: { a: 'b' } }])).toBe(1);
  });

  it('requests queued together commit together, but a refused or failing one rolls back alone', async () => {
    const { storage, path } = await open('inline');
    const a = (await issueAgent(storage.db, 'a')).host_id;
    const b = (await issueAgent(storage.db, 'b')).host_id;
    const w = threadWriter(path);
    const at = new Date().toISOString();
    // a large first commit keeps the thread busy while the rest queue up behind it
    const answers = [
      w.commitBatch(a, entries(1, 5000), at),
      w.commitBatch(b, entries(1, 10), at),
      w.commitBatch('00000000-0000-4000-8000-000000000000', entries(1, 10), at),
      w.commitPacked(b, { texts: packRows(entries(11, 12)).texts.map((t) => t.replace('message 11', 'message\u000011')), rows: 2 }, at),
      w.commitBatch(a, entries(5001, 5010), at),
      w.insertMetrics(b, at, [{ name: 'm', value: 2 }], at),
    ];
    const settled = await Promise.allSettled(answers);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
    expect((settled[2] as PromiseRejectedResult).reason).toBeInstanceOf(UnknownHostError);
    expect(String((settled[3] as PromiseRejectedResult).reason)).toMatch(/NUL/);
    expect((await rows(storage, a)).length).toBe(5010);
    expect((await rows(storage, b)).map((r) => r.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect((await getAgent(storage.db, b))?.accepted_seq).toBe(10);
  });

  it('takes turns with the main connection: a kysely transaction holds the writer off, a write between commits gets in', async () => {
    const { storage } = await open();
    const { host_id } = await issueAgent(storage.db, 'h');
    await storage.ingest.commitBatch(host_id, entries(1, 10), new Date().toISOString()); // the thread runs
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inTx!: () => void;
    const entered = new Promise<void>((r) => (inTx = r));
    const tx = storage.db.transaction().execute(async (trx) => {
      await trx.updateTable('agents').set({ hostname: 'changed' }).where('host_id', '=', host_id).execute();
      inTx();
      await held;
    });
    await entered;
    let committed = false;
    const commit = storage.ingest.commitBatch(host_id, entries(11, 20), new Date().toISOString()).then((r) => {
      committed = true;
      return r;
    });
    // the writer waits for the main side's turn to end (no SQLITE_BUSY after busy_timeout, no nesting)
    await new Promise((r) => setTimeout(r, 50));
    expect(committed).toBe(false);
    release();
    await tx;
    expect((await commit).accepted_seq).toBe(20);
    // and main-side writes keep getting in while the writer streams
    const stream = (async () => {
      for (let b = 2; b < 40; b++) await storage.ingest.commitBatch(host_id, entries(b * 10 + 1, b * 10 + 10), new Date().toISOString());
    })();
    for (let i = 0; i < 20; i++) await storage.db.updateTable('agents').set({ last_seen: `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z` }).where('host_id', '=', host_id).execute();
    await stream;
    const agent = await getAgent(storage.db, host_id);
    expect(agent?.hostname).toBe('changed');
    expect(agent?.accepted_seq).toBe(400);
  });

  for (const when of ['before', 'after'] as const) {
    it(`a writer thread that dies ${when} a COMMIT: WriterStoppedError, a new thread takes over, the resend stores each seq once`, async () => {
      const { storage, path } = await open('inline');
      const { host_id } = await issueAgent(storage.db, 'h');
      const w = threadWriter(path, { commit: 2, when });
      const at = () => new Date().toISOString();
      expect((await w.commitBatch(host_id, entries(1, 10), at())).accepted_seq).toBe(10);
      const lost = w.commitBatch(host_id, entries(11, 20), at());
      const behind = w.commitBatch(host_id, entries(21, 30), at());
      await expect(lost).rejects.toBeInstanceOf(WriterStoppedError);
      await expect(behind).rejects.toThrow(/writer thread stopped \(exit code 70\)/);
      // what the agent does after -32007: resend from the refused seq
      const again = await w.commitBatch(host_id, entries(11, 30), at());
      expect(again).toEqual({ accepted_seq: 30, previous_accepted_seq: when === 'after' ? 20 : 10, inserted: when === 'after' ? 10 : 20 });
      expect((await rows(storage, host_id)).map((r) => r.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    });
  }

  it('close() answers what was asked before it, ends both threads, and refuses later requests', async () => {
    const { storage, path } = await open('inline');
    const { host_id } = await issueAgent(storage.db, 'h');
    const w = threadWriter(path);
    const answers = [1, 2, 3, 4].map((b) => w.commitBatch(host_id, entries(b * 100 - 99, b * 100), new Date().toISOString()));
    const thread = w.writerThread;
    expect(thread).toBeDefined();
    const exited = new Promise<number>((r) => thread?.once('exit', r));
    await w.close();
    expect((await Promise.all(answers)).map((a) => a.accepted_seq)).toEqual([100, 200, 300, 400]);
    expect(await exited).toBe(0);
    expect(w.inFlight).toBe(0);
    await expect(w.commitBatch(host_id, entries(401, 401), new Date().toISOString())).rejects.toBeInstanceOf(WriterStoppedError);
  });

  it('a session over a writer thread that dies: -32007 with the reason, nothing accepted lost after the resend', async () => {
    const { storage, path } = await open('inline');
    const { host_id } = await issueAgent(storage.db, 'h');
    const w = threadWriter(path, { commit: 1, when: 'after' });
    const lines: string[] = [];
    const logger = createLogger({ name: 'test', level: 'error', destination: { write: (s: string) => lines.push(s) } });
    const ingest = new Ingest({ ...storage, ingest: w }, logger, { maxBatchEntries: 1000, queueCapacityEntries: 10_000, agentRatePerSec: 1_000_000, flushEntries: 1 });
    const session = ingest.session(host_id);
    const first = session.push({ seq_start: 1, entries: pushEntries(1, 5) });
    await expect(first).rejects.toMatchObject({ code: -32007, data: { reason: expect.stringMatching(/writer stopped/) } });
    expect(lines.join('')).toMatch(/ingest writer thread stopped/);
    expect(ingest.queuedEntries).toBe(0);
    // the agent resends from seq 1: the rows the thread committed are acked, not stored twice
    await expect(session.push({ seq_start: 1, entries: pushEntries(1, 8) })).resolves.toMatchObject({ up_to_seq: 8 });
    await session.drain();
    expect((await rows(storage, host_id)).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});
