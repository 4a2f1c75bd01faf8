// `cortex-agent run` as root on a state folder another user owns (DECISIONS I36): the service's
// folder run by hand with sudo, or a root container on a volume of another uid. Run keeps root's
// rights (it still reads a log only root may read) and hands every file it writes there to the
// folder's owner, so that the agent started again as that user (the packaged service) can use
// them; files an earlier root run left are handed back at start; `run` and `status` as that user
// name such files as the cause, with the chown that mends it. Needs root (uid 65534 plays the
// service user); said and not run without it.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROTATED, TOKEN, tempDir } from './helpers/agent-harness.js';
import { cliAgent, storedMessages, type Run } from './helpers/cli-agent.js';
import { FakeServer } from './helpers/fake-server.js';
import { until } from '../support/procs.js';

const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const agent = cliAgent();

/** The uid of every file in `dir`, by name. */
const owners = (dir: string): Record<string, number> => Object.fromEntries(readdirSync(dir).map((f) => [f, statSync(join(dir, f)).uid]));
/** The files in `dir` that NOBODY does not own. */
const notNobodys = (dir: string): string[] => Object.entries(owners(dir)).filter(([, uid]) => uid !== NOBODY).map(([f]) => f);

/** The CLI as a child of this process (the fake server answers here): `as` NOBODY, or root. */
function cli(args: string[], as?: number): Run & { stdout: () => string } {
  if (as !== undefined) chmodSync(dirname(agent.path()), 0o755); // the bundle's temp folder (0700): let NOBODY load it
  const child = spawn(process.execPath, [agent.path(), ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(as !== undefined ? { uid: as, gid: as } : {}) });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return { child, stdout: () => stdout, stderr: () => stderr, exited: new Promise((resolve) => child.on('close', (code) => resolve(code))) };
}

/**
 * A fake server rotating the token, a log only root may read (in a root-only folder), and a
 * state folder NOBODY owns (as `install -d -o cortex-agent` or StateDirectory= makes it),
 * enrolled by root (which enrolls as NOBODY since I34).
 */
async function setUp(): Promise<{ server: FakeServer; dir: string; log: string }> {
  const server = await FakeServer.start();
  server.rotatedToken = ROTATED;
  const parent = tempDir();
  chmodSync(parent, 0o711);
  const dir = join(parent, 'state');
  mkdirSync(dir, { mode: 0o700 });
  chownSync(dir, NOBODY, NOBODY);
  const tokenFile = join(tempDir(), 'enroll-token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  const enroll = cli(['enroll', '--server', server.url, '--token-file', tokenFile, '--host-id', randomUUID(), '--state-dir', dir, '--allow-insecure']);
  expect(await enroll.exited, enroll.stderr()).toBe(0);
  expect(notNobodys(dir)).toEqual([]);
  const log = join(tempDir(), 'secure.log'); // root's, 0600, in a 0700 folder
  writeFileSync(log, 'root-only one\nroot-only two\n', { mode: 0o600 });
  server.config = { ...server.config, log_sources: [{ kind: 'file', path: log }] };
  return { server, dir, log };
}

/** `run` as NOBODY reaches the server with the token the root run was given, and is stopped. */
async function runsAsNobody(server: FakeServer, dir: string): Promise<void> {
  const hellos = server.sessions.length;
  const run = cli(['run', '--state-dir', dir, '--source-poll-ms', '50'], NOBODY);
  try {
    await until('the agent run as nobody says hello', () => {
      if (run.child.exitCode !== null) throw new Error(`run as nobody exited ${run.child.exitCode}: ${run.stderr()}`);
      return server.sessions.length > hellos && server.current!.hello !== null;
    }, 20_000);
    expect(server.current!.hello!.token).toBe(ROTATED);
    expect(run.stderr()).not.toContain('E_FILE_ACCESS');
  } finally {
    run.child.kill('SIGTERM');
    await run.exited;
  }
}

describe('cortex-agent run as root on a state folder another user owns', () => {
  it("keeps reading root-only logs, and hands each file it writes to the folder's owner as it appears: killed, the folder still starts as that user", async () => {
    if (!isRoot) {
      console.warn('run as root on another user\'s folder: these tests run as root; not run');
      return;
    }
    const { server, dir, log } = await setUp();
    const run = agent.run(dir);
    await until('the root-only log stored', () => server.stored.size >= 2, 20_000);
    await until('the rotated token stored', () => readFileSync(join(dir, 'token'), 'utf8').trim() === ROTATED, 20_000);
    expect(run.stderr()).toContain(`running as root on the state folder ${dir}, which belongs to nobody: every file the agent writes there is given to nobody`);
    appendFileSync(log, 'root-only three\n');
    await until('the third line stored', () => server.stored.size >= 3, 20_000);
    // written while it runs (token, config.json, seq.json, status.json, SQLite's -wal and -shm): nobody's, without a stop
    await until('every file in the folder is nobody\'s', () => ['token', 'config.json', 'seq.json', 'status.json'].every((f) => existsSync(join(dir, f))) && notNobodys(dir).length === 0, 20_000).catch(
      (err: Error) => {
        throw new Error(`${err.message}: ${JSON.stringify(owners(dir))}`);
      },
    );
    run.child.kill('SIGKILL'); // no stop step: what is on disk is what a crash leaves
    await run.exited;
    expect(notNobodys(dir)).toEqual([]);
    expect(storedMessages(server)).toEqual(['root-only one', 'root-only two', 'root-only three']);
    await runsAsNobody(server, dir);
  }, 90_000);

  it('hands back at start what an earlier root run left; `run` and `status` as the owner name those files and the chown; at a clean stop every file is the owner\'s', async () => {
    if (!isRoot) {
      console.warn('run as root on another user\'s folder: these tests run as root; not run');
      return;
    }
    const { server, dir } = await setUp();
    // as an earlier version's run as root left them: the token rotated, config.json written, as root (0600)
    writeFileSync(join(dir, 'token'), TOKEN, { mode: 0o600 });
    chownSync(join(dir, 'token'), 0, 0);
    writeFileSync(join(dir, 'config.json'), `${JSON.stringify(server.config)}\n`, { mode: 0o600 });
    chownSync(join(dir, 'config.json'), 0, 0);

    const refused = cli(['run', '--state-dir', dir], NOBODY);
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toContain(
      `error[E_FILE_ACCESS]: cannot read ${join(dir, 'token')} (EACCES): config.json, token in the state folder ${dir} belong to root, but the folder to nobody (left by a cortex-agent command run as root?): the agent run as nobody`,
    );
    expect(refused.stderr()).toContain(`give them back to nobody: sudo chown -R nobody: ${dir}`);
    for (const as of [NOBODY, undefined]) {
      const st = cli(['status', '--state-dir', dir], as);
      expect(await st.exited, st.stderr()).toBe(0);
      expect(st.stdout()).toMatch(/^problem: +config\.json, token in the state folder .* belong to root, but the folder to nobody .*cannot start — give them back to nobody: sudo chown -R nobody: /m);
      expect(st.stdout()).not.toContain('may not read it, so whether run can start is not shown');
      const json = cli(['status', '--state-dir', dir, '--json'], as);
      expect(await json.exited).toBe(0);
      const v = JSON.parse(json.stdout()) as { misowned_files: { folder_owner: string; files: { file: string; owner: string }[]; blocks_start: boolean } | null };
      expect(v.misowned_files).toMatchObject({ folder_owner: 'nobody', files: [{ file: 'config.json', owner: 'root' }, { file: 'token', owner: 'root' }], blocks_start: true });
    }

    const run = agent.run(dir);
    await until('the root-only log stored', () => server.stored.size >= 2, 20_000);
    expect(run.stderr()).toContain('files an earlier command run as root left were given back: config.json, token');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(notNobodys(dir)).toEqual([]);
    const st = cli(['status', '--state-dir', dir, '--json'], NOBODY);
    expect(await st.exited).toBe(0);
    expect((JSON.parse(st.stdout()) as { misowned_files: unknown; start_problem: unknown }).misowned_files).toBeNull();
    await runsAsNobody(server, dir);
    // status run as root reads the buffer (SQLite makes its -wal and -shm): nobody's too
    const rootStatus = cli(['status', '--state-dir', dir]);
    expect(await rootStatus.exited).toBe(0);
    expect(notNobodys(dir)).toEqual([]);
  }, 90_000);

  it("a buffer.db root left: `run` and `status` as the owner say so (was E_AGENT_START SQLITE_CANTOPEN \"check the state dir path\")", async () => {
    if (!isRoot) {
      console.warn('run as root on another user\'s folder: these tests run as root; not run');
      return;
    }
    const { dir } = await setUp();
    chownSync(join(dir, 'buffer.db'), 0, 0);
    const said = `buffer.db in the state folder ${dir} belongs to root, but the folder to nobody (left by a cortex-agent command run as root?): the agent run as nobody (as the packaged service runs) cannot start — give it back to nobody: sudo chown -R nobody: ${dir}`;
    const refused = cli(['run', '--state-dir', dir], NOBODY);
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toContain(`error[E_FILE_ACCESS]: cannot open the buffer ${join(dir, 'buffer.db')}: ${said}`);
    const st = cli(['status', '--state-dir', dir], NOBODY);
    expect(await st.exited).toBe(1);
    expect(st.stderr()).toContain(`error[E_FILE_ACCESS]: cannot read ${join(dir, 'buffer.db')}: ${said}`);
  }, 60_000);

  it('a root file of another name in the folder, and a symlink in place of an agent file, are left as they are', async () => {
    if (!isRoot) {
      console.warn('run as root on another user\'s folder: these tests run as root; not run');
      return;
    }
    const { server, dir } = await setUp();
    writeFileSync(join(dir, 'enroll-token'), TOKEN, { mode: 0o600 }); // an operator's, root's
    const outside = join(tempDir(), 'outside');
    writeFileSync(outside, 'root\n', { mode: 0o600 });
    symlinkSync(outside, join(dir, 'buffer.db.corrupt-2026-01-01T00-00-00-000Z'));
    const run = agent.run(dir);
    await until('the root-only log stored', () => server.stored.size >= 2, 20_000);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(statSync(join(dir, 'enroll-token')).uid).toBe(0);
    expect(statSync(outside).uid).toBe(0);
    expect(notNobodys(dir).sort()).toEqual(['buffer.db.corrupt-2026-01-01T00-00-00-000Z', 'enroll-token']); // the symlink: statSync follows it to root's file
  }, 90_000);
});
