// The SQLite writer thread (worker_threads): it owns a connection of its own and runs the
// ingest transactions that ./sqlite-writer.ts hands it as packed rows (./packed-rows.ts),
// so the main thread's event loop does frame decode, JSON parse and validation while this
// thread inserts. The same file runs as the checkpointer (workerData.role), a second
// thread that copies the WAL back into the database file, so that neither the writer
// nor the main thread pays for checkpoints (fsync included).
//
// Protocol (parentPort, in order; every request answered once, by id):
//   → { t: 'commit', id, host_id, session_id, received_at, texts, rows }  (texts: packRows)
//   ← { t: 'done', id, result: CommitResult }
//   → { t: 'metrics', id, host_id, ts, samples, received_at }
//   ← { t: 'done', id, result: number }
//   ← { t: 'fail', id, kind: 'unknown_host' | 'superseded' | 'error', name, message, code }
//   → { t: 'close' }  closes the connection; the thread then ends on its own
import { isMainThread, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { forEachRow } from './packed-rows.js';
import { writerAcquire, writerRelease } from './write-gate.js';
import { ADVANCE_ACCEPTED, INSERT_LOG, INSERT_METRIC, LOG_ROWS_PER_INSERT, LogRowInserter, SELECT_ACCEPTED, TOUCH_LAST_SEEN, insertLogRowsSql } from './sqlite-ingest-sql.js';
import type { CommitResult, IngestMetricSample } from './storage.js';

export interface WriterWorkerData {
  role: 'writer' | 'checkpointer';
  path: string;
  busyTimeoutMs: number;
  /** Checkpointer: how often it copies the WAL back (PASSIVE). */
  checkpointEveryMs?: number;
  /**
   * Writer: its own wal_autocheckpoint (pages). Under a writer that never pauses the
   * checkpointer's PASSIVE passes never catch up with the WAL's end, so the WAL does not
   * start over; past this size the writer copies the (few) frames the checkpointer has not
   * and the next transaction starts the WAL over. Default 16384 (64 MiB of 4 KiB pages).
   */
  autocheckpointPages?: number;
  /** The write gate shared with the main connection (./write-gate.ts). */
  gate?: SharedArrayBuffer;
  /** Tests only: the writer thread exits (code 70) at this commit (1-based). */
  exitAt?: { commit: number; when: 'before' | 'after' };
}

export type WriterRequest =
  | { t: 'commit'; id: number; host_id: string; session_id: string | null; received_at: string; texts: string[]; rows: number }
  | { t: 'metrics'; id: number; host_id: string; ts: string; samples: readonly IngestMetricSample[]; received_at: string }
  | { t: 'close' };

export type FailKind = 'unknown_host' | 'superseded' | 'error';

export type WriterReply =
  | { t: 'done'; id: number; result: CommitResult | number }
  | { t: 'fail'; id: number; kind: FailKind; name: string; message: string; code: unknown }
  | { t: 'fatal'; message: string };

type Bind = unknown[];

class Refusal extends Error {
  constructor(readonly kind: FailKind) {
    super(kind);
  }
}

function open(data: WriterWorkerData): Database.Database {
  const sqlite = new Database(data.path, { timeout: data.busyTimeoutMs, fileMustExist: true });
  sqlite.pragma(`busy_timeout = ${Math.max(0, Math.floor(data.busyTimeoutMs))}`);
  sqlite.pragma('synchronous = NORMAL');
  return sqlite;
}

function runWriter(port: NonNullable<typeof parentPort>, data: WriterWorkerData): void {
  const sqlite = open(data);
  sqlite.pragma('foreign_keys = ON');
  // The checkpointer thread copies the WAL back; this bounds the WAL (see autocheckpointPages).
  sqlite.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(data.autocheckpointPages ?? 16384))}`);
  const selectAccepted = sqlite.prepare<Bind, { accepted_seq: number; session_id: string | null }>(SELECT_ACCEPTED);
  const rowsOut = new LogRowInserter(sqlite.prepare<Bind>(INSERT_LOG), sqlite.prepare<Bind>(insertLogRowsSql(LOG_ROWS_PER_INSERT)));
  const advanceAccepted = sqlite.prepare<Bind>(ADVANCE_ACCEPTED);
  const insertMetric = sqlite.prepare<Bind>(INSERT_METRIC);
  const touchLastSeen = sqlite.prepare<Bind>(TOUCH_LAST_SEEN);

  const commitTx = sqlite.transaction(
    (host_id: string, texts: string[], rows: number, received_at: string, session_id: string | null): CommitResult => {
      const row = selectAccepted.get(host_id);
      if (row === undefined) throw new Refusal('unknown_host');
      if (session_id !== null && row.session_id !== session_id) throw new Refusal('superseded');
      const previous = row.accepted_seq;
      let highest = previous;
      rowsOut.begin(host_id, received_at);
      forEachRow(texts, rows, (seq, f) => {
        if (seq <= previous) return; // already accepted: dropped, still acked
        rowsOut.add(seq, f[0] as string, f[1] as string, f[2] ?? null, f[3] ?? null, f[4] ?? null, f[5] as string, f[6] as string, f[7] ?? null);
        if (seq > highest) highest = seq;
      });
      const inserted = rowsOut.finish();
      advanceAccepted.run(highest, received_at, host_id);
      return { accepted_seq: highest, previous_accepted_seq: previous, inserted };
    },
  );
  const metricsTx = sqlite.transaction((host_id: string, ts: string, samples: readonly IngestMetricSample[], seen: string): number => {
    if (touchLastSeen.run(seen, host_id).changes === 0) throw new Refusal('unknown_host');
    for (const s of samples) insertMetric.run(host_id, ts, s.name, s.value, s.labels == null ? null : JSON.stringify(s.labels), seen);
    return samples.length;
  });

  const runOne = (msg: Exclude<WriterRequest, { t: 'close' }>, nested: boolean): CommitResult | number => {
    if (msg.t === 'commit') {
      const tx = nested ? commitTx : commitTx.immediate;
      return tx(msg.host_id, msg.texts, msg.rows, msg.received_at, msg.session_id);
    }
    return (nested ? metricsTx : metricsTx.immediate)(msg.host_id, msg.ts, msg.samples, msg.received_at);
  };
  const failure = (id: number, error: unknown): WriterReply => {
    const kind: FailKind = error instanceof Refusal ? error.kind : 'error';
    const e = error instanceof Error ? error : new Error(String(error));
    return { t: 'fail', id, kind, name: e.name, message: e.message, code: (e as { code?: unknown }).code };
  };
  // Group commit: the requests already waiting on the port when one arrives (other
  // sessions' batches) run in ONE transaction, each in a savepoint of its own (better-
  // sqlite3 nests a transaction function as SAVEPOINT), so a refused or failed request
  // rolls back alone while the others commit; every answer is posted only after COMMIT.
  const groupTx = sqlite.transaction((reqs: Exclude<WriterRequest, { t: 'close' }>[]): WriterReply[] =>
    reqs.map((r) => {
      try {
        return { t: 'done', id: r.id, result: runOne(r, true) };
      } catch (error) {
        return failure(r.id, error);
      }
    }),
  );
  const MAX_GROUP = 32;

  let commits = 0;
  let closing = false;
  const gate = data.gate === undefined ? undefined : new Int32Array(data.gate);
  const close = () => {
    sqlite.close();
    port.close();
  };
  port.on('message', (first: WriterRequest) => {
    if (first.t === 'close') return close();
    const group: Exclude<WriterRequest, { t: 'close' }>[] = [first];
    // (not with the test hook: its commit count must mean one transaction each)
    while (data.exitAt === undefined && group.length < MAX_GROUP) {
      const next = receiveMessageOnPort(port)?.message as WriterRequest | undefined;
      if (next === undefined) break;
      if (next.t === 'close') {
        closing = true;
        break;
      }
      group.push(next);
    }
    if (gate !== undefined) writerAcquire(gate);
    let replies: WriterReply[];
    try {
      if (group.length === 1) {
        try {
          if (first.t === 'commit') {
            commits++;
            if (data.exitAt?.commit === commits && data.exitAt.when === 'before') process.exit(70);
          }
          const result = runOne(first, false);
          if (first.t === 'commit' && data.exitAt?.commit === commits && data.exitAt.when === 'after') process.exit(70);
          replies = [{ t: 'done', id: first.id, result }];
        } catch (error) {
          replies = [failure(first.id, error)];
        }
      } else {
        try {
          replies = groupTx.immediate(group);
        } catch (error) {
          // BEGIN or COMMIT itself failed: nothing of the group is stored
          replies = group.map((r) => failure(r.id, error));
        }
      }
    } finally {
      if (gate !== undefined) writerRelease(gate);
    }
    for (const r of replies) port.postMessage(r);
    if (closing) close();
  });
}

function runCheckpointer(port: NonNullable<typeof parentPort>, data: WriterWorkerData): void {
  const sqlite = open(data);
  const every = data.checkpointEveryMs ?? 50;
  // PASSIVE only: it never waits for and never blocks the writer (a RESTART would, and its
  // lock dance with a busy writer ended in SQLITE_BUSY for the writer).
  const timer = setInterval(() => {
    try {
      sqlite.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // SQLITE_BUSY (another connection's checkpoint is running): next tick
    }
  }, every);
  port.on('message', (msg: WriterRequest) => {
    if (msg.t !== 'close') return;
    clearInterval(timer);
    sqlite.close();
    port.close();
  });
}

if (!isMainThread && parentPort !== null) {
  const data = workerData as WriterWorkerData;
  try {
    if (data.role === 'checkpointer') runCheckpointer(parentPort, data);
    else runWriter(parentPort, data);
  } catch (error) {
    parentPort.postMessage({ t: 'fatal', message: error instanceof Error ? error.message : String(error) } satisfies WriterReply);
    process.exit(1);
  }
}
