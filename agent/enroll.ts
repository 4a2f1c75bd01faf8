// `enroll`: one agent.hello with the one-time token; the rotated token is written
// atomically to DIR/token (0600) before anything else is sent, then DIR/host_id and
// DIR/agent.json. On an auth error nothing is written.

import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, rmdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import {
  AgentClient,
  ErrorCode,
  RpcError,
  createAgentPeer,
  webSocketTransport,
} from '@cortex/agent-protocol';
import { acceptedSeqProblem, authErrorMessage, authEventFor, closeSocket, helloParams } from './handshake.js';
import { DurableBuffer, readBufferSnapshot } from './buffer/buffer.js';
import type { Logger } from './log.js';
import { openSocket } from './socket.js';
import { syncFolder } from './buffer/durable.js';
import { CLEAN_CLOSE_MARK, SEQ_FILE, bufferWhole, closedAfterOpen } from './buffer/heal.js';
import { CONFIG_FILE } from './config-store.js';
import { RUN_LOCK_FILE, runLockHolder } from './run-lock.js';
import { writeFileAtomic } from './atomic-file.js';
import { AGENT_JSON_FILE, BUFFER_DB_FILE, HOST_ID_FILE, checkAgentSettings, ensureStateDir, passwdEntry, readHostId, statePaths, writeAgentSettings, writeHostId, type AgentSettings } from './state-dir.js';
import { STATUS_FILE } from './status-file.js';
import { TOKEN_FILE, writeToken } from './token-store.js';

export interface EnrollOptions {
  serverUrl: string;
  /**
   * Every server the agent may use (several servers on one database); `serverUrl` is the
   * first. The enrollment hello goes to the first whose upgrade succeeds, in this order; all
   * are kept in agent.json for `run`.
   */
  serverUrls?: readonly string[];
  token: string;
  hostId: string;
  stateDir: string;
  allowInsecure: boolean;
  caFile: string | null;
  logger: Logger;
  timeoutMs?: number;
  hostname?: string;
  /**
   * The state folder is enrolled as another host: start it afresh for this one, its files of
   * the other host (buffer, token, positions) moved into DIR/replaced-<old host_id>-<time>/.
   * Without it such a folder is refused (EnrollError 'enrolled_as_other').
   */
  replace?: boolean;
}

export interface EnrollResult {
  host_id: string;
  state_dir: string;
  /** The server that answered the enrollment hello. */
  server_url: string;
  /** Every server kept in agent.json. */
  server_urls: string[];
  session_id: string;
  accepted_seq: number;
  token_rotated: boolean;
  /** Problems after the token was written: the enrollment stands (the one-time token is spent), the operator has to act. */
  warnings?: string[];
  /** Where the files of the host this folder was enrolled as went (`replace`). */
  replaced?: { host_id: string; moved_to: string };
  /** The settings of the agent.json already there that enrollment kept (the caps, file.tail's paths, …: DECISIONS I22). */
  kept_settings?: string[];
  /** The agent.json already there was not valid: written afresh, and why the old one was refused. */
  settings_rewritten?: string;
}

/** The keys of agent.json that enroll writes; every other key of a file already there is kept. */
const ENROLL_KEYS: readonly string[] = ['server_url', 'server_urls', 'allow_insecure', 'ca_file'];

/**
 * agent.json as it is before enroll writes it: its text (put back when the enrollment fails),
 * and the settings enroll keeps (every key it does not write itself), or why none are kept.
 */
function previousSettings(path: string): { text: string | null; keep: Record<string, AgentSettings[string]>; invalid: string | null } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { text: null, keep: {}, invalid: null };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { text, keep: {}, invalid: `not valid JSON (${(err as Error).message})` };
  }
  const problem = checkAgentSettings(value);
  if (problem !== null) return { text, keep: {}, invalid: problem };
  const keep: Record<string, AgentSettings[string]> = {};
  for (const [k, v] of Object.entries(value as AgentSettings)) if (!ENROLL_KEYS.includes(k)) keep[k] = v;
  return { text, keep, invalid: null };
}

/** The enrollment hello on an open socket: the HelloResult, or an EnrollError saying why not. */
async function helloWith(ws: Awaited<ReturnType<typeof openSocket>>, o: EnrollOptions, ackedSeq: number): Promise<Awaited<ReturnType<AgentClient['agentHello']>>> {
  const peer = createAgentPeer(webSocketTransport(ws), { requestTimeoutMs: o.timeoutMs ?? 10_000 });
  const client = new AgentClient(peer);
  try {
    return await client.agentHello(
      helloParams({
        hostname: o.hostname,
        hostId: o.hostId,
        capabilities: { supported_probes: [], sources: ['custom'], max_batch_entries: 1000, compression: [] },
        token: o.token,
        resumeFromSeq: ackedSeq,
      }),
    );
  } catch (err) {
    if (err instanceof RpcError) {
      const known = [ErrorCode.AuthFailed, ErrorCode.TokenRevoked, ErrorCode.AgentVersionUnsupported, ErrorCode.TokenRotationRequired] as number[];
      const msg =
        err.code === ErrorCode.TokenRevoked
          ? // authErrorMessage speaks of a running agent's token file; at enroll there is none yet
            `token revoked (-32002 TokenRevoked): the server holds host ${o.hostId} as revoked or decommissioned, so nothing was enrolled; to take the host back, issue a new token for it on the server (agent issue --host-id ${o.hostId}) and run enroll again`
          : known.includes(err.code)
            ? authErrorMessage(err.code, o.hostId)
            : `enrollment rejected (${err.code} ${err.message})`;
      throw new EnrollError(msg, err.code);
    }
    const code = (err as { code?: string }).code ?? 'error';
    // The server may still be enrolling the host (a slow database): it gives the one-time
    // token back when it finds the hello's socket gone (DECISIONS G16), so a retry works.
    const retry = code === 'timeout' ? ': the server did not answer in time (busy?); run enroll again with the same token — if it then says authentication failed, issue a new token on the server (agent issue --host-id ' + o.hostId + ')' : '';
    throw new EnrollError(`enrollment failed: ${(err as Error).message}${retry}`, code);
  }
}

export class EnrollError extends Error {
  override readonly name = 'EnrollError';
  constructor(
    message: string,
    readonly code: number | string,
  ) {
    super(message);
  }
}

/** The files that belong to the host a state folder is enrolled as (moved aside by `replace`). */
const HOST_FILES = [TOKEN_FILE, HOST_ID_FILE, ...['', '-wal', '-shm', '.reserve', CLEAN_CLOSE_MARK].map((suffix) => `${BUFFER_DB_FILE}${suffix}`), SEQ_FILE, CONFIG_FILE, STATUS_FILE];

/** The user `enroll` run as root becomes: the owner of the state folder (stateFolderOwner). */
export interface FolderOwner {
  uid: number;
  /** The user's primary group (/etc/passwd), else the folder's group. */
  gid: number;
  /** Its name, or `#UID` for a uid without a passwd entry (as sudo -u takes it). */
  name: string;
  /** Whether it has a passwd entry (its supplementary groups are then set from /etc/group). */
  named: boolean;
}

/**
 * For `enroll` run as root: the owner of an existing state folder when that is another user —
 * the service's (`install -d -o cortex-agent …`, systemd's StateDirectory=), whose agent must
 * read and write every file enroll writes there. Null when not root, when the folder does not
 * exist yet (root makes it; systemd hands a StateDirectory= over to its user at start) or
 * belongs to root. Enrolling as root into such a folder left root's files (0600) there, and the
 * service failed at its next start with E_FILE_ACCESS.
 */
export function stateFolderOwner(stateDir: string): FolderOwner | null {
  if (typeof process.geteuid !== 'function' || process.geteuid() !== 0) return null;
  let st: Stats;
  try {
    st = statSync(stateDir);
  } catch {
    return null;
  }
  if (!st.isDirectory() || st.uid === 0) return null;
  const entry = passwdEntry(st.uid);
  return { uid: st.uid, gid: entry?.gid ?? st.gid, name: entry?.name ?? `#${st.uid}`, named: entry !== null };
}

/** The agent's files in the state folder that belong to a user other than `uid` (left by a command run as root). */
export function agentFilesOwnedByOthers(stateDir: string, uid: number): string[] {
  return [...HOST_FILES, AGENT_JSON_FILE, RUN_LOCK_FILE].filter((name) => {
    try {
      return lstatSync(join(stateDir, name)).uid !== uid;
    } catch {
      return false;
    }
  });
}

/**
 * Becomes `owner` for the rest of this process, as `sudo -u OWNER` would have started it: its
 * groups, then its group, then its user (the order in which each can still be changed). Every
 * file enroll then writes — the token, agent.json, the buffer and SQLite's own files — is the
 * owner's as it is made: nothing is written as root in a folder another user controls, and no
 * file needs chown afterwards.
 */
export function becomeFolderOwner(owner: FolderOwner): void {
  // process.initgroups (the user's groups from /etc/group) is in Node, not in its type declarations
  const initgroups = (process as { initgroups?: (user: string, extraGroup: number) => void }).initgroups;
  if (owner.named && initgroups !== undefined) initgroups.call(process, owner.name, owner.gid);
  else process.setgroups!([owner.gid]);
  process.setgid!(owner.gid);
  process.setuid!(owner.uid);
}

export async function enroll(o: EnrollOptions): Promise<EnrollResult> {
  const dirExisted = existsSync(o.stateDir);
  await ensureStateDir(o.stateDir);
  const paths = statePaths(o.stateDir);
  // Nothing is written (and the token not sent) while `run` uses the folder, nor over another host's.
  const running = runLockHolder(o.stateDir);
  if (running !== null) {
    throw new EnrollError(`a cortex-agent run (pid ${running}) is using the state folder ${o.stateDir}: stop it first (systemctl stop cortex-agent, or kill ${running}), then enroll`, 'agent_running');
  }
  const previous = await readHostId(o.stateDir);
  let replaced: EnrollResult['replaced'];
  if (previous !== null && previous !== o.hostId) {
    if (o.replace !== true) throw new EnrollError(enrolledAsOtherText(o.stateDir, previous, o.hostId), 'enrolled_as_other');
    replaced = { host_id: previous, moved_to: moveHostFiles(o.stateDir, previous) };
    o.logger.debug({ previous_host_id: previous, moved_to: replaced.moved_to }, 'the state folder was enrolled as another host: its files were moved aside');
  }
  // host_id and agent.json are written BEFORE the hello: the one-time token is spent the
  // moment the server answers, so once the rotated token is on disk the state dir must
  // already be complete — a kill between the writes must not leave a token that `run`
  // cannot use. (Files this call created are removed again when the enrollment fails.)
  // An agent.json already there keeps the settings enroll does not write (the buffer's caps,
  // file.tail's paths: the machine's, not the enrollment's), and is put back as it was when
  // the enrollment fails: a mistyped --server must not leave a working agent pointing at it.
  // A failed enrollment takes back every file it created, the buffer's too (a refused token
  // left buffer.db and its 1 MiB reserve in a fresh folder), and the folder when it made it.
  const bufferFiles = ['', '-wal', '-shm', '.reserve', CLEAN_CLOSE_MARK].map((suffix) => `${paths.bufferDb}${suffix}`);
  const created = [paths.hostId, paths.agentJson, ...(existsSync(paths.bufferDb) ? [] : bufferFiles)].filter((f) => !existsSync(f));
  const before = previousSettings(paths.agentJson);
  const serverUrls = [...new Set(o.serverUrls !== undefined && o.serverUrls.length > 0 ? o.serverUrls : [o.serverUrl])];
  await writeHostId(o.stateDir, o.hostId);
  await writeAgentSettings(o.stateDir, {
    server_url: serverUrls[0]!,
    ...(serverUrls.length > 1 ? { server_urls: serverUrls } : {}),
    allow_insecure: o.allowInsecure,
    ca_file: o.caFile,
    ...before.keep,
  });
  // The proxy of an agent.json already there (kept, as `run` will use it); else the environment's (F13).
  const kept = before.keep['proxy'];
  const proxy = typeof kept === 'string' || kept === null ? kept : undefined;
  let enrolled = false;
  // buffer.db opened and closed here must not read as a -wal lost after a killed run (DECISIONS F16)
  const bufferWasWhole = bufferWhole(o.stateDir);
  const buffer = DurableBuffer.open(paths.bufferDb);
  try {
    let ws: Awaited<ReturnType<typeof openSocket>> | undefined;
    let usedUrl = serverUrls[0]!;
    let result: Awaited<ReturnType<AgentClient['agentHello']>> | undefined;
    const failures: string[] = [];
    // Refusals for good from servers of several (-32001, -32003, -32005): a server on another
    // database does not know the token, so it is not spent there; the next server is asked (F12).
    const refusals: { url: string; error: EnrollError }[] = [];
    for (const url of serverUrls) {
      try {
        ws = await openSocket(url, { caFile: o.caFile, timeoutMs: o.timeoutMs ?? 10_000, ...(proxy !== undefined ? { proxy } : {}) });
        usedUrl = url;
      } catch (err) {
        failures.push((err as Error).message);
        if (serverUrls.length > 1) o.logger.warn({ server_url: url, err: (err as Error).message }, 'enrollment: server unreachable, trying the next');
        continue;
      }
      try {
        result = await helloWith(ws, o, buffer.ackedSeq);
        break;
      } catch (err) {
        const more = url !== serverUrls[serverUrls.length - 1];
        if (!(err instanceof EnrollError && typeof err.code === 'number' && authEventFor(err.code) === 'auth_fatal' && (more || refusals.length > 0))) {
          if (ws.readyState !== ws.CLOSED) await closeSocket(ws, 1000, `final_seq=${buffer.ackedSeq}`);
          throw err;
        }
        if (ws.readyState !== ws.CLOSED) await closeSocket(ws, 1000, `final_seq=${buffer.ackedSeq}`);
        ws = undefined;
        refusals.push({ url, error: err });
        if (more) o.logger.warn({ server_url: url, code: err.code }, `enrollment: ${url} refused it (${err.message}); trying the next`);
      }
    }
    if (ws === undefined || result === undefined) {
      if (refusals.length > 0) {
        const last = refusals[refusals.length - 1]!.error;
        const each = refusals.map((r) => r.url).join(', ');
        throw new EnrollError(`${last.message} (refused by ${refusals.length === 1 ? each : `each of ${each}`}${failures.length > 0 ? `; not reached: ${failures.join('; ')}` : ''})`, last.code);
      }
      const msg = failures.length === 1 ? failures[0]! : `no server answered: ${failures.join('; ')}`;
      throw new EnrollError(msg, 'upgrade_failed');
    }
    try {
      // The one-time token is now invalid: persist the new one before anything else.
      const token = typeof result.rotated_token === 'string' ? result.rotated_token : o.token;
      await writeToken(o.stateDir, token);
      enrolled = true;
      // From here on the enrollment has happened: whatever fails is a warning, not a failure.
      const warnings: string[] = [];
      const seqProblem = acceptedSeqProblem(result.accepted_seq, o.hostId);
      if (seqProblem !== null) {
        warnings.push(`${seqProblem} (this host cannot stream until then)`);
      } else {
        try {
          const r = buffer.applyAccepted(result.accepted_seq);
          if (r.jumped) o.logger.warn({ accepted_seq: result.accepted_seq, next_seq: r.nextSeq }, 'next_seq jumped past the server accepted_seq');
        } catch (err) {
          warnings.push(`enrolled, but the buffer could not record accepted_seq (${(err as Error).message}); "cortex-agent run" applies it at its first hello`);
        }
      }
      try {
        await closeSocket(ws, 1000, `final_seq=${buffer.ackedSeq}`);
      } catch {
        // the socket is gone either way
      }
      return {
        host_id: o.hostId,
        state_dir: o.stateDir,
        server_url: usedUrl,
        server_urls: serverUrls,
        session_id: result.session_id,
        accepted_seq: result.accepted_seq,
        token_rotated: typeof result.rotated_token === 'string',
        ...(warnings.length > 0 ? { warnings } : {}),
        ...(replaced !== undefined ? { replaced } : {}),
        ...(Object.keys(before.keep).length > 0 ? { kept_settings: Object.keys(before.keep) } : {}),
        ...(before.invalid !== null ? { settings_rewritten: before.invalid } : {}),
      };
    } finally {
      if (ws.readyState !== ws.CLOSED) await closeSocket(ws, 1000, `final_seq=${buffer.ackedSeq}`);
    }
  } finally {
    buffer.close();
    closedAfterOpen(o.stateDir, bufferWasWhole);
    if (!enrolled) {
      for (const f of created) rmSync(f, { force: true });
      if (before.text !== null) {
        await writeFileAtomic(paths.agentJson, before.text, { mode: 0o600 }).catch((err: unknown) =>
          o.logger.warn({ err: (err as Error).message }, `the enrollment failed and ${paths.agentJson} could not be put back as it was: check its server URLs before the next start`),
        );
      }
      // Not enrolled: the folder goes back to the host it was (the other host's files return).
      if (replaced !== undefined) moveBack(o.stateDir, replaced.moved_to);
      if (!dirExisted) {
        try {
          rmdirSync(o.stateDir); // only when empty: nothing of anyone else's goes
        } catch {
          // not empty, or not ours to remove: left
        }
      }
    }
  }
}

/** What refusing a folder enrolled as another host says: what would happen, and the two ways on. */
function enrolledAsOtherText(stateDir: string, previous: string, hostId: string): string {
  let unsent = '';
  try {
    // read-only: a refusal writes nothing, not even a buffer where there is none
    const depth = readBufferSnapshot(join(stateDir, BUFFER_DB_FILE)).stats.queueDepth;
    if (depth > 0) unsent = ` (${depth} log entries not yet sent)`;
  } catch {
    // no buffer, or one that cannot be read: nothing to count
  }
  return (
    `the state folder ${stateDir} is enrolled as host ${previous}${unsent}: enrolling it as ${hostId} would ${unsent !== '' ? 'send them, and ' : ''}read the log files on from where ${previous} stopped, as ${hostId} ` +
    `(to enroll ${previous} itself again, use a token from "cortex-server agent issue --host-id ${previous}")`
  );
}

/** Moves the previous host's files into DIR/replaced-<host_id>-<time>/ (0700) and returns that folder. */
function moveHostFiles(stateDir: string, previous: string): string {
  const to = join(stateDir, `replaced-${previous}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(to, { mode: 0o700 });
  for (const name of HOST_FILES) {
    try {
      renameSync(join(stateDir, name), join(to, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  syncFolder(to);
  syncFolder(stateDir);
  return to;
}

/** An enrollment with `replace` that failed: the previous host's files go back where they were. */
function moveBack(stateDir: string, from: string): void {
  for (const name of HOST_FILES) {
    rmSync(join(stateDir, name), { force: true }); // what the failed enrollment made (a new buffer)
    try {
      renameSync(join(from, name), join(stateDir, name));
    } catch {
      // not there
    }
  }
  rmSync(from, { recursive: true, force: true });
  syncFolder(stateDir);
}
