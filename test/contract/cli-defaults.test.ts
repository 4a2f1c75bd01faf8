// R-CLI-01: every "(default X)" a command's --help writes is the value the program uses when
// the option is not given. Each help line with a default must have a check here: a new
// default in a --help text fails this test until it is checked.
import { poolArg } from '../../server/cli-db.js';
import { SessionRegistry, defaultServerId } from '../../server/cluster/registry.js';
import { DEFAULT_DB_WAIT_SECS } from '../../server/cli/serve.js';
import { hostname } from 'node:os';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@cortex/agent-protocol';
import { DEFAULT_PROBE_FILE_TAIL_PATHS } from '../../agent/agent.js';
import { Backoff } from '../../agent/backoff.js';
import { DEFAULT_HELLO_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from '../../agent/session.js';
import { createFileSource } from '../../agent/sources/file.source.js';

import { resolveSettings } from '../../server/settings.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import { serverOptionsFrom, HELP as RUNNER_HELP } from '../../conformance/options.js';
import { agentOptionsFrom } from '../../conformance/agent-suite.js';
import { parseArgs } from '../../conformance/util.js';
import { parseFleetArgs, resolveFleetRun } from '../../fleet/cli-options.js';
import { planWorkers } from '../../fleet/fleet.js';
import { requireServerCli, ROOT } from '../server/spawn.js';
import { AGENT_CLI_BUNDLE, SERVER_CLI_BUNDLE } from '../support/cli-bundles.js';
import { cliAsync } from '../support/scli-pool.js';

/** A temporary folder, removed after this file's tests. */
const folders: string[] = [];
function tempFolder(): string {
  const d = mkdtempSync(join(tmpdir(), 'cortex-cli-defaults-'));
  folders.push(d);
  return d;
}
afterAll(() => {
  for (const d of folders.splice(0)) rmSync(d, { recursive: true, force: true });
});

beforeAll(() => requireServerCli(), 60_000);

function help(script: string, args: string[]): string {
  const r = spawnSync(process.execPath, [script, ...args, '--help'], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/** help(), without blocking: several run side by side. */
async function helpAsync(script: string, args: string[]): Promise<string> {
  const r = await cliAsync([...args, '--help'], { script });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

/** An HTTP server on 127.0.0.1 with `handler`: its url and how to close it. */
async function listen(handler: http.RequestListener): Promise<{ url: string; close: () => void }> {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: () => srv.close() };
}

/** "--flag ... (default X" → { flag: X } for every option line of a help text. */
function defaults(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let flag: string | undefined;
  let paragraph = '';
  for (const line of text.split('\n')) {
    const m = /^\s+(--[a-z0-9-]+|-n)\b/.exec(line);
    if (m) flag = m[1];
    // Prose (not indented) ends the option above; a default there belongs to the last
    // setting_name the paragraph mentions.
    if (!/^\s/.test(line)) flag = undefined;
    paragraph = line.trim() === '' ? '' : `${paragraph} ${line}`;
    const d = /\(default:? ([^;)]+)/.exec(line);
    if (!d) continue;
    const key = flag ?? [...paragraph.slice(0, paragraph.lastIndexOf('(default')).matchAll(/\b([a-z]+_[a-z0-9_]+)\b/g)].at(-1)?.[1];
    if (key !== undefined) out.set(key, d[1]!.trim());
  }
  return out;
}

function checkAll(text: string, used: Record<string, () => unknown>): void {
  const found = defaults(text);
  expect(found.size).toBeGreaterThan(0);
  for (const [flag, written] of found) {
    const get = used[flag];
    expect(get, `${flag}: its --help default "${written}" has no check in cli-defaults.test.ts`).toBeDefined();
    expect(String(get!()), `${flag} (--help says default ${written})`).toBe(written);
  }
}

describe('R-CLI-01 every default written in --help is the value used', () => {
  it('cortex-server serve', () => {
    const s = resolveSettings({}, {});
    checkAll(help(SERVER_CLI_BUNDLE, ['serve']), {
      '--db': () => `$CORTEX_DB, then ${s.db}`,
      '--listen': () => `${s.listen.host}:${s.listen.port}`,
      '--trusted-proxy': () => (s.trusted_proxies.join(',') === '127.0.0.0/8,::1' ? '127.0.0.0/8 and ::1' : s.trusted_proxies.join(',')),
      '--hello-timeout-ms': () => s.hello_timeout_ms,
      '--ping-interval-ms': () => s.ping_interval_ms,
      '--missed-pongs': () => s.missed_pongs,
      '--rotation-grace-secs': () => s.rotation_grace_secs,
      '--shutdown-drain-secs': () => s.shutdown_drain_secs,
      '--retention-days': () => s.retention_days,
      '--db-pool': () => poolArg(undefined),
      '--db-wait-secs': () => DEFAULT_DB_WAIT_SECS,
      '--lease-secs': () => new SessionRegistry({} as never, { serverId: 'defaults', logger: {} as never }).leaseMs / 1000,
      '--failed-hellos-before-throttle': () => s.failed_hellos_before_throttle,
      '--metrics-public': () => (s.metrics_public === false ? 'local requests and admin-token holders' : 'every client'),
      '--server-id': () => (defaultServerId(3100) === `${hostname()}:3100` ? 'hostname:port' : defaultServerId(3100)),
      '--silent-after-secs': () => s.silent_after_secs,
      '--allow-origin': () => (s.allowed_origins.length === 0 ? 'none' : s.allowed_origins.join(',')),
    });
  });

  it('cortex-agent run', () => {
    const tailer = createFileSource({ kind: 'file', path: '/nonexistent/cortex-defaults.log' }, { sink: { append: () => ({}) as never, position: () => null } }) as unknown as { o: { pollMs: number } };
    checkAll(help(AGENT_CLI_BUNDLE, ['run']), {
      '--log-level': () => 'info',
      // Agent: pingWatchdogMs ?? ping_interval_ms × missed_pongs
      '--ping-watchdog-ms': () => LIMITS.ping_interval_ms * LIMITS.missed_pongs,
      '--backoff-base-ms': () => new Backoff().baseMs,
      '--backoff-cap-ms': () => new Backoff().capMs,
      '--hello-timeout-ms': () => DEFAULT_HELLO_TIMEOUT_MS,
      '--request-timeout-ms': () => DEFAULT_REQUEST_TIMEOUT_MS,
      '--source-poll-ms': () => tailer.o.pollMs,
      probe_file_tail_paths: () => JSON.stringify(DEFAULT_PROBE_FILE_TAIL_PATHS),
    });
  });

  it('cortex-conformance server and agent suites', () => {
    const s = serverOptionsFrom(parseArgs(['--url', 'ws://127.0.0.1:1/ws/agent', '--enroll-token', 'x', '--host-id', 'y'], [...SERVER_VALUES_FOR_TEST], ['json', 'skip-slow', 'strict']));
    const a = agentOptionsFrom(parseArgs(['--run-command', 'x {url} {token} {host_id} {state_dir}'], ['run-command'], []));
    checkAll(RUNNER_HELP, {
      '--hello-timeout-ms': () => s.helloTimeoutMs,
      '--missed-pongs': () => s.missedPongs,
      '--agent-rate': () => `${s.agentRate}, the`,
      '--agent-version': () => s.agentVersion,
      '--probe-args': () => JSON.stringify(a.probeArgs),
      '--backoff-base-ms': () => a.backoffBaseMs,
      '--backoff-cap-ms': () => a.backoffCapMs,
      '--backoff-attempts': () => a.backoffAttempts,
      '--quiet-window-ms': () => a.quietWindowMs,
      '--rotation-grace-secs': () => s.rotationGraceSecs,
      '--slow-probe-timeout-ms': () => a.slowProbeTimeoutMs,
      '--timeout-ms': () => s.timeoutMs,
      '--heartbeat-wait-ms': () => (a.heartbeatWaitMs === undefined ? 'interval + jitter + 2 s' : a.heartbeatWaitMs),
      '--log-source': () => (a.logSource === undefined ? '{"kind":"file","path":"{file}"}' : a.logSource),
      // prose defaults: no command / no log source given means the suite's own file source
      '--emit-command': () => (a.emitCommand === undefined ? 'the suite configures a "file" log' : a.emitCommand),
    });
    expect(a.timeoutMs).toBe(s.timeoutMs);
  });

  it('cortex-fleet: the options it builds when none is given', () => {
    const known = Array.from({ length: 3 }, (_, i) => ({ host_id: `00000000-0000-4000-8000-00000000000${i}`, token: `t${i}` }));
    const args = parseFleetArgs(['--url', 'ws://127.0.0.1:1/ws/agent', '--tokens', '/nonexistent/cortex-fleet-tokens.jsonl']);
    if (args === 'help') throw new Error('--help was not given');
    const run = resolveFleetRun(args, known);
    const o = run.options;
    // "one per 5,000 agents up to the core count, more if the open-file hard limit needs it"
    const workersRule =
      planWorkers(5000, { soft: null, hard: null }, 8) === 1 &&
      planWorkers(10_001, { soft: null, hard: null }, 8) === 3 &&
      planWorkers(100_000, { soft: null, hard: null }, 4) === 4 &&
      planWorkers(5000, { soft: 1024, hard: 1024 }, 1) > 1;
    checkAll(help('dist/fleet/cli.js', []), {
      '--agents': () => (o.identities.length === known.length ? 'all of them' : o.identities.length),
      '--rate': () => (o.ratePerAgent === 0 && run.rate === 0 ? '0: idle, heartbeats only' : o.ratePerAgent),
      '--minutes': () => (args.runMs === null ? 'until SIGINT or SIGTERM' : args.runMs),
      '--window': () => o.window,
      '--batch': () => o.maxBatchEntries,
      '--message-bytes': () => o.messageBytes,
      '--probes': () => o.probes.join(','),
      '--agent-version': () => o.agentVersion,
      '--backoff-base-ms': () => `${o.backoff.baseMs}${o.backoff.baseMs === LIMITS.backoff_base_s * 1000 ? ", the contract's" : ''}`,
      '--backoff-cap-ms': () => o.backoff.capMs,
      '--hello-timeout-ms': () => o.helloTimeoutMs,
      '--start-concurrency': () => o.startConcurrency,
      '--workers': () => (o.workers === planWorkers(known.length) && workersRule ? 'one per 5,000 agents up to the core' : o.workers),
      '--report-every-s': () => run.reportEvery,
    });
    // and the token file given is where rotated tokens go (no --no-persist)
    expect(o.tokenFile).toBe('/nonexistent/cortex-fleet-tokens.jsonl');
  });
});

const SERVER_VALUES_FOR_TEST = ['url', 'enroll-token', 'host-id'] as const;

describe('R-CLI-01 the admin commands use the defaults their --help writes', () => {
  it('agent tail -n 20, agent rotate --grace-secs 300, agent decommission --drain-secs 30, probe --args {} --timeout-ms 10000', async () => {
    const cli = (args: string[]) => cliAsync(args);
    const db = join(tempFolder(), 'c.db');
    // the help texts and the set-up issue are independent: side by side
    const [tailHelp, rotateHelp, decommissionHelp, probeHelp, issued] = await Promise.all([
      helpAsync(SERVER_CLI_BUNDLE, ['agent', 'tail']),
      helpAsync(SERVER_CLI_BUNDLE, ['agent', 'rotate']),
      helpAsync(SERVER_CLI_BUNDLE, ['agent', 'decommission']),
      helpAsync(SERVER_CLI_BUNDLE, ['probe']),
      cli(['agent', 'issue', '--host', 'web-1', '--json', '--db', db]),
    ]);
    const host = JSON.parse(issued.stdout) as { host_id: string };

    // probe: the request body the admin API receives (no database: it runs beside the rest)
    const probe = async () => {
      expect(defaults(probeHelp).get('--args')).toBe('{}');
      expect(defaults(probeHelp).get('--timeout-ms')).toBe('10000');
      const bodies: string[] = [];
      const srv = await listen((req, res) => {
        let b = '';
        req.on('data', (d: Buffer) => (b += d.toString()));
        req.on('end', () => {
          bodies.push(b);
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ output: null, duration_ms: 0 }));
        });
      });
      try {
        const r = await cliAsync(['probe', host.host_id, 'sys.uptime', '--url', srv.url]);
        expect(r.code).toBe(0);
        expect(JSON.parse(bodies[0]!)).toEqual({ probe: 'sys.uptime', args: {}, timeout_ms: 10_000 });
      } finally {
        srv.close();
      }
    };

    const database = async () => {
      const storage = openSqliteStorage({ path: db });
      try {
        await migrateToLatest(storage);
        const entries = Array.from({ length: 25 }, (_, i) => ({ seq: i + 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: `line ${i + 1}`, source: 'custom:test' }));
        await storage.ingest.commitBatch(host.host_id, entries, new Date().toISOString());

        expect(defaults(tailHelp).get('-n')).toBe('20');
        expect(rotateHelp).toMatch(/default: the\s+server's rotation_grace_secs, 300\)/);
        // tail reads, rotate writes another column: side by side; decommission after the rotation
        const [tail, rotate] = await Promise.all([cli(['agent', 'tail', host.host_id, '--json', '--db', db]), cli(['agent', 'rotate', host.host_id, '--db', db])]);
        expect(JSON.parse(tail.stdout) as unknown[]).toHaveLength(20);
        expect(rotate.stdout).toMatch(/\(grace 300 s\)/);

        expect(decommissionHelp).toMatch(/seconds \(default 30\)/);
        expect((await cli(['agent', 'decommission', host.host_id, '--db', db])).code).toBe(0);
        const row = await storage.db.selectFrom('agents').select('decommission_drain_secs').where('host_id', '=', host.host_id).executeTakeFirstOrThrow();
        expect(row.decommission_drain_secs).toBe(30);
      } finally {
        await storage.close();
      }
    };
    await Promise.all([database(), probe()]);
  });
});

describe('R-CLI-01 agent issue --expires-in and the admin commands\' --server', () => {
  it('agent issue without --expires-in: the token expires the written default (7d) after it was issued', async () => {
    const db = join(tempFolder(), 'c.db');
    const cli = (args: string[]) => cliAsync(args, { fullEnv: envWithout('CORTEX_SERVER', 'CORTEX_DB') });
    // the help text and the issue are independent: side by side
    const [text, issued] = await Promise.all([helpAsync(SERVER_CLI_BUNDLE, ['agent', 'issue']), cli(['agent', 'issue', '--host', 'web-7', '--json', '--db', db])]);
    const written = /--expires-in D[^\n]*; default (\d+)d\)/.exec(text)?.[1];
    expect(written, text).toBe('7');
    expect(issued.code, issued.stderr).toBe(0);
    const { host_id } = JSON.parse(issued.stdout) as { host_id: string };
    const tokens = JSON.parse((await cli(['agent', 'tokens', '--json', '--db', db])).stdout) as { host_id: string; issued_at: string; expires_at: string }[];
    const row = tokens.find((t) => t.host_id === host_id)!;
    expect(Date.parse(row.expires_at) - Date.parse(row.issued_at)).toBe(Number(written) * 86_400_000);
  });

  it('every admin command whose --help says --server "default $CORTEX_SERVER" talks to $CORTEX_SERVER when neither --server nor --db is given', async () => {
    const HOST = '00000000-0000-4000-8000-000000000007';
    // The commands and the least each needs besides the target.
    const commands: Record<string, string[]> = {
      'agent issue': ['--host', 'web-8'],
      'agent list': [],
      'agent tail': [HOST],
      'agent revoke': [HOST],
      'agent rotate': [HOST],
      'agent decommission': [HOST],
      'agent config': [HOST, '--get'],
      'agent delete': [HOST],
      'agent group': [HOST, '--set', 'web'],
      'agent reset-seq': [HOST],
      'agent tokens': [],
      'agent withdraw': [HOST],
      audit: [],
      probe: [HOST, 'sys.uptime'],
    };
    const names = Object.keys(commands);
    // every help text side by side; then every command that offers --server side by side, each
    // against a server of its own (the requests a command makes are the requests its server saw)
    const [agentHelp, ...texts] = await Promise.all([helpAsync(SERVER_CLI_BUNDLE, ['agent']), ...names.map((cmd) => helpAsync(SERVER_CLI_BUNDLE, cmd.split(' ')))]);
    const subcommands = /agent <([a-z|-]+)>/.exec(agentHelp!)![1]!.split('|');
    expect(names.filter((c) => c.startsWith('agent ')).map((c) => c.slice(6)).sort()).toEqual([...subcommands].sort());
    const checked = names.filter((_, i) => /--server URL[\s\S]*?default \$CORTEX_SERVER\)/.test(texts[i]!));
    await Promise.all(
      checked.map(async (cmd) => {
        const requests: string[] = [];
        const srv = await listen((req, res) => {
          requests.push(`${req.method} ${req.url}`);
          req.resume();
          req.on('end', () => res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'unavailable', message: 'cli-defaults test server' } })));
        });
        try {
          const r = await cliAsync([...cmd.split(' '), ...commands[cmd]!], {
            cwd: tempFolder(), // no ./data/cortex.db to fall back to
            fullEnv: { ...envWithout('CORTEX_SERVER', 'CORTEX_DB', 'CORTEX_ADMIN_TOKEN'), CORTEX_SERVER: srv.url },
          });
          expect(requests.length, `${cmd}: no request reached $CORTEX_SERVER (exit ${r.code}: ${r.stderr})`).toBeGreaterThan(0);
          expect(requests.every((q) => / \/admin\//.test(q)), `${cmd}: ${requests.join(', ')}`).toBe(true);
        } finally {
          srv.close();
        }
      }),
    );
    // the commands that offer --server (the help of `agent issue`, `list`, `tail`, … and `probe`)
    expect(checked).toEqual(expect.arrayContaining(['agent issue', 'agent list', 'agent tail', 'agent revoke', 'agent rotate', 'agent decommission', 'agent config', 'agent delete', 'probe']));
  }, 60_000);
});

function envWithout(...names: string[]): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const n of names) delete env[n];
  return env;
}

