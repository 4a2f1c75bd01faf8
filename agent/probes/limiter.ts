// A FIFO concurrency limit (probe_concurrency): excess callers wait in arrival order; the limit
// can change live (config.update) — raising it starts waiters at once, lowering it lets the
// running ones finish and holds new ones back until fewer than the new limit run.

export type Release = () => void;

interface Waiter {
  resolve(release: Release): void;
  reject(reason: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

export class FifoLimiter {
  #limit: number;
  #running = 0;
  readonly #queue: Waiter[] = [];

  constructor(limit: number) {
    this.#limit = FifoLimiter.check(limit);
  }

  static check(limit: number): number {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency must be an integer >= 1, got ${limit}`);
    return limit;
  }

  get limit(): number {
    return this.#limit;
  }
  get running(): number {
    return this.#running;
  }
  get waiting(): number {
    return this.#queue.length;
  }

  setLimit(limit: number): void {
    this.#limit = FifoLimiter.check(limit);
    this.#drain();
  }

  /** Resolves with a release function once a slot is free; rejects if signal aborts first. */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#running < this.#limit && this.#queue.length === 0) {
      this.#running++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.#queue.indexOf(waiter);
          if (i >= 0) this.#queue.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#queue.push(waiter);
    });
  }

  #releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      this.#drain();
    };
  }

  #drain(): void {
    while (this.#running < this.#limit && this.#queue.length > 0) {
      const waiter = this.#queue.shift()!;
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener('abort', waiter.onAbort);
      this.#running++;
      waiter.resolve(this.#releaser());
    }
  }
}
