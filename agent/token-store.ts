// DIR/token: the agent's long-lived credential, the token alone (a trailing newline is
// tolerated on read), mode 0600, replaced atomically (see atomic-file.ts) so a crash
// mid-write leaves the old or the new token, never a partial one.
//
// The token never appears in an error message or log line: errors name the file and
// the problem only.

import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { isErrno, unlinkDurable, writeFileAtomic } from './atomic-file.js';
import { registerLogSecrets, scrubSecret, type SecretHolder } from './log.js';

export const TOKEN_FILE = 'token';
/** Token length bounds from agent.hello's schema (seed 4.1). */
export const TOKEN_MIN_LENGTH = 32;
export const TOKEN_MAX_LENGTH = 256;

export class TokenStoreError extends Error {
  override readonly name = 'TokenStoreError';
  constructor(
    message: string,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function tokenPath(stateDir: string): string {
  return join(stateDir, TOKEN_FILE);
}

/** Checks a token's shape; the message never contains the token. */
export function checkToken(token: string): string | null {
  if (token.length < TOKEN_MIN_LENGTH || token.length > TOKEN_MAX_LENGTH) {
    return `token must be ${TOKEN_MIN_LENGTH}-${TOKEN_MAX_LENGTH} characters (got ${token.length})`;
  }
  if (!/^[\x21-\x7e]+$/.test(token)) return 'token must be printable ASCII without spaces';
  return null;
}

/**
 * `text` without a leading UTF-8 byte order mark (an editor on Windows writes one): the token in
 * DIR/token and in `enroll --token-file` is read the same way, with or without it.
 */
export function stripBom(text: string): string {
  return text.startsWith('\uFEFF') ? text.slice(1) : text;
}

/** The stored token, or null when there is no token file. */
export async function readToken(stateDir: string): Promise<string | null> {
  const path = tokenPath(stateDir);
  let text: string;
  try {
    text = await fsp.readFile(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw wrap(err, `cannot read token file ${path}`);
  }
  const body = stripBom(text);
  const token = body.endsWith('\r\n') ? body.slice(0, -2) : body.endsWith('\n') ? body.slice(0, -1) : body;
  const problem = checkToken(token);
  if (problem !== null) throw new TokenStoreError(`token file ${path} is malformed: ${problem}; re-enroll the agent`, 'EMALFORMED');
  return token;
}

/** Atomically replaces DIR/token with `token` (mode 0600). */
export async function writeToken(stateDir: string, token: string): Promise<void> {
  const problem = checkToken(token);
  if (problem !== null) throw new TokenStoreError(`refusing to store token: ${problem}`, 'EINVAL');
  const path = tokenPath(stateDir);
  try {
    await writeFileAtomic(path, token, { mode: 0o600 });
  } catch (err) {
    throw wrap(err, `cannot write token file ${path}`);
  }
}

/** Deletes DIR/token (revocation). Returns whether a token file existed. */
export async function deleteToken(stateDir: string): Promise<boolean> {
  const path = tokenPath(stateDir);
  try {
    return await unlinkDurable(path);
  } catch (err) {
    throw wrap(err, `cannot delete token file ${path}`);
  }
}

// Node's fs errors carry the path and errno, never file contents, so only the code is kept.
function wrap(err: unknown, what: string): TokenStoreError {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const c = typeof code === 'string' ? code : undefined;
  return new TokenStoreError(`${what}${c ? `: ${c}` : ''}`, c);
}

/**
 * The token one agent presents: the configured one, or DIR/token re-read before every
 * connection. Token file operations run one at a time and in order (a write never lands
 * after a later one), and a connection waits for a rotated token still being written.
 */
export class TokenKeeper implements SecretHolder {
  private currentToken: string | null = null;
  /** The token before the current one (rotated away or forgotten): still no text for a log line. */
  private previous: string | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly stateDir: string,
    /** A token given in the options: used as is, never read from the file. */
    private readonly fixed?: string,
  ) {
    this.current = fixed ?? null;
    // no log line of this process carries a token this keeper holds, whoever echoes it (H52)
    registerLogSecrets(this);
  }

  private get current(): string | null {
    return this.currentToken;
  }

  private set current(token: string | null) {
    if (this.currentToken !== null && this.currentToken !== token) this.previous = this.currentToken;
    this.currentToken = token;
  }

  secrets(): Iterable<string | null | undefined> {
    return [this.currentToken, this.previous, this.fixed];
  }

  /** The token of the latest load or write (null once forgotten). */
  get token(): string | null {
    return this.current;
  }

  set token(token: string | null) {
    this.current = token;
  }

  /** Runs `op` after every token file operation queued before it. */
  io<T>(op: () => Promise<T>): Promise<T> {
    const run = this.queue.then(op);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Writes the token held back when DIR/token is gone (buffer.db rescued, H25); true when written. */
  restore(): Promise<boolean> {
    const token = this.current;
    if (this.fixed !== undefined || token === null) return Promise.resolve(false);
    return this.io(async () => {
      if ((await readToken(this.stateDir).catch(() => 'unreadable')) !== null) return false;
      await writeToken(this.stateDir, token);
      return true;
    });
  }

  /** The token for the next hello: waits for pending writes, then re-reads DIR/token (unless fixed). */
  async load(): Promise<string | null> {
    await this.io(async () => undefined);
    if (this.fixed === undefined) {
      this.current = await readToken(this.stateDir);
      if (this.current === null) throw new Error(`no token in ${this.stateDir}; enroll the agent first`);
    }
    return this.current;
  }

  /** Deletes DIR/token (revoked); returns whether it existed. */
  forget(): Promise<boolean> {
    return this.io(async () => {
      const had = await deleteToken(this.stateDir);
      this.current = null;
      return had;
    });
  }

  /** `text` without the token (current or configured). */
  scrub(text: string): string {
    let out = text;
    for (const secret of this.secrets()) out = scrubSecret(out, secret);
    return out;
  }
}
