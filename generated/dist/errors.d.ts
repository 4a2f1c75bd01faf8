/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import { RpcError, type RpcErrorObject } from './runtime/errors.js';
import type * as T from './types.js';
/**
 * Error codes of the protocol (PROTOCOL.md, "Error codes").
 */
export declare const ErrorCode: {
    readonly ParseError: -32700;
    readonly InvalidRequest: -32600;
    readonly MethodNotFound: -32601;
    readonly InvalidParams: -32602;
    readonly InternalError: -32603;
    readonly AuthRequired: -32000;
    readonly AuthFailed: -32001;
    readonly TokenRevoked: -32002;
    readonly AgentVersionUnsupported: -32003;
    readonly UnknownHost: -32004;
    readonly TokenRotationRequired: -32005;
    readonly BufferOverflow: -32007;
    readonly PayloadTooLarge: -32008;
    readonly ProbeUnavailable: -32010;
    readonly ProbeExecutionFailed: -32011;
    readonly ProbeTimeout: -32012;
    readonly Backpressure: -32020;
    readonly QuotaExceeded: -32030;
};
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
/**
 * One row of the error table.
 */
export interface ErrorInfo {
    readonly code: ErrorCode;
    readonly name: keyof typeof ErrorCode;
    readonly direction: 'server' | 'agent' | 'either';
    readonly meaning: string;
    /** WebSocket close code that follows this error, when it ends the connection. */
    readonly closeCode?: number;
    /** Name of the error.data type, when the contract defines one. */
    readonly dataType?: string;
}
export declare const ERROR_TABLE: readonly ErrorInfo[];
/**
 * -32700 ParseError (server replies): Malformed JSON in the frame.
 */
export declare class ParseError extends RpcError<unknown> {
    static readonly code = -32700;
    constructor(data?: unknown, message?: string);
}
/**
 * -32600 InvalidRequest (server replies): Envelope shape wrong (e.g. top-level array, missing jsonrpc).
 */
export declare class InvalidRequestError extends RpcError<unknown> {
    static readonly code = -32600;
    constructor(data?: unknown, message?: string);
}
/**
 * -32601 MethodNotFound (either side): Method name unknown to the receiver.
 */
export declare class MethodNotFoundError extends RpcError<unknown> {
    static readonly code = -32601;
    constructor(data?: unknown, message?: string);
}
/**
 * -32602 InvalidParams (either side): params failed schema validation.
 */
export declare class InvalidParamsError extends RpcError<T.InvalidParamsData> {
    static readonly code = -32602;
    constructor(data: T.InvalidParamsData, message?: string);
}
/**
 * -32603 InternalError (either side): Unhandled exception on the receiver.
 */
export declare class InternalError extends RpcError<unknown> {
    static readonly code = -32603;
    constructor(data?: unknown, message?: string);
}
/**
 * -32000 AuthRequired (server replies): A non-agent.hello frame arrived on an unauthenticated socket.
 * The connection is then closed with 4001.
 */
export declare class AuthRequiredError extends RpcError<unknown> {
    static readonly code = -32000;
    constructor(data?: unknown, message?: string);
}
/**
 * -32001 AuthFailed (server replies): Token mismatch against agents.token_hash / token_hash_prev for the given host.
 * The connection is then closed with 4001.
 */
export declare class AuthFailedError extends RpcError<T.AuthFailedData> {
    static readonly code = -32001;
    constructor(data: T.AuthFailedData, message?: string);
}
/**
 * -32002 TokenRevoked (server replies): Both token hashes NULL and connection_state = 'Revoked'.
 * The connection is then closed with 4002.
 */
export declare class TokenRevokedError extends RpcError<T.TokenRevokedData> {
    static readonly code = -32002;
    constructor(data?: T.TokenRevokedData, message?: string);
}
/**
 * -32003 AgentVersionUnsupported (server replies): agent_version < min_agent_version or protocol_version != 1.
 * The connection is then closed with 4001.
 */
export declare class AgentVersionUnsupportedError extends RpcError<T.AgentVersionUnsupportedData> {
    static readonly code = -32003;
    constructor(data?: T.AgentVersionUnsupportedData, message?: string);
}
/**
 * -32004 UnknownHost (server replies): Supplied host_id is not registered in agents.
 */
export declare class UnknownHostError extends RpcError<T.UnknownHostData> {
    static readonly code = -32004;
    constructor(data?: T.UnknownHostData, message?: string);
}
/**
 * -32005 TokenRotationRequired (server replies): Token matches token_hash_prev only; agent SHOULD re-enroll before grace ends.
 * The connection is then closed with 4001.
 */
export declare class TokenRotationRequiredError extends RpcError<T.TokenRotationRequiredData> {
    static readonly code = -32005;
    constructor(data?: T.TokenRotationRequiredData, message?: string);
}
/**
 * -32007 BufferOverflow (server replies): Server-side ingest queue is saturated and the batch was dropped.
 */
export declare class BufferOverflowError extends RpcError<T.BufferOverflowData> {
    static readonly code = -32007;
    constructor(data?: T.BufferOverflowData, message?: string);
}
/**
 * -32008 PayloadTooLarge (server replies): Frame within 1 MiB but entries.length / samples.length exceeded the cap.
 */
export declare class PayloadTooLargeError extends RpcError<T.PayloadTooLargeData> {
    static readonly code = -32008;
    constructor(data?: T.PayloadTooLargeData, message?: string);
}
/**
 * -32010 ProbeUnavailable (agent replies): Probe not in agent's compiled-in registry / supported_probes.
 */
export declare class ProbeUnavailableError extends RpcError<T.ProbeUnavailableData> {
    static readonly code = -32010;
    constructor(data?: T.ProbeUnavailableData, message?: string);
}
/**
 * -32011 ProbeExecutionFailed (agent replies): Probe ran but reported failure; data.stderr and data.exit_code populated.
 */
export declare class ProbeExecutionFailedError extends RpcError<T.ProbeExecutionFailedData> {
    static readonly code = -32011;
    constructor(data: T.ProbeExecutionFailedData, message?: string);
}
/**
 * -32012 ProbeTimeout (agent replies): Probe exceeded timeout_ms budget.
 */
export declare class ProbeTimeoutError extends RpcError<T.ProbeTimeoutData> {
    static readonly code = -32012;
    constructor(data: T.ProbeTimeoutData, message?: string);
}
/**
 * -32020 Backpressure (server replies): Agent should slow logs.push. data.retry_after_ms advises the pause.
 */
export declare class BackpressureError extends RpcError<T.RetryAfterData> {
    static readonly code = -32020;
    constructor(data: T.RetryAfterData, message?: string);
}
/**
 * -32030 QuotaExceeded (server replies): Per-agent leaky-bucket rate limit exhausted.
 */
export declare class QuotaExceededError extends RpcError<T.RetryAfterData> {
    static readonly code = -32030;
    constructor(data: T.RetryAfterData, message?: string);
}
/**
 * @deprecated Renamed to {@link ParseError} in 1.3.0; this alias stays in every 1.x version and is removed in the next major version (2.0).
 */
export declare const ParseErrorError: typeof ParseError;
/**
 * @deprecated Renamed to {@link ParseError}; removed in the next major version (2.0).
 */
export type ParseErrorError = ParseError;
/**
 * @deprecated Renamed to {@link InternalError} in 1.3.0; this alias stays in every 1.x version and is removed in the next major version (2.0).
 */
export declare const InternalErrorError: typeof InternalError;
/**
 * @deprecated Renamed to {@link InternalError}; removed in the next major version (2.0).
 */
export type InternalErrorError = InternalError;
/**
 * Build the typed error instance for a wire error object (unknown codes give a plain RpcError).
 */
export declare function errorFromWire(error: RpcErrorObject): RpcError;
/**
 * The error-table row of a code, if the contract defines it.
 */
export declare function errorInfo(code: number): ErrorInfo | undefined;
