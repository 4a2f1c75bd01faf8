/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * Syslog severity name (RFC 5424 order, most severe first).
 *
 * Schema: `schemas/defs.json#/$defs/Severity`
 */
export type Severity = 'emerg' | 'alert' | 'crit' | 'err' | 'warning' | 'notice' | 'info' | 'debug';
/**
 * Where an entry came from: "journald", or "file:<path>", "docker:<container>", "custom:<name>".
 *
 * Schema: `schemas/defs.json#/$defs/LogSource`
 */
export type LogSource = 'journald' | `file:${string}` | `docker:${string}` | `custom:${string}`;
/**
 * The JSON-RPC 2.0 envelope of every frame (PROTOCOL.md: exactly one message per WebSocket frame, no top-level arrays). Method-specific params and results are validated separately by the method schemas.
 *
 * Schema: `schemas/jsonrpc.json`
 */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcSuccessResponse | JsonRpcErrorResponse;
/**
 * Request identifier. This contract uses integers; strings are accepted as JSON-RPC 2.0 allows. An integer id is within ±(2^53 − 1), the integers every JSON parser keeps exactly (RFC 8259 on numbers; RFC 7493, I-JSON): a larger one may be read as another number, so that the response would carry an id the sender never used; such a request is answered -32600 with id null.
 *
 * Schema: `schemas/jsonrpc.json#/$defs/JsonRpcId`
 */
export type JsonRpcId = number | string;
/**
 * Every named schema of the contract, by name (a lookup type: ProtocolSchemas["LogsPushParams"]).
 */
export interface ProtocolSchemas {
    AgentHeartbeatParams: AgentHeartbeatParams;
    AgentHelloParams: AgentHelloParams;
    AgentHelloResult: AgentHelloResult;
    AgentShutdownParams: AgentShutdownParams;
    ConfigUpdateParams: ConfigUpdateParams;
    Severity: Severity;
    LogSource: LogSource;
    LogBatchEntry: LogBatchEntry;
    MetricSample: MetricSample;
    ProbeOutput: ProbeOutput;
    AgentConfig: AgentConfig;
    AuthFailedData: AuthFailedData;
    TokenRevokedData: TokenRevokedData;
    AgentVersionUnsupportedData: AgentVersionUnsupportedData;
    UnknownHostData: UnknownHostData;
    TokenRotationRequiredData: TokenRotationRequiredData;
    BufferOverflowData: BufferOverflowData;
    PayloadTooLargeData: PayloadTooLargeData;
    ProbeUnavailableData: ProbeUnavailableData;
    ProbeExecutionFailedData: ProbeExecutionFailedData;
    ProbeTimeoutData: ProbeTimeoutData;
    RetryAfterData: RetryAfterData;
    InvalidParamsData: InvalidParamsData;
    JsonRpcMessage: JsonRpcMessage;
    JsonRpcId: JsonRpcId;
    JsonRpcRequest: JsonRpcRequest;
    JsonRpcNotification: JsonRpcNotification;
    JsonRpcSuccessResponse: JsonRpcSuccessResponse;
    JsonRpcErrorObject: JsonRpcErrorObject;
    JsonRpcErrorResponse: JsonRpcErrorResponse;
    LogsPushParams: LogsPushParams;
    LogsPushResult: LogsPushResult;
    MetricsPushParams: MetricsPushParams;
    MetricsPushResult: MetricsPushResult;
    ProbeRequestParams: ProbeRequestParams;
    ProbeRequestResult: ProbeOutput;
    ExecSystemctlStatusArgs: ExecSystemctlStatusArgs;
    ExecSystemctlStatusOutput: ExecSystemctlStatusOutput;
    FsDiskUsageArgs: FsDiskUsageArgs;
    FsDiskUsageOutput: FsDiskUsageOutput;
    SysUptimeArgs: SysUptimeArgs;
    SysUptimeOutput: SysUptimeOutput;
    SysOsReleaseArgs: SysOsReleaseArgs;
    SysOsReleaseOutput: SysOsReleaseOutput;
    ProcTopArgs: ProcTopArgs;
    ProcTopOutput: ProcTopOutput;
    NetListeningSocketsArgs: NetListeningSocketsArgs;
    NetListeningSocketsOutput: NetListeningSocketsOutput;
    JournalTailArgs: JournalTailArgs;
    JournalTailOutput: JournalTailOutput;
    FileTailArgs: FileTailArgs;
    FileTailOutput: FileTailOutput;
}
/**
 * agent.heartbeat params: application-level liveness and buffer/push pressure.
 *
 * Schema: `schemas/agent.heartbeat.params.json`
 */
export interface AgentHeartbeatParams {
    ts: string;
    queue_depth: number;
    buffer_bytes: number;
    push_lag_seq?: number;
}
/**
 * agent.hello params: handshake, identity, capability declaration, replay coordination. The first frame on every connection.
 *
 * Schema: `schemas/agent.hello.params.json`
 */
export interface AgentHelloParams {
    protocol_version: number;
    agent_version: string;
    hostname: string;
    host_id: string;
    platform: Platform;
    capabilities: Capabilities;
    /**
     * One-time enrollment token or long-lived token. Secret: never logged.
     */
    token: string;
    /**
     * The agent's acked_seq (highest seq it knows the server committed).
     */
    resume_from_seq?: number | null;
}
/**
 * Host platform, used for diagnostics and probe eligibility.
 */
export interface Platform {
    os: string;
    arch: string;
    kernel: string;
    distro?: string | null;
}
/**
 * What the agent can do (PROTOCOL.md#probes for the probe names). Stored verbatim by the server.
 */
export interface Capabilities {
    supported_probes: string[];
    sources: ('journald' | 'file' | 'docker' | 'custom')[];
    max_batch_entries: number;
    compression: 'zstd'[];
}
/**
 * agent.hello result (HelloResult).
 *
 * Schema: `schemas/agent.hello.result.json`
 */
export interface AgentHelloResult {
    server_version: string;
    server_time: string;
    accepted_seq: number;
    session_id: string;
    /**
     * Set when the server has rotated the agent's token (typically: first enroll, where the agent sent a one-time enrollment token and the server replaces it with a long-lived token). When present, the agent MUST atomically persist this as its new long-lived credential, overwriting whatever it sent in agent.hello.params.token. Server-side, agents.token_hash is updated to BLAKE3(rotated_token); the previous one-time token becomes invalid immediately (no grace window for first-enroll rotation). Absent when the server determined no rotation was needed. Secret: never logged.
     */
    rotated_token?: string | null;
    config: AgentConfig;
}
/**
 * Agent configuration sent by the server in HelloResult.config and config.update. The server's instruction set for what to collect and how fast.
 *
 * Schema: `schemas/defs.json#/$defs/AgentConfig`
 */
export interface AgentConfig {
    heartbeat_interval_secs: number;
    max_batch_entries: number;
    flush_interval_ms: number;
    /**
     * Host metrics (metrics.push) every this many seconds; absent: 60; null: no periodic metrics (the one-off reports of evictions and recoveries still go). No maximum: an agent waits intervals longer than its timers hold (Node.js: 24.8 days) in steps.
     */
    metrics_interval_secs?: number | null;
    probe_concurrency: number;
    log_sources: LogSourceConfig[];
}
/**
 * One log source the agent should tail.
 */
export interface LogSourceConfig {
    kind: 'journald' | 'file' | 'docker' | 'custom';
    path?: string;
    filter?: string | null;
    labels?: {
        [k: string]: string;
    };
    /**
     * kind file: where a file never seen before (no stored position) is first read from: "beginning" (default) reads what it already holds, "end" only what is written from now on. A file with a stored position always resumes there.
     */
    start_at?: 'beginning' | 'end';
    [k: string]: unknown;
}
/**
 * agent.shutdown params: the server announces a planned disconnect.
 *
 * Schema: `schemas/agent.shutdown.params.json`
 */
export interface AgentShutdownParams {
    reason: 'ServerReload' | 'Revoked' | 'Decommission';
    drain_seconds: number;
}
/**
 * config.update params: hot-reload of AgentConfig, optionally staged with apply_after.
 *
 * Schema: `schemas/config.update.params.json`
 */
export interface ConfigUpdateParams {
    apply_after?: string | null;
    config: AgentConfig;
}
/**
 * One parsed log entry inside logs.push. seq is the agent-assigned sequence number (contiguous inside a batch, never reused).
 *
 * Schema: `schemas/defs.json#/$defs/LogBatchEntry`
 */
export interface LogBatchEntry {
    seq: number;
    ts: string;
    severity: Severity;
    facility?: string | null;
    app_name?: string | null;
    process_id?: string | null;
    message: string;
    source: LogSource;
    metadata?: {
        [k: string]: unknown;
    } | null;
}
/**
 * One metric sample inside metrics.push.
 *
 * Schema: `schemas/defs.json#/$defs/MetricSample`
 */
export interface MetricSample {
    name: string;
    value: number;
    labels?: {
        [k: string]: string;
    };
}
/**
 * Result of a probe: the probe-specific output plus process details. Returned as the result of probe.request (logically "probe.response").
 *
 * Schema: `schemas/defs.json#/$defs/ProbeOutput`
 */
export interface ProbeOutput {
    output: unknown;
    exit_code?: number | null;
    stderr?: string | null;
    duration_ms: number;
}
/**
 * -32001 AuthFailed (e.g. reason token_hash_mismatch). The reason never reveals whether the host exists.
 *
 * Schema: `schemas/error-data.json#/$defs/AuthFailedData`
 */
export interface AuthFailedData {
    reason: string;
    [k: string]: unknown;
}
/**
 * -32002 TokenRevoked.
 *
 * Schema: `schemas/error-data.json#/$defs/TokenRevokedData`
 */
export interface TokenRevokedData {
    reason?: string;
    [k: string]: unknown;
}
/**
 * -32003 AgentVersionUnsupported. data carries required_protocol_version and current for a protocol mismatch; for an agent_version below the floor min_agent_version and agent_version are given.
 *
 * Schema: `schemas/error-data.json#/$defs/AgentVersionUnsupportedData`
 */
export interface AgentVersionUnsupportedData {
    required_protocol_version?: number;
    current?: number;
    min_agent_version?: string;
    agent_version?: string;
    [k: string]: unknown;
}
/**
 * -32004 UnknownHost: the session's host row no longer exists.
 *
 * Schema: `schemas/error-data.json#/$defs/UnknownHostData`
 */
export interface UnknownHostData {
    host_id?: string;
    [k: string]: unknown;
}
/**
 * -32005 TokenRotationRequired: the previous token's grace window is over; re-enroll (`agent issue --host-id`).
 *
 * Schema: `schemas/error-data.json#/$defs/TokenRotationRequiredData`
 */
export interface TokenRotationRequiredData {
    reason?: string;
    [k: string]: unknown;
}
/**
 * -32007 BufferOverflow: committing the batch failed; nothing of it was stored. Resend after retry_after_ms.
 *
 * Schema: `schemas/error-data.json#/$defs/BufferOverflowData`
 */
export interface BufferOverflowData {
    retry_after_ms?: number;
    reason?: string;
    [k: string]: unknown;
}
/**
 * -32008 PayloadTooLarge: more entries than the server's cap.
 *
 * Schema: `schemas/error-data.json#/$defs/PayloadTooLargeData`
 */
export interface PayloadTooLargeData {
    max_entries?: number;
    received?: number;
    [k: string]: unknown;
}
/**
 * -32010 ProbeUnavailable.
 *
 * Schema: `schemas/error-data.json#/$defs/ProbeUnavailableData`
 */
export interface ProbeUnavailableData {
    probe?: string;
    [k: string]: unknown;
}
/**
 * -32011 ProbeExecutionFailed: data.stderr and data.exit_code are populated.
 *
 * Schema: `schemas/error-data.json#/$defs/ProbeExecutionFailedData`
 */
export interface ProbeExecutionFailedData {
    stderr: string | null;
    exit_code: number | null;
    probe?: string;
    [k: string]: unknown;
}
/**
 * -32012 ProbeTimeout (PROTOCOL.md#proberequest).
 *
 * Schema: `schemas/error-data.json#/$defs/ProbeTimeoutData`
 */
export interface ProbeTimeoutData {
    probe: string;
    timeout_ms: number;
    [k: string]: unknown;
}
/**
 * -32020 Backpressure and -32030 QuotaExceeded: pause for retry_after_ms before sending again (PROTOCOL.md#refusals-and-resends).
 *
 * Schema: `schemas/error-data.json#/$defs/RetryAfterData`
 */
export interface RetryAfterData {
    retry_after_ms: number;
    /**
     * Set on a -32020 that refuses a logs.push only because an earlier push of the session was refused: that push's seq_start. Send again from this seq (a push starting later is refused again); do not halve the send rate for this refusal (PROTOCOL.md#refusals-and-resends).
     */
    resend_from_seq?: number;
    /**
     * Why, in words (for logs).
     */
    reason?: string;
    [k: string]: unknown;
}
/**
 * -32602 InvalidParams: which parts of params failed and why. path is a JSON Pointer into params.
 *
 * Schema: `schemas/error-data.json#/$defs/InvalidParamsData`
 */
export interface InvalidParamsData {
    method?: string;
    errors: InvalidParamsIssue[];
    [k: string]: unknown;
}
export interface InvalidParamsIssue {
    path: string;
    message: string;
    keyword?: string;
    [k: string]: unknown;
}
/**
 * A request: has an id and expects exactly one response with the same id.
 *
 * Schema: `schemas/jsonrpc.json#/$defs/JsonRpcRequest`
 */
export interface JsonRpcRequest {
    jsonrpc: '2.0';
    id: JsonRpcId;
    method: string;
    params?: {
        [k: string]: unknown;
    } | unknown[];
}
/**
 * A notification: no id, never answered.
 *
 * Schema: `schemas/jsonrpc.json#/$defs/JsonRpcNotification`
 */
export interface JsonRpcNotification {
    jsonrpc: '2.0';
    method: string;
    params?: {
        [k: string]: unknown;
    } | unknown[];
}
/**
 * Schema: `schemas/jsonrpc.json#/$defs/JsonRpcSuccessResponse`
 */
export interface JsonRpcSuccessResponse {
    jsonrpc: '2.0';
    id: JsonRpcId;
    result: unknown;
}
/**
 * An error response. id is null when the request's id could not be read (parse error, invalid request).
 *
 * Schema: `schemas/jsonrpc.json#/$defs/JsonRpcErrorResponse`
 */
export interface JsonRpcErrorResponse {
    jsonrpc: '2.0';
    id: JsonRpcId | null;
    error: JsonRpcErrorObject;
}
/**
 * Schema: `schemas/jsonrpc.json#/$defs/JsonRpcErrorObject`
 */
export interface JsonRpcErrorObject {
    code: number;
    message: string;
    data?: unknown;
}
/**
 * logs.push params: a contiguous batch of entries (entries[i].seq == seq_start + i).
 *
 * Schema: `schemas/logs.push.params.json`
 */
export interface LogsPushParams {
    seq_start: number;
    /**
     * @minItems 1
     * @maxItems 1000
     */
    entries: LogBatchEntry[];
}
/**
 * logs.push result: the ack. up_to_seq is the host's accepted_seq after the commit.
 *
 * Schema: `schemas/logs.push.result.json`
 */
export interface LogsPushResult {
    up_to_seq: number;
    received_at?: string;
}
/**
 * metrics.push params: per-host metric samples.
 *
 * Schema: `schemas/metrics.push.params.json`
 */
export interface MetricsPushParams {
    ts: string;
    /**
     * @minItems 1
     * @maxItems 512
     */
    samples: MetricSample[];
}
/**
 * metrics.push result.
 *
 * Schema: `schemas/metrics.push.result.json`
 */
export interface MetricsPushResult {
    accepted: number;
    dropped?: number;
}
/**
 * probe.request params: server-initiated probe invocation.
 *
 * Schema: `schemas/probe.request.params.json`
 */
export interface ProbeRequestParams {
    probe: string;
    args: unknown;
    timeout_ms: number;
}
/**
 * Args of exec.systemctl_status. The unit name is restricted so it can never be read as an option or a path.
 *
 * Schema: `schemas/probes/exec.systemctl_status.args.json`
 */
export interface ExecSystemctlStatusArgs {
    /**
     * systemd unit name, e.g. nginx.service.
     */
    unit: string;
}
/**
 * Output of exec.systemctl_status (active and substate are always present).
 *
 * Schema: `schemas/probes/exec.systemctl_status.output.json`
 */
export interface ExecSystemctlStatusOutput {
    /**
     * ActiveState is active.
     */
    active: boolean;
    /**
     * ActiveState, e.g. active, inactive, failed.
     */
    active_state?: string;
    /**
     * SubState, e.g. running, dead.
     */
    substate: string;
    /**
     * LoadState, e.g. loaded, not-found.
     */
    load_state?: string;
    /**
     * MainPID; null when 0.
     */
    main_pid?: number | null;
    /**
     * When the unit entered its active state.
     */
    since?: string | null;
}
/**
 * Args of fs.disk_usage: an absolute path without '..' segments.
 *
 * Schema: `schemas/probes/fs.disk_usage.args.json`
 */
export interface FsDiskUsageArgs {
    /**
     * Absolute path on the host.
     */
    path: string;
}
/**
 * Output of fs.disk_usage (statfs of the filesystem holding path).
 *
 * Schema: `schemas/probes/fs.disk_usage.output.json`
 */
export interface FsDiskUsageOutput {
    path: string;
    total_bytes: number;
    used_bytes: number;
    /**
     * Bytes available to unprivileged users.
     */
    free_bytes: number;
    used_percent: number;
    inodes_total?: number | null;
    inodes_used?: number | null;
    inodes_free?: number | null;
}
/**
 * Args of sys.uptime: none (an empty object).
 *
 * Schema: `schemas/probes/sys.uptime.args.json`
 */
export interface SysUptimeArgs {
}
/**
 * Output of sys.uptime (/proc/uptime, /proc/stat btime and /proc/loadavg on Linux).
 *
 * Schema: `schemas/probes/sys.uptime.output.json`
 */
export interface SysUptimeOutput {
    /**
     * Seconds since boot (first field of /proc/uptime).
     */
    uptime_secs: number;
    /**
     * When the host booted (UTC): /proc/stat btime, else now minus uptime.
     */
    boot_time: string;
    load_average?: SysLoadAverage;
}
/**
 * 1, 5 and 15 minute load averages (/proc/loadavg), when available.
 */
export interface SysLoadAverage {
    one: number;
    five: number;
    fifteen: number;
}
/**
 * Args of sys.os_release: none (an empty object).
 *
 * Schema: `schemas/probes/sys.os_release.args.json`
 */
export interface SysOsReleaseArgs {
}
/**
 * Output of sys.os_release: the host's os-release(5) file (/etc/os-release, else /usr/lib/os-release). id, name and pretty_name carry os-release(5)'s defaults (linux, Linux, Linux) when the file omits them.
 *
 * Schema: `schemas/probes/sys.os_release.output.json`
 */
export interface SysOsReleaseOutput {
    /**
     * The file that was read.
     */
    source: string;
    /**
     * ID, e.g. debian.
     */
    id: string;
    /**
     * ID_LIKE split on spaces.
     */
    id_like?: string[];
    /**
     * NAME, e.g. Debian GNU/Linux.
     */
    name: string;
    /**
     * PRETTY_NAME.
     */
    pretty_name: string;
    /**
     * VERSION.
     */
    version?: string;
    /**
     * VERSION_ID, e.g. 12.
     */
    version_id?: string;
    /**
     * VERSION_CODENAME, e.g. bookworm.
     */
    version_codename?: string;
    /**
     * BUILD_ID (rolling distributions).
     */
    build_id?: string;
    /**
     * Every KEY=value assignment of the file, unquoted, by key.
     */
    fields: {
        [k: string]: string;
    };
}
/**
 * Args of proc.top: which resource to rank by (default cpu) and how many processes to return (default 10).
 *
 * Schema: `schemas/probes/proc.top.args.json`
 */
export interface ProcTopArgs {
    /**
     * Rank by CPU use over the sampling window, or by resident memory. Default cpu.
     */
    by?: 'cpu' | 'memory';
    /**
     * Number of processes returned. Default 10.
     */
    limit?: number;
}
/**
 * Output of proc.top: the top processes from /proc/<pid>/stat and /proc/<pid>/status, sampled twice sample_ms apart. cpu_percent is CPU time used in that window over its length (100 = one full core, as top shows it; can exceed 100 on several cores).
 *
 * Schema: `schemas/probes/proc.top.output.json`
 */
export interface ProcTopOutput {
    by: 'cpu' | 'memory';
    /**
     * Length of the CPU sampling window.
     */
    sample_ms: number;
    /**
     * Processes seen in both samples.
     */
    total_processes: number;
    /**
     * @maxItems 100
     */
    processes: ProcTopProcess[];
}
export interface ProcTopProcess {
    pid: number;
    ppid?: number;
    /**
     * comm (the executable name as the kernel keeps it, at most 15 bytes on Linux).
     */
    command: string;
    /**
     * Process state letter (R, S, D, Z, T, I, ...).
     */
    state?: string;
    cpu_percent: number;
    /**
     * Resident set size (VmRSS); 0 for kernel threads.
     */
    mem_rss_bytes: number;
    /**
     * Real user id.
     */
    uid?: number;
    /**
     * User name of uid, when /etc/passwd names it.
     */
    user?: string;
}
/**
 * Args of net.listening_sockets: none (an empty object).
 *
 * Schema: `schemas/probes/net.listening_sockets.args.json`
 */
export interface NetListeningSocketsArgs {
}
/**
 * Output of net.listening_sockets: TCP sockets in LISTEN state and unconnected UDP sockets, from /proc/net/tcp, tcp6, udp and udp6. pid is found by matching socket inodes in /proc/<pid>/fd; it is null when not visible to the agent (other users' processes without privileges).
 *
 * Schema: `schemas/probes/net.listening_sockets.output.json`
 */
export interface NetListeningSocketsOutput {
    /**
     * @maxItems 4096
     */
    sockets: ListeningSocket[];
    /**
     * More than 4096 sockets were found; the first 4096 (by protocol, then port) are returned.
     */
    truncated: boolean;
}
export interface ListeningSocket {
    protocol: 'tcp' | 'tcp6' | 'udp' | 'udp6';
    /**
     * Bound address: 0.0.0.0 or :: for all addresses; IPv6 in RFC 5952 form.
     */
    local_address: string;
    port: number;
    inode?: number;
    uid?: number;
    /**
     * Owning process, null when unknown.
     */
    pid?: number | null;
    /**
     * comm of pid, when pid is known.
     */
    command?: string;
}
/**
 * Args of journal.tail: the last `lines` journal entries of one systemd unit (journalctl -u UNIT -n LINES --output=json). The unit name is restricted as for exec.systemctl_status so it can never be read as an option, a match or a path.
 *
 * Schema: `schemas/probes/journal.tail.args.json`
 */
export interface JournalTailArgs {
    /**
     * systemd unit name, e.g. nginx.service.
     */
    unit: string;
    /**
     * Number of entries. Default 100.
     */
    lines?: number;
}
/**
 * Output of journal.tail: entries oldest first. A message longer than 65536 characters is cut; when the entries together exceed 512 KiB the oldest are left out. truncated says either happened.
 *
 * Schema: `schemas/probes/journal.tail.output.json`
 */
export interface JournalTailOutput {
    unit: string;
    /**
     * @maxItems 1000
     */
    entries: JournalTailEntry[];
    truncated: boolean;
}
export interface JournalTailEntry {
    /**
     * __REALTIME_TIMESTAMP (UTC, microseconds).
     */
    ts: string;
    /**
     * MESSAGE (binary messages decoded as UTF-8 with replacement).
     */
    message: string;
    /**
     * PRIORITY (0 emerg .. 7 debug).
     */
    priority?: number;
    /**
     * SYSLOG_IDENTIFIER.
     */
    identifier?: string;
    /**
     * _PID.
     */
    pid?: number;
}
/**
 * Args of file.tail: the last `lines` lines of a file. The path must be absolute with no '..' segment or NUL, and (checked by the agent after resolving symlinks) inside one of the agent's configured allowed paths.
 *
 * Schema: `schemas/probes/file.tail.args.json`
 */
export interface FileTailArgs {
    /**
     * Absolute path of a regular file.
     */
    path: string;
    /**
     * Number of lines. Default 100.
     */
    lines?: number;
}
/**
 * Output of file.tail: the last lines of the file, oldest first, without their line terminators (a final line without a newline is included). Invalid UTF-8 is replaced with U+FFFD. At most 512 KiB of the file's end is read and a line longer than 65536 characters is cut; truncated says that fewer lines than asked for were returned although the file has more, or that a line was cut.
 *
 * Schema: `schemas/probes/file.tail.output.json`
 */
export interface FileTailOutput {
    /**
     * The resolved path (symlinks followed) that was read.
     */
    path: string;
    /**
     * @maxItems 1000
     */
    lines: string[];
    truncated: boolean;
    /**
     * File size when read.
     */
    size_bytes?: number;
}
/**
 * probe.request result (the logical probe.response): a ProbeOutput.
 *
 * Schema: `schemas/probe.request.result.json`
 */
export type ProbeRequestResult = ProbeOutput;
