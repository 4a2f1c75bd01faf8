// A real PgBouncer for the pooler tests (Debian's pgbouncer; .ci/run installs it): on a free
// port, in a folder of its own, run as the postgres user when the tests run as root (PgBouncer
// refuses root). Where it cannot run, the tests say why and skip — except under CI=true.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import { waitFor } from '../server/wire.js';
import { freePort } from './ports.js';
import { PG_TEST_URL } from './postgres-project.js';

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => spawnSync(p, ['--version']).status === 0);

/** The user the tests connect as (PG_TEST_URL's, else postgres). */
export const PG_USER = decodeURIComponent(new URL(PG_TEST_URL).username) || 'postgres';

/** `host=… port=… dbname=database`: a [databases] entry's target on PostgreSQL itself. */
export function pgTarget(database: string): string {
  const base = new URL(PG_TEST_URL);
  return `host=${base.hostname} port=${base.port || 5432} dbname=${database}`;
}

export interface RunningBouncer {
  port: number;
  /** The URL of one of its [databases] entries. */
  url(entry: string): string;
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer with these [databases] lines and [pgbouncer] settings (listen address, port,
 * auth, pidfile added), waiting until `probeEntry` answers a query; or returns why it cannot
 * run here (not installed; root without a postgres user), which under CI=true fails the test.
 */
export async function startPgBouncer(prefix: string, databases: string[], settings: string[], probeEntry: string): Promise<RunningBouncer | { notRun: string }> {
  if (PGBOUNCER === undefined) {
    expect(process.env['CI'], 'pgbouncer is missing: apt-get install pgbouncer').not.toBe('true');
    return { notRun: 'pgbouncer is not installed' };
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const url = (entry: string) => `postgres://${encodeURIComponent(PG_USER)}@127.0.0.1:${port}/${entry}`;
  const remove = () => rmSync(dir, { recursive: true, force: true });
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      ...databases,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      ...settings,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'users.txt'), `"${PG_USER}" ""\n`);
  let ids: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    const id = (flag: string): number => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim() || NaN);
    ids = { uid: id('-u'), gid: id('-g') };
    if (!Number.isInteger(ids.uid) || !Number.isInteger(ids.gid)) {
      expect(process.env['CI'], 'pgbouncer will not run as root and there is no postgres user to run it as').not.toBe('true');
      remove();
      return { notRun: 'running as root without a postgres user (pgbouncer refuses root)' };
    }
    for (const f of ['', 'pgbouncer.ini', 'users.txt']) chownSync(join(dir, f), ids.uid, ids.gid);
  }
  let output = '';
  const bouncer: ChildProcess = spawn(PGBOUNCER, [join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'], ...ids });
  bouncer.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  bouncer.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => bouncer.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    bouncer.kill('SIGTERM');
    if (bouncer.exitCode === null) await exited;
    remove();
  };
  const up = waitFor(async () => {
    const c = new pg.Client({ connectionString: url(probeEntry), connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.query('select 1');
      await c.end();
      return true;
    } catch {
      await c.end().catch(() => undefined);
      return false;
    }
  }, 15_000);
  try {
    await Promise.race([up, exited.then(() => Promise.reject(new Error(`pgbouncer exited: ${output}`)))]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, url, stop };
}
