// The agent suite: starts a scripted server (./scripted-server.ts) and drives any agent,
// given as command lines, through the agent side of the contract. One story, in order:
//
//   A. enroll (or first run) ─▶ hello contents, subprotocol, first-enrollment rotation
//      run ─▶ hello carries the rotated token; we rotate again (DESIGN 5.2)
//      (run-only mode: the run's first hello already gets the log sources)
//      logs: the agent ships what it reads (a "file" source we append to, or --emit-command)
//      hold acks, SIGKILL, restart ─▶ rotated token persisted, unacked seqs resent, none reused
//      restart rotated again, SIGKILL at the agent's first frame after that HelloResult ─▶
//      started again, its hello carries the new token (saved before anything was sent)
//      probes (unknown → -32010, generated -32602 vectors), -32601, config.update (valid and
//      generated invalid ones), generated invalid agent.shutdown (must be ignored)
//      heartbeat cadence (every session so far, two in this one)
//      ServerReload ─▶ clean close (1000) final_seq=<n>, reconnect within the backoff bound
//      refused upgrades ─▶ full-jitter backoff bounds
//      a fresh agent process (its backoff starts over): the sender (DECISIONS K9): the window
//      with acks held, a partial ack (then a server restart), -32008, -32020 with
//      retry_after_ms, an ack beyond what was sent; a frame over the limit (close 1009), a binary
//      frame (close 1003); a hello answered -32603, an accepted_seq beyond max_seq
//      Decommission ─▶ drain, close, reconnect, -32002 ─▶ no more connections; started
//      again, no hello with the revoked token
//   B. fresh state dir: enroll, run, Revoked ─▶ no more connections
//   C. fresh state dir: a reconnect refused -32001 ─▶ no more connections
//   D. fresh state dir: accepted_seq = max_seq ─▶ the session stays open
//   over the whole run: no permessage-deflate offered, no frame over the limit, no batch over
//   the limit (B4), every hello and request valid
// A case the agent's oversize frame broke is SKIPPED (runner.consequence); between cases the
// suite follows the agent to its newest live session (runner.beforeEach); nothing thrown between
// cases ends the report (DECISIONS K14). When a step story A needs did not happen (the restarted
// agent lost its credential, the run command never connected), its later cases are SKIPPED naming
// the case that failed (runner.gate) until a fresh agent process connects; B, C, D and the checks
// over the whole run still run. Every case of agentCasePlan is listed, run or not (DECISIONS K15).
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLOSE_CODE_TABLE,
  ERROR_TABLE,
  LIMITS,
  METHOD_CATALOG,
  PeerError,
  describeIssues,
  toIssues,
  PROTOCOL_VERSION,
  RpcError,
  TokenRevokedError,
  AuthFailedError,
  InternalError,
  BackpressureError,
  BufferOverflowError,
  PayloadTooLargeError,
  UnknownHostError,
  validateAgentConfig,
  type AgentConfig,
  type AgentHelloParams,
  type LogSourceConfig,
} from '@cortex/agent-protocol';
import { BailOut, CaseFailure, CaseSkip, Runner, expect, js, type CaseResult } from './report.js';
import { ScriptedServer, oversizeText, type PushRecord, type Session } from './scripted-server.js';
import { UsageError, fillTemplate, intOption, lastLines, randomToken, runShell, spawnShell, templateHas, within, type ParsedArgs, type Spawned } from './util.js';
import { clone, loadVectors, type Vector } from './vectors.js';

export const AGENT_VALUE_OPTIONS = [
  'enroll-command', 'run-command', 'emit-command', 'log-source', 'probe', 'probe-args', 'backoff-base-ms', 'backoff-cap-ms',
  'heartbeat-wait-ms', 'quiet-window-ms', 'backoff-attempts',
  'push-window', 'agent-hello-timeout-ms', 'agent-request-timeout-ms', 'long-probe', 'long-probe-args',
  'failing-probe', 'failing-probe-args', 'slow-probe', 'slow-probe-args', 'slow-probe-timeout-ms', 'internal-error-probe', 'internal-error-probe-args',
];
export const AGENT_FLAGS: string[] = [];

export interface AgentSuiteOptions {
  enrollCommand: string | undefined;
  runCommand: string;
  emitCommand: string | undefined;
  logSource: string | undefined;
  probe: string | undefined;
  probeArgs: unknown;
  backoffBaseMs: number;
  backoffCapMs: number;
  backoffAttempts: number;
  heartbeatWaitMs: number | undefined;
  quietWindowMs: number;
  timeoutMs: number;
  /** The most logs.push requests the agent under test keeps in flight (its declared window). */
  pushWindow?: number | undefined;
  /** Probes that make the agent answer -32011 / -32012 / -32603 (name and args). */
  failingProbe?: { probe: string; args: unknown } | undefined;
  slowProbe?: { probe: string; args: unknown } | undefined;
  slowProbeTimeoutMs: number;
  /** A probe that succeeds and runs for a while (100 ms or more) with these args: the probe_concurrency case. */
  longProbe?: { probe: string; args: unknown } | undefined;
  /** The agent's own wait for a HelloResult and for a logs.push answer, as it was started with (the unanswered-hello and unanswered-push cases). */
  agentHelloTimeoutMs?: number | undefined;
  agentRequestTimeoutMs?: number | undefined;
  internalErrorProbe?: { probe: string; args: unknown } | undefined;
}

export function agentOptionsFrom(p: ParsedArgs): AgentSuiteOptions {
  const runCommand = p.values.get('run-command');
  if (runCommand === undefined) throw new UsageError('agent: --run-command is required');
  const enrollCommand = p.values.get('enroll-command');
  if (enrollCommand === undefined) {
    for (const ph of ['url', 'token', 'host_id', 'state_dir']) {
      if (!templateHas(runCommand, ph)) throw new UsageError(`agent: without --enroll-command, --run-command must contain {${ph}} (it has to enroll by itself)`);
    }
  } else if (!templateHas(runCommand, 'state_dir')) throw new UsageError('agent: --run-command must contain {state_dir}');
  let probeArgs: unknown = {};
  const pa = p.values.get('probe-args');
  if (pa !== undefined) {
    try {
      probeArgs = JSON.parse(pa);
    } catch {
      throw new UsageError('--probe-args must be JSON');
    }
  }
  const ls = p.values.get('log-source');
  if (ls !== undefined) {
    let source: unknown;
    try {
      source = JSON.parse(ls.replace(/\{file\}/g, '/tmp/x'));
    } catch {
      throw new UsageError('--log-source must be a JSON LogSourceConfig ({file} may appear in it)');
    }
    const probe = { heartbeat_interval_secs: HEARTBEAT_SECS, max_batch_entries: 100, flush_interval_ms: 50, probe_concurrency: 1, log_sources: [source] };
    if (!validateAgentConfig(probe)) throw new UsageError(`--log-source does not make a valid AgentConfig: ${describeIssues(toIssues(validateAgentConfig.errors))}`);
  }
  const probeOption = (name: string): { probe: string; args: unknown } | undefined => {
    const probe = p.values.get(name);
    const raw = p.values.get(`${name}-args`);
    if (probe === undefined) {
      if (raw !== undefined) throw new UsageError(`--${name}-args needs --${name}`);
      return undefined;
    }
    try {
      return { probe, args: raw === undefined ? {} : (JSON.parse(raw) as unknown) };
    } catch {
      throw new UsageError(`--${name}-args must be JSON`);
    }
  };
  return {
    failingProbe: probeOption('failing-probe'),
    slowProbe: probeOption('slow-probe'),
    slowProbeTimeoutMs: intOption(p, 'slow-probe-timeout-ms', 1) ?? 50,
    longProbe: probeOption('long-probe'),
    agentHelloTimeoutMs: intOption(p, 'agent-hello-timeout-ms', 1),
    agentRequestTimeoutMs: intOption(p, 'agent-request-timeout-ms', 1),
    internalErrorProbe: probeOption('internal-error-probe'),
    enrollCommand,
    runCommand,
    emitCommand: p.values.get('emit-command'),
    logSource: ls,
    probe: p.values.get('probe'),
    probeArgs,
    backoffBaseMs: intOption(p, 'backoff-base-ms', 1) ?? 1000,
    backoffCapMs: intOption(p, 'backoff-cap-ms', 1) ?? 60_000,
    backoffAttempts: intOption(p, 'backoff-attempts', 1) ?? 3,
    heartbeatWaitMs: intOption(p, 'heartbeat-wait-ms', 1),
    quietWindowMs: intOption(p, 'quiet-window-ms', 1) ?? 3000,
    timeoutMs: intOption(p, 'timeout-ms', 1) ?? 5000,
    pushWindow: intOption(p, 'push-window', 1),
  };
}

/** Timer and scheduling slack added to every upper bound measured on the agent. */
const SLACK_MS = 400;
/** What a lower bound allows for the two clocks' timers (the agent's and ours). */
const clockMarginMs = 25;
/** How long the agent may take to read a line appended to a file source (the reference agent polls every 250 ms). */
const READ_ALLOWANCE_MS = 300;
const HEARTBEAT_SECS = 5;

/** The generated vectors the suite sends the agent: every server→agent method's messages but a valid agent.shutdown (a case of its own). */
function serverToAgentVectors(): { method: string; info: (typeof METHOD_CATALOG)[number]; v: Vector }[] {
  const out: { method: string; info: (typeof METHOD_CATALOG)[number]; v: Vector }[] = [];
  for (const [method, list] of loadVectors()) {
    const info = METHOD_CATALOG.find((m) => m.name === method);
    if (!info || info.direction !== 'server_to_agent') continue;
    for (const v of list) {
      if (typeof v.message['method'] !== 'string') continue;
      // A valid Revoked shutdown is the behavioural case at the end, not a vector.
      if (method === 'agent.shutdown' && v.expected.outcome === 'accepted') continue;
      out.push({ method, info, v });
    }
  }
  return out;
}

/** The ERROR_TABLE rows an agent answers with (agent or either direction): one case each. */
function agentErrorRows(): (typeof ERROR_TABLE)[number][] {
  return ERROR_TABLE.filter((row) => row.direction !== 'server');
}

/**
 * The part of the story a case belongs to: A (one host, the agent's processes on one state
 * dir), B, C and D (a fresh host and state dir each) and W (checks over the whole run).
 */
export type CasePart = 'A' | 'B' | 'C' | 'D' | 'W';

/**
 * Every case of the agent suite, in the order the story runs them. A case the story cannot
 * reach (the agent never completed a hello; the suite stopped between cases) is listed SKIPPED
 * from here with the reason, never left out (conformance/README.md "No silent skips").
 * The story's runner.run calls follow this list: test/conformance/agent-suite-robustness.test.ts
 * and agent.test.ts compare it with the ids whole runs report.
 */
export function agentCasePlan(o: Pick<AgentSuiteOptions, 'enrollCommand'>): { id: string; part: CasePart }[] {
  const enroll = o.enrollCommand !== undefined;
  const part = (p: CasePart) => (ids: string[]) => ids.map((id) => ({ id, part: p }));
  const a = part('A');
  return [
    ...a([
      ...(enroll ? ['agent/enroll-exit'] : []),
      'agent/subprotocol-offered',
      'agent/hello-contents',
      ...(enroll ? ['agent/rotated-token-used'] : []),
      'agent/logs-sequencing',
      'agent/kill-with-unacked',
      'agent/rotated-token-persisted',
      'agent/replay-after-kill',
      'agent/no-seq-reuse',
      'agent/rotated-token-saved-before-sending',
      'agent/heartbeat',
      'agent/probe-unknown',
      'agent/probe-round-trip',
    ]),
    ...a(serverToAgentVectors().map(({ v }) => `vector/${v.id}`)),
    ...a(['agent/config-update', 'agent/config-apply-after', 'agent/config-apply-after-far', 'agent/config-metrics-interval', 'agent/config-metrics-interval-long', 'agent/probe-concurrency', 'agent/heartbeat-cadence']),
    ...a(agentErrorRows().map((row) => `error/${row.code}-${row.name}`)),
    ...a([
      'agent/shutdown-server-reload', 'agent/reconnect-after-reload', 'agent/backoff-bounds',
      'agent/push-window-several', 'agent/push-window-bound', 'agent/push-partial-ack', 'agent/push-payload-too-large',
      'agent/push-backpressure', 'agent/push-buffer-overflow', 'agent/push-backpressure-default-pause', 'agent/push-backpressure-zero-pause',
      'agent/push-flush-latency', 'agent/push-unknown-host', 'agent/push-unanswered', 'agent/push-ack-beyond-sent',
      'agent/incoming-oversize-1009', 'agent/incoming-binary-1003', 'agent/hello-error-retried', 'agent/accepted-seq-beyond-max', 'agent/hello-unanswered',
      'agent/shutdown-decommission', 'agent/decommission-then-revoked', 'agent/revoked-token-deleted',
    ]),
    ...part('B')(['agent/shutdown-revoked']),
    ...part('C')(['agent/fatal-auth']),
    ...part('D')(['agent/accepted-seq-at-max']),
    ...part('W')(['agent/hello-valid', 'agent/no-compression', 'agent/frames-within-limit', 'agent/batch-limit', 'agent/requests-valid']),
  ];
}

/** Runs the suite; returns a message when the agent could not be driven at all. */
export async function runAgentSuite(o: AgentSuiteOptions, runner: Runner): Promise<string | undefined> {
  const server = new ScriptedServer();
  await server.start();
  const work = mkdtempSync(join(tmpdir(), 'cortex-conformance-'));
  const logFile = join(work, 'source.log');
  writeFileSync(logFile, '');
  const procs: Spawned[] = [];
  try {
    return await story(o, runner, server, work, logFile, procs);
  } catch (err) {
    // Anything thrown between cases (a case's own failures are its results) ends the story but
    // not the report: it is a FAIL, and every result so far is kept (DECISIONS K14).
    if (err instanceof BailOut) throw err;
    const what = betweenCases(err);
    if (!runner.results.some((r) => r.id === 'agent/suite-stopped')) runner.fail('agent/suite-stopped', 'the agent suite runs to its end', `it stopped between cases: ${what}`);
    return `the agent suite stopped between cases (${what}); the results so far are reported`;
  } finally {
    runner.consequence = undefined;
    runner.beforeEach = undefined;
    runner.gate = undefined;
    for (const p of procs) p.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** What was thrown between cases, for agent/suite-stopped. */
function betweenCases(err: unknown): string {
  return err instanceof CaseFailure ? `expected ${err.expected}; seen ${err.seen}` : err instanceof Error ? err.message : String(err);
}

async function story(o: AgentSuiteOptions, runner: Runner, server: ScriptedServer, work: string, logFile: string, procs: Spawned[]): Promise<string | undefined> {
  const t = o.timeoutMs;
  const startTimeout = Math.max(t * 3, 3000);
  const hostId = randomUUID();
  const enrollToken = randomToken();
  const stateDir = join(work, 'state-a');
  /** Tokens the scripted server accepts, and the one the agent must use next. */
  let validTokens = new Set([enrollToken]);
  let expectedToken = enrollToken;
  /** Every token the scripted server rotated to, in order (to say which one a hello carried). */
  const issuedTokens: string[] = [];
  /**
   * A previous token the next accepted hello may still present, once (a rotation's grace, as a
   * server gives one after a rotation that is not the first enrollment's): accepted and rotated
   * again, so that the story goes on after agent/rotated-token-saved-before-sending failed.
   */
  let graceToken: string | undefined;
  let enrolled = false;
  // The log sources every HelloResult carries (DECISIONS K14): --log-source from the start, or the
  // suite's own file source from the first hello that declares the "file" kind (run-only mode's
  // first hello is the run command's: it must get them too).
  let logSources: LogSourceConfig[] = o.logSource !== undefined ? [JSON.parse(o.logSource.replace(/\{file\}/g, JSON.stringify(logFile).slice(1, -1))) as LogSourceConfig] : [];
  /** The suite's own file source is still to be given to an agent that declares the "file" kind (off for the last case's host). */
  let autoFileSource = o.emitCommand === undefined && o.logSource === undefined;
  let emitMode: 'file' | 'command' | 'none' = 'none';
  let lineNo = 0;
  let revokeNextHello = false;
  /** The next hello gets -32001 AuthFailed (close 4001): the FatalAuth case. */
  let authFailNextHello = false;
  let rotateNextHello = false;
  /** How the next hello is answered instead (the hello-error and accepted_seq cases). */
  let nextHelloOverride: 'internal-error' | 'seq-beyond-max' | 'no-answer' | undefined;
  /** Every accepted hello is answered accepted_seq = max_seq (the last case, on its own host). */
  let seqAtMax = false;
  const allHellos: { session: Session; params: unknown }[] = [];

  const config = (): AgentConfig => ({ heartbeat_interval_secs: HEARTBEAT_SECS, max_batch_entries: 100, flush_interval_ms: 50, metrics_interval_secs: 3600, probe_concurrency: 4, log_sources: logSources });

  server.onHello = (params, session) => {
    allHellos.push({ session, params: session.helloRaw });
    if (autoFileSource && logSources.length === 0 && params.capabilities.sources.includes('file')) logSources = [{ kind: 'file', path: logFile }];
    if (revokeNextHello) return { error: new TokenRevokedError({ reason: 'revoked' }, 'TokenRevoked'), closeCode: 4002 };
    if (authFailNextHello) {
      authFailNextHello = false;
      return { error: new AuthFailedError({ reason: 'token_hash_mismatch' }, 'AuthFailed'), closeCode: 4001 };
    }
    if (nextHelloOverride === 'internal-error') {
      nextHelloOverride = undefined;
      return { error: new InternalError({ reason: 'conformance: a failure on the server side' }), closeCode: 1011 };
    }
    if (nextHelloOverride === 'no-answer') {
      nextHelloOverride = undefined;
      return 'no-answer';
    }
    const grace = graceToken !== undefined && params.token === graceToken;
    if (params.host_id.toLowerCase() !== currentHost || (!validTokens.has(params.token) && !grace)) return { error: new AuthFailedError({ reason: 'token_hash_mismatch' }, 'AuthFailed'), closeCode: 4001 };
    graceToken = undefined;
    let rotated: string | undefined;
    if (!enrolled || rotateNextHello || grace) {
      rotated = randomToken();
      issuedTokens.push(rotated);
      validTokens = new Set([rotated]);
      expectedToken = rotated;
      enrolled = true;
      rotateNextHello = false;
    }
    const beyondMax = nextHelloOverride === 'seq-beyond-max';
    if (beyondMax) nextHelloOverride = undefined;
    return {
      result: {
        server_version: 'cortex-conformance',
        server_time: new Date().toISOString(),
        accepted_seq: beyondMax ? LIMITS.max_seq + 1 : seqAtMax ? LIMITS.max_seq : server.store.accepted,
        session_id: randomUUID(),
        config: config(),
        ...(rotated !== undefined ? { rotated_token: rotated } : {}),
      },
    };
  };
  let currentHost = hostId;

  // A case that fails because the agent sent a frame over the limit (the scripted server closed
  // the session 1009 under it, or before it on the session it uses) is not judged: SKIPPED with
  // that reason. agent/frames-within-limit is the one FAIL for it (DECISIONS K14). The checks over
  // the whole run are judged as they are.
  const WHOLE_RUN = new Set(['agent/no-compression', 'agent/frames-within-limit', 'agent/batch-limit', 'agent/hello-valid', 'agent/requests-valid']);
  /** The session the cases use (`session` below, once there is one). */
  let inUse: () => Session | undefined = () => server.current;
  runner.consequence = (id, startedAt) => {
    if (WHOLE_RUN.has(id)) return undefined;
    const used = inUse();
    const hit = server.sessions.find((x) => x.oversize !== undefined && x.oversize.at >= startedAt) ?? (used?.oversize !== undefined && !used.isOpen ? used : undefined);
    return hit === undefined ? undefined : `not judged: ${oversizeText(hit.oversize!)}; the scripted server closed session #${hit.index} 1009 for it, before this case could judge the agent`;
  };

  const values = (dir: string, tok: string, host: string) => ({ url: server.url, token: tok, host_id: host, state_dir: dir, file: logFile });
  const startRun = (dir: string, tok: string, host: string): Spawned => {
    const p = spawnShell(fillTemplate(o.runCommand, values(dir, tok, host)));
    procs.push(p);
    return p;
  };
  const hint = (p?: Spawned) => (p ? ` (agent output: ${lastLines(p.output(), 4) || 'none'})` : '');

  /** The next session that completed its hello (with a result or an error). */
  async function nextHello(from: number, timeoutMs: number): Promise<Session | undefined> {
    const ok = await server.until(() => server.sessions.slice(from).some((s) => s.helloAnswered !== undefined), timeoutMs);
    return ok ? server.sessions.slice(from).find((s) => s.helloAnswered !== undefined) : undefined;
  }

  /** " (agent output: …)" once the agent has had a moment to say why (it logs a refused hello after the answer arrives). */
  const said = async (p?: Spawned): Promise<string> => {
    if (p !== undefined) await within(p.exited, 500, undefined);
    return hint(p);
  };

  const fileSourceNeeds =
    'needs the suite\'s own "file" log source (the case adds a second file through config.update): runs when the agent declares the "file" source kind and neither --emit-command nor --log-source is given';
  const logsSkip = 'needs a way to make the agent log: it does not declare the "file" source kind; pass --emit-command "<cmd with {state_dir} {count} {file}>" or --log-source JSON';
  let stateDirNow = stateDir;
  async function emit(n: number): Promise<void> {
    if (emitMode === 'file') {
      let text = '';
      for (let i = 0; i < n; i++) text += `conformance line ${++lineNo} ${randomUUID()}\n`;
      appendFileSync(logFile, text);
    } else if (emitMode === 'command') {
      const r = await runShell(fillTemplate(o.emitCommand as string, { state_dir: stateDirNow, count: String(n), file: logFile }), t * 2);
      if (r.code !== 0) throw new CaseFailure('--emit-command exits 0', `exit ${r.code ?? r.signal}: ${lastLines(r.output)}`);
    } else throw new CaseSkip(logsSkip);
  }
  /** Backoff bound of a reconnect: min(cap, base·2^attempt) + slack. */
  const bound = (attemptIndex: number) => Math.min(o.backoffCapMs, o.backoffBaseMs * 2 ** attemptIndex) + SLACK_MS;

  /** The agent process of story A (the run command on state-a) and the session its cases use. */
  let run: Spawned | undefined;
  let session!: Session;
  /**
   * Set when a step story A needs did not happen (the agent restarted without its credential;
   * the run command never connected): story A's cases after it are SKIPPED with this reason
   * (naming the case that failed) until a fresh agent process connects. Parts B, C, D and the
   * checks over the whole run do not depend on it.
   */
  let blocked: CaseSkip | undefined;
  runner.gate = () => blocked?.reason;
  // A session the agent lost between cases (a broken agent: it closed it, or we closed it for a
  // frame over the limit): the next case uses the agent's newest live session, when it has one,
  // so that only the cases the fault touches fail (DECISIONS K14). A conforming agent keeps its
  // session between cases: this never applies to it.
  runner.beforeEach = () => {
    if (session === undefined || session.isOpen) return;
    const live = server.sessions.findLast((x) => x.index > session.index && x.isOpen && x.helloAnswered === 'result');
    if (live !== undefined) session = live;
  };

  /** Which token a hello carried, in words. */
  const tokenName = (tok: string | undefined): string => {
    if (tok === expectedToken) return 'the last rotated token';
    if (tok === enrollToken) return 'the enrollment token';
    const i = tok === undefined ? -1 : issuedTokens.indexOf(tok);
    return i >= 0 ? `a token rotated earlier (${issuedTokens.length - 1 - i} rotation(s) ago)` : 'a token the scripted server never issued';
  };

  /**
   * The suite's barrier: a probe.request of an unknown probe, answered (-32010, or anything) once
   * the agent has handled every frame sent before it. An agent that has answered no probe.request
   * at all in this run cannot be judged this way: the case is SKIPPED naming agent/probe-unknown.
   */
  /** Set once a barrier went unanswered while the agent had answered no probe.request at all: the next ones wait less. */
  let barrierUnanswered = false;
  async function barrier(sess: Session): Promise<void> {
    const answeredAny = () => server.sessions.some((x) => x.responses > 0);
    try {
      await sess.client.probeRequest({ probe: 'conformance.barrier', args: {}, timeout_ms: 1000 }, { timeoutMs: barrierUnanswered && !answeredAny() ? Math.min(t, 500) : t });
    } catch (err) {
      if (!(err instanceof PeerError)) return;
      if (err.code === 'timeout' && sess.isOpen && !answeredAny()) {
        barrierUnanswered = true;
        const pu = runner.results.find((r) => r.id === 'agent/probe-unknown');
        throw new CaseSkip(`needs agent/probe-unknown: the agent has answered no probe.request in this run (agent/probe-unknown ${pu === undefined ? 'did not run' : `${pu.status === 'PASS' ? 'passed' : pu.status === 'FAIL' ? 'failed' : 'was skipped'}: ${pu.seen.slice(0, 100)}`}), and the case needs one answered to know that the agent has handled what was sent before it`);
      }
      throw new CaseFailure('the agent still answers (barrier probe.request)', `${describeErr(err)}${sess.isOpen ? '' : ` (${sess.describeClose()})`}`);
    }
  }
  /**
   * A barrier between cases (outside any case): true once the agent answered it. Its failure
   * belongs to no case (DECISIONS K14): the cases that need the session judge it.
   */
  async function settle(sess: Session): Promise<boolean> {
    if (!sess.isOpen) return false;
    try {
      await sess.client.probeRequest({ probe: 'conformance.barrier', args: {}, timeout_ms: 1000 }, { timeoutMs: t });
      return true;
    } catch (err) {
      return !(err instanceof PeerError);
    }
  }

  /**
   * The first connection attempt after `from` (a time already passed: the shutdown or the
   * refusal), watched until quietWindowMs after `windowStart` (the close or the refusal, when the
   * quiet window starts): how long after `from` and after `windowStart` it came, or undefined.
   */
  async function attemptWithin(from: number, windowStart: number): Promise<{ afterFrom: number; afterStart: number } | undefined> {
    const later = () => server.attempts.find((a) => a.at > from);
    const end = windowStart + o.quietWindowMs;
    await server.until(() => later() !== undefined, Math.max(0, end - Date.now()));
    const a = later();
    return a !== undefined && a.at <= end ? { afterFrom: a.at - from, afterStart: a.at - windowStart } : undefined;
  }
  /** "N ms after the close" / "N ms before the close". */
  const relative = (ms: number, what: string) => (ms >= 0 ? `${ms} ms after ${what}` : `${-ms} ms before ${what}`);

  // Story A: one host, the agent's processes on one state dir. Its result: a message when the
  // agent never completed agent.hello at all (the run is then fatal). Its body, down to the
  // "Story A, then …" comment below, is not indented one level further.
  const storyA = async (): Promise<string | undefined> => {
  // ─────────────────────────── A1. enrollment ───────────────────────────
  let first: Session | undefined;
  /** server.attempts.length when the current agent process of story A started (its reconnects count from there). */
  let processStart = 0;
  if (o.enrollCommand !== undefined) {
    const enroll = runShell(fillTemplate(o.enrollCommand, values(stateDir, enrollToken, hostId)), startTimeout * 2);
    first = await nextHello(0, startTimeout);
    const r = await enroll;
    if (first === undefined) return `the agent never completed agent.hello with the scripted server at ${server.url}: enroll command exited ${r.code ?? r.signal}${r.timedOut ? ' (timed out)' : ''}; output: ${lastLines(r.output) || 'none'}`;
    await runner.run('agent/enroll-exit', 'the enroll command exits 0 after the rotated token was issued', async () => {
      expect(r.code === 0, 'exit 0', `exit ${r.code ?? r.signal}: ${lastLines(r.output)}`);
      return 'exit 0';
    });
    // The run's first hello is rotated again (as `agent rotate` would, DESIGN 5.2), so the kill
    // below checks that the agent persists a rotated_token it receives while running.
    rotateNextHello = true;
    processStart = server.attempts.length;
    run = startRun(stateDir, enrollToken, hostId);
  } else {
    run = startRun(stateDir, enrollToken, hostId);
    first = await nextHello(0, startTimeout);
    if (first === undefined) return `the agent never completed agent.hello with the scripted server at ${server.url}${await said(run)}`;
  }
  const firstSession = first;
  session = firstSession;
  inUse = () => session;
  await runner.run('agent/subprotocol-offered', `the upgrade offers subprotocol ${LIMITS.subprotocol}`, async () => {
    const a = server.attempts[0];
    expect(a !== undefined && a.protocols.includes(LIMITS.subprotocol), `Sec-WebSocket-Protocol: ${LIMITS.subprotocol}`, a ? `offered ${JSON.stringify(a.protocols)}` : 'no upgrade');
    return `offered ${JSON.stringify(a!.protocols)}`;
  });
  await runner.run('agent/hello-contents', 'the first agent.hello is valid (schema), protocol_version 1, with the given host_id and enrollment token', async () => {
    expect(firstSession.helloIssues === undefined, 'params valid against agent.hello.params.json', `invalid: ${firstSession.helloIssues}`);
    const h = firstSession.hello as AgentHelloParams;
    expect(h.protocol_version === PROTOCOL_VERSION, 'protocol_version 1', `protocol_version ${h.protocol_version}`);
    expect(h.host_id.toLowerCase() === hostId, `host_id ${hostId}`, `host_id ${h.host_id}`);
    expect(h.token === enrollToken, 'the enrollment token', 'another token');
    return `agent_version ${h.agent_version}, sources ${JSON.stringify(h.capabilities.sources)}, probes ${JSON.stringify(h.capabilities.supported_probes)}`;
  });
  const caps = (firstSession.hello as AgentHelloParams | undefined)?.capabilities;

  // How the agent will produce log entries.
  if (o.emitCommand !== undefined) emitMode = 'command';
  else if (o.logSource !== undefined || caps?.sources.includes('file')) emitMode = 'file';
  if (emitMode === 'file' && o.logSource === undefined) logSources = [{ kind: 'file', path: logFile }];

  // ─────────────────────────── A2. run: rotated token, logs ───────────────────────────
  const s: Session | undefined = o.enrollCommand !== undefined ? await nextHello(1, startTimeout) : firstSession;
  if (o.enrollCommand !== undefined) {
    const runSession = s;
    const output = runSession === undefined || runSession.helloAnswered !== 'result' ? await said(run) : '';
    await runner.run('agent/rotated-token-used', 'the first hello of the run command carries the rotated token from enrollment (PROTOCOL.md#rotated-token)', async () => {
      expect(runSession !== undefined, 'the run command connects', `no hello within ${startTimeout} ms${output}`);
      expect(runSession!.helloAnswered === 'result', 'hello accepted', `hello refused: it carried ${tokenName(runSession!.hello?.token)}${output}`);
      return 'rotated token used';
    });
    if (runSession === undefined || runSession.helloAnswered !== 'result') {
      blocked = new CaseSkip(`needs agent/rotated-token-used: the run command ${runSession === undefined ? 'never connected' : `was refused (it presented ${tokenName(runSession.hello?.token)})`}; the cases of this host need it connected`);
    }
  }
  if (s !== undefined) session = s;
  // An agent may declare more in its run's hello than in its enrollment hello.
  if (emitMode === 'none' && session.hello?.capabilities.sources.includes('file')) {
    emitMode = 'file';
    if (o.logSource === undefined) logSources = [{ kind: 'file', path: logFile }];
  }
  // The session's HelloResult had other log sources than the suite's now: send them.
  if (JSON.stringify(session.helloConfig?.log_sources ?? []) !== JSON.stringify(logSources)) {
    await settle(session); // the agent has applied its HelloResult's config before this update
    if (session.isOpen) session.client.configUpdate({ config: config() });
  }

  await runner.run('agent/logs-sequencing', 'logs.push batches: seq_start = entries[0].seq, contiguous, starting at accepted_seq + 1', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const start = server.store.accepted + 1;
    await emit(5);
    const ok = await server.until(() => server.store.accepted >= start + 4, t * 2);
    const pushes = session.pushes.map((p) => p.params);
    expect(ok, `5 entries acked up to seq ${start + 4}`, `accepted_seq ${server.store.accepted} after ${pushes.length} push(es)${hint(run)}`);
    checkBatches(pushes, start);
    return `${pushes.length} push(es), seqs ${pushes[0]?.seq_start}..${server.store.accepted}`;
  });

  // ─────────────────────────── A3. kill with unacked entries, restart ───────────────────────────
  let heldUpTo = 0;
  await runner.run('agent/kill-with-unacked', 'with acks held, new entries are pushed (and stay unacked) before the SIGKILL', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    server.ackMode = 'hold';
    const from = server.store.accepted + 1;
    await emit(5);
    const ok = await session.until(() => maxSeq(session.pushes.filter((p) => !p.acked).map((p) => p.params)) >= from + 4, t * 2);
    heldUpTo = maxSeq(session.pushes.filter((p) => !p.acked).map((p) => p.params));
    expect(ok, `pushes up to seq ${from + 4} (unacked)`, `unacked pushes up to ${heldUpTo}`);
    return `${session.heldCount} push(es) held, up to seq ${heldUpTo}`;
  });
  // The restart below must see the rotated token saved: the agent has sent something since it
  // got it (its answer to a probe.request), so it was due by then.
  let restarted: Session | undefined;
  /** The token the restarted agent must present: the last one rotated (before the restart rotates again). */
  let tokenBefore = expectedToken;
  if (blocked === undefined) {
    await settle(session);
    run.kill('SIGKILL');
    await run.exited;
    await session.closed;
    server.ackMode = 'ack';
    tokenBefore = expectedToken;
    const beforeRestart = server.sessions.length;
    processStart = server.attempts.length;
    run = startRun(stateDir, enrollToken, hostId); // {token} stays the enrollment token: the agent must prefer its stored one
    restarted = await nextHello(beforeRestart, startTimeout);
  }
  const restartOutput = restarted === undefined || restarted.helloAnswered !== 'result' ? await said(run) : '';
  await runner.run('agent/rotated-token-persisted', 'after SIGKILL and restart, hello carries the token of the last rotated_token (PROTOCOL.md#rotated-token)', async () => {
    expect(restarted !== undefined, 'a hello after the restart', `none within ${startTimeout} ms${restartOutput}`);
    const tok = restarted!.hello?.token;
    expect(tok === tokenBefore, 'the last rotated token', `${tok === tokenBefore ? 'the last rotated token' : tokenName(tok)}: hello refused -32001${restartOutput}`);
    expect(restarted!.helloAnswered === 'result', 'hello accepted', `refused${restartOutput}`);
    return 'rotated token persisted across a kill';
  });
  if (blocked === undefined && (restarted === undefined || restarted.helloAnswered !== 'result')) {
    blocked = new CaseSkip(
      `needs agent/rotated-token-persisted: the agent started again after a SIGKILL ${restarted === undefined ? 'sent no hello' : `presented ${tokenName(restarted.hello?.token)} and was refused`}; the cases of this host need it connected`,
    );
  }
  if (restarted?.helloAnswered === 'result') session = restarted;

  await runner.run('agent/replay-after-kill', 'after restart the unacked seqs are resent from accepted_seq + 1 with the same content', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    if (heldUpTo === 0) throw new CaseSkip('needs agent/kill-with-unacked to leave entries unacked before the kill (it failed or was skipped, or --only left it out)');
    const accepted = session.acceptedAtHello ?? 0;
    const ok = await server.until(() => server.store.accepted >= heldUpTo, t * 2);
    const pushes = session.pushes.map((p) => p.params);
    expect(ok, `seqs up to ${heldUpTo} resent and acked`, `accepted_seq ${server.store.accepted}; pushes ${describeBatches(pushes)}`);
    expect(pushes[0]?.seq_start === accepted + 1, `first seq_start ${accepted + 1} (accepted_seq + 1)`, `first seq_start ${pushes[0]?.seq_start}`);
    checkBatches(pushes, accepted + 1);
    expect(server.store.reused.length === 0, 'each seq resent with its original content', `seq ${server.store.reused[0]?.seq} changed content`);
    return `resent ${accepted + 1}..${heldUpTo}: ${describeBatches(pushes)}`;
  });
  await runner.run('agent/no-seq-reuse', 'entries read after the restart get new seqs above every seq used before', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const before = Math.max(heldUpTo, server.store.accepted);
    await emit(2);
    const ok = await server.until(() => server.store.accepted >= before + 2, t * 2);
    expect(ok, `seqs ${before + 1}..${before + 2} acked`, `accepted_seq ${server.store.accepted}`);
    expect(server.store.reused.length === 0, 'no seq reused for different content', JSON.stringify(server.store.reused.slice(0, 2)));
    return `new entries at ${before + 1}..${server.store.accepted}`;
  });

  // The seed's words are "before sending any further RPCs": the rotated token must be on disk by
  // the agent's very first frame after the HelloResult, not only by the time of a later kill. The
  // restart below is rotated again, and the scripted server SIGKILLs the agent at its first frame
  // after that HelloResult, answering nothing (an agent that saves the token once a push is acked,
  // or later, has not saved it then; DECISIONS K16).
  const saveCase = await runner.run('agent/rotated-token-saved-before-sending', 'a HelloResult with rotated_token, then a SIGKILL at the agent\'s first frame after it (nothing of that session answered): started again, its hello carries that token, saved before the agent sent anything (PROTOCOL.md#rotated-token)', async () => {
    const before = session;
    await settle(before);
    run!.kill('SIGKILL');
    await run!.exited;
    await before.closed;
    // An entry to push, so that the first frame comes at once (a frame provoked below otherwise).
    if (emitMode !== 'none') await emit(1);
    let killed: { at: number; what: string } | undefined;
    server.freezeAtFirstFrame = (_s, what) => {
      killed = { at: Date.now(), what };
      run?.kill('SIGKILL');
    };
    rotateNextHello = true;
    try {
      const from = server.sessions.length;
      processStart = server.attempts.length;
      run = startRun(stateDir, enrollToken, hostId);
      const rotatedSess = await nextHello(from, startTimeout);
      if (rotatedSess === undefined || rotatedSess.helloAnswered !== 'result') throw new CaseFailure('a restart whose hello is accepted', `${rotatedSess === undefined ? `none within ${startTimeout} ms` : `refused: it presented ${tokenName(rotatedSess.hello?.token)}`}${await said(run)}`);
      const newToken = rotatedSess.rotatedToken;
      const previous = rotatedSess.hello?.token;
      if (!(await rotatedSess.until(() => rotatedSess.firstFrame !== undefined || !rotatedSess.isOpen, 1000))) {
        // Nothing sent by itself within a second of the HelloResult: a probe.request, whose answer is its first frame.
        rotatedSess.client.probeRequest({ probe: 'conformance.barrier', args: {}, timeout_ms: 1000 }, { timeoutMs: t }).catch(() => undefined);
        await rotatedSess.until(() => rotatedSess.firstFrame !== undefined || !rotatedSess.isOpen, t);
      }
      if (killed === undefined) {
        run.kill('SIGKILL');
        throw new CaseFailure('a frame from the agent after the HelloResult (the agent is killed at its first)', rotatedSess.isOpen ? `none within ${1000 + t} ms` : `none: ${rotatedSess.describeClose()}`);
      }
      await run.exited;
      // Started again; the previous token is still accepted once (as a rotation's grace would),
      // and rotated again, so that the story goes on whichever token comes.
      graceToken = previous;
      const from2 = server.sessions.length;
      processStart = server.attempts.length;
      run = startRun(stateDir, enrollToken, hostId);
      const again = await nextHello(from2, startTimeout);
      if (again?.helloAnswered === 'result') session = again;
      if (again === undefined) throw new CaseFailure('a hello after the restart', `none within ${startTimeout} ms${await said(run)}`);
      const tok = again.hello?.token;
      const k = killed as { at: number; what: string };
      expect(
        tok === newToken,
        `the rotated_token of the HelloResult before the kill, saved before the agent's first frame after it (a ${k.what})`,
        tok === previous ? `the token before it: the rotated token was not saved when the agent sent its ${k.what} (killed ${k.at - (rotatedSess.helloAnsweredAt ?? k.at)} ms after the HelloResult)` : tokenName(tok),
      );
      expect(again.helloAnswered === 'result', 'hello accepted', `refused${await said(run)}`);
      return `token saved before the first frame after the HelloResult (a ${k.what}, ${k.at - (rotatedSess.helloAnsweredAt ?? k.at)} ms after it)`;
    } finally {
      server.freezeAtFirstFrame = undefined;
      rotateNextHello = false;
      graceToken = undefined;
    }
  });
  if (saveCase.status === 'FAIL' && !session.isOpen && !server.sessions.some((x) => x.isOpen && x.helloAnswered === 'result')) {
    blocked = new CaseSkip(`needs agent/rotated-token-saved-before-sending: it failed (${firstClause(saveCase.seen)}) and the agent has had no session since; the cases of this host need it connected`);
  }

  // ─────────────────────────── A4. heartbeat ───────────────────────────
  const hbWait = o.heartbeatWaitMs ?? (HEARTBEAT_SECS + LIMITS.heartbeat_jitter_s) * 1000 + 2000;
  await runner.run('agent/heartbeat', `an agent.heartbeat notification (valid params) within ${hbWait} ms of the session start`, async () => {
    const ok = await session.until(() => session.heartbeats.length > 0, Math.max(0, session.openedAt + hbWait - Date.now()));
    const bad = session.events.filter((e) => (e.type === 'invalid_params' || e.type === 'notification_dropped' || e.type === 'invalid_request') && 'method' in e && e.method === 'agent.heartbeat');
    expect(bad.length === 0, 'valid heartbeat notifications', `${bad.length} invalid: ${js(bad[0], 200)}`);
    expect(ok, 'a heartbeat', `none after ${Date.now() - session.openedAt} ms`);
    const hb = session.heartbeats[0]!;
    return `first heartbeat ${hb.at - session.openedAt} ms after the session opened: ${JSON.stringify(hb.params)}`;
  });

  // ─────────────────────────── A5. probes and errors ───────────────────────────
  const rawId = (() => {
    let n = 700_000;
    return () => ++n;
  })();
  /** Sends a raw request and waits for its response. */
  async function rawRequest(msg: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    const id = rawId();
    const frame = { ...msg, id };
    let answer: Record<string, unknown> | undefined;
    const onMessage = (data: Buffer) => {
      try {
        const m = JSON.parse(data.toString()) as Record<string, unknown>;
        if (m['id'] === id && !('method' in m)) answer = m;
      } catch {
        // not ours
      }
    };
    // Before the session's own listener: its change notification must see the answer.
    session.ws.prependListener('message', onMessage);
    try {
      session.sendRaw(frame);
      const sess = session;
      await sess.until(() => answer !== undefined || !sess.isOpen, t);
      return answer;
    } finally {
      session.ws.off('message', onMessage);
    }
  }
  const code = (m: Record<string, unknown> | undefined) => (m && typeof m['error'] === 'object' && m['error'] !== null ? ((m['error'] as { code?: unknown }).code as number) : undefined);
  const show = (m: Record<string, unknown> | undefined) => {
    if (m === undefined) return session.isOpen ? 'no response' : `no response (${session.describeClose()})`;
    const e = m['error'] as { code?: unknown; message?: unknown } | undefined;
    return e ? `error ${String(e.code)} ${String(e.message)}` : `result ${js(m['result'], 140)}`;
  };

  await runner.run('agent/probe-unknown', 'probe.request for a probe the agent does not have: error -32010', async () => {
    try {
      const r = await session.client.probeRequest({ probe: 'conformance.no_such_probe', args: {}, timeout_ms: 2000 }, { timeoutMs: t });
      throw new CaseFailure('error -32010', `result ${js(r, 120)}`);
    } catch (err) {
      if (err instanceof CaseFailure) throw err;
      expect(err instanceof RpcError && err.code === -32010, 'error -32010', describeErr(err));
      return describeErr(err);
    }
  });
  await runner.run('agent/probe-round-trip', 'probe.request for a supported probe: a valid ProbeOutput', async () => {
    const probe = o.probe;
    if (probe === undefined) throw new CaseSkip('needs --probe NAME [--probe-args JSON] (a probe this agent supports)');
    try {
      const r = await session.client.probeRequest({ probe, args: o.probeArgs, timeout_ms: 5000 }, { timeoutMs: t + 5000 });
      return `ProbeOutput ${js(r, 120)}`;
    } catch (err) {
      throw new CaseFailure('a valid ProbeOutput', describeErr(err));
    }
  });

  const probeErrors = METHOD_CATALOG.find((m) => m.name === 'probe.request')?.errors ?? [];
  for (const { method, info, v } of serverToAgentVectors()) {
    {
      const id = `vector/${v.id}`;
      if (info.kind === 'request') {
        await runner.run(id, v.expected.outcome === 'error' ? `error ${v.expected.code}` : `not an envelope/params error: a valid result or one of ${probeErrors.join(', ')}`, async () => {
          const m = clone(v.message);
          delete m['id'];
          const resp = await rawRequest(m);
          if (v.expected.outcome === 'error') {
            expect(code(resp) === v.expected.code, `error ${v.expected.code}`, show(resp));
            return show(resp);
          }
          const c = code(resp);
          if (c !== undefined) expect(probeErrors.includes(c) && c !== -32602, `a result or an error in ${probeErrors.filter((x) => x !== -32602).join(', ')}`, show(resp));
          else expect(resp !== undefined && info.validateResult !== undefined && info.validateResult(resp['result']), `a result valid against ${info.resultSchema}`, show(resp));
          return show(resp);
        });
      } else {
        await runner.run(id, v.expected.outcome === 'dropped' ? 'ignored: no response, the session stays open' : 'accepted without a response; the session stays open', async () => {
          const m = clone(v.message);
          // The accepted config.update example would replace our log sources, batch size and
          // heartbeat interval (agent/batch-limit and agent/heartbeat-cadence judge by config()'s): keep them.
          if (method === 'config.update' && v.expected.outcome === 'accepted') {
            const p = m['params'] as { config?: AgentConfig };
            if (p.config) {
              p.config.log_sources = logSources;
              p.config.max_batch_entries = config().max_batch_entries;
              p.config.heartbeat_interval_secs = config().heartbeat_interval_secs;
            }
          }
          const sess = session;
          const errorsBefore = countErrorFrames(sess);
          sess.sendRaw(m);
          if (method === 'config.update' && v.expected.outcome === 'accepted') sess.client.configUpdate({ config: config() }); // restore our config
          // Barrier: an unknown probe is answered -32010 after the frame above was handled.
          await barrier(sess);
          expect(sess.isOpen && server.current === sess, 'the session stays open', sess.close ? `closed ${sess.close.code} ${sess.close.reason}` : `a new session was opened`);
          expect(countErrorFrames(sess) === errorsBefore, 'no response to a notification', 'an error response');
          return 'ignored; session open';
        });
      }
    }
  }
  function countErrorFrames(sess: Session): number {
    return sess.events.filter((e) => e.type === 'unknown_response' && e.id === null).length;
  }

  await runner.run('agent/config-update', 'config.update (valid) applied without a disconnect', async () => {
    const sess = session;
    sess.client.configUpdate({ config: { ...config(), flush_interval_ms: 100 } });
    await barrier(sess);
    sess.client.configUpdate({ config: config() });
    await barrier(sess);
    expect(sess.isOpen && server.current === sess, 'the same session open', sess.close ? `closed ${sess.close.code}` : 'a new session');
    return 'still connected';
  });

  const APPLY_AFTER_MS = 1500;
  await runner.run('agent/config-apply-after', `config.update with apply_after ${APPLY_AFTER_MS} ms ahead, adding a second file source: nothing of that file is pushed before apply_after, and its lines are pushed once it has passed (PROTOCOL.md#configuration-updates)`, async () => {
    if (emitMode !== 'file' || o.logSource !== undefined) throw new CaseSkip(fileSourceNeeds);
    const sess = session;
    const file2 = join(work, 'source-2.log');
    const marker = `conformance staged source ${randomUUID()}`;
    writeFileSync(file2, `${marker}\n`);
    const staged: AgentConfig = { ...config(), log_sources: [...logSources, { kind: 'file', path: file2 }] };
    const applyAt = Date.now() + APPLY_AFTER_MS;
    sess.client.configUpdate({ config: staged, apply_after: new Date(applyAt).toISOString() });
    try {
      await barrier(sess);
      const pushedAt = () => sess.pushes.find((r) => r.params.entries.some((e) => e.message.includes(marker)))?.at;
      const ok = await sess.until(() => pushedAt() !== undefined, APPLY_AFTER_MS + READ_ALLOWANCE_MS + SLACK_MS + t);
      expect(ok, `the staged file's line pushed after apply_after`, `not pushed within ${APPLY_AFTER_MS + READ_ALLOWANCE_MS + SLACK_MS + t} ms${hint(run)}`);
      const at = pushedAt()! - applyAt;
      expect(at >= -clockMarginMs, 'not before apply_after (the staged config not yet in force)', `pushed ${-at} ms before apply_after`);
      return `the staged file's line pushed ${at} ms after apply_after`;
    } finally {
      sess.client.configUpdate({ config: config() });
      await barrier(sess);
    }
  });

  await runner.run('agent/config-apply-after-far', 'config.update with apply_after 30 days ahead (beyond a Node.js timer\'s 2^31 − 1 ms, which fires after 1 ms when given more), adding a second file source: the staged config is not in force seconds later, and a later config.update replaces it', async () => {
    if (emitMode !== 'file' || o.logSource !== undefined) throw new CaseSkip(fileSourceNeeds);
    const sess = session;
    const file3 = join(work, 'source-3.log');
    const marker = `conformance far staged source ${randomUUID()}`;
    writeFileSync(file3, `${marker}\n`);
    const staged: AgentConfig = { ...config(), log_sources: [...logSources, { kind: 'file', path: file3 }] };
    sess.client.configUpdate({ config: staged, apply_after: new Date(Date.now() + 30 * 86_400_000).toISOString() });
    try {
      await barrier(sess);
      const watch = APPLY_AFTER_MS + READ_ALLOWANCE_MS + SLACK_MS;
      const seen = await sess.until(() => sess.pushes.some((r) => r.params.entries.some((e) => e.message.includes(marker))), watch);
      expect(!seen, `the staged file not read within ${watch} ms (apply_after is 30 days ahead)`, 'its line was pushed: the staged config was put in force early');
      return `nothing of the staged source pushed within ${watch} ms`;
    } finally {
      sess.client.configUpdate({ config: config() });
      await barrier(sess);
    }
  });

  await runner.run('agent/config-metrics-interval', 'config.update metrics_interval_secs 1 (from 3600) while connected: metrics.push comes every second from then on, without a reconnect (hot config)', async () => {
    const sess = session;
    const before = sess.metrics.length;
    sess.client.configUpdate({ config: { ...config(), metrics_interval_secs: 1 } });
    try {
      await barrier(sess);
      const t0 = Date.now();
      const within = 2 * 1000 + SLACK_MS;
      const ok = await sess.until(() => sess.metrics.length >= before + 2, within);
      expect(ok, `two metrics.push within ${within} ms of the update`, `${sess.metrics.length - before} within ${within} ms`);
      const first = sess.metrics[before]!.at - t0;
      expect(first <= 1000 + SLACK_MS, `the first within ${1000 + SLACK_MS} ms`, `${first} ms after the update`);
      expect(sess.isOpen && server.current === sess, 'the same session', sess.close ? `closed ${sess.close.code}` : 'a new session');
      return `metrics.push ${first} ms and ${sess.metrics[before + 1]!.at - t0} ms after the update`;
    } finally {
      sess.client.configUpdate({ config: config() });
      await barrier(sess);
    }
  });

  await runner.run('agent/config-metrics-interval-long', 'config.update metrics_interval_secs 3000000 (35 days: longer than a 32-bit millisecond timer holds; the contract sets no maximum) while connected: no metrics.push comes (a timer that overflows fires at once, and again)', async () => {
    const sess = session;
    sess.client.configUpdate({ config: { ...config(), metrics_interval_secs: 3_000_000 } });
    try {
      await barrier(sess);
      const before = sess.metrics.length;
      const watch = 2 * 1000 + SLACK_MS;
      const seen = await sess.until(() => sess.metrics.length > before, watch);
      expect(!seen, `no metrics.push within ${watch} ms (the next is due in 35 days)`, `${sess.metrics.length - before} metrics.push within ${watch} ms: the interval overflowed a timer`);
      expect(sess.isOpen && server.current === sess, 'the same session', sess.close ? `closed ${sess.close.code}` : 'a new session');
      return `no metrics.push within ${watch} ms`;
    } finally {
      sess.client.configUpdate({ config: config() });
      await barrier(sess);
    }
  });

  await runner.run('agent/probe-concurrency', 'config.update probe_concurrency 1 (from 4) while connected: two probe.requests of --long-probe sent together run one after the other (PROTOCOL.md#probes-on-the-agent: the agent enforces probe_concurrency); with 4 again, two run at once', async () => {
    const lp = o.longProbe;
    if (lp === undefined) throw new CaseSkip('needs --long-probe NAME [--long-probe-args JSON]: a probe that succeeds and runs 100 ms or more with those args (the reference agent: proc.top)');
    const sess = session;
    const pair = async (): Promise<{ gap: number; ms: number }> => {
      const one = async () => {
        const r = await sess.client.probeRequest({ probe: lp.probe, args: lp.args, timeout_ms: 10_000 }, { timeoutMs: t + 10_000 });
        return { ms: r.duration_ms, at: Date.now() };
      };
      let a, b;
      try {
        [a, b] = await Promise.all([one(), one()]);
      } catch (err) {
        throw new CaseFailure(`two ProbeOutputs of ${lp.probe}`, describeErr(err));
      }
      const [first, second] = a.at <= b.at ? [a, b] : [b, a];
      expect(first.ms >= 100, `${lp.probe} runs 100 ms or more (duration_ms)`, `duration_ms ${first.ms}: give a --long-probe that runs longer`);
      return { gap: second.at - first.at, ms: first.ms };
    };
    sess.client.configUpdate({ config: { ...config(), probe_concurrency: 1 } });
    let one;
    try {
      await barrier(sess);
      one = await pair();
      expect(one.gap >= one.ms / 2, `with probe_concurrency 1, the second answer at least ${Math.round(one.ms / 2)} ms after the first (one ran after the other)`, `${one.gap} ms after it: they ran at once`);
    } finally {
      sess.client.configUpdate({ config: config() });
      await barrier(sess);
    }
    const four = await pair();
    expect(four.gap < four.ms / 2, `with probe_concurrency 4 again, the two answers within ${Math.round(four.ms / 2)} ms of each other (run at once)`, `${four.gap} ms apart: still one at a time`);
    return `probe_concurrency 1: answers ${one.gap} ms apart (a run takes ${one.ms} ms); 4: ${four.gap} ms apart`;
  });

  // The cadence (limits.json heartbeat_jitter_s: "every heartbeat_interval_secs +/- this
  // jitter"): no gap beyond interval + jitter + the 2 s agent/heartbeat allows, from the session's
  // start to its first heartbeat, between heartbeats, and from the last one to the session's end
  // (or now), in every session so far whose hello was accepted; and the current session shows two
  // (waited for, as long as that bound allows after the last one; the cases above have usually
  // given them already). An upper bound only: an agent may send them more often.
  await runner.run('agent/heartbeat-cadence', `agent.heartbeat keeps coming: no gap over heartbeat_interval_secs ${HEARTBEAT_SECS} + jitter ${LIMITS.heartbeat_jitter_s} s + 2 s (${hbWait} ms) in any session, and at least two in this one`, async () => {
    const sess = session;
    const silentFor = () => Date.now() - (sess.heartbeats.at(-1)?.at ?? sess.openedAt);
    // until a second heartbeat, or the bound has passed since the last one (the deadline moves with each)
    while (sess.heartbeats.length < 2 && sess.isOpen && silentFor() <= hbWait) {
      const n = sess.heartbeats.length;
      await sess.until(() => sess.heartbeats.length !== n || !sess.isOpen, hbWait - silentFor() + 50);
    }
    let beats = 0;
    for (const x of server.sessions) {
      if (x.helloAnswered !== 'result' || (x.acceptedAtHello ?? 0) > LIMITS.max_seq) continue;
      const end = x.close?.at ?? Date.now();
      const times = [x.openedAt, ...x.heartbeats.map((h) => h.at), end];
      beats += x.heartbeats.length;
      for (let i = 1; i < times.length; i++) {
        const gap = (times[i] as number) - (times[i - 1] as number);
        const what = i === 1 ? (x.heartbeats.length === 0 ? (x.close ? 'from the session start to its close without a heartbeat' : 'since the session start without a heartbeat') : 'from the session start to the first heartbeat') : i === times.length - 1 ? (x.close ? "from the last heartbeat to the session's close" : 'since the last heartbeat') : `between heartbeats ${i - 1} and ${i}`;
        expect(gap <= hbWait, `heartbeats at most ${hbWait} ms apart`, `${gap} ms ${what} (session #${x.index}, ${x.heartbeats.length} heartbeat(s) in ${end - x.openedAt} ms)`);
      }
    }
    expect(sess.heartbeats.length >= 2, 'two heartbeats in the current session', `${sess.heartbeats.length} in ${Date.now() - sess.openedAt} ms (${sess.describeClose()})`);
    const gaps = sess.heartbeats.slice(1).map((h, i) => h.at - sess.heartbeats[i]!.at);
    return `${beats} heartbeats, none more than ${hbWait} ms apart; this session: ${sess.heartbeats.length}, gaps up to ${Math.max(...gaps)} ms`;
  });

  const agentErrorProvokers: Record<number, () => Promise<string>> = {
    [-32601]: async () => {
      const resp = await rawRequest({ jsonrpc: '2.0', method: 'conformance.no_such_method', params: {} });
      expect(code(resp) === -32601, 'error -32601', show(resp));
      return show(resp);
    },
    [-32602]: async () => {
      const resp = await rawRequest({ jsonrpc: '2.0', method: 'probe.request', params: { probe: 'conformance.x', args: {}, timeout_ms: 0 } });
      expect(code(resp) === -32602, 'error -32602', show(resp));
      return show(resp);
    },
    [-32011]: () => provokeProbeError(o.failingProbe, -32011, 5000, '--failing-probe NAME [--failing-probe-args JSON] (a probe that fails on this agent with those args)'),
    [-32012]: () => provokeProbeError(o.slowProbe, -32012, o.slowProbeTimeoutMs, `--slow-probe NAME [--slow-probe-args JSON] (a probe that takes longer than --slow-probe-timeout-ms, default 50 ms)`),
    [-32603]: () => provokeProbeError(o.internalErrorProbe, -32603, 5000, '--internal-error-probe NAME [--internal-error-probe-args JSON] (a probe whose handler fails unexpectedly; an agent that maps every probe failure to -32011 has none)'),
    [-32010]: async () => {
      const r = runner.results.find((x) => x.id === 'agent/probe-unknown');
      expect(r?.status === 'PASS', 'see agent/probe-unknown', r?.seen ?? 'not run');
      return 'see agent/probe-unknown';
    },
  };
  async function provokeProbeError(given: { probe: string; args: unknown } | undefined, want: number, timeoutMs: number, needs: string): Promise<string> {
    if (given === undefined) throw new CaseSkip(`needs ${needs}`);
    const resp = await rawRequest({ jsonrpc: '2.0', method: 'probe.request', params: { probe: given.probe, args: given.args, timeout_ms: timeoutMs } });
    expect(code(resp) === want, `error ${want}`, show(resp));
    return show(resp);
  }
  for (const row of agentErrorRows()) {
    const id = `error/${row.code}-${row.name}`;
    const p = agentErrorProvokers[row.code];
    if (p === undefined) {
      runner.skip(id, `${row.code} ${row.name}`, `no option enables it: the suite has no way to provoke it yet (${row.meaning}); a new code in the contract needs a case in conformance/agent-suite.ts`);
      continue;
    }
    await runner.run(id, `error ${row.code} ${row.name} from the agent`, p);
  }

  // ─────────────────────────── A6. ServerReload ───────────────────────────
  /** Reconnects seen so far by the current agent process (bounds the backoff attempt counter). */
  let processAttempts = server.attempts.length - processStart; // the reconnects of the current process

  /**
   * Sends agent.shutdown to the current session and watches it close: the close, how long after
   * the notification, and the seq acked when it closed (what final_seq must say). beforeSend runs
   * right before the notification (after the barrier: only when it is sent), afterSend right after.
   */
  async function shutdownAndWatch(reason: 'ServerReload' | 'Decommission', drain: number, hooks: { beforeSend?: () => void; afterSend?: () => void } = {}): Promise<{ close: Session['close']; ms: number; acceptedAtClose: number }> {
    const sess = session;
    // Round trip first: the agent has finished handling its HelloResult (it is Active). A
    // shutdown racing the hello outcome is a separate question this case does not ask.
    await barrier(sess);
    hooks.beforeSend?.();
    const t0 = Date.now();
    sess.client.agentShutdown({ reason, drain_seconds: drain });
    hooks.afterSend?.();
    const closed = await sess.until(() => !sess.isOpen, drain * 1000 + t);
    const acceptedAtClose = server.store.accepted;
    if (!closed) sess.closeWith(1000, 'drain elapsed');
    return { close: sess.close, ms: Date.now() - t0, acceptedAtClose };
  }
  const finalSeq = /^final_seq=(\d+)$/;
  /** With nothing left to drain the agent leaves Draining at once (PROTOCOL.md#shutdown-and-drain "buffer empty"): within this of the last ack. */
  const EMPTY_CLOSE_MS = 2000;
  const RELOAD_DRAIN_SECS = 5;

  let reload: { close: Session['close']; ms: number; acceptedAtClose: number } | undefined;
  const reloadCase = await runner.run('agent/shutdown-server-reload', `agent.shutdown ServerReload (drain_seconds ${RELOAD_DRAIN_SECS}) with everything acked: the agent closes cleanly, 1000 Normal closure (PROTOCOL.md#websocket-close-codes; 1001 is the server's code for going away), with reason final_seq=<acked seq>, within ${EMPTY_CLOSE_MS} ms (PROTOCOL.md#shutdown-and-drain: draining ends when everything is acked, not only when drain_seconds elapsed)`, async () => {
    reload = await shutdownAndWatch('ServerReload', RELOAD_DRAIN_SECS);
    const c = reload.close;
    expect(c !== undefined && !c.byServer, 'the agent closes the connection', c ? `closed by the scripted server after the drain (${c.code})` : 'open');
    if (emitMode !== 'none') expect(reload.ms <= EMPTY_CLOSE_MS, `closed within ${EMPTY_CLOSE_MS} ms (nothing left to drain)`, `closed ${reload.ms} ms after the notification`);
    expect(c!.code === 1000, 'close 1000 Normal closure', closeCodeSeen(c!.code));
    const m = finalSeq.exec(c!.reason);
    expect(m !== null, 'reason final_seq=<n>', `reason ${JSON.stringify(c!.reason)}`);
    if (emitMode !== 'none') expect(Number(m![1]) === reload.acceptedAtClose, `final_seq=${reload.acceptedAtClose}: the last seq acked, everything was (PROTOCOL.md#shutdown-and-drain)`, `reason ${c!.reason}`);
    return `close ${c!.code} "${c!.reason}" after ${reload.ms} ms`;
  });
  const beforeReconnect = server.sessions.length;
  // Waits as long as a start may take: the case judges the delay by the attempt's own
  // timestamp, so a loaded machine that is slow to finish the hello only costs time. Only when
  // the ServerReload was sent: with the case skipped (--only) or failed before it, the session
  // is still the one before.
  const afterReload = reload !== undefined ? await nextHello(beforeReconnect, bound(processAttempts) + startTimeout) : undefined;
  await runner.run('agent/reconnect-after-reload', 'after ServerReload the agent reconnects within the full-jitter bound', async () => {
    if (reload === undefined) throw new CaseSkip(`needs agent/shutdown-server-reload to send the ServerReload (it ${reloadCase.status === 'SKIP' ? `was skipped: ${whyNot(reloadCase)}` : 'failed before sending it'})`);
    expect(afterReload !== undefined && reload.close !== undefined, 'a new connection', `none${hint(run)}`);
    const delay = server.attempts[server.attempts.length - 1]!.at - reload!.close!.at;
    const b = bound(processAttempts);
    expect(delay <= b, `reconnect within ${b} ms (min(cap, base·2^${processAttempts}) + ${SLACK_MS} ms slack)`, `${delay} ms`);
    return `reconnected after ${delay} ms`;
  });
  // Without a reconnect the story goes on from the fresh agent process below (the cases in
  // between say what they need).
  if (afterReload !== undefined) {
    session = afterReload;
    processAttempts = server.attempts.length - processStart;
  }

  // ─────────────────────────── A7. backoff bounds ───────────────────────────
  await runner.run('agent/backoff-bounds', `with ${o.backoffAttempts} upgrades refused (HTTP 503), each delay is within rand(0, min(cap, base·2^attempt))`, async () => {
    const sess = session;
    if (!sess.isOpen) throw new CaseSkip(`needs a connected agent after agent/reconnect-after-reload (${sess.describeClose()}, and no reconnect)`);
    const before = server.attempts.length;
    const sessionsBefore = server.sessions.length;
    server.refuseBudget = o.backoffAttempts;
    sess.closeWith(1011, 'conformance: backoff check');
    await sess.closed;
    const startAt = sess.close!.at;
    const ok = await server.until(() => server.sessions.length > sessionsBefore && server.sessions.at(-1)!.helloAnswered !== undefined, sumBounds(o, processAttempts, o.backoffAttempts + 1) + t);
    server.refuseBudget = 0;
    const attempts = server.attempts.slice(before);
    // The story goes on with the agent's newest session, whatever this case finds (a FAIL below
    // must not leave the closed one current: DECISIONS K14).
    const fromAttempt = processAttempts;
    session = server.sessions.at(-1)!;
    processAttempts += attempts.length;
    expect(ok, `${o.backoffAttempts} refused attempts then a connection`, `${attempts.length} attempt(s)${hint(run)}`);
    const times = [startAt, ...attempts.map((a) => a.at)];
    const delays = times.slice(1).map((at, i) => at - (times[i] as number));
    const bounds = delays.map((_, i) => bound(fromAttempt + i));
    const over = delays.findIndex((d, i) => d > (bounds[i] as number));
    expect(over < 0, `delays within ${bounds.join(', ')} ms`, `delays ${delays.join(', ')} ms`);
    const total = delays.reduce((a, b) => a + b, 0);
    const ceiling = bounds.reduce((a, b) => a + b - SLACK_MS, 0);
    expect(total >= ceiling * 0.05, `some backoff (total >= 5% of ${ceiling} ms)`, `delays ${delays.join(', ')} ms (reconnecting without backoff)`);
    return `delays ${delays.join(', ')} ms; bounds ${bounds.join(', ')} ms`;
  });

  // A fresh agent process for the rest of story A. The agent's reconnect backoff resets only
  // after a session has lasted long enough (a minute for the reference agent), so by now (a
  // reload, refused upgrades) its next delays are drawn from base·2^6 and more: the reconnects
  // below waited 25-50 s of jitter in all. Everything is acked here, so the kill loses nothing,
  // and the cases below judge the new process by its own attempt count. Tried also when the
  // cases above could not run (the agent lost its session): a fresh process may connect.
  await settle(session);
  run.kill('SIGKILL');
  await run.exited;
  await within(session.closed, t, undefined);
  processStart = server.attempts.length;
  const freshFrom = server.sessions.length;
  run = startRun(stateDir, enrollToken, hostId);
  const fresh = await nextHello(freshFrom, startTimeout);
  if (fresh !== undefined && fresh.helloAnswered === 'result') {
    session = fresh;
    blocked = undefined;
  } else {
    // The agent's output only for a new cause: the one before said it already.
    const why = blocked === undefined ? await said(run) : ` (as before: ${firstClause(blocked.reason)})`;
    blocked = new CaseSkip(
      `needs the run command (--run-command), started again on this host's state dir, to connect: ${fresh === undefined ? `it sent no hello within ${startTimeout} ms` : `it presented ${tokenName(fresh.hello?.token)} and was refused`}${why}`,
    );
  }
  processAttempts = server.attempts.length - processStart;

  // ─────────────────── A7a. the sender (DECISIONS K9) ───────────────────
  /** Most entries one push may carry: min(config, the hello's capabilities, 1000) (DECISIONS B4). */
  const batchLimit = (): number => Math.min(config().max_batch_entries, session.hello?.capabilities.max_batch_entries ?? LIMITS.logs_push_max_entries, LIMITS.logs_push_max_entries);
  /** The pushes of every session from `from` (a PushRecord of the current session) on. */
  const pushesFrom = (from: PushRecord): PushRecord[] => server.sessions.slice(from.session).flatMap((x) => x.pushes).filter((r) => r.session > from.session || server.sessions[from.session]!.pushes.indexOf(r) >= server.sessions[from.session]!.pushes.indexOf(from));
  /** Runs `body` with a push hook installed; the hook and the B6a retry are reset after it. */
  async function withHook<T>(hook: NonNullable<ScriptedServer['pushHook']>, body: () => Promise<T>): Promise<T> {
    server.pushHook = hook;
    try {
      return await body();
    } finally {
      server.pushHook = undefined;
      server.followOnRetryMs = 100;
    }
  }

  let windowSeen: { max: number; pushes: number } | undefined;
  await runner.run('agent/push-window-several', 'with acks held and entries for several full batches, the agent keeps more than one logs.push in flight (PROTOCOL.md#sending-logs: a window, not one)', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const sess = session;
    const b = batchLimit();
    const from = server.store.accepted + 1;
    const n = ((o.pushWindow ?? 4) + 2) * b;
    const first = sess.pushes.length;
    server.ackMode = 'hold';
    sess.resetMaxInFlight();
    try {
      await emit(n);
      await sess.until(() => sess.inFlight >= 2, t * 2);
      // then until no further push arrives for a while (an agent without a bound sends them all)
      for (let count = -1, end = Date.now() + t * 2; count !== sess.pushes.length && Date.now() < end; ) {
        count = sess.pushes.length;
        await sess.until(() => sess.pushes.length > count, 500);
      }
      windowSeen = { max: sess.maxInFlight, pushes: sess.pushes.length - first };
    } finally {
      server.ackMode = 'ack';
      sess.release();
    }
    const ok = await server.until(() => server.store.accepted >= from + n - 1, t * 4);
    expect(ok, `${n} entries acked up to seq ${from + n - 1} once acks resume`, `accepted_seq ${server.store.accepted}${hint(run)}`);
    checkBatches(sess.pushes.slice(first).map((r) => r.params), from);
    expect(windowSeen.max >= 2, 'at least 2 logs.push in flight', `at most ${windowSeen.max} in flight (${windowSeen.pushes} pushes while acks were held)`);
    return `${windowSeen.max} logs.push in flight at most while acks were held (batches of up to ${b})`;
  });
  await runner.run('agent/push-window-bound', `never more logs.push in flight than the agent's window (--push-window N)`, async () => {
    if (o.pushWindow === undefined) throw new CaseSkip('the contract sets no window size (PROTOCOL.md#sending-logs): pass --push-window N, the most logs.push requests the agent keeps in flight');
    if (windowSeen === undefined) throw new CaseSkip('needs agent/push-window-several to have measured the agent\'s window (it failed or was skipped, or --only left it out)');
    expect(windowSeen.max <= o.pushWindow, `at most ${o.pushWindow} in flight`, `${windowSeen.max} in flight`);
    return `${windowSeen.max} in flight at most (window ${o.pushWindow})`;
  });

  /** Closes the current session (1011, as a server restart) and returns the agent's next accepted session. */
  async function serverRestart(): Promise<Session> {
    const sess = session;
    const from = server.sessions.length;
    sess.closeWith(1011, 'conformance: server restart');
    const next = await nextHello(from, bound(processAttempts) + startTimeout);
    if (next === undefined || next.helloAnswered !== 'result') throw new CaseFailure('a reconnect with an accepted hello', `${next === undefined ? 'none' : 'refused'}${hint(run)}`);
    processAttempts++;
    session = next;
    return next;
  }

  await runner.run('agent/push-partial-ack', 'a logs.push acked only up to its middle (up_to_seq below its last seq), then a server restart: the agent resumes from that up_to_seq (resume_from_seq, first push at up_to_seq + 1) and sends the unacked tail again, same content', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const sess = session;
    const from = server.store.accepted + 1;
    const n = 10;
    let cut: { start: number; end: number; upTo: number } | undefined;
    await withHook((p, ss) => {
      if (ss !== sess) return undefined;
      if (cut !== undefined) return 'hold'; // nothing after it is acked in this session
      if (p.entries.length < 2) return undefined;
      const upTo = p.seq_start + Math.floor(p.entries.length / 2) - 1;
      cut = { start: p.seq_start, end: p.entries.at(-1)!.seq, upTo };
      return { upTo, commitTo: upTo };
    }, async () => {
      await emit(n);
      const ok = await sess.until(() => cut !== undefined, t * 2);
      expect(ok, 'a logs.push of 2 or more entries', `pushes ${describeBatches(sess.pushes.map((r) => r.params))}`);
      await barrier(sess); // the agent has handled the partial ack
    });
    const c = cut!;
    const next = await serverRestart();
    const resume = next.hello?.resume_from_seq;
    expect(resume === undefined || resume === null || resume === c.upTo, `resume_from_seq ${c.upTo} (the partial ack)`, `resume_from_seq ${String(resume)}`);
    const ok = await server.until(() => server.store.accepted >= from + n - 1, t * 2);
    const pushes = next.pushes.map((r) => r.params);
    expect(ok, `seqs up to ${from + n - 1} acked after the restart`, `accepted_seq ${server.store.accepted}; pushes ${describeBatches(pushes)}`);
    checkBatches(pushes, c.upTo + 1);
    expect(server.store.reused.length === 0, 'the tail resent with its original content', `seq ${server.store.reused[0]?.seq} changed content`);
    return `push ${c.start}..${c.end} acked up to ${c.upTo}; resume_from_seq ${String(resume)}; then ${describeBatches(pushes)}`;
  });

  await runner.run('agent/push-payload-too-large', 'a logs.push answered -32008 PayloadTooLarge: the entries are sent again from the same seq_start in a push of at most half the batch size (PROTOCOL.md#refusals-and-resends), none skipped', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const sess = session;
    const b = batchLimit();
    const half = Math.max(1, Math.floor(b / 2));
    const from = server.store.accepted + 1;
    const n = 2 * b;
    const first = sess.pushes.length;
    let refused: { start: number; n: number; record: PushRecord } | undefined;
    const ok = await withHook((p, ss) => {
      if (ss !== sess || refused !== undefined || p.entries.length < 2) return undefined;
      refused = { start: p.seq_start, n: p.entries.length, record: ss.pushes.at(-1)! };
      return { error: new PayloadTooLargeError({ max_entries: Math.max(1, Math.floor(p.entries.length / 2)), received: p.entries.length }) };
    }, async () => {
      await emit(n);
      return server.until(() => server.store.accepted >= from + n - 1, t * 4);
    });
    const pushes = sess.pushes.slice(first);
    expect(refused !== undefined, 'a logs.push of 2 or more entries', `pushes ${describeBatches(pushes.map((r) => r.params))}`);
    const r = refused!;
    const resend = sess.pushes.slice(sess.pushes.indexOf(r.record) + 1).find((x) => x.params.seq_start <= r.start);
    expect(resend !== undefined, `the refused entries sent again from seq ${r.start}`, `pushes ${describeBatches(pushes.map((x) => x.params))}${hint(run)}`);
    expect(resend!.params.seq_start === r.start, `the resend starting at ${r.start}`, `starting at ${resend!.params.seq_start}`);
    expect(resend!.params.entries.length <= half, `at most ${half} entries (half the batch size ${b})`, `${resend!.params.entries.length} entries (the refused push had ${r.n})`);
    expect(ok, `all ${n} entries acked up to seq ${from + n - 1}`, `accepted_seq ${server.store.accepted}`);
    checkPushes(pushes, from);
    expect(server.store.reused.length === 0, 'resent with the original content', `seq ${server.store.reused[0]?.seq} changed content`);
    return `-32008 on ${r.start}..${r.start + r.n - 1} (${r.n} entries); resent as ${resend!.params.entries.length} entries; then ${describeBatches(pushes.slice(pushes.indexOf(resend!)).map((x) => x.params))}`;
  });

  // Not the 1 s default (LIMITS.retry_after_default_ms): an agent that ignores the value is seen.
  const retryMs = 300;
  /**
   * A logs.push answered with `refusal` (advising a pause of pauseMs: its retry_after_ms, or the
   * contract's default when it has none): nothing pushed during the pause, then the refused
   * entries again from the refused seq_start within pauseMs + SLACK_MS.
   */
  async function pausedResend(refusal: () => RpcError, pauseMs: number = retryMs): Promise<string> {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const sess = session;
    const from = server.store.accepted + 1;
    const n = 5;
    const first = sess.pushes.length;
    let refused: { start: number; end: number; record: PushRecord } | undefined;
    const ok = await withHook((p, ss) => {
      if (ss !== sess || refused !== undefined) return undefined;
      refused = { start: p.seq_start, end: p.entries.at(-1)!.seq, record: ss.pushes.at(-1)! };
      server.followOnRetryMs = pauseMs; // the pushes behind it are refused with the same pause (B6a)
      return { error: refusal() };
    }, async () => {
      await emit(n);
      return server.until(() => server.store.accepted >= from + n - 1, pauseMs + t * 2);
    });
    const pushes = sess.pushes.slice(first);
    expect(refused !== undefined, 'a logs.push', 'none');
    const r = refused!;
    const code = r.record.refusedWith;
    const at = r.record.answeredAt!;
    const later = sess.pushes.slice(sess.pushes.indexOf(r.record) + 1);
    const resend = later.find((x) => x.params.seq_start <= r.start);
    expect(resend !== undefined, `the refused entries sent again from seq ${r.start}`, `pushes ${describeBatches(pushes.map((x) => x.params))}${hint(run)}`);
    const waited = resend!.at - at;
    expect(waited >= pauseMs - clockMarginMs, `the resend at least ${pauseMs} ms after the ${code}`, `${waited} ms after it`);
    // "pause for retry_after_ms": not the 1 s default, nor a pause of its own (timer slack allowed)
    expect(waited <= pauseMs + SLACK_MS, `the resend within ${pauseMs + SLACK_MS} ms of the ${code} (retry_after_ms ${pauseMs} + ${SLACK_MS} ms slack)`, `${waited} ms after it`);
    // A push that arrives within 50 ms of the refusal was sent before the agent could read it.
    const early = later.filter((x) => x !== resend && x.at > at + 50 && x.at < at + pauseMs - clockMarginMs);
    expect(early.length === 0, `no logs.push during the ${pauseMs} ms pause`, `${early.length} during it, the first ${(early[0]?.at ?? at) - at} ms after the ${code} (${describeBatches(early.map((x) => x.params))})`);
    expect(resend!.params.seq_start === r.start, `the resend starting at ${r.start}`, `starting at ${resend!.params.seq_start}`);
    expect(ok, `all ${n} entries acked up to seq ${from + n - 1}`, `accepted_seq ${server.store.accepted}`);
    expect(sess.isOpen && server.current === sess, 'the session kept', sess.close ? `closed ${sess.close.code}` : 'a new session');
    checkPushes(pushes, from);
    expect(server.store.reused.length === 0, 'resent with the original content', `seq ${server.store.reused[0]?.seq} changed content`);
    // Not judged (DECISIONS K9): how many pushes follow the resend before its ack, and the send rate.
    const inFlightAfter = Math.max(0, ...later.filter((x) => x.at < (resend!.answeredAt ?? Infinity)).map((x) => x.inFlight));
    return `${code} on ${r.start}..${r.end}; resent ${waited} ms later as ${describeBatches([resend!.params])}; ${inFlightAfter} in flight at most until its ack`;
  }
  await runner.run('agent/push-backpressure', `a logs.push answered -32020 Backpressure with retry_after_ms ${retryMs}: nothing is pushed during the pause (PROTOCOL.md#refusals-and-resends), then, within ${SLACK_MS} ms of its end, the same entries are sent again from the same seq_start, none skipped`, () =>
    pausedResend(() => new BackpressureError({ retry_after_ms: retryMs })),
  );
  await runner.run('agent/push-buffer-overflow', `a logs.push answered -32007 BufferOverflow with retry_after_ms ${retryMs} (nothing of it stored): the agent keeps the entries and, after the pause and within ${SLACK_MS} ms of its end, sends them again from the same seq_start (PROTOCOL.md#refusals-and-resends, schemas/error-data.json BufferOverflowData), none skipped, the session kept`, () =>
    pausedResend(() => new BufferOverflowError({ retry_after_ms: retryMs, reason: 'conformance: the commit failed' })),
  );
  await runner.run('agent/push-backpressure-default-pause', `a logs.push answered -32020 Backpressure whose data lacks retry_after_ms (a server outside the schema): the agent pauses the contract's default, retry_after_default_ms = ${LIMITS.retry_after_default_ms} ms (limits.json), then, within ${SLACK_MS} ms of its end, sends the same entries again from the same seq_start`, () =>
    pausedResend(() => new BackpressureError({} as never), LIMITS.retry_after_default_ms),
  );
  await runner.run('agent/push-backpressure-zero-pause', `a logs.push answered -32020 Backpressure with retry_after_ms 0: the agent pauses as advised, not the ${LIMITS.retry_after_default_ms} ms default, so the same entries are sent again within ${SLACK_MS} ms`, () =>
    pausedResend(() => new BackpressureError({ retry_after_ms: 0 }), 0),
  );

  // The contract names flush_interval_ms without saying more; the suite reads it as a bound on
  // how long an entry the agent has read waits before it is pushed (DECISIONS K10). The
  // agent's own read delay (a file source polls) is allowed on top, as READ_ALLOWANCE_MS.
  const FLUSH_MS = 1000;
  await runner.run('agent/push-flush-latency', `with config.update flush_interval_ms ${FLUSH_MS}, an entry written while nothing else is pending is pushed within flush_interval_ms + ${READ_ALLOWANCE_MS} ms (reading it) + ${SLACK_MS} ms (PROTOCOL.md#sending-logs)`, async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const sess = session;
    sess.client.configUpdate({ config: { ...config(), flush_interval_ms: FLUSH_MS } });
    try {
      await barrier(sess); // the update is applied before the entry is written
      const seq = server.store.accepted + 1;
      const t0 = Date.now();
      await emit(1);
      const bound = FLUSH_MS + READ_ALLOWANCE_MS + SLACK_MS;
      const ok = await sess.until(() => sess.pushes.some((r) => r.params.entries.some((e) => e.seq === seq)), bound + t);
      const push = sess.pushes.find((r) => r.params.entries.some((e) => e.seq === seq));
      expect(ok, `a logs.push carrying seq ${seq}`, `none within ${bound + t} ms${hint(run)}`);
      const ms = push!.at - t0;
      expect(ms <= bound, `pushed within ${bound} ms of the write`, `${ms} ms after it`);
      return `seq ${seq} pushed ${ms} ms after it was written (flush_interval_ms ${FLUSH_MS})`;
    } finally {
      sess.client.configUpdate({ config: config() });
      await barrier(sess);
    }
  });

  await runner.run('agent/push-unknown-host', 'a logs.push answered -32004 UnknownHost (the host row went away): the agent closes that session and reconnects; after the accepted hello the refused entries are sent again from accepted_seq + 1, none skipped (PROTOCOL.md#refusals-and-resends)', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const sess = session;
    const from = server.store.accepted + 1;
    const n = 3;
    const nextFrom = server.sessions.length;
    let refused: PushRecord | undefined;
    await withHook((p, ss) => {
      if (ss !== sess || refused !== undefined) return undefined;
      refused = ss.pushes.at(-1)!;
      return { error: new UnknownHostError({ host_id: currentHost }) };
    }, async () => {
      await emit(n);
      await sess.until(() => refused !== undefined, t * 2);
      await sess.until(() => !sess.isOpen, t);
    });
    expect(refused !== undefined, 'a logs.push', 'none');
    expect(sess.close !== undefined && !sess.close.byServer, 'the agent closes the session after -32004', sess.close ? 'closed by the scripted server' : `still open ${t} ms after the -32004`);
    const next = await nextHello(nextFrom, bound(processAttempts) + startTimeout);
    expect(next !== undefined && next.helloAnswered === 'result', 'a reconnect with an accepted hello', `${next === undefined ? 'none' : 'refused'}${hint(run)}`);
    processAttempts++;
    session = next!;
    const ok = await server.until(() => server.store.accepted >= from + n - 1, t * 2);
    const pushes = next!.pushes.map((r) => r.params);
    expect(ok, `seqs up to ${from + n - 1} acked after the reconnect`, `accepted_seq ${server.store.accepted}; pushes ${describeBatches(pushes)}`);
    checkBatches(pushes, (next!.acceptedAtHello ?? 0) + 1);
    expect(server.store.reused.length === 0, 'resent with the original content', `seq ${server.store.reused[0]?.seq} changed content`);
    return `-32004 on ${refused!.params.seq_start}..; the agent closed ${sess.close!.code} and reconnected after ${next!.openedAt - sess.close!.at} ms; then ${describeBatches(pushes)}`;
  });

  await runner.run('agent/push-unanswered', 'a logs.push the server never answers: once its own request timeout (--agent-request-timeout-ms) has passed the agent takes the connection as dead, closes it and reconnects; after the accepted hello the unanswered entries are sent again from accepted_seq + 1, none skipped', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const timeoutMs = o.agentRequestTimeoutMs;
    if (timeoutMs === undefined) throw new CaseSkip('needs --agent-request-timeout-ms N: how long the agent waits for a logs.push answer (the reference agent: cortex-agent run --request-timeout-ms N)');
    const sess = session;
    const from = server.store.accepted + 1;
    const n = 3;
    const nextFrom = server.sessions.length;
    let held: PushRecord | undefined;
    await withHook((_p, ss) => {
      if (ss !== sess || held !== undefined) return undefined;
      held = ss.pushes.at(-1)!;
      return 'hold';
    }, async () => {
      await emit(n);
      await sess.until(() => held !== undefined, t * 2);
      await sess.until(() => !sess.isOpen, timeoutMs + SLACK_MS + t);
    });
    expect(held !== undefined, 'a logs.push', `none${hint(run)}`);
    expect(sess.close !== undefined && !sess.close.byServer, `the agent closes the session after ${timeoutMs} ms without an answer`, sess.close ? 'closed by the scripted server' : `still open ${timeoutMs + SLACK_MS + t} ms after the push`);
    const after = sess.close!.at - held!.at;
    expect(after >= timeoutMs - clockMarginMs, `not before its request timeout (${timeoutMs} ms)`, `closed ${after} ms after the push`);
    expect(after <= timeoutMs + SLACK_MS, `within ${timeoutMs + SLACK_MS} ms of the push (its request timeout + ${SLACK_MS} ms)`, `closed ${after} ms after it`);
    const next = await nextHello(nextFrom, bound(processAttempts) + startTimeout);
    expect(next !== undefined && next.helloAnswered === 'result', 'a reconnect with an accepted hello', `${next === undefined ? 'none' : 'refused'}${hint(run)}`);
    processAttempts++;
    session = next!;
    const ok = await server.until(() => server.store.accepted >= from + n - 1, t * 2);
    const pushes = next!.pushes.map((r) => r.params);
    expect(ok, `seqs up to ${from + n - 1} acked after the reconnect`, `accepted_seq ${server.store.accepted}; pushes ${describeBatches(pushes)}`);
    checkBatches(pushes, (next!.acceptedAtHello ?? 0) + 1);
    expect(server.store.reused.length === 0, 'resent with the original content', `seq ${server.store.reused[0]?.seq} changed content`);
    return `${held!.params.seq_start}.. unanswered; the agent closed ${sess.close!.code} after ${after} ms and reconnected; then ${describeBatches(pushes)}`;
  });

  await runner.run('agent/push-ack-beyond-sent', 'a logs.push acked with up_to_seq 1000 beyond its last seq (PROTOCOL.md#acks: counted only up to what was sent): the next entries still get the next seqs and are all delivered', async () => {
    if (emitMode === 'none') throw new CaseSkip(logsSkip);
    const sess = session;
    const from = server.store.accepted + 1;
    let lie: { record: PushRecord; end: number } | undefined;
    await withHook((p, ss) => {
      if (ss !== sess || lie !== undefined) return undefined;
      const end = p.entries.at(-1)!.seq;
      lie = { record: ss.pushes.at(-1)!, end };
      return { upTo: end + 1000, commitTo: end };
    }, async () => {
      await emit(3);
      const ok = await sess.until(() => lie !== undefined, t * 2);
      expect(ok, 'a logs.push', 'none');
      await barrier(sess);
    });
    await emit(3);
    const ok = await server.until(() => server.store.accepted >= from + 5, t * 2);
    const l = lie!;
    const after = pushesFrom(l.record).slice(1).map((r) => r.params);
    expect(ok, `seqs up to ${from + 5} acked`, `accepted_seq ${server.store.accepted}; pushes after the ack: ${describeBatches(after)}`);
    checkBatches(after.filter((b) => (b.entries.at(-1)?.seq ?? 0) > l.end), l.end + 1);
    return `ack up_to_seq ${l.end + 1000} for a push ending at ${l.end}; then ${describeBatches(after)}`;
  });

  // ─────────────────── A7a'. frames the agent must refuse (PROTOCOL.md close codes) ───────────────────
  /**
   * Sends `send(sess)` to the current session and watches the agent close it: the close, and the
   * agent's next accepted session (then current). A session the agent keeps open is closed by us
   * (1011) so the cases after it still run.
   */
  async function refusedFrame(send: (sess: Session) => void): Promise<{ sess: Session; next: Session | undefined; closedBy: string }> {
    const sess = session;
    if (!(await settle(sess))) throw new CaseSkip(`needs a connected agent: ${sess.describeClose()} (a case before it, up to agent/push-ack-beyond-sent, lost the session; see its result)`);
    const from = server.sessions.length;
    send(sess);
    await sess.until(() => !sess.isOpen, t);
    const closedBy = sess.isOpen ? `still open ${t} ms after it` : sess.describeClose();
    if (sess.isOpen) {
      sess.closeWith(1011, 'conformance: closing the session the agent kept');
      await sess.closed;
    }
    const next = await nextHello(from, bound(processAttempts) + startTimeout);
    if (next !== undefined && next.helloAnswered === 'result') {
      processAttempts++;
      session = next;
    }
    return { sess, next, closedBy };
  }
  const OVERSIZE_BYTES = LIMITS.max_frame_bytes + 1;
  /** A notification of a method no agent has, exactly `bytes` UTF-8 bytes long (an agent that reads it anyway drops it). */
  const oversizeFrame = (bytes: number): string => {
    const bare = JSON.stringify({ jsonrpc: '2.0', method: 'conformance.oversize', params: { pad: '' } });
    return JSON.stringify({ jsonrpc: '2.0', method: 'conformance.oversize', params: { pad: 'x'.repeat(bytes - Buffer.byteLength(bare)) } });
  };
  await runner.run('agent/incoming-oversize-1009', `a text frame from the server over max_frame_bytes (${OVERSIZE_BYTES} bytes, the limit ${LIMITS.max_frame_bytes}): the agent closes the connection with 1009 Message Too Big (PROTOCOL.md#connecting) and reconnects`, async () => {
    const { sess, next, closedBy } = await refusedFrame((x) => x.sendText(oversizeFrame(OVERSIZE_BYTES)));
    expect(sess.close !== undefined && !sess.close.byServer && sess.close.code === 1009, `the agent closes with 1009 within ${t} ms`, closedBy);
    expect(next !== undefined && next.helloAnswered === 'result', 'a reconnect whose hello is accepted', next ? 'hello refused' : `no reconnect${hint(run)}`);
    return `${closedBy}; reconnected ${next!.openedAt - sess.close!.at} ms later`;
  });
  await runner.run('agent/incoming-binary-1003', 'a binary frame from the server (V1 has none: PROTOCOL.md#connecting): the agent closes the connection with 1003 Unsupported Data and reconnects', async () => {
    const { sess, next, closedBy } = await refusedFrame((x) => x.sendBinary(new Uint8Array([0x7b, 0x7d])));
    expect(sess.close !== undefined && !sess.close.byServer && sess.close.code === 1003, `the agent closes with 1003 within ${t} ms`, closedBy);
    expect(next !== undefined && next.helloAnswered === 'result', 'a reconnect whose hello is accepted', next ? 'hello refused' : `no reconnect${hint(run)}`);
    return `${closedBy}; reconnected ${next!.openedAt - sess.close!.at} ms later`;
  });

  // ─────────────────── A7b. a failed hello, an accepted_seq beyond max_seq ───────────────────
  /** Closes the current session (1011) and returns the agent's next session that got a hello answer. */
  async function reconnectWith(override: 'internal-error' | 'seq-beyond-max'): Promise<{ bad: Session; next: Session | undefined; closedBy: string }> {
    const sess = session;
    await barrier(sess);
    nextHelloOverride = override;
    const from = server.sessions.length;
    sess.closeWith(1011, 'conformance: server restart');
    const bad = await nextHello(from, bound(processAttempts) + startTimeout);
    if (bad === undefined) throw new CaseFailure('a reconnect', `none${hint(run)}`);
    processAttempts++;
    await bad.until(() => !bad.isOpen, t);
    const closedBy = bad.close === undefined ? `still open after ${t} ms` : `${bad.close.byServer ? 'server' : 'agent'} closed ${bad.close.code}`;
    // An agent that kept it open: close it ourselves, so that the cases after this one still run.
    if (bad.isOpen) {
      bad.closeWith(1011, 'conformance: closing the session the agent kept');
      await bad.closed;
    }
    const after = server.sessions.indexOf(bad) + 1;
    const next = await nextHello(after, bound(processAttempts) + startTimeout);
    if (next !== undefined) {
      processAttempts++;
      session = next;
    }
    return { bad, next, closedBy };
  }
  await runner.run('agent/hello-error-retried', 'a hello answered -32603 InternalError (close 1011): the agent reconnects with backoff and its next hello is accepted', async () => {
    const { bad, next } = await reconnectWith('internal-error');
    expect(bad.helloAnswered === 'error', 'the hello answered with -32603', `hello ${bad.helloAnswered}`);
    expect(next !== undefined, 'another hello after the refused one', `no reconnect${hint(run)}`);
    expect(next!.helloAnswered === 'result' && next!.hello?.token === expectedToken, 'the next hello (with the same token) accepted', next!.helloAnswered === 'result' ? 'another token' : 'refused');
    return `reconnected ${next!.openedAt - bad.openedAt} ms after the refused hello`;
  });
  await runner.run('agent/accepted-seq-beyond-max', `a HelloResult with accepted_seq = max_seq + 1 (${LIMITS.max_seq + 1}) is a protocol error: the agent pushes nothing and closes that session, then reconnects`, async () => {
    const { bad, next, closedBy } = await reconnectWith('seq-beyond-max');
    expect(bad.close !== undefined && !bad.close.byServer, 'the agent closes the session', closedBy);
    expect(bad.pushes.length === 0 && bad.heartbeats.length === 0, 'nothing sent in that session', `${bad.pushes.length} logs.push, ${bad.heartbeats.length} heartbeats`);
    expect(next !== undefined && next.helloAnswered === 'result', 'a reconnect whose hello is accepted', next ? 'refused' : `no reconnect${hint(run)}`);
    return `${closedBy}; reconnected`;
  });

  await runner.run('agent/hello-unanswered', 'an agent.hello the server never answers: once its own hello timeout (--agent-hello-timeout-ms) has passed the agent closes that connection, reconnects with backoff, and its next hello is accepted', async () => {
    const timeoutMs = o.agentHelloTimeoutMs;
    if (timeoutMs === undefined) throw new CaseSkip('needs --agent-hello-timeout-ms N: how long the agent waits for a HelloResult (the reference agent: cortex-agent run --hello-timeout-ms N)');
    const sess = session;
    await barrier(sess);
    nextHelloOverride = 'no-answer';
    const from = server.sessions.length;
    sess.closeWith(1011, 'conformance: server restart');
    const gotHello = await server.until(() => server.sessions.slice(from).some((x) => x.helloHeldAt !== undefined), bound(processAttempts) + startTimeout);
    if (!gotHello) {
      nextHelloOverride = undefined;
      throw new CaseFailure('a reconnect with a hello', `none${hint(run)}`);
    }
    processAttempts++;
    const bad = server.sessions.slice(from).find((x) => x.helloHeldAt !== undefined)!;
    await bad.until(() => !bad.isOpen, timeoutMs + SLACK_MS + t);
    const closedBy = bad.close === undefined ? `still open ${timeoutMs + SLACK_MS + t} ms after the hello` : bad.close.byServer ? 'closed by the scripted server' : `closed ${bad.close.code} by the agent`;
    if (bad.isOpen) {
      bad.closeWith(1011, 'conformance: closing the session the agent kept');
      await bad.closed;
    }
    const after = server.sessions.indexOf(bad) + 1;
    const next = await nextHello(after, bound(processAttempts) + startTimeout);
    if (next !== undefined) {
      processAttempts++;
      session = next;
    }
    expect(bad.close !== undefined && !bad.close.byServer, `the agent closes the connection after ${timeoutMs} ms without a HelloResult`, closedBy);
    const waited = bad.close!.at - bad.helloHeldAt!;
    expect(waited >= timeoutMs - clockMarginMs, `not before its hello timeout (${timeoutMs} ms)`, `closed ${waited} ms after the hello`);
    expect(waited <= timeoutMs + SLACK_MS, `within ${timeoutMs + SLACK_MS} ms of the hello (its hello timeout + ${SLACK_MS} ms)`, `closed ${waited} ms after it`);
    expect(bad.pushes.length === 0 && bad.heartbeats.length === 0, 'nothing but the hello sent in that session', `${bad.pushes.length} logs.push, ${bad.heartbeats.length} heartbeats`);
    expect(next !== undefined && next.helloAnswered === 'result', 'a reconnect whose hello is accepted', next ? 'refused' : `no reconnect${hint(run)}`);
    return `closed ${bad.close!.code} ${waited} ms after the unanswered hello; reconnected ${next!.openedAt - bad.close!.at} ms later`;
  });

  // ─────────────────────────── A8. Decommission ───────────────────────────
  const DECOMMISSION_DRAIN_SECS = 10;
  /** Set when the Decommission was sent (the decommissioned host's next hello gets -32002). */
  let decommissioned = false;
  const decommissionCase = await runner.run('agent/shutdown-decommission', `agent.shutdown Decommission (drain_seconds ${DECOMMISSION_DRAIN_SECS}): the agent drains (pushes its unacked entries, acked during the drain) and closes cleanly (1000 Normal closure) with final_seq=<the last seq acked> once they are acked (within ${EMPTY_CLOSE_MS} ms, not at the drain's end; PROTOCOL.md#shutdown-and-drain)`, async () => {
    if (!session.isOpen) throw new CaseFailure('a connected agent', 'no session');
    let drainFrom = 0;
    // More entries than the agent's window of pushes carries (4 × 100 in the reference agent, up to
    // 16 × 100 allowed here): the drain goes on after the first acks, until all of it is acked.
    const DRAIN_ENTRIES = 100 * Math.max(4, o.pushWindow ?? 4) + 250;
    let pushedBefore = 0;
    if (emitMode !== 'none') {
      server.ackMode = 'hold';
      drainFrom = server.store.accepted + 1;
      await emit(DRAIN_ENTRIES);
      const sess = session;
      const ok = await sess.until(() => maxSeq(sess.pushes.filter((p) => !p.acked).map((p) => p.params)) >= drainFrom + 2, t * 2);
      expect(ok, `pushes up to ${drainFrom + 2} before the shutdown`, `pushes ${describeBatches(sess.pushes.map((p) => p.params))}`);
      await barrier(sess);
      pushedBefore = maxSeq(sess.pushes.map((p) => p.params));
    }
    const sess = session;
    const r = await shutdownAndWatch('Decommission', DECOMMISSION_DRAIN_SECS, {
      beforeSend: () => {
        revokeNextHello = true; // the decommissioned host's next hello gets -32002
        decommissioned = true;
      },
      afterSend: () => {
        server.ackMode = 'ack';
        sess.release();
      },
    });
    const c = r.close;
    expect(c !== undefined && !c.byServer, 'the agent closes within drain_seconds', c ? `closed by the scripted server after the drain (${c.code})` : 'open');
    expect(c!.code === 1000, 'close 1000 Normal closure', closeCodeSeen(c!.code));
    const m = finalSeq.exec(c!.reason);
    expect(m !== null, 'reason final_seq=<n>', `reason ${JSON.stringify(c!.reason)}`);
    if (emitMode !== 'none') {
      const n = Number(m![1]);
      const least = Math.max(drainFrom + 2, pushedBefore);
      expect(r.acceptedAtClose >= least, `every entry pushed before the shutdown acked before the close (up to seq ${least}), not only the first acked push`, `closed with seq ${r.acceptedAtClose} acked (reason ${c!.reason})`);
      expect(n === r.acceptedAtClose, `final_seq=${r.acceptedAtClose}: the last seq acked when the agent closed (PROTOCOL.md#shutdown-and-drain)`, `reason ${c!.reason}: ${n > r.acceptedAtClose ? `${n - r.acceptedAtClose} beyond` : `${r.acceptedAtClose - n} below`} the seq acked`);
    }
    // The held pushes are acked at the notification: then nothing is left to drain (PROTOCOL.md#shutdown-and-drain).
    if (emitMode !== 'none') expect(r.ms <= EMPTY_CLOSE_MS, `closed within ${EMPTY_CLOSE_MS} ms of the notification (drain_seconds ${DECOMMISSION_DRAIN_SECS}; everything acked at once)`, `closed ${r.ms} ms after it`);
    return `close ${c!.code} "${c!.reason}" after ${r.ms} ms`;
  });
  const decomAttempts = server.sessions.length;
  const revokedHello = decommissioned ? await nextHello(decomAttempts, bound(processAttempts) + startTimeout) : undefined;
  const revokedCase = await runner.run('agent/decommission-then-revoked', 'after Decommission the agent reconnects, gets -32002 and stops (no connection attempt within the quiet window after the refusal; PROTOCOL.md#hello-refused)', async () => {
    if (!decommissioned) throw new CaseSkip(`needs agent/shutdown-decommission to send the Decommission (it ${decommissionCase.status === 'SKIP' ? `was skipped: ${whyNot(decommissionCase)}` : 'failed before sending it'})`);
    expect(revokedHello !== undefined, 'a reconnect after the drain', `none${hint(run)}`);
    expect(revokedHello!.helloAnswered === 'error', 'hello refused with -32002', 'hello accepted');
    const refusedAt = revokedHello!.helloAnsweredAt!;
    const attempt = await attemptWithin(refusedAt, refusedAt);
    expect(attempt === undefined, `no connection attempt within ${o.quietWindowMs} ms of the -32002`, `an attempt ${attempt?.afterStart} ms after the -32002`);
    const exited = await Promise.race([run!.exited.then((e) => `exited ${e.code ?? e.signal}`), new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 200))]);
    return `-32002 then silent for ${o.quietWindowMs} ms (process ${exited})`;
  });
  run.kill('SIGKILL');
  await run.exited;
  // Seed 3 step 7: on -32002 the agent deletes its token. Seen from outside: started again on
  // the same state dir, it never presents the revoked token (it may refuse to start, or send a
  // hello without it; every hello is still answered -32002).
  const revokedToken = revokedHello?.hello?.token;
  await runner.run('agent/revoked-token-deleted', 'after a hello answered -32002, the run command started again on the same state dir never sends the revoked token', async () => {
    if (revokedHello === undefined || revokedHello.helloAnswered !== 'error') throw new CaseSkip(`needs agent/decommission-then-revoked to see a hello refused with -32002 (it ${revokedCase.status === 'SKIP' ? `was skipped: ${whyNot(revokedCase)}` : revokedCase.status === 'FAIL' ? 'failed' : 'saw none'})`);
    const from = server.sessions.length;
    const again = startRun(stateDir, enrollToken, hostId);
    try {
      const hello = nextHello(from, startTimeout);
      const outcome = await Promise.race([again.exited.then(() => 'exited' as const), hello.then((h) => h)]);
      const h = outcome === 'exited' ? server.sessions.slice(from).find((x) => x.helloAnswered !== undefined) : outcome;
      expect(h?.hello?.token !== revokedToken, 'no hello with the revoked token', 'a hello with the revoked token (the token file was kept)');
      return outcome === 'exited' ? `the run command exited (${lastLines(again.output(), 1) || 'no output'})` : h === undefined ? `no hello within ${startTimeout} ms` : 'a hello without the revoked token';
    } finally {
      again.kill('SIGKILL');
      await again.exited;
    }
  });
  revokeNextHello = false;
  return undefined;
  };

  // Story A, then what does not depend on it: a fresh host each for B, C and D, and the checks
  // over the whole run. Anything thrown between A's cases is agent/suite-stopped (DECISIONS K14),
  // its cases not run yet are listed SKIPPED saying so, and the story goes on with B.
  const plan = agentCasePlan(o);
  /** Lists every case of these parts not run yet as SKIPPED with the reason (--only's own reason for a case it left out). */
  const notRun = (parts: readonly CasePart[], why: CaseSkip) => {
    const listed = new Set(runner.results.map((r) => r.id));
    for (const c of plan) {
      if (!parts.includes(c.part) || listed.has(c.id)) continue;
      runner.skip(c.id, 'the case (not run)', runner.only !== undefined && !runner.only.matches(c.id) ? 'not selected by --only' : why.reason);
    }
  };
  let stopped: string | undefined;
  let fatal: string | undefined;
  try {
    fatal = await storyA();
  } catch (err) {
    if (err instanceof BailOut) throw err;
    const what = betweenCases(err);
    runner.fail('agent/suite-stopped', 'the agent suite runs to its end', `it stopped between cases: ${what}`);
    stopped = `the agent suite stopped between cases (${what}); the results so far are reported`;
    notRun(['A'], new CaseSkip(`not run: the suite stopped between cases (agent/suite-stopped: ${what.slice(0, 200)})`));
  } finally {
    blocked = undefined;
    server.freezeAtFirstFrame = undefined;
    if (run !== undefined) {
      run.kill('SIGKILL');
      await run.exited;
    }
  }
  if (fatal !== undefined) {
    notRun(['A', 'B', 'C', 'D', 'W'], new CaseSkip(`not run: no hello of the agent was ever answered (--run-command${o.enrollCommand !== undefined ? ', --enroll-command' : ''}: see the error after the report)`));
    return fatal;
  }
  revokeNextHello = false;
  rotateNextHello = false;
  nextHelloOverride = undefined;
  server.ackMode = 'ack';

  // ─────────────────────────── B. Revoked (fresh state dir) ───────────────────────────
  await runner.run('agent/shutdown-revoked', `agent.shutdown Revoked: the agent disconnects and makes no connection attempt from the notification until ${o.quietWindowMs} ms (the quiet window) after the connection closed (PROTOCOL.md#shutdown-and-drain)`, async () => {
    const dirB = join(work, 'state-b');
    stateDirNow = dirB;
    currentHost = randomUUID();
    // A base64url token may begin with "-" (one in 64 does): this one always does, so an
    // agent whose option parser takes it for an option fails here, not once in 64 installs.
    const tokB = `-${randomToken().slice(1)}`;
    validTokens = new Set([tokB]);
    enrolled = false;
    const before = server.sessions.length;
    let runB: Spawned | undefined;
    try {
      if (o.enrollCommand !== undefined) {
        const r = await runShell(fillTemplate(o.enrollCommand, values(dirB, tokB, currentHost)), startTimeout * 2);
        expect(r.code === 0, 'a second enrollment (fresh host, a token beginning with "-") succeeds', `exit ${r.code ?? r.signal}: ${lastLines(r.output)}`);
        runB = startRun(dirB, expectedToken, currentHost);
        const ok = await server.until(() => server.sessions.length > before + 1 && server.sessions.at(-1)!.helloAnswered === 'result', startTimeout);
        if (!ok) throw new CaseFailure('the run command connects', `no session${await said(runB)}`);
      } else {
        runB = startRun(dirB, tokB, currentHost);
        const ok = await server.until(() => server.sessions.length > before && server.sessions.at(-1)!.helloAnswered === 'result', startTimeout);
        if (!ok) throw new CaseFailure('the run command connects', `no session${await said(runB)}`);
      }
      const sess = server.sessions.at(-1)!;
      await barrier(sess);
      const t0 = Date.now();
      sess.client.agentShutdown({ reason: 'Revoked', drain_seconds: 0 });
      const closedByAgent = await sess.until(() => !sess.isOpen, LIMITS.control_propagation_ms);
      if (!closedByAgent) sess.closeWith(4002, 'TokenRevoked');
      const closedAt = (await sess.closed).at;
      const how = closedByAgent ? `the agent closed it ${closedAt - t0} ms after the notification` : `the scripted server closed it 4002 ${closedAt - t0} ms after the notification: the agent had not`;
      // The quiet window starts at the close; an attempt after the notification counts from there on.
      const attempt = await attemptWithin(t0, closedAt);
      expect(attempt === undefined, `no connection attempt from the notification until ${o.quietWindowMs} ms after the close`, `an attempt ${relative(attempt?.afterStart ?? 0, 'the close')} (${attempt?.afterFrom} ms after the notification; ${how})`);
      const exited = await Promise.race([runB.exited.then((e) => `exited ${e.code ?? e.signal}`), new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 200))]);
      return `${how}; silent for ${o.quietWindowMs} ms after the close (process ${exited})`;
    } finally {
      runB?.kill('SIGKILL');
    }
  });

  // ─────────────────────────── C. FatalAuth (fresh state dir) ───────────────────────────
  await runner.run('agent/fatal-auth', 'a reconnect answered -32001 AuthFailed (close 4001): the agent stops retrying (FatalAuth: no connection attempt within the quiet window after the refusal; PROTOCOL.md#hello-refused)', async () => {
    const dirC = join(work, 'state-c');
    stateDirNow = dirC;
    currentHost = randomUUID();
    const tokC = randomToken();
    validTokens = new Set([tokC]);
    enrolled = false;
    const before = server.sessions.length;
    let runC: Spawned | undefined;
    try {
      if (o.enrollCommand !== undefined) {
        const r = await runShell(fillTemplate(o.enrollCommand, values(dirC, tokC, currentHost)), startTimeout * 2);
        expect(r.code === 0, 'the enrollment of a fresh host succeeds', `exit ${r.code ?? r.signal}: ${lastLines(r.output)}`);
        runC = startRun(dirC, expectedToken, currentHost);
        const ok = await server.until(() => server.sessions.length > before + 1 && server.sessions.at(-1)!.helloAnswered === 'result', startTimeout);
        if (!ok) throw new CaseFailure('the run command connects', `no session${await said(runC)}`);
      } else {
        runC = startRun(dirC, tokC, currentHost);
        const ok = await server.until(() => server.sessions.length > before && server.sessions.at(-1)!.helloAnswered === 'result', startTimeout);
        if (!ok) throw new CaseFailure('the run command connects', `no session${await said(runC)}`);
      }
      const sess = server.sessions.at(-1)!;
      await barrier(sess);
      // The server goes away; the agent's next hello is refused with -32001.
      authFailNextHello = true;
      const from = server.sessions.length;
      sess.closeWith(1011, 'conformance: server restart');
      const refused = await nextHello(from, bound(0) + o.backoffCapMs + startTimeout);
      expect(refused !== undefined && refused.helloAnswered === 'error', 'a reconnect whose hello is refused with -32001', refused ? 'hello accepted' : `no reconnect${hint(runC)}`);
      const refusedAt = refused!.helloAnsweredAt!;
      const attempt = await attemptWithin(refusedAt, refusedAt);
      const exited = await Promise.race([runC.exited.then((e) => `exited ${e.code ?? e.signal}`), new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 200))]);
      expect(attempt === undefined, `no connection attempt within ${o.quietWindowMs} ms of the -32001`, `an attempt ${attempt?.afterStart} ms after the -32001`);
      return `-32001 then silent for ${o.quietWindowMs} ms (process ${exited})`;
    } finally {
      runC?.kill('SIGKILL');
      authFailNextHello = false;
    }
  });

  // ─────────────────────────── D. accepted_seq = max_seq (fresh state dir) ───────────────────────────
  // The boundary of agent/accepted-seq-beyond-max: max_seq itself is a valid high-water mark
  // (the agent can push nothing more, but the session is not a protocol error). Last, on its own
  // host and without log sources: nothing this agent would read can get a seq.
  await runner.run('agent/accepted-seq-at-max', `a HelloResult with accepted_seq = max_seq (${LIMITS.max_seq}) is accepted: the agent keeps that session open`, async () => {
    const dirD = join(work, 'state-d');
    stateDirNow = dirD;
    currentHost = randomUUID();
    const tokD = randomToken();
    validTokens = new Set([tokD]);
    enrolled = false;
    autoFileSource = false; // the hello of this host gets no file source either
    logSources = [];
    const before = server.sessions.length;
    let runD: Spawned;
    if (o.enrollCommand !== undefined) {
      const r = await runShell(fillTemplate(o.enrollCommand, values(dirD, tokD, currentHost)), startTimeout * 2);
      expect(r.code === 0, 'the enrollment of a fresh host succeeds', `exit ${r.code ?? r.signal}: ${lastLines(r.output)}`);
      seqAtMax = true;
      runD = startRun(dirD, expectedToken, currentHost);
    } else {
      seqAtMax = true;
      runD = startRun(dirD, tokD, currentHost);
    }
    try {
      const from = o.enrollCommand !== undefined ? before + 1 : before;
      const sess = await nextHello(from, startTimeout);
      expect(sess !== undefined && sess.helloAnswered === 'result', `a hello answered with accepted_seq ${LIMITS.max_seq}`, sess ? 'hello refused' : `no session${hint(runD)}`);
      // The agent handles its HelloResult before the next frame: a barrier answered on the same
      // session means it took max_seq (an agent that refuses it closes at once).
      try {
        await sess!.client.probeRequest({ probe: 'conformance.barrier', args: {}, timeout_ms: 1000 }, { timeoutMs: t });
      } catch (err) {
        if (err instanceof PeerError && err.code === 'timeout' && sess!.isOpen && !server.sessions.some((x) => x.responses > 0)) {
          throw new CaseSkip('needs agent/probe-unknown: the agent has answered no probe.request in this run, and the case needs one answered on this session to know that the agent took the HelloResult');
        }
        if (err instanceof PeerError) throw new CaseFailure('the session stays open (a probe.request after the hello answered)', sess!.close ? `${sess!.close.byServer ? 'server' : 'agent'} closed ${sess!.close.code} ${sess!.close.reason}` : describeErr(err));
      }
      expect(sess!.isOpen && server.sessions.at(-1) === sess, 'the same session open', sess!.close ? `agent closed ${sess!.close.code} ${sess!.close.reason}` : 'a new session');
      const beyond = sess!.pushes.filter((p) => p.params.seq_start > LIMITS.max_seq);
      expect(beyond.length === 0, `no logs.push beyond max_seq`, `logs.push seq_start ${beyond[0]?.params.seq_start}`);
      return 'accepted_seq max_seq taken; session open';
    } finally {
      seqAtMax = false;
      runD.kill('SIGKILL');
      await runD.exited;
    }
  });

  // ─────────────────────────── summary checks over the whole run ───────────────────────────
  await runner.run('agent/hello-valid', 'every agent.hello is valid against the schema (protocol_version 1 included)', async () => {
    const bad = allHellos.find((h) => !validateHello(h.params));
    expect(bad === undefined, 'valid hello params', `hello #${bad ? allHellos.indexOf(bad) : -1}: ${bad?.session.helloIssues}`);
    return `${allHellos.length} hellos valid`;
  });
  await runner.run('agent/no-compression', 'no upgrade of the whole run (enrollment, runs, reconnects) offers permessage-deflate (Sec-WebSocket-Extensions): V1 has no frame-level compression (PROTOCOL.md#connecting)', async () => {
    const offered = server.attempts.filter((a) => /permessage-deflate/i.test(a.extensions));
    expect(offered.length === 0, 'no Sec-WebSocket-Extensions: permessage-deflate offer', `${offered.length} of ${server.attempts.length} upgrade(s) offered ${JSON.stringify(offered[0]?.extensions)} (ws offers it unless perMessageDeflate: false)`);
    const other = server.attempts.find((a) => a.extensions !== '');
    return other ? `extensions offered: ${JSON.stringify(other.extensions)}` : `${server.attempts.length} upgrade(s), no extension offered`;
  });
  await runner.run('agent/frames-within-limit', `every frame the agent sent was within max_frame_bytes (${LIMITS.max_frame_bytes} bytes; a larger one is closed 1009, PROTOCOL.md#connecting)`, async () => {
    const over = server.sessions.filter((x) => x.oversize !== undefined);
    expect(over.length === 0, `no frame over ${LIMITS.max_frame_bytes} bytes`, `${over.length} session(s) closed 1009 for it, the first #${over[0]?.index} ${over[0] ? `${over[0].oversize!.at - over[0].openedAt} ms after it opened` : ''}: ${over[0] ? oversizeText(over[0].oversize!) : ''}`);
    return `${server.sessions.length} sessions, none with a frame over the limit`;
  });
  await runner.run('agent/batch-limit', `every logs.push carries at most min(config.max_batch_entries ${config().max_batch_entries}, the hello's capabilities.max_batch_entries, logs_push_max_entries ${LIMITS.logs_push_max_entries}) entries (PROTOCOL.md#sending-logs)`, async () => {
    let judged = 0;
    for (const sess of server.sessions) {
      const caps = sess.hello?.capabilities.max_batch_entries;
      const limit = Math.min(sess.helloConfig?.max_batch_entries ?? config().max_batch_entries, caps ?? LIMITS.logs_push_max_entries, LIMITS.logs_push_max_entries);
      const big = sess.pushes.find((p) => p.params.entries.length > limit);
      judged += sess.pushes.length;
      expect(big === undefined, `at most ${limit} entries per logs.push (min(config.max_batch_entries ${sess.helloConfig?.max_batch_entries ?? config().max_batch_entries}, capabilities.max_batch_entries ${caps ?? '(none)'}, ${LIMITS.logs_push_max_entries}))`, `a logs.push of ${big?.params.entries.length} entries (seq ${big?.params.seq_start}..${big?.params.entries.at(-1)?.seq}, session #${sess.index})`);
    }
    if (judged === 0) throw new CaseSkip(logsSkip);
    return `${judged} logs.push within their limit`;
  });
  await runner.run('agent/requests-valid', 'every logs.push, metrics.push and heartbeat the agent sent was valid', async () => {
    const bad = server.sessions.flatMap((x) => x.events).filter((e) => e.type === 'invalid_params' || e.type === 'invalid_request' || e.type === 'parse_error');
    expect(bad.length === 0, 'no invalid frame', `${bad.length}: ${js(bad[0], 200)}`);
    const pushes = server.sessions.reduce((n, x) => n + x.pushes.length, 0);
    return `${pushes} logs.push, ${server.sessions.reduce((n, x) => n + x.heartbeats.length, 0)} heartbeats, ${server.sessions.reduce((n, x) => n + x.metrics.length, 0)} metrics.push`;
  });
  return stopped;
}

function validateHello(params: unknown): boolean {
  return METHOD_CATALOG.find((m) => m.name === 'agent.hello')?.validateParams?.(params) === true;
}

type Batch = { seq_start: number; entries: { seq: number }[] };

function maxSeq(batches: readonly Batch[]): number {
  return batches.reduce((m, b) => Math.max(m, b.entries.at(-1)?.seq ?? 0), 0);
}

function describeBatches(batches: readonly Batch[]): string {
  return batches.length === 0 ? 'none' : batches.map((b) => `${b.seq_start}..${b.entries.at(-1)?.seq}`).join(', ');
}

/** seq_start = entries[0].seq, entries contiguous, each batch right after the one before, from `start` (no refusals among them). */
function checkBatches(batches: readonly Batch[], start: number): void {
  checkPushes(batches.map((params) => ({ params })), start);
}

/** A logs.push as checkPushes judges it: a PushRecord, or bare params (no refusal among them). */
type PushLike = { params: Batch } & Partial<Pick<PushRecord, 'at' | 'answeredAt' | 'refusedWith' | 'resendFrom'>>;

/** "1..100 (-32008), 101..200 (-32020), 1..50, …" */
function describePushes(records: readonly PushLike[]): string {
  return records.length === 0 ? 'none' : records.map((r) => `${r.params.seq_start}..${r.params.entries.at(-1)?.seq}${r.refusedWith !== undefined ? ` (${r.refusedWith})` : ''}`).join(', ');
}

/**
 * The pushes of one session in arrival order, from `start` (PROTOCOL.md#sequence-numbers,
 * #refusals-and-resends): each has seq_start = entries[0].seq and contiguous entries; each push
 * that was not refused starts right after the one before it, or at a resend point of a refusal
 * answered before it arrived (the refused push's seq_start, or a -32020's resend_from_seq) —
 * each refusal is the cause of one resend at most. So an agent that acts on a follow-on refusal of a
 * push it sent before its resend, and sends those entries once more, passes (the server drops the
 * duplicates), whenever that refusal reaches it; entries sent again without a refusal, or seqs
 * skipped, fail naming the rule (DECISIONS K17).
 */
function checkPushes(records: readonly PushLike[], start: number): void {
  for (const { params: b } of records) {
    expect(b.entries[0]?.seq === b.seq_start, 'seq_start = entries[0].seq (PROTOCOL.md#sequence-numbers)', `seq_start ${b.seq_start}, entries[0].seq ${b.entries[0]?.seq}`);
    b.entries.forEach((e, i) => expect(e.seq === b.seq_start + i, 'contiguous entries, entries[i].seq = seq_start + i (PROTOCOL.md#sequence-numbers)', `logs.push ${b.seq_start}: entries[${i}].seq ${e.seq}`));
  }
  const causes: { at: number; points: number[]; code: number; used: boolean }[] = [];
  let expectedNext = start;
  let first: Batch | undefined;
  for (const r of records) {
    const b = r.params;
    if (r.refusedWith !== undefined) {
      causes.push({ at: r.answeredAt ?? r.at ?? 0, points: [...new Set([r.resendFrom ?? b.seq_start, b.seq_start])], code: r.refusedWith, used: false });
      continue;
    }
    first ??= b;
    const cause = b.seq_start === expectedNext ? undefined : causes.find((c) => !c.used && c.points.includes(b.seq_start) && c.at <= (r.at ?? 0));
    if (b.seq_start !== expectedNext && cause === undefined) {
      const open = causes.filter((c) => !c.used && c.at <= (r.at ?? 0)).map((c) => `${c.points.join(' or ')} (a resend point of a ${c.code} refusal)`);
      const expected = `the next logs.push starting at ${expectedNext}, right after the one before${open.length > 0 ? `, or at ${open.join(' or ')}` : ''}`;
      const rule =
        b.seq_start < expectedNext
          ? 'within a session entries are sent again only after a refusal, from its seq_start or resend_from_seq, once per refusal (PROTOCOL.md#refusals-and-resends), or after a reconnect from accepted_seq + 1 (PROTOCOL.md#sequence-numbers)'
          : 'seqs are assigned one after the other and sent in order: none skipped (PROTOCOL.md#sequence-numbers)';
      throw new CaseFailure(`${expected}: ${rule}`, `a logs.push starting at ${b.seq_start}: ${b.seq_start < expectedNext ? 'entries sent again without a refusal asking for them' : `seqs ${expectedNext}..${b.seq_start - 1} skipped`} (pushes ${describePushes(records)})`);
    }
    if (cause !== undefined) cause.used = true;
    expectedNext = (b.entries.at(-1)?.seq ?? 0) + 1;
  }
  expect(first === undefined || first.seq_start === start, `the first logs.push starting at ${start} (PROTOCOL.md#sequence-numbers)`, `first seq_start ${first?.seq_start}`);
}

function sumBounds(o: AgentSuiteOptions, fromAttempt: number, n: number): number {
  let total = 0;
  for (let i = 0; i < n; i++) total += Math.min(o.backoffCapMs, o.backoffBaseMs * 2 ** (fromAttempt + i)) + SLACK_MS;
  return total;
}

/** A reason up to its first "; " or " (": enough to say why, when it is passed on. */
function firstClause(text: string): string {
  const cut = text.search(/; | \(/);
  return cut < 0 ? text : text.slice(0, cut);
}

/** Why a skipped case did not run, to pass on: its "not judged: …" cause when it has one, else its first clause. */
function whyNot(r: CaseResult): string {
  const i = r.seen.indexOf('not judged: ');
  return firstClause(i >= 0 ? r.seen.slice(i) : r.seen);
}

/** A close code as seen, with its name when the contract has it (1001: "GoingAway"). */
function closeCodeSeen(code: number): string {
  const row = CLOSE_CODE_TABLE.find((c) => c.code === code);
  return `close ${code}${row ? ` ${row.name} (in the contract: ${row.meaning.replace(/\.$/, '')})` : ''}`;
}

function describeErr(e: unknown): string {
  if (e instanceof RpcError) return `error ${e.code} ${e.message}`;
  if (e instanceof PeerError) return `${e.code}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}
