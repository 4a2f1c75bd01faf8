// The agent suite against a third-party agent (fixtures/third-party-agent.mjs: only the package
// and ws, no enroll step) in run-only mode, clean and with one deliberate fault each
// (DECISIONS K14): the clean agent passes every case (its first hello, the run command's, gets the
// log sources); `--only` passes and lists every other case as SKIPPED "not selected by --only";
// an agent that reconnects without backoff gets its FAIL and the rest of the run, never an
// internal error, with each result printed as it finishes; a ServerReload/Decommission closed
// 1001 fails "close 1000"; a frame over the limit from the agent is one FAIL in
// agent/frames-within-limit naming its size (the cases it broke are SKIPPED, not judged); and the
// cases for permessage-deflate, an incoming oversize or binary frame, the batch limit and the
// heartbeat cadence each catch their fault.
//
// And (DECISIONS K15-K19): an agent that does not save its rotated token gets that FAIL and every
// other case listed — those of its host SKIPPED naming the case, the fresh hosts' cases and the
// checks over the whole run judged — never a report that stops after five cases; one that saves
// it only once a push is acked fails agent/rotated-token-saved-before-sending (killed at its
// first frame after the HelloResult) and the story goes on; an agent that acts on every refusal,
// also one that reaches it after its resend, passes agent/push-payload-too-large every time; a
// final_seq one beyond the acked seq fails agent/shutdown-decommission; the quiet-window message
// counts from the close it starts at; and an agent that never answers probe.request fails
// agent/probe-unknown while the cases that need its barrier are SKIPPED naming that case.
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { ROOT, buildConformance, failures, parseJson, runConformance, statusOf, type JsonReport, type RunResult } from './helpers.js';
import { agentCasePlan } from '../../conformance/agent-suite.js';

const AGENT = join(ROOT, 'test/conformance/fixtures/third-party-agent.mjs');

/** The runner's agent suite against the fixture with FAULT, in run-only mode (no --enroll-command). */
function suite(fault: string, extra: string[]): Promise<RunResult> {
  return runConformance([
    'agent',
    '--run-command', `FAULT=${fault} BACKOFF_BASE_MS=100 BACKOFF_CAP_MS=2000 node ${AGENT} {url} {token} {host_id} {state_dir}`,
    '--probe', 'sys.uptime', '--long-probe', 'demo.sleep', '--long-probe-args', '{"ms":200}',
    '--failing-probe', 'demo.fail', '--slow-probe', 'demo.sleep', '--slow-probe-args', '{"ms":500}', '--slow-probe-timeout-ms', '50',
    '--internal-error-probe', 'demo.bug', '--push-window', '4', '--agent-hello-timeout-ms', '1000', '--agent-request-timeout-ms', '1500',
    '--backoff-base-ms', '100', '--backoff-cap-ms', '2000', '--quiet-window-ms', '1500',
    ...extra,
  ], 170_000);
}

/** "STATUS id — …" lines of the text output. */
function textCases(stdout: string): { status: string; id: string; line: string }[] {
  return stdout.split('\n').flatMap((line) => {
    const m = /^(PASS|FAIL|SKIP|XFAIL|XPASS) (\S+) — /.exec(line);
    return m ? [{ status: m[1]!, id: m[2]!, line }] : [];
  });
}

const runs: Record<string, RunResult> = {};
const json = (name: string): JsonReport => parseJson(runs[name]!);

beforeAll(async () => {
  buildConformance();
  // Each run is a whole agent suite (or the --only cases) with real timeouts and timers, mostly
  // waiting: at most four at a time (as many as the runs were waves of), the next one started as
  // soon as one ends, the longest first (a whole suite, then the --only runs by their length).
  const plan: [string, () => Promise<RunResult>][] = [
    ['oversize', () => suite('oversize', ['--json'])],
    ['clean', () => suite('', ['--json'])],
    ['no-backoff', () => suite('no-backoff', [])],
    [
      'faults',
      () => suite('deflate,no-frame-limit,binary-ignored,hb-once,close-1001', [
        '--only', 'agent/no-compression,agent/incoming-oversize-1009,agent/incoming-binary-1003,agent/heartbeat-cadence,agent/shutdown-server-reload,agent/shutdown-decommission',
        '--json',
      ]),
    ],
    ['no-probe', () => suite('no-probe', ['--only', 'agent/probe-unknown,agent/config-update,vector/config.update/example/*,vector/config.update/params/apply_after/*,agent/shutdown-server-reload,agent/reconnect-after-reload', '--json'])],
    // on its own: with batches of 600 the agent's one push outlives its request timeout while acks are held
    ['big-batch', () => suite('big-batch', ['--only', 'agent/push-window-several,agent/batch-limit', '--json'])],
    ['no-rotate', () => suite('no-rotate', ['--json'])],
    ['rotate-late', () => suite('rotate-late', ['--only', 'agent/logs-sequencing,agent/kill-with-unacked,agent/rotated-token-persisted,agent/replay-after-kill,agent/no-seq-reuse,agent/rotated-token-saved-before-sending,agent/heartbeat', '--json'])],
    ['refusals-shutdown', () => suite('every-refusal,final-seq-next,revoked-ignored', ['--only', 'agent/push-payload-too-large,agent/shutdown-decommission,agent/shutdown-revoked', '--json'])],
    ['log-source', () => suite('', ['--log-source', '{"kind":"file","path":"{file}"}', '--only', 'agent/logs-sequencing,agent/kill-with-unacked,agent/replay-after-kill', '--json'])],
    ['only', () => suite('', ['--only', 'agent/logs-sequencing'])],
  ];
  let next = 0;
  const lane = async () => {
    while (next < plan.length) {
      const [name, run] = plan[next++]!;
      runs[name] = await run();
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
}, 600_000);

describe('the agent suite against a third-party agent in run-only mode', () => {
  it('the clean agent passes every case: its first hello (the run command\'s) carries the log sources, so the log cases run', () => {
    const rep = json('clean');
    expect(failures(rep), runs['clean']!.stderr).toEqual([]);
    expect(rep.cases.filter((c) => c.status === 'SKIP').map((c) => `${c.id}: ${c.seen}`)).toEqual([]);
    for (const id of ['agent/logs-sequencing', 'agent/kill-with-unacked', 'agent/replay-after-kill', 'agent/no-seq-reuse', 'agent/config-apply-after',
      'agent/shutdown-server-reload', 'agent/shutdown-decommission', 'agent/no-compression', 'agent/incoming-oversize-1009', 'agent/incoming-binary-1003',
      'agent/frames-within-limit', 'agent/batch-limit', 'agent/heartbeat-cadence']) expect(statusOf(rep, id), `${id}: ${rep.cases.find((c) => c.id === id)?.seen}`).toBe('PASS');
    expect(runs['clean']!.code).toBe(0);
  });

  it('--log-source in run-only mode: the first hello carries it', () => {
    const rep = json('log-source');
    expect(failures(rep), runs['log-source']!.stderr).toEqual([]);
    for (const id of ['agent/logs-sequencing', 'agent/kill-with-unacked', 'agent/replay-after-kill']) expect(statusOf(rep, id), `${id}: ${rep.cases.find((c) => c.id === id)?.seen}`).toBe('PASS');
    expect(runs['log-source']!.code).toBe(0);
  });

  it('--only X passes (exit 0) and lists every case not selected as SKIPPED "not selected by --only", counted in the summary', () => {
    const r = runs['only']!;
    expect(r.code, `${r.stderr}\n${r.stdout.slice(-3000)}`).toBe(0);
    const cases = textCases(r.stdout);
    expect(cases.filter((c) => c.status !== 'SKIP').map((c) => c.line)).toEqual([expect.stringMatching(/^PASS agent\/logs-sequencing — /)]);
    for (const c of cases.filter((x) => x.status === 'SKIP')) expect(c.line).toBe(`SKIP ${c.id} — not selected by --only`);
    // the same cases as the whole run, each listed once
    expect(cases.map((c) => c.id).sort()).toEqual(json('clean').cases.map((c) => c.id).sort());
    expect(r.stdout.trim().split('\n').at(-1)).toBe(`1 passed, 0 failed, ${cases.length - 1} skipped`);
  });

  it('an agent that reconnects without backoff: agent/backoff-bounds FAILS, the run goes on to its end with each line printed, no internal error', () => {
    const r = runs['no-backoff']!;
    expect(r.stderr).not.toMatch(/E_INTERNAL|internal error/);
    expect(r.code).toBe(1);
    const cases = textCases(r.stdout);
    expect(cases.filter((c) => c.status === 'FAIL').map((c) => c.line)).toEqual([expect.stringMatching(/^FAIL agent\/backoff-bounds — expected some backoff .*reconnecting without backoff/)]);
    // the cases after it ran (against a fresh agent process)
    const after = cases.slice(cases.findIndex((c) => c.id === 'agent/backoff-bounds') + 1);
    expect(after.length).toBeGreaterThan(20);
    for (const id of ['agent/push-window-several', 'agent/shutdown-decommission', 'agent/fatal-auth', 'agent/requests-valid']) expect(cases.find((c) => c.id === id)?.status, id).toBe('PASS');
    expect(r.stdout.trim().split('\n').at(-1)).toMatch(/^\d+ passed, 1 failed, 0 skipped$/);
  });

  it('a frame over the limit from the agent: one FAIL, agent/frames-within-limit, naming the size and the limit; the cases it broke are SKIPPED as not judged', () => {
    const rep = json('oversize');
    expect(rep.cases.filter((c) => c.status === 'FAIL').map((c) => c.id)).toEqual(['agent/frames-within-limit']);
    const f = rep.cases.find((c) => c.id === 'agent/frames-within-limit')!;
    expect(f.seen).toMatch(/the agent sent a frame of 1048705 bytes, over the max_frame_bytes limit of 1048576/);
    const notJudged = rep.cases.filter((c) => c.status === 'SKIP');
    expect(notJudged.length).toBeGreaterThan(0);
    // each says why: the frame (or, passed on, the case it needs that was not judged for it)
    for (const c of notJudged) expect(c.seen, c.id).toMatch(/the agent sent a frame of \d+ bytes, over the max_frame_bytes limit of 1048576/);
    expect(notJudged.filter((c) => c.seen.startsWith('not judged: ')).length).toBeGreaterThan(0);
    // nothing says a bare 1006 or "no response" without the reason
    for (const c of rep.cases) expect(c.seen, c.id).not.toMatch(/no response$|\(1006\)/);
  });

  it('each fault is caught by its case, saying what the contract wants', () => {
    const rep = json('faults');
    const seen = (id: string) => rep.cases.find((c) => c.id === id);
    const failed = (id: string, pattern: RegExp) => {
      expect(seen(id)?.status, `${id}: ${seen(id)?.seen}`).toBe('FAIL');
      expect(`expected ${seen(id)!.expected}; seen ${seen(id)!.seen}`, id).toMatch(pattern);
    };
    failed('agent/no-compression', /offered "permessage-deflate/);
    failed('agent/incoming-oversize-1009', /closes with 1009.*still open/);
    failed('agent/incoming-binary-1003', /closes with 1003.*still open/);
    failed('agent/heartbeat-cadence', /heartbeats at most 12000 ms apart; seen \d+ ms since the last heartbeat/);
    failed('agent/shutdown-server-reload', /expected close 1000 Normal closure; seen close 1001 GoingAway/);
    failed('agent/shutdown-decommission', /expected close 1000 Normal closure; seen close 1001 GoingAway/);
    expect(runs['faults']!.code).toBe(1);
  });

  it('every case of the plan is listed, in its order (agentCasePlan is what the story runs)', () => {
    expect(json('clean').cases.map((c) => c.id)).toEqual(agentCasePlan({ enrollCommand: undefined }).map((c) => c.id));
  });

  it('an agent that does not save its rotated token: that one FAIL, showing what the agent said; its host\'s other cases SKIPPED naming it; the fresh hosts and the whole-run checks judged; every case listed and counted', () => {
    const r = runs['no-rotate']!;
    const rep = json('no-rotate');
    expect(r.code).toBe(1);
    expect(failures(rep)).toEqual([expect.stringMatching(/^agent\/rotated-token-persisted: expected the last rotated token; seen the enrollment token: hello refused -32001 \(agent output: .*hello failed -32001 AuthFailed/)]);
    const plan = agentCasePlan({ enrollCommand: undefined });
    expect(rep.cases.map((c) => c.id)).toEqual(plan.map((c) => c.id));
    expect(rep.passed + rep.failed + rep.skipped).toBe(plan.length);
    expect(rep.skipped).toBe(rep.cases.filter((c) => c.status === 'SKIP').length);
    const ids = plan.map((c) => c.id);
    const at = ids.indexOf('agent/rotated-token-persisted');
    const fresh = ids.indexOf('agent/push-window-several');
    for (const c of rep.cases.slice(at + 1, fresh)) {
      expect(c.status, c.id).toBe('SKIP');
      expect(c.seen, c.id).toMatch(/^needs agent\/rotated-token-persisted: the agent started again after a SIGKILL presented the enrollment token and was refused/);
    }
    // a fresh process of the run command was tried for the rest of the host's cases: refused too
    for (const c of rep.cases.filter((x) => plan.find((p) => p.id === x.id)!.part === 'A').slice(fresh)) {
      expect(c.status, c.id).toBe('SKIP');
      expect(c.seen, c.id).toMatch(/^needs the run command \(--run-command\), started again on this host's state dir, to connect: it presented the enrollment token and was refused \(as before: needs agent\/rotated-token-persisted/);
    }
    for (const p of plan.filter((x) => x.part !== 'A')) expect(statusOf(rep, p.id), `${p.id}: ${rep.cases.find((c) => c.id === p.id)?.seen}`).toBe('PASS');
  });

  it('an agent that saves its rotated token only once a push is acked fails agent/rotated-token-saved-before-sending (SIGKILLed at its first frame after the HelloResult), and the story goes on', () => {
    const rep = json('rotate-late');
    const seen = (id: string) => rep.cases.find((c) => c.id === id);
    expect(failures(rep)).toEqual([expect.stringMatching(/^agent\/rotated-token-saved-before-sending: expected the rotated_token of the HelloResult before the kill, saved before the agent's first frame after it \(a logs\.push\); seen the token before it: the rotated token was not saved when the agent sent its logs\.push/)]);
    for (const id of ['agent/rotated-token-persisted', 'agent/replay-after-kill', 'agent/no-seq-reuse', 'agent/heartbeat']) expect(seen(id)?.status, `${id}: ${seen(id)?.seen}`).toBe('PASS');
  });

  const refusalsShutdown = (id: string) => json('refusals-shutdown').cases.find((c) => c.id === id)!;

  it('an agent that acts on every refusal, also a follow-on -32020 it reads after its resend (so it sends those entries once more), passes -32008', () => {
    const ptl = refusalsShutdown('agent/push-payload-too-large');
    expect(ptl.status, ptl.seen).toBe('PASS');
    const after = /; then (.*)$/.exec(ptl.seen)![1]!.split(', ');
    expect(new Set(after).size, ptl.seen).toBeLessThan(after.length);
  });

  it('a close reason final_seq one beyond the seq acked fails agent/shutdown-decommission, saying so', () => {
    const dec = refusalsShutdown('agent/shutdown-decommission');
    expect(dec.status).toBe('FAIL');
    const m = /^final_seq=(\d+): the last seq acked when the agent closed \(PROTOCOL\.md#shutdown-and-drain\)$/.exec(dec.expected);
    expect(m, dec.expected).not.toBeNull();
    expect(dec.seen).toBe(`reason final_seq=${Number(m![1]) + 1}: 1 beyond the seq acked`);
  });

  it('an agent that reconnects after Revoked: the quiet-window message counts from the close it starts at, and its numbers agree', () => {
    const rev = refusalsShutdown('agent/shutdown-revoked');
    expect(rev.status).toBe('FAIL');
    expect(rev.expected).toBe('no connection attempt from the notification until 1500 ms after the close');
    const q = /^an attempt (\d+) ms after the close \((\d+) ms after the notification; the scripted server closed it 4002 (\d+) ms after the notification: the agent had not\)$/.exec(rev.seen);
    expect(q, rev.seen).not.toBeNull();
    const [afterClose, afterNotification, closedAfter] = q!.slice(1).map(Number) as [number, number, number];
    expect(afterClose).toBeLessThanOrEqual(1500);
    expect(afterNotification).toBe(afterClose + closedAfter);
  });

  it('an agent that never answers probe.request: agent/probe-unknown FAILS, the cases that need the barrier are SKIPPED naming it', () => {
    const rep = json('no-probe');
    expect(failures(rep)).toEqual([expect.stringMatching(/^agent\/probe-unknown: expected error -32010; seen timeout/)]);
    const barrierCases = rep.cases.filter((c) => c.id === 'agent/config-update' || c.id === 'agent/shutdown-server-reload' || c.id.startsWith('vector/config.update/example/') || c.id.startsWith('vector/config.update/params/apply_after/'));
    expect(barrierCases.length).toBe(5);
    for (const c of barrierCases) {
      expect(c.status, c.id).toBe('SKIP');
      expect(c.seen, c.id).toMatch(/^needs agent\/probe-unknown: the agent has answered no probe\.request in this run \(agent\/probe-unknown failed: timeout/);
    }
    expect(rep.cases.find((c) => c.id === 'agent/reconnect-after-reload')?.seen).toMatch(/^needs agent\/shutdown-server-reload to send the ServerReload \(it was skipped: needs agent\/probe-unknown/);
  });

  it('batches over the negotiated limit (DECISIONS B4) fail agent/batch-limit, naming the limit and its parts', () => {
    const rep = json('big-batch');
    const c = rep.cases.find((x) => x.id === 'agent/batch-limit')!;
    expect(c.status, c.seen).toBe('FAIL');
    expect(`expected ${c.expected}; seen ${c.seen}`).toMatch(/expected at most 100 entries per logs\.push \(min\(config\.max_batch_entries 100, capabilities\.max_batch_entries 100, 1000\)\); seen a logs\.push of \d{3,} entries/);
  });
});
