// `cortex-agent` on a state folder an operator (or a disk) broke: each is said as what it is,
// with a catalogued code and what to do, never E_INTERNAL "this is a bug", and never a sound
// buffer called damaged. The CLI bundled from agent/cli.ts; the cases that need root (another
// user, a small tmpfs) say so and are not run without it. Every test has its own folders, disk
// and server: they run side by side (a full disk's run waits 5 s between its tries meanwhile).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { openHealing } from '../../agent/buffer/heal.js';
import { writeStatusFile } from '../../agent/status-file.js';
import { TOKEN, cleanupDirs, tempDir } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';
import { fillDisk, releaseSmallDisks, smallDisk } from '../support/small-disk.js';
import { AGENT_CLI, requireDist, until } from '../support/procs.js';
import { cliAsync } from '../support/scli-pool.js';

// the agent CLI bundled once per run by the global setup (test/support/cli-bundles.ts)
const cli = AGENT_CLI;
beforeAll(() => requireDist());
afterAll(cleanupDirs);
// the small disks of every test (a test cannot unmount only its own: support/small-disk.ts)
afterAll(releaseSmallDisks);

/** A fake server closed when the test ends (not after each: the tests run side by side). */
async function fakeServer({ onTestFinished }: TestContext): Promise<FakeServer> {
  const server = await FakeServer.start();
  onTestFinished(() => server.close());
  return server;
}

const isRoot = process.getuid?.() === 0;
const NOBODY = 65534;

/** `cortex-agent run` on `dir`, its stderr kept. */
function startRun(dir: string): { child: ReturnType<typeof spawn>; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [cli, 'run', '--state-dir', dir, '--log-level', 'info'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return { child, stderr: () => stderr, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

/** until() for these agent runs: 20 s, as they start on a loaded machine. */
const waitFor = (what: string, cond: () => boolean, ms = 20_000): Promise<true> => until(what, () => cond() || undefined, ms);

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI with `args` (as user `as`) to its exit, without blocking: independent commands run side by side (Promise.all). */
function agentCliAsync(args: string[], as?: number): Promise<Result> {
  return cliAsync(args, { script: cli, cwd: process.cwd(), timeoutMs: 20_000, ...(as !== undefined ? { uid: as, gid: as } : {}) });
}

/** An enrolled state folder made by hand: agent.json (to `url`), host_id, token, buffer.db. */
function stateDir(url = 'ws://127.0.0.1:9/ws/agent', dir = tempDir()): string {
  writeFileSync(join(dir, 'agent.json'), JSON.stringify({ server_url: url, allow_insecure: true }), { mode: 0o600 });
  writeFileSync(join(dir, 'host_id'), `${randomUUID()}\n`);
  writeFileSync(join(dir, 'token'), TOKEN, { mode: 0o600 });
  DurableBuffer.open(join(dir, 'buffer.db')).close();
  return dir;
}


/** A tmpfs of `bytes` with an empty state folder `state` in it; null (said, the test not run) without a mount. */
function stateOnSmallDisk(bytes: number, what: string): { disk: string; dir: string } | null {
  const disk = smallDisk(bytes, 'cortex-brokenstate-');
  if (disk === null) {
    console.warn(`${what}: needs a tmpfs mount (root); not run`);
    return null;
  }
  const dir = join(disk, 'state');
  mkdirSync(dir, { mode: 0o700 });
  return { disk, dir };
}

function noInternal(r: Result): void {
  expect(r.stderr).not.toContain('E_INTERNAL');
  expect(r.stderr).not.toMatch(/this is a bug|\n\s+at /);
}

// first: its run on a full disk waits for its tries (5 s apart) while the other tests run
describe.concurrent('a buffer that cannot be opened for want of space or permission is not called damaged', () => {
  it('run after a SIGKILL on a full disk waits (seq.json ENOSPC was E_AGENT_START, exit 1), says so once naming the file, and starts once space is freed, with no false lost -wal (next_seq jumped 65,536)', async () => {
    const small = stateOnSmallDisk(16 * 1024 * 1024, 'run on a full disk');
    if (small === null) return;
    const { disk, dir } = small;
    stateDir('ws://127.0.0.1:9/ws/agent', dir);
    // a run killed: seq.json says running, buffer.db-wal and -shm left
    const first = startRun(dir);
    // (buffer.db-wal can be there before seq.json is first written)
    await waitFor('the first run to open its buffer', () => existsSync(join(dir, 'buffer.db-wal')) && existsSync(join(dir, 'seq.json')) && readFileSync(join(dir, 'seq.json'), 'utf8').includes('"running":true') && existsSync(join(dir, 'status.json')));
    first.child.kill('SIGKILL');
    await first.exited;
    fillDisk(disk);
    const second = startRun(dir);
    try {
      await waitFor('run to say it waits for space (or exit)', () => second.stderr().includes('cannot open the buffer: the disk of') || second.child.exitCode !== null);
      await new Promise((r) => setTimeout(r, 6_000)); // past one retry
      expect(second.child.exitCode).toBeNull();
      expect(second.stderr()).not.toContain('E_AGENT_START');
      const said = second.stderr().split('\n').filter((l) => l.includes('cannot open the buffer'));
      expect(said).toHaveLength(1);
      expect(said[0]).toContain(`the disk of ${dir} is full (seq.json could not be written: ENOSPC); free space there`);
      rmSync(join(disk, 'fill'));
      await waitFor('run to start once space is freed', () => second.stderr().includes('buffer opened: space was freed'));
      expect(second.stderr()).not.toContain('wal was missing');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      if (second.child.exitCode === null) second.child.kill('SIGKILL');
    }
    const b = DurableBuffer.open(join(dir, 'buffer.db'), { reserveBytes: 0 });
    try {
      expect(b.nextSeq).toBe(1); // nothing was ever assigned, and nothing jumped
    } finally {
      b.close();
    }
  }, 60_000);

  it('full disk: status E_DISK_FULL (was E_BUFFER on SQLITE_IOERR_SHMSIZE), buffer check "cannot check: disk full" E_DISK_FULL, not DAMAGED', async () => {
    const small = stateOnSmallDisk(2 * 1024 * 1024, 'a full disk');
    if (small === null) return;
    const { disk, dir } = small;
    stateDir('ws://127.0.0.1:9/ws/agent', dir);
    rmSync(join(dir, 'buffer.db.reserve'), { force: true });
    for (const f of ['buffer.db-shm', 'buffer.db-wal']) rmSync(join(dir, f), { force: true });
    fillDisk(disk);
    const status = await agentCliAsync(['status', '--state-dir', dir]);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(/^cortex-agent: error\[E_DISK_FULL\]: .*SQLITE_IOERR_SHMSIZE.* — \d+ bytes free on the state dir's filesystem: free space there/m);
    for (const json of [false, true]) {
      const check = await agentCliAsync(['buffer', 'check', '--state-dir', dir, ...(json ? ['--json'] : [])]);
      expect(check.code).toBe(1);
      expect(check.stdout).not.toContain('DAMAGED');
      expect(check.stderr).not.toContain('moves the file aside');
      expect(check.stderr).toContain(`cortex-agent: error[E_DISK_FULL]: cannot check ${join(dir, 'buffer.db')}: disk full (SQLITE_IOERR_SHMSIZE`);
      if (json) expect(JSON.parse(check.stdout)).toMatchObject({ ok: false, error: { code: 'E_DISK_FULL' } });
    }
  });

  it('a buffer.db this user may not read (as nobody): buffer check E_FILE_ACCESS "permission denied", not DAMAGED', async () => {
    if (!isRoot) {
      console.warn('buffer check as another user: needs root; not run');
      return;
    }
    const dir = stateDir();
    chmodSync(dir, 0o755);
    chmodSync(join(dir, 'buffer.db'), 0o000);
    const check = await agentCliAsync(['buffer', 'check', '--state-dir', dir], NOBODY);
    expect(check.code).toBe(1);
    expect(check.stdout).not.toContain('DAMAGED');
    expect(check.stderr).toContain(`cortex-agent: error[E_FILE_ACCESS]: cannot check ${join(dir, 'buffer.db')}: permission denied: this user (nobody) may not read the file`);
  });
});

describe.concurrent('run on state files it cannot use: E_FILE_ACCESS / E_TOKEN, once, exit 1', () => {
  it('agent.json, token or host_id a folder: E_FILE_ACCESS naming the file (agent.json was E_INTERNAL EISDIR; the token was retried forever)', async () => {
    const files = ['agent.json', 'token', 'host_id'];
    const dirs = files.map((file) => {
      const dir = stateDir();
      rmSync(join(dir, file));
      mkdirSync(join(dir, file));
      return dir;
    });
    const results = await Promise.all(dirs.map((dir) => agentCliAsync(['run', '--state-dir', dir])));
    for (const [i, file] of files.entries()) {
      const [dir, r] = [dirs[i]!, results[i]!];
      expect(r.code, file).toBe(1);
      expect(r.stderr, file).toContain(`cortex-agent: error[E_FILE_ACCESS]: cannot read ${join(dir, file)} (EISDIR): it is a folder, not a file; run cannot start until this is mended — move it aside`);
      noInternal(r);
    }
  });

  it('agent.json or token this user may not read (as nobody): E_FILE_ACCESS saying so (agent.json was E_INTERNAL EACCES)', async () => {
    if (!isRoot) {
      console.warn('run as another user: needs root; not run');
      return;
    }
    const files = ['agent.json', 'token'];
    const dirs = files.map((file) => {
      const dir = stateDir();
      chmodSync(dir, 0o755);
      for (const f of readdirSync(dir)) chownSync(join(dir, f), NOBODY, NOBODY);
      chownSync(dir, NOBODY, NOBODY);
      chmodSync(join(dir, file), 0o000);
      return dir;
    });
    const results = await Promise.all(dirs.map((dir) => agentCliAsync(['run', '--state-dir', dir], NOBODY)));
    for (const [i, file] of files.entries()) {
      const [dir, r] = [dirs[i]!, results[i]!];
      expect(r.code, file).toBe(1);
      expect(r.stderr, file).toContain(`cortex-agent: error[E_FILE_ACCESS]: cannot read ${join(dir, file)} (EACCES): this user (nobody) may not read it`);
      noInternal(r);
    }
  });

  it('a malformed token (empty, cut short, with spaces) stops run with E_TOKEN exit 1 instead of retrying forever', async () => {
    const bads = ['', TOKEN.slice(0, 20), `${TOKEN.slice(0, 20)} ${TOKEN.slice(20)}`];
    const dirs = bads.map((bad) => {
      const dir = stateDir();
      writeFileSync(join(dir, 'token'), bad);
      return dir;
    });
    const results = await Promise.all(dirs.map((dir) => agentCliAsync(['run', '--state-dir', dir])));
    for (const [i, bad] of bads.entries()) {
      const [dir, r] = [dirs[i]!, results[i]!];
      expect(r.code, JSON.stringify(bad)).toBe(1);
      expect(r.stderr).toContain(`cortex-agent: error[E_TOKEN]: token file ${join(dir, 'token')} is malformed: `);
      expect(r.stderr).not.toContain('connection attempt failed');
    }
  });

  it('a token file with a UTF-8 BOM is read as enroll --token-file reads it: the token without it', async (ctx) => {
    const server = await fakeServer(ctx);
    const dir = stateDir(server.url);
    writeFileSync(join(dir, 'token'), `\uFEFF${TOKEN}\n`);
    const child = spawn(process.execPath, [cli, 'run', '--state-dir', dir], { stdio: 'ignore' });
    try {
      const hello = await server.next<{ token: string }>('hello');
      expect(hello.token).toBe(TOKEN);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe.concurrent('status', () => {
  it('a dead agent whose pid another program reuses is not running (kill(0) alone said it was)', async () => {
    const dir = stateDir();
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => other.once('spawn', resolve));
      await writeStatusFile(dir, {
        pid: other.pid!,
        updated_at: new Date().toISOString(),
        state: 'Active',
        stopped: false,
        server_url: 'ws://127.0.0.1:9/ws/agent',
        session_id: 'sess',
        host_id: readFileSync(join(dir, 'host_id'), 'utf8').trim(),
        last_error: null,
        sources_paused: false,
        sources: [],
        batch_entries: 0,
        send_rate_cap: null,
      });
      const r = await agentCliAsync(['status', '--state-dir', dir, '--json']);
      expect(r.code, r.stderr).toBe(0);
      const s = JSON.parse(r.stdout) as { running: boolean; state: string; status_file_problem: unknown };
      expect(s.status_file_problem).toBeNull();
      expect(s.running).toBe(false);
      expect(s.state).toBe('Disconnected');
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('says what keeps run from starting (agent.json damaged, token missing, host_id a folder), as run would say it', async () => {
    const cases: [string, (dir: string) => void, string][] = [
      ['agent.json', (dir) => writeFileSync(join(dir, 'agent.json'), '{"server_url": '), 'E_AGENT_START'],
      ['token', (dir) => rmSync(join(dir, 'token')), 'E_NOT_ENROLLED'],
      ['host_id', (dir) => (rmSync(join(dir, 'host_id')), mkdirSync(join(dir, 'host_id'))), 'E_FILE_ACCESS'],
    ];
    // each case in its own folder, side by side; in a folder, status (text and --json) before run
    const soundDir = stateDir();
    const [sound, ...results] = await Promise.all([
      agentCliAsync(['status', '--state-dir', soundDir, '--json']).then((r) => JSON.parse(r.stdout) as { start_problem: unknown }),
      ...cases.map(async ([, breakIt]) => {
        const dir = stateDir();
        breakIt(dir);
        const [text, json] = await Promise.all([agentCliAsync(['status', '--state-dir', dir]), agentCliAsync(['status', '--state-dir', dir, '--json'])]);
        return { text, json, run: await agentCliAsync(['run', '--state-dir', dir]) };
      }),
    ]);
    for (const [i, [file, , code]] of cases.entries()) {
      const { text, json: jsonOut, run } = results[i]! as { text: Result; json: Result; run: Result };
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(new RegExp(`^problem: +${file}: error\\[${code}\\] .*run cannot start until this is mended`, 'm'));
      const json = JSON.parse(jsonOut.stdout) as { start_problem: { file: string; code: string } | null };
      expect(json.start_problem).toMatchObject({ file, code });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`error[${code}]`);
    }
    expect(sound.start_problem).toBeNull();
  });
});

describe.concurrent('buffer check without a buffer.db', () => {
  it('error[E_NOT_ENROLLED] as status says it; --json prints {ok: false, error}', async () => {
    const dir = tempDir();
    const [r, j] = await Promise.all([agentCliAsync(['buffer', 'check', '--state-dir', dir]), agentCliAsync(['buffer', 'check', '--state-dir', dir, '--json'])]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`cortex-agent: error[E_NOT_ENROLLED]: ${dir} has no buffer.db; is it an enrolled agent's state dir? — cortex-agent enroll --state-dir ${dir}\n`);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toEqual({
      ok: false,
      path: join(dir, 'buffer.db'),
      error: { code: 'E_NOT_ENROLLED', message: `${dir} has no buffer.db; is it an enrolled agent's state dir?`, hint: `cortex-agent enroll --state-dir ${dir}` },
    });
  });
});

describe.concurrent('enroll on the state folder of a run that was killed', () => {
  it('opens and closes buffer.db without making its -wal read as lost at the next start (next_seq jumped 65,536: a false gap)', async (ctx) => {
    const server = await fakeServer(ctx);
    const dir = tempDir();
    const hostId = randomUUID();
    const exitOf = (args: string[]): Promise<number | null> =>
      new Promise((resolve) => spawn(process.execPath, [cli, ...args], { stdio: 'ignore' }).on('exit', resolve));
    const enroll = ['enroll', '--server', server.url, '--token', TOKEN, '--host-id', hostId, '--state-dir', dir, '--allow-insecure'];
    expect(await exitOf(enroll)).toBe(0);
    const first = startRun(dir);
    await waitFor('the run to connect', () => first.stderr().includes('"msg":"connected"'));
    first.child.kill('SIGKILL');
    await first.exited;
    expect(existsSync(join(dir, 'buffer.db-wal'))).toBe(true);
    expect(await exitOf(enroll)).toBe(0); // enrolled again (a new token), the run not restarted yet
    const second = startRun(dir);
    try {
      await waitFor('the second run to connect', () => second.stderr().includes('"msg":"connected"'));
      expect(second.stderr()).not.toContain('wal was missing');
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      if (second.child.exitCode === null) second.child.kill('SIGKILL');
    }
  }, 60_000);
});

describe.concurrent('enroll that cannot write the state folder: the token was not sent', () => {
  it('agent.json a folder: E_FILE_ACCESS "the token was not sent and is still good" (was E_ENROLL "get a new token"); no hello', async (ctx) => {
    const server = await fakeServer(ctx);
    const dir = tempDir();
    mkdirSync(join(dir, 'agent.json'));
    const r = await agentCliAsync(['enroll', '--server', server.url, '--token', TOKEN, '--host-id', randomUUID(), '--state-dir', dir, '--allow-insecure']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cortex-agent: error[E_FILE_ACCESS]: cannot write the state folder ${dir}: cannot write ${join(dir, 'agent.json')}: EISDIR (nothing was enrolled; the token was not sent and is still good)`);
    expect(r.stderr).not.toContain('E_ENROLL');
    expect(server.sessions.length).toBe(0);
  });

  it('a full disk: E_DISK_FULL, the token not sent', async (ctx) => {
    const small = stateOnSmallDisk(1024 * 1024, 'enroll on a full disk');
    if (small === null) return;
    const { disk, dir } = small;
    const server = await fakeServer(ctx);
    fillDisk(disk);
    const r = await agentCliAsync(['enroll', '--server', server.url, '--token', TOKEN, '--host-id', randomUUID(), '--state-dir', dir, '--allow-insecure']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error\[E_DISK_FULL\]: cannot write the state folder .*ENOSPC \(nothing was enrolled; the token was not sent and is still good\)/);
    expect(server.sessions.length).toBe(0);
  });
});

describe.concurrent("another program's SQLite file at buffer.db", () => {
  it('is not written into: the healing open moves it aside, kept whole, and starts a buffer; buffer check calls it damaged, as run treats it', async () => {
    const dir = tempDir();
    const path = join(dir, 'buffer.db');
    const other = new Database(path);
    other.exec("CREATE TABLE foo (x TEXT); INSERT INTO foo VALUES ('theirs')");
    other.close();
    const check = await agentCliAsync(['buffer', 'check', '--state-dir', dir]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('DAMAGED');
    const { buffer, recovery } = openHealing(dir);
    try {
      expect(recovery?.moved_to).toMatch(/buffer\.db\.corrupt-/);
      expect(recovery?.reason).toContain('not a buffer database: it holds tables of another application (foo)');
      const kept = new Database(recovery!.moved_to, { readonly: true });
      try {
        expect(kept.prepare('SELECT name FROM sqlite_master WHERE type = ? ORDER BY name').all('table')).toEqual([{ name: 'foo' }]);
        expect(kept.prepare('SELECT x FROM foo').all()).toEqual([{ x: 'theirs' }]);
      } finally {
        kept.close();
      }
      expect(buffer.nextSeq).toBeGreaterThan(0);
    } finally {
      buffer.close();
    }
  });

  it('a buffer.db of 0 bytes or without a table: buffer check says EMPTY (run sets it up), not DAMAGED; run agrees', async () => {
    // the two files side by side, each in its own folder
    await Promise.all([(p: string) => writeFileSync(p, ''), (p: string) => new Database(p).exec('VACUUM').close()].map(async (make) => {
      const dir = stateDir();
      const path = join(dir, 'buffer.db');
      rmSync(path);
      make(path);
      const [r, jOut] = await Promise.all([agentCliAsync(['buffer', 'check', '--state-dir', dir]), agentCliAsync(['buffer', 'check', '--state-dir', dir, '--json'])]);
      noInternal(r);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^result: {5}EMPTY: not a buffer yet$/m);
      expect(r.stdout).not.toContain('DAMAGED');
      expect(r.stderr).toMatch(/^cortex-agent: \S+buffer\.db holds nothing \((0 bytes|a SQLite file without a table)\): not a buffer yet; "cortex-agent run" sets it up as a new buffer/);
      const j = JSON.parse(jOut.stdout) as { ok: boolean; integrity: string };
      expect([j.ok, j.integrity]).toEqual([false, 'empty']);
      // and run does set it up: the healing open leaves no .corrupt- copy
      DurableBuffer.open(path).close();
      expect(readdirSync(dir).some((f) => f.includes('.corrupt-'))).toBe(false);
      expect((await agentCliAsync(['buffer', 'check', '--state-dir', dir])).code).toBe(0);
    }));
  });

  it('an empty file (no tables) is still made into a buffer', () => {
    const dir = tempDir();
    const path = join(dir, 'buffer.db');
    writeFileSync(path, '');
    const buffer = DurableBuffer.open(path);
    buffer.close();
    expect(statSync(path).size).toBeGreaterThan(0);
    expect(readdirSync(dir).some((f) => f.includes('.corrupt-'))).toBe(false);
    expect(existsSync(path)).toBe(true);
    expect(readFileSync(path).subarray(0, 15).toString()).toBe('SQLite format 3');
  });
});
