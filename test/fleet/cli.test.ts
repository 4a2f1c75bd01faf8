// cortex-fleet as a command: bad usage and bad token files exit 2 naming the problem; a
// short run against the reference server (one worker process) ends with one JSON line and
// leaves the rotated tokens in the compacted token file.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readTokenFile } from '../../fleet/identities.js';
import type { FleetReport } from '../../fleet/report.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { issueAgent } from '../../server/db/agents.repository.js';
import { ROOT, cleanupTempDirs, requireDist, startServer, tempDir } from '../support/procs.js';

const CLI = join(ROOT, 'dist/fleet/cli.js');

beforeAll(() => requireDist());
afterAll(() => cleanupTempDirs());

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

it('exits 2 naming the problem on bad usage or a malformed token file', async () => {
  const noUrl = await run(['--tokens', 'x']);
  expect(noUrl.code).toBe(2);
  expect(noUrl.stderr).toMatch(/--url is required/);
  const dir = tempDir('cortex-fleet-cli-');
  const file = join(dir, 'tokens.jsonl');
  writeFileSync(file, '{"host_id":"2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01","token":"' + 'a'.repeat(40) + '"}\n{oops\n');
  const bad = await run(['--url', 'ws://127.0.0.1:9/ws/agent', '--tokens', file]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/tokens\.jsonl line 2 is not JSON/);
  const tooMany = await run(['--url', 'ws://127.0.0.1:9/ws/agent', '--tokens', file.replace('tokens', 'none'), '--agents', '3']);
  expect(tooMany.code).toBe(2);
  expect(tooMany.stderr).toMatch(/no hosts to simulate/);
  const http = await run(['--url', 'http://127.0.0.1:9/ws/agent', '--tokens', file]);
  expect(http.code).toBe(2);
  expect(http.stderr).toMatch(/ws:\/\/ or wss:\/\//);
});

it('runs 5 agents in a worker process for 2 s and ends with one JSON line; the token file holds the rotated tokens', async () => {
  const dir = tempDir('cortex-fleet-cli-');
  const db = join(dir, 'server.db');
  const storage = openSqliteStorage({ path: db });
  await migrateToLatest(storage);
  const issued = [];
  for (let i = 0; i < 5; i++) issued.push(await issueAgent(storage.db, `cli-${i}`));
  await storage.close();
  const file = join(dir, 'tokens.jsonl');
  writeFileSync(file, issued.map((x) => JSON.stringify(x)).join('\n') + '\n');
  const server = await startServer(db);
  try {
    const r = await run(['--url', server.url, '--tokens', file, '--rate', '10', '--seconds', '2', '--workers', '1', '--server-pid', String(server.pid), '--json', '--report-every-s', '0']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0] as string) as FleetReport;
    expect(report).toMatchObject({ agents: 5, workers: 1, hellos: 5, rotated_tokens: 5, gave_up: {}, errors: {} });
    expect(report.entries_acked).toBe(report.entries_generated);
    expect(report.entries_acked).toBeGreaterThan(0);
    expect(report.ack_latency_ms.p99).toBeGreaterThan(0);
    expect(report.server_rss_bytes?.peak).toBeGreaterThan(0);
    // compacted: one line per host, each with its rotated token; no token in any output
    const text = readFileSync(file, 'utf8');
    expect(text.trim().split('\n')).toHaveLength(5);
    const now = readTokenFile(file);
    for (const x of issued) {
      const t = now.find((n) => n.host_id === x.host_id)?.token;
      expect(t).toBeDefined();
      expect(t).not.toBe(x.token);
      expect(r.stdout + r.stderr).not.toContain(t as string);
      expect(r.stdout + r.stderr).not.toContain(x.token);
    }
    // a second run with the same file reconnects with the long-lived tokens (no rotation) and
    // continues each host's seqs after what the server already has
    const again = await run(['--url', server.url, '--tokens', file, '--rate', '50', '--seconds', '1', '--workers', '0', '--json', '--report-every-s', '0']);
    expect(again.code, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout.trim()) as FleetReport;
    expect(second).toMatchObject({ hellos: 5, rotated_tokens: 0, gave_up: {} });
    expect(second.entries_acked).toBe(second.entries_generated);
    expect(await server.stop()).toBe(0);
    const sqlite = new Database(db, { readonly: true });
    const rows = sqlite.prepare('select host_id, count(*) as n, min(seq) as lo, max(seq) as hi from logs group by host_id').all() as { host_id: string; n: number; lo: number; hi: number }[];
    sqlite.close();
    expect(rows.reduce((a, r) => a + r.n, 0)).toBe(report.entries_generated + second.entries_generated);
    for (const r of rows) expect({ lo: r.lo, hi: r.hi }).toEqual({ lo: 1, hi: r.n });
  } finally {
    await server.kill();
  }
}, 60_000);
