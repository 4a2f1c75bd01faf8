// The runner catches faults: a deliberately broken server (built on the generated
// createServerPeer over ws) that accepts any subprotocol, never rotates the enrollment
// token, acks logs.push before (instead of) committing, closes a revoked host's hello with
// 4001 instead of 4002, answers metrics.push "accepted: 0, dropped: n" while storing the
// samples, and closes with 1000 instead of 1001 when it shuts down. The matching cases must
// FAIL and the exit status must be non-zero. Test-only HTTP routes (/test/...) stand in for
// the operator commands the runner is given (revoke, metrics count, stop).
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { AuthFailedError, ServerClient, TokenRevokedError, createServerPeer, registerServerHandlers, webSocketTransport } from '@cortex/agent-protocol';
import { buildConformance, parseJson, runConformance, statusOf } from './helpers.js';

const TOKEN = 'broken-server-enrollment-token-0123456789abcdef';
const HOST = randomUUID();
const TOKEN2 = 'broken-server-enrollment-token-2-0123456789abcd';
const HOST2 = randomUUID();

/** A server with three faults; everything else roughly right. */
function startBrokenServer(): Promise<{ url: string; http: string; close: () => Promise<void> }> {
  // Fault 1: any offered subprotocol is confirmed (cortex.v1 must be required).
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => [...protocols][0] ?? false });
  const revoked = new Set<string>();
  const storedMetrics = new Map<string, number>();
  const sessions = new Set<{ ws: WebSocket; peer: ReturnType<typeof createServerPeer> }>();
  const server = http.createServer((q, res) => {
    const [, , what, host] = (q.url ?? '').split('/');
    if (q.method === 'POST' && what === 'revoke' && host) {
      revoked.add(host);
      res.writeHead(200).end('revoked');
    } else if (what === 'metrics' && host) res.writeHead(200).end(String(storedMetrics.get(host) ?? 0));
    else if (q.method === 'POST' && what === 'stop') {
      // Fault 6: a shutdown that closes with 1000 instead of 1001 after telling the sessions.
      for (const s of sessions) new ServerClient(s.peer).agentShutdown({ reason: 'ServerReload', drain_seconds: 0 });
      setTimeout(() => {
        for (const s of sessions) s.ws.close(1000, 'bye');
        res.writeHead(200).end('stopped');
      }, 100);
    } else res.writeHead(404).end();
  });
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => {
    let authed = false;
    let hostId = '';
    ws.on('error', () => undefined); // the runner sends malformed frames on purpose
    const peer = createServerPeer(webSocketTransport(ws as never), {
      intercept: (call) => (authed || call.method === 'agent.hello' ? undefined : new AuthFailedError({ reason: 'token_hash_mismatch' })),
    });
    const session = { ws, peer };
    ws.on('close', () => sessions.delete(session));
    // Live revocation itself is right: agent.shutdown {Revoked, 0}, then 4002.
    const watch = setInterval(() => {
      if (hostId !== '' && revoked.has(hostId) && ws.readyState === ws.OPEN) {
        new ServerClient(peer).agentShutdown({ reason: 'Revoked', drain_seconds: 0 });
        setTimeout(() => ws.close(4002, 'TokenRevoked'), 50);
        clearInterval(watch);
      }
    }, 50);
    ws.on('close', () => clearInterval(watch));
    registerServerHandlers(peer, {
      'agent.hello': (p) => {
        if (revoked.has(p.host_id)) {
          // Fault 4: the revoked host's hello gets -32002 but the close is 4001, not 4002.
          setImmediate(() => ws.close(4001, 'TokenRevoked'));
          throw new TokenRevokedError({ reason: 'revoked' });
        }
        if (!((p.token === TOKEN && p.host_id === HOST) || (p.token === TOKEN2 && p.host_id === HOST2))) {
          setImmediate(() => ws.close(4001, 'AuthFailed'));
          throw new AuthFailedError({ reason: 'token_hash_mismatch' });
        }
        authed = true;
        hostId = p.host_id;
        sessions.add(session);
        // Fault 2: no rotated_token at first enrollment. Fault 3 (below): nothing is ever committed.
        return { server_version: 'broken', server_time: new Date().toISOString(), accepted_seq: 0, session_id: randomUUID(), config: { heartbeat_interval_secs: 30, max_batch_entries: 1000, flush_interval_ms: 200, probe_concurrency: 4, log_sources: [] } };
      },
      // Fault 3: acks up to the last seq without storing anything.
      'logs.push': (p) => ({ up_to_seq: p.entries.at(-1)?.seq ?? 0, received_at: new Date().toISOString() }),
      // Fault 5: stores the samples but answers that it dropped them (the sum is right).
      'metrics.push': (p) => {
        storedMetrics.set(hostId, (storedMetrics.get(hostId) ?? 0) + p.samples.length);
        return { accepted: 0, dropped: p.samples.length };
      },
      'agent.heartbeat': () => undefined,
    });
  }));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `ws://127.0.0.1:${port}/ws/agent`,
        http: `http://127.0.0.1:${port}`,
        close: () => new Promise<void>((r) => {
          for (const c of wss.clients) c.terminate();
          server.closeAllConnections();
          server.close(() => r());
        }),
      });
    }),
  );
}

// Built once, before both blocks: the build blocks this process, which serves the broken servers.
beforeAll(() => buildConformance());

// The two blocks at the same time (describe.concurrent), each with its own broken server; the
// tests inside each block one after the other (it.sequential), as before.
describe.concurrent('cortex-conformance against a broken server', () => {
  let broken: { url: string; http: string; close: () => Promise<void> };
  beforeAll(async () => {
    broken = await startBrokenServer();
  });
  afterAll(async () => broken?.close());

  it.sequential('fails the cases that match its faults and exits non-zero', async ({ expect }) => {
    const call = (method: string, path: string, print = false) =>
      `node -e "fetch('${broken.http}${path}'+(process.argv[1]??''),{method:'${method}'}).then(async (r)=>{${print ? 'console.log(await r.text());' : ''}process.exit(r.ok?0:1)})"`;
    const r = await runConformance([
      'server', '--url', broken.url, '--enroll-token', TOKEN, '--host-id', HOST, '--json', '--skip-slow', '--timeout-ms', '1000', '--agent-rate', '5000',
      '--token-2', TOKEN2, '--host-id-2', HOST2,
      '--revoke-command', `${call('POST', '/test/revoke/')} {host_id}`,
      '--metrics-count-command', `${call('GET', '/test/metrics/', true)} {host_id}`,
      '--stop-command', call('POST', '/test/stop'),
    ]);
    expect(r.code).toBe(1);
    const rep = parseJson(r);
    expect(rep.ok).toBe(false);
    // Accepts a wrong subprotocol.
    expect(statusOf(rep, 'subprotocol/wrong-refused')).toBe('FAIL');
    expect(statusOf(rep, 'subprotocol/missing-refused')).toBe('FAIL');
    // Does not rotate at first enrollment.
    expect(statusOf(rep, 'handshake/first-enrollment-rotates')).toBe('FAIL');
    // Acks before (without) committing: accepted_seq does not follow the acks.
    expect(statusOf(rep, 'ingest/duplicates-acked')).toBe('FAIL');
    expect(statusOf(rep, 'ingest/replay-accepted-seq')).toBe('FAIL');
    const replay = rep.cases.find((c) => c.id === 'ingest/replay-accepted-seq');
    expect(replay?.seen).toMatch(/accepted_seq 0/);
    // Has no per-agent rate limit: three seconds' worth at 5000/s all accepted at once.
    expect(statusOf(rep, 'error/-32030-QuotaExceeded')).toBe('FAIL');
    expect(rep.cases.find((c) => c.id === 'error/-32030-QuotaExceeded')?.seen).toMatch(/all 16000 entries accepted/);
    // A revoked host's hello: -32002 but closed 4001 (found only with the revocation options).
    expect(statusOf(rep, 'revocation/live-session')).toBe('PASS');
    expect(statusOf(rep, 'revocation/hello-closed-4002')).toBe('FAIL');
    expect(statusOf(rep, 'error/-32002-TokenRevoked')).toBe('FAIL');
    expect(rep.cases.find((c) => c.id === 'revocation/hello-closed-4002')?.seen).toMatch(/error -32002.*close 4001/);
    // metrics.push "accepted: 0, dropped: 3" for samples it stored: the sum alone passes, the stored count does not.
    expect(statusOf(rep, 'metrics/result')).toBe('PASS');
    expect(statusOf(rep, 'metrics/accepted-stored')).toBe('FAIL');
    expect(rep.cases.find((c) => c.id === 'metrics/accepted-stored')?.seen).toMatch(/3 stored for \{"accepted":0,"dropped":3\}/);
    // Its shutdown closes 1000, not 1001.
    expect(statusOf(rep, 'shutdown/server-reload')).toBe('PASS');
    expect(statusOf(rep, 'close/1001-GoingAway')).toBe('FAIL');
    expect(rep.cases.find((c) => c.id === 'close/1001-GoingAway')?.seen).toMatch(/close 1000/);
    // What it does right still passes.
    expect(statusOf(rep, 'subprotocol/confirmed')).toBe('PASS');
    expect(statusOf(rep, 'ingest/ack-up-to-seq')).toBe('PASS');
  }, 60_000);
});

describe.concurrent('runner options against the broken server: --expect-fail, --strict, --json-lines, --junit', () => {
  let broken: { url: string; http: string; close: () => Promise<void> };
  let tmp: string;
  beforeAll(async () => {
    broken = await startBrokenServer();
    tmp = mkdtempSync(join(tmpdir(), 'cortex-expect-fail-'));
  });
  afterAll(async () => {
    await broken?.close();
    rmSync(tmp, { recursive: true, force: true });
  });
  const base = () => ['server', '--url', broken.url, '--enroll-token', TOKEN, '--host-id', HOST, '--skip-slow', '--timeout-ms', '1000', '--agent-rate', '5000'];

  it.sequential('a known-failing list: listed failures are XFAIL and do not fail the run; --strict still fails on skips; a listed pass (XPASS) fails it', async ({ expect }) => {
    // The failures of this server, found once (ids only).
    const first = parseJson(await runConformance([...base(), '--json']));
    const failing = first.cases.filter((c) => c.status === 'FAIL').map((c) => c.id);
    expect(failing.length).toBeGreaterThan(3);
    const list = join(tmp, 'known-failures.txt');
    writeFileSync(list, `# known failures of the broken server\n${failing.join('\n')}\n\n`);
    const withPass = join(tmp, 'stale.txt');
    writeFileSync(withPass, `${failing.join('\n')}\nsubprotocol/confirmed   # fixed since\n`);

    const [ok, strict, xpass] = await Promise.all([
      runConformance([...base(), '--expect-fail', list]),
      runConformance([...base(), '--expect-fail', list, '--strict']),
      runConformance([...base(), '--expect-fail', withPass, '--json-lines', '--junit', join(tmp, 'junit.xml')]),
    ]);
    // listed failures: reported, exit 0
    expect(ok.code, ok.stderr).toBe(0);
    const lines = ok.stdout.trim().split('\n');
    for (const id of failing) expect(lines.find((l) => l.includes(` ${id} — `))).toMatch(/^XFAIL /);
    expect(lines.at(-1)).toMatch(new RegExp(`^\\d+ passed, 0 failed, \\d+ skipped, ${failing.length} expected failures$`));
    // --strict: the skips (no revocation options, --skip-slow) fail the run, and say so
    expect(strict.code).toBe(1);
    expect(strict.stderr).toMatch(/--strict: \d+ case\(s\) skipped: .*needs --/);
    // a listed case that passes fails the run, named on stderr, XPASS in the stream
    expect(xpass.code).toBe(1);
    expect(xpass.stderr).toMatch(/listed in --expect-fail .*stale\.txt passed; remove them from the list: subprotocol\/confirmed/);
    const objects = xpass.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const summary = objects.at(-1)!;
    expect(summary).toMatchObject({ summary: true, ok: false, unexpected_passes: 1, expected_failures: failing.length, failed: 0 });
    const cases = objects.slice(0, -1);
    expect(cases.length).toBe(first.cases.length);
    for (const c of cases) expect(Object.keys(c)).toEqual(expect.arrayContaining(['id', 'status', 'expected', 'seen', 'duration_ms']));
    expect(cases.find((c) => c['id'] === 'subprotocol/confirmed')).toMatchObject({ status: 'PASS', expected_fail: true });
    const xml = readFileSync(join(tmp, 'junit.xml'), 'utf8');
    expect(xml).toMatch(/name="subprotocol\/confirmed"[^>]*>\s*<failure message="listed in --expect-fail but passed/);
    expect(xml).toMatch(new RegExp(`name="${failing[0]!.replace(/[/.]/g, '\\$&')}"[^>]*>\\s*<skipped message="expected failure`));
    expect(xml).toContain('failures="1"');
  }, 90_000);

  it.sequential('--bail stops at the first failure: the cases after it are not run', async ({ expect }) => {
    const r = await runConformance([...base(), '--json', '--bail']);
    expect(r.code).toBe(1);
    const rep = parseJson(r);
    expect(rep.cases.at(-1)?.status).toBe('FAIL');
    expect(rep.cases.filter((c) => c.status === 'FAIL')).toHaveLength(1);
    expect(r.stderr).toMatch(/stopped after the first failure \(subprotocol\/wrong-refused; --bail\)/);
  });

  it.sequential('a missing --expect-fail file or --json with --json-lines is bad usage (exit 2)', async ({ expect }) => {
    const a = await runConformance([...base(), '--expect-fail', join(tmp, 'nope.txt')]);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/--expect-fail .*nope\.txt: cannot read it \(ENOENT\)/);
    const b = await runConformance([...base(), '--json', '--json-lines']);
    expect(b.code).toBe(2);
  });
});
