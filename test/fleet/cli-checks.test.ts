// cortex-fleet's command line when things go wrong: arguments it cannot honour are refused
// up front (exit 2); an interrupted --enroll keeps every token issued; a URL that is not an
// agent endpoint stops the run; a worker process killed during the run is said and fails
// it; a token file that cannot be compacted does not cost the report.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { LIMITS, SUBPROTOCOL } from '@cortex/agent-protocol';
import { readTokenFile } from '../../fleet/identities.js';
import type { FleetReport } from '../../fleet/report.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { issueAgent } from '../../server/db/agents.repository.js';
import { ROOT, cleanupTempDirs, requireDist, startServer, tempDir, type ServerProc } from '../support/procs.js';

const CLI = join(ROOT, 'dist/fleet/cli.js');
const H1 = '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01';

let dir: string;
let server: ServerProc;
const hosts: Record<string, string> = {};
const children: ChildProcess[] = [];
const stubs: Server[] = [];
const wsServers: WebSocketServer[] = [];

beforeAll(async () => {
  requireDist();
  dir = tempDir('cortex-fleet-cli-checks-');
  const db = join(dir, 'server.db');
  const storage = openSqliteStorage({ path: db });
  await migrateToLatest(storage);
  for (const [name, n] of [['compact', 2], ['workers', 4]] as const) {
    const issued = [];
    for (let i = 0; i < n; i++) issued.push(await issueAgent(storage.db, `${name}-${i}`));
    hosts[name] = issued.map((x) => JSON.stringify(x)).join('\n') + '\n';
  }
  await storage.close();
  server = await startServer(db);
}, 30_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const s of stubs) {
    s.closeAllConnections();
    s.close();
  }
  for (const w of wsServers) w.close();
  await server?.kill();
  cleanupTempDirs();
});

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stderr holds a line matching `re`. */
  saw(re: RegExp): Promise<string>;
  exit: Promise<number | null>;
}

function start(cmd: string, args: string[]): Run {
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    saw(re) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = err.split('\n').find((l) => re.test(l));
          if (line !== undefined) return resolve(line);
          if (child.exitCode !== null) return reject(new Error(`exited before ${re}: ${err}`));
          waiters.push(check);
        };
        void exit.then(() => waiters.length > 0 && check());
        check();
      });
    },
  };
}

async function fleet(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = start(process.execPath, [CLI, ...args]);
  const code = await r.exit;
  return { code, stdout: r.stdout(), stderr: r.stderr() };
}

async function stub(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const s = createServer(handler);
  stubs.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `127.0.0.1:${(s.address() as AddressInfo).port}`;
}

function tokenFile(name: string, text: string): string {
  const f = join(dir, `${name}.jsonl`);
  writeFileSync(f, text, { mode: 0o600 });
  return f;
}

it('refuses, with exit 2 and the reason, what it cannot honour: before connecting anything', async () => {
  const file = tokenFile('one', `${JSON.stringify({ host_id: H1, token: 'a'.repeat(43) })}\n`);
  const base = ['--url', 'ws://127.0.0.1:9/ws/agent', '--tokens', file];
  const cases: Array<[string[], RegExp]> = [
    [['--url', 'ws://127.0.0.1:9/ws/agent', '--tokens', join(dir, 'nonexist.jsonl')], /no hosts to simulate: .*nonexist\.jsonl does not exist/],
    [[...base, '--enroll', '3', '--admin-url', 'notaurl'], /--admin-url "notaurl" is not an http\(s\) URL/],
    [[...base, '--seconds', '0'], /--seconds must be above 0/],
    [[...base, '--minutes', '0'], /--minutes must be above 0/],
    [[...base, '--report-every-s', '0.001'], /--report-every-s must be 0 .* or at least 1/],
    [[...base, '--server-pid', '2147483646'], /--server-pid 2147483646: no such process/],
    [[...base, '--agent-version', 'v1'], /--agent-version "v1" does not match the contract's agent_version pattern/],
    [[...base, '--probes', 'sys.uptime,foo.bar'], /--probes: foo\.bar is not a probe of the contract/],
    [[...base, '--message-bytes', String(LIMITS.max_message_chars + 1)], new RegExp(`--message-bytes must be an integer from 0 to ${LIMITS.max_message_chars}`)],
    // a token file that cannot take the rotated tokens: the fix and --no-persist are named
    [['--url', 'ws://127.0.0.1:9/ws/agent', '--tokens', join(file, 'sub.jsonl'), '--enroll', '1', '--admin-url', 'http://127.0.0.1:9'], /cannot write the token file .*ENOTDIR.*--no-persist/],
  ];
  const results = await Promise.all(cases.map(([args]) => fleet(args)));
  results.forEach((r, i) => {
    const [args, re] = cases[i]!;
    expect({ args, code: r.code }).toEqual({ args, code: 2 });
    expect(r.stderr, args.join(' ')).toMatch(re);
    expect(r.stdout).toBe('');
  });
});

it('an interrupted --enroll keeps each token issued in --tokens (0600) and says how many and where', async () => {
  let n = 0;
  const admin = await stub((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      if (n > 20) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'unavailable', message: 'going away' } }));
        return;
      }
      const id = `2b9a0b3a-7e3c-4d2a-9c0e-${String(n).padStart(12, '0')}`;
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ host_id: id, hostname: `h-${n}`, token: 'k'.repeat(40) + String(n).padStart(3, '0') }));
    });
  });
  const file = join(dir, 'enrolled.jsonl');
  const r = await fleet(['--url', server.url, '--tokens', file, '--enroll', '200', '--admin-url', `http://${admin}`, '--report-every-s', '0']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/enrollment stopped after 20 of 200 tokens: POST .*answered 503: going away/);
  expect(r.stderr).toContain(`the 20 tokens issued are saved in ${file}`);
  expect(r.stderr).not.toMatch(/unreachable|check --admin-url/);
  // issuing stopped at the failure: at most the requests already in flight went on
  expect(n).toBeLessThanOrEqual(20 + 16);
  expect(readTokenFile(file)).toHaveLength(20);
  expect(statSync(file).mode & 0o777).toBe(0o600);
});

it('stops with a clear error when the upgrade is refused with a status retrying cannot heal (a wrong URL)', async () => {
  const wrong = await stub((_req, res) => {
    res.writeHead(404);
    res.end('not found');
  });
  const file = tokenFile('wrong-url', `${JSON.stringify({ host_id: H1, token: 'a'.repeat(43) })}\n`);
  const t0 = Date.now();
  const r = await fleet(['--url', `ws://${wrong}/nope`, '--tokens', file, '--minutes', '10', '--backoff-base-ms', '10', '--backoff-cap-ms', '20', '--workers', '0', '--json', '--report-every-s', '0']);
  expect(r.code).toBe(1);
  expect(Date.now() - t0).toBeLessThan(60_000);
  const report = JSON.parse(r.stdout.trim()) as FleetReport;
  expect(report.gave_up).toEqual({ upgrade_http_404: 1 });
  expect(report.errors).toEqual({ http_404: 5 });
  expect(r.stderr).toMatch(/refused the WebSocket upgrade with HTTP 404 .*check --url/);
});

it('a worker process killed during the run is named with its agents, shown Lost, and fails the run', async () => {
  const file = tokenFile('workers', hosts['workers']!);
  const r = start(process.execPath, [CLI, '--url', server.url, '--tokens', file, '--workers', '2', '--report-every-s', '1', '--rate', '5']);
  // both workers' agents Active
  await r.saw(/"fleet progress".*"active":4/);
  const ps = start('pgrep', ['-P', String(r.child.pid)]);
  await ps.exit;
  const pids = ps.stdout().trim().split('\n').map(Number);
  expect(pids).toHaveLength(2);
  process.kill(pids[1]!, 'SIGKILL');
  const line = JSON.parse(await r.saw(/a worker process died/)) as Record<string, unknown>;
  expect(line).toMatchObject({ level: 'error', worker: 1, pid: pids[1], exit: 'SIGKILL', agents: 2, agent_indexes: [2, 3] });
  expect(line['host_ids']).toEqual(readTokenFile(file).slice(2).map((x) => x.host_id));
  await r.saw(/"fleet progress".*"active":2.*"lost":2/);
  r.child.kill('SIGTERM');
  expect(await r.exit).toBe(1);
  const report = JSON.parse(r.stdout().trim().split('\n').pop()!) as FleetReport;
  expect(report.states).toMatchObject({ Lost: 2, Stopped: 2 });
  expect(report.lost_workers).toMatchObject([{ worker: 1, exit: 'SIGKILL', agents: 2 }]);
  expect(r.stdout()).toMatch(/LOST: worker 1 \(pid \d+\) died \(SIGKILL\) with 2 agents/);
  expect(r.stderr()).toMatch(/worker processes died during the run/);
}, 30_000);

it('a token file that cannot be compacted at the end still gets the report, and a warning with the fix', async () => {
  const file = tokenFile('compact', hosts['compact']!);
  // the shell's pid is the fleet's (exec): its temporary file's name is taken by a folder
  const r = start('/bin/sh', ['-c', `mkdir "$0.tmp-$$" && exec "${process.execPath}" "${CLI}" "$@"`, file, '--url', server.url, '--tokens', file, '--seconds', '1', '--workers', '0', '--report-every-s', '0', '--json']);
  expect(await r.exit).toBe(0);
  const report = JSON.parse(r.stdout().trim()) as FleetReport;
  expect(report).toMatchObject({ agents: 2, hellos: 2, rotated_tokens: 2 });
  expect(r.stderr()).toMatch(/the token file .*compact\.jsonl was left uncompacted \(EISDIR.*last line of each host wins.*a writable folder.*--no-persist/);
  // still valid: the rotated tokens are its last lines
  expect(readTokenFile(file)).toHaveLength(2);
  expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(4);
});

it('a run whose entries the server never stores does not exit 0', async () => {
  // a server that takes the hello and refuses every logs.push (busy, retry soon)
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => SUBPROTOCOL });
  wsServers.push(wss);
  await new Promise((r) => wss.once('listening', r));
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { id?: number; method?: string };
      if (m.method === 'agent.hello') {
        const config = { heartbeat_interval_secs: 30, max_batch_entries: 1000, flush_interval_ms: 100, metrics_interval_secs: 60, probe_concurrency: 1, log_sources: [] };
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { server_version: '0', server_time: new Date().toISOString(), accepted_seq: 0, session_id: randomUUID(), config } }));
      } else if (m.method === 'logs.push') {
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32020, message: 'busy', data: { retry_after_ms: 100 } } }));
      }
    });
  });
  const file = tokenFile('never-stored', `${JSON.stringify({ host_id: H1, token: 'a'.repeat(43) })}\n`);
  const r = await fleet(['--url', `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws/agent`, '--tokens', file, '--no-persist', '--rate', '20', '--seconds', '1', '--workers', '0', '--json', '--report-every-s', '0']);
  const report = JSON.parse(r.stdout.trim()) as FleetReport;
  expect(report.hellos).toBe(1);
  expect(report.entries_generated).toBeGreaterThan(0);
  expect(report.entries_acked).toBe(0);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/entries were generated but none was stored/);
}, 30_000);
