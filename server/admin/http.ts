// Request/response helpers of the admin API: JSON answers, the error envelope
// {"error": {code, message, data?}}, bounded JSON bodies, query parameters.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ErrorCode } from '@cortex/agent-protocol';
import { fromBrowser } from './session.js';
import { queryTime } from '../timestamps.js';
import { shellQuote } from '../../common/shell-quote.js';

/** Largest admin request body. */
export const MAX_BODY_BYTES = 1_048_576;

/**
 * An error answered as {"error": {code, message, data?}}. `code` is the contract's
 * JSON-RPC code where one applies (-32602, -32004, ...), else the HTTP status.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toJSON(): { code: number; message: string; data?: unknown } {
    return { code: this.code, message: this.message, ...(this.data !== undefined ? { data: this.data } : {}) };
  }
}

/** 400 with -32602 (InvalidParams), the contract's code for bad input. */
export function invalid(message: string, errors?: unknown[]): ApiError {
  return new ApiError(400, ErrorCode.InvalidParams, message, { errors: errors ?? [], reason: message });
}

/** 404 with -32004 (UnknownHost). */
export function unknownHost(host_id: string): ApiError {
  return new ApiError(404, ErrorCode.UnknownHost, `no agent with host_id ${host_id}; see GET /admin/agents`);
}

/**
 * The ETag of a config version (DECISIONS J13): a strong entity tag whose text is the version
 * (agents.config_version, agent_groups.config_version), e.g. "7". It names the stored config,
 * which every change of it moves on; GET, PUT and DELETE of a config answer it.
 */
export function versionTag(version: number): string {
  return `"${version}"`;
}

/** One entity tag of an If-Match list: W/ (weak) or not, and the quoted text. */
const ENTITY_TAG = /\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/y;

/**
 * The config versions a request's If-Match accepts (RFC 9110 13.1.1): undefined when it sends
 * none (an unconditional write, as scripts and the CLI make), 'any' for `*`, else the versions
 * its entity tags name. If-Match compares strongly, so a weak tag (W/"7") matches no version,
 * nor does a tag that is not one of ours ("abc"): an empty list, which no stored version meets.
 * @throws ApiError 400 when the header is not `*` or a list of quoted entity tags
 */
export function ifMatchVersions(req: Pick<IncomingMessage, 'headers'>): readonly number[] | 'any' | undefined {
  const raw = req.headers['if-match'];
  if (raw === undefined) return undefined;
  const text = (Array.isArray(raw) ? raw.join(', ') : raw).trim();
  if (text === '*') return 'any';
  const versions: number[] = [];
  ENTITY_TAG.lastIndex = 0;
  let ok = text !== '';
  while (ok && ENTITY_TAG.lastIndex < text.length) {
    const m = ENTITY_TAG.exec(text);
    if (m === null) ok = false;
    else if (m[1] === undefined && /^\d{1,15}$/.test(m[2] as string)) versions.push(Number(m[2]));
  }
  if (!ok) {
    const message = `If-Match must be "*" or the ETag a GET gave, quotes included, such as "7" (got ${JSON.stringify(text.slice(0, 80))})`;
    throw invalid(message, [{ path: '/If-Match', message: 'is not an entity tag list' }]);
  }
  return versions;
}

/** The If-Match header as sent, for a message (at most 80 characters). */
export function ifMatchText(req: Pick<IncomingMessage, 'headers'>): string {
  const raw = req.headers['if-match'];
  return (Array.isArray(raw) ? raw.join(', ') : (raw ?? '')).trim().slice(0, 80);
}

/**
 * 412 for a config write whose If-Match names a version no longer stored (DECISIONS J13):
 * someone changed it since the client read it. `what` names the config ("the config of host
 * X"), `read` the GET that reloads it; data carries the version now stored and its ETag.
 */
export function configChanged(what: string, read: string, sent: string, current: number | null): ApiError {
  const now = current === null ? undefined : versionTag(current);
  const message =
    now === undefined
      ? `${what} does not exist, and If-Match ${sent} asks for a version of it: nothing was stored; send the request without If-Match to create it`
      : `${what} changed since you read it (If-Match ${sent}; it is at version ${current} now): nothing was stored; reload it (GET ${read}), make your change again on what it holds now, and send it with If-Match ${now}`;
  return new ApiError(412, 412, message, { reason: 'config_changed', config_version: current, etag: now ?? null });
}

export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: ApiError, headers: Record<string, string> = {}): void {
  // after a body too large the rest of it is not read: the connection is not reused
  send(res, error.status, { error: error.toJSON() }, error.status === 413 ? { Connection: 'close', ...headers } : headers);
}

/**
 * A request whose body never arrived whole: the client closed or reset the connection, or
 * Node's requestTimeout cut it. Nothing the database did (before, the stream's ECONNRESET
 * reached the outage account: "database out of reach", cortex_database_up 0); usually there
 * is no one left to answer, so the 400 is only what the "admin request" line says.
 */
export function bodyCutShort(): ApiError {
  return new ApiError(400, 400, 'request body cut short: the client closed the connection or the request timed out before the whole body arrived');
}

/** SQLITE_BUSY… or SQLITE_LOCKED… when `error` (or its cause) is SQLite's lock refused, else undefined. */
export function sqliteLockCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null | undefined;
  const code = typeof e?.code === 'string' ? e.code : e?.cause?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) ? code : undefined;
}

/** Retry-After (seconds) of a request that found the SQLite database locked by another process. */
export const DATABASE_LOCKED_RETRY_S = 5;

/**
 * 503 for a request that could not get the SQLite database's lock: another process holds it
 * (SQLITE_BUSY once busy_timeout ran out, or SQLITE_LOCKED — a sqlite3 shell in BEGIN EXCLUSIVE,
 * a copy or backup tool with a transaction open), said as the CLI's E_DB_OPEN says it. SQLite
 * rolled the statement (and its transaction) back. Undefined for any other error. Before, a
 * route that met it answered 500 "an internal error".
 */
export function databaseLocked(error: unknown, file: string | undefined, waitedMs: number, rowsWritten = 0): ApiError | undefined {
  const code = sqliteLockCode(error);
  if (code === undefined) return undefined;
  const where = file === undefined ? 'the database' : `the database ${file}`;
  // rowsWritten: what the request's earlier writes had committed (server/admin.ts counts them,
  // DECISIONS J21): then "nothing was done" would be wrong, and trying again blindly could do it twice
  const done =
    rowsWritten === 0
      ? 'nothing was done; try again in a few seconds'
      : `part of the request was done before it met the lock (${rowsWritten} row${rowsWritten === 1 ? '' : 's'} written), the rest was not: look at what it left (GET it) before you try again, which could do that part twice`;
  const find = file === undefined ? '' : ` (fuser -v ${shellQuote(file)} ${shellQuote(`${file}-wal`)}, or lsof ${shellQuote(file)})`;
  return new ApiError(
    503,
    503,
    `${where} is locked by another process (${code}): waited ${Math.round(waitedMs / 100) / 10} s for its lock; ${done} — if it stays locked, find the process that holds it${find}, such as a sqlite3 shell in a transaction or a copy or backup tool, and end it or let it finish`,
    { reason: 'database_locked' },
  );
}

/** 413 for a body over MAX_BODY_BYTES: nothing of it was read further, nothing was done. */
export function bodyTooLarge(): ApiError {
  return new ApiError(413, 413, `request body larger than ${MAX_BODY_BYTES} bytes (1 MiB), the most the admin API reads: nothing was done; send a smaller body (an AgentConfig, a probe's arguments are far below it)`);
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) return undefined;
      chunks.push(chunk);
    }
  } catch {
    throw bodyCutShort(); // the request stream's own error (ECONNRESET "aborted"), never the database's
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The request's JSON body, or `undefined` when it has none and `optional` is set.
 * From a web page (see fromBrowser) a body must be sent as `Content-Type: application/json`:
 * a browser cannot send that cross-site without a CORS preflight (which this server never
 * grants), so a forged HTML form never reaches a handler. Scripts may leave the type out
 * (`curl -d` sends a form type), as before.
 * @throws ApiError (400) naming what is wrong and what to send
 */
export async function readJson(req: IncomingMessage, shape: string, optional = false): Promise<unknown> {
  const text = await readBody(req);
  if (text === undefined) throw bodyTooLarge();
  if (text.trim() === '') {
    if (optional) return undefined;
    throw invalid(`send a JSON body ${shape}`);
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (fromBrowser(req) && type !== 'application/json') {
    throw new ApiError(415, ErrorCode.InvalidParams, `send the body as Content-Type: application/json (got ${type === '' ? 'none' : JSON.stringify(type)})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw invalid(`body is not valid JSON (${(error as Error).message}); send ${shape}`);
  }
}

/** C0 controls but tab, and DEL: never in a search term, a name or a value these parameters take. */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** Query-parameter readers: absent → undefined; malformed → ApiError 400 naming the parameter. */
export class Query {
  constructor(private readonly params: URLSearchParams) {}

  string(name: string, maxLength = 1024): string | undefined {
    const v = this.params.get(name);
    if (v === null || v === '') return undefined;
    if (v.length > maxLength) throw invalid(`query parameter ${name} is longer than ${maxLength} characters`);
    // PostgreSQL refuses a NUL in text (a 500 before) and SQLite ends the string there (q=%00x
    // matched everything); no log text, source or metric name is searched by control characters.
    const bad = CONTROL.exec(v);
    if (bad !== null) throw invalid(`query parameter ${name} contains a control character (U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} at position ${bad.index + 1}); send printable text`);
    return v;
  }

  int(name: string, min: number, max: number): number | undefined {
    const v = this.string(name, 20);
    if (v === undefined) return undefined;
    const n = /^-?\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) throw invalid(`query parameter ${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(v)})`);
    return n;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const v = this.string(name, 100);
    if (v === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(v)) throw invalid(`query parameter ${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(v)})`);
    return v as T;
  }

  /** An RFC 3339 date-time, returned as ISO (UTC, milliseconds) so it compares with stored text. */
  time(name: string): string | undefined {
    const v = this.string(name, 64);
    if (v === undefined) return undefined;
    const t = queryTime(v);
    if (t === undefined) throw invalid(`query parameter ${name} must be an RFC 3339 date-time such as 2026-05-16T20:00:00Z (got ${JSON.stringify(v)})`);
    return t;
  }
}

/**
 * A seq given as text (a cursor, Last-Event-ID): digits up to 2^53 - 1, as after_seq takes.
 * Undefined otherwise: a longer one became Infinity or 1e23, which PostgreSQL's bigint refused
 * (a 500, or a live tail that hung after its headers).
 */
export function seqFromText(text: string): number | undefined {
  if (!/^\d{1,16}$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A path host_id, lowercased; 400 when it is not a UUID. */
export function hostIdParam(raw: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw invalid('host_id in the path is not valid percent-encoding');
  }
  const id = decoded.toLowerCase();
  if (!UUID.test(id)) throw invalid(`host_id ${JSON.stringify(decoded.slice(0, 80))} is not a UUID; see GET /admin/agents`);
  return id;
}
