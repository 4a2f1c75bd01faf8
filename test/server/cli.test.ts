import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { getSetting } from '../../server/db/settings.repository.js';
import { issueAgent } from '../../server/db/agents.repository.js';
import { makeTempDir } from './helpers.js';
import { CLI, requireServerCli, cli, serve } from './spawn.js';
import { helloParams, logEntries, TestClient } from './wire.js';
import { storeUntilShown } from '../support/procs.js';
import { cliAsync, cliEach } from '../support/scli-pool.js';

beforeAll(() => requireServerCli(), 60_000);

describe('cortex-server CLI', () => {
  it('--help on every command exits 0; no command or unknown flags exit 2', async () => {
    const helps = [['--help'], ['serve', '--help'], ['agent', '--help'], ['agent', 'issue', '--help'], ['agent', 'list', '--help'], ['agent', 'tail', '--help']];
    const [none, bad, ...helped] = await cliEach([[], ['agent', 'list', '--nope'], ...helps]);
    for (const [i, args] of helps.entries()) {
      const r = helped[i]!;
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toContain('Usage:');
    }
    expect(none!.code).toBe(2);
    expect(bad!.code).toBe(2);
    expect(bad!.stderr).toContain('--nope');
  });

  it('agent issue/list --json print exactly one JSON value; --host-id reissues; unknown host exits 2', async () => {
    const db = join(makeTempDir(), 'data', 'c.db');
    const r = cli(['agent', 'issue', '--host', 'web-1', '--json', '--db', db]);
    expect(r.code).toBe(0);
    const issued = JSON.parse(r.stdout);
    expect(Object.keys(issued).sort()).toEqual(['host_id', 'hostname', 'token']);
    expect(issued.host_id).toMatch(/^[0-9a-f-]{36}$/);
    // the list runs before the reissue: it must see the token of the first issue only
    const list = await cliAsync(['agent', 'list', '--json', '--db', db]);
    // independent of each other (the reissue changes no row the others look at)
    const [again, unknown, noHost, human] = await cliEach([
      ['agent', 'issue', '--host-id', issued.host_id, '--json', '--db', db],
      ['agent', 'issue', '--host-id', '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', '--db', db],
      ['agent', 'issue', '--db', db],
      ['agent', 'list', '--db', db],
    ]);
    expect(list.code).toBe(0);
    const rows = JSON.parse(list.stdout);
    expect(rows).toHaveLength(1);
    expect(rows[0].connection_state).toBe('NeverConnected');
    expect(rows[0]).not.toHaveProperty('token_hash');
    expect(list.stdout).not.toContain(issued.token);
    expect(again!.code).toBe(0);
    const re = JSON.parse(again!.stdout);
    expect(re.host_id).toBe(issued.host_id);
    expect(re.token).not.toBe(issued.token);
    expect(unknown!.code).toBe(2);
    expect(unknown!.stderr).toContain('agent list');
    expect(noHost!.code).toBe(2);
    expect(human!.stdout).toContain('web-1');
  });

  it('agent list --state: only the agents in the states named (any case, comma-separated); a state that is none exits 2', async () => {
    const db = join(makeTempDir(), 'data', 'c.db');
    const issue = (h: string) => ['agent', 'issue', '--host', h, '--json', '--db', db];
    // the first issue creates the database; the other two then run side by side
    const first = cli(issue('web-1'));
    const ids = [first, ...(await cliEach([issue('web-2'), issue('web-3')]))].map((r) => (JSON.parse(r.stdout) as { host_id: string }).host_id);
    expect(cli(['agent', 'revoke', ids[1] as string, '--db', db]).code).toBe(0);
    const states = ['Revoked', 'neverconnected', 'Revoked, NeverConnected'];
    const [none, bad, stateAndGroups, both, ...byState] = await cliEach([
      ['agent', 'list', '--state', 'Active', '--db', db],
      ['agent', 'list', '--state', 'Active,Offline', '--db', db],
      ['agent', 'list', '--state', 'Active', '--groups', '--db', db],
      // --group (one group's members) with --groups (every group) was taken as --groups alone
      ['agent', 'list', '--groups', '--group', 'edge', '--db', db],
      ...states.map((state) => ['agent', 'list', '--state', state, '--json', '--db', db]),
    ]);
    const listed = (state: string) => {
      const r = byState[states.indexOf(state)]!;
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { hostname: string; state: string }[]).map((a) => `${a.hostname}:${a.state}`);
    };
    expect(listed('Revoked')).toEqual(['web-2:Revoked']);
    expect(listed('neverconnected')).toEqual(['web-1:NeverConnected', 'web-3:NeverConnected']);
    expect(listed('Revoked, NeverConnected')).toEqual(['web-1:NeverConnected', 'web-2:Revoked', 'web-3:NeverConnected']);
    expect([none!.code, none!.stdout.trim()]).toEqual([0, 'no agents in state Active']);
    expect(bad!.code).toBe(2);
    expect(bad!.stderr).toContain('"Offline" is not a state; give one or more of NeverConnected, Active, Draining, Disconnected, Revoked, Decommissioned');
    expect(stateAndGroups!.code).toBe(2);
    expect([both!.code, both!.stdout]).toEqual([2, '']);
    expect(both!.stderr).toContain('--group lists the agents of one group; --groups lists every group: give one of them (agent list --group edge');
  });

  it('agent tail: last N oldest first, --json array with metadata parsed, human lines, unknown host exit 2', async () => {
    const db = join(makeTempDir(), 'data', 'c.db');
    const storage = openSqliteStorage({ path: db });
    await migrateToLatest(storage);
    const issued = await issueAgent(storage.db, 'web-1'); // set-up (agent issue has its own test above)
    const e = logEntries(1, 5).map((x, i) => ({ ...x, metadata: i === 4 ? { k: 'v' } : null }));
    await storage.ingest.commitBatch(issued.host_id, e, new Date().toISOString());
    await storage.close();
    const [r, human, unknown] = await cliEach([
      ['agent', 'tail', issued.host_id, '-n', '2', '--json', '--db', db],
      ['agent', 'tail', issued.host_id, '--db', db],
      ['agent', 'tail', '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01', '--db', db],
    ]);
    expect(r!.code).toBe(0);
    const rows = JSON.parse(r!.stdout);
    expect(rows.map((x: { seq: number }) => x.seq)).toEqual([4, 5]);
    expect(rows[1].metadata).toEqual({ k: 'v' });
    expect(rows[1]).not.toHaveProperty('metadata_json');
    expect(human!.stdout.trim().split('\n')).toHaveLength(5);
    expect(human!.stdout).toContain('line 5');
    expect(unknown!.code).toBe(2);
  });

  it('agent tail filters as the console search does: --severity (and worse), --source, --grep (any case), --since/--until (time or duration); bad values exit 2', async () => {
    const db = join(makeTempDir(), 'data', 'c.db');
    const storage = openSqliteStorage({ path: db });
    await migrateToLatest(storage);
    const issued = await issueAgent(storage.db, 'web-1'); // set-up (agent issue has its own test above)
    const now = Date.now();
    const sev = ['info', 'err', 'warning', 'debug', 'crit'] as const;
    // seq s is 13 - s minutes old (seq 12, the newest, one minute)
    const e = logEntries(1, 12).map((x, i) => ({
      ...x,
      ts: new Date(now - (12 - i) * 60_000).toISOString(),
      severity: sev[i % sev.length] as string,
      source: i % 2 === 0 ? 'file:/var/log/app.log' : 'journald',
      message: i % 3 === 0 ? `line ${i + 1}: Disk FULL on /var` : `line ${i + 1}: ok`,
    }));
    await storage.ingest.commitBatch(issued.host_id, e, new Date().toISOString());
    await storage.close();
    // every invocation reads the same rows: they run side by side, checked afterwards in order
    const queries = [
      ['--severity', 'err'],
      ['--severity', 'err', '-n', '2'],
      ['--source', 'journald', '-n', '3'],
      ['--grep', 'disk full'],
      ['--grep', 'DISK', '--source', 'journald'],
      ['--since', '330s'],
      ['--since', new Date(now - 10.5 * 60_000).toISOString(), '--until', new Date(now - 7.5 * 60_000).toISOString()],
      ['--severity', 'emerg'],
    ];
    const refused = [
      [['--severity', 'loud'], '--severity "loud": one of emerg, alert, crit, err, warning, notice, info, debug'],
      [['--since', 'yesterday'], '--since "yesterday" is neither a duration before now'],
      [['--until', '2026-13-01T00:00:00Z'], '--until "2026-13-01T00:00:00Z" is neither'],
      [['--since', '1h', '--until', '2h'], 'must be before --until'],
      [['--until', '1h', '--follow'], '--until and --follow do not go together'],
      [['--grep', 'x'.repeat(201)], '--grep must be 1-200 characters'],
    ] as const;
    const [human, ...runs] = await cliEach([
      ['agent', 'tail', issued.host_id, '--db', db, '--grep', 'full', '--severity', 'warning'],
      ...queries.map((args) => ['agent', 'tail', issued.host_id, '--json', '--db', db, ...args]),
      ...refused.map(([args]) => ['agent', 'tail', issued.host_id, '--db', db, ...args]),
    ]);
    const seqs = (args: string[]) => {
      const r = runs[queries.indexOf(args)]!;
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { seq: number }[]).map((x) => x.seq);
    };
    expect(seqs(queries[0]!)).toEqual([2, 5, 7, 10, 12]); // err and crit, oldest first
    expect(seqs(queries[1]!)).toEqual([10, 12]); // the last 2 that match
    expect(seqs(queries[2]!)).toEqual([8, 10, 12]);
    expect(seqs(queries[3]!)).toEqual([1, 4, 7, 10]);
    expect(seqs(queries[4]!)).toEqual([4, 10]);
    expect(seqs(queries[5]!)).toEqual([8, 9, 10, 11, 12]); // entry times within 5.5 minutes
    expect(seqs(queries[6]!)).toEqual([3, 4, 5]);
    expect(seqs(queries[7]!)).toEqual([]);
    expect(human!.stdout.trim().split('\n').map((l) => l.split(' ')[0])).toEqual(['7', '10']);
    for (const [i, [args, says]] of refused.entries()) {
      const r = runs[queries.length + i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(says);
    }
  });

  it('agent tail --follow with a filter prints only the new rows that match', async () => {
    const db = join(makeTempDir(), 'data', 'c.db');
    const storage = openSqliteStorage({ path: db });
    await migrateToLatest(storage);
    const issued = await issueAgent(storage.db, 'web-1'); // set-up (agent issue has its own test above)
    const at = (from: number, to: number, sevOf: (i: number) => string) => logEntries(from, to - from + 1).map((x, i) => ({ ...x, severity: sevOf(from + i), message: `row ${from + i}` }));
    await storage.ingest.commitBatch(issued.host_id, at(1, 4, (i) => (i === 2 ? 'err' : 'info')), new Date().toISOString());
    const child = spawn(process.execPath, [CLI, 'agent', 'tail', issued.host_id, '--follow', '--severity', 'err', '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let waiter: (() => void) | undefined;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      waiter?.();
    });
    const seen = (want: string) => new Promise<void>((resolve) => {
      const check = () => (out.includes(want) ? resolve() : undefined);
      waiter = check;
      check();
    });
    try {
      await seen('row 2');
      await storage.ingest.commitBatch(issued.host_id, at(5, 9, (i) => (i === 6 || i === 9 ? 'crit' : 'info')), new Date().toISOString());
      await seen('row 9');
    } finally {
      const exited = new Promise((res) => child.on('exit', res));
      child.kill('SIGINT');
      await exited;
      await storage.close();
    }
    expect(out.trim().split('\n').map((l) => l.split(' ')[0])).toEqual(['2', '6', '9']);
  });

  it('agent tail -n 0 --follow shows only rows stored after it started, not the history', async () => {
    const db = join(makeTempDir(), 'data', 'c.db');
    const storage = openSqliteStorage({ path: db });
    await migrateToLatest(storage);
    const issued = await issueAgent(storage.db, 'web-1'); // set-up (agent issue has its own test above)
    await storage.ingest.commitBatch(issued.host_id, logEntries(1, 50), new Date().toISOString());
    const child = spawn(process.execPath, [CLI, 'agent', 'tail', issued.host_id, '-n', '0', '--follow', '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    let next = 51;
    try {
      // the rows stored before it looked are history
      next = await storeUntilShown('a new row shown by agent tail -n 0 --follow', () => out, 51, (seq) => storage.ingest.commitBatch(issued.host_id, logEntries(seq, 1), new Date().toISOString()));
    } finally {
      const exited = new Promise((res) => child.on('exit', res));
      child.kill('SIGINT');
      await exited;
      await storage.close();
    }
    const shown = out.trim().split('\n').map((l) => Number(l.split(' ')[0]));
    expect(shown[0]).toBeGreaterThan(50); // before: rows 1..50 first
    expect(shown.filter((seq) => !(seq > 50 && seq < next)), out).toEqual([]);
  });

  it('agent tail escapes control characters a log line carries: no escape sequence reaches the terminal, no forged row; --json keeps the text', async () => {
    const db = join(makeTempDir(), 'data', 'c.db');
    const storage = openSqliteStorage({ path: db });
    await migrateToLatest(storage);
    const issued = await issueAgent(storage.db, 'web-1'); // set-up (agent issue has its own test above)
    const hostile = 'title \u001b]0;pwned\u0007 clear \u001b[2J\r\n9999 2026-01-01T00:00:00.000Z info    forged row \u202egnp.exe \u009b31m';
    const e = logEntries(1, 1).map((x) => ({ ...x, message: hostile, app_name: 'app\u001b[31m' }));
    await storage.ingest.commitBatch(issued.host_id, e, new Date().toISOString());
    await storage.close();
    const [human, asJson] = await cliEach([
      ['agent', 'tail', issued.host_id, '--db', db],
      ['agent', 'tail', issued.host_id, '--json', '--db', db],
    ]);
    expect(human!.code).toBe(0);
    expect(human!.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(human!.stdout.trim().split('\n')).toHaveLength(1);
    expect(human!.stdout).toContain('app\\x1b[31m: title \\x1b]0;pwned\\x07 clear \\x1b[2J\\r\\n9999 2026-01-01T00:00:00.000Z info    forged row \\u202egnp.exe \\x9b31m');
    const json = JSON.parse(asJson!.stdout) as { message: string }[];
    expect(json[0]!.message).toBe(hostile);
  });

  it('serve: bad --config exits 2 naming the failing path; cap violation and non-loopback bind exit 2', async () => {
    const dir = makeTempDir();
    // one config file per case: the refusals run side by side
    const [aboveCap, capViolated, truncated] = ['above-cap.json', 'cap-violated.json', 'truncated.json'].map((f) => join(dir, f)) as [string, string, string];
    writeFileSync(aboveCap, JSON.stringify({ max_batch_entries: 5000 }));
    writeFileSync(capViolated, JSON.stringify({ max_batch_entries: 100, default_agent_config: { heartbeat_interval_secs: 30, max_batch_entries: 500, flush_interval_ms: 200, probe_concurrency: 1, log_sources: [] } }));
    writeFileSync(truncated, '{"listen": ');
    const [r, r2, bad, r3, half] = await cliEach([
      ['serve', '--config', aboveCap, '--db', join(dir, 'c.db')],
      ['serve', '--config', capViolated, '--db', join(dir, 'c.db')],
      ['serve', '--config', truncated],
      ['serve', '--listen', '0.0.0.0:0', '--db', join(dir, 'c.db')],
      ['serve', '--tls-cert', join(dir, 'x.pem'), '--db', join(dir, 'c.db')],
    ]);
    expect(r!.code).toBe(2);
    expect(r!.stderr).toContain('/max_batch_entries');
    expect(r2!.code).toBe(2);
    expect(r2!.stderr).toContain('max_batch_entries');
    expect(bad!.code).toBe(2);
    expect(r3!.code).toBe(2);
    expect(r3!.stderr).toContain('--allow-insecure');
    // a setting to fix, not a usage mistake: E_CONFIG with its advice (was E_USAGE "run with --help")
    expect(r3!.stderr).toContain('error[E_CONFIG]: refusing to listen on 0.0.0.0 without TLS');
    expect([half!.code, half!.stderr.includes('error[E_CONFIG]: --tls-cert and --tls-key go together')]).toEqual([2, true]);
  });

  it('serve: enroll + push through the compiled server, settings recorded, SIGTERM exits 0, no token in any log line, metric or row (wherever a peer puts it: H65)', async () => {
    const dir = makeTempDir();
    const db = join(dir, 'data', 'c.db');
    const capture = join(dir, 'log.jsonl');
    const issued = JSON.parse(cli(['agent', 'issue', '--host', 'web-1', '--json', '--db', db]).stdout);
    const config = join(dir, 'server.json');
    writeFileSync(config, JSON.stringify({ max_batch_entries: 500, hello_timeout_ms: 4000 }));
    const s = await serve(['--db', db, '--config', config, '--max-batch-entries', '400', '--admin-token', 'admin-secret-token-123456', '--min-agent-version', '0.1.0'], { CORTEX_LOG_CAPTURE_FILE: capture });
    expect(s.stdout()).toContain('To enroll an agent');
    const c = await TestClient.open(s.url);
    const hello = await c.request('agent.hello', helloParams(issued.host_id, issued.token));
    const rotated = hello.result.rotated_token as string;
    expect(hello.result.config.max_batch_entries).toBe(400);
    const ack = await c.request('logs.push', { seq_start: 1, entries: logEntries(1, 300) });
    expect(ack.result.up_to_seq).toBe(300);
    // a failed hello with a wrong token is logged too: it must not carry the token
    const bad = await TestClient.open(s.url);
    await bad.request('agent.hello', helloParams(issued.host_id, 'w'.repeat(40)));
    // a token where a peer should not put it (a third-party agent's mistake, a hostile peer):
    // host_id and token swapped, the token as host_id, as a property name, as agent_version
    for (const params of [
      helloParams(rotated, issued.host_id),
      helloParams(rotated, rotated),
      { ...helloParams(issued.host_id, rotated), [rotated]: 1 },
      helloParams(issued.host_id, rotated, { agent_version: rotated }),
    ]) {
      const w = await TestClient.open(s.url);
      expect((await w.request('agent.hello', params)).error).toBeDefined();
      await w.closed;
    }
    // ... as a response id and a logs.push property in session, and as the agent's close reason
    c.send({ jsonrpc: '2.0', id: rotated, result: {} });
    expect((await c.request('logs.push', { seq_start: 301, [rotated]: 1, entries: [] })).error?.code).toBe(-32602);
    const metrics = await fetch(s.url.replace(/^ws/, 'http').replace(/\/ws\/agent$/, '/metrics')).then((r) => r.text());
    c.ws.close(1000, rotated.slice(0, 40));
    await c.closed;
    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    const storage = openSqliteStorage({ path: db });
    expect(await getSetting(storage.db, 'max_batch_entries')).toBe(400);
    const row = await storage.db.selectFrom('agents').select('last_disconnect_reason').where('host_id', '=', issued.host_id).executeTakeFirstOrThrow();
    await storage.close();
    const logs = readFileSync(capture, 'utf8') + s.stderr();
    expect(logs).toContain('agent connected');
    expect(metrics).toContain('cortex_handshakes_total');
    for (const [where, text] of [['logs', logs], ['/metrics', metrics], ['last_disconnect_reason', String(row.last_disconnect_reason)]] as const) {
      for (const tok of [issued.token, rotated, rotated.slice(0, 40), 'w'.repeat(40), 'admin-secret-token-123456']) expect(text.includes(tok), `token in ${where}`).toBe(false);
    }
  });
});
