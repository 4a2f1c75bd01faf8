// Control plane end to end (DESIGN.md 3, 5.2, 5.13; seed 3, 4.3, 4.8): config updates
// (live, from a second process through the compiled CLI, apply_after), revocation,
// rotation with recovery and expiry, decommission. Real server on 127.0.0.1:0, real SQLite
// file, scripted ws agents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@cortex/agent-protocol';
import { getAgent, requestRotation, setAgentConfig } from '../../server/db/agents.repository.js';
import { connectAgent } from './control-helpers.js';
import { requireServerCli, cli } from './spawn.js';
import { cliAsync, cliEach } from '../support/scli-pool.js';
import { helloParams, logEntries, startTestServer, TestClient, type TestServer } from './wire.js';

let t: TestServer;
beforeAll(async () => {
  requireServerCli();
  t = await startTestServer({ max_batch_entries: 800, default_agent_config: { heartbeat_interval_secs: 30, max_batch_entries: 800, flush_interval_ms: 200, metrics_interval_secs: 60, probe_concurrency: 4, log_sources: [] } });
}, 60_000);
afterAll(async () => {
  await t.close();
});

const CFG = { heartbeat_interval_secs: 45, max_batch_entries: 500, flush_interval_ms: 250, metrics_interval_secs: 30, probe_concurrency: 2, log_sources: [{ kind: 'journald' }] };

describe('config', () => {
  it('a change reaches the connected agent as config.update within 2 s, verbatim; --clear sends the default', async () => {
    const a = await connectAgent(t);
    expect(a.hello.config.max_batch_entries).toBe(800); // server default
    const started = Date.now();
    await setAgentConfig(t.server.storage.db, a.host_id, JSON.stringify(CFG));
    const upd = await a.client.next((m) => m.method === 'config.update');
    expect(Date.now() - started).toBeLessThan(LIMITS.control_propagation_ms);
    expect(upd.params).toEqual({ config: CFG, apply_after: null });
    await setAgentConfig(t.server.storage.db, a.host_id, null);
    const cleared = await a.client.next((m) => m.method === 'config.update' && m !== upd);
    expect(cleared.params).toEqual({ config: { heartbeat_interval_secs: 30, max_batch_entries: 800, flush_interval_ms: 200, metrics_interval_secs: 60, probe_concurrency: 4, log_sources: [] }, apply_after: null });
    a.client.ws.close();
    await a.client.closed;
  });

  it('from a second process (compiled CLI on the same database): config.update within 2 s; HelloResult.config afterwards; apply_after passed through', async () => {
    const a = await connectAgent(t);
    // cli() is spawnSync: it blocks this process (and the in-process server) until the
    // command exited, i.e. until the change is committed; propagation is timed from there.
    const r = cli(['agent', 'config', a.host_id, '--set', JSON.stringify(CFG), '--apply-after', '2030-01-01T00:00:00Z', '--db', t.dbPath]);
    const started = Date.now();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const upd = await a.client.next((m) => m.method === 'config.update');
    expect(Date.now() - started).toBeLessThan(LIMITS.control_propagation_ms);
    expect(upd.params).toEqual({ config: CFG, apply_after: '2030-01-01T00:00:00.000Z' });
    a.client.ws.close();
    await a.client.closed;
    // a reconnect before apply_after: HelloResult carries the default, the staged config follows at once
    const b = await connectAgent(t, undefined, { host_id: a.host_id, token: a.token });
    expect(b.hello.config.max_batch_entries).toBe(800);
    const staged = await b.client.next((m) => m.method === 'config.update');
    expect(staged.params).toEqual({ config: CFG, apply_after: '2030-01-01T00:00:00.000Z' });
    b.client.ws.close();
    await b.client.closed;
    // without apply_after: HelloResult.config is the host config
    expect(cli(['agent', 'config', a.host_id, '--set', JSON.stringify(CFG), '--db', t.dbPath]).code).toBe(0);
    const c = await connectAgent(t, undefined, { host_id: a.host_id, token: a.token });
    expect(c.hello.config).toEqual(CFG);
    c.client.ws.close();
    await c.client.closed;
  });

  it('bad input: exit 2, clear error, nothing stored (schema, incomplete, above the recorded server cap, bad date, unknown host)', async () => {
    const h = await t.issue('cfg-bad');
    const before = await getAgent(t.server.storage.db, h.host_id);
    const cases: [string[], RegExp][] = [
      [['--set', '{not json'], /not valid JSON/],
      [['--set', JSON.stringify({ heartbeat_interval_secs: 45 })], /max_batch_entries.*required|is required/],
      [['--set', JSON.stringify({ ...CFG, max_batch_entries: 900 })], /exceeds the server's max_batch_entries \(800/],
      [['--set', JSON.stringify({ ...CFG, bogus: 1 })], /bogus/],
      [['--set', JSON.stringify(CFG), '--apply-after', 'tomorrow'], /RFC 3339/],
      [['--set', JSON.stringify(CFG), '--clear'], /exactly one/],
    ];
    // each is refused on its own (nothing stored): they run side by side
    const [unknown, ...runs] = await cliEach([
      ['agent', 'config', '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', '--clear', '--db', t.dbPath],
      ...cases.map(([args]) => ['agent', 'config', h.host_id, ...args, '--db', t.dbPath]),
    ]);
    for (const [i, [args, msg]] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stdout).toBe('');
    }
    expect(unknown!.code).toBe(2);
    expect(unknown!.stderr).toMatch(/no agent with host_id/);
    const after = await getAgent(t.server.storage.db, h.host_id);
    expect(after?.agent_config_json).toBeNull();
    expect(after?.config_version).toBe(before?.config_version);
  });
});

describe('revocation', () => {
  it('agent revoke (second process): agent.shutdown {Revoked, 0} and close 4002 within 2 s; later hello -32002 + 4002', async () => {
    const a = await connectAgent(t);
    const r = cli(['agent', 'revoke', a.host_id, '--db', t.dbPath]); // blocks until committed
    const started = Date.now();
    expect(r.code).toBe(0);
    const shutdown = await a.client.next((m) => m.method === 'agent.shutdown');
    expect(shutdown.params).toEqual({ reason: 'Revoked', drain_seconds: 0 });
    const closed = await a.client.closed;
    expect(closed.code).toBe(4002);
    expect(Date.now() - started).toBeLessThan(LIMITS.control_propagation_ms);
    const row = await t.server.storage.db.selectFrom('agents').selectAll().where('host_id', '=', a.host_id).executeTakeFirstOrThrow();
    expect(row.token_hash).toBeNull();
    expect(row.token_hash_prev).toBeNull();
    expect(row.connection_state).toBe('Revoked');
    const c = await TestClient.open(t.url);
    const res = await c.request('agent.hello', helloParams(a.host_id, a.token));
    expect(res.error?.code).toBe(-32002);
    expect((await c.closed).code).toBe(4002);
  });
});

describe('agent group', () => {
  it('moves a connected host into a group and out again: config.update within 2 s, the session and token kept; audited; bad input exit 2 (H51)', async () => {
    const a = await connectAgent(t);
    const groupCfg = { ...CFG, heartbeat_interval_secs: 20 };
    const made = cli(['agent', 'config', '--group', 'movers', '--set', JSON.stringify(groupCfg), '--db', t.dbPath]);
    expect(made.code, made.stderr).toBe(0);
    const r = cli(['agent', 'group', a.host_id, '--set', 'movers', '--db', t.dbPath]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${a.host_id} is in group movers now`);
    const upd = await a.client.next((m) => m.method === 'config.update');
    expect(upd.params).toEqual({ config: groupCfg, apply_after: null });
    const row = await t.server.storage.db.selectFrom('agents').selectAll().where('host_id', '=', a.host_id).executeTakeFirstOrThrow();
    expect([row.group_name, row.connection_state]).toEqual(['movers', 'Active']);
    expect(a.client.ws.readyState).toBe(a.client.ws.OPEN); // not closed: the token was not reissued
    const out = cli(['agent', 'group', a.host_id, '--clear', '--db', t.dbPath]);
    expect(out.code, out.stderr).toBe(0);
    const back = await a.client.next((m) => m.method === 'config.update' && m !== upd);
    expect(back.params).toMatchObject({ config: { heartbeat_interval_secs: 30, max_batch_entries: 800 } });
    // the audit read and the refusals (exit 2: nothing changed) run side by side
    const [auditRun, noOp, both, badName, unknown] = await cliEach([
      ['audit', '--json', '--host-id', a.host_id, '--db', t.dbPath],
      ['agent', 'group', a.host_id, '--db', t.dbPath],
      ['agent', 'group', a.host_id, '--set', 'x', '--clear', '--db', t.dbPath],
      ['agent', 'group', a.host_id, '--set', '-bad', '--db', t.dbPath],
      ['agent', 'group', '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', '--set', 'movers', '--db', t.dbPath],
    ]);
    const audit = JSON.parse(auditRun!.stdout) as { action: string; detail: Record<string, unknown> }[];
    expect(audit.filter((x) => x.action === 'agent.group').map((x) => x.detail['group'])).toEqual(expect.arrayContaining(['movers', null]));
    expect(noOp!.code).toBe(2);
    expect(both!.code).toBe(2);
    expect(badName!.stderr).toContain('a group name is 1-64 letters');
    expect([unknown!.code, unknown!.stderr.includes('E_UNKNOWN_HOST')]).toEqual([2, true]);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('agent issue --host-id on a connected host', () => {
  it('closes the session 1000 saying the token was reissued (not "replaced by a newer session"); the old token then gets -32001 (H48)', async () => {
    const a = await connectAgent(t);
    const r = cli(['agent', 'issue', '--host-id', a.host_id, '--json', '--db', t.dbPath]);
    expect(r.code, r.stderr).toBe(0);
    expect(await a.client.closed).toEqual({ code: 1000, reason: 'token reissued: enroll again with the new token' });
    expect(t.log.records().some((x) => x['msg'] === 'token reissued (agent issue --host-id): closing the session; the agent must enroll again with the new token' && x['host_id'] === a.host_id)).toBe(true);
    const c = await TestClient.open(t.url);
    expect((await c.request('agent.hello', helloParams(a.host_id, a.token))).error?.code).toBe(-32001);
    await c.closed;
  });
});

describe('rotation (DESIGN 5.2)', () => {
  it('connected agent asked to reconnect within 2 s; next hello rotates; the previous token recovers inside the grace window; the new one clears prev', async () => {
    const a = await connectAgent(t);
    expect(cli(['agent', 'rotate', a.host_id, '--grace-secs', '60', '--db', t.dbPath]).code).toBe(0); // blocks until committed
    const started = Date.now();
    const sd = await a.client.next((m) => m.method === 'agent.shutdown');
    expect(Date.now() - started).toBeLessThan(LIMITS.control_propagation_ms);
    expect(sd.params).toEqual({ reason: 'ServerReload', drain_seconds: 0 });
    a.client.ws.close(1000, 'final_seq=0');
    await a.client.closed;
    const old = a.token;
    const c1 = await TestClient.open(t.url);
    const h1 = await c1.request('agent.hello', helloParams(a.host_id, old));
    const t2 = h1.result.rotated_token as string;
    t.tokens.push(t2);
    expect(t2).toMatch(/^[A-Za-z0-9_-]{43}$/);
    c1.ws.close();
    await c1.closed;
    // the agent "lost" t2: the previous token still works inside the window, rotated again
    const c2 = await TestClient.open(t.url);
    const h2 = await c2.request('agent.hello', helloParams(a.host_id, old));
    const t3 = h2.result.rotated_token as string;
    t.tokens.push(t3);
    expect(t3).toBeDefined();
    expect(t3).not.toBe(t2);
    c2.ws.close();
    await c2.closed;
    // hello with the newest token: no rotation, prev cleared; the old token is now refused
    const c3 = await TestClient.open(t.url);
    const h3 = await c3.request('agent.hello', helloParams(a.host_id, t3));
    expect(h3.result.rotated_token).toBeUndefined();
    c3.ws.close();
    await c3.closed;
    const row = await t.server.storage.db.selectFrom('agents').select(['token_hash_prev', 'rotate_requested_at']).where('host_id', '=', a.host_id).executeTakeFirstOrThrow();
    expect(row.token_hash_prev).toBeNull();
    expect(row.rotate_requested_at).toBeNull();
    const c4 = await TestClient.open(t.url);
    expect((await c4.request('agent.hello', helloParams(a.host_id, old))).error?.code).toBe(-32001);
  });

  // These two only wait (the grace window, rotation_close_grace_ms) on hosts of their own, in
  // process (no spawnSync blocking the loop): they wait side by side.
  it.concurrent('after the grace window the previous token gets -32005 and close 4001', async ({ expect }) => {
    const a = await connectAgent(t);
    a.client.ws.close();
    await a.client.closed;
    await requestRotation(t.server.storage.db, a.host_id, 1);
    const c1 = await TestClient.open(t.url);
    const h1 = await c1.request('agent.hello', helloParams(a.host_id, a.token));
    t.tokens.push(h1.result.rotated_token);
    c1.ws.close();
    await c1.closed;
    await new Promise((r) => setTimeout(r, 1100)); // the 1 s grace window passes (time itself is the event)
    const c2 = await TestClient.open(t.url);
    const h2 = await c2.request('agent.hello', helloParams(a.host_id, a.token));
    expect(h2.error?.code).toBe(-32005);
    expect((await c2.closed).code).toBe(4001);
  });

  it.concurrent('an agent that does not reconnect is closed with 1012 rotation_close_grace_ms later', async ({ expect }) => {
    const a = await connectAgent(t);
    await requestRotation(t.server.storage.db, a.host_id, 60);
    await a.client.next((m) => m.method === 'agent.shutdown');
    const asked = Date.now();
    const closed = await a.client.closed;
    expect(closed.code).toBe(1012);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(LIMITS.rotation_close_grace_ms - 500);
    expect(Date.now() - asked).toBeLessThan(LIMITS.rotation_close_grace_ms + 2000);
  }, 15_000);
});

// Two hosts of their own, the CLI run without blocking the loop (nothing here is timed from
// the command's exit): the two tests run side by side, the drain of the first overlapping the
// second.
describe('decommission (DESIGN 5.13)', () => {
  it.concurrent('Decommission shutdown, acks during the drain, then revoked and closed 4002; rows kept; reconnect -32002', async ({ expect }) => {
    const a = await connectAgent(t);
    expect((await cliAsync(['agent', 'decommission', a.host_id, '--drain-secs', '2', '--db', t.dbPath])).code).toBe(0);
    const sd = await a.client.next((m) => m.method === 'agent.shutdown');
    expect(sd.params).toEqual({ reason: 'Decommission', drain_seconds: 2 });
    const ack = await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 10) });
    expect(ack.result.up_to_seq).toBe(10);
    const closed = await a.client.closed;
    expect(closed.code).toBe(4002);
    const row = await t.server.storage.db.selectFrom('agents').selectAll().where('host_id', '=', a.host_id).executeTakeFirstOrThrow();
    expect(row.connection_state).toBe('Revoked');
    expect(row.token_hash).toBeNull();
    const logs = await t.server.storage.db.selectFrom('logs').select('seq').where('host_id', '=', a.host_id).execute();
    expect(logs).toHaveLength(10);
    const c = await TestClient.open(t.url);
    expect((await c.request('agent.hello', helloParams(a.host_id, a.token))).error?.code).toBe(-32002);
    expect((await c.closed).code).toBe(4002);
  });

  it.concurrent('an agent that closes early is revoked at once; a host that is not connected is revoked at once', async ({ expect }) => {
    const connected = async () => {
      const a = await connectAgent(t);
      expect((await cliAsync(['agent', 'decommission', a.host_id, '--drain-secs', '30', '--db', t.dbPath])).code).toBe(0);
      await a.client.next((m) => m.method === 'agent.shutdown');
      const closedAt = Date.now();
      a.client.ws.close(1000, 'final_seq=0');
      await a.client.closed;
      let state = '';
      while (Date.now() - closedAt < 2000) {
        state = (await getAgent(t.server.storage.db, a.host_id))?.connection_state ?? '';
        if (state === 'Revoked') break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(state).toBe('Revoked');
    };
    // another host: the two cases run side by side
    const offline = async () => {
      const h = await t.issue('offline');
      const r = await cliAsync(['agent', 'decommission', h.host_id, '--db', t.dbPath]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/revoked now/);
      expect((await getAgent(t.server.storage.db, h.host_id))?.connection_state).toBe('Revoked');
    };
    await Promise.all([connected(), offline()]);
  });
});
