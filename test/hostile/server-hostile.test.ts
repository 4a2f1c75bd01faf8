// Hostile input against the real server process (compiled CLI), with a well-behaved agent
// process streaming through the whole file. Frames come from the contract's vectors and
// schemas (generated/vectors/*.json), mutated by fast-check, and from raw frames no
// library sends. Asserted throughout:
//   - every JSON-RPC error the server sends carries a code from ERROR_TABLE, every close a
//     code from CLOSE_CODE_TABLE, and each case gets the specific code the contract names;
//   - the server never crashes (process alive, /healthz 200 after every phase);
//   - its RSS (VmRSS, sampled every 100 ms) stays under 2 × idle RSS + 50 MiB;
//   - the well-behaved agent's acks keep advancing, and its entries arrive exactly once;
//   - no token appears in any server log line, /metrics or agent output.
// Short form: ~650 cases; FAULTS_FULL=1: ~5,700.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOSE_CODE_TABLE, ERROR_TABLE, LIMITS } from '@cortex/agent-protocol';
import { readBufferSnapshot } from '../../agent/buffer/buffer.js';
import { recordFigure } from '../support/figures.js';
import {
  FULL,
  ROOT,
  assertNoTokenLeaks,
  captured,
  checkExactlyOnce,
  cleanupTempDirs,
  enroll,
  issueAgentAsync,
  healthz,
  requireDist,
  rssBytes,
  startAgentRunner,
  startServer,
  tempDir,
  tokens,
  type AgentProc,
  type Issued,
  type ServerProc,
} from '../support/procs.js';
import { RawWs, encodeFrame } from '../support/raw-ws.js';

const ERROR_CODES = new Set<number>(ERROR_TABLE.map((e) => e.code));
const CLOSE_CODES = new Set<number>(CLOSE_CODE_TABLE.map((c) => c.code));
const RUNS = FULL ? 2500 : 200;
const MiB = 1024 * 1024;
const HELLO_TIMEOUT_MS = 1500;

let dir: string;
let db: string;
let server: ServerProc;
let good: AgentProc;
let goodHost: Issued;
/** The hosts the tests below authenticate as, issued side by side in beforeAll (with the good agent's). */
const HOSTS = ['well-behaved', 'fuzz-session', 'raw-frames', 'never-reads', 'metrics-flood'] as const;
const issued = new Map<string, Issued>();
function issuedHost(host: (typeof HOSTS)[number]): Issued {
  const h = issued.get(host);
  if (h === undefined) throw new Error(`${host} was not issued in beforeAll`);
  return h;
}
let idleRss = 0;
let peakRss = 0;
let sampler: NodeJS.Timeout;
let fuzzCases = 0;
/** The well-behaved agent streams until the end of the file (then stops). */
const GOOD_TOTAL = 100_000_000;

interface Vector {
  id: string;
  method: string;
  target: string;
  mutation: string;
  message: Record<string, unknown>;
  expected: { valid: boolean; outcome: string; code?: number };
}
const VECTORS: Vector[] = readdirSync(join(ROOT, 'generated/vectors'))
  .filter((f) => f.endsWith('.json'))
  .flatMap((f) => (JSON.parse(readFileSync(join(ROOT, 'generated/vectors', f), 'utf8')) as { vectors: Vector[] }).vectors);

function lastAcked(): number {
  const p = [...good.events].reverse().find((e) => e.ev === 'progress');
  return (p?.['acked'] as number | undefined) ?? 0;
}

/** The good agent's acks advanced during fn (its ingest continued meanwhile). */
async function whileIngestContinues<T>(fn: () => Promise<T>): Promise<T> {
  const before = lastAcked();
  const r = await fn();
  if (lastAcked() <= before && !good.events.some((e) => e.ev === 'done')) {
    await good.waitFor((e) => e.ev === 'progress' && (e['acked'] as number) > before, 10_000);
  }
  return r;
}

async function assertHealthy(): Promise<void> {
  expect(server.child.exitCode, 'server process exited').toBeNull();
  expect(await healthz(server.http)).toBe(200);
}

function errorCodes(ws: RawWs): number[] {
  return ws
    .messages()
    .filter((m): m is { error: { code: number } } => typeof m === 'object' && m !== null && 'error' in m)
    .map((m) => m.error.code);
}

/** Authenticates a raw connection with the host's current token (rotating on first use). */
async function authed(host: { host_id: string; token: string }): Promise<RawWs> {
  const ws = await RawWs.connect(server.port);
  ws.text(JSON.stringify({ jsonrpc: '2.0', id: 'hello', method: 'agent.hello', params: helloParams(host.host_id, host.token) }));
  await ws.until(() => ws.messages().some((m) => (m as { id?: unknown }).id === 'hello') || !ws.open, 5000);
  const res = ws.messages().find((m) => (m as { id?: unknown }).id === 'hello') as { result?: { rotated_token?: string } } | undefined;
  if (!res?.result) throw new Error(`hello failed: ${JSON.stringify(res)} close ${ws.closeCode}`);
  if (res.result.rotated_token) {
    host.token = res.result.rotated_token;
    tokens.add(host.token);
  }
  return ws;
}

function helloParams(host_id: string, token: string): Record<string, unknown> {
  return {
    protocol_version: 1,
    agent_version: '0.1.0',
    hostname: 'fuzz',
    host_id,
    platform: { os: 'linux', arch: 'x86_64', kernel: '6.6.0', distro: null },
    capabilities: { supported_probes: [], sources: ['custom'], max_batch_entries: 1000, compression: [] },
    token,
    resume_from_seq: 0,
  };
}

// ---- arbitraries --------------------------------------------------------------------

const hugeNumber = fc.constantFrom(1e308, -1e308, 2 ** 64, 2 ** 53 + 1, -(2 ** 63), 1e-320, 0.5, -1, 1.2345678901234568e29);
const methodName = fc.oneof(
  fc.constantFrom('agent.hello', 'logs.push', 'metrics.push', 'agent.heartbeat', 'probe.request', 'config.update', 'agent.shutdown', 'probe.response', 'logs.ack', 'rpc.discover', '__proto__', 'constructor', ''),
  fc.string({ maxLength: 40 }),
);
const rpcId = fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), hugeNumber, fc.constant({}), fc.constant([1]), fc.boolean());

/** A contract vector with one random part replaced, removed or re-typed. */
function mutate(msg: unknown, pathChoice: number, replacement: unknown, op: number): unknown {
  const clone = structuredClone(msg) as Record<string, unknown>;
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, p: (string | number)[], depth: number) => {
    if (depth > 6 || v === null || typeof v !== 'object') return;
    for (const [k, c] of Object.entries(v as Record<string, unknown>)) {
      const key = Array.isArray(v) ? Number(k) : k;
      paths.push([...p, key]);
      walk(c, [...p, key], depth + 1);
    }
  };
  walk(clone, [], 0);
  if (paths.length === 0) return replacement;
  const path = paths[pathChoice % paths.length]!;
  let parent: Record<string | number, unknown> = clone;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (op === 0) delete parent[last];
  else if (op === 1) parent[last] = [parent[last]];
  else parent[last] = replacement;
  return clone;
}

const vectorFrame = fc
  .tuple(fc.constantFrom(...VECTORS), fc.nat(), fc.oneof(fc.jsonValue({ maxDepth: 3 }), hugeNumber), fc.integer({ min: 0, max: 4 }), fc.boolean())
  .map(([v, pathChoice, replacement, op, asIs]) => JSON.stringify(asIs ? v.message : mutate(v.message, pathChoice, replacement, op)));

const envelopeFrame = fc
  .record({ jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('1.0'), fc.constant(2), fc.constant(null)), id: rpcId, method: methodName, params: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(undefined)) }, { requiredKeys: [] })
  .map((o) => JSON.stringify(o));

const responseFrame = fc
  .tuple(rpcId, fc.oneof(fc.record({ result: fc.jsonValue({ maxDepth: 2 }) }), fc.record({ error: fc.record({ code: fc.integer(), message: fc.string() }) })))
  .map(([id, body]) => JSON.stringify({ jsonrpc: '2.0', id, ...body }));

const deepFrame = fc.tuple(fc.integer({ min: 1000, max: 10_000 }), fc.constantFrom('[', '{"a":'), fc.boolean()).map(([n, open, wrap]) => {
  const close = open === '[' ? ']' : '}';
  const deep = `${open.repeat(n)}1${close.repeat(n)}`;
  return wrap ? `{"jsonrpc":"2.0","id":7,"method":"logs.push","params":{"seq_start":1,"entries":[{"seq":1,"ts":"2026-05-16T19:42:50.123Z","severity":"info","message":"deep","source":"custom:x","metadata":{"d":${deep}}}]}}` : deep;
});

const randomText = fc.oneof(fc.json({ maxDepth: 4 }), fc.string({ maxLength: 200 }), fc.constant('[]'), fc.constant('[{"jsonrpc":"2.0","id":1,"method":"agent.hello"}]'), fc.constant(''), fc.constant('null'));

const anyFrame = fc.oneof(
  { weight: 4, arbitrary: vectorFrame },
  { weight: 3, arbitrary: envelopeFrame },
  { weight: 2, arbitrary: responseFrame },
  { weight: 2, arbitrary: randomText },
  { weight: 1, arbitrary: deepFrame },
);

// ---- setup ----------------------------------------------------------------------------

beforeAll(async () => {
  requireDist();
  dir = tempDir('cortex-hostile-');
  db = join(dir, 'server.db');
  server = await startServer(db, ['--hello-timeout-ms', String(HELLO_TIMEOUT_MS), '--ping-interval-ms', '1000', '--upgrades-per-minute', '10', '--failed-hellos-before-throttle', '0']); // fuzzed hellos fail on purpose (throttle: trust-edges.test.ts)
  // five at once
  const all = await Promise.all(HOSTS.map((host) => issueAgentAsync(db, host)));
  for (const [i, h] of all.entries()) issued.set(HOSTS[i]!, h);
  goodHost = issuedHost('well-behaved');
  const stateDir = join(dir, 'good');
  await enroll(server.url, goodHost, stateDir);
  good = startAgentRunner({ stateDir, total: GOOD_TOTAL, rate: FULL ? 1000 : 400, chunk: 20, pingWatchdogMs: 5000, backoffBaseMs: 100, backoffCapMs: 1000 });
  await good.waitFor((e) => e.ev === 'state' && e.to === 'Active', 20_000);
  // idle RSS: after start-up and the first session, before any hostile input
  await good.waitFor((e) => e.ev === 'progress' && (e['acked'] as number) > 0, 10_000);
  idleRss = rssBytes(server.pid);
  peakRss = idleRss;
  sampler = setInterval(() => (peakRss = Math.max(peakRss, rssBytes(server.pid))), 100);
}, 60_000);

afterAll(async () => {
  clearInterval(sampler);
  try {
    if (server && server.child.exitCode === null) {
      // everything the good agent had acked is there exactly once despite everything
      await good.kill('SIGTERM');
      const acked = readBufferSnapshot(join(dir, 'good', 'buffer.db')).stats.ackedSeq;
      const metrics = await fetch(`${server.http}/metrics`).then((r) => r.text()).catch(() => '');
      captured.push(metrics);
      await server.stop();
      expect(acked).toBeGreaterThan(1000);
      const r = checkExactlyOnce(db, goodHost.host_id, acked);
      recordFigure('hostile_server', { fuzz_cases: fuzzCases, idle_rss_mib: +(idleRss / MiB).toFixed(1), peak_rss_mib: +(peakRss / MiB).toFixed(1), bound_mib: +((2 * idleRss + 50 * MiB) / MiB).toFixed(1), good_agent: r });
      expect(r).toMatchObject({ missing: 0, duplicates: 0, mismatched: 0 });
    }
  } finally {
    await good?.kill('SIGKILL');
    await server?.kill();
    cleanupTempDirs();
  }
}, 180_000);

// ---- properties -----------------------------------------------------------------------

describe('server under hostile input', () => {
  it(`pre-hello: ${RUNS} fuzzed first frames get a contract error code and a contract close code`, async () => {
    await whileIngestContinues(async () => {
      await fc.assert(
        fc.asyncProperty(anyFrame, async (frame) => {
          fuzzCases++;
          const ws = await RawWs.connect(server.port);
          expect(ws.status).toBe(101);
          ws.text(frame);
          const code = await ws.closed(HELLO_TIMEOUT_MS + 3000);
          ws.destroy();
          for (const c of errorCodes(ws)) expect(ERROR_CODES.has(c), `error code ${c}`).toBe(true);
          expect(code, `no close frame for ${frame.slice(0, 120)}`).not.toBeNull();
          expect(CLOSE_CODES.has(code!), `close code ${code}`).toBe(true);
          // a first frame that is not an accepted hello never leaves the socket open and is
          // never met with the 4000 of a silent peer: 4001 (after -32700/-32600/-32601/
          // -32000/-32001/-32003/-32602), or 1009 past the pre-hello limits (1 KiB for
          // anything but a hello frame, 64 KiB for the hello frame)
          const bytes = Buffer.byteLength(frame) + 14;
          if (bytes > LIMITS.max_hello_frame_bytes + 14) expect(code).toBe(1009);
          else if (bytes <= LIMITS.pre_hello_bytes) {
            expect(code).toBe(4001);
            // at most one answer (a notification is never answered, JSON-RPC 2.0)
            expect(errorCodes(ws).length).toBeLessThanOrEqual(1);
          } else expect([4001, 1009]).toContain(code);
        }),
        { numRuns: RUNS },
      );
    });
    await assertHealthy();
  }, FULL ? 600_000 : 120_000);

  it(`authenticated: ${RUNS} fuzzed frames are answered with contract codes (requests) or dropped (the rest); the session survives`, async () => {
    const host = issuedHost('fuzz-session');
    const h = { host_id: host.host_id, token: host.token };
    let ws = await authed(h);
    let barrier = 0;
    let reconnects = 0;
    await whileIngestContinues(async () => {
      await fc.assert(
        fc.asyncProperty(anyFrame, async (frame) => {
          fuzzCases++;
          if (!ws.open) {
            reconnects++;
            ws = await authed(h);
          }
          const before = ws.frames.length;
          const sentAt = ws.frames.length;
          ws.text(frame);
          // a valid request after it: once it is answered, the fuzz frame was handled
          const id = `barrier-${++barrier}`;
          ws.text(JSON.stringify({ jsonrpc: '2.0', id, method: 'metrics.push', params: { ts: new Date().toISOString(), samples: [{ name: 'fuzz', value: 1 }] } }));
          await ws.until(() => ws.messages().some((m) => (m as { id?: unknown }).id === id) || !ws.open, 5000);
          const answered = ws.messages().some((m) => (m as { id?: unknown }).id === id);
          const fresh = ws.frames.slice(before);
          for (const f of fresh) {
            if (f.opcode !== 1) continue;
            const m = JSON.parse(f.payload.toString()) as { error?: { code: number } };
            if (m.error) expect(ERROR_CODES.has(m.error.code), `error code ${m.error.code}`).toBe(true);
          }
          if (!answered) {
            // the only reasons to end an authenticated session on a text frame: oversize
            expect(ws.closeCode === null || CLOSE_CODES.has(ws.closeCode)).toBe(true);
            expect(Buffer.byteLength(frame) > LIMITS.max_frame_bytes, `session ended (${ws.closeCode}) on ${frame.slice(0, 200)}`).toBe(true);
          }
          // the server answers a request with an id it can read exactly once
          const parsed = (() => {
            try {
              return JSON.parse(frame) as unknown;
            } catch {
              return undefined;
            }
          })();
          if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
            const p = parsed as { id?: unknown; method?: unknown };
            if ((typeof p.id === 'number' || typeof p.id === 'string') && typeof p.method === 'string' && ws.open) {
              // logs.push answers wait for the K/T flush (up to 200 ms), later than the barrier
              const answeredAfter = () =>
                ws.frames.slice(sentAt).some((f) => {
                  try {
                    if (f.opcode !== 1) return false;
                    const m = JSON.parse(f.payload.toString()) as { id?: unknown; error?: unknown };
                    // an id the contract does not accept (C4: integer or string) is answered with id null
                    return m.id === p.id || (m.id === null && m.error !== undefined);
                  } catch {
                    return false;
                  }
                });
              await ws.until(() => answeredAfter() || !ws.open, 3000);
              if (ws.open) expect(answeredAfter(), `no answer to ${frame.slice(0, 200)}`).toBe(true);
            }
          }
        }),
        { numRuns: RUNS },
      );
    });
    ws.destroy();
    recordFigure('hostile_session', { cases: RUNS, reconnects });
    await assertHealthy();
  }, FULL ? 600_000 : 120_000);

  it('raw frames: binary 1003, invalid UTF-8 1007, oversize 1009, unmasked/reserved 1002, pre-hello overflow 1009, oversize hello 1009', async () => {
    const cases: { name: string; run: (ws: RawWs) => void; expect: number; authed?: boolean }[] = [
      { name: 'binary pre-hello', run: (ws) => ws.send(2, Buffer.from([1, 2, 3])), expect: 1003 },
      { name: 'binary after hello', run: (ws) => ws.send(2, Buffer.from('{"jsonrpc":"2.0"}')), expect: 1003, authed: true },
      { name: 'invalid utf-8 pre-hello', run: (ws) => ws.send(1, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), expect: 1007 },
      { name: 'invalid utf-8 after hello', run: (ws) => ws.send(1, Buffer.from([0x22, 0xc3, 0x28, 0x22])), expect: 1007, authed: true },
      { name: 'declared 2 MiB frame', run: (ws) => ws.send(1, Buffer.from('{"a":1}'), { declaredLength: 2 * MiB }), expect: 1009, authed: true },
      { name: 'real 1 MiB + 1 frame', run: (ws) => ws.send(1, Buffer.alloc(MiB + 1, 0x20)), expect: 1009, authed: true },
      { name: 'unmasked frame', run: (ws) => ws.send(1, '{}', { mask: false }), expect: 1002 },
      { name: 'reserved opcode 3', run: (ws) => ws.send(3, 'x'), expect: 1002 },
      { name: 'rsv bits set', run: (ws) => ws.send(1, '{}', { rsv: 4 }), expect: 1002 },
      { name: '1 KiB+ of pings before hello', run: (ws) => { for (let i = 0; i < 12; i++) ws.send(9, Buffer.alloc(100, 1)); }, expect: 1009 },
      // an unfinished fragmented message may still be the hello: bounded by 64 KiB + 1 KiB
      { name: '65 KiB+ of fragments before hello', run: (ws) => { ws.send(1, Buffer.alloc(1000, 0x20), { fin: false }); for (let i = 0; i < 70; i++) ws.send(0, Buffer.alloc(1000, 0x20), { fin: false }); }, expect: 1009 },
      { name: 'a complete non-hello frame over 1 KiB before hello', run: (ws) => ws.text(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'logs.push', params: { pad: 'p'.repeat(1100) } })), expect: 1009 },
      { name: 'hello frame over 64 KiB', run: (ws) => ws.text(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'agent.hello', params: { ...helloParams(goodHost.host_id, 'x'.repeat(40)), hostname: 'h'.repeat(70_000) } })), expect: 1009 },
    ];
    const host = issuedHost('raw-frames');
    const h = { host_id: host.host_id, token: host.token };
    const got: Record<string, number | null> = {};
    await whileIngestContinues(async () => {
      for (const c of cases) {
        fuzzCases++;
        const ws = c.authed ? await authed(h) : await RawWs.connect(server.port);
        c.run(ws);
        got[c.name] = await ws.closed(5000);
        ws.destroy();
      }
    });
    for (const c of cases) expect(got[c.name], c.name).toBe(c.expect);
    await assertHealthy();
  }, 60_000);

  it('many connections that never say hello are closed with 4000 at the hello timer; slowloris is bounded', async () => {
    const SILENT = FULL ? 500 : 150;
    const t0 = Date.now();
    const silent = await Promise.all(Array.from({ length: SILENT }, () => RawWs.connect(server.port)));
    // slow senders: a hello trickled one byte per 200 ms (never completes in time)
    const hello = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'agent.hello', params: helloParams(goodHost.host_id, 'y'.repeat(40)) }));
    // (no pongs from these: a pong written between trickled bytes would corrupt the frame)
    const slow = await Promise.all(Array.from({ length: 20 }, () => RawWs.connect(server.port, { autoPong: false })));
    const frame = encodeFrame(1, hello);
    let pos = 0;
    const trickle = setInterval(() => {
      for (const s of slow) if (s.open) s.writeRaw(frame.subarray(pos, pos + 1));
      pos++;
    }, 200);
    // slowloris before the upgrade: header bytes trickled (the HTTP server's own header timeout bounds it)
    const preUpgrade = Array.from({ length: 20 }, () => RawWs.connect(server.port, { trickleBytes: 1, trickleMs: 300 }).catch(() => null));
    fuzzCases += SILENT + 40;
    await whileIngestContinues(async () => {
      const codes = await Promise.all([...silent, ...slow].map((ws) => ws.closed(HELLO_TIMEOUT_MS + 5000)));
      const elapsed = Date.now() - t0;
      clearInterval(trickle);
      for (const c of codes) expect(c).toBe(4000);
      expect(elapsed).toBeLessThan(HELLO_TIMEOUT_MS + 5000);
      expect(await healthz(server.http)).toBe(200);
    });
    for (const ws of [...silent, ...slow]) ws.destroy();
    void Promise.all(preUpgrade).then((l) => l.forEach((w) => w?.destroy()));
    await assertHealthy();
    recordFigure('hostile_silent', { silent: SILENT, slow_hello: 20, slow_upgrade: 20, rss_now_mib: +(rssBytes(server.pid) / MiB).toFixed(1) });
  }, 60_000);

  it('a flood of upgrades from one address (X-Forwarded-For via trusted loopback): 10 per minute, then 429', async () => {
    const FLOOD = FULL ? 200 : 40;
    const statuses: number[] = [];
    await whileIngestContinues(async () => {
      for (let i = 0; i < FLOOD; i++) {
        const ws = await RawWs.connect(server.port, { headers: { 'X-Forwarded-For': '203.0.113.77' } });
        statuses.push(ws.status);
        ws.destroy();
      }
    });
    fuzzCases += FLOOD;
    expect(statuses.filter((s) => s === 101).length).toBe(10);
    expect(statuses.filter((s) => s === 429).length).toBe(FLOOD - 10);
    // another address is not affected
    const other = await RawWs.connect(server.port, { headers: { 'X-Forwarded-For': '198.51.100.1' } });
    expect(other.status).toBe(101);
    other.destroy();
    await assertHealthy();
  }, 60_000);

  it('an authenticated peer that sends without reading: the server stops reading it, holds ~1 MiB of answers, not its flood, and closes it at the pong limit', async () => {
    const host = issuedHost('never-reads');
    const ws = await authed({ host_id: host.host_id, token: host.token });
    ws.socket.pause(); // reads nothing the server sends from here on
    // Tiny malformed frames: each one (7 bytes) makes the server answer -32700 (~100 bytes).
    const x = encodeFrame(1, Buffer.from('x'));
    const chunk = Buffer.concat(Array.from({ length: 10_000 }, () => x));
    const MAX_CHUNKS = 300; // 3 million frames: ~300 MB of answers if the server read them all
    let chunks = 0;
    let stalled = false;
    const closedLog = server.waitForLog((r) => r['host_id'] === host.host_id && r['msg'] === 'agent disconnected', 30_000);
    const heldLog = server.waitForLog((r) => r['host_id'] === host.host_id && String(r['msg']).startsWith('agent does not read'), 30_000);
    await whileIngestContinues(async () => {
      while (chunks < MAX_CHUNKS && !stalled && !ws.socket.destroyed) {
        chunks++;
        if (ws.socket.write(chunk)) continue;
        // the client's own send buffer filled: does the server still take its bytes?
        stalled = !(await new Promise<boolean>((resolve) => {
          const t = setTimeout(() => resolve(false), 3000);
          ws.socket.once('drain', () => (clearTimeout(t), resolve(true)));
        }));
      }
    });
    fuzzCases += chunks * 10_000;
    expect(stalled, `the server read all ${chunks} chunks (${chunks * 10_000} frames)`).toBe(true);
    expect(chunks).toBeLessThan(MAX_CHUNKS);
    const held = await heldLog;
    expect(held['queued_bytes'] as number).toBeGreaterThan(1024 * 1024);
    // the pong sweep (every 1 s here, 3 missed) ends the session; the good agent carried on
    const closed = await closedLog;
    expect(String(closed['reason'])).toContain('1011');
    ws.destroy();
    const metrics = await fetch(`${server.http}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^cortex_agent_reads_held_total [1-9]/m);
    recordFigure('hostile_never_reads', { frames_taken: chunks * 10_000, rss_now_mib: +(rssBytes(server.pid) / MiB).toFixed(1) });
    await assertHealthy();
  }, 60_000);

  it('metrics.push sent without waiting for the answers: at most 4 stored at once, the rest answered -32020 at once; every request answered', async () => {
    const host = issuedHost('metrics-flood');
    const ws = await authed({ host_id: host.host_id, token: host.token });
    const samples = Array.from({ length: 100 }, (_, i) => ({ name: `flood_${i}`, value: i, labels: { k: 'v' } }));
    const N = 5000;
    await whileIngestContinues(async () => {
      for (let i = 0; i < N; i++) ws.text(JSON.stringify({ jsonrpc: '2.0', id: `mp-${i}`, method: 'metrics.push', params: { ts: new Date().toISOString(), samples } }));
      await ws.until(() => ws.messages().filter((m) => String((m as { id?: unknown }).id).startsWith('mp-')).length === N || !ws.open, 30_000);
    });
    fuzzCases += N;
    const answers = ws.messages().filter((m) => String((m as { id?: unknown }).id).startsWith('mp-')) as { result?: { accepted: number }; error?: { code: number; data?: { retry_after_ms?: number } } }[];
    expect(answers, `answers to ${N} metrics.push (session open: ${ws.open}, close ${ws.closeCode} ${ws.closeReason})`).toHaveLength(N);
    const refused = answers.filter((a) => a.error?.code === -32020);
    const stored = answers.filter((a) => a.result?.accepted === 100);
    expect(refused.length + stored.length).toBe(N);
    expect(refused.length).toBeGreaterThan(N / 2);
    expect(stored.length).toBeGreaterThan(0);
    expect(refused[0]!.error!.data).toEqual({ retry_after_ms: 1000 });
    const metrics = await fetch(`${server.http}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(new RegExp(`^cortex_metrics_push_refused_total ${refused.length}$`, 'm'));
    ws.destroy();
    recordFigure('hostile_metrics_flood', { sent: N, stored: stored.length, refused: refused.length, rss_now_mib: +(rssBytes(server.pid) / MiB).toFixed(1) });
    await assertHealthy();
  }, 60_000);

  it('server RSS stayed under 2 × idle + 50 MiB; no token in any output', async () => {
    await assertHealthy();
    expect(peakRss).toBeGreaterThan(0);
    expect(peakRss, `peak ${(peakRss / MiB).toFixed(1)} MiB, idle ${(idleRss / MiB).toFixed(1)} MiB`).toBeLessThan(2 * idleRss + 50 * MiB);
    const metrics = await fetch(`${server.http}/metrics`).then((r) => r.text());
    captured.push(metrics, server.stderr(), good.stderr());
    assertNoTokenLeaks();
  });
});
