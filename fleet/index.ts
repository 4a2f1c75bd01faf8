// Library entry of the fleet emulator: run simulated agents from a script or a benchmark.
export { Fleet, fdLimits, mergeSnapshots, planWorkers, type FdReport, type FleetOptions, type FleetSnapshot } from './fleet.js';
export { Pool, type PoolSettings, type PoolSnapshot } from './pool.js';
export { SimAgent, AGENT_STATES, connectErrorLabel, type AgentInfo, type AgentState } from './sim-agent.js';
export {
  BACKOFF_RESET_AFTER_MS,
  DEFAULT_BACKOFF_BASE_MS,
  DEFAULT_BACKOFF_CAP_MS,
  FullJitterBackoff,
  predictAttemptsPerSecond,
  stormLimit,
  type BackoffSettings,
  type StormModel,
} from './backoff.js';
export { InputError, TokenJournal, compactTokenFile, enrollThroughAdmin, parseTokenFile, readTokenFile, type Identity } from './identities.js';
export { FLEET_PROBES, runProbe } from './probes.js';
export { RssWatch, buildReport, formatReport, rssBytes, type FleetReport } from './report.js';
export { Counts, LatencyHistogram, Timeline, type LatencySummary } from './stats.js';
