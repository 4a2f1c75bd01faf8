// The server's effective settings: built-in defaults, then the `--config FILE` (validated
// with the generated ServerConfig validator), then command-line flags. Limits and
// defaults come from the generated LIMITS; nothing here restates a contract number.
import { readFileSync } from 'node:fs';
import {
  LIMITS,
  PROTOCOL_VERSION,
  describeIssues,
  toIssues,
  validateAgentConfig,
  type AgentConfig,
} from '@cortex/agent-protocol';
import { validateServerConfig, type ServerConfig } from './generated/server-config.js';
import { UsageError } from '../common/errors.js';

/** Bad usage or invalid input: the CLI exits 2 with this message (common/errors.ts, one definition). */
export { UsageError };

export interface ListenAddress {
  host: string;
  port: number;
}

export interface ServerSettings {
  listen: ListenAddress;
  db: string;
  /** Secret: never logged. */
  admin_token: string | undefined;
  tls_cert: string | undefined;
  tls_key: string | undefined;
  allow_insecure: boolean;
  min_agent_version: string | undefined;
  required_protocol_version: number;
  default_agent_config: AgentConfig;
  max_batch_entries: number;
  ingest_queue_batches: number;
  agent_rate_entries_per_s: number;
  upgrades_per_minute: number;
  trusted_proxies: string[];
  /** Failed hellos of one address before its upgrades are throttled (0: off; DECISIONS H7). */
  failed_hellos_before_throttle: number;
  /** GET /metrics for every client (DECISIONS H6). */
  metrics_public: boolean;
  /** Origin values whose upgrades are accepted; an upgrade with any other Origin is refused (DECISIONS H7). */
  allowed_origins: string[];
  hello_timeout_ms: number;
  ping_interval_ms: number;
  missed_pongs: number;
  rotation_grace_secs: number;
  retention_days: number;
  max_db_bytes: number | null;
  shutdown_drain_secs: number;
  /** An agent not seen for this long (and not revoked) counts as silent in /metrics. */
  silent_after_secs: number;
}

export const DEFAULT_DB = './data/cortex.db';
export const DEFAULT_LISTEN = '127.0.0.1:3100';
/** Default of silent_after_secs: ten missed heartbeats at the default 30 s interval. */
export const DEFAULT_SILENT_AFTER_SECS = 300;

/** DESIGN.md section 3: the built-in default AgentConfig (lowered to the server's cap). */
export function builtinAgentConfig(maxBatchEntries: number): AgentConfig {
  return {
    heartbeat_interval_secs: 30,
    max_batch_entries: Math.min(LIMITS.server_max_batch_entries, maxBatchEntries),
    flush_interval_ms: LIMITS.ack_flush_ms,
    metrics_interval_secs: 60,
    probe_concurrency: 4,
    log_sources: [],
  };
}

export function parseListen(value: string): ListenAddress {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) {
    throw new UsageError(
      `--listen ${JSON.stringify(value)} is not HOST:PORT; write e.g. 127.0.0.1:3100 or [::1]:3100`,
      { code: 'E_CONFIG' },
    );
  }
  return { host: (m[1] ?? m[2]) as string, port };
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Reads and validates a `--config FILE`. Throws UsageError naming the failing path. */
export function readConfigFile(file: string): ServerConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read config file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}; check the path`,
      { code: 'E_CONFIG' },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`config file ${file} is not valid JSON: ${(error as Error).message}`, { code: 'E_CONFIG' });
  }
  checkServerConfig(value, `config file ${file}`);
  return value as ServerConfig;
}

export function checkServerConfig(value: unknown, what: string): asserts value is ServerConfig {
  if (!validateServerConfig(value)) {
    const issues = toIssues(validateServerConfig.errors);
    throw new UsageError(
      `${what} is invalid: ${describeIssues(issues)} (see docs/configuration.md; schema: contract/schemas/server-config.json)`,
      { code: 'E_CONFIG' },
    );
  }
}

/**
 * Effective settings: `flags` override `file`, both override the defaults. The merged
 * object is validated again (flags are checked by the same schema as the file).
 */
export function resolveSettings(file: ServerConfig = {}, flags: ServerConfig = {}): ServerSettings {
  const merged: ServerConfig = { ...file };
  for (const [k, v] of Object.entries(flags)) if (v !== undefined) (merged as Record<string, unknown>)[k] = v;
  checkServerConfig(merged, 'the settings (config file and flags)');
  const maxBatch = merged.max_batch_entries ?? LIMITS.server_max_batch_entries;
  let defaultConfig: AgentConfig;
  if (merged.default_agent_config !== undefined) {
    if (!validateAgentConfig(merged.default_agent_config)) {
      throw new UsageError(`/default_agent_config: ${describeIssues(toIssues(validateAgentConfig.errors))}`, { code: 'E_CONFIG' });
    }
    if (merged.default_agent_config.max_batch_entries > maxBatch) {
      throw new UsageError(
        `/default_agent_config/max_batch_entries (${merged.default_agent_config.max_batch_entries}) exceeds the server's max_batch_entries (${maxBatch}); lower it or raise max_batch_entries`,
        { code: 'E_CONFIG' },
      );
    }
    defaultConfig = merged.default_agent_config;
  } else {
    defaultConfig = builtinAgentConfig(maxBatch);
  }
  return {
    listen: parseListen(merged.listen ?? DEFAULT_LISTEN),
    // $CORTEX_DB is the fallback after --db and the config file's `db`.
    db: merged.db ?? (process.env['CORTEX_DB'] || undefined) ?? DEFAULT_DB,
    admin_token: merged.admin_token,
    tls_cert: merged.tls_cert,
    tls_key: merged.tls_key,
    allow_insecure: merged.allow_insecure ?? false,
    min_agent_version: merged.min_agent_version,
    required_protocol_version: merged.required_protocol_version ?? PROTOCOL_VERSION,
    default_agent_config: defaultConfig,
    max_batch_entries: maxBatch,
    ingest_queue_batches: merged.ingest_queue_batches ?? LIMITS.ingest_queue_min_batches,
    agent_rate_entries_per_s: merged.agent_rate_entries_per_s ?? LIMITS.agent_rate_entries_per_s,
    upgrades_per_minute: merged.upgrades_per_minute ?? LIMITS.upgrades_per_minute,
    trusted_proxies: merged.trusted_proxies ?? ['127.0.0.0/8', '::1'],
    failed_hellos_before_throttle: merged.failed_hellos_before_throttle ?? 5,
    metrics_public: merged.metrics_public ?? false,
    allowed_origins: merged.allowed_origins ?? [],
    hello_timeout_ms: merged.hello_timeout_ms ?? LIMITS.hello_timeout_ms,
    ping_interval_ms: merged.ping_interval_ms ?? LIMITS.ping_interval_ms,
    missed_pongs: merged.missed_pongs ?? LIMITS.missed_pongs,
    rotation_grace_secs: merged.rotation_grace_secs ?? LIMITS.rotation_grace_secs,
    retention_days: merged.retention_days ?? 30,
    max_db_bytes: merged.max_db_bytes ?? null,
    shutdown_drain_secs: merged.shutdown_drain_secs ?? LIMITS.shutdown_drain_secs,
    silent_after_secs: merged.silent_after_secs ?? DEFAULT_SILENT_AFTER_SECS,
  };
}

/** Settings recorded in server_settings (no secrets). */
export function recordableSettings(s: ServerSettings): Record<string, unknown> {
  return {
    max_batch_entries: s.max_batch_entries,
    min_agent_version: s.min_agent_version ?? null,
    required_protocol_version: s.required_protocol_version,
    default_agent_config: s.default_agent_config,
    ingest_queue_batches: s.ingest_queue_batches,
    agent_rate_entries_per_s: s.agent_rate_entries_per_s,
    rotation_grace_secs: s.rotation_grace_secs,
    shutdown_drain_secs: s.shutdown_drain_secs,
  };
}
