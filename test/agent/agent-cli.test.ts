// The CLI (bundled from agent/cli.ts) against the fake server: enroll exit codes and
// files, ws:// refusal, run + status --json while running, SIGTERM clean close,
// tokens never printed.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode } from '@cortex/agent-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { readStatusFile } from '../../agent/status-file.js';
import { TokenInputError, readTokenInput } from '../../agent/token-input.js';
import { AGENT_CLI, requireDist, until } from '../support/procs.js';
import { cliAsync, type CliRun } from '../support/scli-pool.js';
import { ROTATED, TOKEN, cleanupDirs, tempDir } from './helpers/agent-harness.js';
import { FakeServer, rpcError } from './helpers/fake-server.js';

// the agent CLI bundled once per run by the global setup (test/support/cli-bundles.ts)
const cli = AGENT_CLI;
beforeAll(() => requireDist());
afterAll(cleanupDirs);

type Result = CliRun;

/**
 * The CLI with `args` to its exit, without blocking (support/scli-pool.ts: at most four at
 * once in this file). `now`: started at once, outside the pool, for a run whose output
 * depends on when it runs (an age in seconds).
 */
function runCli(args: string[], now = false): Promise<Result> {
  return cliAsync(args, { script: cli, cwd: process.cwd(), now });
}

/** `cortex-agent run` on `dir` as a child process: what it wrote to stderr so far, and its exit code once it ends. */
function startRun(dir: string, extra: string[] = []): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [cli, 'run', '--state-dir', dir, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => stderr, exited };
}

function noSecrets(r: Result): void {
  for (const t of [TOKEN, ROTATED]) {
    expect(r.stdout).not.toContain(t);
    expect(r.stderr).not.toContain(t);
  }
}

/** A folder enrolled with the CLI, once for the file: the tests of run and status start from copies of it. */
let template: { dir: string; hostId: string } | undefined;
beforeAll(async () => {
  const server = await FakeServer.start();
  try {
    const dir = tempDir();
    const hostId = randomUUID();
    const r = await runCli(['enroll', '--server', server.url, '--token', TOKEN, '--host-id', hostId, '--state-dir', dir, '--allow-insecure']);
    expect(r.code).toBe(0);
    template = { dir, hostId };
  } finally {
    await server.close();
  }
});

/** A copy of the folder `from` in a new temp folder, its `file` holding `text`. */
function copyWith(from: string, file: string, text: string): string {
  const dir = tempDir();
  cpSync(from, dir, { recursive: true });
  writeFileSync(join(dir, file), text);
  return dir;
}

/** A copy of the enrolled folder, its agent.json naming `server` (as enrolling there would have written it). */
function enrolled(server: FakeServer): { dir: string; hostId: string } {
  const config = JSON.parse(readFileSync(join(template!.dir, 'agent.json'), 'utf8')) as object;
  return { dir: copyWith(template!.dir, 'agent.json', JSON.stringify({ ...config, server_url: server.url })), hostId: template!.hostId };
}

// Every test has its own fake server and folders (removed after the file): the tests run side
// by side, their CLI calls sharing the pool's four slots.
describe.concurrent('cortex-agent enroll', () => {
  it('writes the rotated token (0600), host_id and agent.json, exits 0; --json prints one object', async () => {
    const server = await FakeServer.start();
    server.rotatedToken = ROTATED;
    const dir = tempDir();
    const hostId = randomUUID();
    const r = await runCli(['enroll', '--server', server.url, '--token', TOKEN, '--host-id', hostId, '--state-dir', dir, '--allow-insecure', '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(out).toMatchObject({ host_id: hostId, token_rotated: true });
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(ROTATED);
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'host_id'), 'utf8').trim()).toBe(hostId);
    expect(JSON.parse(readFileSync(join(dir, 'agent.json'), 'utf8'))).toMatchObject({ server_url: server.url, allow_insecure: true });
    expect(server.current!.hello!.token).toBe(TOKEN);
    expect((await server.current!.closed).reason).toMatch(/^final_seq=\d+$/);
    noSecrets(r);
    await server.close();
  });

  for (const code of [ErrorCode.AuthFailed, ErrorCode.TokenRevoked, ErrorCode.AgentVersionUnsupported, ErrorCode.TokenRotationRequired]) {
    it(`exits 1 naming ${code} and writes no token`, async ({ expect }) => {
      const server = await FakeServer.start();
      server.hello = () => {
        throw rpcError(code, 'rejected');
      };
      const dir = tempDir();
      const r = await runCli(['enroll', '--server', server.url, '--token', TOKEN, '--host-id', randomUUID(), '--state-dir', dir, '--allow-insecure']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(String(code));
      if (code === ErrorCode.TokenRotationRequired || code === ErrorCode.TokenRevoked || code === ErrorCode.AuthFailed) expect(r.stderr).toMatch(/agent issue --host-id/);
      // at enroll there is no token file to delete, and the advice is said once (no catalogue hint after it)
      if (code === ErrorCode.TokenRevoked) expect(r.stderr).toMatch(/revoked or decommissioned, so nothing was enrolled; to take the host back, issue a new token for it/);
      expect(r.stderr).not.toContain('token file was deleted');
      expect(r.stderr).not.toContain(' — see the message');
      expect(existsSync(join(dir, 'token'))).toBe(false);
      noSecrets(r);
      await server.close();
    });
  }

  it('refuses ws:// without --allow-insecure and bad input with exit 2', async () => {
    const dir = tempDir();
    const base = ['enroll', '--token', TOKEN, '--state-dir', dir];
    const [a, b, c] = await Promise.all([
      runCli([...base, '--server', 'ws://127.0.0.1:1/ws/agent', '--host-id', randomUUID()]),
      runCli([...base, '--server', 'wss://x/ws/agent', '--host-id', 'not-a-uuid']),
      runCli(['enroll', '--server', 'wss://x/ws/agent']),
    ]);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/allow-insecure/);
    expect(b.code).toBe(2);
    expect(c.code).toBe(2);
    expect(existsSync(join(dir, 'token'))).toBe(false);
    for (const r of [a, b, c]) noSecrets(r);
  });

  it('run refuses a backoff base of 0 and a cap below the base with exit 2, naming the option', async () => {
    const dir = tempDir();
    const [zero, below, belowDefault] = await Promise.all([
      runCli(['run', '--state-dir', dir, '--backoff-base-ms', '0']),
      runCli(['run', '--state-dir', dir, '--backoff-base-ms', '500', '--backoff-cap-ms', '100']),
      runCli(['run', '--state-dir', dir, '--backoff-cap-ms', '999']),
    ]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/--backoff-base-ms must be at least 1/);
    expect(below.code).toBe(2);
    expect(below.stderr).toMatch(/--backoff-cap-ms must be at least the backoff base \(500 ms\)/);
    expect(belowDefault.code).toBe(2);
    expect(belowDefault.stderr).toMatch(/at least the backoff base \(1000 ms\)/);
  });

  it('a token of the wrong shape is said as coming from where it came: --token-file FILE, --token -, --token (a short token file said "--token: …", an option not given)', async () => {
    const short = join(tempDir(), 'short-token');
    writeFileSync(short, 'abc12\n');
    const args = ['--server', 'ws://127.0.0.1:1/ws/agent', '--host-id', randomUUID(), '--state-dir', join(tempDir(), 'state'), '--allow-insecure'];
    const spaced = join(tempDir(), 'spaced-token');
    writeFileSync(spaced, `${TOKEN.slice(0, 20)} ${TOKEN.slice(20)}`);
    const [fromFile, fromSpaced, literal] = await Promise.all([
      runCli(['enroll', '--token-file', short, ...args]),
      runCli(['enroll', '--token-file', spaced, ...args]),
      runCli(['enroll', '--token', 'abc12', ...args]),
    ]);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toBe(`cortex-agent: error[E_TOKEN]: --token-file ${short}: token must be 32-256 characters (got 5) — put the token that "cortex-server agent issue" printed in ${short}, on its first line, and nothing else\n`);
    expect(fromSpaced.stderr).toContain(`error[E_TOKEN]: --token-file ${spaced}: token must be printable ASCII without spaces`);
    expect(literal.code).toBe(2);
    expect(literal.stderr).toContain('error[E_TOKEN]: --token: token must be 32-256 characters (got 5) — give the token with --token-file');
    const piped = await readTokenInput({ token: '-' }, () => Promise.resolve('abc12\n')).catch((e: unknown) => e);
    expect(piped).toBeInstanceOf(TokenInputError);
    expect((piped as Error).message).toBe('--token -: token must be 32-256 characters (got 5)');
    await expect(readTokenInput({ tokenFile: short.replace('short', 'missing') })).rejects.toThrow(/cannot read it \(ENOENT\)/);
    expect(await readTokenInput({ token: '-' }, () => Promise.resolve(`${TOKEN}\n`))).toEqual({ token: TOKEN, from: 'stdin' });
  });

  it('--help works on every command', async () => {
    const commands = [[], ['enroll'], ['run'], ['status']];
    const results = await Promise.all(commands.map((cmd) => runCli([...cmd, '--help'])));
    for (const [i, r] of results.entries()) {
      expect([commands[i], r.code]).toEqual([commands[i], 0]);
      expect(r.stdout).toMatch(/Usage: cortex-agent/);
    }
  });
});

// Side by side in two groups (it.concurrent): the tests whose agent runs mostly wait, then the
// ones of CLI calls only (those fill the pool's slots: a run's status call waited behind them),
// the run of a fatal auth error between the two. All at once, the tests that run an agent
// several times took most of the 30 s a test has, on a loaded machine.
describe('cortex-agent run and status', () => {
  it.concurrent('status --json works while run is running; SIGTERM closes with final_seq and exits 0', async () => {
    const server = await FakeServer.start();
    const { dir, hostId } = enrolled(server);
    server.config = { ...server.config, log_sources: [{ kind: 'file', path: join(dir, 'app.log') }] };
    const hello = server.next('hello');
    const { child, stderr, exited } = startRun(dir, ['--log-level', 'debug']);
    await hello;
    // the agent writes status.json at once on becoming Active: read here (a status child costs
    // ~0.3 s of CPU a poll), then status (text and --json) says it
    await until('status.json says Active', () => readStatusFile(dir)?.state === 'Active', 20_000);
    const [r, text] = await Promise.all([runCli(['status', '--state-dir', dir, '--json']), runCli(['status', '--state-dir', dir])]);
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({ state: 'Active', running: true, host_id: hostId, next_seq: 1, acked_seq: 0, queue_depth: 0, buffer_bytes: 0, last_error: null });
    expect(Array.isArray(status.sources)).toBe(true);
    expect(text.stdout).toMatch(/state:\s+Active/);
    noSecrets(text);
    const session = server.current!;
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(await session.closed).toEqual({ code: 1000, reason: 'final_seq=0' });
    expect(stderr()).not.toContain(TOKEN);
    const [afterJson, afterText] = await Promise.all([runCli(['status', '--state-dir', dir, '--json']), runCli(['status', '--state-dir', dir])]);
    const after = JSON.parse(afterJson.stdout) as Record<string, unknown>;
    expect(after).toMatchObject({ state: 'Disconnected', running: false });
    // stopped: what it will read once started, from the config last in force (F9)
    expect(after.stored_config_sources).toEqual(server.config.log_sources);
    expect(afterText.stdout).toContain(`config:       1 log source in config.json (read as soon as the agent starts, before any server answers): file ${join(dir, 'app.log')}`);
    expect(readFileSync(join(dir, 'status.json'), 'utf8')).not.toContain(TOKEN);
    // Positions stored for sources no longer configured are listed by their kind, as not read.
    const buffer = DurableBuffer.open(join(dir, 'buffer.db'));
    buffer.setSourcePosition({ source: 'file:/var/log/old.log', position: { offset: 10 } });
    buffer.setSourcePosition({ source: 'custom:tool', position: { line: 3 } });
    buffer.close();
    const [listedJson, listedText] = await Promise.all([runCli(['status', '--state-dir', dir, '--json']), runCli(['status', '--state-dir', dir])]);
    const listed = JSON.parse(listedJson.stdout) as { sources: Record<string, unknown>[] };
    expect(listed.sources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'file', path: '/var/log/old.log', position: { offset: 10 } }),
        expect.objectContaining({ kind: 'custom', name: 'tool', position: { line: 3 } }),
      ]),
    );
    expect(listedText.stdout).toMatch(/file \/var\/log\/old\.log: not being read \(stored position\)/);
    await server.close();
  });

  it.concurrent('a key of agent.json the agent does not read is named by run (once, at start) and by status; a hard cap under 1 MiB is said, not refused (I22)', async () => {
    const server = await FakeServer.start();
    const { dir } = enrolled(server);
    const path = join(dir, 'agent.json');
    writeFileSync(
      path,
      JSON.stringify({ ...(JSON.parse(readFileSync(path, 'utf8')) as object), log_sources: [{ kind: 'file', path: '/var/log/syslog' }], buffer_hard_cap: 1, buffer_soft_cap_bytes: 512, buffer_hard_cap_bytes: 1024 }),
    );
    const said =
      'agent.json has keys this agent does not read: "log_sources", "buffer_hard_cap" (kept, ignored; it reads server_url, server_urls, allow_insecure, ca_file, buffer_soft_cap_bytes, buffer_hard_cap_bytes, probe_file_tail_paths, custom_commands, custom_socket_paths, proxy; log sources, filters and intervals come from the server: cortex-server agent config HOST_ID --set …)';
    const [status, statusJson] = await Promise.all([runCli(['status', '--state-dir', dir]), runCli(['status', '--state-dir', dir, '--json'])]);
    expect(status.stdout).toContain(`note:         ${said}`);
    expect(JSON.parse(statusJson.stdout)).toMatchObject({ agent_json_unknown_keys: ['log_sources', 'buffer_hard_cap'] });
    const hello = server.next('hello');
    const { child, stderr, exited } = startRun(dir);
    await hello;
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const warned = stderr().split('\n').filter((l) => l.includes('does not read')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(warned).toEqual([expect.objectContaining({ level: 'warn', unknown_keys: ['log_sources', 'buffer_hard_cap'], msg: said })]);
    const small = stderr().split('\n').filter((l) => l.includes('under 1 MiB')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(small).toEqual([
      expect.objectContaining({
        level: 'warn',
        buffer_hard_cap_bytes: 1024,
        msg: 'agent.json: buffer_hard_cap_bytes is 1024 bytes, under 1 MiB: the buffer keeps at most that much and drops the oldest entries beyond it (the caps are sizes in bytes: 512 MiB is 536870912)',
      }),
    ]);
    // a folder with only the keys it reads: no note
    writeFileSync(path, JSON.stringify({ server_url: server.url, allow_insecure: true }));
    expect((await runCli(['status', '--state-dir', dir])).stdout).not.toContain('does not read');
    await server.close();
  });

  it.concurrent("a custom source runs a command or listens at a socket only when the host's agent.json allows it (H37)", async () => {
    const server = await FakeServer.start();
    const { dir } = enrolled(server);
    const marker = join(dir, 'ran');
    const socket = join(dir, 'app.sock');
    const command = [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'); console.log('from the custom command')`];
    server.config = { ...server.config, log_sources: [{ kind: 'custom', path: 'gen', command }, { kind: 'custom', path: 'app', socket }] };
    const custom = (all: readonly object[] | undefined) => (all ?? []).map((x) => x as Record<string, unknown>).filter((x) => x['kind'] === 'custom');
    /**
     * Runs the agent until `done` holds for the custom sources of its status.json (read here: a
     * status child costs ~0.3 s of CPU a poll), then the custom sources that `status --json`
     * shows (`shown`: none asked when `done` looks at files only).
     */
    const runUntil = async (done: (sources: Record<string, unknown>[]) => boolean, shown = true): Promise<{ sources: Record<string, unknown>[]; stderr: string }> => {
      const hello = server.next('hello');
      const { child, stderr, exited } = startRun(dir);
      let sources: Record<string, unknown>[] = [];
      try {
        await hello;
        await until('the custom sources as awaited', () => done(custom(readStatusFile(dir)?.sources)), 20_000);
        if (shown) sources = custom((JSON.parse((await runCli(['status', '--state-dir', dir, '--json'])).stdout) as { sources?: Record<string, unknown>[] }).sources);
      } finally {
        child.kill('SIGTERM'); // also when the test fails: no agent left running
      }
      expect(await exited).toBe(0);
      return { sources, stderr: stderr() };
    };
    // agent.json without the keys: the server's config runs nothing and listens nowhere
    const refused = await runUntil((sources) => sources.length === 2 && sources.every((x) => typeof x['last_error'] === 'string'));
    expect(refused.sources.map((x) => x['last_error'])).toEqual([
      expect.stringMatching(/^cannot start: the command \[.*\] is not allowed on this host: a custom source runs only what the host's agent\.json lists in "custom_commands" \(add ".*" for this program with any arguments/),
      expect.stringMatching(/^cannot start: the socket .*app\.sock is not allowed on this host: .*"custom_socket_paths"/),
    ]);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(socket)).toBe(false);
    const warned = refused.stderr.split('\n').filter((l) => l.includes('log source not started')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(warned).toEqual([expect.objectContaining({ level: 'warn', kind: 'custom', path: 'gen' }), expect.objectContaining({ level: 'warn', kind: 'custom', path: 'app' })]);
    // the host allows the program (any arguments) and the folder: both start
    const path = join(dir, 'agent.json');
    writeFileSync(path, JSON.stringify({ ...(JSON.parse(readFileSync(path, 'utf8')) as object), custom_commands: [process.execPath], custom_socket_paths: [dir] }));
    const allowed = await runUntil(() => existsSync(marker) && existsSync(socket), false);
    expect(existsSync(marker)).toBe(true);
    expect(allowed.stderr).not.toContain('log source not started');
    // an exact command allows that command only
    writeFileSync(path, JSON.stringify({ ...(JSON.parse(readFileSync(path, 'utf8')) as object), custom_commands: [[process.execPath, '-e', 'other']], custom_socket_paths: [] }));
    rmSync(marker);
    const exact = await runUntil((sources) => sources.length === 2 && sources.every((x) => typeof x['last_error'] === 'string'));
    expect(exact.sources.every((x) => String(x['last_error']).includes('is not allowed on this host'))).toBe(true);
    expect(existsSync(marker)).toBe(false);
    await server.close();
  });

  // not concurrent: it ends the first group (agent runs), the second (CLI calls) starts after it
  it('run exits 1 with a clear message on a fatal auth error', async () => {
    const server = await FakeServer.start();
    const { dir } = enrolled(server);
    server.hello = () => {
      throw rpcError(ErrorCode.AuthFailed, 'AuthFailed');
    };
    const r = await runCli(['run', '--state-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/-32001/);
    noSecrets(r);
    const st = JSON.parse((await runCli(['status', '--state-dir', dir, '--json'])).stdout) as Record<string, unknown>;
    expect(st.state).toBe('FatalAuth');
    expect(String(st.last_error)).toMatch(/-32001/);
    await server.close();
  });

  it.concurrent("status names the state dir's free disk space, and says when the running agent's status.json is old", async () => {
    const server = await FakeServer.start();
    const { dir } = enrolled(server);
    await server.close();
    // A running agent (this process stands in for it) whose last write was 5 minutes ago:
    // on a full disk it could not write status.json at all.
    const old = new Date(Date.now() - 300_000).toISOString();
    // last_error may carry a server's text (a -32007 reason): printed escaped, never as control characters.
    writeFileSync(join(dir, 'status.json'), JSON.stringify({ pid: process.pid, updated_at: old, state: 'Active', stopped: false, server_url: server.url, session_id: 's', host_id: 'h', last_error: 'the server could not store logs.push (-32007: \u001b]0;pwned\u0007)', sources_paused: false, sources: [], batch_entries: 1000, send_rate_cap: null, clock_offset_ms: -42_000 }));
    // outside the pool: a wait for a slot would add to the age said (29x or 30x s)
    const [json, text] = await Promise.all([runCli(['status', '--state-dir', dir, '--json'], true), runCli(['status', '--state-dir', dir], true)]);
    expect(json.code).toBe(0);
    const st = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(st).toMatchObject({ running: true, state: 'Active', clock_offset_ms: -42_000 });
    expect(text.stdout).toMatch(/^clock: +42 s ahead of the server's at the last hello: set this host's clock right \(timedatectl status\)$/m);
    expect(st.status_age_secs).toBeGreaterThanOrEqual(299);
    const fs = statfsSync(dir);
    expect(st.disk_total_bytes).toBe(fs.blocks * fs.bsize);
    expect(st.disk_free_bytes).toBeGreaterThan(0);
    expect(st.disk_low_water_bytes).toBeGreaterThanOrEqual(1024 * 1024);
    expect(text.stdout).toMatch(/^disk: +\d+\.\d MiB free of \d+\.\d MiB on the state dir's filesystem \(sources pause below \d+\.\d MiB\)$/m);
    expect(text.stdout).toMatch(/^note: +the agent last wrote status\.json (29\d|30\d) s ago .*what it says may be old/m);
    expect(text.stdout).toContain('last_error:   the server could not store logs.push (-32007: \\x1b]0;pwned\\x07)');
    expect(text.stdout).not.toContain('\u001b');
    // A fresh status.json: no note.
    writeFileSync(join(dir, 'status.json'), JSON.stringify({ pid: process.pid, updated_at: new Date().toISOString(), state: 'Active', stopped: false, server_url: server.url, session_id: 's', host_id: 'h', last_error: null, sources_paused: false, sources: [], batch_entries: 1000, send_rate_cap: null }));
    expect((await runCli(['status', '--state-dir', dir], true)).stdout).not.toMatch(/^note:/m);
  });

  it.concurrent('a damaged status.json: status says so and what it cannot show, exit 0 (was E_INTERNAL for sources that are not a list); a running agent is told by run.lock (H32)', async () => {
    const server = await FakeServer.start();
    const { dir } = enrolled(server);
    const path = join(dir, 'status.json');
    const good = { pid: process.pid, updated_at: new Date().toISOString(), state: 'Active', stopped: false, server_url: server.url, session_id: 's', host_id: 'h', last_error: null, sources_paused: false, sources: [], batch_entries: 1000, send_rate_cap: null };
    const cases = [
      ['{"state":', /not valid JSON \(.+\)/],
      ['[1,2]', /not a JSON object/],
      [JSON.stringify({ ...good, sources: 5 }), /sources is not a list of sources/],
      [JSON.stringify({ ...good, sources: [{ kind: 5 }] }), /sources is not a list of sources/],
      [JSON.stringify({ ...good, state: 'Bogus' }), /state is not an agent state/],
      [JSON.stringify({ ...good, pid: 'x' }), /pid is not a process id/],
    ] as const;
    // each damaged status.json in its own copy of the enrolled folder, the twelve calls side by side
    const copies = cases.map(([text]) => copyWith(dir, 'status.json', text));
    const results = await Promise.all(copies.map((copy) => Promise.all([runCli(['status', '--state-dir', copy]), runCli(['status', '--state-dir', copy, '--json'])])));
    for (const [i, [, problem]] of cases.entries()) {
      const [r, json] = results[i]!;
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^state: +Disconnected \(not running\)$/m);
      expect(r.stdout).toContain(`note:         ${join(copies[i]!, 'status.json')} is damaged (`);
      expect(r.stdout).toMatch(problem);
      expect(r.stdout).toContain("the agent's state, server, sources and last error are not shown; the agent rewrites it when it next runs");
      expect(JSON.parse(json.stdout)).toMatchObject({ running: false, status_file_problem: expect.stringMatching(problem) });
    }
    // the enrolled folder itself, damaged as the last case left it
    writeFileSync(path, cases[cases.length - 1]![0]);
    // an agent that holds run.lock runs, whatever status.json says
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(join(dir, 'run.lock'), JSON.stringify({ pid: other.pid, host: (await import('node:os')).hostname() }));
      const [r, text] = await Promise.all([runCli(['status', '--state-dir', dir, '--json']), runCli(['status', '--state-dir', dir])]);
      expect(JSON.parse(r.stdout)).toMatchObject({ running: true, pid: other.pid, status_file_problem: expect.any(String) });
      expect(text.stdout).toContain('the running agent rewrites it within');
    } finally {
      other.kill();
    }
    writeFileSync(path, JSON.stringify(good));
    expect(JSON.parse((await runCli(['status', '--state-dir', dir, '--json'])).stdout)).toMatchObject({ status_file_problem: null, state: 'Active' });
    await server.close();
  });

  it.concurrent('run on a damaged agent.json exits 1 naming the file, what is wrong and what to do (was E_INTERNAL "a bug")', async () => {
    const server = await FakeServer.start();
    const { dir: enrolledDir } = enrolled(server);
    const cases = [
      ['{"server_url": ', /is not valid JSON \(.+\)/],
      ['{"server_url": 5}', /agent\.json: server_url must be a string/],
      // caps that could not work: said with the file's key, not as the buffer's RangeError (I22)
      [
        `{"server_url": "${server.url}", "buffer_soft_cap_bytes": 2147483648}`,
        /agent\.json: buffer_soft_cap_bytes \(2147483648\) must not exceed buffer_hard_cap_bytes \(536870912, the default\)/,
      ],
      // a hard cap under the default soft cap, without a soft cap: the unit mistake (1024 meant as MiB) is caught here
      [`{"server_url": "${server.url}", "buffer_hard_cap_bytes": 1024}`, /agent\.json: buffer_soft_cap_bytes \(268435456, the default\) must not exceed buffer_hard_cap_bytes \(1024\)/],
    ] as const;
    // each case on its own copy of the enrolled folder, the runs side by side
    const dirs = cases.map(([text]) => copyWith(enrolledDir, 'agent.json', text));
    const results = await Promise.all(dirs.map((dir) => runCli(['run', '--state-dir', dir])));
    for (const [i, [, problem]] of cases.entries()) {
      const [dir, r] = [dirs[i]!, results[i]!];
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error[E_AGENT_START]: ${join(dir, 'agent.json')}`);
      expect(r.stderr).toMatch(problem);
      expect(r.stderr).toContain('mend the file, or enroll again ("cortex-agent enroll" writes it)');
    }
    await server.close();
  });

  it.concurrent('a --state-dir that names a file: status, run, buffer check and enroll say so (E_FILE_ACCESS), not "no permission" or E_ENROLL', async () => {
    const file = join(tempDir(), 'not-a-folder');
    writeFileSync(file, 'x');
    const isFile = `cortex-agent: error[E_FILE_ACCESS]: ${file} is a file, not a folder: give --state-dir the agent's state folder`;
    const tokenFile = join(tempDir(), 'token');
    writeFileSync(tokenFile, TOKEN);
    const host = randomUUID();
    const commands = [['status'], ['run', '--allow-insecure'], ['buffer', 'check']];
    // all five side by side: none writes anything
    const [enrolled, below, ...results] = await Promise.all([
      runCli(['enroll', '--server', 'ws://127.0.0.1:1/ws/agent', '--token-file', tokenFile, '--host-id', host, '--state-dir', file, '--allow-insecure']),
      runCli(['enroll', '--server', 'ws://127.0.0.1:1/ws/agent', '--token-file', tokenFile, '--host-id', host, '--state-dir', join(file, 'sub'), '--allow-insecure']),
      ...commands.map((args) => runCli([...args, '--state-dir', file])),
    ]);
    for (const [i, args] of commands.entries()) {
      const r = results[i]!;
      expect([args[0], r.code]).toEqual([args[0], 1]);
      expect(r.stderr).toContain(isFile);
    }
    expect(enrolled!.code).toBe(1);
    expect(enrolled!.stderr).toContain(isFile);
    expect(enrolled!.stderr).toContain('(the token was not sent and is still good)');
    expect(below!.stderr).toContain(`cortex-agent: error[E_FILE_ACCESS]: a part of the path ${join(file, 'sub')} is a file, not a folder`);
  });

});
