// Several server processes may share one SQLite database: migrations must run once and
// concurrent ingest commits must wait for each other (busy_timeout), not fail.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAgent, issueAgent } from '../../server/db/agents.repository.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest, migrations } from '../../server/db/migrations/index.js';
import { makeTempDir } from './helpers.js';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '..', '..');
let dir: string;
let worker: string;

beforeAll(async () => {
  dir = makeTempDir();
  worker = join(dir, 'storage-worker.cjs');
  await build({
    entryPoints: [join(import.meta.dirname, 'fixtures', 'storage-worker.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['better-sqlite3'],
    outfile: worker,
    logLevel: 'silent',
  });
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function spawnWorker(...args: string[]) {
  return run(process.execPath, [worker, ...args], {
    env: { ...process.env, NODE_PATH: join(repo, 'node_modules') },
    timeout: 60_000,
  });
}

describe('several processes on one database', () => {
  it('migrate concurrently: exactly one applies the migrations, all succeed', async () => {
    const db = join(dir, 'concurrent', 'cortex.db');
    const outputs = await Promise.all([1, 2, 3, 4].map(() => spawnWorker('migrate', db)));
    const applied = outputs.map((o) => JSON.parse(o.stdout) as string[]);
    expect(applied.filter((a) => a.length > 0)).toEqual([Object.keys(migrations)]);

    const storage = openSqliteStorage({ path: db });
    try {
      expect(await migrateToLatest(storage)).toEqual([]);
    } finally {
      await storage.close();
    }
  }, 60_000);

  it('commit concurrently without losing or duplicating a row', async () => {
    const db = join(dir, 'ingest', 'cortex.db');
    const storage = openSqliteStorage({ path: db });
    try {
      await migrateToLatest(storage);
      const { host_id } = await issueAgent(storage.db, 'shared');
      // overlapping ranges from three processes at once
      const results = await Promise.all([
        spawnWorker('ingest', db, host_id, '1', '3000', '500'),
        spawnWorker('ingest', db, host_id, '1001', '4000', '250'),
        spawnWorker('ingest', db, host_id, '2001', '5000', '1000'),
      ]);
      for (const r of results) expect(JSON.parse(r.stdout)).toHaveProperty('accepted');
      expect((await getAgent(storage.db, host_id))?.accepted_seq).toBe(5000);
      const { n, distinct } = await storage.db
        .selectFrom('logs')
        .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.count<number>('seq').distinct().as('distinct')])
        .where('host_id', '=', host_id)
        .executeTakeFirstOrThrow();
      expect(Number(n)).toBe(Number(distinct));
      // 4001..5000 are only ever sent by the third process, above anything the others accept
      const top = await storage.db
        .selectFrom('logs')
        .select('seq')
        .where('host_id', '=', host_id)
        .where('seq', '>', 4000)
        .execute();
      expect(top).toHaveLength(1000);
    } finally {
      await storage.close();
    }
  }, 60_000);
});
