// `agent tail --follow --server URL` across a restart of the server (a rolling restart, a
// drain): the live tail is opened again after the last seq shown, with a line on stderr each
// way, until Ctrl-C. It used to end, exit 0 and silent, when the server stopped.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { buildServer, CLI, cli, serve } from '../server/spawn.js';
import { until } from '../support/procs.js';
import { tmp } from './helpers.js';

beforeAll(() => buildServer(), 120_000);

it('follows on after the server restarts: what was stored meanwhile is shown once, in order; Ctrl-C ends it with 0', async () => {
  const db = join(tmp(), 'c.db');
  const hostId = (JSON.parse(cli(['agent', 'issue', '--host', 'followed', '--json', '--db', db]).stdout) as { host_id: string }).host_id;
  const commit = async (from: number, to: number) => {
    const s = openSqliteStorage({ path: db });
    try {
      const now = new Date().toISOString();
      await s.ingest.commitBatch(hostId, Array.from({ length: to - from + 1 }, (_, i) => ({ seq: from + i, ts: now, severity: 'info', message: `line ${from + i}`, source: 'custom:t' })), now);
    } finally {
      await s.close();
    }
  };
  await commit(1, 1);
  const first = await serve(['--db', db]);
  const tail = spawn(process.execPath, [CLI, 'agent', 'tail', hostId, '--follow', '-n', '5', '--server', `http://127.0.0.1:${first.port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  tail.stdout.on('data', (d: Buffer) => (out += d.toString()));
  tail.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => tail.on('exit', (code) => resolve(code)));
  try {
    await until('line 1 shown', () => out.includes('line 1'));
    first.child.kill('SIGTERM');
    await first.exited;
    await until('the cut said', () => err.includes('the server ended the live tail (stopping or restarting?); following again from seq 2 as soon as the server answers (Ctrl-C ends)'));
    await commit(2, 3); // stored while no server runs
    const second = await serve(['--db', db, '--listen', `127.0.0.1:${first.port}`]);
    try {
      await until('lines 2 and 3 shown', () => out.includes('line 3'));
      expect(err).toContain(`following ${hostId} again from seq 2`);
      await commit(4, 4);
      await until('line 4 shown', () => out.includes('line 4'));
      expect(out.trim().split('\n').map((l) => /line (\d+)$/.exec(l)?.[1])).toEqual(['1', '2', '3', '4']);
      tail.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  } finally {
    tail.kill('SIGKILL');
  }
}, 120_000);
