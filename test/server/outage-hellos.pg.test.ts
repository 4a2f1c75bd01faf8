// Hellos while PostgreSQL hangs (DECISIONS H73): the path to it frozen (a TCP proxy that
// forwards nothing, as a partitioned network or a stopped VM does), so a hello's reads never
// end and the hello timer closes the socket 4000 "hello not checked in time". Each of them
// was a warning line: 200 agents retrying made 1,170 in 100 s, though the outage's own lines
// said it all already. Now: while no outage is known (the database merely slow or locked) the
// warning at most once a minute; while one is known they are counted in its lines
// (`failed_operations`), and nothing else is logged for them.
import { afterEach, expect, it } from 'vitest';
import { TcpProxy } from '../support/tcp-proxy.js';
import { newTestDb } from '../support/dialects.js';
import { TestClient, helloParams, startTestServer, waitFor, type TestServer } from './wire.js';

let t: TestServer | undefined;
let proxy: TcpProxy | undefined;
let dropDb: (() => Promise<void>) | undefined;
afterEach(async () => {
  proxy?.resume(); // the server's close needs its database
  await t?.close();
  await proxy?.close();
  await dropDb?.();
  t = proxy = dropDb = undefined;
});

const NOT_CHECKED = 'hello received but not checked in time (the database slow or locked?): closing 4000';

/** `n` hellos at once; each must be closed 4000 "hello not checked in time". */
async function hellosNotChecked(server: TestServer, host: { host_id: string; token: string }, n: number): Promise<void> {
  const closes = await Promise.all(
    Array.from({ length: n }, async () => {
      const c = await TestClient.open(server.url);
      c.fire('agent.hello', helloParams(host.host_id, host.token));
      return c.closed;
    }),
  );
  for (const c of closes) expect(c).toEqual({ code: 4000, reason: 'hello not checked in time' });
}

it('hellos not checked in time: one warning a minute while no outage is known; counted in the outage while one is, nothing logged per hello', async () => {
  const target = await newTestDb('postgres');
  dropDb = target.drop;
  const url = new URL(target.db);
  proxy = await TcpProxy.start({ targetPort: Number(url.port || 5432), targetHost: url.hostname });
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  t = await startTestServer({ db: url.toString(), hello_timeout_ms: 300, failed_hellos_before_throttle: 0 }, { dialect: 'postgres' });
  const h = await t.issue();
  const warnings = () => t!.log.records().filter((r) => r['msg'] === NOT_CHECKED);

  proxy.stall();
  // No outage known yet (nothing has failed: every query just waits): the warning, once.
  await hellosNotChecked(t, h, 3);
  expect(warnings()).toHaveLength(1);
  expect(warnings()[0]?.['level']).toBe('warn');

  // The outage becomes known (here told directly: with the path frozen the pool's own failures
  // would take its 10 s connection timeout); every hello not checked in time is the outage's now.
  expect(t.server.ingest.outage.failed('ingest', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
  await hellosNotChecked(t, h, 5);
  expect(warnings()).toHaveLength(1);
  expect(t.log.records().filter((r) => String(r['msg']).startsWith('database out of reach'))).toHaveLength(1);

  proxy.resume();
  await waitFor(() => t!.log.records().some((r) => r['msg'] === 'database reachable again'), 15_000);
  const over = t.log.records().find((r) => r['msg'] === 'database reachable again');
  expect(over?.['failed_operations']).toMatchObject({ 'hello not checked in time': 5 });
  expect(warnings()).toHaveLength(1);
});
