/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * The JSON-RPC 2.0 peer: one per connection, transport-independent, written once for every
 * method. Each received frame goes through one function (`receive`):
 *
 *   frame ─ binary? ─▶ close 1003
 *     │ text
 *     ▼
 *   over maxFrameBytes (UTF-8 bytes)? ─▶ close 1009, not parsed
 *     ▼
 *   JSON.parse ─ fails ─▶ -32700 (id null)
 *     ▼
 *   array? ─▶ -32600 (id null)            one message per frame, no batching
 *     ▼
 *   envelope validator ─ fails ─▶ -32600 (id if readable); a broken answer to a pending
 *     │                               request is not answered: that request fails (invalid_response)
 *     ▼
 *   response? ─▶ pending[id] ─▶ result validator ─▶ resolve / reject
 *     ▼ request or notification
 *   method table (this side's incoming methods) ─ unknown ─▶ -32601 (requests) / dropped
 *     ▼
 *   intercept hook (e.g. the server's "hello first" rule)
 *     ▼
 *   params validator ─ fails ─▶ -32602 with the failing paths / dropped for notifications
 *     ▼
 *   handler (called synchronously, in frame order) ─▶ result or RpcError
 *     ▼ result
 *   outgoing result check (validateOutgoing) ─ fails ─▶ -32603 and an invalid_outgoing_result event
 *     ▼
 *   response
 */
import { RpcError, type RpcErrorObject, type SchemaErrorLike, type ValidationIssue } from './errors.js';
import type { Frame, Transport } from './transport.js';
/** A compiled validator (ajv standalone): returns true when valid and sets `errors` otherwise. */
export interface Validator<T = unknown> {
    (value: unknown): value is T;
    errors?: readonly SchemaErrorLike[] | null;
}
export type Direction = 'agent_to_server' | 'server_to_agent';
export type MethodKind = 'request' | 'notification';
/** One method as the runtime needs it; the generated catalog provides these. */
export interface MethodSpec {
    readonly name: string;
    readonly direction: Direction;
    readonly kind: MethodKind;
    readonly validateParams: Validator;
    readonly validateResult?: Validator;
}
/** The methods one side may send: requests with params and result, notifications with params. */
export interface ProtocolSide {
    requests: Record<string, {
        params: unknown;
        result: unknown;
    }>;
    notifications: Record<string, unknown>;
}
export type RequestMethod<S extends ProtocolSide> = keyof S['requests'] & string;
export type NotificationMethod<S extends ProtocolSide> = keyof S['notifications'] & string;
export type ParamsOf<S extends ProtocolSide, M extends RequestMethod<S>> = S['requests'][M]['params'];
export type ResultOf<S extends ProtocolSide, M extends RequestMethod<S>> = S['requests'][M]['result'];
export type RpcId = number | string;
/** Context handed to handlers. */
export interface CallContext {
    readonly method: string;
    /** The request id; undefined for notifications. */
    readonly id: RpcId | undefined;
    /** Length of the frame, cheap (for logging and limits): UTF-16 code units of a `text` frame, bytes of a `utf8` one. */
    readonly frameLength: number;
}
export type RequestHandler<P, R> = (params: P, ctx: CallContext) => R | Promise<R>;
export type NotificationHandler<P> = (params: P, ctx: CallContext) => void;
/** Things a peer observed that were not answered by a normal result: for logs and metrics. */
export type PeerEvent = {
    type: 'binary_frame';
    byteLength: number;
}
/** A received text frame over the frame limit (maxFrameBytes): the peer closed the connection with 1009. */
 | {
    type: 'frame_too_large';
    byteLength: number;
    limit: number;
} | {
    type: 'parse_error';
    reason: string;
} | {
    type: 'invalid_request';
    id: RpcId | null;
    reason: string;
} | {
    type: 'unknown_method';
    method: string;
    id: RpcId | undefined;
} | {
    type: 'invalid_params';
    method: string;
    id: RpcId | undefined;
    issues: ValidationIssue[];
} | {
    type: 'notification_dropped';
    method: string;
    reason: string;
} | {
    type: 'unknown_response';
    id: RpcId | null;
} | {
    type: 'invalid_result';
    method: string;
    id: RpcId;
    issues: ValidationIssue[];
} | {
    type: 'handler_error';
    method: string;
    id: RpcId | undefined;
    error: unknown;
}
/** This side's handler returned a result that fails the method's result schema: -32603 was sent instead. */
 | {
    type: 'invalid_outgoing_result';
    method: string;
    id: RpcId;
    issues: ValidationIssue[];
} | {
    type: 'rejected';
    method: string;
    id: RpcId | undefined;
    code: number;
};
/** A call as seen by the intercept hook, before params validation. */
export interface IncomingCall {
    readonly method: string;
    readonly id: RpcId | undefined;
    readonly params: unknown;
    readonly frameLength: number;
}
export interface PeerOptions {
    /** Every method of the protocol (the generated catalog). */
    readonly methods: readonly MethodSpec[];
    /** Which side this peer is: it sends methods of this direction and receives the other. */
    readonly side: 'agent' | 'server';
    /** Validator of the JSON-RPC envelope (generated). */
    readonly validateEnvelope: Validator;
    /** Default timeout of outgoing requests in ms (default 30 000). 0 disables. */
    readonly requestTimeoutMs?: number;
    /**
     * Validate what this side sends against the contract: request and notification params
     * (an invalid one is not sent: PeerError 'invalid_params') and handler results (an invalid
     * one is answered with -32603 InternalError and reported as an 'invalid_outgoing_result'
     * event, so a bad probe output fails at the sender). Default: on, except when
     * NODE_ENV=production (then pass true to keep it).
     */
    readonly validateOutgoing?: boolean;
    /**
     * A further check of an outgoing result that needs the request's params (the generated
     * agent peer checks a probe.request result's `output` against that probe's output schema).
     * Returns the issues, or undefined when the result is fine. Runs when validateOutgoing is on.
     */
    readonly checkOutgoingResult?: (method: string, params: unknown, result: unknown) => ValidationIssue[] | undefined;
    /**
     * Largest frame, in UTF-8 bytes, in either direction (default 1 MiB, the contract's
     * max_frame_bytes). A larger outgoing message is not sent (PeerError 'frame_too_large'); a
     * larger incoming text frame is not parsed: the peer closes the connection with 1009 (Message
     * Too Big, PROTOCOL.md) and reports a 'frame_too_large' event, whatever the transport (a
     * WebSocket library's own limit, such as ws's maxPayload, may close it before).
     */
    readonly maxFrameBytes?: number;
    /** Build the error instance for an error response (generated: a typed class per code). */
    readonly errorFactory?: (error: RpcErrorObject) => RpcError;
    /**
     * Called for each incoming request or notification after the method is known and before
     * params are validated. Return an RpcError to answer it with (requests) or drop it
     * (notifications), 'close' handling is up to the hook. Return undefined to proceed.
     */
    readonly intercept?: (call: IncomingCall) => RpcError | undefined;
    /** Observer of protocol events (for logging and metrics). */
    readonly onEvent?: (event: PeerEvent) => void;
}
/**
 * What the peer needs of an AbortSignal (declared here so the package's types need neither
 * the DOM lib nor @types/node; a real AbortSignal fits).
 */
export interface AbortSignalLike {
    readonly aborted: boolean;
    addEventListener(type: 'abort', listener: () => void, options?: {
        once?: boolean;
    }): void;
}
export interface RequestOptions {
    /** Override the peer's default timeout (ms); 0 disables. */
    timeoutMs?: number;
    /** Abort waiting (the request stays sent; its late answer is dropped). */
    signal?: AbortSignalLike;
}
export declare class Peer<Out extends ProtocolSide, In extends ProtocolSide> {
    private readonly transport;
    private readonly options;
    private readonly outgoing;
    private readonly incoming;
    private readonly requestHandlers;
    private readonly notificationHandlers;
    private readonly pending;
    /** Ids of incoming requests whose (asynchronous) answer is not sent yet. */
    private readonly answering;
    private readonly closeListeners;
    private nextId;
    private closedWith;
    /** Whether outgoing params and results are validated (PeerOptions.validateOutgoing). */
    readonly validatesOutgoing: boolean;
    constructor(transport: Transport, options: PeerOptions);
    /** True once the transport reported its close. */
    get closed(): boolean;
    /** Number of outgoing requests still waiting for a response. */
    get pendingCount(): number;
    /** Send a request and wait for its typed result. Rejects with RpcError (the peer's answer) or PeerError (local). */
    request<M extends RequestMethod<Out>>(method: M, params: ParamsOf<Out, M>, opts?: RequestOptions): Promise<ResultOf<Out, M>>;
    /**
     * Send a request whose params are already JSON text — e.g. log entries a buffer stores as
     * their final JSON — without parsing and re-serializing them, and without outgoing
     * validation: the caller vouches that `paramsJson` is valid params of `method` (the other
     * side still validates it). The result is validated as usual.
     */
    requestSerialized<M extends RequestMethod<Out>>(method: M, paramsJson: string, opts?: RequestOptions): Promise<ResultOf<Out, M>>;
    /** Registers the pending entry (timeout, abort) and sends the frame `frameFor(id)`. */
    private startRequest;
    /** Send a notification. There is no result to wait for. Throws PeerError when it cannot be sent. */
    notify<M extends NotificationMethod<Out>>(method: M, params: Out['notifications'][M]): void;
    /** Handle an incoming request. The handler's return value (or thrown RpcError) is the response. */
    onRequest<M extends RequestMethod<In>>(method: M, handler: RequestHandler<ParamsOf<In, M>, ResultOf<In, M>>): void;
    /** Handle an incoming notification. */
    onNotification<M extends NotificationMethod<In>>(method: M, handler: NotificationHandler<In['notifications'][M]>): void;
    /** Called once when the connection closes (after pending requests were rejected). */
    onClose(listener: (code: number, reason: string) => void): void;
    /** Send an error response for a request id (for answers decided outside a handler). */
    sendError(id: RpcId | null, error: RpcError): void;
    /** Close the connection. Pending requests are rejected when the transport reports the close. */
    close(code?: number, reason?: string): void;
    /** The one entry point for received frames (see the diagram at the top of this file). */
    receive(frame: Frame): void;
    /** The answer to pending request `id` was not a valid response: the request fails (PeerError 'invalid_response'). */
    private failPending;
    private receiveResponse;
    private receiveCall;
    private answer;
    /** The one place where a thrown error becomes an error response. Only RpcErrors travel; anything else is -32603. */
    private answerError;
    private handleClose;
    private sendText;
    private trySend;
    private emit;
}
/** UTF-8 length of a string without allocating (works without Node's Buffer). */
export declare function utf8Length(text: string): number;
