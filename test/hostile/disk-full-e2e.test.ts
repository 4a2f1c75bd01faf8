// Issue 18, a full disk end to end (DECISIONS H4): an application writes its log on the same
// 16 MiB tmpfs as the agent's state dir until the disk is full. The agent (a file source on
// that log, a real server process elsewhere) must pause before ENOSPC, keep recording acks,
// keep status.json current without leaving temp files, and — once 2 MiB are freed — read the
// rest, so that every written line is stored exactly once. Needs root for the mount; without
// it the case is reported as not run (test/hostile/disk-full.test.ts has the injected part).
// Second case: `cortex-agent run` started on a disk with no byte free (DECISIONS H12). The two
// cases (each its own tmpfs, server and host) run side by side; nothing in them blocks this
// process, whose agent the first case runs.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, ftruncateSync, fstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statfsSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAgent, type Agent } from '../../agent/index.js';
import { enroll } from '../../agent/enroll.js';
import { createCapturingLogger } from '../../agent/log.js';
import { readStatusFile } from '../../agent/status-file.js';
import { AGENT_CLI, SERVER_CLI, cleanupTempDirs, enroll as enrollCli, exitOf, issueAgentAsync, openDbReadOnly, rememberStateToken, requireDist, startServer, tempDir, until } from '../support/procs.js';
import { cliAsync } from '../support/scli-pool.js';

beforeAll(() => requireDist());
// A test that times out never reaches its finally: unmount whatever is still mounted.
const mounted = new Set<() => void>();
afterAll(() => {
  for (const umount of mounted) umount();
  cleanupTempDirs();
});

function mountTmpfs(bytes: number): { dir: string; umount: () => void } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'cortex-fulldisk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  const umount = (): void => {
    if (!mounted.delete(umount)) return;
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  mounted.add(umount);
  return { dir, umount };
}

/**
 * Appends whole lines "app line N <pad>" until ENOSPC, 50 at a time with a pause between
 * (the agent reads meanwhile); a partly written batch is cut back. Returns the next N.
 */
async function writeUntilFull(path: string, from: number): Promise<number> {
  const fd = openSync(path, 'a');
  let n = from;
  try {
    for (;;) {
      const lines = Array.from({ length: 50 }, (_, i) => `app line ${n + i} ${'p'.repeat(150)}\n`).join('');
      const size = fstatSync(fd).size;
      try {
        const buf = Buffer.from(lines);
        const w = writeSync(fd, buf);
        if (w !== buf.length) throw Object.assign(new Error('short write'), { code: 'ENOSPC' });
        n += 50;
        await new Promise((r) => setTimeout(r, 1));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        ftruncateSync(fd, size);
        return n;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** `cortex-server agent config HOST --set CONFIG`, without blocking. */
const setConfig = (db: string, hostId: string, config: object) => cliAsync(['agent', 'config', hostId, '--set', JSON.stringify(config), '--db', db], { script: SERVER_CLI });

/** A tmpfs of `bytes` and a server whose database is outside it; undefined where mounting is not allowed (said once). */
async function diskAndServer(bytes: number) {
  const disk = mountTmpfs(bytes);
  if (disk === undefined) {
    console.warn('disk-full e2e: tmpfs mount not allowed here; not run');
    return undefined;
  }
  const dir = tempDir();
  const db = join(dir, 'server.db');
  return { disk, dir, db, server: await startServer(db) };
}

it.concurrent('fills up, pauses before ENOSPC, keeps acking, writes status without temp files, and recovers with nothing lost or doubled', async () => {
  const setup = await diskAndServer(16 * 1024 * 1024);
  if (setup === undefined) return;
  const { disk, db, server } = setup;
  const log = createCapturingLogger('info');
  let agent: Agent | undefined;
  try {
    const appLog = join(disk.dir, 'app.log');
    const ballast = join(disk.dir, 'ballast');
    writeFileSync(ballast, Buffer.alloc(2 * 1024 * 1024));
    writeFileSync(appLog, '');
    const x = await issueAgentAsync(db, 'fulldisk');
    const config = { heartbeat_interval_secs: 30, max_batch_entries: 500, flush_interval_ms: 50, metrics_interval_secs: 60, probe_concurrency: 1, log_sources: [{ kind: 'file', path: appLog }] };
    expect((await setConfig(db, x.host_id, config)).code).toBe(0);
    const stateDir = join(disk.dir, 'state');
    mkdirSync(stateDir);
    await enroll({ serverUrl: server.url, token: x.token, hostId: x.host_id, stateDir, allowInsecure: true, caFile: null, logger: log.logger });
    rememberStateToken(stateDir);
    agent = await startAgent({ stateDir, logger: log.logger, storageRetryMs: 100, statusIntervalMs: 100, metricsIntervalMs: 0, sourcePollMs: 20 });
    await agent.waitForState('Active', 15_000);

    const paused = new Promise<void>((r) => agent!.once('storage_error', () => r()));
    const written = (await writeUntilFull(appLog, 1)) - 1;
    expect(written).toBeGreaterThan(10_000);
    await paused;
    // Everything that reached the buffer is acked and deleted although the disk is full.
    const a = agent;
    await until('acks recorded on the full disk', () => {
      const s = a.status();
      return s.acked_seq > 0 && s.acked_seq === s.next_seq - 1 && s.queue_depth === 0;
    }, 60_000); // a condition, not a sleep: ~4 s alone, far longer with the full suite on 2 shared cores
    const st = a.status();
    expect(st.sources_paused).toBe(true);
    const file = await until('status.json says paused', () => {
      const f = readStatusFile(stateDir);
      return f !== null && f.sources_paused ? f : undefined;
    }, 5_000);
    expect(file.sources_paused).toBe(true);
    expect(readdirSync(stateDir).filter((n) => n.includes('.tmp'))).toEqual([]);

    // The operator frees 2 MiB: the rest of the log is read and delivered.
    unlinkSync(ballast);
    await until('every written line stored', () => {
      const conn = openDbReadOnly(db);
      try {
        return (conn.prepare('SELECT COUNT(*) AS n FROM logs WHERE host_id = ?').get(x.host_id) as { n: number }).n >= written;
      } finally {
        conn.close();
      }
    }, 60_000, 100);
    await agent.stop();
    agent = undefined;
    const conn = openDbReadOnly(db);
    try {
      const rows = conn.prepare('SELECT message FROM logs WHERE host_id = ?').all(x.host_id) as { message: string }[];
      const numbers = rows.map((r) => Number(/^app line (\d+) /.exec(r.message)?.[1]));
      expect(rows.length).toBe(written);
      expect(new Set(numbers).size).toBe(written);
      expect(Math.min(...numbers)).toBe(1);
      expect(Math.max(...numbers)).toBe(written);
    } finally {
      conn.close();
    }
    expect(readdirSync(stateDir).filter((n) => n.includes('.tmp'))).toEqual([]);
  } finally {
    await agent?.stop();
    await server.kill();
    disk.umount();
  }
}, 120_000);

/** Zeros into `path` until ENOSPC. */
function fill(path: string): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

it.concurrent('`cortex-agent run` started on a disk with no byte free starts, says why it waits, and reads everything once space is back (DECISIONS H12)', async () => {
  const setup = await diskAndServer(8 * 1024 * 1024);
  if (setup === undefined) return;
  const { disk, dir, db, server } = setup;
  let child: ChildProcess | undefined;
  const run = (): ChildProcess => spawn(process.execPath, [AGENT_CLI, 'run', '--state-dir', stateDir, '--allow-insecure', '--log-level', 'warn'], { stdio: 'ignore' });
  const stateDir = join(disk.dir, 'state');
  const rows = (hostId: string): number => {
    const conn = openDbReadOnly(db);
    try {
      return (conn.prepare('SELECT COUNT(DISTINCT seq) AS n FROM logs WHERE host_id = ?').get(hostId) as { n: number }).n;
    } finally {
      conn.close();
    }
  };
  try {
    // The application's log is on another disk: only the agent's state dir fills up.
    const appLog = join(dir, 'app.log');
    appendFileSync(appLog, Array.from({ length: 500 }, (_, i) => `app line ${i + 1}\n`).join(''));
    const x = await issueAgentAsync(db, 'fullstart');
    const config = { heartbeat_interval_secs: 30, max_batch_entries: 500, flush_interval_ms: 50, metrics_interval_secs: null, probe_concurrency: 1, log_sources: [{ kind: 'file', path: appLog }] };
    expect((await setConfig(db, x.host_id, config)).code).toBe(0);
    mkdirSync(stateDir);
    await enrollCli(server.url, x, stateDir);
    child = run();
    await until('the first 500 lines stored', () => rows(x.host_id) === 500, 30_000);
    await until('the buffer holds its reserve', () => existsSync(join(stateDir, 'buffer.db.reserve')), 10_000);
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
    child = undefined;

    // Another program fills the disk while the agent is stopped; the application writes on.
    fill(join(disk.dir, 'filler'));
    expect(statfsSync(disk.dir).bavail).toBe(0);
    appendFileSync(appLog, Array.from({ length: 500 }, (_, i) => `app line ${i + 501}\n`).join(''));
    child = run();
    const st = await until('status: running, sources paused for lack of space', async () => {
      const r = await cliAsync(['status', '--state-dir', stateDir, '--json'], { script: AGENT_CLI });
      if (r.code !== 0) return undefined;
      const v = JSON.parse(r.stdout) as { running: boolean; state: string; sources_paused: boolean; last_error: string | null; disk_free_bytes: number; disk_low_water_bytes: number };
      return v.running && v.state === 'Active' && v.sources_paused ? v : undefined;
    }, 30_000, 200);
    expect(st.last_error).toMatch(/LOW_DISK_SPACE/);
    expect(st.disk_free_bytes).toBeLessThan(st.disk_low_water_bytes);
    expect(rows(x.host_id)).toBe(500);

    unlinkSync(join(disk.dir, 'filler'));
    await until('all 1000 lines stored', () => rows(x.host_id) === 1000, 60_000, 100);

    // Stopped again; the reserve is gone (taken by an earlier full disk) and the disk fills up:
    // `run` cannot open the buffer, so it waits (it does not exit: systemd's start limit would
    // give up on it), and starts by itself once space is freed.
    child.kill('SIGTERM');
    expect(await exitOf(child)).toBe(0);
    rmSync(join(stateDir, 'buffer.db.reserve'), { force: true });
    fill(join(disk.dir, 'filler'));
    appendFileSync(appLog, Array.from({ length: 500 }, (_, i) => `app line ${i + 1001}\n`).join(''));
    let stderr = '';
    child = spawn(process.execPath, [AGENT_CLI, 'run', '--state-dir', stateDir, '--allow-insecure', '--log-level', 'info'], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await until('run says it waits for space', () => stderr.includes('cannot open the buffer: the disk of'), 30_000);
    expect(child.exitCode).toBeNull();
    unlinkSync(join(disk.dir, 'filler'));
    await until('all 1500 lines stored', () => rows(x.host_id) === 1500, 60_000, 100);
    expect(stderr).toContain('buffer opened: space was freed');
    const conn = openDbReadOnly(db);
    try {
      const n = (conn.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT message) AS d FROM logs WHERE host_id = ?').get(x.host_id) as { n: number; d: number });
      expect(n).toEqual({ n: 1500, d: 1500 });
    } finally {
      conn.close();
    }
  } finally {
    if (child !== undefined) {
      child.kill('SIGKILL');
      await exitOf(child);
    }
    await server.kill();
    disk.umount();
  }
}, 120_000);

