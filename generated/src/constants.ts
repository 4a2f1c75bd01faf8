/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * WebSocket close codes (PROTOCOL.md, "WebSocket close codes").
 */
export const CloseCode = {
  NormalClosure: 1000,
  GoingAway: 1001,
  ProtocolError: 1002,
  UnsupportedData: 1003,
  InvalidPayload: 1007,
  MessageTooBig: 1009,
  InternalError: 1011,
  ServiceRestart: 1012,
  HandshakeTimeout: 4000,
  AuthFailed: 4001,
  TokenRevoked: 4002,
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];

export interface CloseCodeInfo {
  readonly code: number;
  readonly name: keyof typeof CloseCode;
  readonly meaning: string;
  /** "seed": a code of the base V1 protocol; "design": added by this toolkit (PROTOCOL.md, "WebSocket close codes"). */
  readonly source: string;
}

export const CLOSE_CODE_TABLE: readonly CloseCodeInfo[] = [
  { code: 1000, name: "NormalClosure", meaning: "Normal closure.", source: "seed" },
  { code: 1001, name: "GoingAway", meaning: "Server shutting down (after the agent.shutdown drain).", source: "design" },
  { code: 1002, name: "ProtocolError", meaning: "WebSocket protocol error (RFC 6455).", source: "design" },
  { code: 1003, name: "UnsupportedData", meaning: "Unsupported binary frame.", source: "seed" },
  { code: 1007, name: "InvalidPayload", meaning: "Text frame with invalid UTF-8 (RFC 6455).", source: "design" },
  { code: 1009, name: "MessageTooBig", meaning: "Message too big (>1 MiB), or pre-hello byte limits exceeded.", source: "seed" },
  { code: 1011, name: "InternalError", meaning: "Internal error / missed pongs.", source: "seed" },
  { code: 1012, name: "ServiceRestart", meaning: "Server asked the agent to reconnect (token rotation) and the agent did not close within the grace.", source: "design" },
  { code: 4000, name: "HandshakeTimeout", meaning: "Handshake timeout (no hello in 5s).", source: "seed" },
  { code: 4001, name: "AuthFailed", meaning: "Auth failed (-32000/-32001/-32003/-32005).", source: "seed" },
  { code: 4002, name: "TokenRevoked", meaning: "Token revoked (-32002).", source: "seed" },
];

/**
 * Limits and timings (PROTOCOL.md, "Limits and timings"). Units are in each name or its doc comment.
 */
export const LIMITS = {
  /** WebSocket subprotocol offered by the client and confirmed by the server. See PROTOCOL.md. */
  subprotocol: "cortex.v1",
  /** agent.hello.params.protocol_version in V1. See schemas/agent.hello.params.json. */
  protocol_version: 1,
  /** HTTP path of the WebSocket endpoint. See PROTOCOL.md. */
  ws_path: "/ws/agent",
  /** Largest frame; larger closes with 1009. Unit: bytes. See PROTOCOL.md#websocket-close-codes. */
  max_frame_bytes: 1048576,
  /** Bytes allowed before hello is accepted in anything other than the agent.hello frame itself. Unit: bytes. See PROTOCOL.md#websocket-close-codes. */
  pre_hello_bytes: 1024,
  /** Largest agent.hello frame. Unit: bytes. See PROTOCOL.md#websocket-close-codes. */
  max_hello_frame_bytes: 65536,
  /** Time from upgrade to an accepted hello; then close 4000 with no message. Unit: ms. See PROTOCOL.md#websocket-close-codes. */
  hello_timeout_ms: 5000,
  /** Server-initiated WebSocket ping interval. Unit: ms. See PROTOCOL.md#websocket-close-codes. */
  ping_interval_ms: 20000,
  /** Consecutive missed pongs before close 1011. Unit: count. See PROTOCOL.md#websocket-close-codes. */
  missed_pongs: 3,
  /** Pending entries that trigger a commit and ack. Unit: entries. See PROTOCOL.md#logspush. */
  ack_flush_entries: 100,
  /** Longest an ack waits after the oldest pending push. Unit: ms. See PROTOCOL.md#logspush. */
  ack_flush_ms: 200,
  /** Full-jitter backoff: delay = rand(0, min(cap, base * 2^attempt)). Unit: s. See PROTOCOL.md#agent-connection-state-machine. */
  backoff_base_s: 1,
  /** Backoff cap. Unit: s. See PROTOCOL.md#agent-connection-state-machine. */
  backoff_cap_s: 60,
  /** attempt resets to 0 after this long in Active. Unit: s. See PROTOCOL.md#agent-connection-state-machine. */
  backoff_reset_after_active_s: 60,
  /** maxItems of logs.push entries; more is -32602. Unit: entries. See schemas/logs.push.params.json. */
  logs_push_max_entries: 1000,
  /** maxItems of metrics.push samples; more is -32602. Unit: samples. See schemas/metrics.push.params.json. */
  metrics_push_max_samples: 512,
  /** maxLength of LogBatchEntry.message. Unit: code points. See schemas/defs.json#/$defs/LogBatchEntry. */
  max_message_chars: 65536,
  /** Deepest nesting of LogBatchEntry.metadata (the metadata object itself is level 1); deeper is -32602. The reference agent sends such a line as a plain message with metadata {"cortex_metadata_dropped": "depth"}. Unit: levels. See PROTOCOL.md#logbatchentry. */
  metadata_max_depth: 32,
  /** Largest LogBatchEntry.metadata as UTF-8 JSON text; larger is -32602. The reference agent sends such a line as a plain message with metadata {"cortex_metadata_dropped": "size"}. Unit: bytes. See PROTOCOL.md#logbatchentry. */
  metadata_max_bytes: 65536,
  /** Default and upper bound of the server's max_batch_entries; above it (and <= 1000) is -32008. Unit: entries. See PROTOCOL.md#error-codes. */
  server_max_batch_entries: 1000,
  /** The first sequence number; accepted_seq 0 means nothing accepted. Unit: seq. See PROTOCOL.md#logspush. */
  first_seq: 1,
  /** Largest sequence number (2^53 - 1, the largest integer every JSON peer reads exactly): a logs.push seq or seq_start, or a hello resume_from_seq, above it is -32602; an agent treats an accepted_seq or up_to_seq above it as a protocol error. Enforced by the peers, not by the schemas (a schema maximum would be a breaking range narrowing). Unit: seq. See PROTOCOL.md#logspush. */
  max_seq: 9007199254740991,
  /** Upgrade attempts allowed per client address; HTTP 429 past that (0 disables). Unit: per minute per client address. See PROTOCOL.md#agenthello. */
  upgrades_per_minute: 10,
  /** Heartbeats are sent every heartbeat_interval_secs +/- this jitter. Unit: s. See PROTOCOL.md#agentheartbeat. */
  heartbeat_jitter_s: 5,
  /** A jittered heartbeat interval never goes below this. Unit: s. See PROTOCOL.md#agentheartbeat. */
  heartbeat_min_interval_s: 1,
  /** Default grace window for the previous token after a rotation. Unit: s. See PROTOCOL.md#agenthello. */
  rotation_grace_secs: 300,
  /** After asking an agent to reconnect for rotation, the server closes with 1012 if it has not closed by then. Unit: ms. See PROTOCOL.md#agenthello. */
  rotation_close_grace_ms: 5000,
  /** Revocation, config changes and decommission reach a live session within this time. Unit: ms. See PROTOCOL.md#configupdate. */
  control_propagation_ms: 2000,
  /** Default drain_seconds of agent.shutdown on server stop. Unit: s. See PROTOCOL.md#agentshutdown. */
  shutdown_drain_secs: 10,
  /** Default drain_seconds of a decommission. Unit: s. See PROTOCOL.md#agentshutdown. */
  decommission_drain_secs: 30,
  /** Maximum drain_seconds. Unit: s. See schemas/agent.shutdown.params.json. */
  max_drain_seconds: 300,
  /** Minimum capacity of the server's ingest queue. Unit: batches of 1000 entries. See PROTOCOL.md#error-codes. */
  ingest_queue_min_batches: 16,
  /** Default per-agent leaky bucket rate; burst capacity is one second of it. Unit: entries/s. See PROTOCOL.md#error-codes. */
  agent_rate_entries_per_s: 50000,
  /** Pause when -32020/-32030 carry no retry_after_ms. Unit: ms. See schemas/error-data.json#/$defs/RetryAfterData. */
  retry_after_default_ms: 1000,
  /** After halving its send rate, the agent recovers to full rate over this long without errors. Unit: ms. See PROTOCOL.md#error-codes. */
  backpressure_recovery_ms: 10000,
  /** The reference agent keeps logs.push frames under this size (frames under 128 KiB parse much faster). Unit: bytes. See PROTOCOL.md#logspush. */
  agent_frame_target_bytes: 131072,
  /** Agent buffer soft cap: pressure-based flushing. Unit: bytes. See PROTOCOL.md#logspush. */
  buffer_soft_cap_bytes: 268435456,
  /** Agent buffer hard cap: oldest entries dropped and reported. Unit: bytes. See PROTOCOL.md#logspush. */
  buffer_hard_cap_bytes: 536870912,
  /** Close reason format the agent uses on a clean close. See PROTOCOL.md#agentshutdown. */
  final_seq_close_reason: "final_seq=<n>",
} as const;

/**
 * Fields the contract marks secret ("Secret: never logged." in their description), in every
 * schema, the reference server's settings included: a logger redacts these keys wherever they
 * appear, and a token is never put into a message string.
 */
export const SECRET_FIELDS: readonly string[] = ["admin_token","rotated_token","token"];

/**
 * The WebSocket subprotocol of V1.
 */
export const SUBPROTOCOL = "cortex.v1";
/**
 * agent.hello protocol_version of V1.
 */
export const PROTOCOL_VERSION = 1;
