/*
 * Generated from contract/ by codegen — do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * WebSocket close codes (PROTOCOL.md, "WebSocket close codes").
 */
export declare const CloseCode: {
    readonly NormalClosure: 1000;
    readonly GoingAway: 1001;
    readonly ProtocolError: 1002;
    readonly UnsupportedData: 1003;
    readonly InvalidPayload: 1007;
    readonly MessageTooBig: 1009;
    readonly InternalError: 1011;
    readonly ServiceRestart: 1012;
    readonly HandshakeTimeout: 4000;
    readonly AuthFailed: 4001;
    readonly TokenRevoked: 4002;
};
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];
export interface CloseCodeInfo {
    readonly code: number;
    readonly name: keyof typeof CloseCode;
    readonly meaning: string;
    /** "seed" (the base protocol specification) or "design" (added by this toolkit's design). */
    readonly source: string;
}
export declare const CLOSE_CODE_TABLE: readonly CloseCodeInfo[];
/**
 * Limits and timings (PROTOCOL.md, "Limits and timings"). Units are in each name or its doc comment.
 */
export declare const LIMITS: {
    /** WebSocket subprotocol offered by the client and confirmed by the server. (seed 2, 9) */
    readonly subprotocol: "cortex.v1";
    /** agent.hello.params.protocol_version in V1. (seed 9) */
    readonly protocol_version: 1;
    /** HTTP path of the WebSocket endpoint. (seed 3) */
    readonly ws_path: "/ws/agent";
    /** Largest frame; larger closes with 1009. Unit: bytes. (seed 2) */
    readonly max_frame_bytes: 1048576;
    /** Bytes allowed before hello is accepted in anything other than the agent.hello frame itself. Unit: bytes. (seed 2, DESIGN 5.8) */
    readonly pre_hello_bytes: 1024;
    /** Largest agent.hello frame. Unit: bytes. (DESIGN 5.8) */
    readonly max_hello_frame_bytes: 65536;
    /** Time from upgrade to an accepted hello; then close 4000 with no message. Unit: ms. (seed 3) */
    readonly hello_timeout_ms: 5000;
    /** Server-initiated WebSocket ping interval. Unit: ms. (seed 2) */
    readonly ping_interval_ms: 20000;
    /** Consecutive missed pongs before close 1011. Unit: count. (seed 2) */
    readonly missed_pongs: 3;
    /** Pending entries that trigger a commit and ack. Unit: entries. (seed 7 (K)) */
    readonly ack_flush_entries: 100;
    /** Longest an ack waits after the oldest pending push. Unit: ms. (seed 7 (T)) */
    readonly ack_flush_ms: 200;
    /** Full-jitter backoff: delay = rand(0, min(cap, base * 2^attempt)). Unit: s. (seed 6) */
    readonly backoff_base_s: 1;
    /** Backoff cap. Unit: s. (seed 6) */
    readonly backoff_cap_s: 60;
    /** attempt resets to 0 after this long in Active. Unit: s. (seed 6) */
    readonly backoff_reset_after_active_s: 60;
    /** maxItems of logs.push entries; more is -32602. Unit: entries. (seed 4.4) */
    readonly logs_push_max_entries: 1000;
    /** maxItems of metrics.push samples; more is -32602. Unit: samples. (seed 4.5) */
    readonly metrics_push_max_samples: 512;
    /** maxLength of LogBatchEntry.message. Unit: code points. (seed 4.4) */
    readonly max_message_chars: 65536;
    /** Deepest nesting of LogBatchEntry.metadata (the metadata object itself is level 1); deeper is -32602. The reference agent sends such a line as a plain message with metadata {"cortex_metadata_dropped": "depth"}. Unit: levels. (DECISIONS H2) */
    readonly metadata_max_depth: 32;
    /** Largest LogBatchEntry.metadata as UTF-8 JSON text; larger is -32602. The reference agent sends such a line as a plain message with metadata {"cortex_metadata_dropped": "size"}. Unit: bytes. (DECISIONS H2) */
    readonly metadata_max_bytes: 65536;
    /** Default and upper bound of the server's max_batch_entries; above it (and <= 1000) is -32008. Unit: entries. (DESIGN 5.4) */
    readonly server_max_batch_entries: 1000;
    /** The first sequence number; accepted_seq 0 means nothing accepted. Unit: seq. (DESIGN 5.4) */
    readonly first_seq: 1;
    /** Largest sequence number (2^53 - 1, the largest integer every JSON peer reads exactly): a logs.push seq or seq_start, or a hello resume_from_seq, above it is -32602; an agent treats an accepted_seq or up_to_seq above it as a protocol error. Enforced by the peers, not by the schemas (a schema maximum would be a breaking range narrowing, see DECISIONS H1). Unit: seq. (DECISIONS H1) */
    readonly max_seq: 9007199254740991;
    /** Upgrade attempts allowed per client address; HTTP 429 past that (0 disables). Unit: per minute per client address. (DESIGN 5.8) */
    readonly upgrades_per_minute: 10;
    /** Heartbeats are sent every heartbeat_interval_secs +/- this jitter. Unit: s. (DESIGN 5.10) */
    readonly heartbeat_jitter_s: 5;
    /** A jittered heartbeat interval never goes below this. Unit: s. (DESIGN 5.10) */
    readonly heartbeat_min_interval_s: 1;
    /** Default grace window for the previous token after a rotation. Unit: s. (DESIGN 5.2) */
    readonly rotation_grace_secs: 300;
    /** After asking an agent to reconnect for rotation, the server closes with 1012 if it has not closed by then. Unit: ms. (DESIGN 5.2) */
    readonly rotation_close_grace_ms: 5000;
    /** Revocation, config changes and decommission reach a live session within this time. Unit: ms. (DESIGN 3) */
    readonly control_propagation_ms: 2000;
    /** Default drain_seconds of agent.shutdown on server stop. Unit: s. (DESIGN 3) */
    readonly shutdown_drain_secs: 10;
    /** Default drain_seconds of a decommission. Unit: s. (DESIGN 5.13) */
    readonly decommission_drain_secs: 30;
    /** Maximum drain_seconds. Unit: s. (seed 4.3) */
    readonly max_drain_seconds: 300;
    /** Minimum capacity of the server's ingest queue. Unit: batches of 1000 entries. (DESIGN 5.6) */
    readonly ingest_queue_min_batches: 16;
    /** Default per-agent leaky bucket rate; burst capacity is one second of it. Unit: entries/s. (DESIGN 5.6) */
    readonly agent_rate_entries_per_s: 50000;
    /** Pause when -32020/-32030 carry no retry_after_ms. Unit: ms. (DESIGN 5.6) */
    readonly retry_after_default_ms: 1000;
    /** After halving its send rate, the agent recovers to full rate over this long without errors. Unit: ms. (DESIGN 5.6) */
    readonly backpressure_recovery_ms: 10000;
    /** The reference agent keeps logs.push frames under this size (frames under 128 KiB parse much faster). Unit: bytes. (MEASURED.md) */
    readonly agent_frame_target_bytes: 131072;
    /** Agent buffer soft cap: pressure-based flushing. Unit: bytes. (DESIGN 5.9) */
    readonly buffer_soft_cap_bytes: 268435456;
    /** Agent buffer hard cap: oldest entries dropped and reported. Unit: bytes. (DESIGN 5.9) */
    readonly buffer_hard_cap_bytes: 536870912;
    /** Close reason format the agent uses on a clean close. (seed 11) */
    readonly final_seq_close_reason: "final_seq=<n>";
};
/**
 * The WebSocket subprotocol of V1.
 */
export declare const SUBPROTOCOL = "cortex.v1";
/**
 * agent.hello protocol_version of V1.
 */
export declare const PROTOCOL_VERSION = 1;
