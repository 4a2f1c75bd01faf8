// The conformance runner's agent suite against our agents: examples/minimal-agent and the
// reference agent (its enroll and run CLI, through fixtures/reference-agent.mjs, which adds a
// site probe with a bug; the suite feeds its file source). Both must pass with no failure; the
// cases each promises are listed explicitly.
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { MINIMAL_AGENT, ROOT, buildConformance, failures, parseJson, runConformance, statusOf } from './helpers.js';
import { agentCasePlan } from '../../conformance/agent-suite.js';

/** The compiled agent CLI with a site probe whose handler has a bug. */
const REFERENCE_AGENT = join(ROOT, 'test/conformance/fixtures/reference-agent.mjs');
/**
 * The agents' longest reconnect backoff, told to the runner too: the suite reconnects them some
 * twenty times, and with the 60 s default the last reconnects waited up to a minute each.
 */
const BACKOFF_CAP_MS = 2000;
const COMMON = ['--backoff-base-ms', '100', '--backoff-cap-ms', String(BACKOFF_CAP_MS), '--quiet-window-ms', '1500', '--json'];

// The three runs at once (it.concurrent): each one mostly waits (timeouts, quiet windows,
// backoffs: ~2.5 s of CPU in a 35-40 s run), so in turn they only added up their waits.
describe('cortex-conformance agent', () => {
  beforeAll(() => buildConformance());

  it.concurrent('examples/minimal-agent passes the agent suite, every case run but the four that need probes it does not have', async () => {
    const r = await runConformance([
      'agent',
      '--enroll-command', `node ${MINIMAL_AGENT} enroll --server {url} --token {token} --host-id {host_id} --state-dir {state_dir}`,
      '--run-command', `node ${MINIMAL_AGENT} run --state-dir {state_dir} --backoff-base-ms 100 --backoff-cap-ms ${BACKOFF_CAP_MS} --heartbeat-ms 300 --request-timeout-ms 1500`,
      '--probe', 'demo.echo', '--probe-args', '{"hello":"world"}',
      // what the run command above was given: its window (WINDOW in agent.mjs) and its one request timeout
      '--push-window', '4', '--agent-hello-timeout-ms', '1500', '--agent-request-timeout-ms', '1500',
      ...COMMON,
    ], 170_000);
    const rep = parseJson(r);
    expect(failures(rep), r.stderr).toEqual([]);
    expect(r.code, `${r.stderr}\n${JSON.stringify(parseJson(r)).slice(0, 2000)}`).toBe(0);
    for (const id of [
      'agent/hello-contents', 'agent/rotated-token-used', 'agent/rotated-token-persisted', 'agent/rotated-token-saved-before-sending',
      'agent/logs-sequencing', 'agent/kill-with-unacked', 'agent/replay-after-kill', 'agent/no-seq-reuse',
      'agent/heartbeat', 'agent/probe-unknown', 'agent/probe-round-trip', 'error/-32602-InvalidParams',
      'agent/config-update', 'agent/shutdown-server-reload', 'agent/reconnect-after-reload', 'agent/backoff-bounds',
      'agent/shutdown-revoked', 'agent/hello-valid', 'agent/requests-valid', 'agent/hello-error-retried',
      'vector/agent.shutdown/params/drain_seconds/above_maximum', 'agent/push-partial-ack', 'agent/push-flush-latency', 'agent/config-metrics-interval-long',
      // what it failed before (DECISIONS K12): a window of pushes, halving on -32008, pausing as
      // advised, reconnecting on -32004 and on an unanswered request, an ack counted only up to
      // what was sent, accepted_seq beyond max_seq refused, apply_after staged, metrics sent
      'agent/push-window-several', 'agent/push-window-bound', 'agent/push-payload-too-large', 'agent/push-backpressure',
      'agent/push-buffer-overflow', 'agent/push-unknown-host', 'agent/push-ack-beyond-sent', 'agent/config-apply-after',
      'agent/push-backpressure-default-pause', 'agent/push-backpressure-zero-pause', 'agent/config-apply-after-far', 'agent/config-metrics-interval',
      'agent/accepted-seq-beyond-max', 'agent/shutdown-decommission', 'agent/decommission-then-revoked',
      'agent/push-unanswered', 'agent/hello-unanswered',
      // DECISIONS K14: no permessage-deflate offered, an incoming frame over the limit closed 1009,
      // a binary one 1003, every frame and batch within its limit, heartbeats at their cadence
      'agent/no-compression', 'agent/incoming-oversize-1009', 'agent/incoming-binary-1003', 'agent/frames-within-limit',
      'agent/batch-limit', 'agent/heartbeat-cadence',
    ]) expect(statusOf(rep, id), `${id}: ${rep.cases.find((c) => c.id === id)?.seen}`).toBe('PASS');
    // skipped without the options that enable them: it has one probe, which cannot fail
    expect(rep.cases.filter((c) => c.status === 'SKIP').map((c) => c.id).sort()).toEqual(['agent/probe-concurrency', 'error/-32011-ProbeExecutionFailed', 'error/-32012-ProbeTimeout', 'error/-32603-InternalError']);
    // Generated from the vectors of the server→agent methods.
    expect(rep.cases.filter((c) => c.id.startsWith('vector/probe.request/params/') && c.status === 'PASS').length).toBeGreaterThanOrEqual(10);
    expect(rep.cases.filter((c) => c.id.startsWith('vector/agent.shutdown/params/') && c.status === 'PASS').length).toBeGreaterThanOrEqual(8);
  }, 180_000);

  it.concurrent('the reference agent passes the agent suite, every case run (none skipped)', async () => {
    // The compiled agent CLI with one site probe whose handler throws a TypeError (fixtures/reference-agent.mjs).
    const agent = `node ${REFERENCE_AGENT}`;
    const r = await runConformance([
      'agent',
      '--enroll-command', `${agent} enroll --server {url} --token {token} --host-id {host_id} --state-dir {state_dir} --allow-insecure`,
      '--run-command', `${agent} run --state-dir {state_dir} --allow-insecure --backoff-base-ms 100 --backoff-cap-ms ${BACKOFF_CAP_MS} --heartbeat-interval-ms 300 --hello-timeout-ms 1000 --request-timeout-ms 1500 --log-level warn`,
      '--probe', 'sys.uptime',
      // proc.top samples /proc twice, 200 ms apart: agent/probe-concurrency
      '--long-probe', 'proc.top',
      // what the run command above was given: agent/hello-unanswered, agent/push-unanswered
      '--agent-hello-timeout-ms', '1000', '--agent-request-timeout-ms', '1500',
      // systemctl status of a unit that does not exist fails (exit 4, or no systemd at all): -32011
      '--failing-probe', 'exec.systemctl_status', '--failing-probe-args', '{"unit":"cortex-conformance-none.service"}',
      // a probe whose handler has a bug (not a failure of what it probes): -32603
      '--internal-error-probe', 'site.broken', '--internal-error-probe-args', '{}',
      // no probe runs a child process in 1 ms: -32012
      '--slow-probe', 'journal.tail', '--slow-probe-args', '{"unit":"cortex-conformance-none.service"}', '--slow-probe-timeout-ms', '1',
      // the reference agent's logs.push window (PushPumpOptions.window, default 4)
      '--push-window', '4',
      ...COMMON,
    ], 170_000);
    const rep = parseJson(r);
    expect(failures(rep), r.stderr).toEqual([]);
    expect(r.code, `${r.stderr}\n${JSON.stringify(parseJson(r)).slice(0, 2000)}`).toBe(0);
    for (const id of ['agent/rotated-token-persisted', 'agent/rotated-token-saved-before-sending', 'agent/logs-sequencing', 'agent/kill-with-unacked', 'agent/replay-after-kill', 'agent/no-seq-reuse', 'agent/heartbeat', 'agent/shutdown-server-reload', 'agent/backoff-bounds', 'agent/decommission-then-revoked', 'agent/shutdown-revoked', 'agent/probe-round-trip', 'error/-32011-ProbeExecutionFailed', 'error/-32012-ProbeTimeout', 'agent/fatal-auth', 'agent/hello-error-retried', 'agent/accepted-seq-beyond-max', 'agent/shutdown-decommission', 'agent/accepted-seq-at-max', 'agent/revoked-token-deleted',
      'agent/push-window-several', 'agent/push-window-bound', 'agent/push-partial-ack', 'agent/push-payload-too-large', 'agent/push-backpressure', 'agent/push-buffer-overflow', 'agent/push-flush-latency', 'agent/push-unknown-host', 'agent/push-ack-beyond-sent', 'agent/config-apply-after',
      'agent/push-backpressure-default-pause', 'agent/push-backpressure-zero-pause', 'agent/push-unanswered', 'agent/hello-unanswered', 'agent/config-apply-after-far', 'agent/config-metrics-interval', 'agent/config-metrics-interval-long', 'agent/probe-concurrency',
      'agent/no-compression', 'agent/incoming-oversize-1009', 'agent/incoming-binary-1003', 'agent/frames-within-limit', 'agent/batch-limit', 'agent/heartbeat-cadence']) {
      expect(statusOf(rep, id), `${id}: ${rep.cases.find((c) => c.id === id)?.seen}`).toBe('PASS');
    }
    // A probe bug is -32603 InternalError (DECISIONS K6, F8): with every option given, no case is skipped.
    expect(statusOf(rep, 'error/-32603-InternalError'), rep.cases.find((c) => c.id === 'error/-32603-InternalError')?.seen).toBe('PASS');
    expect(rep.cases.filter((c) => c.status === 'SKIP').map((c) => `${c.id}: ${c.seen}`)).toEqual([]);
    expect(rep.skipped).toBe(0);
    // every case of the plan, in its order (DECISIONS K15)
    expect(rep.cases.map((c) => c.id)).toEqual(agentCasePlan({ enrollCommand: 'enroll' }).map((c) => c.id));
    // about 30 s on a quiet machine (the cases wait out real timeouts and reconnects); more under the whole suite's load
  }, 180_000);

  it.concurrent('an agent that never connects is reported with a clear message and exit 1', async () => {
    const r = await runConformance(['agent', '--run-command', 'node -e "process.exit(3)" {url} {token} {host_id} {state_dir}', '--timeout-ms', '1000', '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/never completed agent\.hello/);
    const rep = parseJson(r);
    expect(rep.ok).toBe(false);
    // every case listed SKIPPED saying why, none left out (DECISIONS K15)
    expect(rep.cases.map((c) => c.id)).toEqual(agentCasePlan({ enrollCommand: undefined }).map((c) => c.id));
    for (const c of rep.cases) expect(`${c.status} ${c.seen}`, c.id).toMatch(/^SKIP not run: no hello of the agent was ever answered \(--run-command: see the error after the report\)$/);
    expect(rep.skipped).toBe(rep.cases.length);
  }, 30_000);
});
