// What a simulated agent counts as acked is what the server stored: batches are sized by
// bytes as well as entries (large messages never make a frame over max_frame_bytes, which
// would be refused here while a later batch went out and was acked past the gap), and a
// run's entries are numbered after what the server already holds for the host (a second
// run with the same token file), whatever this run generated before its first hello.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIMITS } from '@cortex/agent-protocol';
import { Fleet, type FleetOptions, type FleetSnapshot } from '../../fleet/fleet.js';
import { readTokenFile } from '../../fleet/identities.js';
import { FLEET_PROBES } from '../../fleet/probes.js';
import { BATCH_MAX_BYTES } from '../../fleet/sim-agent.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { issueAgent } from '../../server/db/agents.repository.js';
import { cleanupTempDirs, requireDist, startServer, tempDir, type ServerProc } from '../support/procs.js';

beforeAll(() => requireDist());
afterAll(() => cleanupTempDirs());

async function setup(hosts: number): Promise<{ db: string; tokenFile: string }> {
  const dir = tempDir('cortex-fleet-batches-');
  const db = join(dir, 'server.db');
  const storage = openSqliteStorage({ path: db });
  await migrateToLatest(storage);
  const issued = [];
  for (let i = 0; i < hosts; i++) issued.push(await issueAgent(storage.db, `batches-${i}`));
  await storage.close();
  const tokenFile = join(dir, 'tokens.jsonl');
  writeFileSync(tokenFile, issued.map((x) => JSON.stringify(x)).join('\n') + '\n');
  return { db, tokenFile };
}

function options(url: string, tokenFile: string, messageBytes: number, ratePerAgent: number): FleetOptions {
  return {
    identities: readTokenFile(tokenFile),
    workers: 0,
    url,
    ratePerAgent,
    backoff: { baseMs: 50, capMs: 200, resetAfterMs: 60_000 },
    connectTimeoutMs: 5000,
    helloTimeoutMs: 5000,
    requestTimeoutMs: 20_000,
    window: 4,
    maxBatchEntries: 1000,
    messageBytes,
    probes: [...FLEET_PROBES],
    agentVersion: '1.0.0',
    startConcurrency: 10,
    tokenFile,
  };
}

function stored(db: string): { n: number; d: number; lo: number | null; hi: number | null; longest: number | null } {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite.prepare('select count(*) as n, count(distinct seq) as d, min(seq) as lo, max(seq) as hi, max(length(message)) as longest from logs').get() as never;
  } finally {
    sqlite.close();
  }
}

/** A port where nothing listens yet (a server started and stopped on it). */
async function freePort(db: string): Promise<number> {
  const s = await startServer(db);
  const port = s.port;
  expect(await s.stop()).toBe(0);
  return port;
}

/**
 * One agent builds a backlog of `backlog` entries while the server is down, then the server
 * comes up and the agent ships it. Returns the final snapshot.
 */
async function shipBacklog(db: string, tokenFile: string, messageBytes: number, backlog: number): Promise<FleetSnapshot> {
  const port = await freePort(db);
  const fleet = await Fleet.start(options(`ws://127.0.0.1:${port}/ws/agent`, tokenFile, messageBytes, 2000));
  let server: ServerProc | null = null;
  try {
    await fleet.waitFor((s) => s.counters.entries_generated >= backlog, 10_000, 20);
    await fleet.setRate(0);
    server = await startServer(db, [], { port });
    await fleet.waitFor((s) => s.states.Active === 1 && s.entriesPending === 0, 30_000, 50);
    const final = await fleet.stop();
    expect(await server.stop()).toBe(0);
    return final;
  } finally {
    await fleet.stop().catch(() => undefined);
    await server?.kill();
  }
}

it('ships a backlog of 1,500-byte messages in batches under the frame target: every entry acked is stored, none lost', async () => {
  const { db, tokenFile } = await setup(1);
  const final = await shipBacklog(db, tokenFile, 1500, 1000);
  const generated = final.counters.entries_generated;
  expect(generated).toBeGreaterThanOrEqual(1000);
  // what the emulator counts as acked is what the server stored
  expect(stored(db).n).toBe(final.counters.entries_acked);
  expect(final.errors.get('push_frame_too_large')).toBe(0);
  expect(final.counters.entries_lost).toBe(0);
  expect(final.counters.entries_acked).toBe(generated);
  // batches by bytes: each push's entries fit the frame target, so more pushes than 1,000-entry batches
  expect(final.counters.pushes).toBeGreaterThanOrEqual(Math.ceil((generated * 1500) / BATCH_MAX_BYTES));
  expect(stored(db)).toEqual({ n: generated, d: generated, lo: 1, hi: generated, longest: 1500 });
}, 60_000);

it('ships messages of the largest size the contract allows (max_message_chars), one or two per push', async () => {
  const { db, tokenFile } = await setup(1);
  const final = await shipBacklog(db, tokenFile, LIMITS.max_message_chars, 20);
  const generated = final.counters.entries_generated;
  expect(generated).toBeGreaterThanOrEqual(20);
  expect(final.counters.entries_acked).toBe(generated);
  expect(final.counters.entries_lost).toBe(0);
  expect(final.errors.toJSON()).not.toHaveProperty('push_frame_too_large');
  expect(stored(db)).toEqual({ n: generated, d: generated, lo: 1, hi: generated, longest: LIMITS.max_message_chars });
}, 60_000);

it('a second run with the same token file numbers its entries after what the server holds, even when it generated more before its first hello', async () => {
  const { db, tokenFile } = await setup(1);
  // run 1: a few entries stored
  let server = await startServer(db);
  const first = await Fleet.start(options(server.url, tokenFile, 60, 20));
  let run1: FleetSnapshot;
  try {
    await first.waitFor((s) => s.counters.entries_acked >= 5, 10_000, 20);
    await first.setRate(0);
    await first.waitFor((s) => s.entriesPending === 0, 10_000, 20);
    run1 = await first.stop();
  } finally {
    await first.stop().catch(() => undefined);
  }
  const port = server.port;
  expect(await server.stop()).toBe(0);
  const held = run1.counters.entries_acked;
  expect(stored(db).n).toBe(held);

  // run 2: while the server is down it generates more than the server holds (seq 1..n > held)
  const second = await Fleet.start(options(`ws://127.0.0.1:${port}/ws/agent`, tokenFile, 60, 500));
  try {
    await second.waitFor((s) => s.counters.entries_generated >= held + 50, 10_000, 20);
    await second.setRate(0);
    server = await startServer(db, [], { port });
    await second.waitFor((s) => s.states.Active === 1 && s.entriesPending === 0, 20_000, 50);
    const run2 = await second.stop();
    expect(await server.stop()).toBe(0);
    const generated = run2.counters.entries_generated;
    // acked = what this run sent and the server stored: all of it, after the earlier run's seqs
    expect(run2.counters.entries_acked).toBe(generated);
    expect(stored(db)).toEqual({ n: held + generated, d: held + generated, lo: 1, hi: held + generated, longest: 60 });
  } finally {
    await second.stop().catch(() => undefined);
    await server.kill();
  }
}, 60_000);
