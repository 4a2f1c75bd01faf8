// The live tail and a client that stops reading (DECISIONS J10). Before, the stream wrote
// 1,000 more rows after every 15 s without a drain, so a client that never read (a suspended
// laptop's browser, a stuck proxy) grew the server's memory by the host's log rate for as
// long as its socket stayed open. Now nothing more is written until the client drained, and
// one that took nothing for tail_stall (60 s; 400 ms here) is closed; it resumes exactly with
// Last-Event-ID.
import http from 'node:http';
import { afterEach, expect, it } from 'vitest';
import { httpBase } from '../server/control-helpers.js';
import { startTestServer, waitFor, type TestServer } from '../server/wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** Reads an SSE response, collecting the ids of complete `log` events, until it ends or `enough` says so. */
function readIds(res: http.IncomingMessage, ids: number[], enough: () => boolean = () => false): Promise<void> {
  res.setEncoding('utf8');
  let buf = '';
  return new Promise((resolve) => {
    const done = (): void => resolve();
    res.on('data', (chunk: string) => {
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const id = /^id: (\d+)$/m.exec(block)?.[1];
        if (id !== undefined && block.includes('\nevent: log\n')) ids.push(Number(id));
      }
      if (enough()) {
        res.destroy();
        done();
      }
    });
    res.on('end', done);
    res.on('close', done);
    res.on('error', done);
  });
}

it('a tail client that stops reading gets nothing more, is closed after tail_stall, and resumes with Last-Event-ID with nothing lost or doubled', async () => {
  t = await startTestServer({}, { tailStallMs: 400 });
  const { host_id } = await t.issue('chatty');
  const total = 12_000;
  const pad = 'x'.repeat(2000); // ~24 MB of events: more than the socket buffers hold
  for (let from = 1; from <= total; from += 1000) {
    const entries = Array.from({ length: 1000 }, (_, i) => ({ seq: from + i, ts: new Date().toISOString(), severity: 'info', message: `line ${from + i} ${pad}`, source: 'custom:t' }));
    await t.server.storage.ingest.commitBatch(host_id, entries, new Date().toISOString());
  }
  const url = `${httpBase(t)}/admin/agents/${host_id}/logs/stream?after_seq=0`;

  // A client that reads nothing.
  const first: number[] = [];
  const stuck = await new Promise<http.IncomingMessage>((resolve, reject) => http.get(url, { headers: { Accept: 'text/event-stream' } }, resolve).on('error', reject));
  stuck.pause();
  await waitFor(() => t!.log.records().some((r) => r['msg'] === 'live tail closed: its client took nothing for too long (it resumes with Last-Event-ID)'), 15_000);
  const closedLine = t.log.records().find((r) => r['msg'] === 'live tail closed: its client took nothing for too long (it resumes with Last-Event-ID)');
  expect(closedLine).toMatchObject({ host_id, stalled_ms: 400 });
  // what it gets when it reads again: what was written before the stall, then the end
  const reading = readIds(stuck, first);
  stuck.resume();
  await reading;
  expect(first.length).toBeGreaterThan(0);
  expect(first.length).toBeLessThan(total); // the rest was not written to a client that did not read
  expect(first).toEqual(Array.from({ length: first.length }, (_, i) => i + 1));

  // It comes back with the last id it got: the rest, exactly once.
  const last = first[first.length - 1]!;
  const rest: number[] = [];
  const again = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(url.replace('?after_seq=0', ''), { headers: { Accept: 'text/event-stream', 'Last-Event-ID': String(last) } }, resolve).on('error', reject),
  );
  await readIds(again, rest, () => rest.length >= total - last);
  expect(rest).toEqual(Array.from({ length: total - last }, (_, i) => last + 1 + i));
}, 60_000);
