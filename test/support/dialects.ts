// Both storage dialects for one suite: vitest.config.ts runs the storage suites in a
// "sqlite" and a "postgres" project; testDialect() says which one this run is, and the
// helpers (openTempDb, startTestServer) open that dialect.
//
// PostgreSQL comes from CORTEX_TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test).
// Every newTestDb() on PostgreSQL is a fresh schema (the URL carries
// options=-c search_path=SCHEMA, so a spawned CLI or server uses it too), dropped by its
// drop() and, as a safety net, when the test file ends.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, it } from 'vitest';
import { PG_TEST_URL } from './postgres-project.js';
import type { DialectName } from '../../server/db/storage.js';

export { PG_TEST_URL };

/** The dialect this test run is for: the "postgres" vitest project sets CORTEX_TEST_DIALECT. */
export function testDialect(): DialectName {
  return process.env['CORTEX_TEST_DIALECT'] === 'postgres' ? 'postgres' : 'sqlite';
}

export interface TestDbTarget {
  dialect: DialectName;
  /** The --db value: a SQLite file path or a postgres:// URL bound to a fresh schema. */
  db: string;
  /** Temp folder (SQLite file, or nothing for PostgreSQL but usable for other files). */
  dir: string;
  drop(): Promise<void>;
}

const created = new Set<string>();
// Safety net for schemas whose test failed before its drop(): registered when a test file
// imports this module (collection time), so it belongs to that file's root suite.
afterAll(async () => {
  for (const s of [...created]) await dropSchema(s).catch(() => undefined);
});

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_TEST_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh, empty database of `dialect` (not migrated). */
export async function newTestDb(dialect: DialectName): Promise<TestDbTarget> {
  const dir = mkdtempSync(join(tmpdir(), 'cortex-db-'));
  if (dialect === 'sqlite') {
    return { dialect, db: join(dir, 'data', 'cortex.db'), dir, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const schema = `cx_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(`create schema ${schema}`);
  created.add(schema);
  const u = new URL(PG_TEST_URL);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return {
    dialect,
    db: u.toString(),
    dir,
    async drop() {
      rmSync(dir, { recursive: true, force: true });
      await dropSchema(schema);
    },
  };
}

/** The key of server/db/postgres.ts's migration lock. */
const MIGRATION_LOCK_KEY = 0x636f72746578;

async function dropSchema(schema: string): Promise<void> {
  if (!created.has(schema)) return;
  created.delete(schema);
  const client = new pg.Client({ connectionString: PG_TEST_URL });
  await client.connect();
  try {
    await dropSchemaUnderLock(client, schema);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Drops `schema` holding the migration lock: kysely's Migrator lists the tables of EVERY
 * schema, and a schema dropped in the middle of that (another test file's) fails the listing.
 * For tests that make schemas of their own (a role's); `client` must be a superuser's.
 */
export async function dropSchemaUnderLock(client: pg.Client, schema: string): Promise<void> {
  await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
  }
}

type It = typeof it;
const nothing = (() => undefined) as unknown as It;
/**
 * `it` for a case about one dialect's own mechanics (SQLite pages and pragmas, PostgreSQL
 * partitions): defined in that dialect's run only, absent (not skipped) in the other.
 */
export const itOn = (d: DialectName): It => (testDialect() === d ? it : nothing);

/** One statement on the database of a --db URL (its own connection, ended afterwards): the rows. */
export async function pgQuery<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}
