// The SQLite database file deleted or replaced under a running server (DECISIONS H20). Before,
// SQLite went on writing into the deleted file and every push was acked: at the next start
// hosts, tokens and logs were all gone, and nothing had been logged. Now the server notices
// (here within 100 ms), refuses further commits (-32007: the agent keeps the entries), copies
// what it holds back to the path — or beside it when another file is there — and stops.
import { rmSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { enroll, logEntries, startTestServer, waitFor, type TestServer } from '../server/wire.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/**
 * Pushes from seq `from` on, 20 at a time, until one is refused or the server closes the
 * session (it stops right after the copy); returns the last seq acked and the refusal, if any.
 */
async function pushUntilRefused(a: Awaited<ReturnType<typeof enroll>>, from: number): Promise<{ acked: number; refusal: string | undefined }> {
  let acked = from - 1;
  const closed = a.client.closed.then(() => undefined);
  for (let seq = from; seq < from + 100_000; seq += 20) {
    const r = await Promise.race([a.client.request('logs.push', { seq_start: seq, entries: logEntries(seq, 20) }), closed]);
    if (r === undefined) return { acked, refusal: undefined };
    if (r.error !== undefined) return { acked, refusal: r.error.data?.reason as string | undefined };
    acked = r.result.up_to_seq;
  }
  return { acked, refusal: undefined };
}

function stored(file: string, host_id: string): { accepted_seq: number; rows: number } {
  const db = new Database(file, { readonly: true });
  try {
    const row = db.prepare<[string], { accepted_seq: number }>('select accepted_seq from agents where host_id = ?').get(host_id);
    const n = db.prepare<[string], { n: number }>('select count(*) as n from logs where host_id = ?').get(host_id);
    return { accepted_seq: row?.accepted_seq ?? -1, rows: n?.n ?? -1 };
  } finally {
    db.close();
  }
}

it('deleted (rm cortex.db*): refused from then on, everything acked copied back to the path, the server stops (E_DB_OPEN)', async () => {
  const fatal: { message: string; code: string | undefined }[] = [];
  t = await startTestServer({}, { dialect: 'sqlite', dbFileCheckMs: 100, onFatal: (message, code) => void fatal.push({ message, code }) });
  const file = t.dbPath;
  const a = await enroll(t);
  expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 100) })).result.up_to_seq).toBe(100);
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  const { acked, refusal } = await pushUntilRefused(a, 101);
  // a push after the deletion is refused, or the session closes first (the server stopped)
  if (refusal !== undefined) expect(refusal).toBe("commit failed: the server's database does not exist any more; nothing of the batch was stored");
  await waitFor(() => fatal.length === 1, 15_000);
  expect(fatal[0]).toEqual({
    code: 'E_DB_OPEN',
    message: `the database file ${file} was deleted while the server ran; what this server held (hosts, tokens, logs) was copied back to ${file} and the server stopped: start it again (systemd does) and the agents resend what was not stored`,
  });
  // everything acked, before and after the deletion, is in the copy: nothing acked is lost
  expect(stored(file, a.host_id)).toEqual({ accepted_seq: acked, rows: acked });
  expect(acked).toBeGreaterThanOrEqual(100);
  const lines = t.log.records().filter((r) => r['level'] === 'error').map((r) => String(r['msg']));
  expect(lines[0]).toBe(`the database file ${file} was deleted while the server ran: nothing more is stored (pushes are answered -32007; the agents keep their entries); copying what this server holds back`);
});

it('replaced by another file (a backup copied over it): that file is left alone, the copy goes beside it', async () => {
  const fatal: string[] = [];
  t = await startTestServer({}, { dialect: 'sqlite', dbFileCheckMs: 100, onFatal: (message) => void fatal.push(message) });
  const file = t.dbPath;
  const a = await enroll(t);
  expect((await a.client.request('logs.push', { seq_start: 1, entries: logEntries(1, 50) })).result.up_to_seq).toBe(50);
  rmSync(file);
  writeFileSync(file, 'another file');
  await waitFor(() => fatal.length === 1, 15_000);
  expect(readFileSync(file, 'utf8')).toBe('another file');
  const copies = readdirSync(dirname(file)).filter((n) => n.startsWith(`${basename(file)}.rescued-`));
  expect(copies).toHaveLength(1);
  expect(fatal[0]).toBe(
    `the database file ${file} was replaced while the server ran (another file is there now); what this server held was copied to ${join(dirname(file), copies[0]!)} and the server stopped: keep the file you want at ${file} (the copy has everything this server stored), then start it again`,
  );
  expect(stored(join(dirname(file), copies[0]!), a.host_id)).toEqual({ accepted_seq: 50, rows: 50 });
});
