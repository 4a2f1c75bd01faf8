// `agent tail … | head`, `agent list | head`: the reader closing the pipe early ends the
// command quietly (exit 0, nothing on stderr), not with an EPIPE stack trace.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { issueAgent } from '../../server/db/agents.repository.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { buildServer } from '../server/spawn.js';
import { CLI, tmp } from './helpers.js';

let db = '';
let hostId = '';
beforeAll(async () => {
  buildServer();
  db = join(tmp(), 'c.db');
  const s = openSqliteStorage({ path: db });
  await migrateToLatest(s);
  for (let i = 0; i < 600; i++) await issueAgent(s.db, `host-${String(i).padStart(4, '0')}-${'x'.repeat(100)}`);
  hostId = (await issueAgent(s.db, 'tail-host')).host_id;
  const now = new Date().toISOString();
  const rows = Array.from({ length: 4000 }, (_, i) => ({ seq: i + 1, ts: now, severity: 'info', message: `line ${i} ${'y'.repeat(100)}`, source: 'file:/var/log/x.log' }));
  await s.ingest.commitBatch(hostId, rows, now);
  await s.close();
}, 120_000);

function piped(args: string): { code: number | null; stdout: string; stderr: string } {
  // pipefail: the exit status is the CLI's, not head's. The output (> 400 KB) is far
  // larger than a pipe's buffer, so the CLI is still writing when head goes away.
  const r = spawnSync('bash', ['-c', `set -o pipefail; ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} ${args} --db ${JSON.stringify(db)} | head -c 4096`], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

it('agent tail -n 4000 | head: exit 0, no stack trace', () => {
  const r = piped(`agent tail ${hostId} -n 4000`);
  expect(r.stdout).toHaveLength(4096);
  expect(r.stdout.startsWith('1 ')).toBe(true);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
});

it('agent list | head and agent tail --json | head: exit 0, no stack trace', () => {
  for (const args of ['agent list', `agent tail ${hostId} -n 4000 --json`]) {
    const r = piped(args);
    expect(r.stdout, args).toHaveLength(4096);
    expect(r.stderr, args).toBe('');
    expect(r.code, args).toBe(0);
  }
});
