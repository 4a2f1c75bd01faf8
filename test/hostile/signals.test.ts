// SIGHUP, SIGUSR1 and a stderr that cannot be written (DECISIONS I21, H28, H29), with the real programs:
// the agent's CLI bundled from source against a FakeServer, the compiled server CLI.
//   - `kill -HUP` ended the agent (Node's default for SIGHUP), and systemd does not restart a
//     service a SIGHUP ended: it now reads agent.json again, says what it found, and ships on;
//   - the terminal closing (a hang-up) stops the agent and the server as SIGTERM does, and they
//     end by SIGHUP as before — not by an abort in Node's exit on the hung-up terminal;
//   - a log line that cannot be written to stderr (a full disk) ended the process: it goes on;
//   - SIGUSR1 opened Node's inspector on 127.0.0.1:9229, without authentication: refused now.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cliAgent, storedMessages } from '../agent/helpers/cli-agent.js';
import { tempDir } from '../agent/helpers/agent-harness.js';
import { SERVER_CLI, cleanupTempDirs, requireDist, startServer, tempDir as faultsTempDir, until } from '../support/procs.js';

const agent = cliAgent();
afterAll(cleanupTempDirs);

const started: ChildProcess[] = [];
/** Files naming the shell and the command each onTerminal started (they outlive script(1) by design). */
const pidFiles: string[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  // a program that did not end on the hang-up (the test failed) must not outlive the test
  for (const f of pidFiles.splice(0)) {
    for (const pid of read(f).split(/\s+/).filter((x) => /^\d+$/.test(x))) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
});

/**
 * Runs `command` (argv) on a pseudo-terminal (util-linux script), stderr to `err`, from a shell
 * that does what an interactive shell does when its terminal hangs up — the kernel signals the
 * session leader, and the shell passes SIGHUP on to its jobs — and then writes the command's
 * exit status to `status`: the shell outlives the hang-up and tells how the command ended
 * (129: SIGHUP; 134 or 139: Node aborted or crashed in its exit).
 */
function onTerminal(command: string[], err: string, status: string): ChildProcess {
  const dir = tempDir();
  const script = join(dir, 'run.sh');
  const quoted = command.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const pids = join(dir, 'pids');
  pidFiles.push(pids);
  writeFileSync(script, [`trap 'kill -HUP $pid' HUP`, `${quoted} 2>'${err}' &`, 'pid=$!', `echo "$$ $pid" > '${pids}'`, 'wait $pid', 'wait $pid', `echo "status=$?" > '${status}'`, ''].join('\n'));
  const child = spawn('script', ['-qec', `sh ${script}`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout!.resume();
  started.push(child);
  return child;
}

/** Closes the terminal: script(1) holds its only master side; killing it hangs the terminal up. */
async function hangUp(terminal: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => terminal.on('exit', resolve));
  terminal.kill('SIGKILL');
  await gone;
}

const read = (path: string): string => (existsSync(path) ? readFileSync(path, 'utf8') : '');

describe('the agent and SIGHUP', () => {
  it('kill -HUP reads agent.json again and says what changed; the agent ships on (SIGHUP ended it)', async () => {
    const { server, dir, log } = await agent.setUp('one\ntwo\n');
    const run = agent.run(dir);
    await until('two lines stored', () => storedMessages(server).length === 2);
    const sighup = () => run.child.kill('SIGHUP');

    sighup();
    await until('the unchanged line', () => run.stderr().includes('SIGHUP: agent.json unchanged, nothing to reload'));

    const settingsFile = join(dir, 'agent.json');
    const settings = readFileSync(settingsFile, 'utf8');
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(settings), probe_file_tail_paths: ['/srv/log'] }));
    sighup();
    await until('the changed line', () => run.stderr().includes('agent.json read again (SIGHUP): probe_file_tail_paths changed, which take effect at the next start'));
    writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(settings), probe_file_tail_paths: ['/srv/log'], log_sources: [] }));
    sighup();
    await until('the unknown key named', () => run.stderr().includes('agent.json has a key this agent does not read: \\"log_sources\\" (kept, ignored;'));

    writeFileSync(settingsFile, '{ not json');
    sighup();
    await until('the refused line', () => run.stderr().includes('agent.json read again (SIGHUP) and refused; the agent goes on with the settings it started with'));
    writeFileSync(settingsFile, settings);

    appendFileSync(log, 'three\n');
    await until('the third line stored', () => storedMessages(server).length === 3);
    expect(storedMessages(server)).toEqual(['one', 'two', 'three']);
    expect(run.child.exitCode).toBeNull();

    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 30_000);

  it('a terminal that hangs up stops the agent as SIGTERM does, and it ends by SIGHUP, not by an abort', async () => {
    const { server, dir } = await agent.setUp('one\n');
    const work = tempDir();
    const err = join(work, 'agent.err');
    const status = join(work, 'status');
    const terminal = onTerminal([process.execPath, agent.path(), 'run', '--state-dir', dir, '--source-poll-ms', '50'], err, status);
    await until('the line stored', () => storedMessages(server).length === 1, 15_000);
    const session = server.current!;

    await hangUp(terminal);
    await until('the agent ended', () => read(status) !== '', 15_000);
    expect(read(status).trim()).toBe('status=129'); // 128 + SIGHUP; Node's own exit on the hung-up terminal aborted or crashed (134, 139)
    const text = read(err);
    expect(text).toContain('"msg":"the terminal went away: stopping"');
    expect(text).toContain('"msg":"agent stopped"');
    expect((await session.closed).reason).toMatch(/^final_seq=1$/); // a clean close, with its final seq
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
  }, 40_000);

  it('stderr on a full disk (/dev/full): the agent runs, ships and stops as usual (its first log line ended it)', async () => {
    const { server, dir, log } = await agent.setUp('one\n');
    const full = openSync('/dev/full', 'w');
    const run = agent.run(dir, { stderrFd: full });
    closeSync(full);
    await until('the line stored', () => storedMessages(server).length === 1);
    run.child.kill('SIGHUP'); // one more line it cannot write
    appendFileSync(log, 'two\n');
    await until('the second line stored', () => storedMessages(server).length === 2);
    expect(run.child.exitCode).toBeNull();
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 30_000);
});

describe('the server and a terminal that hangs up', () => {
  it('serve stops as for SIGTERM (draining) and ends by SIGHUP, not by an abort', async () => {
    requireDist();
    const work = faultsTempDir();
    const err = join(work, 'serve.err');
    const status = join(work, 'status');
    const terminal = onTerminal([process.execPath, SERVER_CLI, 'serve', '--listen', '127.0.0.1:0', '--db', join(work, 'cortex.db')], err, status);
    await until('listening', () => read(err).includes('"msg":"listening"'), 20_000);

    await hangUp(terminal);
    await until('the server ended', () => read(status) !== '', 20_000);
    expect(read(status).trim()).toBe('status=129');
    const text = read(err);
    expect(text).toContain('"msg":"the terminal went away: stopping"');
    expect(text).toContain('"msg":"stopping: draining sessions"');
  }, 45_000);
});

/** Whether something answers HTTP on 127.0.0.1:9229, the inspector's port (its /json/list gives the debugger's address to anyone). */
function inspectorAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: 9229, path: '/json/list', timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

describe('SIGUSR1 does not open the Node.js inspector', () => {
  it('cortex-agent run says it ignored the signal; no debugger listens', async () => {
    const { server, dir } = await agent.setUp('one\n');
    const run = agent.run(dir);
    await until('the line stored', () => storedMessages(server).length === 1);
    const before = await inspectorAnswers(); // another program's inspector would make the port check meaningless
    run.child.kill('SIGUSR1');
    await until('the ignored line', () => run.stderr().includes('SIGUSR1 ignored: cortex-agent does not open the Node.js inspector on a signal'));
    expect(run.stderr()).not.toContain('Debugger listening');
    if (!before) expect(await inspectorAnswers()).toBe(false);
    expect(run.child.exitCode).toBeNull();
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 30_000);

  it('cortex-server serve says it ignored the signal; no debugger listens', async () => {
    requireDist();
    const srv = await startServer(join(faultsTempDir(), 'cortex.db'));
    started.push(srv.child);
    const before = await inspectorAnswers();
    srv.child.kill('SIGUSR1');
    await until('the ignored line', () => srv.stderr().includes('SIGUSR1 ignored: cortex-server does not open the Node.js inspector on a signal'));
    expect(srv.stderr()).not.toContain('Debugger listening');
    if (!before) expect(await inspectorAnswers()).toBe(false);
    srv.child.kill('SIGTERM');
    expect(await srv.exited).toBe(0);
  }, 30_000);
});
