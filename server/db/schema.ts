// Kysely table types for the server database (DESIGN.md section 4).
//
// Timestamps are RFC 3339 UTC strings with milliseconds (`new Date().toISOString()`),
// stored as TEXT so they sort lexically and read the same on every dialect.
// host_id is a lowercase UUID (text).
import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

export type ConnectionState = 'NeverConnected' | 'Active' | 'Disconnected' | 'Revoked';

export const CONNECTION_STATES: readonly ConnectionState[] = [
  'NeverConnected',
  'Active',
  'Disconnected',
  'Revoked',
];

export interface AgentsTable {
  // --- columns of DESIGN.md section 4 (the agent-mode spec) ---
  host_id: string;
  hostname: string;
  agent_version: string | null;
  /** agent.hello `platform`, stored verbatim as JSON text. */
  platform_json: string | null;
  /** agent.hello `capabilities`, stored verbatim as JSON text. */
  capabilities_json: string | null;
  /** BLAKE3(token) as lowercase hex; NULL once revoked. */
  token_hash: string | null;
  /** BLAKE3 of the previous token during/after a rotation; NULL otherwise. */
  token_hash_prev: string | null;
  token_rotated_at: string | null;
  connection_state: ConnectionState;
  /** The current session's id (a UUID); a close only counts when it still matches. */
  session_id: string | null;
  /** High-water mark of committed log seqs; 0 = nothing accepted yet. */
  accepted_seq: Generated<number>;
  /** First successful hello. */
  first_seen: string | null;
  last_handshake: string | null;
  last_seen: string | null;
  last_disconnect: string | null;
  /** "<close code> <reason>", e.g. "1009 oversize", "4002 revoked". */
  last_disconnect_reason: string | null;

  // --- extra bookkeeping ---
  /** When `agent issue` created the row. */
  created_at: string;
  /**
   * Set to max(control_rev over all agents) + 1 by every admin-side change of this row
   * (issue, reissue, revoke, rotate, decommission, config) and by every successful hello,
   * so it is a database-wide change counter: servers poll `control_rev > last seen` and a
   * change made by any process on the same database reaches the server holding the
   * session. (On PostgreSQL under concurrency this should come from a sequence.)
   */
  control_rev: Generated<number>;

  // per-host agent configuration (NULL = the server default)
  /** A complete AgentConfig, stored verbatim as given by the admin. */
  agent_config_json: string | null;
  /** Staged rollout: the config applies from this time on (NULL = at once). */
  config_apply_after: string | null;
  /** Incremented whenever agent_config_json / config_apply_after change. */
  config_version: Generated<number>;

  // rotation (DESIGN.md 5.2)
  /** `agent rotate` was requested at this time; cleared when a hello rotates the token. */
  rotate_requested_at: string | null;
  /** Grace window (seconds) that the requested rotation will use. */
  rotation_grace_secs: number | null;
  /** Until this time a hello with token_hash_prev succeeds (and is rotated again). */
  token_rotation_grace_until: string | null;

  // decommission (DESIGN.md 5.13)
  decommission_requested_at: string | null;
  decommission_drain_secs: number | null;

  // several servers (migration 0003)
  /** The server (servers.server_id) holding the live session; NULL when none. */
  server_id: string | null;

  // operator experience (migration 0020)
  /** The hostname the agent's hello reported (`hostname` stays the operator's label). */
  agent_hostname: string | null;
  /** The config group the host belongs to (agent_groups.name), or NULL. */
  group_name: string | null;
  /**
   * The host's own config (`agent config HOST --set`), NULL = none. agent_config_json is
   * the effective one: this, else the group's, else NULL (the server default).
   */
  host_config_json: string | null;
  host_config_apply_after: string | null;
}

/** Config groups (`agent config --group NAME --set`, `agent issue --group NAME`). */
export interface AgentGroupsTable {
  name: string;
  /** A complete AgentConfig (JSON text), NULL = the server default. */
  agent_config_json: string | null;
  config_apply_after: string | null;
  created_at: string;
  updated_at: string;
  /** Incremented by every change of the group's config (migration 0032): the ETag of its admin API view. */
  config_version: Generated<number>;
}

export interface LogsTable {
  host_id: string;
  /** Agent-assigned sequence number, >= 1; UNIQUE(host_id, seq). */
  seq: number;
  /** Agent time of the entry. */
  ts: string;
  /** Server time of the commit. */
  received_at: string;
  severity: string;
  facility: string | null;
  app_name: string | null;
  process_id: string | null;
  message: string;
  source: string;
  metadata_json: string | null;
}

export interface MetricsTable {
  host_id: string;
  ts: string;
  name: string;
  value: number;
  labels_json: string | null;
  /** When the server stored the row (its clock, as logs.received_at); NULL for rows stored before migration 0031. */
  received_at: string | null;
}

/** Key/value settings, e.g. the effective settings recorded by `serve`. */
export interface ServerSettingsTable {
  key: string;
  /** JSON text. */
  value_json: string;
  updated_at: string;
}

/** One running `serve` process (migration 0003). */
export interface ServersTable {
  /** --server-id (default hostname:port). */
  server_id: string;
  /** The server's WebSocket URL as it printed it. */
  url: string | null;
  started_at: string;
  /** The server renews this; past it (and not renewed) the server counts as dead. */
  lease_until: string;
  /** Its per-server settings (DECISIONS G), JSON text. */
  settings_json: string | null;
}

export type ProbeRequestState = 'pending' | 'taken' | 'done';

/** A probe forwarded to the server holding the session, and its answer (migration 0003). */
export interface ProbeRequestsTable {
  request_id: string;
  /** The server whose caller waits for the answer. */
  origin_server: string;
  /** The server holding the host's session when the request was made. */
  target_server: string;
  host_id: string;
  probe: string;
  args_json: string;
  timeout_ms: number;
  created_at: string;
  state: Generated<ProbeRequestState>;
  /** The admin API status of the outcome (200, 404, 422, 502, 503, 504). */
  http_status: number | null;
  /** {"result": ProbeOutput} or {"error": JSON-RPC error object}. */
  answer_json: string | null;
}

export interface Database {
  agents: AgentsTable;
  logs: LogsTable;
  metrics: MetricsTable;
  server_settings: ServerSettingsTable;
  servers: ServersTable;
  probe_requests: ProbeRequestsTable;
  agent_groups: AgentGroupsTable;
}

export type AgentRow = Selectable<AgentsTable>;
export type NewAgentRow = Insertable<AgentsTable>;
export type AgentUpdate = Updateable<AgentsTable>;
export type LogRow = Selectable<LogsTable>;
export type NewLogRow = Insertable<LogsTable>;
export type MetricRow = Selectable<MetricsTable>;
export type NewMetricRow = Insertable<MetricsTable>;
export type ServerSettingRow = Selectable<ServerSettingsTable>;
export type ServerRow = Selectable<ServersTable>;
export type AgentGroupRow = Selectable<AgentGroupsTable>;
