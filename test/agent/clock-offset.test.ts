// The host's clock against the server's (DECISIONS F10): the agent compares the hello's
// server_time with the middle of the hello's round trip, says once when this host is off by
// more than 10 s (lines without their own time carry its clock), once when it is back, and
// `status` shows the offset.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CLOCK_WARN_MS, clockOffsetText } from '../../agent/session.js';
import { makeAgent, stopAfterEach } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';
import { until } from '../support/procs.js';

const { agents, servers } = stopAfterEach();

const helloAt = (s: FakeServer, shiftMs: number) =>
  s.scriptNextHello((p) => ({ ...s.defaultHello(p), server_time: new Date(Date.now() + shiftMs).toISOString(), session_id: randomUUID() }));

describe("the host's clock against the server's (DECISIONS F10)", () => {
  it('a host 90 s ahead is said once, with what to do; back in step is said once; status carries the offset', async () => {
    const s = await FakeServer.start();
    servers.push(s);
    helloAt(s, -90_000);
    const { agent, logs } = await makeAgent(s.url);
    agents.push(agent);
    agent.start();
    await until('active', () => agent.state === 'Active');
    const warned = logs.lines.filter((l) => typeof l['msg'] === 'string' && l['msg'].startsWith("this host's clock is"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 'warn' });
    expect(warned[0]!['msg']).toBe(
      "this host's clock is 90 s ahead of the server's: lines without a time of their own are stamped with this clock, and sort wrongly against other hosts' — set it right (timedatectl status; timedatectl set-ntp true)",
    );
    const offset = agent.status().clock_offset_ms!;
    expect(offset).toBeLessThan(-89_000);
    expect(offset).toBeGreaterThan(-91_000);

    // Still off at the next hello: not said again. Then in step: said once.
    helloAt(s, -95_000);
    s.current!.ws.terminate();
    await until('second session', () => s.sessions.length === 2 && agent.state === 'Active');
    helloAt(s, 0);
    s.current!.ws.terminate();
    await until('third session', () => s.sessions.length === 3 && agent.state === 'Active');
    expect(logs.lines.filter((l) => typeof l['msg'] === 'string' && l['msg'].startsWith("this host's clock is")).map((l) => l['level'])).toEqual(['warn', 'info']);
    expect(logs.lines.some((l) => l['msg'] === "this host's clock is in step with the server's again")).toBe(true);
    expect(Math.abs(agent.status().clock_offset_ms!)).toBeLessThan(CLOCK_WARN_MS);
  });

  it('a clock within 10 s is not said', async () => {
    const s = await FakeServer.start();
    servers.push(s);
    helloAt(s, 5_000);
    const { agent, logs } = await makeAgent(s.url);
    agents.push(agent);
    agent.start();
    await until('active', () => agent.state === 'Active');
    expect(logs.lines.some((l) => typeof l['msg'] === 'string' && l['msg'].startsWith("this host's clock"))).toBe(false);
    expect(agent.status().clock_offset_ms).toBeGreaterThan(4_000);
  });

  it('reads the offset as people say it', () => {
    expect(clockOffsetText(42_000)).toBe('42 s behind');
    expect(clockOffsetText(-42_000)).toBe('42 s ahead of');
    expect(clockOffsetText(600_000)).toBe('10 min behind');
    expect(clockOffsetText(-9_000_000)).toBe('2.5 h ahead of');
  });
});
