// File rotation under load: a writer appends 10,000 lines/s to a file a real agent process
// tails (file source from agent/sources, configured through the server's
// default_agent_config), and rotates it while writing.
// - rename rotation (the writer keeps writing to the renamed file until LATE_MS, like a daemon
//   before its HUP, and stalls meanwhile, as on a starved machine — so its last lines reach the
//   old file after the agent has moved on to the new one: DECISIONS D6): every line arrives
//   exactly once;
// - copytruncate (copy then truncate, done atomically with respect to the writer): no line
//   is duplicated, every line written after the last truncate arrives, and the lines
//   missing are exactly the ones the agent counted as lost (DESIGN 5.12).
import { closeSync, copyFileSync, ftruncateSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordFigure } from '../support/figures.js';
import {
  FULL,
  assertNoTokenLeaks,
  cleanupTempDirs,
  enroll,
  issueAgentAsync,
  openDbReadOnly,
  rememberStateToken,
  requireDist,
  startAgentRunner,
  startServer,
  tempDir,
  until,
  type AgentProc,
  type Issued,
  type ServerProc,
} from '../support/procs.js';

const RATE = 10_000; // lines/s
const SECONDS = FULL ? 20 : 4;
// A generation that is renamed away before the agent ever polled it cannot be read (DECISIONS
// D6): the short form, which runs on busy CI machines, keeps each generation at the path for
// well over the agent's poll interval even when the machine starves the agent for a while.
const ROTATE_EVERY_MS = FULL ? 1000 : 1500;
// After a rename the writer still writes to the renamed file until LATE_MS (its HUP arrives
// late), and writes nothing from STALL_FROM_MS until then (7 of the agent's 50 ms polls), as a
// writer on a starved machine: its lines pile up and reach the old file in one write at LATE_MS,
// after the agent has finished the old file (quiet for a poll) and moved on to the new one. A
// loaded machine did this by chance and lost 1,140 lines, unsaid (`lines_lost` 0).
const STALL_FROM_MS = 50;
const LATE_MS = 400;

type Mode = 'rename' | 'copytruncate';
interface Fixture {
  db: string;
  logPath: string;
  stateDir: string;
  x: Issued;
  server?: ServerProc;
  agent?: AgentProc;
}
const fixtures = new Map<Mode, Promise<Fixture>>();

// Both cases' server and agent are started together, before the first case writes (each case
// still writes, rotates and checks alone: the other's agent tails an empty file meanwhile).
beforeAll(async () => {
  requireDist();
  for (const mode of ['rename', 'copytruncate'] as const) fixtures.set(mode, prepare(mode));
  await Promise.all(fixtures.values());
}, 60_000);
afterAll(async () => {
  for (const f of fixtures.values()) {
    const fx = await f.catch(() => undefined);
    await fx?.agent?.kill('SIGKILL');
    await fx?.server?.kill();
  }
  cleanupTempDirs();
});

interface WriteResult {
  written: number;
  rotations: number;
  /** Line number of the last line written before each truncate. */
  truncatedAfter: number[];
}

/** Writes `line <k>` lines at RATE/s for SECONDS, rotating every ROTATE_EVERY_MS. */
async function writeRotating(path: string, mode: 'rename' | 'copytruncate'): Promise<WriteResult> {
  let fd = openSync(path, 'a');
  let oldFd: number | null = null;
  let renamedAt = 0;
  let k = 0;
  let rotations = 0;
  const truncatedAfter: number[] = [];
  const t0 = Date.now();
  let lastRotate = t0;
  const total = RATE * SECONDS;
  for (let guard = 0; k < total && guard < SECONDS * 1000; guard++) {
    const due = Math.min(total, Math.floor(((Date.now() - t0) / 1000) * RATE));
    const sinceRename = Date.now() - renamedAt;
    const stalled = oldFd !== null && sinceRename >= STALL_FROM_MS && sinceRename < LATE_MS;
    if (due > k && !stalled) {
      let text = '';
      for (; k < due; ) text += `line ${++k}\n`;
      // after a rename, the daemon keeps writing to the old file until its HUP
      if (oldFd !== null) {
        writeSync(oldFd, text);
        if (sinceRename >= LATE_MS) {
          closeSync(oldFd);
          oldFd = null;
        }
      } else writeSync(fd, text);
    }
    if (Date.now() - lastRotate >= ROTATE_EVERY_MS && k < total) {
      lastRotate = Date.now();
      rotations++;
      if (mode === 'rename') {
        renameSync(path, `${path}.${rotations}`);
        oldFd = fd;
        renamedAt = Date.now();
        fd = openSync(path, 'a');
      } else {
        copyFileSync(path, `${path}.${rotations}`);
        ftruncateSync(fd, 0);
        truncatedAfter.push(k);
      }
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  if (oldFd !== null) closeSync(oldFd);
  closeSync(fd);
  return { written: k, rotations, truncatedAfter };
}

/** A server whose default config tails `logPath`, and an agent enrolled with it whose file source runs. */
async function prepare(mode: Mode): Promise<Fixture> {
  const dir = tempDir();
  const db = join(dir, 'server.db');
  const logPath = join(dir, 'app.log');
  const config = join(dir, 'server.json');
  writeFileSync(
    config,
    JSON.stringify({
      default_agent_config: {
        heartbeat_interval_secs: 30,
        max_batch_entries: 1000,
        flush_interval_ms: 100,
        metrics_interval_secs: 60,
        probe_concurrency: 4,
        log_sources: [{ kind: 'file', path: logPath }],
      },
    }),
  );
  writeFileSync(logPath, '');
  const fx: Partial<Fixture> = { db, logPath, stateDir: join(dir, 'a') };
  try {
    fx.server = await startServer(db, ['--config', config]);
    // without blocking the other case's start
    fx.x = await issueAgentAsync(db, `rot-${mode}`);
    await enroll(fx.server.url, fx.x, fx.stateDir!);
    fx.agent = startAgentRunner({ stateDir: fx.stateDir!, sources: true, pollMs: 50, backoffBaseMs: 100 });
    await fx.agent.waitFor((e) => e.ev === 'state' && e.to === 'Active', 20_000);
    // the file source is running once its first status shows up
    await fx.agent.waitFor((e) => e.ev === 'progress' && Array.isArray(e['sources']) && (e['sources'] as unknown[]).length > 0, 10_000);
    return fx as Fixture;
  } catch (e) {
    await fx.agent?.kill('SIGKILL');
    await fx.server?.kill();
    throw e;
  }
}

async function runCase(mode: Mode) {
  const { db, logPath, stateDir, x, server, agent } = await fixtures.get(mode)!;
  if (server === undefined || agent === undefined) throw new Error('fixture not started');
  try {
    const w = await writeRotating(logPath, mode);
    const last = `line ${w.written}`;
    const messages = await until(
      `the last line (${last}) in logs and everything acked`,
      () => {
        const r = openDbReadOnly(db);
        try {
          const has = r.prepare('SELECT 1 FROM logs WHERE host_id = ? AND message = ?').get(x.host_id, last);
          if (!has) return undefined;
          const p = [...agent.events].reverse().find((e) => e.ev === 'progress');
          if (!p || (p['acked'] as number) !== (p['next_seq'] as number) - 1) return undefined;
          return r.prepare('SELECT message FROM logs WHERE host_id = ?').all(x.host_id) as { message: string }[];
        } finally {
          r.close();
        }
      },
      60_000,
      200,
    );
    const progress = [...agent.events].reverse().find((e) => e.ev === 'progress')!;
    const st = (progress['sources'] as { lines_lost?: number; lost_estimated?: boolean; rotations?: number; truncations?: number; lines_read?: number; last_error?: string | null }[])[0]!;
    const seen = new Map<number, number>();
    for (const m of messages) {
      const k = Number(/^line (\d+)$/.exec(m.message)?.[1] ?? NaN);
      expect(Number.isInteger(k), `unexpected message ${m.message}`).toBe(true);
      seen.set(k, (seen.get(k) ?? 0) + 1);
    }
    const duplicates = [...seen.values()].filter((c) => c > 1).length;
    const missing: number[] = [];
    for (let k = 1; k <= w.written; k++) if (!seen.has(k)) missing.push(k);
    await agent.kill('SIGTERM');
    expect(await server.stop()).toBe(0);
    rememberStateToken(stateDir);
    recordFigure(`rotation_${mode}`, {
      lines_per_s: RATE,
      written: w.written,
      rotations: w.rotations,
      delivered: messages.length,
      duplicates,
      missing: missing.length,
      agent_lines_lost: st.lines_lost ?? null,
      lost_estimated: st.lost_estimated ?? null,
      agent_rotations: st.rotations ?? null,
      agent_truncations: st.truncations ?? null,
    });
    expect(duplicates).toBe(0);
    if (mode === 'rename') {
      expect(missing).toEqual([]);
    } else {
      const lastTrunc = w.truncatedAfter.at(-1) ?? 0;
      // everything written after the last truncate arrived
      expect(missing.filter((k) => k > lastTrunc)).toEqual([]);
      // what is missing was counted as lost (never silently dropped)
      expect(st.lines_lost ?? 0).toBeGreaterThanOrEqual(missing.length);
      if (st.lost_estimated === false) expect(st.lines_lost).toBe(missing.length);
    }
    assertNoTokenLeaks();
  } finally {
    await agent.kill('SIGKILL');
    await server.kill();
  }
}

it(`rename rotation at ${RATE} lines/s loses and duplicates nothing`, () => runCase('rename'), FULL ? 180_000 : 90_000);
it(`copytruncate at ${RATE} lines/s: nothing duplicated, lines after the truncate exactly once, unread lines counted`, () => runCase('copytruncate'), FULL ? 180_000 : 90_000);
