// The agent's state directory (DESIGN.md section 3):
//   token       the credential alone (token-store.ts)
//   host_id     the host's UUID (lowercase), written by `enroll`
//   agent.json  server URL and options, written by `enroll`, read by `run`/`status`
//   buffer.db   the durable buffer (buffer/buffer.ts)
// host_id and agent.json are replaced atomically like the token.

import { accessSync, closeSync, constants as fsConstants, openSync, promises as fsp, readFileSync, statSync, unlinkSync } from 'node:fs';
import { currentUserName } from '../common/process.js';
import { shellQuote } from '../common/shell-quote.js';
import { dirname, join } from 'node:path';
import { isErrno, writeFileAtomic } from './atomic-file.js';
import { DEFAULT_HARD_CAP_BYTES, DEFAULT_SOFT_CAP_BYTES } from './buffer/buffer.js';
import type { JsonValue } from './buffer/entry.js';
import { proxySettingProblem } from './proxy.js';

export const HOST_ID_FILE = 'host_id';
export const AGENT_JSON_FILE = 'agent.json';
export const BUFFER_DB_FILE = 'buffer.db';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export class StateDirError extends Error {
  override readonly name = 'StateDirError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export interface StatePaths {
  dir: string;
  token: string;
  hostId: string;
  agentJson: string;
  bufferDb: string;
}

export function statePaths(dir: string): StatePaths {
  return {
    dir,
    token: join(dir, 'token'),
    hostId: join(dir, HOST_ID_FILE),
    agentJson: join(dir, AGENT_JSON_FILE),
    bufferDb: join(dir, BUFFER_DB_FILE),
  };
}

/**
 * Creates the state dir (mode 0700) if missing; an existing one with a wider mode is
 * tightened to 0700, and buffer.db (log contents) to 0600 (DECISIONS H11).
 */
export async function ensureStateDir(dir: string): Promise<void> {
  try {
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw fsError(err, `cannot create state dir ${dir}`);
  }
  await tighten(dir, 0o700);
  for (const f of [BUFFER_DB_FILE, `${BUFFER_DB_FILE}-wal`, `${BUFFER_DB_FILE}-shm`]) await tighten(join(dir, f), 0o600);
}

/** chmod to `mode` when the current mode grants more; a missing file or one we do not own is left alone. */
async function tighten(path: string, mode: number): Promise<void> {
  try {
    const st = await fsp.stat(path);
    if ((st.mode & 0o777 & ~mode) !== 0) await fsp.chmod(path, mode);
  } catch {
    // missing, or not ours to change (the agent then runs with what it has)
  }
}

/** Normalizes a host_id (trimmed, lowercased); null when it is not a UUID. */
export function normalizeHostId(value: string): string | null {
  const v = value.trim().toLowerCase();
  return UUID_RE.test(v) ? v : null;
}

export async function readHostId(dir: string): Promise<string | null> {
  const path = join(dir, HOST_ID_FILE);
  const text = await readOptional(path);
  if (text === null) return null;
  const id = normalizeHostId(text);
  if (id === null) throw new StateDirError(`${path} does not hold a UUID; re-enroll the agent`, 'EMALFORMED');
  return id;
}

export async function writeHostId(dir: string, hostId: string): Promise<void> {
  const id = normalizeHostId(hostId);
  if (id === null) throw new StateDirError(`host_id must be a UUID`, 'EINVAL');
  const path = join(dir, HOST_ID_FILE);
  try {
    await writeFileAtomic(path, `${id}\n`, { mode: 0o644 });
  } catch (err) {
    throw fsError(err, `cannot write ${path}`);
  }
}

/** Contents of agent.json. Unknown keys are kept (a newer agent may have written them). */
export interface AgentSettings {
  /** The full WebSocket URL, used as given (e.g. wss://logs.example/ws/agent); the first of `server_urls`. */
  server_url: string;
  /**
   * Every server the agent may connect to (`enroll --server` repeated: several servers on one
   * database, no load balancer needed). Absent: `server_url` alone.
   */
  server_urls?: string[];
  /** ws:// is allowed only with this set (seed 2, agent.allow_insecure). */
  allow_insecure?: boolean;
  /** Extra CA bundle (PEM) for wss://, added to the system CAs. */
  ca_file?: string | null;
  buffer_soft_cap_bytes?: number;
  buffer_hard_cap_bytes?: number;
  /** Files or directories the file.tail probe may read (absolute paths; default ["/var/log"]; [] disables file.tail). */
  probe_file_tail_paths?: string[];
  /**
   * What a `custom` source the server configures may run (DECISIONS H37): a program (a string:
   * the command's first element as the config gives it, with any arguments) or one exact
   * command (an array). Absent or []: no command runs.
   */
  custom_commands?: (string | string[])[];
  /** Where a `custom` source may listen: absolute socket paths, or folders for any socket inside. Absent or []: none. */
  custom_socket_paths?: string[];
  /** The HTTP(S) proxy to reach the servers through (a URL), or null for none; absent: the environment's (HTTPS_PROXY …). */
  proxy?: string | null;
  [key: string]: JsonValue | undefined;
}

/** The keys of agent.json this agent reads (docs/configuration.md "The agent's own settings"). */
export const AGENT_SETTINGS_KEYS: readonly string[] = [
  'server_url', 'server_urls', 'allow_insecure', 'ca_file', 'buffer_soft_cap_bytes', 'buffer_hard_cap_bytes', 'probe_file_tail_paths',
  'custom_commands', 'custom_socket_paths', 'proxy',
];

/**
 * The keys of agent.json this agent does not read (DECISIONS I22): kept in the file (a newer
 * agent may have written them), but a misspelt key or one that belongs elsewhere (`log_sources`
 * come from the server) would otherwise be ignored without a word.
 */
export function unknownAgentSettingsKeys(settings: object): string[] {
  return Object.keys(settings).filter((k) => !AGENT_SETTINGS_KEYS.includes(k));
}

/** What the agent says of unknown keys (run's log at start and at SIGHUP, status's note). */
export function unknownAgentSettingsText(keys: readonly string[]): string {
  return (
    `agent.json has ${keys.length === 1 ? 'a key' : 'keys'} this agent does not read: ${keys.map((k) => JSON.stringify(k)).join(', ')} (kept, ignored; ` +
    `it reads ${AGENT_SETTINGS_KEYS.join(', ')}; log sources, filters and intervals come from the server: cortex-server agent config HOST_ID --set …)`
  );
}

/**
 * A hard cap below this is said at start (DECISIONS I22): the caps are sizes in bytes, and one
 * entry can take ~260 KiB, so such a buffer drops nearly all it is given. Not refused: a tiny
 * buffer may be meant (and ran before), and the soft cap's default (256 MiB) above it is.
 */
export const SMALL_BUFFER_CAP_BYTES = 1024 * 1024;

/** The warning for a hard cap under SMALL_BUFFER_CAP_BYTES, or null. */
export function smallBufferCapText(settings: AgentSettings): string | null {
  const hard = settings.buffer_hard_cap_bytes;
  if (hard === undefined || hard >= SMALL_BUFFER_CAP_BYTES) return null;
  return `agent.json: buffer_hard_cap_bytes is ${hard} bytes, under 1 MiB: the buffer keeps at most that much and drops the oldest entries beyond it (the caps are sizes in bytes: 512 MiB is 536870912)`;
}

/** Checks agent.json's shape; returns a message naming the failing field, or null. */
export function checkAgentSettings(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be a JSON object';
  const v = value as Record<string, unknown>;
  if (typeof v.server_url !== 'string') return 'server_url must be a string';
  let url: URL;
  try {
    url = new URL(v.server_url);
  } catch {
    return 'server_url is not a URL';
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') return 'server_url must be a ws:// or wss:// URL';
  if (v.server_urls !== undefined) {
    if (!Array.isArray(v.server_urls) || v.server_urls.length === 0) return 'server_urls must be a non-empty array of ws:// or wss:// URLs';
    for (let i = 0; i < v.server_urls.length; i++) {
      const u: unknown = v.server_urls[i];
      let parsed: URL | null = null;
      try {
        parsed = typeof u === 'string' ? new URL(u) : null;
      } catch {
        parsed = null;
      }
      if (parsed === null || (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:')) return `server_urls[${i}] must be a ws:// or wss:// URL`;
    }
  }
  if (v.allow_insecure !== undefined && typeof v.allow_insecure !== 'boolean') return 'allow_insecure must be a boolean';
  if (v.ca_file !== undefined && v.ca_file !== null && typeof v.ca_file !== 'string') return 'ca_file must be a string or null';
  for (const key of ['buffer_soft_cap_bytes', 'buffer_hard_cap_bytes'] as const) {
    const n = v[key];
    if (n !== undefined && !(typeof n === 'number' && Number.isSafeInteger(n) && n > 0)) return `${key} must be a positive integer`;
  }
  const soft = (v.buffer_soft_cap_bytes as number | undefined) ?? DEFAULT_SOFT_CAP_BYTES;
  const hard = (v.buffer_hard_cap_bytes as number | undefined) ?? DEFAULT_HARD_CAP_BYTES;
  if (soft > hard) {
    const what = (key: string, n: number, dflt: boolean) => `${key} (${n}${dflt ? ', the default' : ''})`;
    return `${what('buffer_soft_cap_bytes', soft, v.buffer_soft_cap_bytes === undefined)} must not exceed ${what('buffer_hard_cap_bytes', hard, v.buffer_hard_cap_bytes === undefined)}: the soft cap is where the agent starts sending at once, the hard cap where it drops the oldest entries`;
  }
  const tail = absolutePathsProblem(v, 'probe_file_tail_paths', '');
  if (tail !== null) return tail;
  const commands = v.custom_commands;
  if (commands !== undefined) {
    const what = 'custom_commands must be an array of programs (a string: the program as the config names it, e.g. "/usr/bin/dmesg") or exact commands (an array of strings)';
    if (!Array.isArray(commands)) return what;
    for (let i = 0; i < commands.length; i++) {
      const c: unknown = commands[i];
      const ok = (x: unknown) => typeof x === 'string' && x !== '' && !x.includes('\0');
      if (!(ok(c) || (Array.isArray(c) && c.length > 0 && c.every(ok)))) return `custom_commands[${i}]: ${what}`;
    }
  }
  if (v.proxy !== undefined) {
    const problem = proxySettingProblem(v.proxy);
    if (problem !== null) return problem;
  }
  return absolutePathsProblem(v, 'custom_socket_paths', ' (sockets, or folders for any socket inside)');
}

/** A key of agent.json that, when present, must be an array of absolute paths. */
function absolutePathsProblem(v: Record<string, unknown>, key: string, what: string): string | null {
  const list = v[key];
  if (list === undefined) return null;
  if (!Array.isArray(list)) return `${key} must be an array of absolute paths${what}`;
  for (let i = 0; i < list.length; i++) {
    const t: unknown = list[i];
    if (typeof t !== 'string' || !t.startsWith('/') || t.includes('\0')) return `${key}[${i}] must be an absolute path`;
  }
  return null;
}

/** The servers of agent.json in their configured order: `server_urls`, or `server_url` alone. */
export function settingsServerUrls(settings: AgentSettings): string[] {
  return settings.server_urls !== undefined && settings.server_urls.length > 0 ? [...settings.server_urls] : [settings.server_url];
}

export async function readAgentSettings(dir: string): Promise<AgentSettings | null> {
  const path = join(dir, AGENT_JSON_FILE);
  const text = await readOptional(path);
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StateDirError(`${path} is not valid JSON (${(err as Error).message})`, 'EMALFORMED');
  }
  const problem = checkAgentSettings(value);
  if (problem !== null) throw new StateDirError(`${path}: ${problem}`, 'EMALFORMED');
  return value as AgentSettings;
}

export async function writeAgentSettings(dir: string, settings: AgentSettings): Promise<void> {
  const problem = checkAgentSettings(settings);
  if (problem !== null) throw new StateDirError(`agent settings: ${problem}`, 'EINVAL');
  const path = join(dir, AGENT_JSON_FILE);
  try {
    await writeFileAtomic(path, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  } catch (err) {
    throw fsError(err, `cannot write ${path}`);
  }
}

async function readOptional(path: string): Promise<string | null> {
  try {
    return await fsp.readFile(path, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw fsError(err, `cannot read ${path}`);
  }
}

/**
 * Why this process cannot write the state dir, if it cannot (DECISIONS H18): `read_only`
 * (EROFS: the filesystem is mounted read-only — often remounted so by the kernel after an
 * I/O error) or `denied` (EACCES/EPERM: this user may not write it). null when it can, or
 * when the check itself says nothing (the dir gone, the disk full: the caller's own errors
 * tell). access(2) sees a read-only mount; a filesystem the kernel stopped writing after an
 * error may still be mounted rw (ext4's emergency_ro), so an empty file is also created and
 * removed.
 */
export function stateDirWriteProblem(dir: string): { kind: 'read_only' | 'denied'; code: string } | null {
  const probe = join(dir, `.write-check-${process.pid}`);
  try {
    accessSync(dir, fsConstants.W_OK);
    closeSync(openSync(probe, 'w', 0o600));
    unlinkSync(probe);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return { kind: 'read_only', code };
    if (code === 'EACCES' || code === 'EPERM') return { kind: 'denied', code };
    return null;
  }
}

/** User `uid`'s entry in /etc/passwd: its name and primary group; null when it has none. */
export function passwdEntry(uid: number): { name: string; gid: number } | null {
  try {
    const fields = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => f[2] === String(uid));
    if (fields !== undefined && fields[0] && /^\d+$/.test(fields[3] ?? '')) return { name: fields[0], gid: Number(fields[3]) };
  } catch {
    // no /etc/passwd
  }
  return null;
}

/** The name of user `uid` (from /etc/passwd), or `uid N`. */
function userName(uid: number): string {
  return passwdEntry(uid)?.name ?? `uid ${uid}`;
}

/**
 * The words for a state folder (or a file in it) this user may not read or write (EACCES,
 * EPERM): who owns it and how to run the command instead. Running a command without sudo on
 * /var/lib/cortex-agent (0700) is the usual cause; it read "not enrolled" or "this is a bug".
 */
export function stateDirDeniedText(dir: string, code: string, what: 'read' | 'write'): string {
  let owner = '';
  for (const d of [dir, dirname(dir)]) {
    try {
      owner = userName(statSync(d).uid); // the folder's, or (not made yet) its parent's
      break;
    } catch {
      // gone, or not even stat-able: try the parent
    }
  }
  const me = currentUserName();
  const how =
    owner === me
      ? `its mode keeps its own owner out: chmod u+rwx ${shellQuote(dir)}`
      : owner === 'root'
      ? 'run the command as root (sudo cortex-agent …)'
      : owner === '' || owner.startsWith('uid ')
        ? "run the command as the agent's user or as root (e.g. sudo -u cortex-agent cortex-agent …)"
        : `run the command as ${owner} or as root (e.g. sudo -u ${owner} cortex-agent …)`;
  return `this user (${me}) may not ${what} the state folder ${dir} (${code})${owner !== '' ? `, which belongs to ${owner}` : ''}: ${how}`;
}

/** The words for a --state-dir that names a file. */
export function notAFolderText(dir: string, partOfPath = false): string {
  return `${partOfPath ? `a part of the path ${dir}` : dir} is a file, not a folder: give --state-dir the agent's state folder (the packaged unit's is /var/lib/cortex-agent)`;
}

/**
 * Why the state folder cannot be read, if it cannot: a file where the folder should be, or
 * EACCES/EPERM on listing it (stateDirDeniedText); null when it can be read (or is missing:
 * the caller says "not enrolled").
 */
export function stateDirReadDenied(dir: string): string | null {
  try {
    if (!statSync(dir).isDirectory()) return notAFolderText(dir);
  } catch {
    // missing, or its parent not searchable: access() below tells which
  }
  try {
    accessSync(dir, fsConstants.R_OK | fsConstants.X_OK);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EACCES' || code === 'EPERM' ? stateDirDeniedText(dir, code, 'read') : null;
  }
}

/** The words for a state dir on a read-only filesystem, and what to do (log, status, errors). */
export function readOnlyStateDirText(dir: string): string {
  return (
    `the state folder ${dir} is on a read-only filesystem (EROFS; after an I/O error the kernel remounts a filesystem read-only: dmesg says why): ` +
    'the agent cannot store entries, acks or source positions there. Repair the filesystem (umount, fsck) and mount it read-write'
  );
}

function fsError(err: unknown, what: string): StateDirError {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const c = typeof code === 'string' ? code : undefined;
  return new StateDirError(`${what}${c ? `: ${c}` : ''}`, c);
}
