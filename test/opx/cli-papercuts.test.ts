// Operator papercuts of both command lines, each reproduced with the compiled CLIs:
//  1. `--json` and an error: the error as one JSON object on stdout (code, message, hint), not
//     an empty stdout;
//  2. printed commands quote their values for a POSIX shell, and /bin/sh runs them as printed;
//  3. the printed enroll commands keep the one-time token off the command line (`--token -`),
//     and the admin API gives that form in a field of its own;
//  4. `cortex-agent enroll` as root into a state folder another user owns writes that user's files;
//  5. `cortex-agent status` on another program's SQLite file at buffer.db says what it is.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { shellQuote } from '../../common/shell-quote.js';
import { OPENAPI } from '../../server/admin/schemas.js';
import { undocumented } from '../admin/openapi-check.js';
import { requireServerCli, serve, type ServeProcess } from '../server/spawn.js';
import { AGENT_CLI, ROOT, issue, server, tmp } from './helpers.js';

/** A folder name no shell takes as one word unquoted: a space and a single quote. */
const AWKWARD = "my dir's";

function agent(args: string[], options: { cwd?: string; input?: string; uid?: number; gid?: number } = {}) {
  const r = spawnSync(process.execPath, [AGENT_CLI, ...args], { cwd: options.cwd ?? ROOT, encoding: 'utf8', input: options.input ?? '', timeout: 30_000, uid: options.uid, gid: options.gid });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs a printed command line with /bin/sh (dash here): `npm run server|agent -- …` as the
 * compiled CLI (what npm runs), and a leading `cortex-agent` / `args` by the same shim.
 */
function sh(line: string, options: { cwd?: string; input?: string } = {}) {
  const prelude = 'npm() { prog=$2; shift 3; "$CORTEX_NODE" "$CORTEX_ROOT/dist/$prog/cli.js" "$@"; }\nargs() { printf \'%s\\0\' "$@"; }\n';
  const r = spawnSync('/bin/sh', ['-c', prelude + line], {
    cwd: options.cwd ?? ROOT,
    encoding: 'utf8',
    input: options.input ?? '',
    timeout: 30_000,
    env: { ...process.env, CORTEX_NODE: process.execPath, CORTEX_ROOT: ROOT },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The words /bin/sh makes of `command` (its program word replaced by `args`, which prints them). */
function shellWords(command: string): string[] {
  const r = sh(command.replace(/^\S+ /, 'args '));
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.split('\0').slice(0, -1);
}

/** stdout holds exactly one JSON value: the error object, with the code, a message without usage text, and a hint. */
function jsonError(stdout: string): { code: string; message: string; hint: string | null } {
  const lines = stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  const v = JSON.parse(lines[0]!) as { error: { code: string; message: string; hint: string | null } };
  expect(Object.keys(v)).toEqual(['error']);
  expect(Object.keys(v.error).sort()).toEqual(['code', 'hint', 'message']);
  expect(v.error.message).not.toMatch(/Usage:/);
  return v.error;
}

let s: ServeProcess | undefined;
let db: string;
const adminToken = 'papercuts-admin-token-0123456789abcdef';
let adminTokenFile: string;

beforeAll(async () => {
  requireServerCli();
  // The database in a folder whose name has a space and a quote (papercut 2).
  const home = join(tmp(), AWKWARD);
  mkdirSync(home);
  db = join(home, 'cortex.db');
  adminTokenFile = join(tmp(), 'admin-token');
  writeFileSync(adminTokenFile, `${adminToken}\n`, { mode: 0o600 });
  issue(db, 'first'); // creates the database
  s = await serve(['--db', db, '--shutdown-drain-secs', '0', '--admin-token-file', adminTokenFile]);
}, 120_000);

afterAll(async () => {
  if (s !== undefined && s.child.exitCode === null) {
    s.child.kill('SIGTERM');
    await s.exited;
  }
});

describe('1. --json: an error is one JSON object on stdout, as well as the line on stderr', () => {
  it('cortex-server: an error of the database, a usage error and an admin API error, each with its code and exit status', () => {
    const missing = join(tmp(), 'none', 'cortex.db');
    const human = server(['agent', 'list', '--db', missing]);
    expect(human.code).toBe(2);
    expect(human.stdout).toBe('');
    const r = server(['agent', 'list', '--json', '--db', missing]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^cortex-server: error\[E_DB_OPEN\]: no database at --db /);
    const e = jsonError(r.stdout);
    expect(e.code).toBe('E_DB_OPEN');
    expect(e.message).toContain(missing);
    expect(e.hint).toContain('--db');

    const usage = server(['agent', 'list', '--json', '--frobnicate']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Usage:'); // the human line keeps the usage text
    expect(jsonError(usage.stdout)).toMatchObject({ code: 'E_USAGE', message: 'unknown option --frobnicate' });

    // an admin API answer (401: wrong token) — E_ADMIN_API, its exit status
    const tokenFile = join(tmp(), 'wrong-token');
    writeFileSync(tokenFile, 'not-the-admin-token-0123456789abcdef\n', { mode: 0o600 });
    const api = server(['agent', 'list', '--json', '--server', `http://127.0.0.1:${s!.port}`, '--admin-token-file', tokenFile]);
    expect(api.code).not.toBe(0);
    expect(jsonError(api.stdout).code).toBe('E_ADMIN_API');
  });

  it('cortex-agent: status, enroll and a usage error; the token never in it', () => {
    const dir = join(tmp(), 'no-state');
    const r = agent(['status', '--state-dir', dir, '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error\[E_NOT_ENROLLED\]/);
    expect(jsonError(r.stdout)).toMatchObject({ code: 'E_NOT_ENROLLED', hint: `cortex-agent enroll --state-dir ${dir}` });
    expect(agent(['status', '--state-dir', dir]).stdout).toBe('');

    const token = 'A'.repeat(43);
    const enroll = agent(['enroll', '--json', '--server', 'ws://127.0.0.1:1/ws/agent', '--token', '-', '--host-id', '5f0c0000-0000-4000-8000-000000000001', '--state-dir', join(tmp(), 'st'), '--allow-insecure'], { input: `${token}\n` });
    expect(enroll.code).toBe(1);
    const e = jsonError(enroll.stdout);
    expect(e.code).toBe('E_CONNECT');
    expect(e.message).toContain('the token was not sent and is still good');
    expect(enroll.stdout + enroll.stderr).not.toContain(token);

    const usage = agent(['status', '--json', '--frobnicate']);
    expect(usage.code).toBe(2);
    expect(jsonError(usage.stdout)).toMatchObject({ code: 'E_USAGE', message: 'unknown option --frobnicate' });
  });
});

describe('2 and 3. printed commands: quoted for the shell, the token not in them', () => {
  it('shellQuote: any string (no NUL) comes back from /bin/sh as the one word it was', () => {
    const words = fc.sample(fc.string({ unit: 'binary', maxLength: 24 }).filter((w) => !w.includes('\0')), { numRuns: 300, seed: 7 });
    words.push('', '~', '=x', "it's", 'a b', '$(id)', '`id`', '"', '\\', '\n', '*', '-', '--token', "'''");
    expect(shellWords(`args ${words.map(shellQuote).join(' ')}`)).toEqual(words);
    // plain words stay as they are (the commands stay readable)
    expect(shellQuote('ws://127.0.0.1:3100/ws/agent')).toBe('ws://127.0.0.1:3100/ws/agent');
    expect(shellQuote("/var/lib/my dir's")).toBe("'/var/lib/my dir'\\''s'");
  });

  it("serve's banner, agent issue and enroll print commands /bin/sh runs as printed, with a path holding a space and a quote; no token on a command line", () => {
    const banner = s!.stdout();
    // step 1: agent issue on this database, run by /bin/sh as printed
    const issueLine = /^ {2}1\. (.*)$/m.exec(banner)?.[1] as string;
    expect(issueLine).toContain(`--db ${shellQuote(db)}`);
    const enrollStep = /^ {2}2\. (.*)$/m.exec(banner)?.[1] as string;
    expect(enrollStep).toContain(' --token - ');
    expect(banner).not.toContain('--token TOKEN');
    const issued = sh(issueLine.replace('--host HOSTNAME', '--host web-quoted'));
    expect(issued.code, issued.stderr).toBe(0);
    const token = /^token: +(\S+)$/m.exec(issued.stdout)?.[1] as string;
    const hostId = /^host_id: +(\S+)$/m.exec(issued.stdout)?.[1] as string;
    expect(hostId).toMatch(/^[0-9a-f-]{36}$/);
    // the token is the result (its own line), in no command and not on stderr
    expect(issued.stdout.split('\n').filter((l) => l.includes(token))).toEqual([`token:    ${token}`]);
    expect(issued.stderr).not.toContain(token);
    expect(issued.stderr).toContain('enroll asks for it');
    const enrollLine = issued.stdout.split('\n').find((l) => l.includes('npm run agent -- enroll'))!.trim();
    expect(enrollLine).toBe(`npm run agent -- enroll --server ${s!.url} --token - --host-id ${hostId} --state-dir ./cortex-agent-state --allow-insecure`);

    // the enroll command, run by /bin/sh as printed in a folder with a space and a quote, the token on stdin
    const work = join(tmp(), AWKWARD);
    mkdirSync(work);
    const enrolled = sh(enrollLine, { cwd: work, input: `${token}\n` });
    expect(enrolled.code, enrolled.stderr).toBe(0);
    const stateDir = join(work, 'cortex-agent-state');
    expect(readdirSync(stateDir)).toContain('token');
    // what enroll prints next: the run command, quoted
    const runLine = /^start the agent with: (.*)$/m.exec(enrolled.stdout)?.[1] as string;
    expect(runLine).toBe(`cortex-agent run --state-dir ${shellQuote(stateDir)}`);
    expect(shellWords(runLine)).toEqual(['run', '--state-dir', stateDir]);
    // and its status's hints
    const none = join(work, 'other state');
    expect(shellWords(jsonError(agent(['status', '--state-dir', none, '--json']).stdout).hint!)).toEqual(['enroll', '--state-dir', none]);
  }, 120_000);

  it('the admin API: enroll_command_stdin without the token first, enroll_command kept; both quoted (a proxy prefix with a quote, ; and $(…))', async () => {
    const prefix = "/it's;$(id)";
    const res = await fetch(`http://127.0.0.1:${s!.port}/admin/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'logs.example.com', 'x-forwarded-prefix': prefix },
      body: JSON.stringify({ hostname: 'api-quoted' }),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Record<string, string>;
    expect(undocumented('/admin/agents', 'POST', 201, body)).toEqual([]);
    const url = `wss://logs.example.com${prefix}/ws/agent`;
    expect(body['server_url']).toBe(url);
    expect(Object.keys(body).indexOf('enroll_command_stdin')).toBeLessThan(Object.keys(body).indexOf('enroll_command'));
    expect(body['enroll_command_stdin']).not.toContain(body['token']);
    const args = (token: string) => ['enroll', '--server', url, '--host-id', body['host_id'], '--token', token, '--state-dir', '/var/lib/cortex-agent'];
    expect(shellWords(body['enroll_command_stdin']!)).toEqual(args('-'));
    expect(shellWords(body['enroll_command']!)).toEqual(args(body['token']!));
    const issued = (OPENAPI as { components: { schemas: { IssuedToken: { required: string[]; properties: Record<string, unknown> } } } }).components.schemas.IssuedToken;
    expect(issued.required).toEqual(expect.arrayContaining(['enroll_command', 'enroll_command_stdin']));
    expect(issued.properties['enroll_command_stdin']).toBeDefined();
  });
});

describe('4. cortex-agent enroll as root into a state folder another user owns', () => {
  const NOBODY = 65534;
  const rootOnly = process.getuid?.() === 0;

  /** A folder the user NOBODY may reach, and in it a state folder NOBODY owns (0700), as `install -d -o cortex-agent` makes it. */
  function ownedStateDir(): string {
    const parent = tmp();
    chmodSync(parent, 0o711);
    const dir = join(parent, 'state');
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, NOBODY, NOBODY);
    return dir;
  }

  /** A token file only root may read (a folder of mode 0700). */
  function rootTokenFile(token: string): string {
    const file = join(tmp(), 'enroll-token');
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    return file;
  }

  it("writes every file as the folder's owner (the token read as root first); the agent, run as that user, can use them", () => {
    if (!rootOnly) {
      console.warn('enroll as root: these tests run as root; not run');
      return;
    }
    const host = issue(db, 'svc-owned');
    const dir = ownedStateDir();
    const r = agent(['enroll', '--server', s!.url, '--token-file', rootTokenFile(host.token), '--host-id', host.host_id, '--state-dir', dir, '--allow-insecure']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`note: the state folder ${dir} belongs to nobody: enrolling as nobody`);
    const files = readdirSync(dir);
    expect(files).toEqual(expect.arrayContaining(['token', 'host_id', 'agent.json', 'buffer.db']));
    for (const f of files) expect([f, statSync(join(dir, f)).uid]).toEqual([f, NOBODY]);
    // status as that user finds nothing run could not start with
    const st = agent(['status', '--state-dir', dir, '--json'], { uid: NOBODY, gid: NOBODY });
    expect(st.code, st.stderr).toBe(0);
    expect((JSON.parse(st.stdout) as { start_problem: unknown; host_id: string }).start_problem).toBeNull();
  }, 60_000);

  it("refuses, before the token is sent, a folder whose agent files a command run as root left behind, saying to chown them", () => {
    if (!rootOnly) {
      console.warn('enroll as root: these tests run as root; not run');
      return;
    }
    const host = issue(db, 'svc-leftover');
    const dir = ownedStateDir();
    writeFileSync(join(dir, 'agent.json'), '{}', { mode: 0o600 }); // root's, as an earlier enroll as root left it
    const r = agent(['enroll', '--json', '--server', s!.url, '--token-file', rootTokenFile(host.token), '--host-id', host.host_id, '--state-dir', dir, '--allow-insecure']);
    expect(r.code).toBe(1);
    const e = jsonError(r.stdout);
    expect(e.code).toBe('E_FILE_ACCESS');
    expect(e.message).toContain('agent.json');
    expect(e.message).toContain('the token was not sent and is still good');
    expect(e.hint).toContain(`chown -R nobody: ${dir}`);
    expect(readdirSync(dir)).toEqual(['agent.json']);
    // the token still works: not spent
    const rows = JSON.parse(server(['agent', 'list', '--json', '--db', db]).stdout) as { host_id: string; connection_state: string }[];
    expect(rows.find((a) => a.host_id === host.host_id)?.connection_state).toBe('NeverConnected');
  }, 60_000);
});

describe("5. cortex-agent status on a buffer.db that is not the agent's", () => {
  it("another program's SQLite database: not a Cortex agent buffer, with its tables and what to do (was: E_BUFFER no such table: meta — unexpected storage error)", () => {
    const dir = tmp();
    const other = new Database(join(dir, 'buffer.db'));
    other.exec("CREATE TABLE invoices (id INTEGER); INSERT INTO invoices VALUES (1)");
    other.close();
    const r = agent(['status', '--state-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`error[E_BUFFER]: ${join(dir, 'buffer.db')} is not a Cortex agent buffer: it is a SQLite database of another program (tables: invoices)`);
    expect(r.stderr).toContain("check that --state-dir is the agent's state folder");
    expect(r.stderr).not.toMatch(/unexpected storage error|no such table/);
    const e = jsonError(agent(['status', '--state-dir', dir, '--json']).stdout);
    expect(e.code).toBe('E_BUFFER');
    expect(e.message).toContain('is not a Cortex agent buffer');
    // buffer check, which status used to send the operator to, says the same (and still DAMAGED: run moves it aside)
    const check = agent(['buffer', 'check', '--state-dir', dir]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('DAMAGED');
    expect(check.stdout).toContain('is not a Cortex agent buffer');
    expect(check.stdout).not.toContain('no such table');
  });

  it('a buffer.db with nothing in it: said as such', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'buffer.db'), '');
    const r = agent(['status', '--state-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('holds nothing (0 bytes): not a buffer yet');
    // in the words of buffer check (which said it otherwise)
    expect(r.stderr).toContain('"cortex-agent run" sets it up as a new buffer, and its seqs continue after what the server has');
    expect(agent(['buffer', 'check', '--state-dir', dir]).stderr).toContain(`${join(dir, 'buffer.db')} holds nothing (0 bytes): not a buffer yet; "cortex-agent run" sets it up`);
    expect(r.stderr).not.toMatch(/unexpected storage error/);
  });
});
