// The fleet emulator's parts that need no server: backoff and its storm model, the token
// file, histograms, probe answers, the import boundary, admin-API enrollment.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  InvalidParamsError,
  PROBES,
  ProbeUnavailableError,
  validateFsDiskUsageOutput,
  validateProbeOutput,
  validateSysOsReleaseOutput,
  validateSysUptimeOutput,
} from '@cortex/agent-protocol';
import { FullJitterBackoff, predictAttemptsPerSecond, stormLimit } from '../../fleet/backoff.js';
import { InputError, TokenJournal, compactTokenFile, enrollThroughAdmin, parseTokenFile, readTokenFile } from '../../fleet/identities.js';
import { planWorkers } from '../../fleet/fleet.js';
import { FLEET_PROBES, runProbe } from '../../fleet/probes.js';
import { connectErrorLabel } from '../../fleet/sim-agent.js';
import { LatencyHistogram, Timeline } from '../../fleet/stats.js';

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'cortex-fleet-unit-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const H1 = '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01';
const H2 = '3c9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f02';
const T1 = 'a'.repeat(43);
const T2 = 'b'.repeat(43);
const T3 = 'c'.repeat(43);

describe('full-jitter backoff', () => {
  it('draws each delay from [0, min(cap, base * 2^attempt)) and stops counting at the cap', () => {
    const b = new FullJitterBackoff({ baseMs: 100, capMs: 1000, resetAfterMs: 60_000 }, () => 0.999999);
    const delays = Array.from({ length: 7 }, () => b.nextDelayMs(0));
    expect(delays).toEqual([99, 199, 399, 799, 999, 999, 999]);
    expect(b.attempt(0)).toBe(4); // 100 * 2^4 >= 1000: no further counting
    const zero = new FullJitterBackoff({ baseMs: 100, capMs: 1000, resetAfterMs: 60_000 }, () => 0);
    expect(zero.nextDelayMs(0)).toBe(0);
  });

  it('resets the attempt counter only after a connection stayed Active for resetAfterMs', () => {
    const b = new FullJitterBackoff({ baseMs: 1000, capMs: 60_000, resetAfterMs: 60_000 }, () => 0.5);
    for (let i = 0; i < 3; i++) b.nextDelayMs(0);
    b.markActive(1000);
    b.markInactive(1000 + 59_999);
    expect(b.attempt(1000 + 59_999)).toBe(3);
    b.markActive(100_000);
    b.markInactive(160_000);
    expect(b.attempt(160_000)).toBe(0);
  });

  it('predicts every agent in the first second when the outage is over before it', () => {
    const p = predictAttemptsPerSecond({ baseMs: 1000, capMs: 60_000, outageMs: 0, bins: 3, initialAttempts: [500], runs: 4 });
    expect(p).toEqual([500, 0, 0]);
  });

  it('spreads a longer outage over later seconds by the formula (expected counts sum to the attempts)', () => {
    // outage 3 s: attempt 0 in [0,1) s, attempt 1 after it in [0,2) s more, ...; all end after 3 s
    const p = predictAttemptsPerSecond({ baseMs: 1000, capMs: 60_000, outageMs: 3000, bins: 60, initialAttempts: [1000], runs: 10 });
    expect(p[0]).toBeGreaterThan(900); // the first attempts, nearly all in second 0
    expect(p.slice(3).reduce((a, b) => a + b, 0)).toBeGreaterThan(500); // most succeed after the outage
    expect(p.reduce((a, b) => a + b, 0)).toBeGreaterThan(2000); // about 2-3 attempts each
    expect(stormLimit(0)).toBe(9);
    expect(stormLimit(100)).toBe(300);
  });
});

describe('token file', () => {
  it('reads JSON lines, the last line of a host winning and a null token dropping it', () => {
    const text = [
      `{"host_id":"${H1}","hostname":"web-1","token":"${T1}"}`,
      '# comment',
      '',
      `{"host_id":"${H2}","token":"${T2}"}`,
      `{"host_id":"${H1.toUpperCase()}","token":"${T3}","rotated_at":"2026-12-03T00:00:00.000Z"}`,
      `{"host_id":"${H2}","token":null}`,
    ].join('\n');
    expect(parseTokenFile(text, 'f')).toEqual([{ host_id: H1, token: T3, hostname: 'web-1' }]);
  });

  it('names the line of a malformed entry, never the token', () => {
    expect(() => parseTokenFile(`{"host_id":"${H1}","token":"${T1}"}\nnot json`, 'tokens.jsonl')).toThrow(/tokens\.jsonl line 2 is not JSON/);
    const short = 'short-secret-value';
    let message = '';
    try {
      parseTokenFile(`{"host_id":"${H1}","token":"${short}"}`, 'f');
    } catch (err) {
      expect(err).toBeInstanceOf(InputError);
      message = (err as Error).message;
    }
    expect(message).toMatch(/line 1: token must be a string of 32\.\.256 characters/);
    expect(message).not.toContain(short);
    expect(() => parseTokenFile(`{"host_id":"nope","token":"${T1}"}`, 'f')).toThrow(/host_id must be a UUID/);
  });

  it('appends rotated tokens and compacts to one line per host', () => {
    const file = join(temp(), 'tokens.jsonl');
    const j = new TokenJournal(file);
    j.record(H1, T1, 'web-1');
    j.record(H2, T2);
    j.record(H1, T3);
    j.close();
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(3);
    expect(compactTokenFile(file)).toBe(2);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(readTokenFile(file)).toEqual([
      { host_id: H1, token: T3, hostname: 'web-1' },
      { host_id: H2, token: T2 },
    ]);
  });
});

describe('statistics', () => {
  it('gives percentiles within 2% and merges histograms by addition', () => {
    const a = new LatencyHistogram();
    const b = new LatencyHistogram();
    for (let i = 1; i <= 1000; i++) (i % 2 ? a : b).record(i);
    a.merge(b.toJSON());
    expect(a.count).toBe(1000);
    for (const [q, v] of [[0.5, 500], [0.9, 900], [0.99, 990]] as const) {
      const got = a.quantile(q) as number;
      expect(Math.abs(got - v) / v).toBeLessThan(0.021);
    }
    expect(a.quantile(1)).toBe(1000);
  });

  it('bins a timeline per second from any start', () => {
    const t = new Timeline();
    t.add(10_050);
    t.add(10_950, 2);
    t.add(11_000);
    t.add(13_500);
    expect(t.perSecond(10_000, 4)).toEqual([3, 1, 0, 1]);
    expect(t.firstAt(10_900)).toBe(10_900);
    expect(t.peakPerSecond()).toBe(3);
  });
});

describe('probes', () => {
  it('answers sys.uptime, fs.disk_usage and sys.os_release with outputs valid for contract/probes', () => {
    const started = Date.now() - 5000;
    const up = runProbe('sys.uptime', {}, FLEET_PROBES, started, 3);
    const du = runProbe('fs.disk_usage', { path: '/var/log' }, FLEET_PROBES, started, 3);
    const os = runProbe('sys.os_release', {}, FLEET_PROBES, started, 3);
    for (const o of [up, du, os]) expect(validateProbeOutput(o)).toBe(true);
    expect(validateSysUptimeOutput(up.output)).toBe(true);
    expect(validateFsDiskUsageOutput(du.output)).toBe(true);
    expect((du.output as { path: string }).path).toBe('/var/log');
    expect(validateSysOsReleaseOutput(os.output)).toBe(true);
    expect(FLEET_PROBES.every((p) => PROBES.some((x) => x.name === p))).toBe(true);
  });

  it('refuses a probe it does not list (-32010) and args that fail the probe schema (-32602)', () => {
    expect(() => runProbe('proc.top', {}, FLEET_PROBES, 0, 0)).toThrow(ProbeUnavailableError);
    expect(() => runProbe('sys.uptime', {}, ['fs.disk_usage'], 0, 0)).toThrow(ProbeUnavailableError);
    let err: unknown;
    try {
      runProbe('fs.disk_usage', { path: 'relative/../x' }, FLEET_PROBES, 0, 0);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidParamsError);
    expect(JSON.stringify((err as InvalidParamsError).data)).toContain('/args/path');
  });
});

describe('connection errors and planning', () => {
  it('labels failures by a stable code', () => {
    expect(connectErrorLabel(new Error('Unexpected server response: 429'), 1006)).toBe('http_429');
    expect(connectErrorLabel(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 1006)).toBe('ECONNREFUSED');
    expect(connectErrorLabel(new Error('Opening handshake has timed out'), 1006)).toBe('connect_timeout');
    expect(connectErrorLabel(undefined, 4000)).toBe('close_4000');
  });

  it('plans enough workers for the open-file hard limit and the cores', () => {
    expect(planWorkers(100, { soft: 1024, hard: 1_000_000 }, 8)).toBe(1);
    expect(planWorkers(10_000, { soft: 1024, hard: 1_000_000 }, 2)).toBe(2);
    expect(planWorkers(10_000, { soft: 1024, hard: 1_000_000 }, 1)).toBe(1);
    expect(planWorkers(10_000, { soft: 1024, hard: 4096 }, 1)).toBe(3);
  });
});

describe('import boundary', () => {
  it('fleet/ imports only the generated package, ws, node built-ins, common/ (which imports nothing of ours) and itself', () => {
    const root = join(import.meta.dirname, '../../fleet');
    const bad: string[] = [];
    for (const f of readdirSync(root).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(root, f), 'utf8');
      const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g), ...text.matchAll(/\bimport\s*\(?\s*['"]([^'"]+)['"]/g)];
      for (const m of specs) {
        const spec = m[1] as string;
        const ok = spec === '@cortex/agent-protocol' || spec === '@cortex/agent-protocol/runtime' || spec === 'ws' || /^\.\.\/common\/[a-z-]+\.js$/.test(spec) || spec.startsWith('node:') || (spec.startsWith('./') && !spec.includes('..'));
        if (!ok) bad.push(`${f}: ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

describe('enrollment through the admin API', () => {
  async function stub(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => handler(req, res, body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => {
        server.closeAllConnections();
        return new Promise((r) => server.close(r));
      },
    };
  }

  it('POSTs /admin/agents with a hostname and the bearer token, and takes {host_id, token} back', async () => {
    const seen: { auth?: string; hostname: string }[] = [];
    let n = 0;
    const s = await stub((req, res, body) => {
      seen.push({ hostname: (JSON.parse(body) as { hostname: string }).hostname, ...(req.headers.authorization ? { auth: req.headers.authorization } : {}) });
      n++;
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ host_id: n === 1 ? H1 : H2, hostname: 'x', token: n === 1 ? T1 : T2 }));
    });
    try {
      const ids = await enrollThroughAdmin({ adminUrl: `${s.url}/`, adminToken: 'admin-secret', count: 2, hostnamePrefix: 'fl', concurrency: 1 });
      expect(ids.map((i) => i.token)).toEqual([T1, T2]);
      expect(seen).toEqual([
        { hostname: 'fl-0', auth: 'Bearer admin-secret' },
        { hostname: 'fl-1', auth: 'Bearer admin-secret' },
      ]);
    } finally {
      await s.close();
    }
  });

  it('stops at the first refusal with the status and the server\'s message', async () => {
    const s = await stub((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 401, message: 'admin token required' } }));
    });
    try {
      await expect(enrollThroughAdmin({ adminUrl: s.url, count: 3, hostnamePrefix: 'fl' })).rejects.toThrow(/answered 401: admin token required/);
    } finally {
      await s.close();
    }
  });
});
