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
import { PeerError, RpcError, describeIssues, toIssues, type RpcErrorObject, type SchemaErrorLike, type ValidationIssue } from './errors.js';
import type { Frame, Transport } from './transport.js';
import { parseJsonFrame } from './frame-json.js';

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
  requests: Record<string, { params: unknown; result: unknown }>;
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
export type PeerEvent =
  | { type: 'binary_frame'; byteLength: number }
  /** A received text frame over the frame limit (maxFrameBytes): the peer closed the connection with 1009. */
  | { type: 'frame_too_large'; byteLength: number; limit: number }
  | { type: 'parse_error'; reason: string }
  | { type: 'invalid_request'; id: RpcId | null; reason: string }
  | { type: 'unknown_method'; method: string; id: RpcId | undefined }
  | { type: 'invalid_params'; method: string; id: RpcId | undefined; issues: ValidationIssue[] }
  | { type: 'notification_dropped'; method: string; reason: string }
  | { type: 'unknown_response'; id: RpcId | null }
  | { type: 'invalid_result'; method: string; id: RpcId; issues: ValidationIssue[] }
  | { type: 'handler_error'; method: string; id: RpcId | undefined; error: unknown }
  /** This side's handler returned a result that fails the method's result schema: -32603 was sent instead. */
  | { type: 'invalid_outgoing_result'; method: string; id: RpcId; issues: ValidationIssue[] }
  | { type: 'rejected'; method: string; id: RpcId | undefined; code: number };

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

interface Pending {
  readonly method: string;
  readonly validateResult: Validator | undefined;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * What the peer needs of an AbortSignal (declared here so the package's types need neither
 * the DOM lib nor @types/node; a real AbortSignal fits).
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
}

export interface RequestOptions {
  /** Override the peer's default timeout (ms); 0 disables. */
  timeoutMs?: number;
  /** Abort waiting (the request stays sent; its late answer is dropped). */
  signal?: AbortSignalLike;
}

const MAX_FRAME_BYTES = 1_048_576;
const hasOwn = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

export class Peer<Out extends ProtocolSide, In extends ProtocolSide> {
  private readonly transport: Transport;
  private readonly options: PeerOptions;
  private readonly outgoing = new Map<string, MethodSpec>();
  private readonly incoming = new Map<string, MethodSpec>();
  private readonly requestHandlers = new Map<string, RequestHandler<unknown, unknown>>();
  private readonly notificationHandlers = new Map<string, NotificationHandler<unknown>>();
  private readonly pending = new Map<RpcId, Pending>();
  /** Ids of incoming requests whose (asynchronous) answer is not sent yet. */
  private readonly answering = new Set<RpcId>();
  private readonly closeListeners: Array<(code: number, reason: string) => void> = [];
  private nextId = 1;
  private closedWith: { code: number; reason: string } | undefined;

  /** Whether outgoing params and results are validated (PeerOptions.validateOutgoing). */
  readonly validatesOutgoing: boolean;

  constructor(transport: Transport, options: PeerOptions) {
    this.transport = transport;
    this.options = options;
    this.validatesOutgoing = options.validateOutgoing ?? !isProductionEnv();
    const sends: Direction = options.side === 'agent' ? 'agent_to_server' : 'server_to_agent';
    for (const m of options.methods) (m.direction === sends ? this.outgoing : this.incoming).set(m.name, m);
    transport.onFrame((frame) => this.receive(frame));
    transport.onClose((code, reason) => this.handleClose(code, reason));
  }

  /** True once the transport reported its close. */
  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Number of outgoing requests still waiting for a response. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Send a request and wait for its typed result. Rejects with RpcError (the peer's answer) or PeerError (local). */
  request<M extends RequestMethod<Out>>(method: M, params: ParamsOf<Out, M>, opts: RequestOptions = {}): Promise<ResultOf<Out, M>> {
    const spec = this.outgoing.get(method);
    if (spec && spec.kind === 'request' && this.validatesOutgoing && !spec.validateParams(params)) {
      const issues = toIssues(spec.validateParams.errors);
      return Promise.reject(new PeerError('invalid_params', `${method} params are invalid: ${describeIssues(issues)}`, { issues }));
    }
    return this.startRequest(method, (id) => JSON.stringify({ jsonrpc: '2.0', id, method, params }), opts);
  }

  /**
   * Send a request whose params are already JSON text — e.g. log entries a buffer stores as
   * their final JSON — without parsing and re-serializing them, and without outgoing
   * validation: the caller vouches that `paramsJson` is valid params of `method` (the other
   * side still validates it). The result is validated as usual.
   */
  requestSerialized<M extends RequestMethod<Out>>(method: M, paramsJson: string, opts: RequestOptions = {}): Promise<ResultOf<Out, M>> {
    return this.startRequest(method, (id) => `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${paramsJson}}`, opts);
  }

  /** Registers the pending entry (timeout, abort) and sends the frame `frameFor(id)`. */
  private startRequest<R>(method: string, frameFor: (id: number) => string, opts: RequestOptions): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const spec = this.outgoing.get(method);
      if (!spec || spec.kind !== 'request') {
        reject(new PeerError('unknown_method', `${method} is not a request this side can send`));
        return;
      }
      if (this.closedWith) {
        reject(new PeerError('closed', `connection closed (${this.closedWith.code}) before ${method} was sent`));
        return;
      }
      if (opts.signal?.aborted) {
        reject(new PeerError('timeout', `${method} was abandoned by the caller before it was sent`));
        return;
      }
      const id = this.nextId++;
      const entry: Pending = {
        method,
        validateResult: spec.validateResult,
        resolve: resolve as (value: unknown) => void,
        reject,
        timer: undefined,
      };
      const timeoutMs = opts.timeoutMs ?? this.options.requestTimeoutMs ?? 30_000;
      if (timeoutMs > 0) {
        entry.timer = setTimeout(() => {
          if (this.pending.delete(id)) reject(new PeerError('timeout', `${method} got no response within ${timeoutMs} ms`, { id, timeoutMs }));
        }, timeoutMs);
      }
      opts.signal?.addEventListener(
        'abort',
        () => {
          if (this.pending.delete(id)) {
            if (entry.timer) clearTimeout(entry.timer);
            reject(new PeerError('timeout', `${method} was abandoned by the caller`, { id }));
          }
        },
        { once: true },
      );
      this.pending.set(id, entry);
      try {
        this.sendText(frameFor(id));
      } catch (err) {
        this.pending.delete(id);
        if (entry.timer) clearTimeout(entry.timer);
        reject(err instanceof PeerError ? err : new PeerError('send_failed', `could not send ${method}: ${(err as Error).message}`));
      }
    });
  }

  /** Send a notification. There is no result to wait for. Throws PeerError when it cannot be sent. */
  notify<M extends NotificationMethod<Out>>(method: M, params: Out['notifications'][M]): void {
    const spec = this.outgoing.get(method);
    if (!spec || spec.kind !== 'notification') throw new PeerError('unknown_method', `${method} is not a notification this side can send`);
    if (this.closedWith) throw new PeerError('closed', `connection closed (${this.closedWith.code}); ${method} not sent`);
    if (this.validatesOutgoing && !spec.validateParams(params)) {
      const issues = toIssues(spec.validateParams.errors);
      throw new PeerError('invalid_params', `${method} params are invalid: ${describeIssues(issues)}`, { issues });
    }
    this.sendText(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  /** Handle an incoming request. The handler's return value (or thrown RpcError) is the response. */
  onRequest<M extends RequestMethod<In>>(method: M, handler: RequestHandler<ParamsOf<In, M>, ResultOf<In, M>>): void {
    const spec = this.incoming.get(method);
    if (!spec || spec.kind !== 'request') throw new PeerError('unknown_method', `${method} is not a request this side receives`);
    this.requestHandlers.set(method, handler as RequestHandler<unknown, unknown>);
  }

  /** Handle an incoming notification. */
  onNotification<M extends NotificationMethod<In>>(method: M, handler: NotificationHandler<In['notifications'][M]>): void {
    const spec = this.incoming.get(method);
    if (!spec || spec.kind !== 'notification') throw new PeerError('unknown_method', `${method} is not a notification this side receives`);
    this.notificationHandlers.set(method, handler as NotificationHandler<unknown>);
  }

  /** Called once when the connection closes (after pending requests were rejected). */
  onClose(listener: (code: number, reason: string) => void): void {
    if (this.closedWith) listener(this.closedWith.code, this.closedWith.reason);
    else this.closeListeners.push(listener);
  }

  /** Send an error response for a request id (for answers decided outside a handler). */
  sendError(id: RpcId | null, error: RpcError): void {
    this.sendText(JSON.stringify({ jsonrpc: '2.0', id, error: error.toJSON() }));
  }

  /** Close the connection. Pending requests are rejected when the transport reports the close. */
  close(code = 1000, reason = ''): void {
    this.transport.close(code, reason);
  }

  // ───────────────────────────── receiving ─────────────────────────────

  /** The one entry point for received frames (see the diagram at the top of this file). */
  receive(frame: Frame): void {
    if (frame.kind === 'binary') {
      this.emit({ type: 'binary_frame', byteLength: frame.byteLength });
      this.transport.close(1003, 'binary frames are not supported in V1');
      return;
    }
    const limit = this.options.maxFrameBytes ?? MAX_FRAME_BYTES;
    const size = incomingSize(frame, limit);
    if (size > limit) {
      this.emit({ type: 'frame_too_large', byteLength: size, limit });
      this.transport.close(1009, `frame of ${size} bytes exceeds the ${limit}-byte limit`);
      return;
    }
    let msg: unknown;
    try {
      msg = frame.kind === 'utf8' ? parseJsonFrame(frame.bytes) : JSON.parse(frame.text);
    } catch (err) {
      const reason = (err as Error).message;
      this.emit({ type: 'parse_error', reason });
      this.trySend({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'ParseError', data: { reason: 'frame is not valid JSON' } } });
      return;
    }
    if (Array.isArray(msg)) {
      this.emit({ type: 'invalid_request', id: null, reason: 'top-level array' });
      this.trySend({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'InvalidRequest', data: { reason: 'batch arrays are not supported: send one JSON-RPC message per frame' } } });
      return;
    }
    // An integer id beyond ±(2^53 − 1) may have been read as another number (JSON.parse gives
    // 9007199254740992 for 9007199254740993): answering it would name an id the sender never
    // used. The contract's envelope refuses it; checked here too for an envelope validator that
    // does not (a fast path), so the answer is -32600 with id null either way.
    const unsafeId = hasUnsafeIntegerId(msg);
    if (unsafeId || !this.options.validateEnvelope(msg)) {
      const id = readableId(msg);
      const issues = unsafeId ? [{ path: '/id', message: `must be within ±${Number.MAX_SAFE_INTEGER}` }] : toIssues(this.options.validateEnvelope.errors);
      const reason = envelopeReason(msg);
      this.emit({ type: 'invalid_request', id, reason });
      // A broken response is never answered (that could loop between two peers); when it
      // answers a request of ours, that request fails now rather than at its timeout.
      if (!looksLikeResponse(msg)) this.trySend({ jsonrpc: '2.0', id, error: { code: -32600, message: 'InvalidRequest', data: { reason, errors: issues.slice(0, 5) } } });
      else if (id !== null) this.failPending(id, responseProblem(msg as Record<string, unknown>) ?? describeIssues(issues));
      return;
    }
    const m = msg as { id?: RpcId | null; method?: string; params?: unknown; result?: unknown; error?: RpcErrorObject };
    if (m.method === undefined) return this.receiveResponse(m as { id: RpcId | null; result?: unknown; error?: RpcErrorObject });
    this.receiveCall(m.method, hasOwn(m, 'id') ? (m.id as RpcId) : undefined, m.params, frame.kind === 'utf8' ? frame.bytes.length : frame.text.length);
  }

  /** The answer to pending request `id` was not a valid response: the request fails (PeerError 'invalid_response'). */
  private failPending(id: RpcId, problem: string): void {
    const entry = this.pending.get(id);
    if (!entry) return; // no request of ours: an invalid message like any other
    this.pending.delete(id);
    if (entry.timer) clearTimeout(entry.timer);
    entry.reject(new PeerError('invalid_response', `the answer to ${entry.method} is not a valid JSON-RPC response: ${problem}`, { id }));
  }

  private receiveResponse(m: { id: RpcId | null; result?: unknown; error?: RpcErrorObject }): void {
    const entry = m.id === null ? undefined : this.pending.get(m.id);
    if (!entry || m.id === null) {
      this.emit({ type: 'unknown_response', id: m.id });
      return;
    }
    this.pending.delete(m.id);
    if (entry.timer) clearTimeout(entry.timer);
    if (m.error !== undefined) {
      const factory = this.options.errorFactory;
      entry.reject(factory ? factory(m.error) : new RpcError(m.error.code, m.error.message, m.error.data));
      return;
    }
    if (entry.validateResult && !entry.validateResult(m.result)) {
      const issues = toIssues(entry.validateResult.errors);
      this.emit({ type: 'invalid_result', method: entry.method, id: m.id, issues });
      entry.reject(new PeerError('invalid_result', `${entry.method} result is invalid: ${describeIssues(issues)}`, { issues }));
      return;
    }
    entry.resolve(m.result);
  }

  private receiveCall(method: string, id: RpcId | undefined, params: unknown, frameLength: number): void {
    const isRequest = id !== undefined;
    // An id still in flight cannot name a second request: its answers could not be told apart.
    if (isRequest && this.answering.has(id)) {
      this.emit({ type: 'invalid_request', id, reason: `request id ${JSON.stringify(id)} is already in flight` });
      this.trySend({ jsonrpc: '2.0', id, error: { code: -32600, message: 'InvalidRequest', data: { reason: `id ${JSON.stringify(id)} belongs to a request still being answered; use a new id for every request` } } });
      return;
    }
    const spec = this.incoming.get(method);
    if (!spec) {
      this.emit({ type: 'unknown_method', method, id });
      if (isRequest) this.trySend({ jsonrpc: '2.0', id, error: { code: -32601, message: 'MethodNotFound', data: { method } } });
      return;
    }
    if (spec.kind === 'notification' && isRequest) {
      this.emit({ type: 'invalid_request', id, reason: `${method} is a notification but was sent with an id` });
      this.trySend({ jsonrpc: '2.0', id, error: { code: -32600, message: 'InvalidRequest', data: { reason: `${method} is a notification: send it without an id` } } });
      return;
    }
    if (spec.kind === 'request' && !isRequest) {
      this.emit({ type: 'notification_dropped', method, reason: `${method} is a request but was sent without an id` });
      return;
    }
    const ctx: CallContext = { method, id, frameLength };
    if (this.options.intercept) {
      const rejection = this.options.intercept({ method, id, params, frameLength });
      if (rejection) {
        this.emit({ type: 'rejected', method, id, code: rejection.code });
        if (isRequest) this.trySend({ jsonrpc: '2.0', id, error: rejection.toJSON() });
        return;
      }
      if (this.closedWith) return;
    }
    if (!spec.validateParams(params)) {
      const issues = toIssues(spec.validateParams.errors);
      this.emit({ type: 'invalid_params', method, id, issues });
      if (isRequest) {
        this.trySend({ jsonrpc: '2.0', id, error: { code: -32602, message: 'InvalidParams', data: { method, errors: issues.slice(0, 20) } } });
      }
      return;
    }
    if (!isRequest) {
      const handler = this.notificationHandlers.get(method);
      if (!handler) {
        this.emit({ type: 'notification_dropped', method, reason: 'no handler' });
        return;
      }
      try {
        handler(params, ctx);
      } catch (error) {
        this.emit({ type: 'handler_error', method, id, error });
      }
      return;
    }
    const handler = this.requestHandlers.get(method);
    if (!handler) {
      this.emit({ type: 'unknown_method', method, id });
      this.trySend({ jsonrpc: '2.0', id, error: { code: -32601, message: 'MethodNotFound', data: { method } } });
      return;
    }
    let out: unknown;
    try {
      out = handler(params, ctx);
    } catch (error) {
      this.answerError(method, id, error);
      return;
    }
    if (out instanceof Promise) {
      this.answering.add(id);
      // The params only when a check of the outgoing result reads them: a large request's
      // params (a logs.push's entries) are not kept alive until its answer.
      const kept = this.validatesOutgoing && this.options.checkOutgoingResult !== undefined ? params : undefined;
      out.then(
        (result) => {
          this.answering.delete(id);
          this.answer(spec, id, kept, result);
        },
        (error: unknown) => {
          this.answering.delete(id);
          this.answerError(method, id, error);
        },
      );
    } else {
      this.answer(spec, id, params, out);
    }
  }

  private answer(spec: MethodSpec, id: RpcId, params: unknown, result: unknown): void {
    if (this.closedWith) return;
    if (this.validatesOutgoing) {
      let issues: ValidationIssue[] | undefined;
      if (spec.validateResult && !spec.validateResult(result)) issues = toIssues(spec.validateResult.errors);
      else issues = this.options.checkOutgoingResult?.(spec.name, params, result);
      if (issues && issues.length > 0) {
        this.emit({ type: 'invalid_outgoing_result', method: spec.name, id, issues });
        this.trySend({ jsonrpc: '2.0', id, error: { code: -32603, message: 'InternalError' } });
        return;
      }
    }
    this.trySend({ jsonrpc: '2.0', id, result });
  }

  /** The one place where a thrown error becomes an error response. Only RpcErrors travel; anything else is -32603. */
  private answerError(method: string, id: RpcId, error: unknown): void {
    if (this.closedWith) return;
    if (error instanceof RpcError) {
      this.trySend({ jsonrpc: '2.0', id, error: error.toJSON() });
      return;
    }
    this.emit({ type: 'handler_error', method, id, error });
    this.trySend({ jsonrpc: '2.0', id, error: { code: -32603, message: 'InternalError' } });
  }

  private handleClose(code: number, reason: string): void {
    if (this.closedWith) return;
    this.closedWith = { code, reason };
    for (const [id, entry] of this.pending) {
      if (entry.timer) clearTimeout(entry.timer);
      entry.reject(new PeerError('closed', `connection closed (${code}${reason ? ` ${reason}` : ''}) before ${entry.method} was answered`, { id, code }));
    }
    this.pending.clear();
    for (const l of this.closeListeners.splice(0)) l(code, reason);
  }

  private sendText(text: string): void {
    const max = this.options.maxFrameBytes ?? MAX_FRAME_BYTES;
    // Cheap bound first: UTF-8 is at most 3 bytes per UTF-16 code unit.
    if (text.length * 3 > max) {
      const bytes = utf8Length(text);
      if (bytes > max) throw new PeerError('frame_too_large', `message of ${bytes} bytes exceeds the ${max}-byte frame limit`);
    }
    this.transport.send(text);
  }

  private trySend(message: object): void {
    if (this.closedWith) return;
    try {
      this.sendText(JSON.stringify(message));
    } catch (error) {
      this.emit({ type: 'handler_error', method: '(response)', id: undefined, error });
    }
  }

  private emit(event: PeerEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch {
      // An observer must never break the connection.
    }
  }
}

/**
 * A received text frame's size in UTF-8 bytes; for a text frame short enough to be within
 * `limit` whatever it holds, its length (no scan): UTF-8 takes at most 3 bytes per UTF-16 code
 * unit (a surrogate pair: 4 bytes for 2 units).
 */
function incomingSize(frame: { readonly kind: 'text'; readonly text: string } | { readonly kind: 'utf8'; readonly bytes: Uint8Array }, limit: number): number {
  if (frame.kind === 'utf8') return frame.bytes.length;
  return frame.text.length * 3 > limit ? utf8Length(frame.text) : frame.text.length;
}

/** The id of a message that failed the envelope check, when it can be answered as is: a string or a safe integer; else null. */
function readableId(msg: unknown): RpcId | null {
  if (msg !== null && typeof msg === 'object' && !Array.isArray(msg)) {
    const id = (msg as { id?: unknown }).id;
    if ((typeof id === 'number' && Number.isSafeInteger(id)) || typeof id === 'string') return id;
  }
  return null;
}

/** A message whose id is a number beyond ±(2^53 − 1) (schemas/jsonrpc.json JsonRpcId). */
function hasUnsafeIntegerId(msg: unknown): boolean {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return false;
  const id = (msg as { id?: unknown }).id;
  return typeof id === 'number' && Number.isInteger(id) && !Number.isSafeInteger(id);
}

function looksLikeResponse(msg: unknown): boolean {
  return msg !== null && typeof msg === 'object' && !Array.isArray(msg) && !('method' in msg) && ('result' in msg || 'error' in msg);
}

/**
 * What is wrong with a message that looks like a response and failed the envelope, in the
 * terms of the JSON-RPC 2.0 response object (never quoting the message: it may hold anything).
 */
function responseProblem(m: Record<string, unknown>): string | undefined {
  if (m['jsonrpc'] !== '2.0') return 'jsonrpc must be "2.0"';
  if ('result' in m && 'error' in m) return 'it has both result and error (a response has exactly one)';
  if (!('error' in m)) return undefined;
  const e = m['error'];
  if (e === null || typeof e !== 'object' || Array.isArray(e)) return 'error must be an object';
  const err = e as Record<string, unknown>;
  if (typeof err['code'] !== 'number' || !Number.isInteger(err['code'])) return 'error.code must be an integer';
  if (typeof err['message'] !== 'string') return 'error.message must be a string';
  return undefined;
}

function envelopeReason(msg: unknown): string {
  if (msg === null || typeof msg !== 'object') return 'message must be a JSON object';
  const m = msg as Record<string, unknown>;
  if (m['jsonrpc'] !== '2.0') return 'jsonrpc must be "2.0"';
  if ('method' in m && typeof m['method'] !== 'string') return 'method must be a string';
  if ('id' in m && typeof m['id'] === 'number' && Number.isInteger(m['id']) && !Number.isSafeInteger(m['id'])) return `id must be a string or an integer within ±${Number.MAX_SAFE_INTEGER} (a larger one is not read exactly)`;
  if ('id' in m && !(typeof m['id'] === 'string' || Number.isInteger(m['id']) || m['id'] === null)) return 'id must be an integer or a string';
  if ('params' in m && (m['params'] === null || typeof m['params'] !== 'object')) return 'params must be an object';
  return 'not a valid JSON-RPC 2.0 request, notification or response';
}

/** UTF-8 length of a string without allocating (works without Node's Buffer). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** NODE_ENV=production where there is a `process` (Node, or a bundler that defines it); false in a plain browser. */
function isProductionEnv(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.['NODE_ENV'] === 'production';
}
