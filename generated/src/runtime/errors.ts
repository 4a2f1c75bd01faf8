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
export class RpcError<D = unknown> extends Error {
  readonly code: number;
  readonly data: D | undefined;
  /** The error object's `message` as on the wire (the contract's error name). */
  readonly wireMessage: string;

  constructor(code: number, message: string, data?: D) {
    const summary = summarizeData(data);
    super(`${message} (${code})${summary ? `: ${summary}` : ''}`);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
    this.wireMessage = message;
  }

  /** The wire form: `{code, message, data?}`. */
  toJSON(): RpcErrorObject {
    const out: RpcErrorObject = { code: this.code, message: this.wireMessage };
    if (this.data !== undefined) out.data = this.data;
    return out;
  }
}

/**
 * One line (at most `max` characters) saying what error data holds: `key=value` for each
 * property (strings quoted when they contain spaces, nested values as compact JSON), a list
 * of validation issues as "path message; ...". Empty for no data.
 */
export function summarizeData(data: unknown, max = 200): string {
  if (data === undefined || data === null) return '';
  let text: string;
  if (typeof data !== 'object') text = String(data);
  else if (Array.isArray(data)) text = compact(data);
  else {
    text = Object.entries(data as Record<string, unknown>)
      .map(([k, v]) => {
        if (Array.isArray(v) && v.length > 0 && v.every(isIssue)) return `${k}: ${describeIssues(v as ValidationIssue[])}`;
        if (typeof v === 'string') return `${k}=${/^[\w.:/@+-]*$/.test(v) ? v : JSON.stringify(v)}`;
        return `${k}=${compact(v)}`;
      })
      .join(', ');
  }
  text = text.replace(/[\r\n]+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function compact(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function isIssue(v: unknown): boolean {
  return v !== null && typeof v === 'object' && typeof (v as { path?: unknown }).path === 'string' && typeof (v as { message?: unknown }).message === 'string';
}

/** Stable codes of local (never sent) errors. */
export type PeerErrorCode =
  | 'timeout' // no response within the request timeout
  | 'closed' // the connection closed before a response arrived, or is closed
  | 'invalid_result' // the response's result failed the method's result schema
  | 'invalid_response' // the answer to a request is not a valid JSON-RPC response (result and error both, an error without code or message)
  | 'invalid_params' // outgoing params failed the method's params schema (nothing sent)
  | 'frame_too_large' // the serialized message exceeds the frame limit (nothing sent)
  | 'send_failed' // the transport refused the frame
  | 'unknown_method'; // the method is not in the catalog for this direction

/** A local error: never sent on the wire. */
export class PeerError extends Error {
  readonly code: PeerErrorCode;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: PeerErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'PeerError';
    this.code = code;
    this.details = details;
  }
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
export function toIssues(errors: readonly SchemaErrorLike[] | null | undefined): ValidationIssue[] {
  if (!errors || errors.length === 0) return [{ path: '', message: 'is invalid' }];
  return errors.map((e) => {
    let path = e.instancePath;
    let message = e.message ?? 'is invalid';
    const p = e.params ?? {};
    if (e.keyword === 'required' && typeof p['missingProperty'] === 'string') {
      path = `${path}/${escapePointer(p['missingProperty'])}`;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties' && typeof p['additionalProperty'] === 'string') {
      path = `${path}/${escapePointer(p['additionalProperty'])}`;
      message = 'is not allowed (unknown property)';
    } else if (e.keyword === 'enum' && Array.isArray(p['allowedValues'])) {
      message = `must be one of ${p['allowedValues'].map((v) => JSON.stringify(v)).join(', ')}`;
    }
    return { path, message, keyword: e.keyword };
  });
}

function escapePointer(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * A one-line summary of issues, for error messages: "/entries/0/seq must be integer; ...".
 * Each distinct "path message" appears once (a schema with alternatives, such as the
 * envelope's oneOf, reports the same problem once per branch); at most `max` are shown and
 * "(+N more)" counts the distinct ones left out.
 */
export function describeIssues(issues: readonly ValidationIssue[], max = 3): string {
  const distinct: string[] = [];
  const seen = new Set<string>();
  for (const i of issues) {
    const line = `${i.path === '' ? '(root)' : i.path} ${i.message}`;
    if (seen.has(line)) continue;
    seen.add(line);
    distinct.push(line);
  }
  const more = distinct.length > max ? ` (+${distinct.length - max} more)` : '';
  return distinct.slice(0, max).join('; ') + more;
}
