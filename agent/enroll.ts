// `enroll`: one agent.hello with the one-time token; the rotated token is written
// atomically to DIR/token (0600) before anything else is sent, then DIR/host_id and
// DIR/agent.json. On an auth error nothing is written.

import { existsSync, rmSync } from 'node:fs';
import {
  AgentClient,
  ErrorCode,
  LIMITS,
  RpcError,
  createAgentPeer,
  webSocketTransport,
} from '@cortex/agent-protocol';
import { authErrorMessage, closeSocket, helloParams } from './handshake.js';
import { DurableBuffer } from './buffer/buffer.js';
import type { Logger } from './log.js';
import { openSocket } from './socket.js';
import { ensureStateDir, statePaths, writeAgentSettings, writeHostId } from './state-dir.js';
import { writeToken } from './token-store.js';

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

export async function enroll(o: EnrollOptions): Promise<EnrollResult> {
  await ensureStateDir(o.stateDir);
  const paths = statePaths(o.stateDir);
  // host_id and agent.json are written BEFORE the hello: the one-time token is spent the
  // moment the server answers, so once the rotated token is on disk the state dir must
  // already be complete — a kill between the writes must not leave a token that `run`
  // cannot use. (Files this call created are removed again when the enrollment fails.)
  const created = [paths.hostId, paths.agentJson].filter((f) => !existsSync(f));
  const serverUrls = [...new Set(o.serverUrls !== undefined && o.serverUrls.length > 0 ? o.serverUrls : [o.serverUrl])];
  await writeHostId(o.stateDir, o.hostId);
  await writeAgentSettings(o.stateDir, {
    server_url: serverUrls[0]!,
    ...(serverUrls.length > 1 ? { server_urls: serverUrls } : {}),
    allow_insecure: o.allowInsecure,
    ca_file: o.caFile,
  });
  let enrolled = false;
  const buffer = DurableBuffer.open(paths.bufferDb);
  try {
    let ws: Awaited<ReturnType<typeof openSocket>> | undefined;
    let usedUrl = serverUrls[0]!;
    const failures: string[] = [];
    for (const url of serverUrls) {
      try {
        ws = await openSocket(url, { caFile: o.caFile, timeoutMs: o.timeoutMs ?? 10_000 });
        usedUrl = url;
        break;
      } catch (err) {
        failures.push((err as Error).message);
        if (serverUrls.length > 1) o.logger.warn({ server_url: url, err: (err as Error).message }, 'enrollment: server unreachable, trying the next');
      }
    }
    if (ws === undefined) {
      const msg = failures.length === 1 ? failures[0]! : `no server answered: ${failures.join('; ')}`;
      throw new EnrollError(msg, 'upgrade_failed');
    }
    const peer = createAgentPeer(webSocketTransport(ws), { requestTimeoutMs: o.timeoutMs ?? 10_000 });
    const client = new AgentClient(peer);
    try {
      let result;
      try {
        result = await client.agentHello(
          helloParams({
            hostname: o.hostname,
            hostId: o.hostId,
            capabilities: { supported_probes: [], sources: ['custom'], max_batch_entries: 1000, compression: [] },
            token: o.token,
            resumeFromSeq: buffer.ackedSeq,
          }),
        );
      } catch (err) {
        if (err instanceof RpcError) {
          const known = [ErrorCode.AuthFailed, ErrorCode.TokenRevoked, ErrorCode.AgentVersionUnsupported, ErrorCode.TokenRotationRequired] as number[];
          const msg = known.includes(err.code) ? authErrorMessage(err.code, o.hostId) : `enrollment rejected (${err.code} ${err.message})`;
          throw new EnrollError(msg, err.code);
        }
        const code = (err as { code?: string }).code ?? 'error';
        // The server may still be enrolling the host (a slow database): it gives the one-time
        // token back when it finds the hello's socket gone (DECISIONS G16), so a retry works.
        const retry = code === 'timeout' ? ': the server did not answer in time (busy?); run enroll again with the same token — if it then says authentication failed, issue a new token on the server (agent issue --host-id ' + o.hostId + ')' : '';
        throw new EnrollError(`enrollment failed: ${(err as Error).message}${retry}`, code);
      }
      // The one-time token is now invalid: persist the new one before anything else.
      const token = typeof result.rotated_token === 'string' ? result.rotated_token : o.token;
      await writeToken(o.stateDir, token);
      enrolled = true;
      // From here on the enrollment has happened: whatever fails is a warning, not a failure.
      const warnings: string[] = [];
      if (!Number.isSafeInteger(result.accepted_seq) || result.accepted_seq > LIMITS.max_seq) {
        warnings.push(
          `the server reports accepted_seq ${result.accepted_seq}, beyond max_seq ${LIMITS.max_seq}: this host cannot stream until an operator runs "cortex-server agent reset-seq ${o.hostId}" on the server`,
        );
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
      };
    } finally {
      if (ws.readyState !== ws.CLOSED) await closeSocket(ws, 1000, `final_seq=${buffer.ackedSeq}`);
    }
  } finally {
    buffer.close();
    if (!enrolled) for (const f of created) rmSync(f, { force: true });
  }
}
