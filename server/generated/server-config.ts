/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
// The reference server's server-config.json (contract/schemas/server-config.json): its type, the schema and a
// validator. The wire package (@cortex/agent-protocol) ships the protocol's schemas only.
import type { Validator, AgentConfig } from '@cortex/agent-protocol';
import * as precompiled from './server-config.validator.js';

/**
 * The reference server's configuration file (`cortex-server serve --config FILE`). All keys optional; command-line flags override them.
 *
 * Schema: `contract/schemas/server-config.json` (this repository; not part of the wire package).
 */
export interface ServerConfig {
  /**
   * HOST:PORT to listen on (default 127.0.0.1:3100).
   */
  listen?: string;
  /**
   * SQLite database path, or a postgres:// (postgresql://) URL for PostgreSQL; any other URL scheme is refused (default $CORTEX_DB, then ./data/cortex.db).
   */
  db?: string;
  /**
   * Bearer token for the admin HTTP API. Secret: never logged.
   */
  admin_token?: string;
  /**
   * PEM certificate file: serve wss:// natively.
   */
  tls_cert?: string;
  /**
   * PEM private key file.
   */
  tls_key?: string;
  /**
   * Allow a non-loopback listen address without TLS.
   */
  allow_insecure?: boolean;
  /**
   * Oldest agent_version accepted (semver precedence).
   */
  min_agent_version?: string;
  /**
   * Protocol floor: a hello with a lower protocol_version gets -32003.
   */
  required_protocol_version?: number;
  /**
   * AgentConfig for hosts without their own.
   */
  default_agent_config?: AgentConfig;
  /**
   * Server cap on logs.push entries; more (up to 1000) is -32008.
   */
  max_batch_entries?: number;
  /**
   * Capacity of the ingest queue in batches of 1000 entries.
   */
  ingest_queue_batches?: number;
  /**
   * Per-agent leaky bucket rate; burst is one second of it.
   */
  agent_rate_entries_per_s?: number;
  /**
   * Upgrade attempts per client address per minute (0 disables).
   */
  upgrades_per_minute?: number;
  /**
   * Addresses or CIDR ranges whose X-Forwarded-For is trusted.
   */
  trusted_proxies?: string[];
  /**
   * From this many failed hellos (bad, revoked or stale token) of one client address within 10 minutes on, its upgrades get 429 for a doubling delay (1 s up to 5 min); loopback included. Default 5; 0 disables.
   */
  failed_hellos_before_throttle?: number;
  /**
   * Serve GET /metrics to every client (default false: local requests and admin-token holders only).
   */
  metrics_public?: boolean;
  /**
   * Origin header values whose WebSocket upgrades are accepted (default none: an upgrade with an Origin header, i.e. from a web page, is refused 403).
   */
  allowed_origins?: string[];
  /**
   * Hello timer (default 5000).
   */
  hello_timeout_ms?: number;
  /**
   * WebSocket ping interval (default 20000).
   */
  ping_interval_ms?: number;
  /**
   * Missed pongs before close 1011 (default 3).
   */
  missed_pongs?: number;
  /**
   * Grace window for the previous token after a rotation (default 300).
   */
  rotation_grace_secs?: number;
  /**
   * Delete logs and metrics older than this (default 30; 0 keeps everything).
   */
  retention_days?: number;
  /**
   * Optional database size cap; oldest rows are deleted first.
   */
  max_db_bytes?: number | null;
  /**
   * drain_seconds sent on server stop (default 10).
   */
  shutdown_drain_secs?: number;
  /**
   * An agent not seen (no heartbeat, push or hello) for this long, and not revoked, counts as silent in GET /metrics (cortex_agents_silent, cortex_agents_gone_silent_total). Default 300.
   */
  silent_after_secs?: number;
}

/** contract/schemas/server-config.json, verbatim. */
export const SERVER_CONFIG_SCHEMA = {
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://cortex.invalid/schemas/v1/server-config.json",
  "title": "ServerConfig",
  "description": "The reference server's configuration file (`cortex-server serve --config FILE`). All keys optional; command-line flags override them.",
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "listen": {
      "type": "string",
      "pattern": "^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.\\-]+):[0-9]{1,5}$",
      "description": "HOST:PORT to listen on (default 127.0.0.1:3100)."
    },
    "db": {
      "type": "string",
      "minLength": 1,
      "description": "SQLite database path, or a postgres:// (postgresql://) URL for PostgreSQL; any other URL scheme is refused (default $CORTEX_DB, then ./data/cortex.db)."
    },
    "admin_token": {
      "type": "string",
      "minLength": 16,
      "maxLength": 256,
      "description": "Bearer token for the admin HTTP API. Secret: never logged."
    },
    "tls_cert": {
      "type": "string",
      "minLength": 1,
      "description": "PEM certificate file: serve wss:// natively."
    },
    "tls_key": {
      "type": "string",
      "minLength": 1,
      "description": "PEM private key file."
    },
    "allow_insecure": {
      "type": "boolean",
      "description": "Allow a non-loopback listen address without TLS."
    },
    "min_agent_version": {
      "type": "string",
      "pattern": "^\\d+\\.\\d+\\.\\d+(?:[-+].*)?$",
      "description": "Oldest agent_version accepted (semver precedence)."
    },
    "required_protocol_version": {
      "type": "integer",
      "minimum": 1,
      "description": "Protocol floor: a hello with a lower protocol_version gets -32003."
    },
    "default_agent_config": {
      "$ref": "defs.json#/$defs/AgentConfig",
      "description": "AgentConfig for hosts without their own."
    },
    "max_batch_entries": {
      "type": "integer",
      "minimum": 1,
      "maximum": 1000,
      "description": "Server cap on logs.push entries; more (up to 1000) is -32008."
    },
    "ingest_queue_batches": {
      "type": "integer",
      "minimum": 16,
      "description": "Capacity of the ingest queue in batches of 1000 entries."
    },
    "agent_rate_entries_per_s": {
      "type": "integer",
      "minimum": 1,
      "description": "Per-agent leaky bucket rate; burst is one second of it."
    },
    "upgrades_per_minute": {
      "type": "integer",
      "minimum": 0,
      "description": "Upgrade attempts per client address per minute (0 disables)."
    },
    "trusted_proxies": {
      "type": "array",
      "items": {
        "type": "string",
        "minLength": 1
      },
      "description": "Addresses or CIDR ranges whose X-Forwarded-For is trusted."
    },
    "failed_hellos_before_throttle": {
      "type": "integer",
      "minimum": 0,
      "description": "From this many failed hellos (bad, revoked or stale token) of one client address within 10 minutes on, its upgrades get 429 for a doubling delay (1 s up to 5 min); loopback included. Default 5; 0 disables."
    },
    "metrics_public": {
      "type": "boolean",
      "description": "Serve GET /metrics to every client (default false: local requests and admin-token holders only)."
    },
    "allowed_origins": {
      "type": "array",
      "items": {
        "type": "string",
        "minLength": 1
      },
      "description": "Origin header values whose WebSocket upgrades are accepted (default none: an upgrade with an Origin header, i.e. from a web page, is refused 403)."
    },
    "hello_timeout_ms": {
      "type": "integer",
      "minimum": 1,
      "description": "Hello timer (default 5000)."
    },
    "ping_interval_ms": {
      "type": "integer",
      "minimum": 1,
      "description": "WebSocket ping interval (default 20000)."
    },
    "missed_pongs": {
      "type": "integer",
      "minimum": 1,
      "description": "Missed pongs before close 1011 (default 3)."
    },
    "rotation_grace_secs": {
      "type": "integer",
      "minimum": 0,
      "description": "Grace window for the previous token after a rotation (default 300)."
    },
    "retention_days": {
      "type": "integer",
      "minimum": 0,
      "description": "Delete logs and metrics older than this (default 30; 0 keeps everything)."
    },
    "max_db_bytes": {
      "type": [
        "integer",
        "null"
      ],
      "minimum": 0,
      "description": "Optional database size cap; oldest rows are deleted first."
    },
    "shutdown_drain_secs": {
      "type": "integer",
      "minimum": 0,
      "maximum": 300,
      "description": "drain_seconds sent on server stop (default 10)."
    },
    "silent_after_secs": {
      "type": "integer",
      "minimum": 1,
      "description": "An agent not seen (no heartbeat, push or hello) for this long, and not revoked, counts as silent in GET /metrics (cortex_agents_silent, cortex_agents_gone_silent_total). Default 300."
    }
  }
} as const;

/**
 * Validates a {@link ServerConfig} (precompiled, first error only, like the package's validators).
 * On failure `errors` lists what failed; `toIssues` and `describeIssues` make it readable.
 */
export const validateServerConfig: Validator<ServerConfig> = (precompiled as unknown as { validateServerConfig: Validator<ServerConfig> }).validateServerConfig;
