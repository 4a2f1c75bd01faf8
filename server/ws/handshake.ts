// The handshake decision (seed section 3, in its order): PURE. The hello's params, the host's
// row, the settings and the time go in; the verdict comes out — the error to answer with and
// the close code, or the row change to make (activation, with or without a token rotation)
// and, once it is made, the HelloResult. No I/O here: ./hello-flow.ts reads the row, applies
// the change and sends the answer. Every verdict of a hello lives in this file
// (test/server/handshake-table.test.ts tests it as a table; scripts/mutants/ranges.mjs
// mutates it).
import {
  AgentVersionUnsupportedError,
  AuthFailedError,
  InvalidParamsError,
  LIMITS,
  PROTOCOL_VERSION,
  TokenRevokedError,
  TokenRotationRequiredError,
  toIssues,
  validateAgentConfig,
  validateAgentHelloParams,
  type AgentConfig,
  type AgentHelloParams,
  type AgentHelloResult,
  type RpcError,
} from '@cortex/agent-protocol';
import { hashToken, hashesEqual } from '../auth/tokens.js';
import type { HelloLookup, SessionStart } from '../db/agents.repository.js';
import { isAgentVersionSupported } from '../version.js';

/** The settings a hello verdict depends on (a subset of ServerSettings). */
export interface HandshakeSettings {
  readonly required_protocol_version: number;
  readonly min_agent_version: string | undefined;
  readonly rotation_grace_secs: number;
}

/** What the decision needs to know. */
export interface HelloInput {
  /** agent.hello params as received (not validated yet). */
  readonly params: unknown;
  /** The host's row, looked up by helloHostId(params); undefined when there is none. */
  readonly row: HelloLookup | undefined;
  /** Expiry of the host's one-time enrollment token (consulted for a NeverConnected row only). */
  readonly enrollmentExpiresAt?: string | undefined;
  readonly settings: HandshakeSettings;
  readonly now: Date;
  /** The new session's id (the caller draws it: randomUUID). */
  readonly sessionId: string;
  /** The server that will hold the session (agents.server_id). */
  readonly serverId: string;
  /** Draws a new token when the verdict rotates (the caller passes generateToken). */
  readonly mintToken: () => string;
}

/** A structured log line the caller writes with the verdict. */
export interface HelloLogLine {
  readonly level: 'info';
  readonly msg: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** A refused hello: answer `error`, then close with `closeCode`. */
export interface HelloRefusal {
  readonly kind: 'refuse';
  readonly error: RpcError;
  readonly closeCode: number;
  /** The host the hello named (for the log line); normalised once it was checked. */
  readonly host_id: string | undefined;
  /** A row change to make before answering: a decommissioned host is revoked now (DESIGN 5.13). */
  readonly change?: { readonly op: 'revoke'; readonly host_id: string };
  readonly log?: HelloLogLine;
}

/** The row change of an accepted hello: one compare-and-set statement (agents.repository.ts). */
export type Activation =
  | { readonly op: 'first_enrollment'; readonly presented_hash: string; readonly new_token_hash: string }
  | { readonly op: 'rotate'; readonly presented_hash: string; readonly new_token_hash: string; readonly grace_until: string }
  | { readonly op: 'activate'; readonly presented_hash: string; readonly clear_prev: boolean };

/** An accepted hello: make `change`, then answer (helloAnswer) with `rotatedToken` if any. */
export interface HelloAcceptance {
  readonly kind: 'accept';
  readonly host_id: string;
  readonly session_id: string;
  readonly hello: AgentHelloParams;
  readonly start: SessionStart;
  readonly change: Activation;
  readonly rotatedToken: string | undefined;
  /** What the handshakes metric counts it as. */
  readonly outcome: 'ok' | 'enrolled' | 'rotated';
  /** When the change does not apply (the row moved on meanwhile): the refusal instead. */
  readonly onConflict: () => HelloRefusal;
  /** accepted_seq and config_version of the row as read (for when the re-read finds nothing). */
  readonly row: Pick<HelloLookup, 'accepted_seq' | 'config_version'>;
}

export type HelloDecision = HelloRefusal | HelloAcceptance;

/** A hash that no token has: unknown hosts cost the same comparisons as known ones. */
const NO_HASH = '0'.repeat(64);

function refuse(error: RpcError, closeCode: number, host_id: unknown, extra: Pick<HelloRefusal, 'change' | 'log'> = {}): HelloRefusal {
  return { kind: 'refuse', error, closeCode, host_id: typeof host_id === 'string' ? host_id : undefined, ...extra };
}

function paramsObject(params: unknown): Record<string, unknown> {
  return (params !== null && typeof params === 'object' && !Array.isArray(params) ? params : {}) as Record<string, unknown>;
}

/** The host id to look the row up by (lower case), when the hello names a well-formed one. */
export function helloHostId(params: unknown): string | undefined {
  const raw = paramsObject(params)['host_id'];
  return typeof raw === 'string' && /^[0-9a-fA-F-]{36}$/.test(raw) ? raw.toLowerCase() : undefined;
}

/**
 * The checks that need no row (protocol version, agent version floor): a refusal, or
 * undefined when the hello may go on to the row lookup.
 */
export function screenHello(params: unknown, s: HandshakeSettings): HelloRefusal | undefined {
  const p = paramsObject(params);
  const hostIdRaw = p['host_id'];
  const pv = p['protocol_version'];
  if (pv === undefined) {
    // Not a version mismatch: a hello without the field is malformed (DECISIONS H10).
    const issue = { path: '/protocol_version', message: `is required (this server speaks protocol_version ${PROTOCOL_VERSION})` };
    return refuse(new InvalidParamsError({ method: 'agent.hello', errors: [issue] }, 'InvalidParams'), 4001, hostIdRaw);
  }
  if (pv !== PROTOCOL_VERSION || pv < s.required_protocol_version) {
    const required_protocol_version = Math.max(s.required_protocol_version, PROTOCOL_VERSION);
    // `current` is the version the hello sent; one that is no integer ("1", 1.5) has no
    // `current` to give (the data's `current` is an integer): it said `current: 1`, the very
    // version required (DECISIONS H71). Still -32003: the contract's vector for a
    // protocol_version of the wrong type expects it.
    const data = typeof pv === 'number' && Number.isInteger(pv) ? { required_protocol_version, current: pv } : { required_protocol_version, reason: `protocol_version must be an integer (this server speaks protocol_version ${PROTOCOL_VERSION})` };
    return refuse(new AgentVersionUnsupportedError(data, 'AgentVersionUnsupported'), 4001, hostIdRaw);
  }
  const av = p['agent_version'];
  if (typeof av === 'string' && !isAgentVersionSupported(av, s.min_agent_version)) {
    return refuse(new AgentVersionUnsupportedError({ min_agent_version: s.min_agent_version as string, agent_version: av }, 'AgentVersionUnsupported'), 4001, hostIdRaw);
  }
  return undefined;
}

/** True when the verdict on this row may depend on the enrollment token's expiry. */
export function needsEnrollmentExpiry(row: HelloLookup | undefined): boolean {
  return row !== undefined && row.connection_state === 'NeverConnected';
}

/** The refusal when the activation's compare-and-set finds the row moved on. */
function activationLost(host_id: string): HelloRefusal {
  return refuse(new AuthFailedError({ reason: 'token_hash_mismatch' }, 'AuthFailed'), 4001, host_id);
}

/** agent.hello in the seed's order: envelope (done by the caller), protocol, version, token, schema. */
export function decideHello(input: HelloInput): HelloDecision {
  const { params, row, now } = input;
  const s = input.settings;
  const screened = screenHello(params, s);
  if (screened !== undefined) return screened;
  const p = paramsObject(params);
  const hostIdRaw = p['host_id'];
  const token = typeof p['token'] === 'string' ? (p['token'] as string) : '';
  const host_id = helloHostId(params);
  const presented = hashToken(token);
  const matchCurrent = hashesEqual(presented, row?.token_hash ?? NO_HASH);
  const matchPrev = hashesEqual(presented, row?.token_hash_prev ?? NO_HASH);
  const authFailed = () => new AuthFailedError({ reason: 'token_hash_mismatch' }, 'AuthFailed');
  if (row === undefined || host_id === undefined) return refuse(authFailed(), 4001, hostIdRaw);
  if (row.connection_state === 'Revoked' || (row.token_hash === null && row.token_hash_prev === null)) {
    return refuse(new TokenRevokedError({ reason: 'revoked' }, 'TokenRevoked'), 4002, host_id);
  }
  if (!matchCurrent && !matchPrev) return refuse(authFailed(), 4001, host_id);
  const nowIso = now.toISOString();
  const inGrace = row.token_rotation_grace_until !== null && nowIso < row.token_rotation_grace_until;
  if (!matchCurrent && !inGrace) {
    return refuse(new TokenRotationRequiredError({ reason: 'the previous token is no longer valid: re-enroll with `agent issue --host-id`' }, 'TokenRotationRequired'), 4001, host_id);
  }
  const enrolling = matchCurrent && row.connection_state === 'NeverConnected';
  if (enrolling) {
    // One-time enrollment tokens expire (DECISIONS H8).
    const expires = input.enrollmentExpiresAt;
    if (expires !== undefined && expires <= nowIso) {
      const log: HelloLogLine = { level: 'info', msg: 'enrollment token expired: issue a new one with `agent issue --host-id`', fields: { host_id, expires_at: expires } };
      return refuse(new AuthFailedError({ reason: 'expired' }, 'AuthFailed'), 4001, host_id, { log });
    }
  }
  if (row.decommission_requested_at !== null) {
    // Decommissioned while not connected (or its server went away): revoke now (DESIGN 5.13).
    const log: HelloLogLine = { level: 'info', msg: 'hello from a decommissioned host: revoked', fields: { host_id } };
    return refuse(new TokenRevokedError({ reason: 'decommissioned' }, 'TokenRevoked'), 4002, host_id, { change: { op: 'revoke', host_id }, log });
  }
  if (!validateAgentHelloParams(params)) {
    const issues = toIssues(validateAgentHelloParams.errors).slice(0, 20).map((i) => ({ ...i }));
    return refuse(new InvalidParamsError({ method: 'agent.hello', errors: issues }, 'InvalidParams'), 4001, host_id);
  }
  const hello: AgentHelloParams = params;
  if (typeof hello.resume_from_seq === 'number' && hello.resume_from_seq > LIMITS.max_seq) {
    const issue = { path: '/resume_from_seq', message: `must be at most max_seq = ${LIMITS.max_seq} (2^53 - 1)` };
    return refuse(new InvalidParamsError({ method: 'agent.hello', errors: [issue] }, 'InvalidParams'), 4001, host_id);
  }

  // Authenticated: which row change (and rotation) this session gets.
  const start: SessionStart = {
    session_id: input.sessionId,
    agent_version: hello.agent_version,
    hostname: hello.hostname,
    platform_json: JSON.stringify(hello.platform),
    capabilities_json: JSON.stringify(hello.capabilities),
    last_handshake: nowIso,
    server_id: input.serverId,
  };
  let rotatedToken: string | undefined;
  let change: Activation;
  if (enrolling) {
    rotatedToken = input.mintToken(); // first enrollment: no grace window
    change = { op: 'first_enrollment', presented_hash: presented, new_token_hash: hashToken(rotatedToken) };
  } else if (!matchCurrent) {
    rotatedToken = input.mintToken(); // previous token inside its grace window: rotate again (DESIGN 5.2)
    change = { op: 'rotate', presented_hash: presented, new_token_hash: hashToken(rotatedToken), grace_until: row.token_rotation_grace_until as string };
  } else if (row.rotate_requested_at !== null) {
    rotatedToken = input.mintToken(); // `agent rotate` asked for it (DESIGN 5.2)
    const graceSecs = row.rotation_grace_secs ?? s.rotation_grace_secs;
    change = { op: 'rotate', presented_hash: presented, new_token_hash: hashToken(rotatedToken), grace_until: new Date(now.getTime() + graceSecs * 1000).toISOString() };
  } else {
    change = { op: 'activate', presented_hash: presented, clear_prev: row.token_hash_prev !== null };
  }
  return {
    kind: 'accept',
    host_id,
    session_id: input.sessionId,
    hello,
    start,
    change,
    rotatedToken,
    outcome: rotatedToken === undefined ? 'ok' : row.connection_state === 'NeverConnected' ? 'enrolled' : 'rotated',
    onConflict: () => activationLost(host_id),
    row: { accepted_seq: row.accepted_seq, config_version: row.config_version },
  };
}

/** The row's state once the activation applied (returned by the activation), as the answer needs it. */
export interface ActivatedRow {
  readonly accepted_seq: number | bigint | string;
  readonly config_version: number | bigint | string;
  readonly agent_config_json: string | null;
  readonly config_apply_after: string | null;
}

export interface HelloAnswer {
  readonly result: AgentHelloResult;
  readonly accepted_seq: number;
  readonly config_version: number;
  /** A config staged for later (apply_after in the future): sent as config.update right after. */
  readonly staged: { readonly config: AgentConfig; readonly apply_after: string } | undefined;
  /** The stored config did not validate: the server default was sent (log it). */
  readonly storedConfigInvalid: boolean;
  /** The agent acked more than the database holds (restored from an older copy?). */
  readonly lost: { readonly resume_from_seq: number; readonly accepted_seq: number; readonly lost: number } | undefined;
}

/** A stored AgentConfig JSON text, when it parses and validates. */
export function parseStoredConfig(json: string): AgentConfig | undefined {
  try {
    const parsed: unknown = JSON.parse(json);
    return validateAgentConfig(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The HelloResult of an accepted hello, from the row as it is after the activation. */
export function helloAnswer(
  accepted: HelloAcceptance,
  current: ActivatedRow | undefined,
  opts: { readonly serverVersion: string; readonly defaultConfig: AgentConfig; readonly now: Date },
): HelloAnswer {
  const nowIso = opts.now.toISOString();
  const accepted_seq = Number(current?.accepted_seq ?? accepted.row.accepted_seq);
  const json = current?.agent_config_json ?? null;
  const applyAfter = current?.config_apply_after ?? null;
  let config = opts.defaultConfig;
  let storedConfigInvalid = false;
  if (json !== null && (applyAfter === null || applyAfter <= nowIso)) {
    const stored = parseStoredConfig(json);
    if (stored !== undefined) config = stored;
    else storedConfigInvalid = true;
  }
  let staged: HelloAnswer['staged'];
  if (json !== null && applyAfter !== null && applyAfter > nowIso) {
    const cfg = parseStoredConfig(json);
    if (cfg !== undefined) staged = { config: cfg, apply_after: applyAfter };
  }
  const resume = accepted.hello.resume_from_seq;
  const lost = typeof resume === 'number' && resume > accepted_seq ? { resume_from_seq: resume, accepted_seq, lost: resume - accepted_seq } : undefined;
  const result: AgentHelloResult = {
    server_version: opts.serverVersion,
    server_time: nowIso,
    accepted_seq,
    session_id: accepted.session_id,
    config,
    ...(accepted.rotatedToken !== undefined ? { rotated_token: accepted.rotatedToken } : {}),
  };
  return { result, accepted_seq, config_version: Number(current?.config_version ?? accepted.row.config_version), staged, storedConfigInvalid, lost };
}
