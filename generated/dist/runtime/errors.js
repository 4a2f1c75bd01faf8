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
/**
 * An error that is (or came) on the wire as a JSON-RPC error response. `message` reads
 * "<wire message> (<code>): <one-line summary of data>", e.g.
 * "Backpressure (-32020): retry_after_ms=500", so a log line or a test failure says what
 * happened; the wire keeps the short message (`wireMessage`, sent by toJSON).
 */
export class RpcError extends Error {
    code;
    data;
    /** The error object's `message` as on the wire (the contract's error name). */
    wireMessage;
    constructor(code, message, data) {
        const summary = summarizeData(data);
        super(`${message} (${code})${summary ? `: ${summary}` : ''}`);
        this.name = 'RpcError';
        this.code = code;
        this.data = data;
        this.wireMessage = message;
    }
    /** The wire form: `{code, message, data?}`. */
    toJSON() {
        const out = { code: this.code, message: this.wireMessage };
        if (this.data !== undefined)
            out.data = this.data;
        return out;
    }
}
/**
 * One line (at most `max` characters) saying what error data holds: `key=value` for each
 * property (strings quoted when they contain spaces, nested values as compact JSON), a list
 * of validation issues as "path message; ...". Empty for no data.
 */
export function summarizeData(data, max = 200) {
    if (data === undefined || data === null)
        return '';
    let text;
    if (typeof data !== 'object')
        text = String(data);
    else if (Array.isArray(data))
        text = compact(data);
    else {
        text = Object.entries(data)
            .map(([k, v]) => {
            if (Array.isArray(v) && v.length > 0 && v.every(isIssue))
                return `${k}: ${describeIssues(v)}`;
            if (typeof v === 'string')
                return `${k}=${/^[\w.:/@+-]*$/.test(v) ? v : JSON.stringify(v)}`;
            return `${k}=${compact(v)}`;
        })
            .join(', ');
    }
    text = text.replace(/[\r\n]+/g, ' ');
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
function compact(v) {
    try {
        return JSON.stringify(v) ?? String(v);
    }
    catch {
        return String(v);
    }
}
function isIssue(v) {
    return v !== null && typeof v === 'object' && typeof v.path === 'string' && typeof v.message === 'string';
}
/** A local error: never sent on the wire. */
export class PeerError extends Error {
    code;
    details;
    constructor(code, message, details) {
        super(message);
        this.name = 'PeerError';
        this.code = code;
        this.details = details;
    }
}
/** Turn validator errors into readable issues (path plus a message that names the problem). */
export function toIssues(errors) {
    if (!errors || errors.length === 0)
        return [{ path: '', message: 'is invalid' }];
    return errors.map((e) => {
        let path = e.instancePath;
        let message = e.message ?? 'is invalid';
        const p = e.params ?? {};
        if (e.keyword === 'required' && typeof p['missingProperty'] === 'string') {
            path = `${path}/${escapePointer(p['missingProperty'])}`;
            message = 'is required';
        }
        else if (e.keyword === 'additionalProperties' && typeof p['additionalProperty'] === 'string') {
            path = `${path}/${escapePointer(p['additionalProperty'])}`;
            message = 'is not allowed (unknown property)';
        }
        else if (e.keyword === 'enum' && Array.isArray(p['allowedValues'])) {
            message = `must be one of ${p['allowedValues'].map((v) => JSON.stringify(v)).join(', ')}`;
        }
        return { path, message, keyword: e.keyword };
    });
}
function escapePointer(s) {
    return s.replace(/~/g, '~0').replace(/\//g, '~1');
}
/**
 * A one-line summary of issues, for error messages: "/entries/0/seq must be integer; ...".
 * Each distinct "path message" appears once (a schema with alternatives, such as the
 * envelope's oneOf, reports the same problem once per branch); at most `max` are shown and
 * "(+N more)" counts the distinct ones left out.
 */
export function describeIssues(issues, max = 3) {
    const distinct = [];
    const seen = new Set();
    for (const i of issues) {
        const line = `${i.path === '' ? '(root)' : i.path} ${i.message}`;
        if (seen.has(line))
            continue;
        seen.add(line);
        distinct.push(line);
    }
    const more = distinct.length > max ? ` (+${distinct.length - max} more)` : '';
    return distinct.slice(0, max).join('; ') + more;
}
