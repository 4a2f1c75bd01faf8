// H43: every live tail polls the database every 200 ms on the connections the ingest path uses.
// 500 of them (a script in a loop, a wall of browser tabs) put ack p50 at 605 ms and the server
// at 641 MB, with no limit. A server streams at most MAX_LIVE_TAILS (64; 2 here) at once; one
// more is 503 with Retry-After and says what to do; a closed one frees its place.
import http from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { MAX_LIVE_TAILS } from '../../server/admin/logs.routes.js';
import { httpBase } from '../server/control-helpers.js';
import { startTestServer, waitFor, type TestServer } from '../server/wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const open = (url: string): Promise<http.IncomingMessage> =>
  new Promise((resolve, reject) => http.get(url, { headers: { Accept: 'text/event-stream' } }, resolve).on('error', reject));

const body = (res: http.IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (text += c));
    res.on('end', () => resolve(text));
  });

it('a server streams at most maxLiveTails live tails; one more is 503 with Retry-After and what to do; a closed one frees its place', async () => {
  expect(MAX_LIVE_TAILS).toBe(64);
  t = await startTestServer({}, { maxLiveTails: 2 });
  const { host_id } = await t.issue('watched');
  const url = `${httpBase(t)}/admin/agents/${host_id}/logs/stream`;
  const first = await open(url);
  const second = await open(url);
  expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
  const third = await open(url);
  expect(third.statusCode).toBe(503);
  expect(third.headers['retry-after']).toBe('10');
  expect(JSON.parse(await body(third))).toMatchObject({ error: { code: 503, message: expect.stringMatching(/already streams 2 live tails, as many as it allows .* close one/) } });
  expect(t.log.records().some((r) => r['msg'] === 'live tail refused: this server streams as many as it allows')).toBe(true);
  // the first closes: its place is free once the server saw it go
  first.destroy();
  await waitFor(async () => {
    const again = await open(url);
    again.destroy();
    return again.statusCode === 200;
  }, 10_000);
  second.destroy();
});
