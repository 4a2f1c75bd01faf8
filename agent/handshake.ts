// What `enroll` and the session share about the hello (seed 3): the agent's version, the
// hello params, how each auth error is explained to the operator, the state-machine event
// an error code leads to, and closing a socket cleanly.

import os from 'node:os';
import { AGENT_STATE_MACHINE, ErrorCode, LIMITS, PROTOCOL_VERSION, type AgentEvent, type AgentHelloParams } from '@cortex/agent-protocol';
import type WebSocket from 'ws';
import { detectPlatform } from './platform.js';

export const AGENT_VERSION = '0.1.0';

/**
 * Why a hello's accepted_seq cannot be streamed against (DECISIONS H1), or null when it can. One
 * at or near max_seq is taken (the conformance suite's agent/accepted-seq-at-max: a valid value
 * keeps the session); the buffer then refuses to number an entry past max_seq (H53).
 */
export function acceptedSeqProblem(acceptedSeq: unknown, hostId: string): string | null {
  if (typeof acceptedSeq === 'number' && Number.isSafeInteger(acceptedSeq) && acceptedSeq >= 0 && acceptedSeq <= LIMITS.max_seq) return null;
  return `the server reports accepted_seq ${String(acceptedSeq)}, beyond max_seq ${LIMITS.max_seq}; on the server run: cortex-server agent reset-seq ${hostId}`;
}

export interface HelloInput {
  hostname?: string;
  hostId: string;
  capabilities: AgentHelloParams['capabilities'];
  token: string;
  resumeFromSeq: number;
}

export function helloParams(h: HelloInput): AgentHelloParams {
  return {
    protocol_version: PROTOCOL_VERSION,
    agent_version: AGENT_VERSION,
    hostname: (h.hostname ?? os.hostname()).slice(0, 253) || 'localhost',
    host_id: h.hostId,
    platform: detectPlatform(),
    capabilities: h.capabilities,
    token: h.token,
    resume_from_seq: h.resumeFromSeq,
  };
}

/** The Authenticating event an error code leads to, read from the contract's state-machine data. */
export function authEventFor(code: number): AgentEvent | null {
  const t = AGENT_STATE_MACHINE.transitions.find((tr) => tr.from === 'Authenticating' && tr.errors?.includes(code));
  return t?.event ?? null;
}

export function authErrorMessage(code: number, hostId: string): string {
  switch (code) {
    case ErrorCode.AuthFailed:
      return `authentication failed (-32001 AuthFailed): the server does not accept this host_id and token; issue a new enrollment token on the server (agent issue --host-id ${hostId}) and run enroll again`;
    case ErrorCode.TokenRevoked:
      return `token revoked (-32002 TokenRevoked): this host was revoked or decommissioned; the token file was deleted and the agent will not reconnect`;
    case ErrorCode.AgentVersionUnsupported:
      return `agent version unsupported (-32003 AgentVersionUnsupported): the server requires a newer agent or protocol; upgrade the agent (this is ${AGENT_VERSION}, protocol ${PROTOCOL_VERSION})`;
    case ErrorCode.TokenRotationRequired:
      return `token rotation required (-32005 TokenRotationRequired): this token was rotated and its grace window has ended; re-enroll: run \`agent issue --host-id ${hostId}\` on the server, then enroll with the new token`;
    default:
      return `handshake rejected (${code})`;
  }
}

/** Closes a socket with code/reason and waits (≤ 1 s) for the close handshake. */
export function closeSocket(ws: WebSocket, code: number, reason: string): Promise<void> {
  return new Promise((resolve) => {
    if (ws.readyState === ws.CLOSED) return resolve();
    const timer = setTimeout(() => {
      ws.terminate();
      resolve();
    }, 1000);
    ws.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
    } catch {
      ws.terminate();
    }
  });
}
