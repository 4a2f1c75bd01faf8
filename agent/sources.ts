// The agent's import path for the sources seam. Everything here is defined in
// agent/sources/ (types.ts: Source, SourceSink, SourceStatus, SourceFactory; manager.ts:
// SourceManager, BasicSourceManager, sourceKey); this file only keeps `./sources.js`
// imports of the agent and its library entry working.

export { BasicSourceManager, sourceKey, type SourceManager } from './sources/manager.js';
export { sinkFromBuffer } from './sources/types.js';
export { globClaims } from './sources/file.source.js';
export type { Source, SourceFactory, SourceKind, SourceReport, SourceSink, SourceStatus } from './sources/types.js';
export type {
  /** @deprecated The same as Source; kept for library users of 0.1. */
  Source as RunningSource,
  /** @deprecated The same as SourceSink; kept for library users of 0.1. */
  SourceSink as AgentSink,
} from './sources/types.js';
