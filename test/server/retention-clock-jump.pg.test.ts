// PostgreSQL: a server's own clock stepped ahead between two lease renewals (DECISIONS H76).
// The registry's now() is this clock less the offset to the database's, measured at each
// renewal (G31); until the next one the offset is stale and now() is as far ahead as the step.
// Before, a retention pass in that window (here: the first, 5 s after start, with renewals every
// 20 s) took it: with a step of 60 days it dropped every day partition of the cluster. Now the
// cutoff moves only as far as the time the process has seen pass.
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { issueAgent } from '../../server/db/agents.repository.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { openStorage } from '../../server/db/open.js';
import { newTestDb, pgQuery, type TestDbTarget } from '../support/dialects.js';
import { entries } from './helpers.js';
import { requireServerCli, ROOT, serve } from './spawn.js';
import { nextStderrLine } from '../support/procs.js';

const DAY = 86_400_000;

let target: TestDbTarget;
beforeAll(async () => {
  requireServerCli();
  target = await newTestDb('postgres');
}, 60_000);
afterAll(async () => {
  await target.drop();
});


it("a server whose clock steps 60 days ahead before its next lease renewal: its pass drops only the partition 40 days old, and says why it keeps the rest", async () => {
  const st = await openStorage(target.db, { poolSize: 2 });
  try {
    await migrateToLatest(st);
    const h = await issueAgent(st.db, 'pg-stepped');
    await st.ingest.commitBatch(h.host_id, entries(1, 50), new Date(Date.now() - 40 * DAY).toISOString());
    await st.ingest.commitBatch(h.host_id, entries(51, 150), new Date(Date.now() - DAY).toISOString());
  } finally {
    await st.close();
  }
  const preload = resolve(ROOT, 'test/support/clock-step-on-signal.mjs');
  const s = await serve(['--db', target.db, '--lease-secs', '60'], { NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import=${preload}`.trim(), CORTEX_TEST_CLOCK_STEP_MS: String(60 * DAY) });
  try {
    const stepped = nextStderrLine(s.child, (r) => String(r['line']).startsWith('test clock: stepped'), 5_000);
    const deleted = nextStderrLine(s.child, (r) => r['msg'] === 'retention: old rows deleted', 20_000);
    s.child.kill('SIGUSR2'); // at once after start: the next renewal is 20 s away, the first pass 5 s
    await stepped;
    expect(await deleted).toMatchObject({ logs: 50 });
    const warned = s.stderr().split('\n').filter((l) => l.includes('ahead of the time this process has seen pass'));
    expect(warned).toHaveLength(1);
    expect(JSON.parse(warned[0] as string)).toMatchObject({ level: 'warn', clock_jump_s: expect.any(Number), msg: expect.stringMatching(/^retention: the database's time as this server reckons it .* jumped 60\.0 days ahead/) });
    const rows = await pgQuery<{ seq: string }>(target.db, 'select seq from logs order by seq');
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 100 }, (_, i) => 51 + i));
    const today = `logs_p${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
    expect(await pgQuery(target.db, 'select 1 from pg_tables where tablename = $1 and schemaname = current_schema()', [today])).toHaveLength(1);
  } finally {
    s.child.kill('SIGKILL');
    await s.exited;
  }
}, 40_000);
