// The hello's row writes, batched (issue 20): on SQLite one commit costs far more than the
// UPDATE it carries (measured: ~215 µs per UPDATE in its own commit, ~29 µs each with 50 per
// commit), so the activations (and close bookkeeping) that arrive while a commit is under way
// go into the next transaction together. Each write is still its own compare-and-set
// statement with its own result, and each caller's promise settles only after the commit:
// a rotated token is durable before its hello is answered, exactly as without batching. A
// failing transaction fails every write in it (their hellos get -32603 and close 1011; the
// agents reconnect). PostgreSQL runs each write on its own (a pool of connections commits in
// parallel, and a batch would hold many row locks at once).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Storage } from '../db/storage.js';

type Db = Kysely<Database>;
type Write<T> = (db: Db) => Promise<T>;

interface Queued {
  readonly write: Write<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/** Largest number of writes in one transaction. */
const MAX_BATCH = 128;

export class RowBatch {
  private queue: Queued[] = [];
  private running = false;
  private readonly batching: boolean;

  constructor(private readonly storage: Pick<Storage, 'db' | 'dialect'>) {
    this.batching = storage.dialect === 'sqlite';
  }

  /** Runs `write` (on the transaction of its batch); settles after that transaction committed. */
  run<T>(write: Write<T>): Promise<T> {
    if (!this.batching) return write(this.storage.db);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (!this.running) {
        this.running = true;
        // The writes of this turn of the event loop join the first batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const results: unknown[] = [];
      try {
        await this.storage.db.transaction().execute(async (trx: Transaction<Database>) => {
          for (const q of batch) results.push(await q.write(trx));
        });
      } catch (error) {
        for (const q of batch) q.reject(error);
        continue;
      }
      batch.forEach((q, i) => q.resolve(results[i]));
    }
    this.running = false;
  }
}
