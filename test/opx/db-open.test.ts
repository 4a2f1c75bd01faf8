// Opening a database for an admin command never creates one (DECISIONS I1): a missing
// file, a folder, a special or unwritable file, or a file that is not a database is a
// clear error (exit 2) naming the path, at once.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireServerCli } from '../server/spawn.js';
import { SERVER_CLI_BUNDLE } from '../support/cli-bundles.js';
import { serverAsync, tmp, serverRun as server } from './helpers.js';

beforeAll(() => requireServerCli(), 120_000);

const HOST = '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01';

describe('admin commands never create a database', () => {
  it('every agent command in a folder without ./data/cortex.db fails with the path and creates nothing', async () => {
    // each command in an empty folder of its own (so that one that created something is named), run side by side
    const cases = [
      ['agent', 'list'],
      ['agent', 'list', '--json'],
      ['agent', 'tail', HOST],
      ['agent', 'revoke', HOST],
      ['agent', 'rotate', HOST],
      ['agent', 'decommission', HOST],
      ['agent', 'config', HOST, '--clear'],
      ['agent', 'issue', '--host', 'web-1'],
    ].map((args) => ({ args, cwd: tmp() }));
    const runs = await Promise.all(cases.map(({ args, cwd }) => server(args, { cwd, env: { CORTEX_SERVER: undefined, CORTEX_DB: undefined } })));
    for (const [i, { args, cwd }] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      // --json: the error is also one JSON value on stdout (DECISIONS I31); else stdout stays empty
      if (args.includes('--json')) expect((JSON.parse(r.stdout) as { error: { code: string; message: string } }).error.message, args.join(' ')).toContain(join(cwd, 'data', 'cortex.db'));
      else expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr).toContain(join(cwd, 'data', 'cortex.db'));
      expect(r.stderr).toContain('--db');
      expect(readdirSync(cwd), args.join(' ')).toEqual([]);
    }
  }, 120_000); // CLI runs: about 0.5 s each, more under load

  it('a missing --db file is refused and not created; a folder, a special file and a non-database are refused naming the path', async () => {
    const dir = tmp();
    const missing = join(dir, 'nope', 'c.db');
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'this is not a database\n'.repeat(100));
    // serve too (it printed E_INTERNAL "this is a bug"), and a file with SQLite's header but damaged pages
    const damaged = join(dir, 'damaged.db');
    writeFileSync(damaged, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(40_000, 0x5a)]));
    const file = join(dir, 'file');
    writeFileSync(file, '');
    // none of them writes anything: all side by side
    const [r, folder, special, proc, procMissing, notDb, under, ...served] = await Promise.all([
      server(['agent', 'list', '--db', missing]),
      server(['agent', 'list', '--db', dir]),
      server(['agent', 'list', '--db', '/dev/null']),
      server(['agent', 'list', '--db', '/proc/self/status']),
      server(['agent', 'list', '--db', '/proc/cortex-nope/c.db']),
      server(['agent', 'list', '--db', text]),
      server(['agent', 'list', '--db', join(file, 'c.db')]),
      ...[text, damaged].map((f) => server(['serve', '--db', f, '--listen', '127.0.0.1:0'])),
    ]);
    expect(r!.code).toBe(2);
    expect(r!.stderr).toContain(`no database at --db ${missing}`);
    expect(existsSync(join(dir, 'nope'))).toBe(false);

    expect(folder!.code).toBe(2);
    expect(folder!.stderr).toContain(`--db ${dir} is a folder`);

    expect(special!.code).toBe(2);
    expect(special!.stderr).toContain('/dev/null is not a regular file');

    expect(proc!.code).toBe(2);
    expect(proc!.stderr).toContain('/proc/self/status');

    expect(procMissing!.code).toBe(2);
    expect(procMissing!.stderr).toContain('/proc/cortex-nope/c.db');

    expect(notDb!.code).toBe(2);
    expect(notDb!.stderr).toContain(text);
    expect(notDb!.stderr).toContain('not a');
    for (const [i, f] of [text, damaged].entries()) {
      const s = served[i]!;
      expect(s.code, f).toBe(2);
      expect(s.stderr, f).toMatch(/error\[E_DB_OPEN\]: .* is not a cortex database \(SQLITE_(NOTADB|CORRUPT): another kind of file, or a damaged one\).*restore the latest `cortex-server backup` copy/);
    }

    expect(under!.code).toBe(2);
    expect(under!.stderr).toContain(join(file, 'c.db'));
  }, 120_000); // CLI runs: about 0.5 s each, more under load

  it('agent issue --host with an explicit --db creates it (and says so on stderr); the other commands then work on it', async () => {
    const dir = tmp();
    const db = join(dir, 'data', 'c.db');
    const other = join(dir, 'other.db');
    mkdirSync(join(dir, 'ro'));
    writeFileSync(join(dir, 'ro', 'blocker'), '');
    // the refusals (on other paths) beside the runs on db, which follow one another
    const [, refused, blocked] = await Promise.all([
      (async () => {
        const r = await server(['agent', 'issue', '--host', 'web-1', '--json', '--db', db]);
        expect(r.code).toBe(0);
        expect(r.stderr).toContain(`created a new database at ${db}`);
        const again = await server(['agent', 'issue', '--host', 'web-2', '--json', '--db', db]);
        expect(again.stderr).not.toContain('created a new database');
        expect(JSON.parse((await server(['agent', 'list', '--json', '--db', db])).stdout)).toHaveLength(2);
      })(),
      // --host-id on a missing database is refused: there is no host to reissue
      server(['agent', 'issue', '--host-id', HOST, '--db', other]),
      // issue's folder must be creatable
      server(['agent', 'issue', '--host', 'x', '--db', join(dir, 'ro', 'blocker', 'c.db')]),
    ]);
    expect(refused.code).toBe(2);
    expect(existsSync(other)).toBe(false);
    expect(blocked.code).toBe(2);
    expect(blocked.stderr).toContain(join(dir, 'ro', 'blocker', 'c.db'));
  }, 120_000); // CLI runs: about 0.5 s each, more under load
});

// side by side: the second case only waits out its --db-wait-secs
describe.concurrent('a PostgreSQL --db that cannot be used', () => {
  it('unreachable: exit 2 E_DB_OPEN naming host and port, the password redacted (was E_CONNECT "check that the server runs")', async () => {
    const cases = [['serve', '--listen', '127.0.0.1:0', '--db-wait-secs', '0'], ['agent', 'list'], ['migrate']];
    const runs = await Promise.all(cases.map((args) => server([...args, '--db', 'postgres://cortex:hunter2@127.0.0.1:1/cortex'])));
    for (const [i, args] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('error[E_DB_OPEN]: cannot reach PostgreSQL at 127.0.0.1:1: ECONNREFUSED (--db postgres://cortex:***@127.0.0.1:1/cortex) — is PostgreSQL running there? check the host and port in the URL');
      expect(r.stderr).not.toContain('hunter2');
    }
  });

  it('serve waits --db-wait-secs for it (trying every 2 s, one line saying so), then gives up the same way', async () => {
    const t0 = Date.now();
    // spawned at once (not queued behind other runs): the time measured is serve's
    const r = await serverAsync(['serve', '--listen', '127.0.0.1:0', '--db-wait-secs', '3', '--db', 'postgres://cortex:hunter2@127.0.0.1:1/cortex']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3000);
    expect(r.code).toBe(2);
    const waiting = r.stderr.split('\n').filter((l) => l.includes('the database is out of reach; trying again every 2 s (--db-wait-secs)'));
    expect(waiting).toHaveLength(1);
    const line = JSON.parse(waiting[0]!) as { gives_up_in_secs: number };
    expect(line).toMatchObject({ level: 'warn', db: 'postgres://cortex:***@127.0.0.1:1/cortex' });
    expect(line.gives_up_in_secs).toBeGreaterThanOrEqual(1);
    expect(line.gives_up_in_secs).toBeLessThanOrEqual(3);
    expect(r.stderr).toContain('error[E_DB_OPEN]: cannot reach PostgreSQL at 127.0.0.1:1: ECONNREFUSED');
    expect(r.stderr).not.toContain('hunter2');
  });
});


describe('serve run by a user who may not write the SQLite database', () => {
  it('E_DB_OPEN naming what this user may not write and whose it should be (was E_INTERNAL SQLITE_CANTOPEN "this is a bug")', async () => {
    if (process.getuid?.() !== 0) {
      console.warn('serve as another user: needs root; not run');
      return;
    }
    const dir = tmp();
    const db = join(dir, 'cortex.db');
    expect((await server(['agent', 'issue', '--host', 'web-1', '--db', db])).code).toBe(0); // root's database
    chmodSync(dir, 0o755); // a temp folder is 0700: let "nobody" reach the file (the system's tmp is 1777)
    const child = spawn(process.execPath, [SERVER_CLI_BUNDLE, 'serve', '--db', db, '--listen', '127.0.0.1:0'], { uid: 65534, gid: 65534, stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const r = { status: await new Promise<number | null>((resolve) => child.once('close', resolve)), stderr };
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`cortex-server: error[E_DB_OPEN]: cannot open the database ${db} for reading and writing (`);
    expect(r.stderr).toContain(`this user (nobody) may not write the folder ${dir} (EACCES) nor the file ${db} (EACCES); serve writes the file and, beside it, its -wal and -shm files — run serve as the user that owns them`);
    expect(r.stderr).not.toContain('E_INTERNAL');
  });
});

describe('serve and migrate on a --db whose path has a file where a folder must be', () => {
  it('E_DB_OPEN saying so, exit 2 (was E_INTERNAL EEXIST "this is a bug")', async () => {
    const dir = tmp();
    const file = join(dir, 'data.db');
    writeFileSync(file, '');
    const cases = [['serve', '--listen', '127.0.0.1:0'], ['migrate']];
    const runs = await Promise.all(cases.map((args) => server([...args, '--db', join(file, 'cortex.db')])));
    for (const [i, args] of cases.entries()) {
      const r = runs[i]!;
      expect([args[0], r.code]).toEqual([args[0], 2]);
      expect(r.stderr).toContain(`cortex-server: error[E_DB_OPEN]: --db ${join(file, 'cortex.db')}: a part of the path is a file, not a folder (EEXIST) — give --db the database file in a folder`);
    }
  });
});
