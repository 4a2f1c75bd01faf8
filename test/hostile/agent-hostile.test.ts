// The reference agent (a real process: test/support/agent-runner.mjs) against a hostile
// scripted server (a raw `ws` server that sends whatever it likes). Phases: garbage frames
// and results, responses with unknown ids, huge and invalid config.update, probe requests
// with hostile args, agent.shutdown floods, then an honest phase. Asserted:
//   - the agent process never crashes;
//   - every state transition it reports is in the contract's state machine;
//   - no buffered entry is lost: every seq 1..N reaches the server (duplicates allowed on
//     the wire), and buffer.db ends consistent with everything acked;
//   - probe requests are answered with contract codes;
//   - the token never appears in the agent's output.
// A lying ack (up_to_seq beyond anything sent) is a separate case, see the bottom.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AGENT_STATE_MACHINE, ERROR_TABLE, SUBPROTOCOL } from '@cortex/agent-protocol';
import { readBufferSnapshot } from '../../agent/buffer/buffer.js';
import { writeAgentSettings, writeHostId } from '../../agent/state-dir.js';
import { writeToken } from '../../agent/token-store.js';
import { recordFigure } from '../support/figures.js';
import { storedEntries } from '../support/buffer-rows.js';
import { FULL, assertNoTokenLeaks, captured, cleanupTempDirs, requireDist, startAgentRunner, tempDir, tokens, until, type AgentProc } from '../support/procs.js';

const ERROR_CODES = new Set<number>(ERROR_TABLE.map((e) => e.code));
const TRANSITIONS = new Set(AGENT_STATE_MACHINE.transitions.map((t) => `${t.from}|${t.event}|${t.to}`));
const HOST = '7d1f3a52-1c7e-4b8f-9a51-0a3c2f4e8b11';
const TOKEN = 'hostile-test-token-' + 'Q'.repeat(40);
const CONFIG = { heartbeat_interval_secs: 30, max_batch_entries: 200, flush_interval_ms: 50, metrics_interval_secs: 60, probe_concurrency: 2, log_sources: [] };

type Mode = 'honest' | 'garbage' | 'config' | 'probes' | 'shutdown' | 'lying_ack';

class HostileServer {
  readonly wss: WebSocketServer;
  mode: Mode = 'honest';
  /** Every seq the agent delivered (counted, duplicates allowed). */
  readonly received = new Map<number, number>();
  /** Every message text delivered. */
  readonly messages = new Set<string>();
  accepted = 0;
  sessions = 0;
  sent = 0;
  readonly probeAnswers: { id: unknown; code?: number; ok: boolean }[] = [];
  current: WebSocket | null = null;
  private nextId = 1_000_000;

  constructor() {
    this.wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024, handleProtocols: (p) => (p.has(SUBPROTOCOL) ? SUBPROTOCOL : false) });
    this.wss.on('connection', (ws) => this.onConnection(ws));
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/ws/agent`;
  }

  send(obj: unknown): void {
    const ws = this.current;
    if (ws && ws.readyState === ws.OPEN) {
      ws.send(typeof obj === 'string' ? obj : JSON.stringify(obj));
      this.sent++;
    }
  }

  id(): number {
    return this.nextId++;
  }

  private onConnection(ws: WebSocket): void {
    this.current = ws;
    this.sessions++;
    ws.on('message', (data) => {
      let m: { id?: number | string; method?: string; params?: Record<string, unknown>; result?: unknown; error?: { code: number } };
      try {
        m = JSON.parse(data.toString()) as typeof m;
      } catch {
        return;
      }
      if (m.method === 'agent.hello') {
        tokens.add(String(m.params?.['token'] ?? ''));
        this.send({ jsonrpc: '2.0', id: m.id, result: { server_version: 'hostile', server_time: new Date().toISOString(), accepted_seq: this.accepted, session_id: '0d8e6a8e-5b8c-4a43-8b9e-2f0b6f1f0c11', config: CONFIG } });
        return;
      }
      if (m.method === 'logs.push') {
        const entries = (m.params?.['entries'] ?? []) as { seq: number }[];
        for (const e of entries) {
          this.received.set(e.seq, (this.received.get(e.seq) ?? 0) + 1);
          this.messages.add((e as { message?: string }).message ?? '');
        }
        // the honest high-water mark: contiguous from 1
        while (this.received.has(this.accepted + 1)) this.accepted++;
        const honest = { jsonrpc: '2.0', id: m.id, result: { up_to_seq: this.accepted, received_at: new Date().toISOString() } };
        if (this.mode === 'garbage') {
          // garbage results and errors for the agent's own requests (its ids)
          const r = Math.random();
          if (r < 0.25) this.send({ jsonrpc: '2.0', id: m.id, result: { up_to_seq: 'lots', received_at: 42 } });
          else if (r < 0.4) this.send({ jsonrpc: '2.0', id: m.id, result: null });
          else if (r < 0.55) this.send({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: 'InternalError' } });
          else if (r < 0.65) this.send({ jsonrpc: '2.0', id: m.id, error: { code: 12345, message: 'nonsense', data: { retry_after_ms: -5 } } });
          else if (r < 0.7) this.send({ jsonrpc: '2.0', id: m.id, error: { code: -32020, message: 'Backpressure', data: { retry_after_ms: 50 } } });
          else if (r < 0.75) this.send({ jsonrpc: '2.0', id: m.id, error: 'not an object' });
          else this.send(honest);
          return;
        }
        if (this.mode === 'lying_ack') {
          // late, so the agent has buffered (unsent) entries when the lie arrives
          setTimeout(() => this.send({ jsonrpc: '2.0', id: m.id, result: { up_to_seq: 1_000_000_000, received_at: new Date().toISOString() } }), 300);
          return;
        }
        this.send(honest);
        return;
      }
      if (m.method === 'metrics.push') {
        this.send({ jsonrpc: '2.0', id: m.id, result: { accepted: 0, dropped: 0 } });
        return;
      }
      if (m.method === undefined && m.id !== undefined) {
        // an answer to one of our probe.requests
        this.probeAnswers.push({ id: m.id, ok: m.result !== undefined, ...(m.error ? { code: m.error.code } : {}) });
      }
    });
  }

  close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((r) => this.wss.close(() => r()));
  }
}

let srv: HostileServer;
let agent: AgentProc;
let stateDir: string;

beforeAll(async () => {
  requireDist();
  srv = new HostileServer();
  await new Promise<void>((r) => srv.wss.once('listening', () => r()));
  stateDir = tempDir('cortex-hostile-agent-');
  await writeToken(stateDir, TOKEN);
  tokens.add(TOKEN);
  await writeHostId(stateDir, HOST);
  await writeAgentSettings(stateDir, { server_url: srv.url, allow_insecure: true, ca_file: null });
});

afterAll(async () => {
  await agent?.kill('SIGKILL');
  await srv?.close();
  cleanupTempDirs();
});

function checkTransitions(a: AgentProc): void {
  for (const e of a.events.filter((x) => x.ev === 'state')) {
    expect(TRANSITIONS.has(`${e['from']}|${e['event']}|${e['to']}`), `transition ${e['from']} -${e['event']}-> ${e['to']}`).toBe(true);
  }
}

const junk = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.string({ maxLength: 300 }),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.oneof(fc.integer(), fc.string()), result: fc.jsonValue({ maxDepth: 3 }) }).map((o) => JSON.stringify(o)),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), error: fc.record({ code: fc.integer(), message: fc.string() }) }).map((o) => JSON.stringify(o)),
  fc.record({ jsonrpc: fc.constant('2.0'), method: fc.string({ maxLength: 30 }), params: fc.jsonValue({ maxDepth: 3 }) }).map((o) => JSON.stringify(o)),
  fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), method: fc.constantFrom('logs.push', 'agent.hello', 'agent.heartbeat', 'nope', 'config.update'), params: fc.jsonValue({ maxDepth: 3 }) }).map((o) => JSON.stringify(o)),
  fc.integer({ min: 1000, max: 20_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
);

const hostileProbe = fc.record({
  probe: fc.oneof(fc.constantFrom('exec.systemctl_status', 'fs.disk_usage', 'file.tail', 'proc.top', '../../bin/sh', '', 'x'.repeat(5000), '__proto__', 'sys.uptime; rm -rf /'), fc.string({ maxLength: 50 })),
  args: fc.oneof(
    fc.constant({ unit: '--help' }),
    fc.constant({ unit: '-H root@evil nginx' }),
    fc.constant({ path: '/../../etc/shadow' }),
    fc.constant({ path: '/tmp/\u0000x' }),
    fc.constant({ path: 'relative/../../x' }),
    fc.constant({ lines: 1e308, path: '/etc/hostname' }),
    fc.constant({ unit: 'a'.repeat(100_000) }),
    fc.jsonValue({ maxDepth: 3 }),
  ),
  timeout_ms: fc.oneof(fc.constantFrom(0, -1, 1, 1e308, 2 ** 53, 0.5), fc.integer({ min: 1, max: 2000 })),
});

it('the agent survives garbage, unknown ids, huge config, hostile probes and shutdown floods; no entry lost; states within the contract', async () => {
  const N = FULL ? 50_000 : 4_000;
  agent = startAgentRunner({ stateDir, total: N, rate: FULL ? 2000 : 500, chunk: 20, pingWatchdogMs: 0, backoffBaseMs: 50, backoffCapMs: 300, requestTimeoutMs: 1500 });
  await agent.waitFor((e) => e.ev === 'state' && e.to === 'Active', 15_000);
  const counts: Record<string, number> = { junk: 0, config: 0, probes: 0, shutdowns: 0 };
  const alive = () => expect(agent.child.exitCode, `agent exited: ${agent.stderr().slice(-2000)}`).toBeNull();

  // 1. garbage results/errors for its pushes, junk frames, responses with unknown ids
  srv.mode = 'garbage';
  fc.assert(
    fc.property(junk, (j) => {
      srv.send(j);
      counts['junk']!++;
    }),
    { numRuns: FULL ? 3000 : 300 },
  );
  await until('garbage phase to let pushes run', () => srv.received.size > 200, 15_000);
  alive();

  // 2. huge and invalid config.update (notifications: never answered)
  srv.mode = 'honest';
  const huge = { ...CONFIG, log_sources: Array.from({ length: 4000 }, (_, i) => ({ kind: 'custom', path: `/x/${i}`, labels: { k: 'v'.repeat(200) } })) };
  const invalid = [
    { ...CONFIG, max_batch_entries: 0 },
    { ...CONFIG, max_batch_entries: -5 },
    { ...CONFIG, flush_interval_ms: 'soon' },
    { ...CONFIG, heartbeat_interval_secs: 1e308 },
    { ...CONFIG, log_sources: [{ kind: 'file', path: '/../../etc/shadow' }] },
    { ...CONFIG, log_sources: 'all' },
    null,
    [],
  ];
  for (let i = 0; i < (FULL ? 20 : 3); i++) {
    srv.send({ jsonrpc: '2.0', method: 'config.update', params: { config: huge } });
    for (const c of invalid) srv.send({ jsonrpc: '2.0', method: 'config.update', params: { config: c } });
    srv.send({ jsonrpc: '2.0', method: 'config.update', params: { config: CONFIG, apply_after: 'yesterday' } });
    srv.send({ jsonrpc: '2.0', id: srv.id(), method: 'config.update', params: { config: CONFIG } });
    counts['config']! += invalid.length + 3;
  }
  srv.send({ jsonrpc: '2.0', method: 'config.update', params: { config: CONFIG } });
  alive();

  // 3. probe requests with hostile args
  const probeIds: number[] = [];
  fc.assert(
    fc.property(hostileProbe, (p) => {
      const id = srv.id();
      probeIds.push(id);
      srv.send({ jsonrpc: '2.0', id, method: 'probe.request', params: p });
      counts['probes']!++;
    }),
    { numRuns: FULL ? 500 : 60 },
  );
  // answers come back on the session they were asked on (unless it ended)
  await until('probe answers', () => srv.probeAnswers.length >= probeIds.length * 0.9, 20_000, 100);
  for (const a of srv.probeAnswers) if (a.code !== undefined) expect(ERROR_CODES.has(a.code), `probe error code ${a.code}`).toBe(true);
  alive();

  // 4. shutdown floods (never Revoked here: that is terminal by design)
  const reasons = ['ServerReload', 'Decommission', 'Nope', null, 7];
  for (let i = 0; i < (FULL ? 5000 : 500); i++) {
    const reason = reasons[i % reasons.length];
    const drain = [0, 1, 300, -1, 1e9, 0.5, 'x'][i % 7];
    srv.send({ jsonrpc: '2.0', method: 'agent.shutdown', params: { reason, drain_seconds: drain } });
    counts['shutdowns']!++;
  }
  alive();

  // 5. honest: everything produced arrives
  srv.mode = 'honest';
  await agent.waitFor((e) => e.ev === 'done', FULL ? 240_000 : 90_000);
  alive();
  await agent.kill('SIGTERM');
  checkTransitions(agent);
  let missing = 0;
  for (let s = 1; s <= N; s++) if (!srv.received.has(s)) missing++;
  expect(missing).toBe(0);
  const snap = readBufferSnapshot(join(stateDir, 'buffer.db'));
  expect(snap.stats.ackedSeq).toBe(N);
  expect(snap.stats.nextSeq).toBe(N + 1);
  expect(snap.stats.queueDepth).toBe(0);
  const wireDuplicates = [...srv.received.values()].reduce((a, c) => a + c - 1, 0);
  recordFigure('hostile_agent', { entries: N, missing, wire_duplicates: wireDuplicates, sessions: srv.sessions, answers_to_server_requests: srv.probeAnswers.length, frames_sent: srv.sent, ...counts });
  captured.push(agent.stderr(), agent.events.map((e) => JSON.stringify(e)).join('\n'), readFileSync(join(stateDir, 'status.json'), 'utf8'));
  assertNoTokenLeaks();
}, FULL ? 600_000 : 150_000);

// A schema-valid ack whose up_to_seq is beyond anything the agent sent: the agent clamps it
// to the highest seq it sent, so entries never delivered stay buffered (they used to be
// deleted as acked).
it('a lying ack (up_to_seq beyond anything sent) does not delete undelivered entries', async () => {
  const dir = tempDir('cortex-hostile-agent-');
  const s2 = new HostileServer();
  await new Promise<void>((r) => s2.wss.once('listening', () => r()));
  await writeToken(dir, TOKEN);
  await writeHostId(dir, HOST);
  await writeAgentSettings(dir, { server_url: s2.url, allow_insecure: true, ca_file: null });
  s2.mode = 'lying_ack';
  const TOTAL = 20_000;
  const a = startAgentRunner({ stateDir: dir, total: TOTAL, rate: 0, chunk: 100, pingWatchdogMs: 0, backoffBaseMs: 50, backoffCapMs: 300 });
  try {
    await a.waitFor((e) => e.ev === 'state' && e.to === 'Active', 15_000);
    await until('some pushes', () => s2.received.size > 0, 10_000);
    await a.waitFor((e) => e.ev === 'progress' && (e['produced'] as number) >= TOTAL, 30_000);
    await a.kill('SIGTERM');
    const snap = readBufferSnapshot(join(dir, 'buffer.db'));
    const bdb = new Database(join(dir, 'buffer.db'), { readonly: true });
    const buffered = new Set(storedEntries(bdb).map((r) => (JSON.parse(r.json) as { message: string }).message));
    bdb.close();
    // every produced entry is either delivered or still buffered: none deleted on a lie
    const lost: number[] = [];
    for (let k = 1; k <= TOTAL; k++) if (!s2.messages.has(`gen ${k}`) && !buffered.has(`gen ${k}`)) lost.push(k);
    recordFigure('lying_ack', { lost: lost.length, first_lost: lost[0] ?? null, acked_seq: snap.stats.ackedSeq, next_seq: snap.stats.nextSeq, queue_depth: snap.stats.queueDepth });
    expect(lost).toEqual([]);
  } finally {
    await a.kill('SIGKILL');
    await s2.close();
  }
}, 120_000);
