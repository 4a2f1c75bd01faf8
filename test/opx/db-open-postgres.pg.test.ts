// A PostgreSQL that answers but refuses what --db asks (PostgreSQL project only): an unknown
// user and a missing database are the operator's to fix (exit 2, E_DB_OPEN, what to do), not
// "this is a bug" (E_INTERNAL, as SQLSTATE 28000 printed before).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, requireServerCli } from '../server/spawn.js';
import { waitFor } from '../server/wire.js';
import { dropSchemaUnderLock, newTestDb, type TestDbTarget } from '../support/dialects.js';
import { PG_TEST_URL } from '../support/postgres-project.js';
import { Relay } from '../support/tcp-relay.js';
import { background, commitLines, serverRun as server } from './helpers.js';

beforeAll(() => requireServerCli(), 120_000);

/** A relay to the test PostgreSQL, open, and `db` (a test database's URL) pointed through it. */
async function throughRelay(db: string): Promise<{ relay: Relay; url: string }> {
  const pg = new URL(PG_TEST_URL);
  const relay = new Relay({ host: pg.hostname, port: Number(pg.port || 5432) });
  await relay.open();
  const url = new URL(db);
  url.hostname = '127.0.0.1';
  url.port = String(relay.port);
  return { relay, url: url.toString() };
}

/** After a relay test: its CLI killed (if still running), the relay closed, the test database dropped. */
async function cleanUp(child: ChildProcess, relay: Relay, target: TestDbTarget): Promise<void> {
  child.kill('SIGKILL');
  await relay.cut();
  await target.drop();
}

function withUrl(change: (u: URL) => void): string {
  const u = new URL(PG_TEST_URL);
  u.search = '';
  change(u);
  return u.toString();
}

describe('PostgreSQL refuses the --db', () => {
  it('an unknown user: E_DB_OPEN naming the user, the password redacted', async () => {
    const db = withUrl((u) => {
      u.username = 'cortex_no_such_role';
      u.password = 'hunter2';
    });
    const cases = [['serve', '--listen', '127.0.0.1:0'], ['agent', 'list']];
    const runs = await Promise.all(cases.map((args) => server([...args, '--db', db])));
    for (const [i, args] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/error\[E_DB_OPEN\]: PostgreSQL refused the user "cortex_no_such_role": .* — check the user and password in the URL, and pg_hba\.conf/);
      expect(r.stderr).not.toContain('hunter2');
    }
  });

  it('a URL without a user connects as this process\'s user, as psql does, even without $USER (G36); a refused PGUSER is named as such', async () => {
    const me = userInfo().username;
    const target = await newTestDb('postgres');
    const su = new pg.Client({ connectionString: PG_TEST_URL });
    await su.connect();
    let created = false;
    try {
      // a role of this process's user name (root here and in CI), for as long as the test runs
      if ((await su.query('select 1 from pg_roles where rolname = $1', [me])).rowCount === 0) {
        await su.query(`create role ${JSON.stringify(me)} login`);
        created = true;
      }
      await su.query(`grant all on schema ${JSON.stringify(new URL(target.db).searchParams.get('options')?.split('=').pop() ?? 'public')} to ${JSON.stringify(me)}`).catch(() => undefined);
      const noUser = new URL(target.db);
      noUser.username = '';
      noUser.password = '';
      // cron, env -i, a container: no USER, no PGUSER (node-postgres took its user from $USER only)
      const [r, refused] = await Promise.all([
        server(['agent', 'list', '--json', '--db', noUser.toString()], { env: { USER: undefined, PGUSER: undefined, LOGNAME: undefined } }),
        server(['agent', 'list', '--db', noUser.toString()], { env: { USER: undefined, PGUSER: 'cortex_no_such_role' } }),
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('PostgreSQL refused the user "cortex_no_such_role" (from PGUSER; the URL names none)');
    } finally {
      await target.drop();
      if (created) await su.query(`drop owned by ${JSON.stringify(me)}`).then(() => su.query(`drop role ${JSON.stringify(me)}`)).catch(() => undefined);
      await su.end();
    }
  });

  it('a read-only database (a standby; default_transaction_read_only for the user): serve and an admin write say so, E_DB_OPEN, not E_INTERNAL', async () => {
    const role = `cx_rostart_${process.pid}`;
    const su = new pg.Client({ connectionString: PG_TEST_URL });
    await su.connect();
    try {
      await su.query(`create role ${role} login`);
      await su.query(`create schema ${role} authorization ${role}`);
      const db = withUrl((u) => {
        u.username = role;
        u.searchParams.set('options', `-c search_path=${role}`);
      });
      expect((await server(['migrate', '--db', db])).code).toBe(0);
      await su.query(`alter role ${role} set default_transaction_read_only = on`);
      const [serve, issue] = await Promise.all([server(['serve', '--listen', '127.0.0.1:0', '--db', db]), server(['agent', 'issue', '--host', 'web-1', '--db', db])]);
      expect(serve.code).toBe(2);
      expect(serve.stderr).toMatch(/^cortex-server: error\[E_DB_OPEN\]: PostgreSQL at 127\.0\.0\.1:5432 takes no writes: cannot execute \w+ in a read-only transaction \(--db .*\) — it is read-only: a standby .*point --db at the primary, or lift the setting/);
      expect(issue.code).toBe(1);
      expect(issue.stderr).toMatch(/^cortex-server: error\[E_DB_OPEN\]: the database takes no writes \(25006: cannot execute INSERT in a read-only transaction\) — it is read-only/);
    } finally {
      await dropSchemaUnderLock(su, role).catch(() => undefined);
      await su.query(`drop role if exists ${role}`).catch(() => undefined);
      await su.end();
    }
  });

  it('a search_path naming no schema that exists: E_DB_OPEN saying to create it (was E_INTERNAL: relation "kysely_migration_lock" does not exist)', async () => {
    const db = withUrl((u) => u.searchParams.set('options', '-c search_path=cortex_no_such_schema'));
    const cases = [['migrate'], ['serve', '--listen', '127.0.0.1:0'], ['agent', 'list']];
    const runs = await Promise.all(cases.map((args) => server([...args, '--db', db])));
    for (const [i, args] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(
        /^cortex-server: error\[E_DB_OPEN\]: the database has no schema to keep cortex-server's tables in: search_path is cortex_no_such_schema, and no schema of it exists \(--db .*\) — create the schema first \(create schema cortex_no_such_schema authorization \w+\), or name one that exists in the URL \(\?options=-c%20search_path%3Dcortex_no_such_schema\) or for the user \(alter role \w+ set search_path = cortex_no_such_schema\)\n$/,
      );
    }
  });

  it('a setting of the URL PostgreSQL refuses at connection (an unknown parameter, a value it cannot parse): E_DB_OPEN naming it', async () => {
    const cases = [
      ['-c cortex_no_such_param=1', /42704 unrecognized configuration parameter "cortex_no_such_param"/],
      ['-c search_path="two words"', /22023 invalid value for parameter "search_path"/],
    ] as const;
    const runs = await Promise.all(cases.map(([options]) => server(['agent', 'list', '--db', withUrl((u) => u.searchParams.set('options', options))])));
    for (const [i, [, said]] of cases.entries()) {
      const r = runs[i]!;
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^cortex-server: error\[E_DB_OPEN\]: PostgreSQL refused a setting of the connection: /);
      expect(r.stderr).toMatch(said);
      expect(r.stderr).toMatch(/— check the \?options= of the URL: each setting as -c NAME=VALUE/);
    }
  });

  it('a user without the rights it needs (G32): no CREATE in the schema, tables of another user, GRANTs without owning logs — each E_DB_OPEN saying which', async () => {
    const role = `cx_norights_${process.pid}`;
    const target = await newTestDb('postgres'); // a schema of the superuser's
    const schema = new URL(target.db).searchParams.get('options')!.replace(/^-c search_path=/, '');
    const su = new pg.Client({ connectionString: PG_TEST_URL });
    await su.connect();
    try {
      await su.query(`create role ${role} login`);
      await su.query(`grant usage on schema ${schema} to ${role}`);
      const asRole = (() => {
        const u = new URL(target.db);
        u.username = role;
        return u.toString();
      })();
      // 1. it may not create tables there: the migration's failure names the schema (was E_INTERNAL "this is a bug")
      const creating = [['migrate'], ['serve', '--listen', '127.0.0.1:0']];
      const created = await Promise.all(creating.map((args) => server([...args, '--db', asRole])));
      for (const [i, args] of creating.entries()) {
        const r = created[i]!;
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(new RegExp(`^cortex-server: error\\[E_DB_OPEN\\]: the user "${role}" may not create tables in the schema ${schema}: permission denied for schema ${schema} .* — let it \\(as the schema's owner: GRANT CREATE, USAGE ON SCHEMA ${schema} TO ${role}\\)`));
      }
      // 2. the tables exist, made by another user: said as such (was "the database holds tables of another application")
      expect((await server(['migrate', '--db', target.db])).code).toBe(0);
      const using = [['agent', 'list'], ['serve', '--listen', '127.0.0.1:0']];
      // beside them, a host issued by the tables' owner for 2b (a row changes no right)
      const [issued, ...used] = await Promise.all([server(['agent', 'issue', '--host', 'granted', '--json', '--db', target.db]), ...using.map((args) => server([...args, '--db', asRole]))]);
      for (const [i, args] of using.entries()) {
        const r = used[i]!;
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(new RegExp(`^cortex-server: error\\[E_DB_OPEN\\]: the user "${role}" may not use the table kysely_migration: another user created the tables here`));
        expect(r.stderr).not.toContain('another application');
      }
      // 2b. SELECT only: a command that writes is refused by PostgreSQL (42501), said as the
      // user's rights with what to GRANT, not E_INTERNAL "this is a bug" (H44)
      await su.query(`grant select on all tables in schema ${schema} to ${role}`);
      const hostId = (JSON.parse(issued!.stdout) as { host_id: string }).host_id;
      const revoke = await server(['agent', 'revoke', hostId, '--db', asRole]);
      expect(revoke.code, revoke.stderr).toBe(1);
      expect(revoke.stderr).toMatch(/^cortex-server: error\[E_DB_OPEN\]: the database user may not do this: 42501 permission denied for table \w+ — GRANT that user what the command needs on the table named/);
      // 3. GRANTs on every table, but logs is not its own: serve refuses (it could not add a day's
      // partition once those made in advance ran out); the admin commands work with GRANTs
      await su.query(`grant create on schema ${schema} to ${role}`);
      await su.query(`grant all on all tables in schema ${schema} to ${role}`);
      await su.query(`grant all on all sequences in schema ${schema} to ${role}`);
      const [serve, list] = await Promise.all([server(['serve', '--listen', '127.0.0.1:0', '--db', asRole]), server(['agent', 'list', '--db', asRole])]);
      expect(serve.code, serve.stderr).toBe(2);
      expect(serve.stderr).toMatch(/^cortex-server: error\[E_DB_OPEN\]: the user "\w+" does not own the table logs \(its owner is "\w+"\): a server adds a partition of logs for each day .* — run serve as "\w+" \(the user that ran migrate\), or as a member of that role/);
      expect(list.code, list.stderr).toBe(0);
    } finally {
      await target.drop().catch(() => undefined);
      await su.query(`drop owned by ${role}`).catch(() => undefined);
      await su.query(`drop role if exists ${role}`).catch(() => undefined);
      await su.end();
    }
  });

  it('a database that does not exist: E_DB_OPEN saying to create it', async () => {
    const db = withUrl((u) => {
      u.pathname = '/cortex_no_such_db';
    });
    const r = await server(['agent', 'list', '--db', db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error\[E_DB_OPEN\]: PostgreSQL has no database "cortex_no_such_db": .* — create it \(createdb cortex_no_such_db\) or fix the URL/);
  });
});

// The four below mostly wait (for a retry every 1 or 2 s, for a lock): side by side, each on a
// database or schema, relay and socket of its own.
describe.concurrent('PostgreSQL not up yet when serve starts (at boot, during a restart)', () => {
  it('serve waits for it and starts once it answers (systemd gave up after five quick failures before)', async () => {
    const target = await newTestDb('postgres');
    const { relay, url: db } = await throughRelay(target.db);
    await relay.cut(); // its port refuses connections until it opens again
    const child = spawn(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', '--db', db], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => err.includes('the database is out of reach; trying again every 2 s'), 20_000);
      expect(child.exitCode).toBeNull();
      await relay.open();
      await waitFor(() => err.includes('"msg":"listening"'), 20_000);
      expect(err).toContain('"msg":"the database is reachable: starting"');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      await cleanUp(child, relay, target);
    }
  }, 60_000);
});

describe.concurrent('PostgreSQL through its Unix socket (G37)', () => {
  it('a socket not there yet (PostgreSQL not started) is "cannot reach", and serve waits for it as for a port', async () => {
    const target = await newTestDb('postgres');
    const dir = mkdtempSync(join(tmpdir(), 'cortex-pgsock-'));
    const pgUrl = new URL(PG_TEST_URL);
    const u = new URL(target.db);
    // postgresql:///DB?host=DIR: the socket DIR/.s.PGSQL.5432, as Debian's /var/run/postgresql
    const db = `postgresql:///${u.pathname.slice(1)}?host=${encodeURIComponent(dir)}&user=${encodeURIComponent(decodeURIComponent(pgUrl.username || 'postgres'))}&options=${encodeURIComponent(u.searchParams.get('options') ?? '')}`;
    // "PostgreSQL starts": its socket appears (a relay to the test server's TCP port)
    const socket = createServer((c) => {
      const up = connect(Number(pgUrl.port || 5432), pgUrl.hostname);
      c.pipe(up).pipe(c);
      c.on('error', () => up.destroy());
      up.on('error', () => c.destroy());
    });
    let child: ChildProcess | undefined;
    try {
      // agent list and serve side by side: the socket appears once both are done / waiting
      child = spawn(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', '--db', db], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
      const running = child;
      const exited = new Promise<number | null>((resolve) => running.on('exit', (code) => resolve(code)));
      const [listed] = await Promise.all([server(['agent', 'list', '--db', db]), waitFor(() => err.includes('the database is out of reach; trying again every 2 s'), 20_000)]);
      expect(listed.code).toBe(2);
      expect(listed.stderr).toContain(`error[E_DB_OPEN]: cannot reach PostgreSQL at ${dir}/.s.PGSQL.5432: ENOENT`);
      expect(running.exitCode).toBeNull(); // before: exit at once (E_FILE_ACCESS: ENOENT)
      await new Promise<void>((resolve) => socket.listen(join(dir, '.s.PGSQL.5432'), resolve));
      await waitFor(() => err.includes('"msg":"listening"'), 20_000);
      running.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child?.kill('SIGKILL');
      if (socket.listening) await new Promise<void>((resolve) => socket.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
      await target.drop();
    }
  }, 60_000);
});

describe.concurrent('the migration lock held by another session', () => {
  it('serve and an admin command say who holds it (pid, application, address, what it last ran) and go on once it is released', async () => {
    // A database of the test's own: an advisory lock belongs to one database, so holding it
    // here for seconds holds up no other test file's migration.
    const name = `cx_lockwait_${process.pid}`;
    const su = new pg.Client({ connectionString: withUrl(() => undefined) });
    await su.connect();
    await su.query(`drop database if exists ${name} with (force)`);
    await su.query(`create database ${name}`);
    const target = {
      db: withUrl((u) => {
        u.pathname = `/${name}`;
      }),
      drop: async () => {
        await su.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
        await su.end();
      },
    };
    const holder = new pg.Client({ connectionString: target.db, application_name: 'stuck-migration' });
    const [migrated] = await Promise.all([server(['migrate', '--db', target.db]), holder.connect()]);
    expect(migrated.code).toBe(0);
    const children: ReturnType<typeof spawn>[] = [];
    const start = (args: string[]) => {
      const child = spawn(process.execPath, [CLI, ...args, '--db', target.db], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      const out = { stdout: '', stderr: '', code: undefined as number | null | undefined };
      child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
      child.on('exit', (code) => (out.code = code));
      return out;
    };
    try {
      // The key of server/db/postgres.ts's MIGRATION_LOCK_KEY ("cortex" in ASCII).
      await holder.query('select pg_advisory_lock(x\'636f72746578\'::bigint)');
      const pid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
      const list = start(['agent', 'list']);
      const serve = start(['serve', '--listen', '127.0.0.1:0']);
      const said = new RegExp(
        `^waiting for the database's migration lock, held by PostgreSQL backend pid ${pid} \\("stuck-migration", from 127\\.0\\.0\\.1, idle for \\d+ s, last query: "select pg_backend_pid\\(\\) as pid"\\): another cortex-server starting or migrating holds it for seconds; if the wait goes on, that session is stuck: stop its process, or end the session \\(select pg_terminate_backend\\(PID\\)\\)$`,
      );
      const printed = () => list.stderr.split('\n').some((l) => said.test(l.replace(/^cortex-server: /, '')));
      const logged = () =>
        serve.stderr
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { level?: string; msg?: string; holder?: string })
          .find((l) => said.test(l.msg ?? ''));
      await waitFor(() => printed() && logged() !== undefined, 20_000);
      expect(list.stderr).toMatch(/^cortex-server: waiting for the database's migration lock/);
      expect(logged()).toMatchObject({ level: 'warn', holder: expect.stringMatching(new RegExp(`^PostgreSQL backend pid ${pid} `)) });
      expect(list.code).toBeUndefined();
      expect(serve.stderr).not.toContain('"msg":"listening"');
      await holder.query('select pg_advisory_unlock(x\'636f72746578\'::bigint)');
      await waitFor(() => list.code !== undefined && serve.stderr.includes('"msg":"listening"'), 20_000);
      expect(list.code, list.stderr).toBe(0);
    } finally {
      for (const c of children) c.kill('SIGKILL');
      await holder.end().catch(() => undefined);
      await target.drop();
    }
  }, 60_000);
});

describe.concurrent('agent tail --follow --db on PostgreSQL that goes away for a while (I25)', () => {
  it('says once that the database is out of reach, and follows on from the next seq when it answers', async () => {
    const target = await newTestDb('postgres');
    const { relay, url: db } = await throughRelay(target.db);
    const issued = await server(['agent', 'issue', '--host', 'followed', '--json', '--db', target.db]);
    const hostId = (JSON.parse(issued.stdout) as { host_id: string }).host_id;
    const commit = (from: number, to: number) => commitLines(target.db, hostId, from, to);
    await commit(1, 1);
    const { child, out, err, exited } = background(CLI, ['agent', 'tail', hostId, '--follow', '--db', db]);
    try {
      await waitFor(() => out().includes('line 1'), 20_000);
      await relay.cut();
      await waitFor(() => err().includes('the database is out of reach ('), 20_000);
      expect(err()).toContain('following again from seq 2 as soon as it answers (Ctrl-C ends)');
      await commit(2, 3);
      await relay.open();
      await waitFor(() => out().includes('line 3'), 20_000);
      expect(err()).toContain(`following ${hostId} again from seq 2`);
      expect(err().match(/out of reach/g)).toHaveLength(1);
      expect(out().trim().split('\n').map((l) => /line (\d+)$/.exec(l)?.[1])).toEqual(['1', '2', '3']);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      await cleanUp(child, relay, target);
    }
  }, 60_000);
});
