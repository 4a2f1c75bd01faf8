// The agent's state folder on a filesystem that turns read-only (DECISIONS H18), end to end
// with a real server process and `cortex-agent run`. The kernel remounts a filesystem
// read-only after an I/O error; the application's log lives elsewhere and goes on growing.
// Before: `run` on such a folder took over the stale run.lock three times and exited
// E_INTERNAL "this is a bug" (systemd then gave up after five starts), and an agent running
// when it happened kept the buffer open, so the filesystem could not be unmounted and
// repaired. Now `run` waits for the folder to be writable, holding nothing open in it, and
// starts by itself; every line is stored exactly once.
//
// Case 1 remounts a tmpfs read-only (root needed for the mount); case 2 makes a loop-mounted
// ext4 abort as on a real I/O error (/sys/fs/ext4/DEV/trigger_fs_error) while the agent runs,
// then unmounts, checks and mounts it again. The cases after them run the agent's commands as
// another user ("nobody": a folder or a log file it may not read or write), as root may.
// Where a case is not allowed here it is reported as not run. Each case has its own folders,
// mount and host: they run side by side (mostly waiting for an agent that retries every 5 s).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AGENT_CLI, SERVER_CLI, cleanupTempDirs, enroll, exitOf, issueAgentAsync, openDbReadOnly, requireDist, startServer, tempDir, until } from '../support/procs.js';
import { cliAsync } from '../support/scli-pool.js';

beforeAll(() => requireDist());
const cleanups = new Set<() => void>();
afterAll(() => {
  for (const c of cleanups) c();
  cleanupTempDirs();
});

const sh = (cmd: string, args: string[]): boolean => {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

function unmountLater(dir: string, extra: () => void = () => undefined): () => void {
  const done = (): void => {
    if (!cleanups.delete(done)) return;
    sh('umount', ['-l', dir]);
    extra();
    rmSync(dir, { recursive: true, force: true });
  };
  cleanups.add(done);
  return done;
}

const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => `app line ${from + i}\n`).join('');

function stored(db: string, hostId: string): { n: number; d: number } {
  const conn = openDbReadOnly(db);
  try {
    return conn.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT message) AS d FROM logs WHERE host_id = ?').get(hostId) as { n: number; d: number };
  } finally {
    conn.close();
  }
}

/**
 * One server for the file, started by the first case that runs (none when every case is not run
 * here): each case has its own host, and counts only that host's lines.
 */
let shared: Promise<{ db: string; server: Awaited<ReturnType<typeof startServer>> }> | undefined;
afterAll(async () => {
  if (shared !== undefined) await (await shared).server.kill();
});
function sharedServer() {
  shared ??= (async () => {
    const db = join(tempDir(), 'server.db');
    return { db, server: await startServer(db) };
  })();
  return shared;
}

/** The file's server, a host whose config tails `appLog` (outside the state folder), enrolled into `stateDir`. */
async function serverAndHost(appLog: string, stateDir: string) {
  const { db, server } = await sharedServer();
  // without blocking: the other cases' agents and this process's timers go on meanwhile
  const x = await issueAgentAsync(db, 'rohost');
  const config = { heartbeat_interval_secs: 30, max_batch_entries: 500, flush_interval_ms: 50, metrics_interval_secs: null, probe_concurrency: 1, log_sources: [{ kind: 'file', path: appLog }] };
  expect((await cliAsync(['agent', 'config', x.host_id, '--set', JSON.stringify(config), '--db', db], { script: SERVER_CLI })).code).toBe(0);
  await enroll(server.url, x, stateDir);
  return { db, server, x };
}

/** The agent CLI with `args` to its exit, without blocking (support/scli-pool.ts). */
const agentCli = (args: string[]) => cliAsync(args, { script: AGENT_CLI });

function run(stateDir: string): { child: ChildProcess; stderr: () => string } {
  let stderr = '';
  const child = spawn(process.execPath, [AGENT_CLI, 'run', '--state-dir', stateDir, '--allow-insecure', '--source-poll-ms', '50'], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return { child, stderr: () => stderr };
}

it.concurrent('`run` on a state folder whose filesystem is read-only (a stale run.lock in it) waits, says why, and starts by itself once it is writable', async () => {
  const mnt = mkdtempSync(join(tmpdir(), 'cortex-ro-'));
  if (!sh('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt])) {
    rmSync(mnt, { recursive: true, force: true });
    console.warn('read-only state e2e: tmpfs mount not allowed here; not run');
    return;
  }
  const umount = unmountLater(mnt);
  const stateDir = join(mnt, 'state');
  mkdirSync(stateDir);
  const appLog = join(tempDir(), 'app.log');
  appendFileSync(appLog, lines(1, 300));
  const { db, x } = await serverAndHost(appLog, stateDir);
  let agent: ReturnType<typeof run> | undefined;
  try {
    agent = run(stateDir);
    await until('the first 300 lines stored', () => stored(db, x.host_id).n === 300, 30_000);
    // killed (its run.lock stays behind), then the filesystem goes read-only
    agent.child.kill('SIGKILL');
    await exitOf(agent.child);
    expect(existsSync(join(stateDir, 'run.lock'))).toBe(true);
    execFileSync('mount', ['-o', 'remount,ro', mnt]);
    appendFileSync(appLog, lines(301, 300));

    agent = run(stateDir);
    const a = agent;
    await until('run says it waits for a writable state folder', () => a.stderr().includes('waiting for the state folder to be writable'), 15_000);
    expect(a.stderr()).toMatch(new RegExp(`the state folder ${stateDir} is on a read-only filesystem \\(EROFS; .*Repair the filesystem \\(umount, fsck\\) and mount it read-write; the agent starts by itself once it can write there`));
    expect(a.stderr()).not.toContain('E_INTERNAL');
    expect(a.child.exitCode).toBeNull();
    const [status, json] = await Promise.all([agentCli(['status', '--state-dir', stateDir]), agentCli(['status', '--state-dir', stateDir, '--json'])]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/note: +the state folder .* is on a read-only filesystem/);
    expect(JSON.parse(json.stdout)).toMatchObject({ state_dir_read_only: true });
    expect(stored(db, x.host_id).n).toBe(300);

    execFileSync('mount', ['-o', 'remount,rw', mnt]);
    await until('all 600 lines stored', () => stored(db, x.host_id).n === 600, 30_000, 100);
    expect(stored(db, x.host_id)).toEqual({ n: 600, d: 600 });
    expect(a.stderr()).toContain('the state folder is writable again: starting');
    expect(JSON.parse((await agentCli(['status', '--state-dir', stateDir, '--json'])).stdout)).toMatchObject({ state_dir_read_only: false });
    a.child.kill('SIGTERM');
    expect(await exitOf(a.child)).toBe(0);
    agent = undefined;
  } finally {
    if (agent !== undefined) {
      agent.child.kill('SIGKILL');
      await exitOf(agent.child);
    }
    umount();
  }
}, 90_000);

it.concurrent('a running agent whose state filesystem aborts on an I/O error lets go of it, so it can be unmounted and repaired, and carries on by itself once it is mounted again', async () => {
  const work = mkdtempSync(join(tmpdir(), 'cortex-ro-ext4-'));
  const img = join(work, 'disk.img');
  const mnt = join(work, 'mnt');
  mkdirSync(mnt);
  const dev = (): string | undefined => {
    try {
      return basename(execFileSync('findmnt', ['-n', '-o', 'SOURCE', mnt], { encoding: 'utf8' }).trim());
    } catch {
      return undefined;
    }
  };
  const ok = sh('truncate', ['-s', '64M', img]) && sh('mkfs.ext4', ['-q', '-F', img]) && sh('mount', ['-o', 'loop,errors=remount-ro', img, mnt]);
  const umount = unmountLater(mnt, () => rmSync(work, { recursive: true, force: true }));
  const trigger = `/sys/fs/ext4/${dev() ?? '-'}/trigger_fs_error`;
  if (!ok || !existsSync(trigger)) {
    umount();
    console.warn('read-only state e2e: no loop-mounted ext4 with trigger_fs_error here; not run');
    return;
  }
  const stateDir = join(mnt, 'state');
  mkdirSync(stateDir);
  const appLog = join(tempDir(), 'app.log');
  appendFileSync(appLog, lines(1, 500));
  const { db, x } = await serverAndHost(appLog, stateDir);
  const agent = run(stateDir);
  try {
    await until('the first 500 lines stored', () => stored(db, x.host_id).n === 500, 30_000);
    // The I/O error: ext4 aborts its journal and takes no more writes.
    execFileSync('sh', ['-c', `echo 1 > ${trigger}`]);
    appendFileSync(appLog, lines(501, 500));
    await until('the agent says it lets go of the folder', () => agent.stderr().includes('the agent stops (letting go of the folder so that it can be unmounted)'), 15_000);
    await until('run waits for a writable state folder', () => agent.stderr().includes('waiting for the state folder to be writable'), 15_000);
    // Nothing of the agent holds the filesystem now: it unmounts (it would be busy otherwise).
    execFileSync('umount', [mnt]);
    appendFileSync(appLog, lines(1001, 500));
    try {
      execFileSync('e2fsck', ['-fy', img], { stdio: 'ignore' });
    } catch (err) {
      if ((err as { status?: number }).status !== 1) throw err; // 1: errors corrected
    }
    execFileSync('mount', ['-o', 'loop,errors=remount-ro', img, mnt]);
    await until('all 1500 lines stored', () => stored(db, x.host_id).n === 1500, 60_000, 100);
    expect(stored(db, x.host_id)).toEqual({ n: 1500, d: 1500 });
    expect(agent.child.exitCode).toBeNull(); // the same process carried on
    expect(agent.stderr()).toContain('the state folder is writable again: starting');
    agent.child.kill('SIGTERM');
    expect(await exitOf(agent.child)).toBe(0);
  } finally {
    agent.child.kill('SIGKILL');
    umount();
  }
}, 120_000);

/** An agent CLI command run as "nobody" (uid 65534), not blocking: independent ones go side by side. */
async function asNobody(args: string[]): Promise<{ status: number | null; stderr: string }> {
  const r = await cliAsync(args, { script: AGENT_CLI, uid: 65534, gid: 65534, timeoutMs: 30_000 });
  return { status: r.code, stderr: r.stderr };
}

/** As root: a host enrolled into a state folder that "nobody" can reach (its parent 0755); undefined (said) when not root. */
async function enrolledForNobody() {
  if (process.getuid?.() !== 0) {
    console.warn('read-only state e2e: needs root to run the agent as another user; not run');
    return undefined;
  }
  const stateDir = join(tempDir(), 'state');
  mkdirSync(stateDir);
  const appLog = join(tempDir(), 'app.log');
  const { server, x, db } = await serverAndHost(appLog, stateDir);
  execFileSync('chmod', ['0755', dirname(stateDir)]); // a temp folder is 0700: let "nobody" in
  return { stateDir, server, x, db, appLog };
}

it.concurrent('`run` as a user who may not write the state folder says so at once (E_FILE_ACCESS), instead of waiting or "this is a bug"', async () => {
  const setup = await enrolledForNobody();
  if (setup === undefined) return;
  const { stateDir } = setup;
  // the folder and its files belong to "nobody", who may read but not write the folder
  execFileSync('chown', ['-R', '65534:65534', stateDir]);
  execFileSync('chmod', ['0500', stateDir]);
  const r = await asNobody(['run', '--state-dir', stateDir, '--allow-insecure']);
  expect(r.status).toBe(1);
  const stderr = r.stderr;
  expect(stderr).toContain(`cortex-agent: error[E_FILE_ACCESS]: this user (nobody) may not write the state folder ${stateDir} (EACCES), which belongs to nobody: its mode keeps its own owner out: chmod u+rwx ${stateDir}`);
  expect(stderr).not.toContain('E_INTERNAL');
}, 60_000);

it.concurrent('status, buffer check, run and enroll by a user who may not read the state folder (no sudo) say so: not "not enrolled", not "this is a bug" (H18)', async () => {
  const setup = await enrolledForNobody();
  if (setup === undefined) return;
  const { stateDir, server, x } = setup;
  execFileSync('chmod', ['0700', stateDir]); // root's, as /var/lib/cortex-agent is the agent user's
  const denied = `may not read the state folder ${stateDir} (EACCES), which belongs to root: run the command as root (sudo cortex-agent …)`;
  const tokenFile = join(dirname(stateDir), 'token');
  writeFileSync(tokenFile, 'A'.repeat(43), { mode: 0o644 });
  const commands = [['status', '--state-dir', stateDir], ['buffer', 'check', '--state-dir', stateDir], ['run', '--state-dir', stateDir, '--allow-insecure']];
  // the four commands side by side: each is refused before it writes anything
  const [enrolling, ...results] = await Promise.all([
    asNobody(['enroll', '--server', server.url, '--token-file', tokenFile, '--host-id', x.host_id, '--state-dir', join(stateDir, 'inner'), '--allow-insecure']),
    ...commands.map((args) => asNobody(args)),
  ]);
  for (const [i, args] of commands.entries()) {
    const r = results[i]!;
    expect([args[0], r.status]).toEqual([args[0], 1]);
    expect(r.stderr).toContain(`cortex-agent: error[E_FILE_ACCESS]: this user (nobody) ${denied}`);
    expect(r.stderr).not.toMatch(/E_INTERNAL|E_NOT_ENROLLED|has no buffer\.db/);
  }
  expect(enrolling!.status).toBe(1);
  expect(enrolling!.stderr).toMatch(/^cortex-agent: error\[E_FILE_ACCESS\]: this user \(nobody\) may not write the state folder .*inner \(EACCES\), which belongs to root: run the command as root .* \(the token was not sent and is still good\)/);
}, 60_000);

it.concurrent('a log file the agent\'s user may not read: the source says who runs and how to grant access, and resumes by itself once it may', async () => {
  const setup = await enrolledForNobody();
  if (setup === undefined) return;
  const { stateDir, x, db, appLog } = setup;
  appendFileSync(appLog, lines(1, 200)); // root's, in a root-only (0700) folder
  execFileSync('chown', ['-R', '65534:65534', stateDir]);
  const agent = spawn(process.execPath, [AGENT_CLI, 'run', '--state-dir', stateDir, '--allow-insecure', '--source-poll-ms', '50'], { uid: 65534, gid: 65534, stdio: ['ignore', 'ignore', 'pipe'] });
  let agentErr = '';
  agent.stderr?.setEncoding('utf8').on('data', (d: string) => (agentErr += d));
  let lastStatus = '';
  try {
    const source = await until('the source reports it may not read the file', async () => {
      // an agent that stopped will not report: say so with what it wrote, not after 30 s of nothing
      if (agent.exitCode !== null) throw new Error(`the agent (as nobody) exited ${agent.exitCode}: ${agentErr.slice(-2000)}`);
      const r = await agentCli(['status', '--state-dir', stateDir, '--json']);
      lastStatus = `${r.code}: ${r.stdout.slice(0, 1500)}${r.stderr.slice(0, 500)}`;
      if (r.code !== 0) return undefined;
      const v = JSON.parse(r.stdout) as { sources: { last_error: string | null }[] };
      return v.sources.find((s) => s.last_error !== null && s.last_error.includes('EACCES'));
    }, 30_000, 200).catch((err: Error) => {
      throw new Error(`${err.message}\nlast status: ${lastStatus}\nagent stderr: ${agentErr.slice(-2000)}`);
    });
    expect(source.last_error).toContain(`${appLog}: EACCES`);
    expect(source.last_error).toContain(`the agent runs as nobody, who may not read it: give that user read access to the file and search access to its folders (an ACL: setfacl -m u:nobody:r ${appLog}, and the source resumes by itself`);
    // access granted (the folder searchable, the file readable): the lines arrive, once each
    execFileSync('chmod', ['0755', dirname(appLog)]);
    execFileSync('chmod', ['0644', appLog]);
    await until('all 200 lines stored', () => stored(db, x.host_id).n === 200, 30_000, 100);
    expect(stored(db, x.host_id)).toEqual({ n: 200, d: 200 });
  } finally {
    agent.kill('SIGKILL');
    await exitOf(agent);
  }
}, 90_000);
