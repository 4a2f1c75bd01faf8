// The options of one Agent: every part's own options (session.ts, push-pump.ts,
// telemetry.ts) and the agent's own (state dir, buffer, status file, sources, probes).

import type { BufferOptions, SourcePositionUpdate } from './buffer/buffer.js';
import type { SourceFactory } from './agent-sources.js';
import type { Logger } from './log.js';
import { createProbeRegistry, type ProbeRegistry, type ProbeRegistryOptions } from './probes/index.js';
import type { PushPumpOptions } from './push-pump.js';
import type { SessionOptions } from './session.js';
import type { TelemetryOptions } from './telemetry.js';

/** file.tail's allowed paths when agent.json has no probe_file_tail_paths (DECISIONS.md F2). */
export const DEFAULT_PROBE_FILE_TAIL_PATHS: readonly string[] = ['/var/log'];

/** Every part's options (session, push pump, telemetry), and the agent's own. */
export interface AgentOptions extends SessionOptions, PushPumpOptions, TelemetryOptions {
  /** State dir: token, buffer.db and status.json live here. */
  stateDir: string;
  allowInsecure?: boolean;
  logger?: Logger;
  bufferOptions?: BufferOptions;
  /** On stop(): how long to wait for in-flight pushes to be acked. Default 2 s. */
  stopFlushMs?: number;
  /** While storage is failing: how often to probe for recovery. Default 5 s. */
  storageRetryMs?: number;
  /** Write DIR/status.json for `status` (default true). */
  statusFile?: boolean;
  statusIntervalMs?: number;
  /** How often buffer.db's path is looked at (deleted or replaced under the agent: DECISIONS H25). Default 2 s; 0: never. */
  bufferFileCheckMs?: number;
  sourceFactories?: SourceFactory[];
  /**
   * The probe registry (capabilities.supported_probes = its names(), probe.request runs
   * through it): a registry, or options for createProbeRegistry (default: every built-in
   * probe, file.tail limited to `probeFileTailPaths`).
   */
  probes?: ProbeRegistry | ProbeRegistryOptions;
  /** file.tail's allowed paths when `probes` is not a registry (agent.json probe_file_tail_paths; default DEFAULT_PROBE_FILE_TAIL_PATHS). */
  probeFileTailPaths?: readonly string[];
  /** Random source for heartbeat jitter and the server order (backoff has its own in `backoff`). */
  random?: () => number;
}

export interface IngestOptions {
  /** Source position committed in the same transaction as the entries. */
  position?: SourcePositionUpdate;
}

/**
 * The registry `options.probes` names, or the built-in probes (file.tail below probeFileTailPaths)
 * and `options.probes.extraProbes`; probe bugs (-32603) are logged to `log` unless the options name a logger.
 */
export function probeRegistryFor(options: Pick<AgentOptions, 'probes' | 'probeFileTailPaths'>, concurrency: number, log?: Logger): ProbeRegistry {
  if (isProbeRegistry(options.probes)) return options.probes;
  return createProbeRegistry({ allowedTailPaths: options.probeFileTailPaths ?? DEFAULT_PROBE_FILE_TAIL_PATHS, concurrency, ...(log ? { logger: log } : {}), ...(options.probes ?? {}) });
}

function isProbeRegistry(p: ProbeRegistry | ProbeRegistryOptions | undefined): p is ProbeRegistry {
  return p !== undefined && typeof (p as ProbeRegistry).invoke === 'function' && typeof (p as ProbeRegistry).names === 'function';
}
