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
import { PeerError, RpcError, describeIssues, toIssues } from './errors.js';
import { parseJsonFrame } from './frame-json.js';
const MAX_FRAME_BYTES = 1_048_576;
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
export class Peer {
    transport;
    options;
    outgoing = new Map();
    incoming = new Map();
    requestHandlers = new Map();
    notificationHandlers = new Map();
    pending = new Map();
    /** Ids of incoming requests whose (asynchronous) answer is not sent yet. */
    answering = new Set();
    closeListeners = [];
    nextId = 1;
    closedWith;
    /** Whether outgoing params and results are validated (PeerOptions.validateOutgoing). */
    validatesOutgoing;
    constructor(transport, options) {
        this.transport = transport;
        this.options = options;
        this.validatesOutgoing = options.validateOutgoing ?? !isProductionEnv();
        const sends = options.side === 'agent' ? 'agent_to_server' : 'server_to_agent';
        for (const m of options.methods)
            (m.direction === sends ? this.outgoing : this.incoming).set(m.name, m);
        transport.onFrame((frame) => this.receive(frame));
        transport.onClose((code, reason) => this.handleClose(code, reason));
    }
    /** True once the transport reported its close. */
    get closed() {
        return this.closedWith !== undefined;
    }
    /** Number of outgoing requests still waiting for a response. */
    get pendingCount() {
        return this.pending.size;
    }
    /** Send a request and wait for its typed result. Rejects with RpcError (the peer's answer) or PeerError (local). */
    request(method, params, opts = {}) {
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
    requestSerialized(method, paramsJson, opts = {}) {
        return this.startRequest(method, (id) => `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${paramsJson}}`, opts);
    }
    /** Registers the pending entry (timeout, abort) and sends the frame `frameFor(id)`. */
    startRequest(method, frameFor, opts) {
        return new Promise((resolve, reject) => {
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
            const entry = {
                method,
                validateResult: spec.validateResult,
                resolve: resolve,
                reject,
                timer: undefined,
            };
            const timeoutMs = opts.timeoutMs ?? this.options.requestTimeoutMs ?? 30_000;
            if (timeoutMs > 0) {
                entry.timer = setTimeout(() => {
                    if (this.pending.delete(id))
                        reject(new PeerError('timeout', `${method} got no response within ${timeoutMs} ms`, { id, timeoutMs }));
                }, timeoutMs);
            }
            opts.signal?.addEventListener('abort', () => {
                if (this.pending.delete(id)) {
                    if (entry.timer)
                        clearTimeout(entry.timer);
                    reject(new PeerError('timeout', `${method} was abandoned by the caller`, { id }));
                }
            }, { once: true });
            this.pending.set(id, entry);
            try {
                this.sendText(frameFor(id));
            }
            catch (err) {
                this.pending.delete(id);
                if (entry.timer)
                    clearTimeout(entry.timer);
                reject(err instanceof PeerError ? err : new PeerError('send_failed', `could not send ${method}: ${err.message}`));
            }
        });
    }
    /** Send a notification. There is no result to wait for. Throws PeerError when it cannot be sent. */
    notify(method, params) {
        const spec = this.outgoing.get(method);
        if (!spec || spec.kind !== 'notification')
            throw new PeerError('unknown_method', `${method} is not a notification this side can send`);
        if (this.closedWith)
            throw new PeerError('closed', `connection closed (${this.closedWith.code}); ${method} not sent`);
        if (this.validatesOutgoing && !spec.validateParams(params)) {
            const issues = toIssues(spec.validateParams.errors);
            throw new PeerError('invalid_params', `${method} params are invalid: ${describeIssues(issues)}`, { issues });
        }
        this.sendText(JSON.stringify({ jsonrpc: '2.0', method, params }));
    }
    /** Handle an incoming request. The handler's return value (or thrown RpcError) is the response. */
    onRequest(method, handler) {
        const spec = this.incoming.get(method);
        if (!spec || spec.kind !== 'request')
            throw new PeerError('unknown_method', `${method} is not a request this side receives`);
        this.requestHandlers.set(method, handler);
    }
    /** Handle an incoming notification. */
    onNotification(method, handler) {
        const spec = this.incoming.get(method);
        if (!spec || spec.kind !== 'notification')
            throw new PeerError('unknown_method', `${method} is not a notification this side receives`);
        this.notificationHandlers.set(method, handler);
    }
    /** Called once when the connection closes (after pending requests were rejected). */
    onClose(listener) {
        if (this.closedWith)
            listener(this.closedWith.code, this.closedWith.reason);
        else
            this.closeListeners.push(listener);
    }
    /** Send an error response for a request id (for answers decided outside a handler). */
    sendError(id, error) {
        this.sendText(JSON.stringify({ jsonrpc: '2.0', id, error: error.toJSON() }));
    }
    /** Close the connection. Pending requests are rejected when the transport reports the close. */
    close(code = 1000, reason = '') {
        this.transport.close(code, reason);
    }
    // ───────────────────────────── receiving ─────────────────────────────
    /** The one entry point for received frames (see the diagram at the top of this file). */
    receive(frame) {
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
        let msg;
        try {
            msg = frame.kind === 'utf8' ? parseJsonFrame(frame.bytes) : JSON.parse(frame.text);
        }
        catch (err) {
            const reason = err.message;
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
            if (!looksLikeResponse(msg))
                this.trySend({ jsonrpc: '2.0', id, error: { code: -32600, message: 'InvalidRequest', data: { reason, errors: issues.slice(0, 5) } } });
            else if (id !== null)
                this.failPending(id, responseProblem(msg) ?? describeIssues(issues));
            return;
        }
        const m = msg;
        if (m.method === undefined)
            return this.receiveResponse(m);
        this.receiveCall(m.method, hasOwn(m, 'id') ? m.id : undefined, m.params, frame.kind === 'utf8' ? frame.bytes.length : frame.text.length);
    }
    /** The answer to pending request `id` was not a valid response: the request fails (PeerError 'invalid_response'). */
    failPending(id, problem) {
        const entry = this.pending.get(id);
        if (!entry)
            return; // no request of ours: an invalid message like any other
        this.pending.delete(id);
        if (entry.timer)
            clearTimeout(entry.timer);
        entry.reject(new PeerError('invalid_response', `the answer to ${entry.method} is not a valid JSON-RPC response: ${problem}`, { id }));
    }
    receiveResponse(m) {
        const entry = m.id === null ? undefined : this.pending.get(m.id);
        if (!entry || m.id === null) {
            this.emit({ type: 'unknown_response', id: m.id });
            return;
        }
        this.pending.delete(m.id);
        if (entry.timer)
            clearTimeout(entry.timer);
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
    receiveCall(method, id, params, frameLength) {
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
            if (isRequest)
                this.trySend({ jsonrpc: '2.0', id, error: { code: -32601, message: 'MethodNotFound', data: { method } } });
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
        const ctx = { method, id, frameLength };
        if (this.options.intercept) {
            const rejection = this.options.intercept({ method, id, params, frameLength });
            if (rejection) {
                this.emit({ type: 'rejected', method, id, code: rejection.code });
                if (isRequest)
                    this.trySend({ jsonrpc: '2.0', id, error: rejection.toJSON() });
                return;
            }
            if (this.closedWith)
                return;
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
            }
            catch (error) {
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
        let out;
        try {
            out = handler(params, ctx);
        }
        catch (error) {
            this.answerError(method, id, error);
            return;
        }
        if (out instanceof Promise) {
            this.answering.add(id);
            // The params only when a check of the outgoing result reads them: a large request's
            // params (a logs.push's entries) are not kept alive until its answer.
            const kept = this.validatesOutgoing && this.options.checkOutgoingResult !== undefined ? params : undefined;
            out.then((result) => {
                this.answering.delete(id);
                this.answer(spec, id, kept, result);
            }, (error) => {
                this.answering.delete(id);
                this.answerError(method, id, error);
            });
        }
        else {
            this.answer(spec, id, params, out);
        }
    }
    answer(spec, id, params, result) {
        if (this.closedWith)
            return;
        if (this.validatesOutgoing) {
            let issues;
            if (spec.validateResult && !spec.validateResult(result))
                issues = toIssues(spec.validateResult.errors);
            else
                issues = this.options.checkOutgoingResult?.(spec.name, params, result);
            if (issues && issues.length > 0) {
                this.emit({ type: 'invalid_outgoing_result', method: spec.name, id, issues });
                this.trySend({ jsonrpc: '2.0', id, error: { code: -32603, message: 'InternalError' } });
                return;
            }
        }
        this.trySend({ jsonrpc: '2.0', id, result });
    }
    /** The one place where a thrown error becomes an error response. Only RpcErrors travel; anything else is -32603. */
    answerError(method, id, error) {
        if (this.closedWith)
            return;
        if (error instanceof RpcError) {
            this.trySend({ jsonrpc: '2.0', id, error: error.toJSON() });
            return;
        }
        this.emit({ type: 'handler_error', method, id, error });
        this.trySend({ jsonrpc: '2.0', id, error: { code: -32603, message: 'InternalError' } });
    }
    handleClose(code, reason) {
        if (this.closedWith)
            return;
        this.closedWith = { code, reason };
        for (const [id, entry] of this.pending) {
            if (entry.timer)
                clearTimeout(entry.timer);
            entry.reject(new PeerError('closed', `connection closed (${code}${reason ? ` ${reason}` : ''}) before ${entry.method} was answered`, { id, code }));
        }
        this.pending.clear();
        for (const l of this.closeListeners.splice(0))
            l(code, reason);
    }
    sendText(text) {
        const max = this.options.maxFrameBytes ?? MAX_FRAME_BYTES;
        // Cheap bound first: UTF-8 is at most 3 bytes per UTF-16 code unit.
        if (text.length * 3 > max) {
            const bytes = utf8Length(text);
            if (bytes > max)
                throw new PeerError('frame_too_large', `message of ${bytes} bytes exceeds the ${max}-byte frame limit`);
        }
        this.transport.send(text);
    }
    trySend(message) {
        if (this.closedWith)
            return;
        try {
            this.sendText(JSON.stringify(message));
        }
        catch (error) {
            this.emit({ type: 'handler_error', method: '(response)', id: undefined, error });
        }
    }
    emit(event) {
        try {
            this.options.onEvent?.(event);
        }
        catch {
            // An observer must never break the connection.
        }
    }
}
/**
 * A received text frame's size in UTF-8 bytes; for a text frame short enough to be within
 * `limit` whatever it holds, its length (no scan): UTF-8 takes at most 3 bytes per UTF-16 code
 * unit (a surrogate pair: 4 bytes for 2 units).
 */
function incomingSize(frame, limit) {
    if (frame.kind === 'utf8')
        return frame.bytes.length;
    return frame.text.length * 3 > limit ? utf8Length(frame.text) : frame.text.length;
}
/** The id of a message that failed the envelope check, when it can be answered as is: a string or a safe integer; else null. */
function readableId(msg) {
    if (msg !== null && typeof msg === 'object' && !Array.isArray(msg)) {
        const id = msg.id;
        if ((typeof id === 'number' && Number.isSafeInteger(id)) || typeof id === 'string')
            return id;
    }
    return null;
}
/** A message whose id is a number beyond ±(2^53 − 1) (schemas/jsonrpc.json JsonRpcId). */
function hasUnsafeIntegerId(msg) {
    if (msg === null || typeof msg !== 'object' || Array.isArray(msg))
        return false;
    const id = msg.id;
    return typeof id === 'number' && Number.isInteger(id) && !Number.isSafeInteger(id);
}
function looksLikeResponse(msg) {
    return msg !== null && typeof msg === 'object' && !Array.isArray(msg) && !('method' in msg) && ('result' in msg || 'error' in msg);
}
/**
 * What is wrong with a message that looks like a response and failed the envelope, in the
 * terms of the JSON-RPC 2.0 response object (never quoting the message: it may hold anything).
 */
function responseProblem(m) {
    if (m['jsonrpc'] !== '2.0')
        return 'jsonrpc must be "2.0"';
    if ('result' in m && 'error' in m)
        return 'it has both result and error (a response has exactly one)';
    if (!('error' in m))
        return undefined;
    const e = m['error'];
    if (e === null || typeof e !== 'object' || Array.isArray(e))
        return 'error must be an object';
    const err = e;
    if (typeof err['code'] !== 'number' || !Number.isInteger(err['code']))
        return 'error.code must be an integer';
    if (typeof err['message'] !== 'string')
        return 'error.message must be a string';
    return undefined;
}
function envelopeReason(msg) {
    if (msg === null || typeof msg !== 'object')
        return 'message must be a JSON object';
    const m = msg;
    if (m['jsonrpc'] !== '2.0')
        return 'jsonrpc must be "2.0"';
    if ('method' in m && typeof m['method'] !== 'string')
        return 'method must be a string';
    if ('id' in m && typeof m['id'] === 'number' && Number.isInteger(m['id']) && !Number.isSafeInteger(m['id']))
        return `id must be a string or an integer within ±${Number.MAX_SAFE_INTEGER} (a larger one is not read exactly)`;
    if ('id' in m && !(typeof m['id'] === 'string' || Number.isInteger(m['id']) || m['id'] === null))
        return 'id must be an integer or a string';
    if ('params' in m && (m['params'] === null || typeof m['params'] !== 'object'))
        return 'params must be an object';
    return 'not a valid JSON-RPC 2.0 request, notification or response';
}
/** UTF-8 length of a string without allocating (works without Node's Buffer). */
export function utf8Length(text) {
    let bytes = 0;
    for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c < 0x80)
            bytes += 1;
        else if (c < 0x800)
            bytes += 2;
        else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
            bytes += 4;
            i++;
        }
        else
            bytes += 3;
    }
    return bytes;
}
/** NODE_ENV=production where there is a `process` (Node, or a bundler that defines it); false in a plain browser. */
function isProductionEnv() {
    const env = globalThis.process?.env;
    return env?.['NODE_ENV'] === 'production';
}
