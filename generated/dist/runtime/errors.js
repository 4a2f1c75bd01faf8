/*
 * Generated from contract/ by codegen — do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * Two kinds of error, as in vscode-jsonrpc:
 * - RpcError travels on the wire: a JSON-RPC error object (numeric contract code, message, data).
 * - PeerError describes local state (timeout, closed connection, invalid answer) and never does.
 *   Its `code` is a stable string.
 */
/** An error that is (or came) on the wire as a JSON-RPC error response. */
export class RpcError extends Error {
    code;
    data;
    constructor(code, message, data) {
        super(message);
        this.name = 'RpcError';
        this.code = code;
        this.data = data;
    }
    /** The wire form: `{code, message, data?}`. */
    toJSON() {
        const out = { code: this.code, message: this.message };
        if (this.data !== undefined)
            out.data = this.data;
        return out;
    }
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
/** A one-line summary of issues, for error messages: "/entries/0/seq must be integer; ...". */
export function describeIssues(issues, max = 3) {
    const shown = issues.slice(0, max).map((i) => `${i.path === '' ? '(root)' : i.path} ${i.message}`);
    const more = issues.length > max ? ` (+${issues.length - max} more)` : '';
    return shown.join('; ') + more;
}
