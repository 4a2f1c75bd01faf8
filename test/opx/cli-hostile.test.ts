// The admin CLI given what an operator gets wrong (DECISIONS I29): audit and agent
// tokens|withdraw|reset-seq open the database as every admin command does (never created) and
// refuse --server / CORTEX_SERVER, which they cannot use; a --server path the server is not
// under, an admin token with a line break inside or an empty token file, an --set-file that is a
// device, a FIFO or too large, and a probe's JSON-RPC error are each one clear error line in the
// documented form, with the exit status of its kind. The compiled CLI, as an operator runs it.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireServerCli } from '../server/spawn.js';
import { httpBase } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';
import { CLI, tmp, type Run } from './helpers.js';

const ADMIN = 'opx-hostile-admin-token-0123456789abcdef-XYZ';
const HOST = '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01';
let t: TestServer;
let base = '';
let tokenFile = '';
let dir = '';

beforeAll(async () => {
  requireServerCli();
  t = await startTestServer({ admin_token: ADMIN });
  base = httpBase(t);
  dir = tmp();
  tokenFile = join(dir, 'admin-token');
  writeFileSync(tokenFile, `${ADMIN}\n`, { mode: 0o600 }); // one final newline: trimmed
}, 120_000);
afterAll(async () => {
  await t?.close();
});

/**
 * The CLI in `cwd` (a folder of its own unless given), without the caller's CORTEX_* settings,
 * not blocking the server in this process; killed after 20 s (a command reading /dev/zero or a
 * FIFO for ever ends the test, not outlives it). The admin token is never printed.
 */
async function cli(args: string[], extra: Record<string, string | undefined> = {}, cwd = tmp()): Promise<Run> {
  const env: Record<string, string | undefined> = { ...process.env, CORTEX_SERVER: undefined, CORTEX_ADMIN_TOKEN: undefined, CORTEX_DB: undefined, ...extra };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const r = await new Promise<Run>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'], timeout: 20_000, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  expect(`${r.stdout}${r.stderr}`).not.toContain(ADMIN);
  return r;
}

const LOCAL_ONLY: string[][] = [['audit'], ['agent', 'tokens'], ['agent', 'withdraw', HOST], ['agent', 'reset-seq', HOST]];

describe('audit, agent tokens, agent withdraw, agent reset-seq', () => {
  it('never create a database: missing (default or --db), or not a database, is E_DB_OPEN exit 2 as for agent list', async () => {
    const notDb = join(dir, 'notes.txt');
    writeFileSync(notDb, 'this is not a database\n'.repeat(100));
    for (const args of LOCAL_ONLY) {
      const what = args.join(' ');
      const cwd = tmp();
      const byDefault = await cli(args, {}, cwd);
      expect(byDefault.code, `${what}: ${byDefault.stderr}`).toBe(2);
      expect(byDefault.stderr).toContain(`error[E_DB_OPEN]: no database at the default database ${join(cwd, 'data', 'cortex.db')}`);
      expect(byDefault.stderr).not.toContain('--server'); // they cannot use it
      expect(readdirSync(cwd), what).toEqual([]); // was ./data/cortex.db, "no audit entries", exit 0

      const missing = join(dir, `new-${args.length}-${args[args.length - 1]}`, 'x.db');
      const given = await cli([...args, '--db', missing]);
      expect(given.code, `${what}: ${given.stderr}`).toBe(2);
      expect(given.stderr).toContain(`error[E_DB_OPEN]: no database at --db ${missing}`);
      expect(existsSync(join(missing, '..')), what).toBe(false); // was created with its folder

      const bad = await cli([...args, '--db', notDb]);
      expect(bad.code, `${what}: ${bad.stderr}`).toBe(2); // was E_INTERNAL SQLITE_NOTADB, exit 1
      expect(bad.stderr).toContain(`error[E_DB_OPEN]: ${notDb} is not a cortex database`);
    }
    // and on the server's database they work as before
    const audit = await cli(['audit', '--json', '--db', t.dbPath]);
    expect(audit.code, audit.stderr).toBe(0);
    expect(Array.isArray(JSON.parse(audit.stdout))).toBe(true);
  }, 120_000); // many CLI runs (about 0.5 s each, more under load)

  it('refuse --server and CORTEX_SERVER (the admin API has no route for them) naming --db; --db still wins over CORTEX_SERVER', async () => {
    for (const args of LOCAL_ONLY) {
      const what = args.join(' ');
      const cwd = tmp();
      const viaEnv = await cli(args, { CORTEX_SERVER: base, CORTEX_ADMIN_TOKEN: ADMIN }, cwd);
      expect(viaEnv.code, `${what}: ${viaEnv.stderr}`).toBe(2);
      expect(viaEnv.stderr).toContain(`error[E_USAGE]: \`cortex-server ${what.replace(` ${HOST}`, '')}\` works on the database only (the admin API has no route for it), and CORTEX_SERVER is set; nothing was done — give --db PATH|URL`);
      expect(readdirSync(cwd), what).toEqual([]); // was a new ./data/cortex.db, used in the server's place
      const flag = await cli([...args, '--server', base, '--admin-token-file', tokenFile], {}, cwd);
      expect(flag.code, `${what}: ${flag.stderr}`).toBe(2);
      expect(flag.stderr).not.toContain('unknown option');
      expect(flag.stderr).toContain('works on the database only (the admin API has no route for it), and --server cannot be used; nothing was done — give --db PATH|URL');
      expect(readdirSync(cwd), what).toEqual([]);
    }
    const local = await cli(['agent', 'tokens', '--json', '--db', t.dbPath], { CORTEX_SERVER: base });
    expect(local.code, local.stderr).toBe(0);
    expect(Array.isArray(JSON.parse(local.stdout))).toBe(true);
  }, 120_000); // many CLI runs
});

it('a --server path the server is not under says so and how to give the path, not "HTTP 404: HTTP 404"', async () => {
  for (const args of [['agent', 'list'], ['probe', HOST, 'sys.uptime']]) {
    const r = await cli([...args, '--server', `${base}/cortex`, '--admin-token-file', tokenFile]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).not.toContain('HTTP 404: HTTP 404');
    expect(r.stderr).toContain(
      `error[E_ADMIN_API]: HTTP 404: ${base}/cortex answered HTTP 404 with a page that is not the Cortex admin API's (no such endpoint: ${args[0] === 'probe' ? 'POST' : 'GET'} /cortex/admin/agents`,
    );
    expect(r.stderr).toContain('): check --server; behind a reverse proxy, give the path it serves the server under');
    expect(r.stdout).toBe('');
  }
}, 60_000);

it('an admin token with a line break inside is E_TOKEN exit 2; an empty token file gets the admin token\'s own advice', async () => {
  const lines = join(dir, 'two-lines');
  writeFileSync(lines, `${ADMIN}\r\nsecond line\n`);
  const fromFile = await cli(['agent', 'list', '--server', base, '--admin-token-file', lines]);
  expect(fromFile.code, fromFile.stderr).toBe(2); // was E_INTERNAL ERR_INVALID_CHAR "this is a bug", exit 1
  expect(fromFile.stderr).toContain(`error[E_TOKEN]: --admin-token-file ${lines} holds a line break inside the admin token: an HTTP header cannot carry it — put the admin token serve was started with`);
  const fromEnv = await cli(['agent', 'list', '--server', base], { CORTEX_ADMIN_TOKEN: `${ADMIN}\nsecond line` });
  expect(fromEnv.code, fromEnv.stderr).toBe(2);
  expect(fromEnv.stderr).toContain('error[E_TOKEN]: CORTEX_ADMIN_TOKEN holds a line break inside the admin token');
  const probeFlag = await cli(['probe', HOST, 'sys.uptime', '--server', base, '--admin-token', `${ADMIN}\rx`]);
  expect(probeFlag.code, probeFlag.stderr).toBe(2);
  expect(probeFlag.stderr).toContain('error[E_TOKEN]: --admin-token holds a line break inside the admin token');
  for (const r of [fromFile, fromEnv, probeFlag]) expect(r.stderr).not.toMatch(/ERR_INVALID_CHAR|this is a bug/);

  // one final newline (file or environment) is not part of the token
  expect((await cli(['agent', 'list', '--server', base, '--admin-token-file', tokenFile])).code).toBe(0);
  expect((await cli(['agent', 'list', '--server', base], { CORTEX_ADMIN_TOKEN: `${ADMIN}\n` })).code).toBe(0);

  const empty = join(dir, 'empty-token');
  writeFileSync(empty, '\n');
  const none = await cli(['agent', 'list', '--server', base, '--admin-token-file', empty]);
  expect(none.code).toBe(2);
  expect(none.stderr).toContain(`error[E_TOKEN]: --admin-token-file ${empty} is empty — put the admin token serve was started with (serve --admin-token-file, or its config's admin_token) alone on one line`);
  expect(none.stderr).not.toContain('from cortex-server agent issue'); // the agent token's advice
}, 60_000);

it('agent config --set-file: a device, a FIFO, a folder or a file over 1 MiB is refused at once, exit 2; a config file works', async () => {
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]); // no writer: reading it would wait for ever
  const big = join(dir, 'big.json');
  writeFileSync(big, `{"x": "${'a'.repeat(1_048_576)}"}`);
  const remote = ['--server', base, '--admin-token-file', tokenFile];
  for (const [file, want] of [
    ['/dev/zero', `error[E_FILE_ACCESS]: --set-file /dev/zero is not a regular file (a device, a pipe or a socket)`], // aborted: std::bad_alloc, exit 134
    [fifo, `error[E_FILE_ACCESS]: --set-file ${fifo} is not a regular file`],
    [dir, `error[E_FILE_ACCESS]: --set-file ${dir} is a folder`],
    [big, `error[E_CONFIG]: --set-file ${big} holds 1048585 bytes: a config is at most 1048576 bytes (1 MiB, what the admin API takes)`],
  ] as const) {
    for (const where of [remote, ['--db', t.dbPath]]) {
      const r = await cli(['agent', 'config', HOST, '--set-file', file, ...where]);
      expect(r.code, `${file}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(want);
    }
  }
  const h = await t.issue('config-file');
  const cfg = join(dir, 'web.json');
  writeFileSync(cfg, JSON.stringify({ heartbeat_interval_secs: 45, max_batch_entries: 100, flush_interval_ms: 200, probe_concurrency: 1, log_sources: [] }));
  const set = await cli(['agent', 'config', h.host_id, '--set-file', cfg, ...remote]);
  expect(set.code, set.stderr).toBe(0);
  expect(JSON.parse((await cli(['agent', 'config', h.host_id, '--get', ...remote])).stdout).heartbeat_interval_secs).toBe(45);
}, 60_000);

it('probe: a JSON-RPC error is the result (stdout, exit 1) and one error[E_ADMIN_API] line on stderr with its reason', async () => {
  const h = await t.issue('probe-target'); // never connected
  const r = await cli(['probe', h.host_id, 'sys.uptime', '--server', base, '--admin-token-file', tokenFile]);
  expect(r.code).toBe(1);
  expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: -32004, data: { reason: `host ${h.host_id} is not connected (state NeverConnected)` } } });
  // was `cortex-server: HTTP 404: -32004 UnknownHost`, the reason on stdout only
  expect(r.stderr).toBe(
    `cortex-server: error[E_ADMIN_API]: HTTP 404: -32004 UnknownHost: host ${h.host_id} is not connected (state NeverConnected) — see the message; check --server and the admin token\n`,
  );
}, 60_000);
