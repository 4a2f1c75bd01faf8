// Turn-taking for the SQLite write lock between this process's main connection (kysely)
// and its writer thread (./sqlite-writer-worker.ts), over a SharedArrayBuffer.
//
// Without it a write on the main connection that meets the writer thread's transaction
// waits in SQLite's busy handler, which SLEEPS the event loop (1, 2, 5, 10 … ms): measured
// p50 8.5 ms per heartbeat-sized UPDATE while the writer streams 1000-row batches. With
// it the main side waits asynchronously (Atomics.waitAsync) for the writer's current
// transaction to end, and the writer does not begin another while the main side wants
// the lock, so the main write then finds the lock free. (Other processes on the same
// database still meet the lock through busy_timeout, as before.)
//
// Layout: Int32Array [STATE, WANT]. STATE: FREE, WRITER (the thread is in a transaction),
// MAIN (a main-side write or transaction holds it). WANT: main-side waiters.
export const STATE = 0;
export const WANT = 1;
export const FREE = 0;
export const WRITER = 1;
export const MAIN = 2;

// Atomics.waitAsync is in Node 16+, but in TypeScript's lib only from ES2024.
type WaitAsync = (a: Int32Array, index: number, value: number, timeoutMs: number) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

/**
 * The main side (one per storage). Its holds are shared: every main-side user (a statement, a
 * transaction; the kysely connection serializes their SQLite work) that asks while the main
 * side holds the lock shares it, and the lock goes back when the last of them releases. Users
 * may wait for it concurrently (../dialect.ts waits for it with the connection let go, so that
 * other statements run meanwhile).
 */
export class WriteGate {
  readonly shared = new SharedArrayBuffer(8);
  private readonly a = new Int32Array(this.shared);
  private holders = 0;

  /** True while the main side holds the lock (inside a transaction, say). */
  get held(): boolean {
    return this.holders > 0;
  }

  /** Takes (or shares) the lock when that needs no wait: false when the writer thread has it. */
  tryAcquire(): boolean {
    if (this.holders > 0) {
      this.holders++;
      return true;
    }
    if (Atomics.compareExchange(this.a, STATE, FREE, MAIN) !== FREE) return false;
    this.holders = 1;
    return true;
  }

  async acquire(): Promise<void> {
    if (this.tryAcquire()) return;
    Atomics.add(this.a, WANT, 1);
    try {
      // Woken when the writer's transaction ends (or after 1 s): the lock is then FREE, or
      // another main-side waiter took it first (shared: tryAcquire), or the writer has it again
      // (it began before it saw WANT): wait again.
      for (;;) {
        const r = waitAsync(this.a, STATE, WRITER, 1000);
        if (r.async) await r.value;
        if (this.tryAcquire()) return;
      }
    } finally {
      Atomics.sub(this.a, WANT, 1);
    }
  }

  release(): void {
    if (this.holders === 0) return;
    if (--this.holders > 0) return;
    Atomics.store(this.a, STATE, FREE);
    Atomics.notify(this.a, STATE);
  }

  /** The writer thread ended, maybe inside a transaction: its hold ends with it. */
  writerGone(): void {
    if (Atomics.compareExchange(this.a, STATE, WRITER, FREE) === WRITER) Atomics.notify(this.a, STATE);
  }
}

/** The writer thread's side: blocks (Atomics.wait) until it may begin a transaction. */
export function writerAcquire(a: Int32Array): void {
  for (;;) {
    if (Atomics.load(a, WANT) === 0 && Atomics.compareExchange(a, STATE, FREE, WRITER) === FREE) return;
    const s = Atomics.load(a, STATE);
    // FREE but wanted: the main side takes it next (its waitAsync is being answered)
    Atomics.wait(a, STATE, s, s === FREE ? 1 : 50);
  }
}

export function writerRelease(a: Int32Array): void {
  Atomics.store(a, STATE, FREE);
  Atomics.notify(a, STATE);
}
