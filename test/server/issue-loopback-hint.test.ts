// `agent issue` prints an enroll command with the URL serve recorded for itself. Behind a
// reverse proxy (README, docs/operations.md) that is ws://127.0.0.1:3100/ws/agent: on an
// agent's host, its own loopback. The human output then says so, right after the commands.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { setSetting } from '../../server/db/settings.repository.js';
import { makeTempDir } from './helpers.js';
import { requireServerCli, cli, serve, type ServeProcess } from './spawn.js';
import { serveBanner } from '../../server/cli/hints.js';

beforeAll(() => requireServerCli(), 60_000);

const NOTE = /^The server listens on loopback \((.+?)\): on another host, give --server the URL agents reach it at \(e\.g\. wss:\/\/HOST\/ws\/agent through your reverse proxy\)( and drop --allow-insecure)?\.$/m;

/** A migrated SQLite database whose recorded agent URL is `url` (as serve records it). */
async function dbWithAgentUrl(url: string | undefined): Promise<string> {
  const db = join(makeTempDir(), 'c.db');
  const storage = openSqliteStorage({ path: db });
  await migrateToLatest(storage);
  if (url !== undefined) await setSetting(storage.db, 'agent_url', url);
  await storage.close();
  return db;
}

/** The human `agent issue` output: stdout lines from "Run these" on. */
function commands(stdout: string): string[] {
  const lines = stdout.trimEnd().split('\n');
  return lines.slice(lines.findIndex((l) => l.startsWith('Run these')) + 1);
}

describe('agent issue: a loopback URL is said to be one', () => {
  let s: ServeProcess | undefined;
  afterAll(async () => {
    s?.child.kill('SIGTERM');
    await s?.exited;
  });

  it('after serve on 127.0.0.1: the line after the enroll and run commands names loopback and what to give instead', async () => {
    const db = join(makeTempDir(), 'data', 'c.db');
    const tokenFile = join(makeTempDir(), 'admin-token');
    writeFileSync(tokenFile, 'loopback-hint-admin-token-0123456789\n', { mode: 0o600 });
    s = await serve(['--db', db, '--admin-token-file', tokenFile]);
    expect(s.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/ws\/agent$/);
    const local = cli(['agent', 'issue', '--host', 'web-1', '--db', db]);
    const remote = cli(['agent', 'issue', '--host', 'web-2', '--server', `http://127.0.0.1:${s.port}`, '--admin-token-file', tokenFile]);
    for (const r of [local, remote]) {
      expect(r.code, r.stderr).toBe(0);
      const [enroll, run, note, ...rest] = commands(r.stdout);
      expect(enroll).toContain(`enroll --server ${s.url} `);
      expect(enroll).toMatch(/ --allow-insecure$/);
      expect(run).toMatch(/ run --state-dir .* --allow-insecure$/);
      expect(note).toBe('The server listens on loopback (127.0.0.1): on another host, give --server the URL agents reach it at (e.g. wss://HOST/ws/agent through your reverse proxy) and drop --allow-insecure.');
      expect(rest).toEqual([]);
    }
    // --json stays the one object it was
    const json = cli(['agent', 'issue', '--host', 'web-3', '--json', '--db', db]);
    expect(json.code, json.stderr).toBe(0);
    expect(Object.keys(JSON.parse(json.stdout)).sort()).toEqual(['host_id', 'hostname', 'token']);
    expect(json.stdout).not.toMatch(/loopback/);
  }, 30_000);

  it('[::1] and wss:// on loopback: named, and no --allow-insecure to drop', async () => {
    const v6 = cli(['agent', 'issue', '--host', 'h', '--db', await dbWithAgentUrl('ws://[::1]:3100/ws/agent')]);
    expect(v6.code, v6.stderr).toBe(0);
    expect(NOTE.exec(v6.stdout)?.slice(1)).toEqual(['::1', ' and drop --allow-insecure']);
    const tls = cli(['agent', 'issue', '--host', 'h', '--db', await dbWithAgentUrl('wss://127.0.0.1:3100/ws/agent')]);
    expect(tls.code, tls.stderr).toBe(0);
    expect(NOTE.exec(tls.stdout)?.slice(1)).toEqual(['127.0.0.1', undefined]);
  });

  it('every address (0.0.0.0, ::): no address to connect to, said in agent issue and in the serve banner', async () => {
    for (const [url, host] of [['ws://0.0.0.0:3100/ws/agent', '0.0.0.0'], ['ws://[::]:3100/ws/agent', '::']] as const) {
      const r = cli(['agent', 'issue', '--host', 'h', '--db', await dbWithAgentUrl(url)]);
      expect(r.code, r.stderr).toBe(0);
      expect(commands(r.stdout)[2]).toBe(`The server listens on every address (${host}), which is no address to connect to: give --server this machine's name or IP address as agents reach it (e.g. ws://logs.example.com:PORT/ws/agent).`);
      expect(serveBanner(url, '/var/lib/cortex/c.db')).toContain(`The server listens on every address (${host})`);
    }
    // the banner of a loopback server (the README's first steps, agent and server on one machine) stays as it was
    expect(serveBanner('ws://127.0.0.1:3100/ws/agent', '/var/lib/cortex/c.db')).not.toMatch(/listens on/);
  });

  it('no note for a URL agents can reach, nor for the placeholder when serve never ran', async () => {
    for (const url of ['wss://cortex.example.com/ws/agent', 'ws://10.0.0.5:3100/ws/agent', undefined]) {
      const r = cli(['agent', 'issue', '--host', 'h', '--db', await dbWithAgentUrl(url)]);
      expect(r.code, r.stderr).toBe(0);
      expect(commands(r.stdout), String(url)).toHaveLength(2);
      expect(r.stdout).not.toMatch(/loopback/);
    }
  });
});
