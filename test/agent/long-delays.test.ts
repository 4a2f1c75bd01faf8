// Delays a server sets beyond what a Node.js timer holds (DECISIONS F11): metrics_interval_secs
// has no maximum in the contract, and neither has a refusal's retry_after_ms. A Node timer over
// 2^31 − 1 ms (24.8 days) fires after 1 ms: metrics_interval_secs 3,000,000 made the agent push
// metrics every millisecond (31,820 metric rows in 5 s, the real programs), and a retry_after_ms
// of 10^10 made its send loop re-arm a 1 ms timer for ever.
import { ErrorCode, type MetricsPushParams } from '@cortex/agent-protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RETRY_AFTER_MAX_MS } from '../../agent/push-pump.js';
import { LongTimer, MAX_TIMER_MS } from '../../agent/timers.js';
import { entries, makeAgent, stopAfterEach } from './helpers/agent-harness.js';
import { FakeServer, rpcError } from './helpers/fake-server.js';
import { until } from '../support/procs.js';

const { agents, servers } = stopAfterEach();

/** Node's TimeoutOverflowWarnings while a test runs (each is a timer Node ran after 1 ms). */
let overflows = 0;
const onWarning = (w: Error) => {
  if (w.name === 'TimeoutOverflowWarning') overflows++;
};
beforeEach(() => {
  overflows = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

async function server(): Promise<FakeServer> {
  const s = await FakeServer.start();
  servers.push(s);
  return s;
}

/** The methods the agent sent in the current session, from the raw frames. */
const sent = (s: FakeServer, method: string): number => (s.current?.frames ?? []).filter((f) => f.includes(`"method":"${method}"`)).length;

describe('a server may set delays longer than a Node.js timer holds', () => {
  it('metrics_interval_secs 3,000,000 (35 days): no metrics.push while heartbeats go on (it pushed every millisecond)', async () => {
    const s = await server();
    s.config = { ...s.config, metrics_interval_secs: 3_000_000 };
    const metrics: MetricsPushParams[] = [];
    const { agent } = await makeAgent(s.url, { metricsIntervalMs: undefined, heartbeatIntervalMs: 100, heartbeatJitterMs: 0, heartbeatMinMs: 0 });
    agents.push(agent);
    agent.on('metrics', (p: MetricsPushParams) => metrics.push(p));
    agent.start();
    await agent.waitForState('Active');
    await until('five heartbeats', () => sent(s, 'agent.heartbeat') >= 5);
    expect(metrics).toHaveLength(0);
    expect(sent(s, 'metrics.push')).toBe(0);
    expect(overflows).toBe(0);
  });

  it('a -32020 with retry_after_ms 10^10: the agent pauses RETRY_AFTER_MAX_MS (300 s), says so, and does not spin', async () => {
    const s = await server();
    s.push = () => {
      throw rpcError(ErrorCode.Backpressure, 'Backpressure', { retry_after_ms: 1e10 });
    };
    const { agent, logs } = await makeAgent(s.url, { heartbeatIntervalMs: 100, heartbeatJitterMs: 0, heartbeatMinMs: 0, window: 1 });
    agents.push(agent);
    agent.start();
    await agent.waitForState('Active');
    agent.ingest(entries(10));
    await until('the refusal logged', () => logs.lines.find((l) => l.msg === 'server asked to slow down'));
    expect(logs.lines.find((l) => l.msg === 'server asked to slow down')).toMatchObject({ retry_after_ms: RETRY_AFTER_MAX_MS, advised_retry_after_ms: 1e10 });
    const heartbeats = sent(s, 'agent.heartbeat');
    await until('five more heartbeats', () => sent(s, 'agent.heartbeat') >= heartbeats + 5);
    expect(s.pushes).toHaveLength(1); // paused: the batch waits for the pause, not resent in a loop
    expect(overflows).toBe(0);
  });

  it('LongTimer waits past MAX_TIMER_MS in steps and runs its function once', () => {
    vi.useFakeTimers();
    try {
      const fn = vi.fn();
      const timer = new LongTimer(() => Date.now());
      timer.start(MAX_TIMER_MS * 2 + 5_000, fn);
      vi.advanceTimersByTime(MAX_TIMER_MS);
      expect(fn).not.toHaveBeenCalled();
      vi.advanceTimersByTime(MAX_TIMER_MS);
      expect(fn).not.toHaveBeenCalled();
      vi.advanceTimersByTime(5_000);
      expect(fn).toHaveBeenCalledTimes(1);
      timer.start(1_000, fn);
      timer.stop();
      vi.advanceTimersByTime(2_000);
      expect(fn).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });
});

