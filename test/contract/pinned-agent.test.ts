// Agent-side rules of the seed that nothing pinned on main (issue 15). Rule ids: contract/rules.json.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { LIMITS } from '@cortex/agent-protocol';
import { Backoff } from '../../agent/backoff.js';
import { DEFAULT_CONFIG, heartbeatDelayMs } from '../../agent/agent.js';
import { MIN_RATE_ENTRIES_PER_S, SendRate } from '../../agent/send-rate.js';
import { entries, makeAgent, stopAfterEach } from '../agent/helpers/agent-harness.js';
import { FakeServer, rpcError } from '../agent/helpers/fake-server.js';
import { until } from '../support/procs.js';

const { agents, servers } = stopAfterEach();

describe('R-DEF-02 agent defaults: backoff base/cap/reset, ping watchdog, heartbeat jitter, recovery, retry pause', () => {
  it('with no pingWatchdogMs the agent arms a ping watchdog of ping_interval × missed_pongs (20 s × 3 = 60 s) once Active, and re-arms it on each server ping', async () => {
    expect([LIMITS.ping_interval_ms, LIMITS.missed_pongs]).toEqual([20_000, 3]);
    const s = await FakeServer.start();
    servers.push(s);
    const h = await makeAgent(s.url);
    agents.push(h.agent);
    // Every timer the agent arms, with its delay (the watchdog is the one whose callback ends the connection).
    const armed: { ms: number; timer: NodeJS.Timeout }[] = [];
    const realSetTimeout = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number, ...rest: unknown[]) => {
      const timer = realSetTimeout(fn, ms, ...rest) as unknown as NodeJS.Timeout;
      armed.push({ ms: ms ?? 0, timer });
      return timer;
    }) as typeof setTimeout);
    try {
      await h.agent.start();
      await h.agent.waitForState('Active', 5000);
      const watchdogs = () => armed.filter((a) => a.ms === LIMITS.ping_interval_ms * LIMITS.missed_pongs);
      expect(watchdogs()).toHaveLength(1);
      // the seed's server pings every 20 s; each ping refreshes the same timer (no second one)
      const before = watchdogs()[0]!.timer;
      const refreshed = vi.spyOn(before, 'refresh');
      s.current!.ws.ping();
      await vi.waitFor(() => expect(refreshed).toHaveBeenCalled(), { timeout: 5000 });
      expect(watchdogs()).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('Backoff() with no options is base 1 s, cap 60 s, reset after 60 s Active, as limits.json and the seed say', () => {
    const b = new Backoff();
    expect([b.baseMs, b.capMs, b.resetAfterMs]).toEqual([1000, 60_000, 60_000]);
    expect([b.baseMs, b.capMs, b.resetAfterMs]).toEqual([LIMITS.backoff_base_s * 1000, LIMITS.backoff_cap_s * 1000, LIMITS.backoff_reset_after_active_s * 1000]);
    // full jitter bound: rand(0, min(60, 1 * 2^attempt)) s
    let now = 0;
    const top = new Backoff({ random: () => 0.999999, now: () => now });
    const ceilings = Array.from({ length: 8 }, () => (top.nextDelayMs(), top.ceilingMs()));
    expect(ceilings).toEqual([2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    top.markActive();
    now += 59_999;
    expect(top.attempt).toBeGreaterThan(0);
    now += 1;
    expect(top.attempt).toBe(0);
  });

  it('SendRate() recovers over 10 s; heartbeat jitter ±5 s, never below 1 s; pre-hello config heartbeat 30 s', () => {
    expect(new SendRate().recoveryMs).toBe(10_000);
    expect(LIMITS.backpressure_recovery_ms).toBe(10_000);
    expect(LIMITS.retry_after_default_ms).toBe(1000);
    expect(DEFAULT_CONFIG.heartbeat_interval_secs).toBe(30);
    expect([LIMITS.heartbeat_jitter_s, LIMITS.heartbeat_min_interval_s]).toEqual([5, 1]);
    expect(heartbeatDelayMs(30_000, 5000, 1000, 0)).toBe(25_000);
    expect(heartbeatDelayMs(30_000, 5000, 1000, 1)).toBe(35_000);
    expect(heartbeatDelayMs(5000, 5000, 1000, 0)).toBe(1000);
  });
});

describe('R-BP-03 the agent halves its send rate on -32020/-32030 and recovers', () => {
  it('halving from the observed rate, linear recovery to full over the window, a second error halves again', () => {
    let now = 0;
    const r = new SendRate(() => now);
    expect(r.cap()).toBeNull();
    r.record(1000);
    r.halve();
    expect(r.cap()).toBe(500);
    now = 5000;
    expect(r.cap()).toBe(750);
    r.halve(); // during recovery: half of the current cap
    expect(r.cap()).toBe(375);
    now = 15_000;
    expect(r.cap()).toBeNull(); // recovered: unthrottled
    // never below the floor
    const low = new SendRate(() => 0);
    low.halve();
    expect(low.cap()).toBe(MIN_RATE_ENTRIES_PER_S);
    // the cap turns into a delay before the next batch
    const t2 = 0;
    const d = new SendRate(() => t2, 10_000);
    d.record(200);
    d.halve();
    expect(d.delayFor(100)).toBeGreaterThan(0);
  });

  for (const code of [-32020, -32030] as const) {
    it(`a running agent answered ${code} throttles (status send_rate_cap set) and still delivers everything`, async () => {
      const { h, pushes } = await agentRefusedOnce(code);
      expect(pushes()).toBeGreaterThan(1);
      const cap = h.agent.status().send_rate_cap;
      expect(cap).not.toBeNull();
      expect(cap!).toBeGreaterThanOrEqual(MIN_RATE_ENTRIES_PER_S);
    });
  }
});

/**
 * An Active agent whose first logs.push the fake server refuses with `code` (retry_after_ms 20)
 * and later ones stores, once it has shipped 50 entries: the harness, how many pushes the server
 * saw, and when it refused (the agent was unthrottled before, which is checked).
 */
async function agentRefusedOnce(code: -32020 | -32030): Promise<{ h: Awaited<ReturnType<typeof makeAgent>>; pushes: () => number; refusedAt: number }> {
  const s = await FakeServer.start();
  servers.push(s);
  let pushes = 0;
  let refusedAt: number | undefined;
  s.push = (p) => {
    if (pushes++ === 0) {
      refusedAt = Date.now();
      throw rpcError(code, code === -32020 ? 'Backpressure' : 'QuotaExceeded', { retry_after_ms: 20 });
    }
    return s.store(p);
  };
  const h = await makeAgent(s.url);
  agents.push(h.agent);
  await h.agent.start();
  await h.agent.waitForState('Active', 5000);
  expect(h.agent.status().send_rate_cap).toBeNull();
  h.agent.ingest(entries(50));
  await h.agent.waitForAck(50, 10_000);
  expect(refusedAt).toBeDefined();
  return { h, pushes: () => pushes, refusedAt: refusedAt! };
}

describe('R-BP-03 recovery on a running agent', () => {
  it(`a running agent answered -32020 once: send_rate_cap is set, rises, and is back to null once the ${LIMITS.backpressure_recovery_ms} ms recovery window has passed`, async () => {
    const windowMs = LIMITS.backpressure_recovery_ms;
    const { h, refusedAt } = await agentRefusedOnce(-32020);
    const first = h.agent.status().send_rate_cap;
    expect(first, 'the cap is set after -32020').not.toBeNull();
    expect(first!).toBeGreaterThanOrEqual(MIN_RATE_ENTRIES_PER_S);

    // The cap rises while nothing is refused (linear recovery), then is cleared.
    const rising = await until('the cap to rise above its first value', () => {
      const cap = h.agent.status().send_rate_cap;
      return cap !== null && cap > first! ? cap : false;
    }, windowMs);
    expect(rising).toBeGreaterThan(first!);
    await until('send_rate_cap back to null', () => h.agent.status().send_rate_cap === null, refusedAt + windowMs + 2000 - Date.now(), 100);
    const clearedAfter = Date.now() - refusedAt;
    // not before the window (the agent halved when the answer arrived, after refusedAt), and within 2 s of it
    expect(clearedAfter).toBeGreaterThanOrEqual(windowMs);
    expect(clearedAfter).toBeLessThanOrEqual(windowMs + 2000);
    // and the agent still sends unthrottled afterwards
    h.agent.ingest(entries(20));
    await h.agent.waitForAck(70, 5000);
    expect(h.agent.status().send_rate_cap).toBeNull();
  }, 25_000);
});

describe('R-WIRE-05 no permessage-deflate (agent)', () => {
  it('the agent\'s upgrade request offers no Sec-WebSocket-Extensions', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const srv = http.createServer();
    const got = new Promise<void>((resolve) =>
      srv.on('upgrade', (req, socket) => {
        seen.push(req.headers);
        socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
        resolve();
      }),
    );
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    servers.push({ close: () => new Promise<void>((r) => { srv.closeAllConnections(); srv.close(() => r()); }) });
    const h = await makeAgent(`ws://127.0.0.1:${(srv.address() as AddressInfo).port}/ws/agent`);
    agents.push(h.agent);
    await h.agent.start();
    await got;
    expect(seen[0]!['sec-websocket-protocol']).toBe('cortex.v1');
    expect(seen[0]!['sec-websocket-extensions']).toBeUndefined();
  });
});

describe('R-HB-02 the heartbeat interval is taken from the config', () => {
  it('heartbeat_interval_secs 5 in HelloResult.config: the first heartbeat comes ~5 s after the hello, not the built-in 30 s', async () => {
    const s = await FakeServer.start();
    servers.push(s);
    s.config = { ...s.config, heartbeat_interval_secs: 5 };
    const h = await makeAgent(s.url, { heartbeatIntervalMs: undefined, heartbeatJitterMs: 0 });
    agents.push(h.agent);
    const hello = s.next('hello');
    await h.agent.start();
    await hello;
    const t0 = Date.now();
    await s.next('heartbeat', () => true, 15_000);
    const ms = Date.now() - t0;
    expect(ms).toBeGreaterThanOrEqual(4500);
    expect(ms).toBeLessThan(9000);
  }, 20_000);
});
