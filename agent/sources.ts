// Log sources. The real tailers (file, journald, docker) are a separate issue; this
// module fixes the seam they plug into:
//
//   - SourceManager.apply(log_sources) is called with HelloResult.config.log_sources and
//     with every applied config.update: the manager adds/removes sources without a
//     restart.
//   - pause()/resume() are called by the agent when the buffer cannot store entries
//     (disk full, read-only): a paused source reads nothing (nothing is read that
//     cannot be stored) and resumes from its stored position.
//   - A source commits what it read with AgentSink.append(entries, position): entries
//     and source position go into buffer.db in one transaction (seed 7, DESIGN 5.9).
//
// The built-in manager knows only the in-process `custom` kind, fed by the library
// call `agent.ingest()`; configured kinds it cannot tail are listed in status with a
// clear last_error instead of being silently ignored.

import type { LogSourceConfig } from '@cortex/agent-protocol';
import type { AppendResult, SourcePositionUpdate } from './buffer/buffer.js';
import type { JsonValue, NewLogEntry } from './buffer/entry.js';

export type SourceKind = LogSourceConfig['kind'];

/** One source as `status` shows it. */
export interface SourceStatus {
  kind: SourceKind;
  /** File path (file) or name (journald filter, docker container, custom name). */
  path: string | null;
  name: string | null;
  /** The last position committed to buffer.db, if any. */
  position: JsonValue | null;
  last_error: string | null;
  paused: boolean;
}

/** What a source uses to commit entries; provided by the agent. */
export interface AgentSink {
  /** Commits entries (and the source's new position) durably; throws BufferStorageError when nothing was stored. */
  append(entries: readonly NewLogEntry[], position?: SourcePositionUpdate): AppendResult;
  /** The stored position of a source, or null (read from its beginning). */
  position(source: string): JsonValue | null;
}

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

export function sourceKey(cfg: LogSourceConfig): string {
  return JSON.stringify([cfg.kind, cfg.path ?? null, cfg.filter ?? null]);
}

/**
 * The built-in manager: remembers the configured sources (so status shows them) and
 * reports kinds it cannot tail; the in-process `custom` source is `agent.ingest()`.
 * Pluggable factories let the next issue add real tailers without touching the agent.
 */
export interface SourceFactory {
  kind: SourceKind;
  start(cfg: LogSourceConfig, sink: AgentSink): RunningSource;
}

export interface RunningSource {
  pause(): void;
  resume(): void;
  stop(): Promise<void> | void;
  /** Current position and last error for status. */
  status(): { position: JsonValue | null; last_error: string | null };
}

export class BasicSourceManager implements SourceManager {
  readonly kinds: readonly SourceKind[];
  private readonly running = new Map<string, { cfg: LogSourceConfig; source: RunningSource | null; error: string | null }>();
  private pausedReason: string | null = null;

  constructor(
    private readonly sink: AgentSink,
    private readonly factories: readonly SourceFactory[] = [],
    private readonly onLog: (msg: string, fields: Record<string, unknown>) => void = () => undefined,
  ) {
    this.kinds = ['custom', ...factories.map((f) => f.kind).filter((k) => k !== 'custom')];
  }

  get paused(): boolean {
    return this.pausedReason !== null;
  }

  apply(sources: readonly LogSourceConfig[]): void {
    const wanted = new Map(sources.map((s) => [sourceKey(s), s]));
    for (const [key, r] of this.running) {
      if (!wanted.has(key)) {
        void r.source?.stop();
        this.running.delete(key);
        this.onLog('log source removed', { kind: r.cfg.kind, path: r.cfg.path ?? null });
      }
    }
    for (const [key, cfg] of wanted) {
      if (this.running.has(key)) continue;
      const factory = this.factories.find((f) => f.kind === cfg.kind);
      let source: RunningSource | null = null;
      let error: string | null = null;
      if (factory !== undefined) {
        try {
          source = factory.start(cfg, this.sink);
          if (this.paused) source.pause();
        } catch (err) {
          error = `cannot start: ${(err as Error).message}`;
        }
      } else if (cfg.kind !== 'custom') {
        error = `source kind "${cfg.kind}" is not implemented in this agent build (supported: ${this.kinds.join(', ')})`;
      }
      this.running.set(key, { cfg, source, error });
      this.onLog('log source added', { kind: cfg.kind, path: cfg.path ?? null, error });
    }
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
      const s = r.source?.status() ?? { position: null, last_error: null };
      out.push({
        kind: r.cfg.kind,
        path: r.cfg.path ?? null,
        name: r.cfg.kind === 'file' ? null : (r.cfg.filter ?? r.cfg.path ?? null),
        position: s.position,
        last_error: r.error ?? s.last_error ?? (this.pausedReason && r.cfg.kind !== 'custom' ? this.pausedReason : null),
        paused: this.paused,
      });
    }
    return out;
  }

  async close(): Promise<void> {
    for (const r of this.running.values()) await r.source?.stop();
    this.running.clear();
  }
}
