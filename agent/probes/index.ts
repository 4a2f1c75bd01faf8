// The agent's probe registry: createProbeRegistry() and what probes and tests need.
export {
  createProbeRegistry,
  BUILTIN_PROBES,
  DEFAULT_PROBE_CONCURRENCY,
  DEFAULT_KILL_GRACE_MS,
  type ProbeRegistry,
  type ProbeRegistryOptions,
  type ProbeRegistryStats,
  type InvokeOptions,
  type ProbeBugLogger,
} from './registry.js';
export { defineProbe, type ProbeContext, type ProbeDefinition, type ProbeRunResult, type ProbeSettings } from './types.js';
export {
  spawnCommand,
  runTool,
  truncateText,
  stderrText,
  CommandNotFoundError,
  STDERR_LIMIT_CHARS,
  type CommandRunner,
  type CommandOptions,
  type CommandResult,
} from './command.js';
export { FifoLimiter } from './limiter.js';
