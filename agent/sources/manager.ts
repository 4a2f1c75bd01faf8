// The source manager: brings the running sources in line with the configured list.
//
//   - apply(log_sources) is called with HelloResult.config.log_sources and with every
//     applied config.update: the manager adds/removes sources without a restart. A
//     source's identity is its whole config (sourceKey): changing only its labels, filter
//     or any other field restarts it, and the new source starts only after the old one
//     has stopped (it resumes from the position stored in buffer.db).
//   - pause()/resume() are called by the agent when the buffer cannot store entries
//     (disk full, read-only): a paused source reads nothing (nothing is read that
//     cannot be stored) and resumes from its stored position.
//   - A source commits what it read with SourceSink.append(entries, position): entries
//     and source position go into buffer.db in one transaction (seed 7, DESIGN 5.9).
//
// Factories for the built-in kinds come from sourceFactories() (./index.ts; the library
// entry startAgent() and the CLI plug them in by default). Without a factory only the
// in-process `custom` kind works (fed by `agent.ingest()`); configured kinds nobody can
// tail are listed in status with a clear last_error instead of being silently ignored.

import type { LogSourceConfig } from '@cortex/agent-protocol';
import type { Source, SourceFactory, SourceKind, SourceReport, SourceSink, SourceStatus } from './types.js';

export interface SourceManager {
  /** Source kinds this build can tail (hello capabilities.sources). */
  readonly kinds: readonly SourceKind[];
  /** Bring the running sources in line with the configured list. */
  apply(sources: readonly LogSourceConfig[]): void;
  pause(reason: string): void;
  resume(): void;
  readonly paused: boolean;
  status(): SourceStatus[];
  close(): Promise<void> | void;
}

/**
 * The identity of a configured source: its whole config (every field, `labels` and any
 * extra field included), with object keys sorted so key order does not matter. A
 * config.update that changes anything about a source therefore stops the old source and
 * starts a new one (which resumes from the position stored in buffer.db); an identical
 * entry keeps running untouched.
 */
export function sourceKey(cfg: LogSourceConfig): string {
  return canonicalJson(cfg);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value as Record<string, unknown>)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

interface Entry {
  key: string;
  cfg: LogSourceConfig;
  source: Source | null;
  error: string | null;
  /** Waiting for a replaced source to stop before starting (never two readers of one position). */
  starting: boolean;
}

/**
 * Counters passed through to status when a source reports them (the built-in sources do). The
 * last three are what `cortex-agent status` prints beside a source and the README documents;
 * they were dropped here, so status never showed them.
 */
const STATUS_EXTRAS = ['key', 'state', 'lines_read', 'lines_filtered', 'lines_lost', 'rotations', 'truncations', 'files', 'lines_degraded', 'refused_connections', 'entries_too_large', 'lines_malformed', 'events_malformed', 'late_lines', 'rotated_still_written'] as const;

/** The manager the agent uses: pluggable factories start real sources; `custom` without a factory is `agent.ingest()`. */
export class BasicSourceManager implements SourceManager {
  readonly kinds: readonly SourceKind[];
  private readonly running = new Map<string, Entry>();
  private pausedReason: string | null = null;
  /** Sources being stopped; new sources start only once these have stopped. */
  private readonly stopping = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly sink: SourceSink,
    private readonly factories: readonly SourceFactory[] = [],
    private readonly onLog: (msg: string, fields: Record<string, unknown>, level: 'info' | 'warn') => void = () => undefined,
  ) {
    this.kinds = ['custom', ...factories.map((f) => f.kind).filter((k) => k !== 'custom')];
  }

  get paused(): boolean {
    return this.pausedReason !== null;
  }

  /**
   * Diffs the configured list against the running sources (identity: sourceKey, i.e. the
   * whole config): removed and changed sources are stopped; added and changed ones start
   * once every source being stopped has stopped, so a restarted source never reads
   * alongside its predecessor (both would commit the same buffer position key).
   */
  apply(sources: readonly LogSourceConfig[]): void {
    if (this.closed) return;
    const wanted = new Map(sources.map((s) => [sourceKey(s), s]));
    for (const [key, r] of this.running) {
      if (wanted.has(key)) continue;
      this.running.delete(key);
      if (r.source) this.track(r.source);
      this.onLog('log source removed', { kind: r.cfg.kind, path: r.cfg.path ?? null }, 'info');
    }
    const added: Entry[] = [];
    for (const [key, cfg] of wanted) {
      if (this.running.has(key)) continue;
      const entry: Entry = { key, cfg, source: null, error: null, starting: true };
      this.running.set(key, entry);
      added.push(entry);
    }
    if (added.length === 0) return;
    if (this.stopping.size === 0) {
      for (const e of added) this.startEntry(e);
      return;
    }
    void Promise.all([...this.stopping]).then(() => {
      for (const e of added) this.startEntry(e);
    });
  }

  /** Resolves once every source stopped by apply() has stopped and every pending start has happened. */
  async settled(): Promise<void> {
    while (this.stopping.size > 0) await Promise.all([...this.stopping]);
    await Promise.resolve();
  }

  private track(source: Source): void {
    const p: Promise<void> = Promise.resolve()
      .then(() => source.stop())
      .catch((err: unknown) => this.onLog('log source stop failed', { err: (err as Error)?.message ?? String(err) }, 'warn'))
      .finally(() => this.stopping.delete(p));
    this.stopping.add(p);
  }

  private startEntry(e: Entry): void {
    if (!e.starting) return;
    e.starting = false;
    // Removed (or replaced) again while waiting, or the manager closed: nothing to start.
    if (this.closed || this.running.get(e.key) !== e) return;
    const cfg = e.cfg;
    const factory = this.factories.find((f) => f.kind === cfg.kind);
    if (factory !== undefined) {
      try {
        e.source = factory.start(cfg, this.sink);
        if (this.paused) e.source.pause();
      } catch (err) {
        e.error = `cannot start: ${(err as Error).message}`;
      }
    } else if (cfg.kind !== 'custom') {
      e.error = `source kind "${cfg.kind}" is not implemented in this agent build (supported: ${this.kinds.join(', ')})`;
    }
    if (e.error !== null) this.onLog('log source not started', { kind: cfg.kind, path: cfg.path ?? null, error: e.error }, 'warn');
    else this.onLog('log source added', { kind: cfg.kind, path: cfg.path ?? null, error: null }, 'info');
  }

  pause(reason: string): void {
    if (this.pausedReason !== null) return;
    this.pausedReason = reason;
    for (const r of this.running.values()) r.source?.pause();
  }

  resume(): void {
    if (this.pausedReason === null) return;
    this.pausedReason = null;
    for (const r of this.running.values()) r.source?.resume();
  }

  status(): SourceStatus[] {
    const out: SourceStatus[] = [];
    for (const r of this.running.values()) {
      let s: SourceReport = { position: null, last_error: null };
      try {
        s = r.source?.status() ?? s;
      } catch (err) {
        s = { position: null, last_error: `status failed: ${(err as Error).message}` };
      }
      const row: SourceStatus = {
        kind: r.cfg.kind,
        path: r.cfg.path ?? null,
        name: r.cfg.kind === 'file' ? null : (r.cfg.filter ?? r.cfg.path ?? null),
        position: s.position,
        last_error: r.error ?? s.last_error ?? (this.pausedReason && r.cfg.kind !== 'custom' ? this.pausedReason : null),
        paused: this.paused,
      };
      if (r.starting) row.state = 'starting';
      const extra = s as unknown as Record<string, unknown>;
      for (const k of STATUS_EXTRAS) if (extra[k] !== undefined) (row as unknown as Record<string, unknown>)[k] = extra[k];
      if (r.cfg.labels !== undefined) row.labels = r.cfg.labels;
      out.push(row);
    }
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const r of this.running.values()) if (r.source) this.track(r.source);
    this.running.clear();
    await this.settled();
  }
}
