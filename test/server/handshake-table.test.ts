// The handshake decision (server/ws/handshake.ts) as a table: each row is a hello and the
// host's row as read, and the verdict it must give — the error answered (code, message, data)
// and the close code, or the row change (activation, rotation) and the rotated token. No
// server, no database: the decision is pure. Every error and close code a hello can get from
// the decision is here (-32001, -32002, -32003, -32005, -32602; 4001, 4002); the envelope
// (-32600/-32700), the hello timer (4000) and the pre-hello limits (1009) come before the
// decision and are tested on the wire (handshake.test.ts, wire-limits.test.ts).
import { describe, expect, it } from 'vitest';
import { LIMITS, validateAgentHelloResult, type AgentConfig } from '@cortex/agent-protocol';
import { hashToken } from '../../server/auth/tokens.js';
import type { HelloLookup } from '../../server/db/agents.repository.js';
import {
  decideHello,
  helloAnswer,
  helloHostId,
  needsEnrollmentExpiry,
  screenHello,
  type HandshakeSettings,
  type HelloDecision,
  type HelloInput,
} from '../../server/ws/handshake.js';

const HOST = '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01';
const TOKEN = 'T'.repeat(43);
const PREV = 'P'.repeat(43);
const MINTED = 'M'.repeat(43);
const SESSION = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
const NOW = new Date('2026-06-01T12:00:00.000Z');
const EARLIER = '2026-06-01T11:00:00.000Z';
const LATER = '2026-06-01T13:00:00.000Z';
const SETTINGS: HandshakeSettings = { required_protocol_version: 1, min_agent_version: '0.1.0', rotation_grace_secs: 600 };

function hello(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    protocol_version: 1,
    agent_version: '0.1.0',
    hostname: 'web-1',
    host_id: HOST,
    platform: { os: 'linux', arch: 'x86_64', kernel: '6.6.21', distro: null },
    capabilities: { supported_probes: ['proc.top'], sources: ['custom'], max_batch_entries: 1000, compression: [] },
    token: TOKEN,
    resume_from_seq: 0,
    ...over,
  };
}

function row(over: Partial<HelloLookup> = {}): HelloLookup {
  return {
    host_id: HOST,
    hostname: 'web-1',
    connection_state: 'Disconnected',
    token_hash: hashToken(TOKEN),
    token_hash_prev: null,
    token_rotated_at: null,
    token_rotation_grace_until: null,
    rotate_requested_at: null,
    rotation_grace_secs: null,
    accepted_seq: 41,
    session_id: null,
    agent_config_json: null,
    config_apply_after: null,
    config_version: 3,
    decommission_requested_at: null,
    decommission_drain_secs: null,
    control_rev: 7,
    ...over,
  };
}

function decide(params: unknown, r: HelloLookup | undefined, over: Partial<HelloInput> = {}): HelloDecision {
  return decideHello({ params, row: r, settings: SETTINGS, now: NOW, sessionId: SESSION, serverId: 'srv-a', mintToken: () => MINTED, ...over });
}

interface Refused {
  code: number;
  message: string;
  data?: unknown;
  close: number;
  /** The row change made before answering (a decommissioned host is revoked). */
  change?: unknown;
}

const REFUSALS: Array<{ name: string; params: unknown; row: HelloLookup | undefined; input?: Partial<HelloInput>; want: Refused }> = [
  // protocol and agent version floors (before the token and the schema)
  {
    name: 'protocol_version missing: malformed, not a version mismatch (DECISIONS H10)',
    params: (({ protocol_version: _, ...rest }) => rest)(hello()),
    row: row(),
    want: { code: -32602, message: 'InvalidParams', data: { method: 'agent.hello', errors: [{ path: '/protocol_version', message: 'is required (this server speaks protocol_version 1)' }] }, close: 4001 },
  },
  { name: 'protocol_version 2', params: hello({ protocol_version: 2 }), row: row(), want: { code: -32003, message: 'AgentVersionUnsupported', data: { required_protocol_version: 1, current: 2 }, close: 4001 } },
  { name: 'protocol_version "1" (a string): no current (it is not an integer), not current 1 (DECISIONS H71)', params: hello({ protocol_version: '1' }), row: row(), want: { code: -32003, message: 'AgentVersionUnsupported', data: { required_protocol_version: 1, reason: 'protocol_version must be an integer (this server speaks protocol_version 1)' }, close: 4001 } },
  { name: 'protocol_version 1.5: no current either', params: hello({ protocol_version: 1.5 }), row: row(), want: { code: -32003, message: 'AgentVersionUnsupported', data: { required_protocol_version: 1, reason: 'protocol_version must be an integer (this server speaks protocol_version 1)' }, close: 4001 } },
  {
    name: 'protocol_version 1 below required_protocol_version 2',
    params: hello(),
    row: row(),
    input: { settings: { ...SETTINGS, required_protocol_version: 2 } },
    want: { code: -32003, message: 'AgentVersionUnsupported', data: { required_protocol_version: 2, current: 1 }, close: 4001 },
  },
  {
    name: 'protocol_version 2 with a wrong token: the version is checked first',
    params: hello({ protocol_version: 2, token: 'x'.repeat(43) }),
    row: undefined,
    want: { code: -32003, message: 'AgentVersionUnsupported', data: { required_protocol_version: 1, current: 2 }, close: 4001 },
  },
  { name: 'agent_version below min_agent_version', params: hello({ agent_version: '0.0.9' }), row: row(), want: { code: -32003, message: 'AgentVersionUnsupported', data: { min_agent_version: '0.1.0', agent_version: '0.0.9' }, close: 4001 } },
  { name: 'a pre-release ranks below its release', params: hello({ agent_version: '0.1.0-rc.1' }), row: row(), want: { code: -32003, message: 'AgentVersionUnsupported', data: { min_agent_version: '0.1.0', agent_version: '0.1.0-rc.1' }, close: 4001 } },
  // token
  { name: 'unknown host', params: hello(), row: undefined, want: { code: -32001, message: 'AuthFailed', data: { reason: 'token_hash_mismatch' }, close: 4001 } },
  { name: 'host_id that is not a UUID (the row is not consulted)', params: hello({ host_id: 'web-1' }), row: row(), want: { code: -32001, message: 'AuthFailed', data: { reason: 'token_hash_mismatch' }, close: 4001 } },
  { name: 'no token at all', params: hello({ token: undefined }), row: row(), want: { code: -32001, message: 'AuthFailed', data: { reason: 'token_hash_mismatch' }, close: 4001 } },
  { name: 'wrong token', params: hello({ token: 'x'.repeat(43) }), row: row(), want: { code: -32001, message: 'AuthFailed', data: { reason: 'token_hash_mismatch' }, close: 4001 } },
  {
    name: 'wrong token and an invalid schema: the token is checked first',
    params: hello({ token: 'x'.repeat(43), platform: 'linux' }),
    row: row(),
    want: { code: -32001, message: 'AuthFailed', data: { reason: 'token_hash_mismatch' }, close: 4001 },
  },
  // revoked
  { name: 'revoked host, right token', params: hello(), row: row({ connection_state: 'Revoked' }), want: { code: -32002, message: 'TokenRevoked', data: { reason: 'revoked' }, close: 4002 } },
  { name: 'revoked host, any token', params: hello({ token: 'x'.repeat(43) }), row: row({ connection_state: 'Revoked' }), want: { code: -32002, message: 'TokenRevoked', data: { reason: 'revoked' }, close: 4002 } },
  { name: 'no token hash left on the row: revoked', params: hello(), row: row({ token_hash: null, token_hash_prev: null }), want: { code: -32002, message: 'TokenRevoked', data: { reason: 'revoked' }, close: 4002 } },
  // rotation grace over
  {
    name: 'previous token after its grace window',
    params: hello({ token: PREV }),
    row: row({ token_hash_prev: hashToken(PREV), token_rotation_grace_until: EARLIER }),
    want: { code: -32005, message: 'TokenRotationRequired', data: { reason: 'the previous token is no longer valid: re-enroll with `agent issue --host-id`' }, close: 4001 },
  },
  {
    name: 'previous token with no grace window at all',
    params: hello({ token: PREV }),
    row: row({ token_hash_prev: hashToken(PREV) }),
    want: { code: -32005, message: 'TokenRotationRequired', data: { reason: 'the previous token is no longer valid: re-enroll with `agent issue --host-id`' }, close: 4001 },
  },
  {
    name: 'previous token at the very end of its grace window (not before it)',
    params: hello({ token: PREV }),
    row: row({ token_hash_prev: hashToken(PREV), token_rotation_grace_until: NOW.toISOString() }),
    want: { code: -32005, message: 'TokenRotationRequired', data: { reason: 'the previous token is no longer valid: re-enroll with `agent issue --host-id`' }, close: 4001 },
  },
  // enrollment token expiry (DECISIONS H8)
  {
    name: 'one-time token expired',
    params: hello(),
    row: row({ connection_state: 'NeverConnected' }),
    input: { enrollmentExpiresAt: EARLIER },
    want: { code: -32001, message: 'AuthFailed', data: { reason: 'expired' }, close: 4001 },
  },
  {
    name: 'one-time token expiring right now',
    params: hello(),
    row: row({ connection_state: 'NeverConnected' }),
    input: { enrollmentExpiresAt: NOW.toISOString() },
    want: { code: -32001, message: 'AuthFailed', data: { reason: 'expired' }, close: 4001 },
  },
  // decommissioned while away (DESIGN 5.13): revoked now
  {
    name: 'decommissioned host',
    params: hello(),
    row: row({ decommission_requested_at: EARLIER }),
    want: { code: -32002, message: 'TokenRevoked', data: { reason: 'decommissioned' }, close: 4002, change: { op: 'revoke', host_id: HOST } },
  },
  // schema, last
  {
    name: 'schema-invalid hello with a valid token',
    params: hello({ platform: 'linux' }),
    row: row(),
    want: { code: -32602, message: 'InvalidParams', data: { method: 'agent.hello', errors: [{ path: '/platform', message: 'must be object', keyword: 'type' }] }, close: 4001 },
  },
  {
    name: 'resume_from_seq past max_seq',
    params: hello({ resume_from_seq: LIMITS.max_seq + 2 }),
    row: row(),
    want: { code: -32602, message: 'InvalidParams', close: 4001 },
  },
];

describe('handshake decision: refusals', () => {
  it.each(REFUSALS)('$name', ({ params, row: r, input, want }) => {
    const d = decide(params, r, input);
    expect(d.kind).toBe('refuse');
    if (d.kind !== 'refuse') return;
    const wire = d.error.toJSON();
    expect(wire.code).toBe(want.code);
    expect(wire.message).toBe(want.message);
    if (want.data !== undefined) expect(wire.data).toEqual(want.data);
    expect(d.closeCode).toBe(want.close);
    expect(d.change).toEqual(want.change);
  });

  it('the expired enrollment and the decommission say so in a log line; others have none', () => {
    const expired = decide(hello(), row({ connection_state: 'NeverConnected' }), { enrollmentExpiresAt: EARLIER });
    expect(expired.kind === 'refuse' && expired.log).toEqual({ level: 'info', msg: 'enrollment token expired: issue a new one with `agent issue --host-id`', fields: { host_id: HOST, expires_at: EARLIER } });
    const decommissioned = decide(hello(), row({ decommission_requested_at: EARLIER }));
    expect(decommissioned.kind === 'refuse' && decommissioned.log).toEqual({ level: 'info', msg: 'hello from a decommissioned host: revoked', fields: { host_id: HOST } });
    const wrong = decide(hello({ token: 'x'.repeat(43) }), row());
    expect(wrong.kind === 'refuse' && wrong.log).toBeUndefined();
  });

  it('a refusal names the host the hello named (normalised once the row was found)', () => {
    const upper = HOST.toUpperCase();
    const unknown = decide(hello({ host_id: upper }), undefined);
    expect(unknown.kind === 'refuse' && unknown.host_id).toBe(upper);
    const revoked = decide(hello({ host_id: upper }), row({ connection_state: 'Revoked' }));
    expect(revoked.kind === 'refuse' && revoked.host_id).toBe(HOST);
    const noId = decide(hello({ host_id: 42 }), undefined);
    expect(noId.kind === 'refuse' && noId.host_id).toBeUndefined();
  });
});

interface Accepted {
  op: 'first_enrollment' | 'rotate' | 'activate';
  rotated: boolean;
  outcome: 'ok' | 'enrolled' | 'rotated';
  grace_until?: string;
  clear_prev?: boolean;
  /** Hash the row's token_hash becomes (rotations). */
  new_token_hash?: string;
}

const ACCEPTANCES: Array<{ name: string; params: unknown; row: HelloLookup; input?: Partial<HelloInput>; want: Accepted }> = [
  { name: 'long-lived token', params: hello(), row: row(), want: { op: 'activate', rotated: false, outcome: 'ok', clear_prev: false } },
  {
    name: 'the new token after a rotation: the previous one is cleared',
    params: hello(),
    row: row({ token_hash_prev: hashToken(PREV), token_rotation_grace_until: LATER }),
    want: { op: 'activate', rotated: false, outcome: 'ok', clear_prev: true },
  },
  { name: 'first enrollment: rotated at once, no grace window', params: hello(), row: row({ connection_state: 'NeverConnected' }), want: { op: 'first_enrollment', rotated: true, outcome: 'enrolled', new_token_hash: hashToken(MINTED) } },
  {
    name: 'first enrollment before the one-time token expires',
    params: hello(),
    row: row({ connection_state: 'NeverConnected' }),
    input: { enrollmentExpiresAt: LATER },
    want: { op: 'first_enrollment', rotated: true, outcome: 'enrolled', new_token_hash: hashToken(MINTED) },
  },
  {
    name: 'previous token inside its grace window: rotated again, same window',
    params: hello({ token: PREV }),
    row: row({ token_hash_prev: hashToken(PREV), token_rotation_grace_until: LATER }),
    want: { op: 'rotate', rotated: true, outcome: 'rotated', grace_until: LATER, new_token_hash: hashToken(MINTED) },
  },
  {
    name: 'rotation requested with its own grace',
    params: hello(),
    row: row({ rotate_requested_at: EARLIER, rotation_grace_secs: 30 }),
    want: { op: 'rotate', rotated: true, outcome: 'rotated', grace_until: '2026-06-01T12:00:30.000Z', new_token_hash: hashToken(MINTED) },
  },
  {
    name: 'rotation requested without a grace: the server default',
    params: hello(),
    row: row({ rotate_requested_at: EARLIER }),
    want: { op: 'rotate', rotated: true, outcome: 'rotated', grace_until: '2026-06-01T12:10:00.000Z', new_token_hash: hashToken(MINTED) },
  },
  { name: 'upper-case host id', params: hello({ host_id: HOST.toUpperCase() }), row: row(), want: { op: 'activate', rotated: false, outcome: 'ok', clear_prev: false } },
  { name: 'no min_agent_version: any agent_version', params: hello({ agent_version: '0.0.1' }), row: row(), input: { settings: { ...SETTINGS, min_agent_version: undefined } }, want: { op: 'activate', rotated: false, outcome: 'ok', clear_prev: false } },
];

describe('handshake decision: accepted hellos and their row change', () => {
  it.each(ACCEPTANCES)('$name', ({ params, row: r, input, want }) => {
    const d = decide(params, r, input);
    expect(d.kind).toBe('accept');
    if (d.kind !== 'accept') return;
    expect(d.host_id).toBe(HOST);
    expect(d.session_id).toBe(SESSION);
    expect(d.change.op).toBe(want.op);
    expect(d.change.presented_hash).toBe(hashToken((params as { token: string }).token));
    expect(d.rotatedToken).toBe(want.rotated ? MINTED : undefined);
    expect(d.outcome).toBe(want.outcome);
    if (want.grace_until !== undefined) expect(d.change).toMatchObject({ grace_until: want.grace_until });
    if (want.clear_prev !== undefined) expect(d.change).toMatchObject({ clear_prev: want.clear_prev });
    if (want.new_token_hash !== undefined) expect(d.change).toMatchObject({ new_token_hash: want.new_token_hash });
    expect(d.start).toEqual({
      session_id: SESSION,
      agent_version: (params as { agent_version: string }).agent_version,
      hostname: 'web-1',
      platform_json: JSON.stringify((params as { platform: unknown }).platform),
      capabilities_json: JSON.stringify((params as { capabilities: unknown }).capabilities),
      last_handshake: NOW.toISOString(),
      server_id: 'srv-a',
    });
    // when the compare-and-set finds the row moved on: -32001, close 4001
    expect(d.onConflict().error.toJSON()).toEqual({ code: -32001, message: 'AuthFailed', data: { reason: 'token_hash_mismatch' } });
    expect(d.onConflict().closeCode).toBe(4001);
  });

  it('a token is minted only when the verdict rotates', () => {
    let minted = 0;
    const mintToken = () => (minted++, MINTED);
    decide(hello(), row(), { mintToken });
    expect(minted).toBe(0);
    decide(hello(), row({ connection_state: 'NeverConnected' }), { mintToken });
    expect(minted).toBe(1);
  });
});

describe('helpers around the decision', () => {
  it('helloHostId: a 36-character id, lower-cased; anything else is no id', () => {
    expect(helloHostId(hello({ host_id: HOST.toUpperCase() }))).toBe(HOST);
    expect(helloHostId(hello({ host_id: 'web-1' }))).toBeUndefined();
    expect(helloHostId(hello({ host_id: 7 }))).toBeUndefined();
    expect(helloHostId(null)).toBeUndefined();
    expect(helloHostId([HOST])).toBeUndefined();
  });

  it('screenHello refuses version mismatches without a row and lets the rest through', () => {
    expect(screenHello(hello({ protocol_version: 2 }), SETTINGS)?.error.code).toBe(-32003);
    expect(screenHello(hello({ token: 'x' }), SETTINGS)).toBeUndefined();
    expect(screenHello('not an object', SETTINGS)?.error.code).toBe(-32602);
  });

  it('the enrollment expiry is looked up for a NeverConnected row only', () => {
    expect(needsEnrollmentExpiry(row({ connection_state: 'NeverConnected' }))).toBe(true);
    expect(needsEnrollmentExpiry(row())).toBe(false);
    expect(needsEnrollmentExpiry(undefined)).toBe(false);
  });
});

const DEFAULT_CONFIG: AgentConfig = { heartbeat_interval_secs: 30, max_batch_entries: 1000, flush_interval_ms: 200, metrics_interval_secs: 60, probe_concurrency: 4, log_sources: [] };
const HOST_CONFIG: AgentConfig = { ...DEFAULT_CONFIG, heartbeat_interval_secs: 10 };

describe('the HelloResult of an accepted hello', () => {
  const accept = (params: unknown = hello(), r: HelloLookup = row()) => {
    const d = decide(params, r);
    if (d.kind !== 'accept') throw new Error('expected an accepted hello');
    return d;
  };
  const answer = (current: Parameters<typeof helloAnswer>[1], params?: unknown, r?: HelloLookup) =>
    helloAnswer(accept(params, r), current, { serverVersion: '9.9.9', defaultConfig: DEFAULT_CONFIG, now: NOW });

  it('from the re-read row: accepted_seq, config_version, the stored config; valid against the contract', () => {
    const a = answer({ accepted_seq: 57, config_version: 4, agent_config_json: JSON.stringify(HOST_CONFIG), config_apply_after: null });
    expect(a.result).toEqual({ server_version: '9.9.9', server_time: NOW.toISOString(), accepted_seq: 57, session_id: SESSION, config: HOST_CONFIG });
    expect(validateAgentHelloResult(a.result)).toBe(true);
    expect(a.accepted_seq).toBe(57);
    expect(a.config_version).toBe(4);
    expect(a.staged).toBeUndefined();
    expect(a.storedConfigInvalid).toBe(false);
    expect(a.lost).toBeUndefined();
  });

  it('the row as first read when the re-read finds nothing; the server default without a stored config', () => {
    const a = answer(undefined);
    expect(a.result.accepted_seq).toBe(41);
    expect(a.config_version).toBe(3);
    expect(a.result.config).toEqual(DEFAULT_CONFIG);
  });

  it('carries the rotated token when the verdict rotated', () => {
    const a = answer(undefined, hello(), row({ connection_state: 'NeverConnected' }));
    expect(a.result.rotated_token).toBe(MINTED);
    expect('rotated_token' in answer(undefined).result).toBe(false);
  });

  it('a config staged for later: the default now, the staged one sent right after', () => {
    const a = answer({ accepted_seq: 41, config_version: 4, agent_config_json: JSON.stringify(HOST_CONFIG), config_apply_after: LATER });
    expect(a.result.config).toEqual(DEFAULT_CONFIG);
    expect(a.staged).toEqual({ config: HOST_CONFIG, apply_after: LATER });
    const due = answer({ accepted_seq: 41, config_version: 4, agent_config_json: JSON.stringify(HOST_CONFIG), config_apply_after: EARLIER });
    expect(due.result.config).toEqual(HOST_CONFIG);
    expect(due.staged).toBeUndefined();
  });

  it('a stored config that does not validate: the server default, flagged for the log', () => {
    const a = answer({ accepted_seq: 41, config_version: 4, agent_config_json: '{"heartbeat_interval_secs":"often"}', config_apply_after: null });
    expect(a.result.config).toEqual(DEFAULT_CONFIG);
    expect(a.storedConfigInvalid).toBe(true);
  });

  it('resume_from_seq past what the database holds: the lost range', () => {
    const a = answer({ accepted_seq: 41, config_version: 3, agent_config_json: null, config_apply_after: null }, hello({ resume_from_seq: 50 }));
    expect(a.lost).toEqual({ resume_from_seq: 50, accepted_seq: 41, lost: 9 });
    expect(answer(undefined, hello({ resume_from_seq: 41 })).lost).toBeUndefined();
  });
});
