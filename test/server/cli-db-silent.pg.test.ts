// An admin command whose PostgreSQL answered and then stopped answering, or lost the connection,
// in the middle of the command (DECISIONS G44). It was said as E_DB_OPEN "cannot reach
// PostgreSQL at HOST:PORT … is PostgreSQL running there? check the host and port in the URL"
// (migrate, and the commands' own opening), as E_INTERNAL "this is a bug" (CORTEX_DB_SILENT, "Client
// was closed and is not queryable") or as E_CONNECT "check that the server runs" (ECONNRESET):
// the URL was right, and nothing said whether the command's change had been made. Now
// E_DB_LOST (exit 1): what happened and how long in, whether the change may have been made, what
// to do.
//
// The command reaches PostgreSQL through a FreezingRelay, behind which a tap sees what the
// command sends: once a statement of the test's choosing has gone through to PostgreSQL, the
// relay freezes (PostgreSQL's answer is held: it did the statement, the command never hears so)
// or the tap drops that answer and cuts the connection. The commands run in this process (the
// CLI's own functions) with G43's silence bound shortened to 400 ms through a mock of
// openPostgresStorage; the reset case runs the compiled CLI, which needs no shortened bound.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeCliError } from '../../common/errors.js';
import { newTestDb, pgQuery } from '../support/dialects.js';
import type { FreezingRelay } from '../support/freezing-relay.js';
import { tappedPath, type Tap } from '../support/statement-tap.js';
import { issue, serverAsync } from '../opx/helpers.js';
import { requireServerCli } from './spawn.js';
import type { PostgresStorageOptions } from '../../server/db/postgres.js';

vi.mock('../../server/db/postgres.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../server/db/postgres.js')>();
  return { ...actual, openPostgresStorage: (options: PostgresStorageOptions) => actual.openPostgresStorage({ ...options, silentMs: 400, connectTimeoutMs: 1000 }) };
});

let relay: FreezingRelay | undefined;
let tap: Tap | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await relay?.close();
  await tap?.close();
  relay = tap = undefined;
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/**
 * A fresh schema (migrated unless `migrated` is false), and the --db URL that reaches it through
 * relay → tap → PostgreSQL; `then` runs once a message `trigger` accepts has reached PostgreSQL.
 */
async function throughTap(trigger: (text: string) => boolean, then: 'freeze' | 'reset', migrated = true): Promise<{ direct: string; url: string; port: number }> {
  const target = await newTestDb('postgres');
  cleanups.push(target.drop);
  if (migrated) await (await import('../../server/cli-db.js')).migrateCommand({ db: target.db });
  const path = await tappedPath(target.db, trigger, then);
  ({ tap, relay } = path);
  return { direct: target.db, url: path.url, port: path.port };
}

/** What `p` threw, or a failure when it did not. */
async function thrown(p: Promise<unknown>): Promise<Error & { code?: unknown; hint?: unknown }> {
  const outcome = await p.then(
    () => undefined,
    (error: unknown) => error as Error,
  );
  if (outcome === undefined) throw new Error('the command succeeded; it was expected to fail');
  return outcome;
}

const agent = () => import('../../server/cli/agent.js');

describe('an admin command whose PostgreSQL stops answering in the middle (shortened silence bound: 400 ms)', () => {
  it('agent list: E_DB_LOST, "stopped answering in the middle of the command", nothing changed — not E_INTERNAL "a bug" nor E_DB_OPEN "cannot reach"', async () => {
    const { url, port } = await throughTap((text) => /from "agents" order by/.test(text), 'freeze');
    const started = Date.now();
    const error = await thrown((await agent()).agentList(['--db', url]));
    expect(tap?.fired).toMatch(/from "agents" order by/);
    expect(Date.now() - started).toBeLessThan(10_000);
    const d = describeCliError(error);
    expect(d.code).toBe('E_DB_LOST');
    expect(d.message).toMatch(
      new RegExp(`^PostgreSQL at 127\\.0\\.0\\.1:${port} stopped answering in the middle of the command, [0-9.]+ s after it had opened the database \\(it had answered until then: the URL is right\\): a statement got no answer from PostgreSQL within 0\\.4 s`),
    );
    expect(d.message).toContain('(CORTEX_DB_SILENT). Nothing was changed: the command had only read (--db postgres://');
    expect(d.hint).toBe('check the network path from this host to the database (a firewall dropping packets, a route, a VPN or proxy) and that its host responds; then run the command again');
    expect(d.text).not.toMatch(/cannot reach|is PostgreSQL running there|this is a bug/);
  });

  it('agent group --set, its COMMIT carried out and the answer lost: the change "may or may not have been made" — and it was; check with agent list', async () => {
    let updated = false;
    const { direct, url } = await throughTap((text) => {
      if (/update "agents" set "group_name"/.test(text)) updated = true;
      return updated && /\bcommit\b/i.test(text);
    }, 'freeze');
    const created = issue(direct, 'web-1');
    const error = await thrown((await agent()).agentGroup([created.host_id, '--set', 'web', '--db', url]));
    expect(tap?.fired).toMatch(/commit/i);
    const d = describeCliError(error);
    expect(d.code).toBe('E_DB_LOST');
    expect(d.message).toMatch(/^the connection to PostgreSQL at 127\.0\.0\.1:\d+ was lost in the middle of the command, [0-9.]+ s after it had opened the database \(it had answered until then: the URL is right\): /);
    expect(d.message).toContain("The command's change may or may not have been made: PostgreSQL may have carried out a statement, or the COMMIT, whose answer never came back");
    expect(d.hint).toContain('then see whether the change was made (cortex-server agent list, with the same --db) before running the command again, which could do it twice');
    // PostgreSQL did commit it: what the message said may have happened did
    expect(await pgQuery<{ group_name: string | null }>(direct, 'select group_name from agents where host_id = $1', [created.host_id])).toEqual([{ group_name: 'web' }]);
  });

  it('while the command opens the database (its schema check): E_DB_LOST, its own work not begun — not E_INTERNAL "Client was closed"', async () => {
    const { url } = await throughTap((text) => /select name from kysely_migration/.test(text), 'freeze');
    const error = await thrown((await agent()).agentList(['--db', url]));
    const d = describeCliError(error);
    expect(d.code).toBe('E_DB_LOST');
    // the real cause (the silence), not the stand-in error of the migration lock's unlock on the
    // closed connection ("Client was closed and is not queryable"), which replaced it until
    // withMigrationLock stopped letting its unlock's failure win
    expect(d.message).toMatch(/^PostgreSQL at 127\.0\.0\.1:\d+ stopped answering while the command was opening the database \(checking its schema\), [0-9.]+ s after it began/);
    expect(d.message).toContain('(CORTEX_DB_SILENT). The command had not begun its own work: nothing of it was done');
  });

  it('migrate, frozen in the middle of its migrations: E_DB_LOST, they may or may not have been applied — run migrate again, which applies them', async () => {
    const { direct, url } = await throughTap((text) => /create table "agents"/i.test(text), 'freeze', false);
    const { migrateCommand } = await import('../../server/cli-db.js');
    const error = await thrown(migrateCommand({ db: url }));
    expect(tap?.fired).toMatch(/create table "agents"/i);
    const d = describeCliError(error);
    expect(d.code).toBe('E_DB_LOST');
    expect(d.message).toMatch(/^the connection to PostgreSQL at 127\.0\.0\.1:\d+ was lost in the middle of the migration, [0-9.]+ s after it began/);
    expect(d.message).toContain('Any migration it was applying may or may not have been applied');
    expect(d.hint).toMatch(/then run cortex-server migrate again: it applies whatever is missing$/);
    // the path gone for good: PostgreSQL ends that session (its transaction rolled back), and migrate again does it all
    await relay?.close();
    await tap?.close();
    expect(await migrateCommand({ db: direct })).toMatch(/^applied \d+ migration\(s\) to the postgres database: 0001-initial, /);
  });
});

describe('the compiled CLI, its connection reset in the middle of a command', () => {
  beforeAll(() => requireServerCli());

  it('agent revoke: exit 1, error[E_DB_LOST] "was lost in the middle of the command", the change may have been made (it was) — not E_CONNECT "check that the server runs"', async () => {
    const { direct, url, port } = await throughTap((text) => /update "agents" set/.test(text), 'reset');
    const created = issue(direct, 'web-1');
    const r = await serverAsync(['agent', 'revoke', created.host_id, '--db', url]);
    expect(tap?.fired).toMatch(/update "agents" set/);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^cortex-server: error\\[E_DB_LOST\\]: the connection to PostgreSQL at 127\\.0\\.0\\.1:${port} was lost in the middle of the command, [0-9.]+ s after it had opened the database \\(it had answered until then: the URL is right\\): `),
    );
    expect(r.stderr).toContain("The command's change may or may not have been made");
    expect(r.stderr).toContain(' — PostgreSQL restarted or was stopped, the database stopped answering, or something on the way (a firewall, a proxy, a NAT) cut the connection');
    // it was made: the UPDATE reached PostgreSQL, its answer did not come back
    expect(await pgQuery<{ connection_state: string }>(direct, 'select connection_state from agents where host_id = $1', [created.host_id])).toEqual([{ connection_state: 'Revoked' }]);
  });
});
