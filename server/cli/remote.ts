// The admin CLI against a running server: `--server http(s)://HOST:PORT` (or
// CORTEX_SERVER) instead of opening the database file. Requests go to the admin HTTP API
// (server/admin/openapi.json) with `Authorization: Bearer` from --admin-token-file FILE or
// CORTEX_ADMIN_TOKEN (never from the command line, so the token is not visible in `ps`);
// `--ca FILE` trusts a private CA for https://. The token never appears in a message.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { UsageError } from '../../common/errors.js';

/** Options every remote-capable command takes (spread into its parse() options). */
export const REMOTE_OPTIONS = {
  server: { type: 'string' },
  'admin-token-file': { type: 'string' },
  ca: { type: 'string' },
} as const;

export const REMOTE_HELP = `  --server URL             talk to a running server's admin API (http://HOST:PORT or https://…;
                           default $CORTEX_SERVER) instead of opening --db
  --admin-token-file FILE  the server's admin token, read from FILE (or $CORTEX_ADMIN_TOKEN)
  --ca FILE                PEM CA certificate(s) to trust for an https:// --server
`;

export interface RemoteTarget {
  base: URL;
  token: string | undefined;
  ca: Buffer | undefined;
  /** Where the token came from (`--admin-token-file FILE`, `CORTEX_ADMIN_TOKEN`), for a 401's message. */
  tokenFrom?: string;
}

/** The admin API base URL from --server or CORTEX_SERVER (ws:// and wss:// URLs are mapped). */
export function parseServerUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value.replace(/^ws(s?):/i, 'http$1:'));
  } catch {
    throw new UsageError(`${what} ${JSON.stringify(value)} is not a URL such as http://127.0.0.1:3100`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${what} must be http://, https:// (or the ws:// / wss:// URL agents use), got ${url.protocol}`);
  if (url.username !== '' || url.password !== '') throw new UsageError(`${what} must not carry credentials; give the admin token with --admin-token-file FILE or CORTEX_ADMIN_TOKEN`);
  return new URL(`${url.origin}${serverPrefix(url.pathname)}/`);
}

/**
 * The path a reverse proxy serves the server under (DECISIONS I26): the URL's path up to the
 * server's own routes (/ws/agent, /ui, /admin, ...) when it names one, else the whole path;
 * '' for none. So https://h/cortex, https://h/cortex/ui/ and wss://h/cortex/ws/agent all
 * mean the server at https://h/cortex/.
 */
function serverPrefix(pathname: string): string {
  const segments = pathname.split('/').filter((x) => x !== '');
  const own = segments.findIndex((x, i) => ['ui', 'admin', 'healthz', 'metrics'].includes(x) || (x === 'ws' && segments[i + 1] === 'agent'));
  return (own === -1 ? segments : segments.slice(0, own)).map((x) => `/${x}`).join('');
}

/** The server's address as messages name it: its origin and any path prefix. */
export function where(t: RemoteTarget): string {
  return t.base.href.replace(/\/$/, '');
}

/**
 * Where an admin command goes: a running server (--server, else CORTEX_SERVER when no
 * --db is given) or the database file (--db, else the local default). Both --server and
 * --db is a usage error.
 */
export function remoteTarget(values: { server?: string | undefined; db?: string | undefined; 'admin-token-file'?: string | undefined; ca?: string | undefined }): RemoteTarget | undefined {
  if (values.server !== undefined && values.db !== undefined) throw new UsageError('give --server URL or --db PATH, not both');
  const env = process.env['CORTEX_SERVER'];
  const server = values.server ?? (values.db === undefined && env !== undefined && env !== '' ? env : undefined);
  if (server === undefined) {
    if (values['admin-token-file'] !== undefined || values.ca !== undefined) throw new UsageError('--admin-token-file and --ca go with --server URL (or CORTEX_SERVER)');
    return undefined;
  }
  const base = parseServerUrl(server, values.server !== undefined ? '--server' : 'CORTEX_SERVER');
  // trimmed as serve trims it (a file's final newline, `export CORTEX_ADMIN_TOKEN="$(cat f)"`)
  let token = process.env['CORTEX_ADMIN_TOKEN']?.trim();
  const file = values['admin-token-file'];
  if (file !== undefined) {
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch (error) {
      throw new UsageError(`cannot read --admin-token-file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { code: 'E_FILE_ACCESS' });
    }
    if (token === '') throw new UsageError(`--admin-token-file ${file} is empty`, { code: 'E_TOKEN', hint: ADMIN_TOKEN_HINT });
  }
  if (token !== undefined) checkAdminToken(token, file !== undefined ? `--admin-token-file ${file}` : 'CORTEX_ADMIN_TOKEN');
  let ca: Buffer | undefined;
  if (values.ca !== undefined) {
    try {
      ca = readFileSync(values.ca);
    } catch (error) {
      throw new UsageError(`cannot read --ca ${values.ca}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, { code: 'E_FILE_ACCESS' });
    }
    if (!ca.toString('latin1').includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--ca ${values.ca} holds no PEM certificate`);
  }
  const tokenFrom = file !== undefined ? `--admin-token-file ${file}` : 'CORTEX_ADMIN_TOKEN';
  return { base, token: token === '' ? undefined : token, ca, ...(token !== undefined && token !== '' ? { tokenFrom } : {}) };
}

/** What to do about an admin token that cannot be used (E_TOKEN's own hint is about agent tokens). */
export const ADMIN_TOKEN_HINT = 'put the admin token serve was started with (serve --admin-token-file, or its config\'s admin_token) alone on one line of --admin-token-file FILE, or in CORTEX_ADMIN_TOKEN';

/**
 * An admin token that cannot go in an HTTP header — a line break or another control character
 * inside it (a file of two lines, say) — is the user's error to fix
 * (exit 2, E_TOKEN), not Node's ERR_INVALID_CHAR "a bug". `from` names where it came from;
 * the token itself never appears in the message.
 */
export function checkAdminToken(token: string, from: string): void {
  const bad = /[\x00-\x1f\x7f]|[^\x00-\xff]/.exec(token);
  if (bad === null) return;
  const what = bad[0] === '\n' || bad[0] === '\r' ? 'a line break' : bad[0].charCodeAt(0) > 0xff ? 'a character outside Latin-1' : 'a control character';
  throw new UsageError(`${from} holds ${what} inside the admin token: an HTTP header cannot carry it`, { code: 'E_TOKEN', hint: ADMIN_TOKEN_HINT });
}

export interface ApiReply {
  status: number;
  body: unknown;
}

/** An answer other than 2xx: exit 2 for a refused request (nothing changed), else 1. */
export class ApiCallError extends Error {
  /** 2: the server refused the request (bad input, unknown host, conflict; nothing changed). */
  readonly exitCode: number;
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'ApiCallError';
    this.exitCode = [400, 404, 409, 422].includes(status) ? 2 : 1;
  }
}

function requestOptions(t: RemoteTarget, method: string, path: string, extra: http.OutgoingHttpHeaders = {}): https.RequestOptions {
  const url = new URL(path.replace(/^\//, ''), t.base); // below the base's path prefix, if any
  return {
    method,
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port,
    path: `${url.pathname}${url.search}`,
    headers: { Accept: 'application/json', ...(t.token !== undefined ? { Authorization: `Bearer ${t.token}` } : {}), ...extra },
    ...(t.ca !== undefined ? { ca: t.ca } : {}),
    timeout: 60_000,
  };
}

function transport(t: RemoteTarget): typeof http | typeof https {
  return t.base.protocol === 'https:' ? https : http;
}

function unreachable(t: RemoteTarget, error: NodeJS.ErrnoException): Error {
  const hint = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(error.code ?? '') ? ' (a private CA? give --ca FILE)' : '';
  // E_CONNECT, not E_INTERNAL "a bug": the message says what to check, so no second hint
  return Object.assign(new Error(`cannot reach ${where(t)}: ${error.code ?? error.message}${hint}; is the server running there? (serve prints its address)`), { code: 'E_CONNECT', hint: '' });
}

/** One admin API call with a JSON body (or none); resolves with any status. */
export function call(t: RemoteTarget, method: string, path: string, body?: unknown): Promise<ApiReply> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = transport(t).request(requestOptions(t, method, path, payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}), (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e: NodeJS.ErrnoException) => reject(unreachable(t, e)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text === '' ? null : JSON.parse(text);
        } catch {
          // not JSON: kept as text for the message
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer in 60 s'), { code: 'ETIMEDOUT' })));
    req.on('error', (e: NodeJS.ErrnoException) => reject(unreachable(t, e)));
    req.end(payload);
  });
}

/** The error an answer carries, as the CLI reports it. */
export function replyError(t: RemoteTarget, method: string, path: string, reply: ApiReply): ApiCallError {
  // The admin API answers {"error": {code, message, data?}}; anything else came from elsewhere:
  // a reverse proxy's page (text), or the server's own 404 outside /admin/ ({"error": "no such
  // endpoint: …"}: a --server path the server is not under).
  const raw = (reply.body as { error?: unknown } | null)?.error;
  const e = typeof raw === 'object' && raw !== null ? (raw as { code?: unknown; message?: unknown; data?: unknown }) : undefined;
  const text = typeof reply.body === 'string' ? reply.body : typeof raw === 'string' ? raw.split(' (')[0] : undefined;
  let message = typeof e?.message === 'string' ? e.message : text !== undefined ? text.slice(0, 200) : `HTTP ${reply.status}`;
  if (reply.status === 401) {
    message =
      t.token === undefined
        ? `${where(t)} needs its admin token: give --admin-token-file FILE or set CORTEX_ADMIN_TOKEN (${message})`
        : `${where(t)} refused the admin token of ${t.tokenFrom ?? 'CORTEX_ADMIN_TOKEN'}: it is not the one this server was started with (serve --admin-token-file, or its config's admin_token) (${message})`;
  }
  if (reply.status === 403) message = `${where(t)} refused the admin call (${message}); from another machine the server needs an admin token (serve --admin-token-file)`;
  if (e === undefined && reply.status >= 400 && text !== undefined) {
    // Not the server's JSON: something else answered at that address (a reverse proxy's error page).
    message = `${where(t)} answered HTTP ${reply.status} with a page that is not the Cortex admin API's (${message.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 100)}): check --server; behind a reverse proxy, give the path it serves the server under (e.g. https://logs.example.com/cortex)`;
  }
  if (reply.status === 404 && typeof e?.message === 'string' && e.message.startsWith('no such admin endpoint')) {
    message = `${where(t)} does not offer ${method} ${path.split('?')[0]} (an older server?): ${e.message}`;
  }
  const issues = (e?.data as { errors?: { path?: string; message?: string }[] } | undefined)?.errors;
  if (Array.isArray(issues) && issues.length > 0) message += `\n${issues.map((i) => `  ${i.path === '' || i.path === undefined ? '(root)' : i.path}: ${i.message ?? ''}`).join('\n')}`;
  return new ApiCallError(`HTTP ${reply.status}: ${message}`, reply.status, reply.body);
}

/** A call that must succeed (2xx); otherwise an ApiCallError. */
export async function ok<T>(t: RemoteTarget, method: string, path: string, body?: unknown): Promise<T> {
  const reply = await call(t, method, path, body);
  if (reply.status >= 200 && reply.status < 300) return reply.body as T;
  throw replyError(t, method, path, reply);
}

/**
 * Follows a Server-Sent Events stream (GET path), calling onEvent per event with its id
 * and data (onOpen once the server answered 200). Resolves when the server ends the stream or
 * stop() is called.
 */
export function followEvents(
  t: RemoteTarget,
  path: string,
  onEvent: (id: string | undefined, event: string, data: string) => void,
  onOpen?: () => void,
): { done: Promise<void>; stop: () => void } {
  let req: http.ClientRequest | undefined;
  const done = new Promise<void>((resolve, reject) => {
    req = transport(t).request({ ...requestOptions(t, 'GET', path, { Accept: 'text/event-stream' }), timeout: 0 }, (res) => {
      if ((res.statusCode ?? 0) !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let body: unknown = Buffer.concat(chunks).toString('utf8');
          try {
            body = JSON.parse(body as string);
          } catch {
            // text
          }
          reject(replyError(t, 'GET', path, { status: res.statusCode ?? 0, body }));
        });
        return;
      }
      onOpen?.();
      res.setEncoding('utf8');
      let buf = '';
      res.on('data', (chunk: string) => {
        buf += chunk;
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          let id: string | undefined;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('id:')) id = line.slice(3).trim();
            else if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length > 0) onEvent(id, event, data.join('\n'));
        }
      });
      res.on('end', () => resolve());
      res.on('error', () => resolve());
    });
    req.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' && stopped ? resolve() : reject(unreachable(t, e))));
    req.end();
  });
  let stopped = false;
  return {
    done,
    stop: () => {
      stopped = true;
      req?.destroy();
    },
  };
}
