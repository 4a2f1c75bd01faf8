// PostgreSQL only: a server whose machine clock is wrong keeps what it writes to and compares
// with the database in the database's time (DECISIONS G31). Before, a `serve` started on a
// machine 60 days ahead dropped, 5 s after its start, every log row of the cluster (its
// retention cutoff was its own clock less 30 days), the day partitions of the coming days
// with them; one 40 days behind stamped the rows it stored 40 days old (for the others'
// retention to purge at their next pass) and took a rotated-away token for 40 days more.
// Real `serve` processes, each with its own clock (test/support/skewed-clock.mjs, as
// libfaketime would set it); A has the right time.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { newTestDb, pgQuery, type TestDbTarget } from '../support/dialects.js';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { issueAgent, requireDist, ROOT, SERVER_CLI, startServer, tokens, type ServerProc } from '../support/procs.js';
import { helloParams, logEntries, TestClient } from '../server/wire.js';
import { metricValue } from '../server/control-helpers.js';

const DAY = 86_400_000;

let db: TestDbTarget;
const servers: ServerProc[] = [];
beforeAll(async () => {
  requireDist();
  db = await newTestDb('postgres');
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill()));
  await db.drop();
});

const query = <T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> => pgQuery<T>(db.db, text, values);

async function serve(id: string, clockSkewMs?: number): Promise<ServerProc> {
  const s = await startServer(db.db, ['--server-id', id], clockSkewMs === undefined ? {} : { clockSkewMs });
  servers.push(s);
  return s;
}

/** An issued host's hello on `server`; the client and the long-lived token it got. */
async function connect(server: ServerProc, name: string): Promise<{ client: TestClient; host_id: string; token: string; serverTime: string }> {
  const issued = issueAgent(db.db, name);
  const client = await TestClient.open(server.url);
  const res = await client.request('agent.hello', helloParams(issued.host_id, issued.token));
  if (res.error) throw new Error(`hello failed: ${JSON.stringify(res.error)}`);
  return { client, host_id: issued.host_id, token: String(res.result.rotated_token), serverTime: String(res.result.server_time) };
}

async function metric(server: ServerProc, name: string): Promise<number> {
  return metricValue(await (await fetch(`${server.http}/metrics`)).text(), name);
}

const near = (iso: unknown, ms: number, within = 10_000) => Math.abs(Date.parse(String(iso)) - ms) < within;

it('a server 60 days ahead keeps the rows another just stored and counts no agent silent; one 40 days behind stamps rows, last_seen and a token grace in the database\'s time', async () => {
  const a = await serve('server-a');
  const onA = await connect(a, 'right-clock');
  expect((await onA.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 5) })).result).toMatchObject({ up_to_seq: 5 });

  // the server 60 days ahead: its first retention pass (5 s after start) leaves them all
  const ahead = await serve('server-ahead', 60 * DAY);
  expect(ahead.stderr()).toContain("this server's clock is 5184000.0 s ahead of the database's");
  for (let i = 0; !((await metric(ahead, 'cortex_retention_runs_total')) >= 1); i++) {
    if (i > 150) throw new Error(`no retention pass on the server ahead: ${ahead.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(ahead.stderr()).not.toContain('retention: old rows deleted');
  expect(ahead.stderr()).not.toContain('expired day partitions dropped');
  expect((await query<{ n: string }>('select count(*) as n from logs'))[0]?.n).toBe('5');
  const today = new Date().toISOString().slice(0, 10).replace(/-/g, '');
  expect(await query(`select 1 from pg_tables where tablename = $1 and schemaname = current_schema()`, [`logs_p${today}`])).toHaveLength(1);
  // nor does it count the agent heard from a moment ago as silent (silent_after_secs 300)
  expect(await metric(ahead, 'cortex_agents_silent')).toBe(0);
  expect(await metric(a, 'cortex_agents_silent')).toBe(0);

  // the server 40 days behind: what it stores and writes is stamped now, not 40 days ago
  const behind = await serve('server-behind', -40 * DAY);
  const t0 = Date.now();
  const onBehind = await connect(behind, 'slow-clock');
  const ack = await onBehind.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 4) });
  expect(near(ack.result?.['received_at'], t0)).toBe(true);
  expect(near(onBehind.serverTime, t0)).toBe(true);
  const stamped = await query<{ received_at: string }>('select received_at from logs where host_id = $1', [onBehind.host_id]);
  expect(stamped).toHaveLength(4);
  for (const r of stamped) expect(near(r.received_at, t0)).toBe(true);
  const [row] = await query<{ last_seen: string; last_handshake: string }>('select last_seen, last_handshake from agents where host_id = $1', [onBehind.host_id]);
  expect(near(row?.last_seen, t0)).toBe(true);
  expect(near(row?.last_handshake, t0)).toBe(true);

  // a token rotated away whose grace ran out a second ago is refused by the server behind too
  onA.client.ws.close();
  await onA.client.closed;
  await query("update agents set token_hash_prev = token_hash, token_hash = repeat('f', 64), token_rotation_grace_until = $2 where host_id = $1", [
    onA.host_id,
    new Date(Date.now() - 1000).toISOString(),
  ]);
  for (const s of [behind, a]) {
    const client = await TestClient.open(s.url);
    const res = await client.request('agent.hello', helloParams(onA.host_id, onA.token));
    expect(res.error).toMatchObject({ code: -32005, data: { reason: expect.stringMatching(/previous token is no longer valid/) } });
    await client.closed;
  }
  onBehind.client.ws.close();
  await onBehind.client.closed;
});

// G39: `agent issue --db` and `agent tokens --db` run on an operator's machine, not the
// database's. The servers compare a token's expiry with the database's clock (G31).
it("agent issue --db on a machine a day behind gives a token that works for --expires-in by the database's clock; agent tokens on one ahead does not call it expired", async () => {
  const a = await serve('server-tokens');
  const cliWithClock = (skewMs: number, args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', resolve(ROOT, 'test/support/skewed-clock.mjs'), SERVER_CLI, ...args, '--db', db.db], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, CORTEX_TEST_CLOCK_SKEW_MS: String(skewMs) },
    });
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.status).toBe(0);
    return r.stdout;
  };
  const t0 = Date.now();
  const issued = JSON.parse(cliWithClock(-DAY, ['agent', 'issue', '--host', 'laptop-behind', '--expires-in', '1h', '--json'])) as { host_id: string; token: string };
  tokens.add(issued.token);
  const [row] = await query<{ expires_at: string; created_at: string }>(
    'select e.expires_at, a.created_at from enrollment_tokens e join agents a on a.host_id = e.host_id where e.host_id = $1',
    [issued.host_id],
  );
  expect(near(row?.expires_at, t0 + 3_600_000)).toBe(true);
  expect(near(row?.created_at, t0)).toBe(true);
  // listed from a machine two hours ahead: not expired (its own clock would say so)
  const listed = JSON.parse(cliWithClock(2 * 3_600_000, ['agent', 'tokens', '--json'])) as { host_id: string; expired: boolean }[];
  expect(listed.find((t) => t.host_id === issued.host_id)).toMatchObject({ expired: false });
  // and the enrollment hello is accepted (it was refused as expired: the token had expired 23 h before it was issued)
  const client = await TestClient.open(a.url);
  const res = await client.request('agent.hello', helloParams(issued.host_id, issued.token));
  expect(res.error).toBeUndefined();
  tokens.add(String(res.result.rotated_token));
  client.ws.close();
  await client.closed;
});
