// The agent's one use of the log-sources API (agent/sources.ts): the manager it builds, and
// what `status` shows of the sources. Every other agent module takes the narrow
// `SourceControl` below (or a SourceManager handed over by agent.ts), so a change to the
// sources seam touches this file and agent.ts's imports only.

import type { AppendResult, DurableBuffer, SourcePositionUpdate } from './buffer/buffer.js';
import type { BufferEntry, JsonValue } from './buffer/entry.js';
import { BasicSourceManager, globClaims, sinkFromBuffer, type SourceFactory, type SourceManager, type SourceStatus } from './sources.js';

export type { SourceFactory, SourceManager, SourceStatus };

/** What the storage guard needs of the sources: pause them while the buffer cannot store. */
export interface SourceControl {
  readonly paused: boolean;
  pause(reason: string): void;
  resume(): void;
}

/** The sources manager of one agent: sources commit through `append` (validated, durable). */
export function createAgentSources(
  buffer: Pick<DurableBuffer, 'append' | 'getSourcePosition' | 'sourcePositions' | 'deleteSourcePosition'>,
  append: (entries: readonly BufferEntry[], position?: SourcePositionUpdate) => AppendResult,
  factories: readonly SourceFactory[],
  log: (msg: string, fields: Record<string, unknown>, level: 'info' | 'warn') => void,
): SourceManager {
  return new BasicSourceManager(sinkFromBuffer(buffer, append), factories, log);
}

/**
 * The sources as `status` shows them: the manager's list, each with the position stored in
 * buffer.db; a stored position no running source claims is listed too (its kind read from the key).
 */
export function sourceStatusWithPositions(sources: Pick<SourceManager, 'status' | 'paused'>, buffer: Pick<DurableBuffer, 'sourcePositions'>): SourceStatus[] {
  const list = sources.status();
  let positions: { source: string; position: JsonValue }[] = [];
  try {
    positions = buffer.sourcePositions();
  } catch {
    // status still works without positions
  }
  // By every name a stored position may use for a source (its key, file:<path>, its name, its
  // path), first listed first: one lookup per position (a find over the list for each was
  // 3,000 × 3,000 comparisons for a glob over 3,000 files, 0.1-0.2 s per status).
  const byName = new Map<string, SourceStatus>();
  const index = (s: SourceStatus): void => {
    // and as `<kind>:<name>`: a stored row listed here has no key, and without it the CLI's pass
    // over a running agent's status.json listed a custom, docker or filtered journald row twice
    const keyed = s.kind === 'file' ? null : [s.name, s.path].filter((n) => typeof n === 'string').map((n) => `${s.kind}:${n}`);
    for (const name of [s.key, s.kind === 'file' ? `file:${s.path}` : s.name, s.path, ...(keyed ?? [])]) {
      if (typeof name === 'string' && !byName.has(name)) byName.set(name, s);
    }
  };
  list.forEach(index);
  // A glob's files commit under their own keys: their positions are in the glob's status already.
  const globMembers = new Set<string>();
  for (const s of list) {
    if (!Array.isArray(s.files)) continue;
    for (const f of s.files) if (f !== null && typeof f === 'object' && !Array.isArray(f) && typeof f['key'] === 'string') globMembers.add(f['key']);
  }
  // and the positions a glob keeps of files gone from its folder (an hour: they may come back)
  const claims = list.filter((s) => s.kind === 'file' && Array.isArray(s.files) && typeof s.path === 'string').map((s) => globClaims(s.path as string));
  for (const p of positions) {
    if (p.source.startsWith('agent:') || globMembers.has(p.source) || claims.some((c) => c(p.source))) continue;
    const match = byName.get(p.source);
    if (match) match.position = p.position;
    else {
      const kind = (['file', 'docker', 'custom', 'journald'] as const).find((k) => p.source === k || p.source.startsWith(`${k}:`)) ?? 'custom';
      const rest = p.source.includes(':') ? p.source.slice(p.source.indexOf(':') + 1) : p.source;
      const stored: SourceStatus = {
        kind,
        path: kind === 'file' ? rest : null,
        name: kind === 'file' ? null : rest,
        position: p.position,
        last_error: null,
        paused: sources.paused,
      };
      list.push(stored);
      index(stored);
    }
  }
  return list;
}
