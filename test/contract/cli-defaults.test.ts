// R-CLI-01: every "(default X)" a command's --help writes is the value the program uses when
// the option is not given. Each help line with a default must have a check here: a new
// default in a --help text fails this test until it is checked.
import { poolArg } from '../../server/cli-db.js';
import { SessionRegistry, defaultServerId } from '../../server/cluster/registry.js';
import { hostname } from 'node:os';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
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
import { buildServer, ROOT } from '../server/spawn.js';

beforeAll(() => buildServer(), 60_000);

function help(bin: string, args: string[]): string {
  const r = spawnSync(process.execPath, [join(ROOT, bin), ...args, '--help'], { cwd: ROOT, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
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
    checkAll(help('dist/server/cli.js', ['serve']), {
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
    checkAll(help('dist/agent/cli.js', ['run']), {
      '--log-level': () => 'info',
      // Agent: pingWatchdogMs ?? ping_interval_ms × missed_pongs
      '--ping-watchdog-ms': () => LIMITS.ping_interval_ms * LIMITS.missed_pongs,
      '--backoff-base-ms': () => new Backoff().baseMs,
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
});

const SERVER_VALUES_FOR_TEST = ['url', 'enroll-token', 'host-id'] as const;

describe('R-CLI-01 the admin commands use the defaults their --help writes', () => {
  it('agent tail -n 20, agent rotate --grace-secs 300, agent decommission --drain-secs 30, probe --args {} --timeout-ms 10000', async () => {
    const cli = (args: string[]) => spawnSync(process.execPath, [join(ROOT, 'dist/server/cli.js'), ...args], { cwd: ROOT, encoding: 'utf8' });
    const written = (cmd: string[], flag: string) => defaults(help('dist/server/cli.js', cmd)).get(flag);
    const db = join(mkdtempSync(join(tmpdir(), 'cortex-cli-defaults-')), 'c.db');
    const host = JSON.parse(cli(['agent', 'issue', '--host', 'web-1', '--json', '--db', db]).stdout) as { host_id: string };
    const storage = openSqliteStorage({ path: db });
    await migrateToLatest(storage);
    const entries = Array.from({ length: 25 }, (_, i) => ({ seq: i + 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: `line ${i + 1}`, source: 'custom:test' }));
    await storage.ingest.commitBatch(host.host_id, entries, new Date().toISOString());

    expect(written(['agent', 'tail'], '-n')).toBe('20');
    const tail = JSON.parse(cli(['agent', 'tail', host.host_id, '--json', '--db', db]).stdout) as unknown[];
    expect(tail).toHaveLength(20);

    expect(help('dist/server/cli.js', ['agent', 'rotate'])).toMatch(/default: the\s+server's rotation_grace_secs, 300\)/);
    expect(cli(['agent', 'rotate', host.host_id, '--db', db]).stdout).toMatch(/\(grace 300 s\)/);

    expect(help('dist/server/cli.js', ['agent', 'decommission'])).toMatch(/seconds \(default 30\)/);
    expect(cli(['agent', 'decommission', host.host_id, '--db', db]).status).toBe(0);
    const row = await storage.db.selectFrom('agents').select('decommission_drain_secs').where('host_id', '=', host.host_id).executeTakeFirstOrThrow();
    expect(row.decommission_drain_secs).toBe(30);
    await storage.close();

    // probe: the request body the admin API receives
    expect(written(['probe'], '--args')).toBe('{}');
    expect(written(['probe'], '--timeout-ms')).toBe('10000');
    const bodies: string[] = [];
    const srv = http.createServer((req, res) => {
      let b = '';
      req.on('data', (d: Buffer) => (b += d.toString()));
      req.on('end', () => {
        bodies.push(b);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ output: null, duration_ms: 0 }));
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (srv.address() as AddressInfo).port;
      const r = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [join(ROOT, 'dist/server/cli.js'), 'probe', host.host_id, 'sys.uptime', '--url', `http://127.0.0.1:${port}`], { cwd: ROOT, stdio: 'ignore' });
        child.on('exit', (code) => resolve(code));
      });
      expect(r).toBe(0);
      expect(JSON.parse(bodies[0]!)).toEqual({ probe: 'sys.uptime', args: {}, timeout_ms: 10_000 });
    } finally {
      srv.close();
    }
  });
});
