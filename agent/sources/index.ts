// Log sources for the agent (DECISIONS.md D1): the one entry of agent/sources/.
//
//   types.ts     the seam's vocabulary: Source, SourceSink, SourceFactory, SourceStatus, SourceDeps
//   manager.ts   BasicSourceManager: apply(log_sources) starts, stops and restarts sources
//   text.ts      line and text handling every source shares (code points, UTF-8, filter, lines)
//   entry.ts     one line → one LogBatchEntry; syslog-parse.ts: RFC 5424/3164/JSON parsing
//   file.source.ts (+ file/), journald.source.ts, docker.source.ts, custom.source.ts: the kinds
//
// Plugging in: the agent's BasicSourceManager takes SourceFactory objects;
// `sourceFactories()` returns them for the kinds implemented here, so
//   new Agent({ ..., sourceFactories: sourceFactories({ logger }) })
// makes config.log_sources (hello and every config.update) start and stop real tailers.
// Standalone (tests, benchmarks, another host process): createSource(config, deps) or
// createSourceManager({ buffer }).

import type { LogSourceConfig } from '@cortex/agent-protocol';
import { BasicSourceManager } from './manager.js';
import { createFileSource } from './file.source.js';
import { createJournaldSource } from './journald.source.js';
import { createDockerSource } from './docker.source.js';
import { createCustomSource } from './custom.source.js';
import { SourceConfigError, sinkOf, type LogSourceRunner, type Source, type SourceDeps, type SourceFactory, type SourceSink } from './types.js';

export * from './types.js';
export { BasicSourceManager, sourceKey, type SourceManager } from './manager.js';
export { compileFilter, countCodePoints, MAX_MESSAGE_CODE_POINTS, scanLines, splitCodePoints, utf8Advance, type ScannedChunk, type SplitMark } from './text.js';
export { createFileSource, FileTailer, GlobFileSource, globClaims, isFilePosition, type FilePosition } from './file.source.js';
export { JournaldSource, mapJournalEntry, parseJournalMatches, type JournalPosition } from './journald.source.js';
export {
  DockerSource, DockerStreamDecoder, DEFAULT_DOCKER_SOCKET, DOCKER_PARTIAL_BYTES, MAX_FRAME_BYTES, compileContainerSelector, dockerTsNanos, formatNanos, isDockerPosition,
  type ContainerStatus, type DockerMessage, type DockerPosition,
} from './docker.source.js';
export { CustomCommandSource, CustomSocketSource, MAX_SOCKET_CLIENTS, InProcessCustomSource, parseCustomConfig, type CustomConfig } from './custom.source.js';
export { parseLine, parseRfc5424, parseRfc3164, parseJsonLine, mapLevel, type ParsedLine } from './syslog-parse.js';

/** Kinds this module can run. */
export const IMPLEMENTED_KINDS = ['file', 'journald', 'docker', 'custom'] as const satisfies readonly LogSourceConfig['kind'][];

/** Creates (does not start) the source for one configured entry. Throws SourceConfigError for an invalid config or an unimplemented kind. */
export function createSource(config: LogSourceConfig, deps: SourceDeps): LogSourceRunner {
  switch (config.kind) {
    case 'file':
      return createFileSource(config, deps);
    case 'journald':
      return createJournaldSource(config, deps);
    case 'docker':
      return createDockerSource(config, deps);
    case 'custom':
      return createCustomSource(config, deps);
    default:
      throw new SourceConfigError(`source kind "${(config as LogSourceConfig).kind}" is not implemented in agent/sources (implemented: ${IMPLEMENTED_KINDS.join(', ')})`);
  }
}

/** Factories for the agent's BasicSourceManager: `start` creates and starts the source (a config error throws, which the manager shows as last_error). */
export function sourceFactories(deps: Omit<SourceDeps, 'sink' | 'buffer'> = {}): SourceFactory[] {
  return IMPLEMENTED_KINDS.map((kind) => ({
    kind,
    start(cfg: LogSourceConfig, sink: SourceSink): Source {
      const source = createSource(cfg, { ...deps, sink });
      source.start();
      return source;
    },
  }));
}

/** A BasicSourceManager over a DurableBuffer (or sink) with this module's factories: apply(log_sources) diffs and starts/stops live. */
export function createSourceManager(deps: SourceDeps): BasicSourceManager {
  const sink = sinkOf(deps);
  if (sink === null) throw new SourceConfigError('createSourceManager needs deps.sink or deps.buffer');
  const { sink: _s, buffer: _b, ...rest } = deps;
  return new BasicSourceManager(sink, sourceFactories(rest), (msg, fields, level) => deps.logger?.[level](fields, msg));
}
