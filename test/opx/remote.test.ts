// The admin CLI against a running server (--server / CORTEX_SERVER, --admin-token-file /
// CORTEX_ADMIN_TOKEN, --ca): every agent command and probe over the admin API, over TLS
// with a private CA; the token never printed; no database file touched on the client.
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { requireServerCli } from '../server/spawn.js';
import { httpBase } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';
import { parseServerUrl } from '../../server/cli/remote.js';
import { CLI, tmp, serverRun as serverAsync } from './helpers.js';
import { storeUntilShown } from '../support/procs.js';

const ADMIN = 'opx-admin-token-0123456789abcdef-XYZ';
let t: TestServer;
let base = '';
let tokenFile = '';
let ca = '';
let cwd = '';

beforeAll(async () => {
  requireServerCli();
  const dir = tmp();
  const key = join(dir, 'key.pem');
  ca = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', ca, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  t = await startTestServer({ tls_cert: ca, tls_key: key, admin_token: ADMIN }, { controlPollMs: 50 });
  base = httpBase(t).replace(/^http:/, 'https:');
  tokenFile = join(dir, 'admin-token');
  writeFileSync(tokenFile, `${ADMIN}\n`, { mode: 0o600 });
  cwd = tmp(); // the client's folder: no database there, none created
}, 120_000);
afterAll(async () => {
  await t?.close();
});

const remote = async (args: string[], env: Record<string, string | undefined> = {}) => {
  const r = await serverAsync([...args, '--server', base, '--admin-token-file', tokenFile, '--ca', ca], { cwd, env: { CORTEX_SERVER: undefined, CORTEX_ADMIN_TOKEN: undefined, ...env } });
  expect(`${r.stdout}${r.stderr}`).not.toContain(ADMIN);
  return r;
};
const cfg = (hb: number) => JSON.stringify({ heartbeat_interval_secs: hb, max_batch_entries: 100, flush_interval_ms: 200, probe_concurrency: 1, log_sources: [] });

describe('remote admin CLI', () => {
  it('issue, list (--group, --groups), config get/set/clear, rotate, revoke, decommission, delete over https with a private CA', async () => {
    // far-2 (no group) issued beside far-1: it is used from decommission on
    const [issued, issuedSecond] = await Promise.all([remote(['agent', 'issue', '--host', 'far-1', '--group', 'edge', '--json']), remote(['agent', 'issue', '--host', 'far-2', '--json'])]);
    expect(issued.code, issued.stderr).toBe(0);
    const h = JSON.parse(issued.stdout) as { host_id: string; token: string; group: string };
    t.tokens.push(h.token);
    expect(h.group).toBe('edge');
    // the reads of far-1 in edge, side by side
    const [listRun, edgeRun, groupsRun, textRun, byStateRun, activeRun, defaultRun] = await Promise.all([
      remote(['agent', 'list', '--json']),
      remote(['agent', 'list', '--group', 'edge', '--json']),
      remote(['agent', 'list', '--groups', '--json']),
      remote(['agent', 'list']),
      remote(['agent', 'list', '--state', 'NeverConnected', '--group', 'edge', '--json']),
      remote(['agent', 'list', '--state', 'Active', '--group', 'edge']),
      remote(['agent', 'config', '--default']),
    ]);
    const list = JSON.parse(listRun.stdout) as { host_id: string; group_name: string; state: string }[];
    expect(list.find((a) => a.host_id === h.host_id)).toMatchObject({ group_name: 'edge', state: 'NeverConnected' });
    expect(JSON.parse(edgeRun.stdout)).toHaveLength(1);
    expect(JSON.parse(groupsRun.stdout)).toEqual([expect.objectContaining({ name: 'edge', members: 1 })]);
    expect(textRun.stdout).toMatch(/far-1 .*edge .*NeverConnected/);
    const byState = JSON.parse(byStateRun.stdout) as { host_id: string }[];
    expect(byState.map((a) => a.host_id)).toEqual([h.host_id]);
    expect(activeRun.stdout.trim()).toBe('no agents in group edge in state Active');
    // agent group over the admin API: into another group and back, the token kept
    const moved = await remote(['agent', 'group', h.host_id, '--set', 'far']);
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse((await remote(['agent', 'list', '--group', 'far', '--json'])).stdout)).toEqual([expect.objectContaining({ host_id: h.host_id })]);
    expect((await remote(['agent', 'group', h.host_id, '--set', 'edge'])).code).toBe(0);

    expect((await remote(['agent', 'config', '--group', 'edge', '--set', cfg(90)])).code).toBe(0);
    const [got, groupGot] = await Promise.all([remote(['agent', 'config', h.host_id, '--get']), remote(['agent', 'config', '--group', 'edge', '--get'])]);
    expect(JSON.parse(got.stdout).heartbeat_interval_secs).toBe(90);
    expect(got.stderr).toContain("group edge's config");
    expect(JSON.parse(groupGot.stdout).heartbeat_interval_secs).toBe(90);
    expect(groupGot.stderr).toContain("group edge: group edge's config"); // was "group 's config
    expect((await remote(['agent', 'config', h.host_id, '--set', cfg(40)])).code).toBe(0);
    expect(JSON.parse((await remote(['agent', 'config', h.host_id, '--get'])).stdout).heartbeat_interval_secs).toBe(40);
    const bad = (await remote(['agent', 'config', h.host_id, '--set', JSON.stringify({ ...JSON.parse(cfg(1)), log_sources: [{ kind: 'file', pathh: '/x' }] })]));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('/log_sources/0/pathh');
    expect(bad.stderr).toContain('/heartbeat_interval_secs');
    expect((await remote(['agent', 'config', h.host_id, '--clear'])).code).toBe(0);
    expect(JSON.parse((await remote(['agent', 'config', h.host_id, '--get'])).stdout).heartbeat_interval_secs).toBe(90);
    expect(JSON.parse(defaultRun.stdout)).toMatchObject({ log_sources: [] });

    expect((await remote(['agent', 'rotate', h.host_id, '--grace-secs', '60'])).stdout).toContain('rotation requested');
    const refused = (await remote(['agent', 'delete', h.host_id]));
    expect(refused.code).toBe(0); // NeverConnected: deletable
    const second = JSON.parse(issuedSecond.stdout) as { host_id: string; token: string };
    t.tokens.push(second.token);
    expect((await remote(['agent', 'decommission', second.host_id, '--drain-secs', '0'])).stdout).toContain('revoked now');
    expect((await remote(['agent', 'revoke', second.host_id])).code).toBe(0);
    const purged = (await remote(['agent', 'delete', second.host_id, '--purge']));
    expect(purged.stdout).toContain('with its 0 log');
    const unknown = (await remote(['agent', 'revoke', second.host_id]));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no agent with host_id');
    expect(readdirSync(cwd)).toEqual([]);
  }, 120_000); // many CLI runs (about 0.5 s each, more under load)

  it('tail -n and tail --follow over the admin API (SSE)', async () => {
    const h = await t.issue('tailed');
    const now = new Date().toISOString();
    const rows = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ({ seq: from + i, ts: now, severity: 'info', message: `line ${from + i}`, source: 'custom:t' }));
    await t.server.storage.ingest.commitBatch(h.host_id, rows(1, 30), now);
    const r = (await remote(['agent', 'tail', h.host_id, '-n', '5', '--json']));
    expect((JSON.parse(r.stdout) as { seq: number }[]).map((x) => x.seq)).toEqual([26, 27, 28, 29, 30]);
    const child = spawn(process.execPath, [CLI, 'agent', 'tail', h.host_id, '-n', '1', '--follow', '--server', base, '--admin-token-file', tokenFile, '--ca', ca], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const waiting: { want: string; resolve: () => void }[] = [];
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (const w of waiting.splice(0)) if (out.includes(w.want)) w.resolve();
      else waiting.push(w);
    });
    const seen = (want: string) => new Promise<void>((resolve) => (out.includes(want) ? resolve() : waiting.push({ want, resolve })));
    await seen('line 30');
    await t.server.storage.ingest.commitBatch(h.host_id, rows(31, 32), now);
    await seen('line 32');
    const exited = new Promise((res) => child.on('exit', (code) => res(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(out.split('\n').filter(Boolean).map((l) => l.split(' ')[0])).toEqual(['30', '31', '32']);
  }, 120_000); // many CLI runs (about 0.5 s each, more under load)

  it('tail filters over the admin API: --severity, --source, --grep, --since/--until, and --follow with a filter', async () => {
    const h = await t.issue('tail-filtered');
    const now = Date.now();
    const sev = ['info', 'err', 'warning', 'debug', 'crit'];
    const rows = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, k) => {
        const i = from + k;
        return { seq: i, ts: new Date(now - (20 - i) * 60_000).toISOString(), severity: sev[(i - 1) % sev.length] as string, message: i % 3 === 1 ? `line ${i}: Disk FULL` : `line ${i}`, source: i % 2 === 1 ? 'file:/var/log/app.log' : 'journald' };
      });
    await t.server.storage.ingest.commitBatch(h.host_id, rows(1, 12), new Date().toISOString());
    const seqs = async (args: string[]) => {
      const r = await remote(['agent', 'tail', h.host_id, '--json', ...args]);
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { seq: number }[]).map((x) => x.seq);
    };
    // the reads side by side
    const [bySeverity, lastTwo, grepped, window, bad] = await Promise.all([
      seqs(['--severity', 'err']),
      seqs(['--severity', 'err', '-n', '2']),
      seqs(['--grep', 'disk full', '--source', 'journald']),
      seqs(['--since', new Date(now - 18.5 * 60_000).toISOString(), '--until', '930s']),
      remote(['agent', 'tail', h.host_id, '--since', 'last week']),
    ]);
    expect(bySeverity).toEqual([2, 5, 7, 10, 12]);
    expect(lastTwo).toEqual([10, 12]);
    expect(grepped).toEqual([4, 10]);
    expect(window).toEqual([2, 3, 4]); // 18, 17, 16 minutes old (15.5 at most)
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since "last week" is neither');

    const child = spawn(process.execPath, [CLI, 'agent', 'tail', h.host_id, '-n', '1', '--follow', '--grep', 'FULL', '--server', base, '--admin-token-file', tokenFile, '--ca', ca], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let waiter: (() => void) | undefined;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      waiter?.();
    });
    const seen = (want: string) =>
      new Promise<void>((resolve) => {
        const check = () => (out.includes(want) ? resolve() : undefined);
        waiter = check;
        check();
      });
    await seen('line 10: Disk FULL');
    await t.server.storage.ingest.commitBatch(h.host_id, rows(13, 16), new Date().toISOString());
    await seen('line 16: Disk FULL');
    const exited = new Promise((res) => child.on('exit', (code) => res(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(out.split('\n').filter(Boolean).map((l) => l.split(' ')[0])).toEqual(['10', '13', '16']);

    // -n 0 --follow: only what is stored after it started (before: the whole history first)
    const fresh = spawn(process.execPath, [CLI, 'agent', 'tail', h.host_id, '-n', '0', '--follow', '--server', base, '--admin-token-file', tokenFile, '--ca', ca], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let freshOut = '';
    fresh.stdout.on('data', (d: Buffer) => (freshOut += d.toString()));
    let next = 17;
    try {
      next = await storeUntilShown('a new row shown by agent tail -n 0 --follow', () => freshOut, 17, (seq) => t.server.storage.ingest.commitBatch(h.host_id, rows(seq, seq), new Date().toISOString()));
    } finally {
      const gone = new Promise((res) => fresh.on('exit', res));
      fresh.kill('SIGINT');
      await gone;
    }
    expect(freshOut.split('\n').filter(Boolean).map((l) => Number(l.split(' ')[0])).filter((seq) => !(seq > 16 && seq < next)), freshOut).toEqual([]);
  }, 120_000); // many CLI runs (about 0.5 s each, more under load)

  it('CORTEX_SERVER and CORTEX_ADMIN_TOKEN; missing token, CA or server; --server with --db', async () => {
    const env = { CORTEX_SERVER: base, CORTEX_ADMIN_TOKEN: ADMIN };
    // a token that is not this server's: said so, not "give a token"
    const wrongFile = join(cwd, 'wrong.tok');
    writeFileSync(wrongFile, 'not-the-admin-token\n');
    // every case side by side (none changes anything)
    const [viaEnv, noToken, wrong, noCa, down, both, ftp, local, probe] = await Promise.all([
      serverAsync(['agent', 'list', '--json', '--ca', ca], { cwd, env }),
      serverAsync(['agent', 'list', '--server', base, '--ca', ca], { cwd, env: { CORTEX_ADMIN_TOKEN: undefined } }),
      serverAsync(['agent', 'list', '--server', base, '--ca', ca, '--admin-token-file', wrongFile], { cwd, env: { CORTEX_ADMIN_TOKEN: undefined } }),
      serverAsync(['agent', 'list', '--server', base, '--admin-token-file', tokenFile], { cwd }),
      serverAsync(['agent', 'list', '--server', 'http://127.0.0.1:1'], { cwd }),
      serverAsync(['agent', 'list', '--server', base, '--db', join(cwd, 'x.db')], { cwd }),
      serverAsync(['agent', 'list', '--server', 'ftp://x'], { cwd }),
      // --db wins over CORTEX_SERVER
      serverAsync(['agent', 'list', '--db', t.dbPath], { cwd, env }),
      serverAsync(['probe', '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', 'sys.uptime', '--ca', ca], { cwd, env }),
    ]);
    rmSync(wrongFile);
    expect(viaEnv!.code, viaEnv!.stderr).toBe(0);
    expect(Array.isArray(JSON.parse(viaEnv!.stdout))).toBe(true);
    expect(noToken!.code).toBe(1);
    expect(noToken!.stderr).toContain('needs its admin token: give --admin-token-file FILE or set CORTEX_ADMIN_TOKEN');
    expect(wrong!.code).toBe(1);
    expect(wrong!.stderr).toContain(`refused the admin token of --admin-token-file ${wrongFile}: it is not the one this server was started with`);
    expect(wrong!.stderr).not.toContain('not-the-admin-token');
    expect(noCa!.code).toBe(1);
    expect(noCa!.stderr).toContain('--ca FILE');
    expect(down!.code).toBe(1);
    expect(down!.stderr).toContain('error[E_CONNECT]: cannot reach http://127.0.0.1:1');
    expect(down!.stderr).not.toContain('this is a bug'); // was E_INTERNAL
    expect(both!.code).toBe(2);
    expect(ftp!.code).toBe(2);
    expect(local!.code).toBe(0);
    expect(probe!.code).toBe(1);
    expect(JSON.parse(probe!.stdout).error.code).toBe(-32004);
    expect(readdirSync(cwd)).toEqual([]);
    for (const r of [viaEnv!, noToken!, noCa!, probe!]) expect(`${r.stdout}${r.stderr}`).not.toContain(ADMIN);
  }, 120_000); // many CLI runs (about 0.5 s each, more under load)

  it('agent list --server lists a fleet larger than one page of the admin API (10,000), in the order of --db', async () => {
    const n = 10_050;
    await sql`insert into agents (host_id, hostname, created_at)
      with recursive k(i) as (select 1 union all select i + 1 from k where i < ${n})
      select printf('bulk-%05d', i), printf('bulk-%05d', i), '2026-01-01T00:00:00.000Z' from k`.execute(t.server.storage.db);
    try {
      const [viaApi, viaDb] = await Promise.all([remote(['agent', 'list', '--json']), serverAsync(['agent', 'list', '--json', '--db', t.dbPath], { cwd })]);
      expect(viaApi.code, viaApi.stderr).toBe(0);
      const ids = (JSON.parse(viaApi.stdout) as { host_id: string }[]).map((a) => a.host_id);
      expect(ids).toEqual((JSON.parse(viaDb.stdout) as { host_id: string }[]).map((a) => a.host_id));
      expect(ids.filter((id) => id.startsWith('bulk-'))).toHaveLength(n);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await sql`delete from agents where host_id like 'bulk-%'`.execute(t.server.storage.db);
    }
  }, 120_000);
});

describe('--server with a reverse proxy path prefix (DECISIONS I26)', () => {
  it('keeps the path up to the server routes: the console, agent and admin URLs all mean the same server', () => {
    const href = (v: string) => parseServerUrl(v, '--server').href;
    expect(href('https://logs.example.com:3100')).toBe('https://logs.example.com:3100/');
    expect(href('https://logs.example.com:3100/admin/agents')).toBe('https://logs.example.com:3100/'); // as before: the routes dropped
    for (const v of ['https://h/cortex', 'https://h/cortex/', 'https://h/cortex/ui/#/hosts/x', 'wss://h/cortex/ws/agent', 'https://h/cortex/admin/openapi.json', 'https://h/cortex/healthz']) {
      expect(href(v), v).toBe('https://h/cortex/');
    }
    expect(href('wss://h/a/b/ws/agent')).toBe('https://h/a/b/');
  });
});
