// /healthz and /metrics with a database that does not answer (DECISIONS G41): the path to
// PostgreSQL frozen — connections accepted, nothing answered, nothing refused or reset, as a
// network that drops packets or a host that hangs. /healthz waited for the pool's connection
// timeout (10 s) on every request, so a load balancer's check (2-5 s) timed out instead of
// reading 503, and /metrics as long, so Prometheus (scrape_timeout 10 s) never collected
// cortex_database_up 0. Both answer within a bound now: 503 "unreachable" and
// cortex_database_up 0 (once the outage account knows), the gauges read from the database
// left out.
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { startTestServer, waitFor, type TestServer } from './wire.js';
import { httpBase, httpRequest, metricValue } from './control-helpers.js';
import { newTestDb } from '../support/dialects.js';
import { FreezingRelay } from '../support/freezing-relay.js';
import { openPostgresStorage } from '../../server/db/postgres.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import type { Storage } from '../../server/db/storage.js';

/** A GET and how long its answer took. */
async function timed(url: string): Promise<{ ms: number; status: number; text: string; body: { status?: string; database?: string } }> {
  const at = Date.now();
  // Given up after 15 s (the answer it was waiting for could take forever): a status of 0.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const r = await Promise.race([httpRequest(url), new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 15_000)))]).finally(() => clearTimeout(timer));
  return { ms: Date.now() - at, status: r?.status ?? 0, text: r?.text ?? '', body: (r?.body ?? {}) as { status?: string; database?: string } };
}

/** The pool's bounds here (silentMs, connectTimeoutMs; 10 s by default), longer than the 3.5 s the answers are given. */
const POOL_BOUND_MS = 5000;

let t: TestServer | undefined;
let relay: FreezingRelay | undefined;
let storage: Storage | undefined;
let dropDb: (() => Promise<void>) | undefined;
afterEach(async () => {
  relay?.thaw(); // the server's close needs its database
  await t?.close();
  await storage?.close();
  await relay?.close();
  await dropDb?.();
  t = relay = storage = dropDb = undefined;
});

describe('/healthz and /metrics while PostgreSQL does not answer', () => {
  it('both answer within a bound, saying the database is down; once it answers again, 200', async () => {
    const target = await newTestDb('postgres');
    dropDb = target.drop;
    const url = new URL(target.db);
    relay = new FreezingRelay({ host: url.hostname, port: Number(url.port || 5432) });
    await relay.open();
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    // The pool's bounds (a statement unanswered, a connection not made: 10 s by default) at 5 s
    // so that the test takes seconds: still longer than the 3.5 s /healthz and /metrics are
    // given here, so an answer that waits for them fails as it did with 10 s.
    storage = openPostgresStorage({ url: url.toString(), poolSize: 4, silentMs: POOL_BOUND_MS, connectTimeoutMs: POOL_BOUND_MS });
    await migrateToLatest(storage);
    t = await startTestServer({ db: url.toString() }, { dialect: 'postgres', storage });
    // When it fails (a CI run saw it twice, not reproduced alone): the server's lines, to tell which operation said what when.
    const server = t;
    const marks: [string, string][] = [];
    const mark = (what: string) => void marks.push([what, new Date().toISOString()]);
    onTestFailed(() => console.log(JSON.stringify({ marks, log: server.log.records() })));
    await t.issue('web-1');
    const base = httpBase(t);

    let h = await timed(`${base}/healthz`);
    expect(h.status).toBe(200);
    let m = await timed(`${base}/metrics`);
    expect(metricValue(m.text, 'cortex_database_up')).toBe(1);
    expect(metricValue(m.text, 'cortex_agents', { state: 'NeverConnected' })).toBe(1);

    relay.freeze();
    mark('frozen');
    // Before anything of the server has found the database out of reach: bounded by the
    // check's own timeout (2 s), not the pool's connection timeout (POOL_BOUND_MS).
    h = await timed(`${base}/healthz`);
    expect(h.ms, 'first /healthz with the database frozen').toBeLessThan(3500);
    expect(h.status).toBe(503);
    expect(h.body).toMatchObject({ status: 'degraded', database: 'unreachable' });
    m = await timed(`${base}/metrics`);
    expect(m.ms, 'first /metrics with the database frozen').toBeLessThan(3500);
    expect(m.status).toBe(200);
    expect(m.text).not.toMatch(/^cortex_agents\{/m); // no figure of this scrape: left out, not the one from before
    expect(m.text).not.toMatch(/^cortex_agents_silent /m);
    expect(m.text).toMatch(/^cortex_agents_gone_silent_total /m);

    // The pool's statement is cut, or its new connection times out (POOL_BOUND_MS): the outage account knows.
    await waitFor(async () => {
      const r = await timed(`${base}/healthz`);
      expect(r.ms).toBeLessThan(3500);
      return metricValue((await timed(`${base}/metrics`)).text, 'cortex_database_up') === 0;
    }, 30_000);
    // Now said at once, time after time.
    for (let i = 0; i < 3; i++) {
      h = await timed(`${base}/healthz`);
      expect(h.ms, '/healthz with the outage known').toBeLessThan(500);
      expect(h.status).toBe(503);
      expect(h.body).toMatchObject({ status: 'degraded', database: 'unreachable' });
      m = await timed(`${base}/metrics`);
      expect(m.ms, '/metrics with the outage known').toBeLessThan(500);
      expect(metricValue(m.text, 'cortex_database_up')).toBe(0);
      expect(m.text).not.toMatch(/^cortex_agents\{/m);
    }

    mark('outage known');
    relay.thaw();
    mark('thawed');
    await waitFor(async () => (await timed(`${base}/healthz`)).status === 200, 20_000);
    mark('/healthz 200');
    m = await timed(`${base}/metrics`);
    expect(metricValue(m.text, 'cortex_database_up')).toBe(1);
    expect(metricValue(m.text, 'cortex_agents', { state: 'NeverConnected' })).toBe(1);
  }, 90_000);
});
