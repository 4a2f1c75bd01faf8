// The deviations issue 15 found between the seed and main, each fixed and pinned here
// (contract/rules.json names the rule ids; DECISIONS K1-K3).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { METHOD_CATALOG, ERROR_TABLE } from '@cortex/agent-protocol';
import { checkServerUrl } from '../../agent/socket.js';
import { checkTargetUrl } from '../../conformance/util.js';
import { makeTempDir } from '../server/helpers.js';
import { requireServerCli, cli, ROOT } from '../server/spawn.js';
import { enroll, startTestServer, type TestServer } from '../server/wire.js';
import { AGENT_CLI_BUNDLE } from '../support/cli-bundles.js';

let t: TestServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('R-ING-19 metrics.push answers -32004 UnknownHost, a code its catalog entry lists (DECISIONS K1)', () => {
  it('the catalog lists -32004 for metrics.push, and the server answers it when the host row disappeared', async () => {
    const entry = METHOD_CATALOG.find((m) => m.name === 'metrics.push');
    expect(entry?.errors).toContain(-32004);
    expect(ERROR_TABLE.find((e) => e.code === -32004)?.name).toBe('UnknownHost');
    t = await startTestServer();
    const a = await enroll(t);
    await t.server.storage.db.deleteFrom('agents').where('host_id', '=', a.host_id).execute();
    const r = await a.client.request('metrics.push', { ts: '2026-05-16T19:43:00.000Z', samples: [{ name: 'load1', value: 0.5 }] });
    expect(r.error?.code).toBe(-32004);
    // every error the server answers metrics.push with is one its catalog entry lists
    expect(entry?.errors).toContain(r.error?.code);
    const rows = await t.server.storage.db.selectFrom('metrics').selectAll().where('host_id', '=', a.host_id).execute();
    expect(rows).toEqual([]);
    a.client.ws.close();
    await a.client.closed;
  });
});

describe('R-CLI-02 cortex-server probe takes --db like every other admin command (DECISIONS K2)', () => {
  beforeAll(() => requireServerCli(), 60_000);

  it('an unknown host in --db is refused with exit 2 before any call; a known one goes on to --url', () => {
    const db = join(makeTempDir(), 'data', 'c.db');
    const issued = JSON.parse(cli(['agent', 'issue', '--host', 'web-1', '--json', '--db', db]).stdout) as { host_id: string };
    // Port 1 refuses connections: reaching it proves the --db check passed.
    const unknown = cli(['probe', '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', 'sys.uptime', '--url', 'http://127.0.0.1:1', '--db', db]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no agent with host_id 2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01 in .*agent list --db/);
    const known = cli(['probe', issued.host_id, 'sys.uptime', '--url', 'http://127.0.0.1:1', '--db', db]);
    expect(known.code).toBe(1);
    expect(known.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:1/);
    expect(cli(['probe', '--help']).stdout).toMatch(/--db PATH/);
  });
});

describe('R-WIRE-01 plain ws:// only to a loopback host, and only with allow_insecure (DECISIONS K3)', () => {
  it('the agent refuses ws:// to any other host even with --allow-insecure; loopback needs the flag', () => {
    for (const url of ['ws://127.0.0.1:3100/ws/agent', 'ws://127.1.2.3:1/ws/agent', 'ws://localhost:3100/ws/agent', 'ws://[::1]:3100/ws/agent']) {
      expect(checkServerUrl(url, true), url).toBeNull();
      expect(checkServerUrl(url, false), url).toMatch(/--allow-insecure/);
    }
    for (const url of ['ws://10.0.0.4:3100/ws/agent', 'ws://logs.example.com/ws/agent', 'ws://[fe80::1]:3100/ws/agent', 'ws://128.0.0.1/ws/agent', 'ws://127.0.0.1.example.com/ws/agent']) {
      expect(checkServerUrl(url, true), url).toMatch(/non-loopback host.*use wss:\/\//);
      expect(checkServerUrl(url, false), url).toMatch(/non-loopback host/);
    }
    expect(checkServerUrl('wss://logs.example.com/ws/agent', false)).toBeNull();
  });

  it('the agent CLI exits 2 for ws:// to a non-loopback host with --allow-insecure, and writes nothing', () => {
    const dir = join(makeTempDir(), 'state');
    const r = spawnSync(process.execPath, [AGENT_CLI_BUNDLE, 'enroll', '--server', 'ws://10.0.0.4:3100/ws/agent', '--token', 'x'.repeat(43), '--host-id', '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', '--state-dir', dir, '--allow-insecure'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/non-loopback host/);
    expect(existsSync(join(dir, 'token'))).toBe(false);
  });

  it('the conformance runner agrees: ws:// to a non-loopback host is bad usage (exit 2), loopback and wss:// are fine', () => {
    expect(checkTargetUrl('ws://127.0.0.1:3100/ws/agent')).toBeNull();
    expect(checkTargetUrl('wss://logs.example.com/ws/agent')).toBeNull();
    expect(checkTargetUrl('ws://10.0.0.4:3100/ws/agent')).toMatch(/non-loopback host.*wss:\/\//);
    expect(checkTargetUrl('http://127.0.0.1:3100/')).toMatch(/ws:\/\/ or wss:\/\//);
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/conformance/cli.js'), 'server', '--url', 'ws://10.0.0.4:3100/ws/agent', '--enroll-token', 'x'.repeat(43), '--host-id', '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/non-loopback host/);
  });
});
