// Issue 18, operator tools for hostile and unlucky conditions: `agent reset-seq` for a host
// whose accepted_seq left the exact-integer range, enrollment tokens that expire and can be
// listed and withdrawn, and the audit trail of admin actions.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { getAgent } from '../../server/db/agents.repository.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { recordEnrollmentToken } from '../../server/security/enrollment.js';
import { makeTempDir } from '../server/helpers.js';
import { requireServerCli, cli } from '../server/spawn.js';
import { cliEach } from '../support/scli-pool.js';
import { TestClient, helloParams, logEntries, startTestServer } from '../server/wire.js';

beforeAll(() => requireServerCli(), 60_000);

function issue(db: string, extra: string[] = []): { host_id: string; token: string } {
  const r = cli(['agent', 'issue', '--host', 'web-1', '--json', '--db', db, ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { host_id: string; token: string };
}

describe('agent reset-seq', () => {
  it('repairs a host blackholed by accepted_seq 1e300: rows above max_seq deleted, accepted_seq = highest stored seq; audited', async () => {
    const db = join(makeTempDir(), 'c.db');
    const h = issue(db);
    // The state a pre-H1 server left behind: a push with seq 1e300 was committed and acked.
    const storage = openSqliteStorage({ path: db });
    await migrateToLatest(storage);
    await storage.ingest.commitBatch(h.host_id, logEntries(1, 3), new Date().toISOString());
    await storage.ingest.commitBatch(h.host_id, [{ ...logEntries(1, 1)[0]!, seq: 1e300 }], new Date().toISOString());
    expect(Number((await getAgent(storage.db, h.host_id))?.accepted_seq)).toBe(1e300);
    await storage.close();

    // the refusals (exit 2, nothing changed) side by side, before the repair
    const [below, aboveExact, unknown] = await cliEach([
      ['agent', 'reset-seq', h.host_id, '--to', '2', '--db', db],
      ['agent', 'reset-seq', h.host_id, '--to', '9007199254740992', '--db', db],
      ['agent', 'reset-seq', '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', '--db', db],
    ]);
    expect(below!.code).toBe(2);
    expect(below!.stderr).toContain('--to 3');
    expect(aboveExact!.code).toBe(2);
    expect(unknown!.code).toBe(2);

    const r = cli(['agent', 'reset-seq', h.host_id, '--json', '--db', db]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ host_id: h.host_id, previous_accepted_seq: 1e300, accepted_seq: 3, deleted_rows: 1 });

    // A healthy host: raising its accepted_seq would ack seqs never stored (the agent drops them).
    const healthy = issue(db);
    const s2 = openSqliteStorage({ path: db });
    await s2.ingest.commitBatch(healthy.host_id, logEntries(1, 5), new Date().toISOString());
    await s2.close();
    // the refusal changes nothing: it runs beside the reset to the same value
    const [up, same] = await cliEach([
      ['agent', 'reset-seq', healthy.host_id, '--to', '9', '--db', db],
      ['agent', 'reset-seq', healthy.host_id, '--to', '5', '--json', '--db', db],
    ]);
    expect(up!.code).toBe(2);
    expect(up!.stderr).toContain('--to 9 is above this host\'s accepted_seq 5: the server would ack seqs 6 to 9 without storing them');
    expect(JSON.parse(same!.stdout)).toMatchObject({ previous_accepted_seq: 5, accepted_seq: 5, deleted_rows: 0 });

    const audit = cli(['audit', '--json', '--db', db]);
    expect(audit.code).toBe(0);
    const rows = JSON.parse(audit.stdout) as { actor: string; action: string; host_id: string; detail: Record<string, unknown> }[];
    expect(rows.map((x) => x.action)).toEqual(['agent.issue', 'agent.reset-seq', 'agent.issue', 'agent.reset-seq']);
    expect(rows[1]).toMatchObject({ host_id: h.host_id, detail: { to: 3, deleted_rows: 1 } });
    expect(rows[1]!.actor).toMatch(/^cli:/);
    expect(audit.stdout).not.toContain(h.token);
  });
});

describe('enrollment tokens', () => {
  it('issue --expires-in sets expires_at (default 7 days); tokens lists unused ones; withdraw takes one off the list; all audited', async () => {
    const db = join(makeTempDir(), 'c.db');
    const a = issue(db, ['--expires-in', '24h']); // creates the database
    const [issuedB, soon] = await cliEach([
      ['agent', 'issue', '--host', 'web-1', '--json', '--db', db],
      ['agent', 'issue', '--host', 'x', '--expires-in', 'soon', '--db', db],
    ]);
    expect(issuedB!.code, issuedB!.stderr).toBe(0);
    const b = JSON.parse(issuedB!.stdout) as { host_id: string; token: string };
    expect(soon!.code).toBe(2);
    const list = cli(['agent', 'tokens', '--json', '--db', db]);
    expect(list.code).toBe(0);
    const tokens = JSON.parse(list.stdout) as { host_id: string; expires_at: string; issued_at: string; expired: boolean }[];
    expect(tokens.map((x) => x.host_id).sort()).toEqual([a.host_id, b.host_id].sort());
    const ta = tokens.find((x) => x.host_id === a.host_id)!;
    const tb = tokens.find((x) => x.host_id === b.host_id)!;
    expect(Date.parse(ta.expires_at) - Date.parse(ta.issued_at)).toBe(24 * 3600 * 1000);
    expect(Date.parse(tb.expires_at) - Date.parse(tb.issued_at)).toBe(7 * 24 * 3600 * 1000);
    expect(list.stdout).not.toContain(a.token);

    const w = cli(['agent', 'withdraw', a.host_id, '--db', db]);
    expect(w.code, w.stderr).toBe(0);
    const [again, afterList] = await cliEach([
      ['agent', 'withdraw', a.host_id, '--db', db],
      ['agent', 'tokens', '--json', '--db', db],
    ]);
    expect(again!.code).toBe(2);
    const after = JSON.parse(afterList!.stdout) as { host_id: string }[];
    expect(after.map((x) => x.host_id)).toEqual([b.host_id]);

    const actions = (JSON.parse(cli(['audit', '--json', '--db', db]).stdout) as { action: string }[]).map((x) => x.action);
    expect(actions).toEqual(['agent.issue', 'agent.issue', 'agent.withdraw']);
  });

  it('an expired token gets -32001 and a log line naming the host and "expired"; a fresh one enrolls', async () => {
    const t = await startTestServer();
    try {
      const h = await t.issue();
      await recordEnrollmentToken(t.server.storage.db, h.host_id, 1000, new Date(Date.now() - 2000));
      const c = await TestClient.open(t.url);
      const r = await c.request('agent.hello', helloParams(h.host_id, h.token));
      expect(r.error?.code).toBe(-32001);
      expect((await c.closed).code).toBe(4001);
      expect(t.log.lines.some((l) => l.includes(h.host_id) && l.includes('expired'))).toBe(true);
      const fresh = await t.issue();
      await recordEnrollmentToken(t.server.storage.db, fresh.host_id, 60_000);
      const c2 = await TestClient.open(t.url);
      const ok = await c2.request('agent.hello', helloParams(fresh.host_id, fresh.token));
      expect(ok.error).toBeUndefined();
      if (ok.result.rotated_token) t.tokens.push(ok.result.rotated_token);
      c2.ws.close();
      await c2.closed;
    } finally {
      await t.close();
    }
  });
});

describe('audit', () => {
  it('revoke, rotate, decommission and config are audited with the CLI actor; --json is one array; -n limits', async () => {
    const db = join(makeTempDir(), 'c.db');
    const h = issue(db);
    expect(cli(['agent', 'rotate', h.host_id, '--db', db]).code).toBe(0);
    const cfg = { heartbeat_interval_secs: 30, max_batch_entries: 100, flush_interval_ms: 200, metrics_interval_secs: 60, probe_concurrency: 4, log_sources: [] };
    expect(cli(['agent', 'config', h.host_id, '--set', JSON.stringify(cfg), '--db', db]).code).toBe(0);
    expect(cli(['agent', 'revoke', h.host_id, '--db', db]).code).toBe(0);
    expect(cli(['agent', 'decommission', h.host_id, '--db', db]).code).toBe(2); // revoked: nothing changed, nothing audited
    // reads only: side by side
    const [allRun, lastRun, human, badN] = await cliEach([
      ['audit', '--json', '--db', db],
      ['audit', '--json', '-n', '1', '--db', db],
      ['audit', '--db', db],
      ['audit', '-n', 'x', '--db', db],
    ]);
    const all = JSON.parse(allRun!.stdout) as { action: string; at: string }[];
    expect(all.map((x) => x.action)).toEqual(['agent.issue', 'agent.rotate', 'agent.config.set', 'agent.revoke']);
    const last = JSON.parse(lastRun!.stdout) as { action: string }[];
    expect(last.map((x) => x.action)).toEqual(['agent.revoke']);
    expect(human!.stdout).toContain('agent.revoke');
    expect(badN!.code).toBe(2);
  });
});
