// Settings of servers that share one database (DESIGN.md 5, DECISIONS G5).
//
// CLUSTER settings have one value for every server on the database: they decide what an
// agent is told or allowed wherever it connects, what admin commands validate against,
// and what retention deletes. They are stored once in `server_settings`; a server that
// starts with another value while another server is live is refused (exit 2) with the
// differing keys. With no other live server the starting server records its values (that
// is how a cluster setting is changed: stop every server, start them with the new value).
//
// PER-SERVER settings size or protect one process (its queue, its drain, its timers, its
// network side) and may differ: each server records them under its own row in `servers`.
import type { Kysely } from 'kysely';
import { getSettings, setSettings } from '../db/settings.repository.js';
import type { Database } from '../db/schema.js';
import type { ServerSettings } from '../settings.js';

type Db = Kysely<Database>;

export const CLUSTER_SETTINGS = [
  'max_batch_entries',
  'min_agent_version',
  'required_protocol_version',
  'default_agent_config',
  'agent_rate_entries_per_s',
  'rotation_grace_secs',
  'retention_days',
  'max_db_bytes',
] as const;

export type ClusterSettingKey = (typeof CLUSTER_SETTINGS)[number];

export function clusterSettings(s: ServerSettings): Record<ClusterSettingKey, unknown> {
  return {
    max_batch_entries: s.max_batch_entries,
    min_agent_version: s.min_agent_version ?? null,
    required_protocol_version: s.required_protocol_version,
    default_agent_config: s.default_agent_config,
    agent_rate_entries_per_s: s.agent_rate_entries_per_s,
    rotation_grace_secs: s.rotation_grace_secs,
    retention_days: s.retention_days,
    max_db_bytes: s.max_db_bytes,
  };
}

/** Recorded per server (servers.settings_json), free to differ between servers. */
export function perServerSettings(s: ServerSettings, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    listen: `${s.listen.host}:${s.listen.port}`,
    ingest_queue_batches: s.ingest_queue_batches,
    shutdown_drain_secs: s.shutdown_drain_secs,
    upgrades_per_minute: s.upgrades_per_minute,
    trusted_proxies: s.trusted_proxies,
    hello_timeout_ms: s.hello_timeout_ms,
    ping_interval_ms: s.ping_interval_ms,
    missed_pongs: s.missed_pongs,
    tls: s.tls_cert !== undefined,
    ...extra,
  };
}

export interface SettingDifference {
  key: ClusterSettingKey;
  recorded: unknown;
  mine: unknown;
}

export class SettingsConflictError extends Error {
  readonly code = 'SETTINGS_CONFLICT' as const;
  constructor(
    readonly differences: readonly SettingDifference[],
    readonly liveServers: readonly string[],
  ) {
    super(
      `this server's cluster-wide settings differ from those of the running server(s) ${liveServers.join(', ')} on this database: ` +
        differences.map((d) => `${d.key} is ${JSON.stringify(d.recorded)} there, ${JSON.stringify(d.mine)} here`).join('; ') +
        '; start it with the same values (or stop every server first to change them)',
    );
    this.name = 'SettingsConflictError';
  }
}

/** Stable JSON for comparing values (key order of objects ignored). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v as object).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/**
 * Call holding the migration lock (start-up is serialized). Refuses a disagreeing server
 * when another is live; otherwise records this server's cluster settings.
 * @throws SettingsConflictError
 */
export async function agreeOnClusterSettings(db: Db, mine: Record<ClusterSettingKey, unknown>, liveOthers: readonly string[]): Promise<void> {
  if (liveOthers.length > 0) {
    const recorded = await getSettings(db);
    const differences: SettingDifference[] = [];
    for (const key of CLUSTER_SETTINGS) {
      if (!(key in recorded)) continue; // recorded by an older version: nothing to compare
      if (canonical(recorded[key]) !== canonical(mine[key])) differences.push({ key, recorded: recorded[key], mine: mine[key] });
    }
    if (differences.length > 0) throw new SettingsConflictError(differences, liveOthers);
  }
  await setSettings(db, mine);
}
