// A small fleet (20 simulated agents in this process) against the reference server
// process: enrollment with rotation persisted to the token file, probes through the admin
// API, config.update applied, reconnect after a server SIGKILL, and every generated entry
// stored exactly once.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { validateFsDiskUsageOutput, validateSysUptimeOutput } from '@cortex/agent-protocol';
import { Fleet, type FleetOptions } from '../../fleet/fleet.js';
import type { AgentInfo } from '../../fleet/sim-agent.js';
import { readTokenFile } from '../../fleet/identities.js';
import { FLEET_PROBES } from '../../fleet/probes.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { issueAgent } from '../../server/db/agents.repository.js';
import { SERVER_CLI, cleanupTempDirs, cliSync, requireDist, startServer, tempDir, type ServerProc } from '../support/procs.js';

const AGENTS = 20;

async function issueHosts(db: string, n: number, prefix: string) {
  const storage = openSqliteStorage({ path: db });
  await migrateToLatest(storage);
  const issued = [];
  for (let i = 0; i < n; i++) issued.push(await issueAgent(storage.db, `${prefix}-${i}`));
  await storage.close();
  return issued;
}

function fleetOptions(url: string, identities: FleetOptions['identities'], tokenFile: string, ratePerAgent: number): FleetOptions {
  return {
    identities,
    workers: 0,
    url,
    ratePerAgent,
    backoff: { baseMs: 100, capMs: 1000, resetAfterMs: 60_000 },
    connectTimeoutMs: 5000,
    helloTimeoutMs: 5000,
    requestTimeoutMs: 10_000,
    window: 4,
    maxBatchEntries: 1000,
    messageBytes: 60,
    probes: [...FLEET_PROBES],
    agentVersion: '1.0.0',
    heartbeatMs: 300,
    startConcurrency: 10,
    tokenFile,
  };
}

/** Every host's rows are exactly seq 1..generated, once each. */
function expectExactlyOnce(db: string, infos: readonly (AgentInfo | undefined)[]): number {
  const sqlite = new Database(db, { readonly: true });
  try {
    const rows = sqlite.prepare('select host_id, count(*) as n, count(distinct seq) as d, min(seq) as lo, max(seq) as hi from logs group by host_id').all() as { host_id: string; n: number; d: number; lo: number; hi: number }[];
    const byHost = new Map(rows.map((r) => [r.host_id, r]));
    let total = 0;
    for (const info of infos) {
      const r = byHost.get(info!.host_id);
      const generated = info!.next_seq - 1;
      expect(r, info!.host_id).toBeDefined();
      expect({ n: r!.n, d: r!.d, lo: r!.lo, hi: r!.hi }).toEqual({ n: generated, d: generated, lo: 1, hi: generated });
      total += r!.n;
    }
    return total;
  } finally {
    sqlite.close();
  }
}

beforeAll(() => requireDist());
afterAll(() => cleanupTempDirs());

async function post(base: string, path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

it(`${AGENTS} simulated agents: rotation persisted, probes answered, config applied, back after a server SIGKILL, entries stored exactly once`, async () => {
  const dir = tempDir('cortex-fleet-');
  const db = join(dir, 'server.db');
  const issued = await issueHosts(db, AGENTS, 'fleet-test');
  const tokenFile = join(dir, 'tokens.jsonl');
  writeFileSync(tokenFile, issued.map((x) => JSON.stringify(x)).join('\n') + '\n');

  let server: ServerProc = await startServer(db);
  const fleet = await Fleet.start(fleetOptions(server.url, readTokenFile(tokenFile), tokenFile, 20));
  try {
    let s = await fleet.waitFor((x) => x.states.Active === AGENTS, 20_000);
    expect(s.counters.rotated_tokens).toBe(AGENTS);
    // every host's current token in the file is the rotated one, not the one-time token
    const persisted = new Map(readTokenFile(tokenFile).map((x) => [x.host_id, x.token]));
    for (const x of issued) {
      expect(persisted.get(x.host_id)).toBeDefined();
      expect(persisted.get(x.host_id)).not.toBe(x.token);
    }

    // probes through the admin API, answered by the simulated agents
    const [a, b] = issued as [(typeof issued)[0], (typeof issued)[0]];
    const up = await post(server.http, `/admin/agents/${a.host_id}/probe`, { probe: 'sys.uptime', args: {}, timeout_ms: 3000 });
    expect(up.status).toBe(200);
    expect(validateSysUptimeOutput(up.body['output'])).toBe(true);
    const du = await post(server.http, `/admin/agents/${b.host_id}/probe`, { probe: 'fs.disk_usage', args: { path: '/srv' }, timeout_ms: 3000 });
    expect(du.status).toBe(200);
    expect(validateFsDiskUsageOutput(du.body['output'])).toBe(true);
    const bad = await post(server.http, `/admin/agents/${b.host_id}/probe`, { probe: 'fs.disk_usage', args: { path: 'not/absolute' }, timeout_ms: 3000 });
    expect(bad.status).toBe(502);
    expect((bad.body['error'] as { code: number }).code).toBe(-32602);
    expect((await fleet.inspect(a.host_id))?.probes_answered).toBe(1);

    // config.update: the host's new config reaches its simulated agent and is applied
    const config = { heartbeat_interval_secs: 45, max_batch_entries: 50, flush_interval_ms: 100, metrics_interval_secs: 60, probe_concurrency: 2, log_sources: [] };
    const set = cliSync(SERVER_CLI, ['agent', 'config', a.host_id, '--set', JSON.stringify(config), '--db', db]);
    expect(set.code, set.stderr).toBe(0);
    await fleet.waitForAgent(a.host_id, (x) => x.config_updates === 1, 5000);
    const applied = await fleet.inspect(a.host_id);
    expect(applied?.config_updates).toBe(1);
    expect(applied?.config).toEqual(config);
    expect((await fleet.inspect(b.host_id))?.config_updates).toBe(0);

    // the server dies; every agent comes back on its own with its rotated token
    s = await fleet.snapshot();
    const heartbeatsBefore = s.counters.heartbeats;
    expect(heartbeatsBefore).toBeGreaterThan(0);
    const port = server.port;
    await server.kill();
    await fleet.waitFor((x) => x.states.Active === 0, 10_000, 20);
    server = await startServer(db, [], { port });
    s = await fleet.waitFor((x) => x.states.Active === AGENTS, 20_000);
    expect(s.reconnectTime.count).toBe(AGENTS);
    expect(s.gaveUp.toJSON()).toEqual({});
    expect(s.errors.get('session_closed_1006')).toBe(AGENTS);
    expect(s.counters.rotated_tokens).toBe(AGENTS); // long-lived tokens: no second rotation

    // stop generating; everything generated is acked, then stored exactly once
    await fleet.setRate(0);
    s = await fleet.waitFor((x) => x.entriesPending === 0, 20_000);
    const infos = await Promise.all(issued.map((x) => fleet.inspect(x.host_id)));
    const final = await fleet.stop();
    expect(await server.stop()).toBe(0);
    expect(final.counters.entries_generated).toBeGreaterThan(AGENTS * 10);
    expect(final.counters.entries_acked).toBe(final.counters.entries_generated);
    expect(expectExactlyOnce(db, infos)).toBe(final.counters.entries_generated);
  } finally {
    await fleet.stop().catch(() => undefined);
    await server.kill();
  }
}, 60_000);

it('quota refusals slow agents down without loss; a graceful server stop drains them; a revoked host stops for good', async () => {
  const dir = tempDir('cortex-fleet-');
  const db = join(dir, 'server.db');
  const issued = await issueHosts(db, 5, 'fleet-quota');
  const tokenFile = join(dir, 'tokens.jsonl');
  writeFileSync(tokenFile, issued.map((x) => JSON.stringify(x)).join('\n') + '\n');
  // 100 entries/s per agent allowed, 300/s generated: -32030 QuotaExceeded all along
  const serverArgs = ['--agent-rate', '100', '--shutdown-drain-secs', '5'];
  let server: ServerProc = await startServer(db, serverArgs);
  const fleet = await Fleet.start(fleetOptions(server.url, readTokenFile(tokenFile), tokenFile, 300));
  try {
    await fleet.waitFor((x) => x.states.Active === 5, 20_000);
    await fleet.waitFor((x) => x.errors.get('push_-32030') > 0, 10_000);
    // below the quota again: the backlog is shipped while new entries keep coming
    await fleet.setRate(20);
    await fleet.waitFor((x) => x.entriesPending < 5 * 20, 30_000);

    // SIGTERM: agent.shutdown {ServerReload} to each; they ship what they had, then close
    // themselves with final_seq (the server's 1001 would come only after drain_seconds)
    const port = server.port;
    expect(await server.stop()).toBe(0);
    expect((await fleet.snapshot()).counters.shutdowns).toBe(5);
    const sqlite = new Database(db, { readonly: true });
    const reasons = (sqlite.prepare('select last_disconnect_reason as r from agents').all() as { r: string }[]).map((x) => x.r);
    sqlite.close();
    for (const r of reasons) expect(r).toMatch(/^1000 final_seq=\d+$/);
    server = await startServer(db, serverArgs, { port });
    await fleet.waitFor((x) => x.states.Active === 5 && x.reconnectTime.count === 5, 20_000);

    // revocation: agent.shutdown {Revoked}; the host drops its token and stops
    const [gone, ...rest] = issued as [(typeof issued)[0], ...(typeof issued)[0][]];
    const rv = cliSync(SERVER_CLI, ['agent', 'revoke', gone.host_id, '--db', db]);
    expect(rv.code, rv.stderr).toBe(0);
    await fleet.waitForAgent(gone.host_id, (a) => a.state === 'Revoked', 5000);

    // the others ship everything they generated despite the quota
    await fleet.setRate(0);
    const infos = [];
    for (const x of rest) infos.push(await fleet.waitForAgent(x.host_id, (a) => a.pending === 0, 30_000));
    const final = await fleet.stop();
    expect(await server.stop()).toBe(0);
    expect(final.gaveUp.toJSON()).toEqual({ revoked: 1 });
    expect(final.errors.get('push_-32030')).toBeGreaterThan(0);
    expectExactlyOnce(db, infos);
    // the revoked host is gone from the (compacted) token file
    expect(readTokenFile(tokenFile).map((x) => x.host_id).sort()).toEqual(rest.map((x) => x.host_id).sort());
  } finally {
    await fleet.stop().catch(() => undefined);
    await server.kill();
  }
}, 90_000);
