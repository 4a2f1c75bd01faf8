// The conformance runner's server suite against the compiled reference server: every case
// passes (or is skipped for a missing option), the output formats hold, and an unreachable
// target is a clear non-zero exit.
import { existsSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS_COUNT, SERVER_CLI, buildConformance, failures, issueHost, parseJson, runConformance, serveReference, serveWithFaults, statusOf, type Host, type ServeHandle } from './helpers.js';

// The ping window (interval × missed pongs) must outlast a stall of a loaded CI machine:
// at 300 ms × 2 one run saw the -32030 burst's session closed (1006) mid-case. 1 s × 2
// keeps the 1011 case short (it waits (missed + 2) × interval + timeout).
const PING_MS = 1000;
// The -32030 case pushes 3 × rate + 500 entries at once: keep it small but above every
// other case's pushes (at most 501 at a time).
const AGENT_RATE = 2000;
// The run with every option: the -32020 case pushes more than the ingest queue holds
// (QUEUE_ENTRIES) while writes are stalled, within one rate-limit burst; the -32030 case
// pushes three seconds' worth of FAULTY_RATE at once.
const QUEUE_ENTRIES = 3000;
const FAULTY_RATE = 5000;
// The run with every option: the reference server's rotation_close_grace_ms (5 s), which the
// close/1012 case waits through (it asserts the 1012 and its upper bound, not the length), through
// the fixture's knob (as scripts/mutants/run-server.mjs); the server's own 5 s is
// test/server/control.test.ts's.
const ROTATION_CLOSE_MS = '500';

describe('cortex-conformance server', () => {
  let srv: ServeHandle;
  let tmp: string;
  // issued up front: the tests that use them run at the same time
  let hostOnly: Host;
  let hostJson: Host;
  beforeAll(async () => {
    buildConformance();
    tmp = mkdtempSync(join(tmpdir(), 'cortex-conformance-out-'));
    srv = await serveReference(['--hello-timeout-ms', '800', '--max-batch-entries', '500', '--ping-interval-ms', String(PING_MS), '--missed-pongs', '2', '--agent-rate', String(AGENT_RATE)]);
    hostOnly = issueHost(srv.db, 'conformance-only');
    hostJson = issueHost(srv.db, 'conformance-json');
  });
  afterAll(async () => {
    await srv?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('runs every case against the reference server with every option given: 0 skipped, 0 failed (--strict, JUnit XML)', async () => {
    // The reference server through a fixture that can also fail or stall its storage on
    // demand (-32007, -32603, -32020); everything else is the compiled server as `serve` runs it.
    // in the environment of the fixture and of the runner, which runs --restart-command
    process.env['CORTEX_TEST_ROTATION_CLOSE_MS'] = ROTATION_CLOSE_MS;
    const f = await serveWithFaults(
      { hello_timeout_ms: 800, max_batch_entries: 500, ping_interval_ms: PING_MS, missed_pongs: 2, agent_rate_entries_per_s: FAULTY_RATE, shutdown_drain_secs: 1, min_agent_version: '0.1.0' },
      QUEUE_ENTRIES,
    );
    try {
      const h1 = issueHost(f.db, 'conformance-1');
      const h2 = issueHost(f.db, 'conformance-2');
      const cli = `node ${SERVER_CLI}`;
      const args = [
        'server', '--url', f.url, '--enroll-token', h1.token, '--host-id', h1.host_id,
        '--token-2', h2.token, '--host-id-2', h2.host_id,
        '--hello-timeout-ms', '800', '--server-max-batch-entries', '500', '--ping-interval-ms', String(PING_MS), '--missed-pongs', '2',
        '--agent-rate', String(FAULTY_RATE), '--ingest-queue-entries', String(QUEUE_ENTRIES), '--min-agent-version', '0.1.0',
        '--admin-url', f.httpUrl,
        '--revoke-command', `${cli} agent revoke {host_id} --db ${f.db}`,
        '--rotate-command', `${cli} agent rotate {host_id} --grace-secs {grace_secs} --db ${f.db}`, '--rotation-grace-secs', '0',
        '--decommission-command', `${cli} agent decommission {host_id} --drain-secs {drain_secs} --db ${f.db}`,
        '--config-command', `${cli} agent config {host_id} --set {config} --db ${f.db}`,
        '--break-storage-command', `echo break > ${f.faultFile}`, '--repair-storage-command', `rm -f ${f.faultFile}`,
        '--stall-storage-command', `echo stall > ${f.faultFile}`, '--resume-storage-command', `rm -f ${f.faultFile}`,
        '--metrics-count-command', `node ${METRICS_COUNT} ${f.db} {host_id}`,
        '--issue-command', `${cli} agent issue --host {label} --expires-in {expires_in} --json --db ${f.db}`,
        '--stop-command', `kill -TERM ${f.child.pid}`, '--restart-command', f.restartCommand,
        '--strict', '--junit', join(tmp, 'junit.xml'),
      ];
      const r = await runConformance(args, 180_000);
      const lines = r.stdout.trim().split('\n');
      const notPassed = lines.filter((l) => !l.startsWith('PASS')).slice(0, -1);
      expect(notPassed, r.stderr).toEqual([]);
      expect(r.code, r.stderr).toBe(0);
      for (const l of lines.slice(0, -1)) expect(l).toMatch(/^PASS \S+ — /);
      expect(lines.at(-1)).toMatch(/^\d+ passed, 0 failed, 0 skipped$/);
      const passed = (id: string) => expect(lines.find((l) => l.includes(` ${id} — `)) ?? `${id}: not run`, r.stdout).toMatch(/^PASS/);
      for (const id of [
        'subprotocol/confirmed', 'subprotocol/wrong-refused', 'framing/non-hello-first', 'handshake/hello-timer', 'handshake/wrong-token',
        'handshake/first-enrollment-rotates', 'handshake/enrollment-token-invalidated', 'handshake/rotated-token-accepted', 'handshake/protocol-version',
        'error/-32700-ParseError', 'error/-32600-InvalidRequest', 'error/-32601-MethodNotFound', 'error/-32008-PayloadTooLarge', 'error/-32030-QuotaExceeded',
        'error/-32004-UnknownHost', 'error/-32005-TokenRotationRequired', 'error/-32007-BufferOverflow', 'error/-32603-InternalError', 'error/-32020-Backpressure',
        'close/1001-GoingAway', 'close/1012-ServiceRestart', 'close/1003-UnsupportedData', 'close/1009-MessageTooBig', 'close/1011-InternalError', 'close/4000-HandshakeTimeout',
        'ingest/ack-up-to-seq', 'ingest/duplicates-acked', 'ingest/window-monotonic', 'ingest/not-contiguous', 'ingest/replay-accepted-seq',
        'heartbeat/no-response', 'metrics/result', 'metrics/accepted-stored', 'vector/logs.push/params/entries/too_many_items',
        'admin/probe-round-trip', 'admin/probe-unlisted', 'admin/probe-agent-error', 'admin/probe-unknown-host',
        'revocation/live-session', 'revocation/hello-closed-4002', 'error/-32002-TokenRevoked', 'close/4002-TokenRevoked',
        'rotation/next-hello-rotates', 'rotation/new-token-accepted', 'rotation/previous-token-in-grace', 'handshake/agent-version-floor',
        'shutdown/server-reload', 'shutdown/acks-during-drain', 'shutdown/accepted-seq-after-restart',
        'handshake/unknown-host', 'handshake/invalid-params', 'close/1000-NormalClosure', 'close/1002-ProtocolError', 'close/1007-InvalidPayload',
        'close/4001-AuthFailed', 'ingest/overlap', 'ingest/gap-accepted', 'vector/metrics.push/params/samples/too_many_items',
        'handshake/resume-from-seq-max', 'handshake/enrollment-token-expired', 'ingest/metadata-limits', 'ingest/max-seq',
        'admin/probe-timeout', 'admin/probe-invalid-output', 'admin/probe-session-closed',
        'control/config-update', 'control/decommission', 'control/decommission-hello-while-draining',
      ]) passed(id);
      // Generated cases: one per vector of every agent→server method.
      expect(lines.filter((l) => l.includes(' vector/logs.push/params/')).length).toBeGreaterThan(20);
      expect(lines.filter((l) => l.includes(' vector/agent.hello/params/')).length).toBeGreaterThan(40);

      const xml = readFileSync(join(tmp, 'junit.xml'), 'utf8');
      expect(xml).toContain('<testsuites name="cortex-conformance"');
      expect(xml).toContain('name="handshake/first-enrollment-rotates"');
      expect(xml).toMatch(/failures="0" errors="0" skipped="0"/);
      expect((xml.match(/<testcase /g) ?? []).length).toBe(lines.length - 1);
    } finally {
      delete process.env['CORTEX_TEST_ROTATION_CLOSE_MS'];
      await f.stop();
    }
  }, 200_000);

  // The tests below run at the same time (after the run above, which runs alone: its timing
  // cases and --strict): each its own runner, hosts of their own on the shared server.

  it.concurrent('reports an unreachable target with a clear message and a non-zero exit', async ({ expect }) => {
    const r = await runConformance(['server', '--url', 'ws://127.0.0.1:1/ws/agent', '--enroll-token', 'x'.repeat(43), '--host-id', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot reach ws:\/\/127\.0\.0\.1:1\/ws\/agent/);
    const rep = parseJson(r);
    expect(rep.ok).toBe(false);
    expect(rep.error).toMatch(/ECONNREFUSED/);
  });

  it.concurrent('exits 2 on bad usage', async ({ expect }) => {
    const r = await runConformance(['server', '--url', srv.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--(host-id|enroll-token) is required/);
    const r2 = await runConformance(['agent']);
    expect(r2.code).toBe(2);
    expect(existsSync(join(tmp, 'none'))).toBe(false);
  });

  it.concurrent('--only runs the selected cases (a trailing * selects a prefix) and skips the rest, saying so', async ({ expect }) => {
    const h = hostOnly;
    const r = await runConformance(['server', '--url', srv.url, '--enroll-token', h.token, '--host-id', h.host_id, '--json', '--only', 'handshake/first-enrollment-rotates,ingest/*']);
    const rep = parseJson(r);
    expect(failures(rep)).toEqual([]);
    const ran = rep.cases.filter((c) => c.status !== 'SKIP').map((c) => c.id);
    expect(ran).toContain('handshake/first-enrollment-rotates');
    expect(ran).toContain('ingest/ack-up-to-seq');
    expect(ran.every((id) => id === 'handshake/first-enrollment-rotates' || id.startsWith('ingest/'))).toBe(true);
    const notSelected = rep.cases.filter((c) => c.seen === 'not selected by --only');
    expect(notSelected.length).toBeGreaterThan(100);
    expect(notSelected.every((c) => c.status === 'SKIP' && !c.id.startsWith('ingest/'))).toBe(true);
    // without --issue-command the max_seq case says which option it needs
    expect(rep.cases.find((c) => c.id === 'ingest/max-seq')?.seen).toMatch(/needs --issue-command/);
    const bad = await runConformance(['server', '--url', srv.url, '--enroll-token', h.token, '--host-id', h.host_id, '--only', ',']);
    expect(bad.code).toBe(2);
  });

  it.concurrent('JSON output has one object with every case', async ({ expect }) => {
    const h = hostJson;
    const r = await runConformance(['server', '--url', srv.url, '--enroll-token', h.token, '--host-id', h.host_id, '--skip-slow', '--json', '--hello-timeout-ms', '800']);
    const rep = parseJson(r);
    expect(failures(rep)).toEqual([]);
    expect(rep.ok).toBe(true);
    expect(statusOf(rep, 'ingest/replay-accepted-seq')).toBe('PASS');
    // without --server-max-batch-entries its 1000-entry pushes hit the server's cap of 500
    expect(statusOf(rep, 'error/-32030-QuotaExceeded')).toBe('SKIP');
    expect(rep.passed + rep.failed + rep.skipped).toBe(rep.cases.length);
  });
});
