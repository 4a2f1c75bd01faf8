/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * Two kinds of error, as in vscode-jsonrpc:
 * - RpcError travels on the wire: a JSON-RPC error object (numeric contract code, message, data).
 * - PeerError describes local state (timeout, closed connection, invalid answer) and never does.
 *   Its `code` is a stable string.
 */
/** The JSON-RPC error object as it appears on the wire. */
export interface RpcErrorObject {
    code: number;
    message: string;
    data?: unknown;
}
/**
 * An error that is (or came) on the wire as a JSON-RPC error response. `message` reads
 * "<wire message> (<code>): <one-line summary of data>", e.g.
 * "Backpressure (-32020): retry_after_ms=500", so a log line or a test failure says what
 * happened; the wire keeps the short message (`wireMessage`, sent by toJSON).
 */
export declare class RpcError<D = unknown> extends Error {
    readonly code: number;
    readonly data: D | undefined;
    /** The error object's `message` as on the wire (the contract's error name). */
    readonly wireMessage: string;
    constructor(code: number, message: string, data?: D);
    /** The wire form: `{code, message, data?}`. */
    toJSON(): RpcErrorObject;
}
/**
 * One line (at most `max` characters) saying what error data holds: `key=value` for each
 * property (strings quoted when they contain spaces, nested values as compact JSON), a list
 * of validation issues as "path message; ...". Empty for no data.
 */
export declare function summarizeData(data: unknown, max?: number): string;
/** Stable codes of local (never sent) errors. */
export type PeerErrorCode = 'timeout' | 'closed' | 'invalid_result' | 'invalid_response' | 'invalid_params' | 'frame_too_large' | 'send_failed' | 'unknown_method';
/** A local error: never sent on the wire. */
export declare class PeerError extends Error {
    readonly code: PeerErrorCode;
    readonly details: Readonly<Record<string, unknown>> | undefined;
    constructor(code: PeerErrorCode, message: string, details?: Record<string, unknown>);
}
/**
 * One failing part of a value, as reported in -32602 InvalidParams data. A type alias (not an
 * interface) so that it is assignable to the generated InvalidParamsIssue.
 */
export type ValidationIssue = {
    /** JSON Pointer into the validated value ("" for the value itself). */
    path: string;
    message: string;
    keyword?: string;
};
/** The shape of an ajv error object this runtime needs (ajv's ErrorObject is compatible). */
export interface SchemaErrorLike {
    instancePath: string;
    keyword: string;
    message?: string;
    params?: Record<string, unknown>;
}
/** Turn validator errors into readable issues (path plus a message that names the problem). */
export declare function toIssues(errors: readonly SchemaErrorLike[] | null | undefined): ValidationIssue[];
/**
 * A one-line summary of issues, for error messages: "/entries/0/seq must be integer; ...".
 * Each distinct "path message" appears once (a schema with alternatives, such as the
 * envelope's oneOf, reports the same problem once per branch); at most `max` are shown and
 * "(+N more)" counts the distinct ones left out.
 */
export declare function describeIssues(issues: readonly ValidationIssue[], max?: number): string;
