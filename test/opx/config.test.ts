// agent config: --get / --default, every problem of --set at once with strict source
// checks, config groups (config.update to every connected member; a host's own config
// overrides its group's), agent list --group / --groups.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectAgent } from '../server/control-helpers.js';
import { requireServerCli } from '../server/spawn.js';
import { startTestServer, type TestServer } from '../server/wire.js';
import { issue, tmp, serverRun as server } from './helpers.js';

const base = { heartbeat_interval_secs: 30, max_batch_entries: 500, flush_interval_ms: 200, probe_concurrency: 2, log_sources: [] as unknown[] };
const cfg = (extra: Record<string, unknown> = {}) => JSON.stringify({ ...base, ...extra });

beforeAll(() => requireServerCli(), 120_000);

describe('agent config --get / --set on a database', () => {
  let db = '';
  let host = '';
  beforeAll(() => {
    db = join(tmp(), 'c.db');
    host = issue(db, 'web-1').host_id;
  });

  it('--get prints the server default until the host has its own; --default prints the default; --set round-trips', async () => {
    // the reads before --set side by side, and those after it
    const [r, byDefault] = await Promise.all([server(['agent', 'config', host, '--get', '--db', db]), server(['agent', 'config', '--default', '--db', db])]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ heartbeat_interval_secs: 30, log_sources: [] });
    expect(r.stderr).toContain('server default');
    expect(JSON.parse(byDefault.stdout)).toEqual(JSON.parse(r.stdout));
    const mine = cfg({ log_sources: [{ kind: 'file', path: '/var/log/dpkg.log', start_at: 'end' }] });
    expect((await server(['agent', 'config', host, '--set', mine, '--db', db])).code).toBe(0);
    const [got, hostDefault] = await Promise.all([server(['agent', 'config', host, '--get', '--db', db]), server(['agent', 'config', host, '--get', '--default', '--db', db])]);
    expect(got.stdout.trim()).toBe(mine);
    expect(got.stderr).toContain("the host's own config");
    expect(JSON.parse(hostDefault.stdout)).toMatchObject({ log_sources: [] });
  }, 120_000); // CLI runs: about 0.5 s each, more under load

  it('--set lists every problem at once with its JSON Pointer (schema, unknown keys, relative path, command not an array, cap) and changes nothing', async () => {
    const before = (await server(['agent', 'config', host, '--get', '--db', db])).stdout;
    const bad = cfg({
      heartbeat_interval_secs: 1,
      max_batch_entries: 5000,
      log_sources: [
        { kind: 'file', pathh: '/var/log/syslog' },
        { kind: 'file', path: 'var/log/apt/history.log' },
        { kind: 'custom', path: 'app', command: '/usr/bin/tail -F /x' },
        { kind: 'journald', path: '/var/log/journal' },
      ],
    });
    const r = await server(['agent', 'config', host, '--set', bad, '--db', db]);
    expect(r.code).toBe(2);
    for (const want of [
      '/heartbeat_interval_secs: must be >= 5',
      '/log_sources/0/pathh: is not a file source key',
      '/log_sources/0/path: is required',
      '/log_sources/1/path: must be an absolute path',
      '/log_sources/2/command: must be a non-empty array of strings',
      '/log_sources/3/path: is not a journald source key',
      "/max_batch_entries: 5000 exceeds the server's max_batch_entries (1000)",
    ]) expect(r.stderr).toContain(want);
    expect(r.stderr).toContain('error[E_CONFIG]: --set is not a valid AgentConfig (7 problems; nothing changed):\n');
    expect((await server(['agent', 'config', host, '--get', '--db', db])).stdout).toBe(before);
  }, 120_000); // CLI runs: about 0.5 s each, more under load

  it('one complete example per source kind (as in docs/configuration.md) is accepted', async () => {
    const all = cfg({
      log_sources: [
        { kind: 'file', path: '/var/log/apt/history.log', start_at: 'beginning', labels: { role: 'apt' } },
        { kind: 'journald', filter: '_SYSTEMD_UNIT=ssh.service' },
        { kind: 'docker', path: 'web-*', socket: '/var/run/docker.sock' },
        { kind: 'custom', path: 'dmesg', command: ['/usr/bin/dmesg', '--follow'] },
      ],
    });
    const r = await server(['agent', 'config', host, '--set', all, '--db', db]);
    // the only line on stderr: each host must allow the custom command itself (H37)
    expect(r.stderr).toBe(
      'note: a host runs a custom source\'s command, or listens at its socket, only when its own agent.json allows it: list in "custom_commands" the program "/usr/bin/dmesg" on each host (then restart its agent); a host that does not shows "not allowed on this host" in cortex-agent status\n',
    );
    expect(r.code).toBe(0);
  }, 120_000); // CLI runs: about 0.5 s each, more under load
});

describe('config groups', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({}, { controlPollMs: 50 });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a group config reaches every connected member as config.update; a host with its own config keeps it; list --group / --groups', async () => {
    const db = t.dbPath;
    const a = await t.issue('a');
    const b = await t.issue('b');
    const c = await t.issue('c');
    // (the three hosts side by side: each command changes one host)
    for (const r of await Promise.all([a, b, c].map((h) => server(['agent', 'issue', '--host-id', h.host_id, '--group', 'web', '--json', '--db', db])))) expect(r.code).toBe(0);
    // reissue gave new one-time tokens: take them
    const tokens = new Map<string, string>();
    const own = cfg({ heartbeat_interval_secs: 45 });
    const [ownSet, ...reissued] = await Promise.all([
      server(['agent', 'config', c.host_id, '--set', own, '--db', db]),
      ...[a, b, c].map((h) => server(['agent', 'issue', '--host-id', h.host_id, '--json', '--db', db])),
    ]);
    for (const [i, h] of [a, b, c].entries()) {
      const r = JSON.parse(reissued[i]!.stdout) as { token: string };
      t.tokens.push(r.token);
      tokens.set(h.host_id, r.token);
    }
    expect(ownSet!.code).toBe(0);
    const conns = await Promise.all([a, b, c].map((h) => connectAgent(t, ['sys.uptime'], { host_id: h.host_id, token: tokens.get(h.host_id) as string })));
    expect(conns[2]?.hello.config.heartbeat_interval_secs).toBe(45);
    const updates = conns.slice(0, 2).map((x) => x.client.next((m) => m.method === 'config.update'));
    const group = cfg({ heartbeat_interval_secs: 60 });
    const r = await server(['agent', 'config', '--group', 'web', '--set', group, '--db', db]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('2 member(s)');
    for (const u of await Promise.all(updates)) expect(u.params.config.heartbeat_interval_secs).toBe(60);
    expect(conns[2]?.client.messages.some((m) => m.method === 'config.update')).toBe(false);
    // the group's config for a member, the host's own for c
    const aGot = await server(['agent', 'config', a.host_id, '--get', '--db', db]);
    expect(JSON.parse(aGot.stdout).heartbeat_interval_secs).toBe(60);
    expect(aGot.stderr).toContain("group web's config");
    // c drops its own config: it falls back to the group's; the listings (which no config
    // changes) side by side
    const back = conns[2]!.client.next((m) => m.method === 'config.update');
    const [cleared, membersRun, groupsRun, noneRun] = await Promise.all([
      server(['agent', 'config', c.host_id, '--clear', '--db', db]),
      server(['agent', 'list', '--group', 'web', '--json', '--db', db]),
      server(['agent', 'list', '--groups', '--json', '--db', db]),
      server(['agent', 'list', '--group', 'db', '--db', db]),
    ]);
    expect(cleared!.code).toBe(0);
    expect((await back).params.config.heartbeat_interval_secs).toBe(60);
    // listing
    const members = JSON.parse(membersRun!.stdout) as { group_name: string }[];
    expect(members).toHaveLength(3);
    const groups = JSON.parse(groupsRun!.stdout) as { name: string; members: number }[];
    expect(groups).toEqual([expect.objectContaining({ name: 'web', members: 3 })]);
    expect(noneRun!.stdout).toContain('no agents in group db');
    for (const x of conns) x.client.ws.close();
  }, 120_000); // CLI runs: about 0.5 s each, more under load
});
