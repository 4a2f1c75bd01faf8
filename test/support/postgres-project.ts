// The "postgres" vitest project (see vitest.config.ts): which files run on PostgreSQL
// too, and whether a PostgreSQL answers at CORTEX_TEST_POSTGRES_URL.
import pg from 'pg';

/** Suites that exercise storage: run on both dialects. *.pg.test.ts run on PostgreSQL only. */
export const STORAGE_SUITES = [
  'test/server/agents.test.ts',
  'test/server/ingest.test.ts',
  'test/server/logs.test.ts',
  'test/server/migrations.test.ts',
  'test/server/handshake.test.ts',
  'test/server/ingest-wire.test.ts',
  'test/server/control.test.ts',
  'test/server/probes.test.ts',
  'test/server/shutdown-retention.test.ts',
  'test/server/cli-db.test.ts',
  'test/server/cluster.test.ts',
  'test/server/last-seen-batch.test.ts',
  'test/admin/admin-api.test.ts',
  'test/admin/admin-audit.test.ts',
  'test/**/*.pg.test.ts',
];

export const PG_TEST_URL = process.env['CORTEX_TEST_POSTGRES_URL'] || 'postgres://postgres@127.0.0.1:5432/test';

function redact(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@');
}

export async function postgresProject(): Promise<{ include: string[]; env: Record<string, string> } | undefined> {
  const client = new pg.Client({ connectionString: PG_TEST_URL, connectionTimeoutMillis: 3000 });
  let problem: string | undefined;
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    problem = (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
  if (problem !== undefined) {
    if (process.env['CI'] === 'true') {
      throw new Error(`CI=true and no PostgreSQL answers at ${redact(PG_TEST_URL)} (${problem}); start it (.ci/run does) or set CORTEX_TEST_POSTGRES_URL`);
    }
    // vitest loads its config more than once (and workers inherit the environment): one line.
    if (process.env['CORTEX_PG_SKIP_NOTICE'] === '1') return undefined;
    process.env['CORTEX_PG_SKIP_NOTICE'] = '1';
    process.stderr.write(
      `PostgreSQL suites skipped: no PostgreSQL answers at ${redact(PG_TEST_URL)} (${problem}); start PostgreSQL 15 or set CORTEX_TEST_POSTGRES_URL to run them (CI=true makes this a failure)\n`,
    );
    return undefined;
  }
  return { include: STORAGE_SUITES, env: { CORTEX_TEST_DIALECT: 'postgres', CORTEX_TEST_POSTGRES_URL: PG_TEST_URL } };
}
