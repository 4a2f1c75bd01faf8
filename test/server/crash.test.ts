// SIGKILL in the middle of a stream: every acked seq survives, the replay fills the rest
// without duplicates.
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { makeTempDir } from './helpers.js';
import { requireServerCli, cli, serve } from './spawn.js';
import { helloParams, logEntries, TestClient } from './wire.js';

beforeAll(() => requireServerCli(), 60_000);

it('SIGKILL mid-stream loses nothing that was acked; replay after restart leaves no duplicates', async () => {
  const dir = makeTempDir();
  const db = join(dir, 'data', 'c.db');
  const issued = JSON.parse(cli(['agent', 'issue', '--host', 'crash-1', '--json', '--db', db]).stdout);
  const s1 = await serve(['--db', db]);
  const c = await TestClient.open(s1.url);
  const hello = await c.request('agent.hello', helloParams(issued.host_id, issued.token));
  const token = hello.result.rotated_token as string;
  const BATCH = 50;
  let nextSeq = 1;
  let maxAcked = 0;
  let sent = 0;
  const inFlight = new Set<number>();
  c.ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.result?.up_to_seq !== undefined) maxAcked = Math.max(maxAcked, m.result.up_to_seq);
    inFlight.delete(m.id);
  });
  // stream with a window of 4 pushes until enough is acked, then kill while pushes are in flight
  await new Promise<void>((resolve) => {
    const pump = () => {
      while (inFlight.size < 4 && c.ws.readyState === c.ws.OPEN) {
        inFlight.add(c.fire('logs.push', { seq_start: nextSeq, entries: logEntries(nextSeq, BATCH) }));
        nextSeq += BATCH;
        sent += BATCH;
      }
      if (maxAcked >= 2000) {
        s1.child.kill('SIGKILL');
        resolve();
        return;
      }
      setTimeout(pump, 1);
    };
    pump();
  });
  await s1.exited;
  expect(maxAcked).toBeGreaterThan(0);
  const storage = openSqliteStorage({ path: db });
  const rows = await storage.db.selectFrom('logs').select('seq').where('host_id', '=', issued.host_id).orderBy('seq').execute();
  const seqs = rows.map((r) => Number(r.seq));
  // every acked seq is there
  for (let s = 1; s <= maxAcked; s++) expect(seqs[s - 1]).toBe(s);
  await storage.close();

  const s2 = await serve(['--db', db]);
  const c2 = await TestClient.open(s2.url);
  const h2 = await c2.request('agent.hello', helloParams(issued.host_id, token));
  expect(h2.result.accepted_seq).toBeGreaterThanOrEqual(maxAcked);
  // the agent replays everything after its acked seq (including what the server already had)
  for (let from = maxAcked + 1; from < nextSeq; from += BATCH) {
    const r = await c2.request('logs.push', { seq_start: from, entries: logEntries(from, Math.min(BATCH, nextSeq - from)) });
    expect(r.error).toBeUndefined();
  }
  c2.ws.close();
  await c2.closed;
  s2.child.kill('SIGTERM');
  expect(await s2.exited).toBe(0);
  const st = openSqliteStorage({ path: db });
  const all = await st.db.selectFrom('logs').select('seq').where('host_id', '=', issued.host_id).orderBy('seq').execute();
  expect(all.length).toBe(sent);
  expect(all.map((r) => Number(r.seq))).toEqual(Array.from({ length: sent }, (_, i) => i + 1));
  await st.close();
}, 60_000);
