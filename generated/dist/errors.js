/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import { RpcError } from './runtime/errors.js';
/**
 * Error codes of the protocol (PROTOCOL.md, "Error codes").
 */
export const ErrorCode = {
    ParseError: -32700,
    InvalidRequest: -32600,
    MethodNotFound: -32601,
    InvalidParams: -32602,
    InternalError: -32603,
    AuthRequired: -32000,
    AuthFailed: -32001,
    TokenRevoked: -32002,
    AgentVersionUnsupported: -32003,
    UnknownHost: -32004,
    TokenRotationRequired: -32005,
    BufferOverflow: -32007,
    PayloadTooLarge: -32008,
    ProbeUnavailable: -32010,
    ProbeExecutionFailed: -32011,
    ProbeTimeout: -32012,
    Backpressure: -32020,
    QuotaExceeded: -32030,
};
export const ERROR_TABLE = [
    { code: -32700, name: "ParseError", direction: "server", meaning: "Malformed JSON in the frame." },
    { code: -32600, name: "InvalidRequest", direction: "server", meaning: "Envelope shape wrong (e.g. top-level array, missing jsonrpc)." },
    { code: -32601, name: "MethodNotFound", direction: "either", meaning: "Method name unknown to the receiver." },
    { code: -32602, name: "InvalidParams", direction: "either", meaning: "params failed schema validation.", dataType: "InvalidParamsData" },
    { code: -32603, name: "InternalError", direction: "either", meaning: "Unhandled exception on the receiver." },
    { code: -32000, name: "AuthRequired", direction: "server", meaning: "A non-agent.hello frame arrived on an unauthenticated socket.", closeCode: 4001 },
    { code: -32001, name: "AuthFailed", direction: "server", meaning: "Token mismatch against agents.token_hash / token_hash_prev for the given host.", closeCode: 4001, dataType: "AuthFailedData" },
    { code: -32002, name: "TokenRevoked", direction: "server", meaning: "Both token hashes NULL and connection_state = 'Revoked'.", closeCode: 4002, dataType: "TokenRevokedData" },
    { code: -32003, name: "AgentVersionUnsupported", direction: "server", meaning: "agent_version < min_agent_version or protocol_version != 1.", closeCode: 4001, dataType: "AgentVersionUnsupportedData" },
    { code: -32004, name: "UnknownHost", direction: "server", meaning: "Supplied host_id is not registered in agents.", dataType: "UnknownHostData" },
    { code: -32005, name: "TokenRotationRequired", direction: "server", meaning: "Token matches token_hash_prev only; agent SHOULD re-enroll before grace ends.", closeCode: 4001, dataType: "TokenRotationRequiredData" },
    { code: -32007, name: "BufferOverflow", direction: "server", meaning: "Server-side ingest queue is saturated and the batch was dropped.", dataType: "BufferOverflowData" },
    { code: -32008, name: "PayloadTooLarge", direction: "server", meaning: "Frame within 1 MiB but entries.length / samples.length exceeded the cap.", dataType: "PayloadTooLargeData" },
    { code: -32010, name: "ProbeUnavailable", direction: "agent", meaning: "Probe not in agent's compiled-in registry / supported_probes.", dataType: "ProbeUnavailableData" },
    { code: -32011, name: "ProbeExecutionFailed", direction: "agent", meaning: "Probe ran but reported failure; data.stderr and data.exit_code populated.", dataType: "ProbeExecutionFailedData" },
    { code: -32012, name: "ProbeTimeout", direction: "agent", meaning: "Probe exceeded timeout_ms budget.", dataType: "ProbeTimeoutData" },
    { code: -32020, name: "Backpressure", direction: "server", meaning: "Agent should slow logs.push. data.retry_after_ms advises the pause.", dataType: "RetryAfterData" },
    { code: -32030, name: "QuotaExceeded", direction: "server", meaning: "Per-agent leaky-bucket rate limit exhausted.", dataType: "RetryAfterData" },
];
/**
 * -32700 ParseError (server replies): Malformed JSON in the frame.
 */
export class ParseError extends RpcError {
    static code = -32700;
    constructor(data, message = "ParseError") {
        super(-32700, message, data);
        this.name = "ParseError";
    }
}
/**
 * -32600 InvalidRequest (server replies): Envelope shape wrong (e.g. top-level array, missing jsonrpc).
 */
export class InvalidRequestError extends RpcError {
    static code = -32600;
    constructor(data, message = "InvalidRequest") {
        super(-32600, message, data);
        this.name = "InvalidRequestError";
    }
}
/**
 * -32601 MethodNotFound (either side): Method name unknown to the receiver.
 */
export class MethodNotFoundError extends RpcError {
    static code = -32601;
    constructor(data, message = "MethodNotFound") {
        super(-32601, message, data);
        this.name = "MethodNotFoundError";
    }
}
/**
 * -32602 InvalidParams (either side): params failed schema validation.
 */
export class InvalidParamsError extends RpcError {
    static code = -32602;
    constructor(data, message = "InvalidParams") {
        super(-32602, message, data);
        this.name = "InvalidParamsError";
    }
}
/**
 * -32603 InternalError (either side): Unhandled exception on the receiver.
 */
export class InternalError extends RpcError {
    static code = -32603;
    constructor(data, message = "InternalError") {
        super(-32603, message, data);
        this.name = "InternalError";
    }
}
/**
 * -32000 AuthRequired (server replies): A non-agent.hello frame arrived on an unauthenticated socket.
 * The connection is then closed with 4001.
 */
export class AuthRequiredError extends RpcError {
    static code = -32000;
    constructor(data, message = "AuthRequired") {
        super(-32000, message, data);
        this.name = "AuthRequiredError";
    }
}
/**
 * -32001 AuthFailed (server replies): Token mismatch against agents.token_hash / token_hash_prev for the given host.
 * The connection is then closed with 4001.
 */
export class AuthFailedError extends RpcError {
    static code = -32001;
    constructor(data, message = "AuthFailed") {
        super(-32001, message, data);
        this.name = "AuthFailedError";
    }
}
/**
 * -32002 TokenRevoked (server replies): Both token hashes NULL and connection_state = 'Revoked'.
 * The connection is then closed with 4002.
 */
export class TokenRevokedError extends RpcError {
    static code = -32002;
    constructor(data, message = "TokenRevoked") {
        super(-32002, message, data);
        this.name = "TokenRevokedError";
    }
}
/**
 * -32003 AgentVersionUnsupported (server replies): agent_version < min_agent_version or protocol_version != 1.
 * The connection is then closed with 4001.
 */
export class AgentVersionUnsupportedError extends RpcError {
    static code = -32003;
    constructor(data, message = "AgentVersionUnsupported") {
        super(-32003, message, data);
        this.name = "AgentVersionUnsupportedError";
    }
}
/**
 * -32004 UnknownHost (server replies): Supplied host_id is not registered in agents.
 */
export class UnknownHostError extends RpcError {
    static code = -32004;
    constructor(data, message = "UnknownHost") {
        super(-32004, message, data);
        this.name = "UnknownHostError";
    }
}
/**
 * -32005 TokenRotationRequired (server replies): Token matches token_hash_prev only; agent SHOULD re-enroll before grace ends.
 * The connection is then closed with 4001.
 */
export class TokenRotationRequiredError extends RpcError {
    static code = -32005;
    constructor(data, message = "TokenRotationRequired") {
        super(-32005, message, data);
        this.name = "TokenRotationRequiredError";
    }
}
/**
 * -32007 BufferOverflow (server replies): Server-side ingest queue is saturated and the batch was dropped.
 */
export class BufferOverflowError extends RpcError {
    static code = -32007;
    constructor(data, message = "BufferOverflow") {
        super(-32007, message, data);
        this.name = "BufferOverflowError";
    }
}
/**
 * -32008 PayloadTooLarge (server replies): Frame within 1 MiB but entries.length / samples.length exceeded the cap.
 */
export class PayloadTooLargeError extends RpcError {
    static code = -32008;
    constructor(data, message = "PayloadTooLarge") {
        super(-32008, message, data);
        this.name = "PayloadTooLargeError";
    }
}
/**
 * -32010 ProbeUnavailable (agent replies): Probe not in agent's compiled-in registry / supported_probes.
 */
export class ProbeUnavailableError extends RpcError {
    static code = -32010;
    constructor(data, message = "ProbeUnavailable") {
        super(-32010, message, data);
        this.name = "ProbeUnavailableError";
    }
}
/**
 * -32011 ProbeExecutionFailed (agent replies): Probe ran but reported failure; data.stderr and data.exit_code populated.
 */
export class ProbeExecutionFailedError extends RpcError {
    static code = -32011;
    constructor(data, message = "ProbeExecutionFailed") {
        super(-32011, message, data);
        this.name = "ProbeExecutionFailedError";
    }
}
/**
 * -32012 ProbeTimeout (agent replies): Probe exceeded timeout_ms budget.
 */
export class ProbeTimeoutError extends RpcError {
    static code = -32012;
    constructor(data, message = "ProbeTimeout") {
        super(-32012, message, data);
        this.name = "ProbeTimeoutError";
    }
}
/**
 * -32020 Backpressure (server replies): Agent should slow logs.push. data.retry_after_ms advises the pause.
 */
export class BackpressureError extends RpcError {
    static code = -32020;
    constructor(data, message = "Backpressure") {
        super(-32020, message, data);
        this.name = "BackpressureError";
    }
}
/**
 * -32030 QuotaExceeded (server replies): Per-agent leaky-bucket rate limit exhausted.
 */
export class QuotaExceededError extends RpcError {
    static code = -32030;
    constructor(data, message = "QuotaExceeded") {
        super(-32030, message, data);
        this.name = "QuotaExceededError";
    }
}
/**
 * @deprecated Renamed to {@link ParseError} in 1.3.0; this alias stays in every 1.x version and is removed in the next major version (2.0).
 */
export const ParseErrorError = ParseError;
/**
 * @deprecated Renamed to {@link InternalError} in 1.3.0; this alias stays in every 1.x version and is removed in the next major version (2.0).
 */
export const InternalErrorError = InternalError;
const CLASSES = {
    [-32700]: ParseError,
    [-32600]: InvalidRequestError,
    [-32601]: MethodNotFoundError,
    [-32602]: InvalidParamsError,
    [-32603]: InternalError,
    [-32000]: AuthRequiredError,
    [-32001]: AuthFailedError,
    [-32002]: TokenRevokedError,
    [-32003]: AgentVersionUnsupportedError,
    [-32004]: UnknownHostError,
    [-32005]: TokenRotationRequiredError,
    [-32007]: BufferOverflowError,
    [-32008]: PayloadTooLargeError,
    [-32010]: ProbeUnavailableError,
    [-32011]: ProbeExecutionFailedError,
    [-32012]: ProbeTimeoutError,
    [-32020]: BackpressureError,
    [-32030]: QuotaExceededError,
};
/**
 * Build the typed error instance for a wire error object (unknown codes give a plain RpcError).
 */
export function errorFromWire(error) {
    const Cls = CLASSES[error.code];
    return Cls ? new Cls(error.data, error.message) : new RpcError(error.code, error.message, error.data);
}
/**
 * The error-table row of a code, if the contract defines it.
 */
export function errorInfo(code) {
    return ERROR_TABLE.find((e) => e.code === code);
}
