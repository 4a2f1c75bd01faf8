import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validateAgentHelloResult } from '@cortex/agent-protocol';
import { hashToken } from '../../server/auth/tokens.js';
import { getAgent, revoke } from '../../server/db/agents.repository.js';
import { enroll, helloParams, startTestServer, TestClient, waitFor, type TestServer } from './wire.js';

let t: TestServer;
beforeEach(async () => {
  t = await startTestServer({ min_agent_version: '0.1.0', hello_timeout_ms: 300 });
});
afterEach(async () => {
  await t.close();
});

describe('agent.hello', () => {
  it('first enrollment: HelloResult valid, Active, session_id, rotated token, old token invalid', async () => {
    const h = await t.issue('web-1');
    const c = await TestClient.open(t.url);
    const res = await c.request('agent.hello', helloParams(h.host_id, h.token, { hostname: 'web-1.lan' }));
    expect(res.error).toBeUndefined();
    expect(validateAgentHelloResult(res.result)).toBe(true);
    const r = res.result;
    t.tokens.push(r.rotated_token);
    expect(r.rotated_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(r.accepted_seq).toBe(0);
    expect(r.config).toEqual({ heartbeat_interval_secs: 30, max_batch_entries: 1000, flush_interval_ms: 200, metrics_interval_secs: 60, probe_concurrency: 4, log_sources: [] });
    const row = await getAgent(t.server.storage.db, h.host_id);
    expect(row?.connection_state).toBe('Active');
    expect(row?.session_id).toBe(r.session_id);
    expect(row?.hostname).toBe('web-1'); // the operator's label (agent issue --host)
    expect(row?.agent_hostname).toBe('web-1.lan'); // what the agent reported
    expect(row?.agent_version).toBe('0.1.0');
    expect(JSON.parse(row?.platform_json ?? '{}').os).toBe('linux');
    expect(JSON.parse(row?.capabilities_json ?? '{}').max_batch_entries).toBe(1000);
    expect(row?.last_handshake).not.toBeNull();
    const hashes = await t.server.storage.db.selectFrom('agents').select(['token_hash', 'token_hash_prev']).where('host_id', '=', h.host_id).executeTakeFirstOrThrow();
    expect(hashes.token_hash).toBe(hashToken(r.rotated_token));
    expect(hashes.token_hash_prev).toBeNull();
    c.ws.close(1000, 'final_seq=0');
    await c.closed;
    // the one-time token no longer works; the rotated one does, without a new rotation
    const c2 = await TestClient.open(t.url);
    const bad = await c2.request('agent.hello', helloParams(h.host_id, h.token));
    expect(bad.error?.code).toBe(-32001);
    expect((await c2.closed).code).toBe(4001);
    const c3 = await TestClient.open(t.url);
    const ok = await c3.request('agent.hello', helloParams(h.host_id, r.rotated_token));
    expect(ok.result.rotated_token).toBeUndefined();
    expect(ok.result.session_id).not.toBe(r.session_id);
    c3.ws.close();
    await c3.closed;
  });

  it('-32001 for a wrong token and for an unknown host (same answer), close 4001, row untouched', async () => {
    const h = await t.issue();
    const before = await getAgent(t.server.storage.db, h.host_id);
    for (const [host, token] of [[h.host_id, 'x'.repeat(43)], ['2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', h.token]] as const) {
      const c = await TestClient.open(t.url);
      const res = await c.request('agent.hello', helloParams(host, token));
      expect(res.error).toEqual({ code: -32001, message: 'AuthFailed', data: { reason: 'token_hash_mismatch' } });
      expect((await c.closed).code).toBe(4001);
    }
    expect(await getAgent(t.server.storage.db, h.host_id)).toEqual(before);
  });

  it('-32002 for a revoked host, close 4002', async () => {
    const h = await t.issue();
    await revoke(t.server.storage.db, h.host_id);
    const c = await TestClient.open(t.url);
    const res = await c.request('agent.hello', helloParams(h.host_id, h.token));
    expect(res.error?.code).toBe(-32002);
    expect((await c.closed).code).toBe(4002);
    expect((await getAgent(t.server.storage.db, h.host_id))?.connection_state).toBe('Revoked');
  });

  it('-32003 for protocol_version != 1 with data, checked before the schema and the token', async () => {
    const c = await TestClient.open(t.url);
    const res = await c.request('agent.hello', { protocol_version: 2, token: 'nope' });
    expect(res.error?.code).toBe(-32003);
    expect(res.error?.data).toEqual({ required_protocol_version: 1, current: 2 });
    expect((await c.closed).code).toBe(4001);
  });

  it('-32003 for agent_version below min_agent_version (semver: pre-release ranks lower)', async () => {
    const h = await t.issue();
    const c = await TestClient.open(t.url);
    const res = await c.request('agent.hello', helloParams(h.host_id, h.token, { agent_version: '0.1.0-rc.1' }));
    expect(res.error?.code).toBe(-32003);
    expect(res.error?.data).toEqual({ min_agent_version: '0.1.0', agent_version: '0.1.0-rc.1' });
    expect((await c.closed).code).toBe(4001);
    expect((await getAgent(t.server.storage.db, h.host_id))?.connection_state).toBe('NeverConnected');
  });

  it('-32602 for a schema-invalid hello with a valid token (token checked first), close 4001', async () => {
    const h = await t.issue();
    const c = await TestClient.open(t.url);
    const res = await c.request('agent.hello', helloParams(h.host_id, h.token, { platform: { os: 'linux' } as never }));
    expect(res.error?.code).toBe(-32602);
    expect(JSON.stringify(res.error?.data.errors)).toContain('/platform');
    expect((await c.closed).code).toBe(4001);
    // invalid schema AND wrong token: the token decides
    const c2 = await TestClient.open(t.url);
    const res2 = await c2.request('agent.hello', helloParams(h.host_id, 'y'.repeat(40), { platform: {} as never }));
    expect(res2.error?.code).toBe(-32001);
    expect((await getAgent(t.server.storage.db, h.host_id))?.connection_state).toBe('NeverConnected');
  });

  it('-32005 when only the previous token matches after its grace window, close 4001', async () => {
    const h = await t.issue();
    const old = 'o'.repeat(43);
    await t.server.storage.db.updateTable('agents').set({ token_hash_prev: hashToken(old), token_rotation_grace_until: '2000-01-01T00:00:00.000Z', connection_state: 'Disconnected' }).where('host_id', '=', h.host_id).execute();
    const c = await TestClient.open(t.url);
    const res = await c.request('agent.hello', helloParams(h.host_id, old));
    expect(res.error?.code).toBe(-32005);
    expect((await c.closed).code).toBe(4001);
  });

  it('-32600 for a broken envelope before hello, close 4001', async () => {
    const c = await TestClient.open(t.url);
    c.send({ jsonrpc: '1.0', id: 1, method: 'agent.hello', params: {} });
    const res = await c.response(1);
    expect(res.error?.code).toBe(-32600);
    expect((await c.closed).code).toBe(4001);
  });

  it('-32700 for malformed JSON and -32600 for a top-level array', async () => {
    const h = await t.issue();
    const { client } = await enroll(t, h);
    client.send('{not json');
    expect((await client.response(null)).error?.code).toBe(-32700);
    client.send('[{"jsonrpc":"2.0","id":5,"method":"logs.push","params":{}}]');
    const arr = await client.next((m) => m.id === null && m.error?.code === -32600);
    expect(arr.error?.code).toBe(-32600);
    client.ws.close();
    await client.closed;
  });

  it('-32000 for a frame other than hello on an unauthenticated socket, close 4001', async () => {
    const c = await TestClient.open(t.url);
    const res = await c.request('logs.push', { seq_start: 1, entries: [] });
    expect(res.error?.code).toBe(-32000);
    expect((await c.closed).code).toBe(4001);
  });

  it('-32601 for an unknown method on an authenticated socket', async () => {
    const { client } = await enroll(t);
    expect((await client.request('no.such', {})).error?.code).toBe(-32601);
    client.ws.close();
    await client.closed;
  });

  it('hello timer: close 4000 with no message, row untouched', async () => {
    const h = await t.issue();
    const before = await getAgent(t.server.storage.db, h.host_id);
    const c = await TestClient.open(t.url);
    const closed = await c.closed;
    expect(closed.code).toBe(4000);
    expect(c.messages).toEqual([]);
    expect(await getAgent(t.server.storage.db, h.host_id)).toEqual(before);
  });

  it('a second session replaces the first; only the current session marks the row on close', async () => {
    const first = await enroll(t);
    const second = await enroll(t, { host_id: first.host_id, token: first.token });
    const closed = await first.client.closed;
    expect(closed.reason).toContain('replaced');
    await new Promise((r) => setTimeout(r, 50));
    let row = await getAgent(t.server.storage.db, first.host_id);
    expect(row?.connection_state).toBe('Active');
    expect(row?.session_id).toBe(second.hello.session_id);
    second.client.ws.close(1000, 'final_seq=0');
    await second.client.closed;
    await waitFor(async () => (await getAgent(t.server.storage.db, first.host_id))?.connection_state === 'Disconnected');
    row = await getAgent(t.server.storage.db, first.host_id);
    expect(row?.last_disconnect_reason).toBe('1000 final_seq=0');
    expect(row?.last_disconnect).not.toBeNull();
  });

  it('a Revoked row stays Revoked when its session closes', async () => {
    const a = await enroll(t);
    await revoke(t.server.storage.db, a.host_id);
    a.client.ws.close(1000, 'bye');
    await a.client.closed;
    // Whichever closes first: the agent (1000 bye) or, told at once by NOTIFY on PostgreSQL,
    // the server acting on the revocation (4002 revoked).
    await waitFor(async () => ['1000 bye', '4002 revoked'].includes((await getAgent(t.server.storage.db, a.host_id))?.last_disconnect_reason ?? ''));
    expect((await getAgent(t.server.storage.db, a.host_id))?.connection_state).toBe('Revoked');
  });

  it('HelloResult.config is the host config when set', async () => {
    const h = await t.issue();
    const cfg = { heartbeat_interval_secs: 45, max_batch_entries: 500, flush_interval_ms: 250, probe_concurrency: 2, log_sources: [{ kind: 'journald' }] };
    await t.server.storage.db.updateTable('agents').set({ agent_config_json: JSON.stringify(cfg) }).where('host_id', '=', h.host_id).execute();
    const { client, hello } = await enroll(t, h);
    expect(hello.config).toEqual(cfg);
    client.ws.close();
    await client.closed;
  });
});

