// The SQLite IngestWriter that runs the ingest transactions on a writer thread
// (./sqlite-writer-worker.ts), with a second thread that checkpoints the WAL.
//
// Why: on one thread the server spends most of an entry's time in the insert and its
// commit (`node --cpu-prof` of the 10-agent bench: row inserts ≈ 34% of the busy time,
// COMMIT with the WAL checkpoint inside it ≈ 23%, validation ≈ 9%, frame parse ≈ 5%).
// With the writer on its own thread the main thread decodes, parses and validates the
// next frames while the previous batch is inserted, and the checkpoint (its copy and
// fsync) runs on a third thread, off both.
//
// What stays the same: one transaction per commitBatch, answered only after COMMIT
// returned (the promise resolves when the thread reports it); commits run in the order
// they were asked for (one thread, one FIFO port), so a session's order is kept; a
// missing host row / a superseded session are the same errors as in-process.
//
// When the thread dies (a crash, an addon fault, `exitAt` in tests), every request it had
// not answered is rejected with WriterStoppedError (answered -32007: the agent resends;
// rows the thread did commit before it died are then dropped as duplicates and acked, so
// nothing accepted is lost or stored twice) and the next request starts a new thread.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { packRows, type PackedRows } from './packed-rows.js';
import type { WriteGate } from './write-gate.js';
import type { WriterReply, WriterRequest, WriterWorkerData } from './sqlite-writer-worker.js';
import { SessionSupersededError, UnknownHostError, WriterStoppedError, type CommitResult, type IngestLogEntry, type IngestMetricSample, type IngestWriter } from './storage.js';

/**
 * The compiled worker file: beside this module (dist/server/db/*.js), or in a bundle
 * (packaging/: lib/sqlite-writer-worker.mjs beside lib/cortex-server.mjs). Undefined when
 * there is none (running from the TypeScript sources, e.g. under vitest).
 */
export function locateWriterWorker(): URL | undefined {
  // A CommonJS bundle of this module has no import.meta.url: no worker file then.
  const here: unknown = import.meta.url;
  if (typeof here !== 'string' || !here.startsWith('file:')) return undefined;
  for (const name of ['./sqlite-writer-worker.js', './sqlite-writer-worker.mjs']) {
    const url = new URL(name, here);
    if (existsSync(fileURLToPath(url))) return url;
  }
  return undefined;
}

/**
 * wal_autocheckpoint (pages) of the connections while the checkpointer thread runs: only a
 * bound for the WAL (64 MiB of 4 KiB pages), see WriterWorkerData.autocheckpointPages.
 */
export const WRITER_AUTOCHECKPOINT_PAGES = 16384;

export interface ThreadWriterOptions {
  /** The database file (already created and migrated by the main connection). */
  path: string;
  busyTimeoutMs: number;
  /** The worker file (default: locateWriterWorker()). */
  workerUrl?: URL;
  checkpointEveryMs?: number;
  autocheckpointPages?: number;
  /** Turn-taking with the main connection's writes (./write-gate.ts). */
  gate?: WriteGate;
  /** Tests only: see WriterWorkerData.exitAt (applies to the first writer thread). */
  exitAt?: WriterWorkerData['exitAt'];
}

interface Waiting {
  resolve(value: CommitResult | number): void;
  reject(error: Error): void;
  host_id: string;
}

export class SqliteThreadWriter implements IngestWriter {
  private writer: Worker | undefined;
  private checkpointer: Worker | undefined;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private closed = false;
  private exitAt: WriterWorkerData['exitAt'];
  private readonly workerUrl: URL;

  constructor(private readonly options: ThreadWriterOptions) {
    const url = options.workerUrl ?? locateWriterWorker();
    if (url === undefined) throw new Error('the SQLite writer thread needs the compiled sqlite-writer-worker.js (run `npm run build`)');
    this.workerUrl = url;
    this.exitAt = options.exitAt;
  }

  commitBatch(host_id: string, entries: readonly IngestLogEntry[], received_at: string, session_id?: string): Promise<CommitResult> {
    return this.commitPacked(host_id, packRows(entries), received_at, session_id);
  }

  /** commitBatch with rows packed already (the bench's writer ceiling). */
  commitPacked(host_id: string, packed: PackedRows, received_at: string, session_id?: string): Promise<CommitResult> {
    return this.request(host_id, (id) => ({ t: 'commit', id, host_id, session_id: session_id ?? null, received_at, texts: packed.texts, rows: packed.rows })) as Promise<CommitResult>;
  }

  insertMetrics(host_id: string, ts: string, samples: readonly IngestMetricSample[], received_at?: string): Promise<number> {
    const seen = received_at ?? new Date().toISOString();
    return this.request(host_id, (id) => ({ t: 'metrics', id, host_id, ts, samples, received_at: seen })) as Promise<number>;
  }

  /** Requests not answered yet. */
  get inFlight(): number {
    return this.waiting.size;
  }

  private request(host_id: string, make: (id: number) => WriterRequest): Promise<CommitResult | number> {
    if (this.closed) return Promise.reject(new WriterStoppedError('the ingest writer is closed (server shutting down)'));
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, host_id });
      if (this.waiting.size === 1) worker.ref();
      worker.postMessage(make(id));
    });
  }

  private start(): Worker {
    if (this.writer !== undefined) return this.writer;
    const base = { path: this.options.path, busyTimeoutMs: this.options.busyTimeoutMs };
    const data: WriterWorkerData = {
      role: 'writer',
      ...base,
      autocheckpointPages: this.options.autocheckpointPages ?? WRITER_AUTOCHECKPOINT_PAGES,
      ...(this.options.gate !== undefined ? { gate: this.options.gate.shared } : {}),
      ...(this.exitAt !== undefined ? { exitAt: this.exitAt } : {}),
    };
    this.exitAt = undefined;
    const writer = new Worker(this.workerUrl, { workerData: data });
    writer.unref();
    let fatal: string | undefined;
    writer.on('message', (msg: WriterReply) => {
      if (msg.t === 'fatal') {
        fatal = msg.message;
        return;
      }
      const w = this.waiting.get(msg.id);
      if (w === undefined) return;
      this.waiting.delete(msg.id);
      if (this.waiting.size === 0) writer.unref();
      if (msg.t === 'done') w.resolve(msg.result);
      else if (msg.kind === 'unknown_host') w.reject(new UnknownHostError(w.host_id));
      else if (msg.kind === 'superseded') w.reject(new SessionSupersededError(w.host_id));
      else w.reject(Object.assign(new Error(msg.message), { name: msg.name, code: msg.code }));
    });
    writer.on('error', (error: Error) => {
      fatal ??= error.message;
    });
    writer.on('exit', (code) => {
      if (this.writer === writer) this.writer = undefined;
      this.options.gate?.writerGone();
      if (this.waiting.size === 0) return;
      const why = fatal ?? `exit code ${code}`;
      const error = new WriterStoppedError(`the SQLite ingest writer thread stopped (${why}) before confirming ${this.waiting.size} request(s); they may or may not be committed`);
      const all = [...this.waiting.values()];
      this.waiting.clear();
      for (const w of all) w.reject(error);
    });
    this.writer = writer;
    if (this.checkpointer === undefined) {
      const cdata: WriterWorkerData = {
        role: 'checkpointer',
        ...base,
        ...(this.options.checkpointEveryMs !== undefined ? { checkpointEveryMs: this.options.checkpointEveryMs } : {}),
      };
      const checkpointer = new Worker(this.workerUrl, { workerData: cdata });
      checkpointer.unref();
      // Without it the writer's own wal_autocheckpoint still bounds the WAL.
      checkpointer.on('error', () => undefined);
      checkpointer.on('exit', () => {
        if (this.checkpointer === checkpointer) this.checkpointer = undefined;
      });
      this.checkpointer = checkpointer;
    }
    return writer;
  }

  /** Test hook: the current writer thread (undefined before the first request). */
  get writerThread(): Worker | undefined {
    return this.writer;
  }

  /**
   * Waits for every request already made to be answered, then closes both threads'
   * connections and waits for the threads to end. Later requests are refused.
   */
  async close(): Promise<void> {
    this.closed = true;
    const pending = [...this.waiting.values()].map(
      (w) =>
        new Promise<void>((done) => {
          const { resolve, reject } = w;
          w.resolve = (v) => {
            resolve(v);
            done();
          };
          w.reject = (e) => {
            reject(e);
            done();
          };
        }),
    );
    await Promise.all(pending);
    await Promise.all([this.writer, this.checkpointer].map((w) => (w === undefined ? undefined : stopWorker(w))));
    this.writer = undefined;
    this.checkpointer = undefined;
  }
}

function stopWorker(worker: Worker): Promise<void> {
  return new Promise<void>((resolve) => {
    worker.once('exit', () => resolve());
    worker.ref();
    worker.postMessage({ t: 'close' } satisfies WriterRequest);
  });
}
