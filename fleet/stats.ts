// Counters that many agents share and that merge across worker processes: a latency
// histogram with ~2% wide logarithmic buckets (percentiles within 2%), a timeline of
// events in 100 ms bins of wall-clock time, and counts by label. All serialize to plain
// JSON (worker → coordinator) and merge by addition.

const GROWTH = Math.log(1.02);
const MIN_MS = 0.01;

export type Sparse = Record<string, number>;

/** Percentiles in ms (null when nothing was recorded). */
export interface LatencySummary {
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
}

export class LatencyHistogram {
  private readonly buckets = new Map<number, number>();
  count = 0;
  max = 0;

  record(ms: number): void {
    const v = Math.max(ms, MIN_MS);
    const i = Math.ceil(Math.log(v / MIN_MS) / GROWTH);
    this.buckets.set(i, (this.buckets.get(i) ?? 0) + 1);
    this.count++;
    if (v > this.max) this.max = v;
  }

  toJSON(): { buckets: Sparse; count: number; max: number } {
    const buckets: Sparse = {};
    for (const [k, v] of this.buckets) buckets[k] = v;
    return { buckets, count: this.count, max: this.max };
  }

  merge(h: { buckets: Sparse; count: number; max: number }): void {
    for (const [k, v] of Object.entries(h.buckets)) {
      const i = Number(k);
      this.buckets.set(i, (this.buckets.get(i) ?? 0) + v);
    }
    this.count += h.count;
    if (h.max > this.max) this.max = h.max;
  }

  /** The q-quantile (0..1) in ms, the bucket's upper edge; null when empty. */
  quantile(q: number): number | null {
    if (this.count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (const i of [...this.buckets.keys()].sort((a, b) => a - b)) {
      seen += this.buckets.get(i) ?? 0;
      if (seen >= rank) return Math.min(this.max, MIN_MS * Math.exp(i * GROWTH));
    }
    return this.max;
  }

  summary(): LatencySummary {
    const r = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);
    return { count: this.count, p50: r(this.quantile(0.5)), p90: r(this.quantile(0.9)), p99: r(this.quantile(0.99)), max: this.count ? r(this.max) : null };
  }
}

/** Events per 100 ms of wall-clock time (key: floor(epoch ms / 100)). */
export class Timeline {
  private readonly bins = new Map<number, number>();

  add(now = Date.now(), n = 1): void {
    const k = Math.floor(now / 100);
    this.bins.set(k, (this.bins.get(k) ?? 0) + n);
  }

  toJSON(): Sparse {
    const out: Sparse = {};
    for (const [k, v] of this.bins) out[k] = v;
    return out;
  }

  merge(s: Sparse): void {
    for (const [k, v] of Object.entries(s)) {
      const i = Number(k);
      this.bins.set(i, (this.bins.get(i) ?? 0) + v);
    }
  }

  /** Events in [fromMs, toMs). */
  between(fromMs: number, toMs: number): number {
    let n = 0;
    for (const [k, v] of this.bins) if (k * 100 >= fromMs && k * 100 < toMs) n += v;
    return n;
  }

  /** Events per 1 s bin starting at t0 (epoch ms), `bins` of them. */
  perSecond(t0: number, bins: number): number[] {
    const out = Array.from({ length: bins }, () => 0);
    for (const [k, v] of this.bins) {
      const i = Math.floor((k * 100 - t0) / 1000);
      if (i >= 0 && i < bins) out[i] = (out[i] ?? 0) + v;
    }
    return out;
  }

  /** Start (epoch ms) of the first 100 ms bin at or after `fromMs` holding an event; null if none. */
  firstAt(fromMs: number): number | null {
    let first: number | null = null;
    for (const k of this.bins.keys()) if (k * 100 >= fromMs - 99 && (first === null || k * 100 < first)) first = k * 100;
    return first;
  }

  /** The busiest 1 s window aligned to whole seconds of the epoch. */
  peakPerSecond(): number {
    const s = new Map<number, number>();
    for (const [k, v] of this.bins) {
      const sec = Math.floor(k / 10);
      s.set(sec, (s.get(sec) ?? 0) + v);
    }
    return Math.max(0, ...s.values());
  }
}

export class Counts {
  private readonly m = new Map<string, number>();

  add(label: string, n = 1): void {
    this.m.set(label, (this.m.get(label) ?? 0) + n);
  }

  get(label: string): number {
    return this.m.get(label) ?? 0;
  }

  toJSON(): Sparse {
    const out: Sparse = {};
    for (const [k, v] of [...this.m].sort((a, b) => a[0].localeCompare(b[0]))) out[k] = v;
    return out;
  }

  merge(s: Sparse): void {
    for (const [k, v] of Object.entries(s)) this.add(k, v);
  }
}
