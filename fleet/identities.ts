// Who the simulated agents are: host ids and tokens, from a token file (JSON lines as
// `cortex-server agent issue --json` prints them) and/or issued through the admin API.
//
// The token file is also where rotated tokens go: an agent that receives rotated_token
// appends {"host_id", "token"} to it (one write(2) on an O_APPEND descriptor, so lines
// from several worker processes never interleave) before it sends anything else, and the
// last line of a host wins when the file is read. A revoked host gets {"host_id",
// "token": null}. `compactTokenFile` rewrites the file with one line per host (atomically:
// temp file + rename) when the fleet stops.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';

export interface Identity {
  host_id: string;
  token: string;
  hostname?: string;
}

/** Bad input (a malformed token file, an unusable answer): the CLI exits 2 with the message. */
export class InputError extends Error {
  override readonly name = 'InputError';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks one {host_id, token[, hostname]} object; `where` names it in the error (never the token). */
function checkIdentity(value: unknown, where: string): Identity | { host_id: string; token: null } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InputError(`${where}: expected a JSON object {"host_id", "token"}`);
  const v = value as Record<string, unknown>;
  if (typeof v['host_id'] !== 'string' || !UUID.test(v['host_id'])) throw new InputError(`${where}: host_id must be a UUID`);
  const host_id = v['host_id'].toLowerCase();
  if (v['token'] === null) return { host_id, token: null };
  if (typeof v['token'] !== 'string' || v['token'].length < 32 || v['token'].length > 256) {
    throw new InputError(`${where}: token must be a string of 32..256 characters (host ${host_id})`);
  }
  const id: Identity = { host_id, token: v['token'] };
  if (typeof v['hostname'] === 'string' && v['hostname'].length > 0 && v['hostname'].length <= 253) id.hostname = v['hostname'];
  return id;
}

/**
 * Reads a token file: one JSON object per line; blank lines and lines starting with '#'
 * are skipped; for a host given on several lines the last one wins (a null token drops
 * the host: it was revoked). Order: first appearance of each host.
 */
export function parseTokenFile(text: string, file: string): Identity[] {
  const byHost = new Map<string, Identity | null>();
  const hostnames = new Map<string, string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '' || line.startsWith('#')) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new InputError(`${file} line ${i + 1} is not JSON; each line must be one object {"host_id", "token"} as printed by \`cortex-server agent issue --json\``);
    }
    const id = checkIdentity(value, `${file} line ${i + 1}`);
    if (id.token === null) {
      byHost.set(id.host_id, null);
      continue;
    }
    if ('hostname' in id && id.hostname !== undefined) hostnames.set(id.host_id, id.hostname);
    byHost.set(id.host_id, id);
  }
  const out: Identity[] = [];
  for (const [host_id, id] of byHost) {
    if (id === null) continue;
    const hostname = hostnames.get(host_id);
    out.push(hostname !== undefined ? { host_id, token: id.token, hostname } : { host_id, token: id.token });
  }
  return out;
}

export function readTokenFile(file: string): Identity[] {
  if (!existsSync(file)) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read token file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  return parseTokenFile(text, file);
}

/** Appends token lines to the token file (created 0600). One write per call. */
export class TokenJournal {
  private fd: number | null;

  constructor(readonly file: string) {
    this.fd = openSync(file, 'a', 0o600);
  }

  /** Records a host's current token (null: revoked). Synchronous: it is on disk (page cache) when this returns. */
  record(host_id: string, token: string | null, hostname?: string): void {
    if (this.fd === null) return;
    const line: Record<string, unknown> = { host_id, token };
    if (hostname !== undefined) line['hostname'] = hostname;
    if (token !== null) line['rotated_at'] = new Date().toISOString();
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  close(): void {
    if (this.fd === null) return;
    try {
      fsyncSync(this.fd);
    } catch {
      // best effort: the lines are written
    }
    closeSync(this.fd);
    this.fd = null;
  }
}

/** Rewrites the token file with one line per host (last wins), atomically. */
export function compactTokenFile(file: string): number {
  const ids = readTokenFile(file);
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    try {
      writeSync(fd, ids.map((id) => JSON.stringify(id)).join('\n') + (ids.length ? '\n' : ''));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return ids.length;
}

export interface AdminEnrollOptions {
  /** http(s)://HOST:PORT of the server's admin API. */
  adminUrl: string;
  /** Bearer token (never logged). */
  adminToken?: string | undefined;
  count: number;
  /** Hostnames are `${prefix}-${n}`. */
  hostnamePrefix: string;
  concurrency?: number;
  /** Called with each token as soon as it is issued (e.g. to append it to the token file). */
  onIssued?: (id: Identity) => void;
}

/** Enrollment stopped at its first failure: `issued` tokens were issued before it (and passed to onIssued). */
export class EnrollError extends Error {
  override readonly name = 'EnrollError';
  constructor(
    message: string,
    readonly issued: Identity[],
    readonly reason: Error,
  ) {
    super(message);
  }
}

/**
 * Issues `count` enrollment tokens through the admin API: POST /admin/agents with
 * {"hostname"}; the answer is {"host_id", "hostname", "token"} (the shape of `agent issue
 * --json`). Each issued token goes to `onIssued` as it arrives. The first failure stops
 * the issuing (requests already in flight finish and their tokens are kept) and rejects
 * with an EnrollError holding what was issued.
 */
export async function enrollThroughAdmin(o: AdminEnrollOptions): Promise<Identity[]> {
  const base = o.adminUrl.replace(/\/+$/, '');
  const out: Identity[] = [];
  let next = 0;
  let failure: Error | null = null;
  const one = async (i: number): Promise<void> => {
    const hostname = `${o.hostnamePrefix}-${i}`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (o.adminToken !== undefined) headers['authorization'] = `Bearer ${o.adminToken}`;
    let res: Response;
    try {
      res = await fetch(`${base}/admin/agents`, { method: 'POST', headers, body: JSON.stringify({ hostname }) });
    } catch (error) {
      const cause = (error as Error & { cause?: { code?: string } }).cause?.code;
      throw new Error(`admin API ${base} unreachable: ${(error as Error).message}${cause ? ` (${cause})` : ''}`);
    }
    const text = await res.text();
    if (!res.ok) {
      let message = text.slice(0, 300);
      try {
        const body = JSON.parse(text) as { error?: { message?: unknown } | string };
        const m = typeof body.error === 'string' ? body.error : body.error?.message;
        if (typeof m === 'string') message = m;
      } catch {
        // not JSON: keep the text
      }
      throw new Error(`POST ${base}/admin/agents answered ${res.status}: ${message}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new InputError(`POST ${base}/admin/agents answered 2xx without JSON; expected {"host_id", "hostname", "token"}`);
    }
    const id = checkIdentity(body, `POST ${base}/admin/agents answer`);
    if (id.token === null) throw new InputError(`POST ${base}/admin/agents answered without a token`);
    const issued: Identity = { ...id, hostname: (id as Identity).hostname ?? hostname };
    out.push(issued);
    o.onIssued?.(issued);
  };
  await Promise.all(
    Array.from({ length: Math.min(o.concurrency ?? 16, o.count) }, async () => {
      while (failure === null && next < o.count) {
        try {
          await one(next++);
        } catch (err) {
          failure ??= err as Error;
        }
      }
    }),
  );
  if (failure !== null) {
    const f: Error = failure;
    const hint = out.length === 0 && /unreachable/.test(f.message) ? '; check --admin-url' : '';
    throw new EnrollError(`enrollment stopped after ${out.length} of ${o.count} tokens: ${f.message}${hint}`, out, f);
  }
  return out;
}
