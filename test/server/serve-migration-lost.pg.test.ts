// `serve` whose PostgreSQL answered and then stopped answering, or lost the connection, during
// its start-up migration (DECISIONS G45). A reset inside the migration's transaction printed
// E_INTERNAL "database migration failed: Postgres connection has been discarded — this is a
// bug", and one at a statement of the migrator outside it E_DB_OPEN "cannot reach PostgreSQL at
// HOST:PORT … is PostgreSQL running there? check the host and port in the URL" (exit 2), though
// PostgreSQL had answered; neither was tried again under --db-wait-secs. Now E_DB_LOST (exit 1)
// in the admin commands' words (cli-db.ts postgresLostError, G44): what happened and how long
// in, that the migrations commit together and may or may not have been applied, that starting
// again (or migrate) applies whatever is missing; and, as starting again is safe, serve does so
// under --db-wait-secs as for a database out of reach.
//
// serve reaches PostgreSQL through a FreezingRelay with a tap behind it
// (test/support/statement-tap.ts): once the chosen statement has reached PostgreSQL, the tap
// drops its answer and resets the connection (the compiled CLI), or the relay freezes (in this
// process, with G43's silence bound shortened to 400 ms through a mock of openPostgresStorage,
// as in cli-db-silent.pg.test.ts: the real bound would take 20 s).
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeCliError } from '../../common/errors.js';
import { createCapturingLogger } from '../../server/log.js';
import { resolveSettings } from '../../server/settings.js';
import { newTestDb, pgQuery } from '../support/dialects.js';
import { tappedPath, type TappedPath } from '../support/statement-tap.js';
import { serverAsync } from '../opx/helpers.js';
import { requireServerCli, serve } from './spawn.js';
import type { PostgresStorageOptions } from '../../server/db/postgres.js';

vi.mock('../../server/db/postgres.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../server/db/postgres.js')>();
  return { ...actual, openPostgresStorage: (options: PostgresStorageOptions) => actual.openPostgresStorage({ ...options, silentMs: 400, connectTimeoutMs: 1000 }) };
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** A fresh schema, not migrated, and the path to it that fails once a statement `trigger` matches has reached PostgreSQL. */
async function through(trigger: RegExp, then: 'freeze' | 'reset'): Promise<TappedPath & { direct: string }> {
  const target = await newTestDb('postgres');
  cleanups.push(target.drop);
  const path = await tappedPath(target.db, (text) => trigger.test(text), then);
  cleanups.push(() => path.close());
  return { ...path, direct: target.db };
}

/** Whether the schema of `direct` has the migration history (none: nothing was applied). */
async function applied(direct: string): Promise<number> {
  const rows = await pgQuery<{ t: string | null }>(direct, "select to_regclass('kysely_migration')::text as t");
  if (rows[0]?.t === null) return 0;
  return Number((await pgQuery<{ n: string }>(direct, 'select count(*) as n from kysely_migration'))[0]?.n);
}

const IN_TX = /create table "agents"/i;
/** The migrator's first statement, before its transaction (on the connection that took the migration lock and read the history). */
const BEFORE_TX = /select "nspname" from "pg_catalog"\."pg_namespace"/;

describe('the compiled CLI: serve --db-wait-secs 0, its connection reset during the start-up migration', () => {
  beforeAll(() => requireServerCli());

  it('inside the migration transaction: exit 1, E_DB_LOST "lost in the middle of the start-up migration", may or may not have been applied — not E_INTERNAL "this is a bug"', async () => {
    const p = await through(IN_TX, 'reset');
    const r = await serverAsync(['serve', '--db', p.url, '--listen', '127.0.0.1:0', '--db-wait-secs', '0']);
    expect(p.tap.fired).toMatch(IN_TX);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^cortex-server: error\\[E_DB_LOST\\]: the connection to PostgreSQL at 127\\.0\\.0\\.1:${p.port} was lost in the middle of the start-up migration, [0-9.]+ s after the server began starting \\(it had answered until then: the URL is right\\): `,
        'm',
      ),
    );
    expect(r.stderr).toContain('Any migration it was applying may or may not have been applied: they commit together');
    expect(r.stderr).toContain(' — PostgreSQL restarted or was stopped, the database stopped answering, or something on the way (a firewall, a proxy, a NAT) cut the connection: check that PostgreSQL runs and the network path to it; then start serve again (or run cortex-server migrate): either applies whatever is missing');
    expect(r.stderr).not.toMatch(/E_INTERNAL|this is a bug|cannot reach/);
    // PostgreSQL saw the connection end and rolled the transaction back: nothing applied, and
    // what the message says to do applies it all
    expect(await applied(p.direct)).toBe(0);
    const again = await serverAsync(['migrate', '--db', p.direct]);
    expect(again.stdout).toMatch(/^applied \d+ migration\(s\) to the postgres database: 0001-initial, /);
  });

  it('at a statement of the migrator before its transaction: E_DB_LOST — not E_DB_OPEN "cannot reach PostgreSQL … is PostgreSQL running there?"', async () => {
    const p = await through(BEFORE_TX, 'reset');
    const r = await serverAsync(['serve', '--db', p.url, '--listen', '127.0.0.1:0', '--db-wait-secs', '0']);
    expect(p.tap.fired).toMatch(BEFORE_TX);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^cortex-server: error\[E_DB_LOST\]: the connection to PostgreSQL at 127\.0\.0\.1:\d+ was lost in the middle of the start-up migration, [0-9.]+ s after the server began starting \(it had answered until then: the URL is right\): Connection terminated unexpectedly\. /m);
    expect(r.stderr).not.toMatch(/E_DB_OPEN|cannot reach|is PostgreSQL running there/);
  });
});

describe('the compiled CLI: serve --db-wait-secs 30, its connection reset during the start-up migration', () => {
  beforeAll(() => requireServerCli());

  it('tries again, as for a database out of reach (one line saying so), and the next start migrates and listens', async () => {
    const p = await through(IN_TX, 'reset');
    const s = await serve(['--db', p.url, '--db-wait-secs', '30']);
    try {
      expect(p.tap.fired).toMatch(IN_TX);
      const waiting = s
        .stderr()
        .split('\n')
        .filter((l) => l.includes('during the start-up; trying again'));
      expect(waiting).toHaveLength(1);
      expect(JSON.parse(waiting[0] as string)).toMatchObject({
        level: 'warn',
        msg: 'the database stopped answering or lost the connection during the start-up; trying again every 2 s (--db-wait-secs): the next start applies whatever of the migration is missing',
        err: expect.stringMatching(/^the connection to PostgreSQL at 127\.0\.0\.1:\d+ was lost in the middle of the start-up migration/),
      });
      expect(s.stderr()).toContain('"msg":"the database is reachable: starting"');
      expect(await applied(p.direct)).toBeGreaterThan(0);
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  });
});

describe('in this process (silence bound 400 ms): PostgreSQL frozen during the start-up migration', () => {
  it('E_DB_LOST "stopped answering in the middle of the start-up migration" (CORTEX_DB_SILENT), told as a loss that serve tries again — not E_DB_OPEN "cannot reach"', async () => {
    const p = await through(BEFORE_TX, 'freeze');
    const [{ startServer }, { serveStartError }] = await Promise.all([import('../../server/server.js'), import('../../server/cluster/errors.js')]);
    const log = createCapturingLogger({ name: 'test-server' });
    const since = performance.now();
    const failed = await startServer({ settings: resolveSettings({ listen: '127.0.0.1:0', db: p.url }), logger: log.logger, dbPool: 4 }).then(
      async (s) => {
        await s.close();
        throw new Error('the server started; it was expected to fail');
      },
      (error: unknown) => error,
    );
    expect(p.tap.fired).toMatch(BEFORE_TX);
    const d = describeCliError(serveStartError(failed, p.url, since));
    expect(d.code).toBe('E_DB_LOST');
    expect(d.message).toMatch(
      new RegExp(
        `^PostgreSQL at 127\\.0\\.0\\.1:${p.port} stopped answering in the middle of the start-up migration, [0-9.]+ s after the server began starting \\(it had answered until then: the URL is right\\): a statement got no answer from PostgreSQL within 0\\.4 s`,
      ),
    );
    expect(d.message).toContain('(CORTEX_DB_SILENT). Any migration it was applying may or may not have been applied');
    expect(d.hint).toBe(
      'check the network path from this host to the database (a firewall dropping packets, a route, a VPN or proxy) and that its host responds; then start serve again (or run cortex-server migrate): either applies whatever is missing',
    );
  });
});
