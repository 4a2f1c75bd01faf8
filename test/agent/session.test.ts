import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode, type AgentHelloResult } from '@cortex/agent-protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { authErrorMessage, authEventFor, helloParams } from '../../agent/handshake.js';
import { createCapturingLogger, createLogger } from '../../agent/log.js';
import { Session, type SessionOptions } from '../../agent/session.js';
import type { Transition } from '../../agent/state.js';
import { writeToken } from '../../agent/token-store.js';
import { FakeServer, rpcError } from './helpers/fake-server.js';

const TOKEN = 'session-test-token-'.padEnd(40, 'x');
const ROTATED = 'session-test-rotated-'.padEnd(40, 'y');
const HOST = '6f1c1a8e-2b7d-4c55-9f0e-1a2b3c4d5e6f';

let dir: string;
let buffer: DurableBuffer;
let server: FakeServer;
const sessions: Session[] = [];
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cortex-session-'));
  buffer = DurableBuffer.open(join(dir, 'buffer.db'));
  await writeToken(dir, TOKEN);
  server = await FakeServer.start();
});
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.stop(async () => undefined);
  await server.close();
  buffer.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A session against the fake server; `r` records what it told the rest of the agent. */
function sessionFor(options: Partial<SessionOptions> = {}, log = createLogger({ level: 'silent' })) {
  const r = { transitions: [] as Transition[], accepted: [] as number[], active: [] as AgentHelloResult[], ended: 0, errors: [] as string[], cleared: 0, tokenAtActive: null as string | null };
  const events = new EventEmitter();
  const session = new Session({
    options: { stateDir: dir, serverUrl: server.url, hostId: HOST, backoff: { baseMs: 10, capMs: 20, random: () => 0.5 }, ...options },
    log,
    buffer,
    random: () => 0.5,
    capabilities: () => ({ supported_probes: ['uptime'], sources: ['custom'], max_batch_entries: 500, compression: [] }),
    handlers: () => ({}),
    onPeerEvent: () => undefined,
    setError: (m) => (r.errors.push(m), m),
    clearError: () => void r.cleared++,
    events,
    hooks: {
      transition: (t) => {
        r.transitions.push(t);
        events.emit('state', t);
      },
      accepted: (seq) => (r.accepted.push(seq), seq + 1),
      active: (result) => {
        r.active.push(result);
        r.tokenAtActive = readFileSync(join(dir, 'token'), 'utf8').trim();
      },
      ended: () => void r.ended++,
    },
  });
  sessions.push(session);
  const reach = (state: string) => new Promise<void>((resolve) => (session.state === state ? resolve() : events.on('state', (t: Transition) => t.to === state && resolve())));
  return { session, r, events, reach };
}

describe('handshake helpers', () => {
  it('hello params carry the protocol, agent version, capabilities, token and resume point', () => {
    const p = helloParams({ hostname: 'h'.repeat(300), hostId: HOST, capabilities: { supported_probes: [], sources: ['custom'], max_batch_entries: 1, compression: [] }, token: TOKEN, resumeFromSeq: 7 });
    expect(p).toMatchObject({ protocol_version: expect.any(Number), agent_version: '0.1.0', host_id: HOST, token: TOKEN, resume_from_seq: 7 });
    expect(p.hostname).toHaveLength(253);
  });

  it('maps auth error codes to the contract events and operator messages', () => {
    expect(authEventFor(ErrorCode.AuthFailed)).toBe('auth_fatal');
    expect(authEventFor(ErrorCode.TokenRevoked)).toBe('token_revoked');
    expect(authEventFor(ErrorCode.Backpressure)).toBeNull();
    expect(authErrorMessage(ErrorCode.AuthFailed, HOST)).toMatch(new RegExp(`agent issue --host-id ${HOST}`));
    expect(authErrorMessage(-1, HOST)).toBe('handshake rejected (-1)');
  });
});

describe('session', () => {
  it('connects, says hello with DIR/token and the buffer resume point, and becomes Active after the replay hook', async () => {
    buffer.append([{ ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'x', source: 'custom:t' }]);
    server.accepted = 1;
    const { session, r, reach } = sessionFor();
    session.start();
    await reach('Active');
    expect(server.current!.hello).toMatchObject({ token: TOKEN, host_id: HOST, resume_from_seq: 0, capabilities: { max_batch_entries: 500 } });
    expect(r.accepted).toEqual([1]);
    expect(r.active).toHaveLength(1);
    expect(session.sessionId).toBe(r.active[0]!.session_id);
    expect(r.transitions.map((t) => t.to)).toEqual(['Connecting', 'Authenticating', 'Active']);
  });

  it('persists a rotated token before the session is Active', async () => {
    server.rotatedToken = ROTATED;
    const { session, r, reach } = sessionFor();
    session.start();
    await reach('Active');
    expect(r.tokenAtActive).toBe(ROTATED);
  });

  it('-32001 is FatalAuth (no reconnect); -32002 is Revoked and deletes the token file', async () => {
    server.scriptNextHello(() => {
      throw rpcError(ErrorCode.AuthFailed, 'AuthFailed', { reason: 'unknown_token' });
    });
    const a = sessionFor();
    a.session.start();
    await a.reach('FatalAuth');
    expect(a.r.errors.at(-1)).toMatch(/-32001 AuthFailed/);
    expect(existsSync(join(dir, 'token'))).toBe(true);

    server.scriptNextHello(() => {
      throw rpcError(ErrorCode.TokenRevoked, 'TokenRevoked', { reason: 'revoked' });
    });
    const b = sessionFor();
    b.session.start();
    await b.reach('Revoked');
    expect(existsSync(join(dir, 'token'))).toBe(false);
  });

  it('-32603 at hello (the server could not decide: its database out of reach) is retried, and the error says so once, not the code twice', async () => {
    server.scriptNextHello(() => {
      throw rpcError(ErrorCode.InternalError, 'InternalError');
    });
    const a = sessionFor();
    a.session.start();
    await a.reach('Active');
    expect(a.r.errors).toEqual(["hello failed on the server: InternalError (-32603); retrying (the server's log says why: its database out of reach, for one)"]);
    expect(a.r.transitions.map((t) => t.to)).toContain('Reconnecting');
  });

  it("a session replaced again and again by another hello of its host says another agent uses this host's identity (a copied state directory)", async () => {
    const a = sessionFor();
    a.session.start();
    for (let i = 1; i <= 3; i++) {
      await a.reach('Active');
      const lost = new Promise<void>((resolve) => a.events.on('state', (t: Transition) => t.event === 'connection_lost' && resolve()));
      server.current!.ws.close(1000, 'replaced by a newer session');
      await lost;
      // once is not a sign (a server that stalled past its lease replaces sessions too)
      if (i < 3) expect(a.r.errors.at(-1)).toBe('connection closed (1000 replaced by a newer session)');
    }
    const clone = a.r.errors.at(-1);
    expect(clone).toMatch(/^another agent is using this host's identity \(host_id 6f1c1a8e-2b7d-4c55-9f0e-1a2b3c4d5e6f\): its hellos replaced this agent's session 3 times in 10 minutes\. A copied state directory/);
    expect(clone).toContain('cortex-server agent issue --host NAME');
    // it stays the error when the next hello succeeds (until 10 minutes pass without one)
    const cleared = a.r.cleared;
    await a.reach('Active');
    expect(a.r.cleared).toBe(cleared);
    expect(a.r.errors.at(-1)).toBe(clone);
  });

  it('a token a server echoes back (a close reason) is cut out of the log line, whatever field it is in (H52)', async () => {
    const captured = createCapturingLogger('debug');
    const a = sessionFor({}, captured.logger);
    a.session.start();
    await a.reach('Active');
    const lost = new Promise<void>((resolve) => a.events.on('state', (t: Transition) => t.event === 'connection_lost' && resolve()));
    server.current!.ws.close(1000, `bye ${TOKEN}`);
    await lost;
    const lines = captured.raw.join('');
    expect(lines).toContain('bye [redacted]');
    expect(lines).not.toContain(TOKEN);
  });

  it('a lost connection goes Reconnecting, schedules the backoff and comes back Active', async () => {
    const { session, r, events, reach } = sessionFor();
    session.start();
    await reach('Active');
    const scheduled = new Promise<number>((resolve) => events.once('reconnect_scheduled', resolve));
    server.current!.ws.terminate();
    expect(await scheduled).toBe(5); // full jitter: 0.5 × 10 ms
    await new Promise<void>((resolve) => events.on('state', (t: Transition) => t.from === 'Authenticating' && t.to === 'Active' && resolve()));
    expect(r.transitions.map((t) => t.event)).toEqual(['start', 'upgrade_ok', 'hello_accepted', 'connection_lost', 'backoff_elapsed', 'upgrade_ok', 'hello_accepted']);
    expect(r.ended).toBeGreaterThanOrEqual(1);
  });

  it('a drain ends the session and reconnects; stop closes with final_seq=<acked_seq>', async () => {
    const { session, reach } = sessionFor();
    session.start();
    await reach('Active');
    expect(session.beginDrain()).toBe(true);
    expect(session.state).toBe('Draining');
    session.drained();
    expect(session.state).toBe('Reconnecting');
    await reach('Active');
    buffer.append([{ ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'x', source: 'custom:t' }]);
    buffer.ack(1);
    const closed = server.current!.closed;
    await session.stop(async () => undefined);
    expect(await closed).toEqual({ code: 1000, reason: 'final_seq=1' });
    expect(session.stopping).toBe(true);
  });

  it('a refused upgrade is Reconnecting with the error recorded (no token in it)', async () => {
    const { session, r, reach } = sessionFor({ serverUrl: 'ws://127.0.0.1:9/ws/agent' });
    session.start();
    await reach('Reconnecting');
    expect(r.errors[0]).toMatch(/^connect: /);
    expect(r.errors[0]).not.toContain(TOKEN);
  });
});
