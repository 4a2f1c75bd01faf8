// A rotated token whose session closes while it is still being written. CI caught the agent
// (agent-chaos, seed 5) sending the next hello with the old token while the write of the
// rotated one was in flight, and switching to the rotated token a session later: against a
// server that rotates again on that hello, the late write would leave a stale token on disk.
// The agent now waits for a pending token write before it reads the token for a hello, and
// token file operations run one at a time, in order.
import { expect, it, vi } from 'vitest';
import { readToken } from '../../agent/token-store.js';
import { ROTATED, TOKEN, makeAgent, stopAfterEach } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';

const gate = vi.hoisted(() => ({ held: null as Promise<void> | null }));
vi.mock('../../agent/token-store.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../agent/token-store.js')>();
  return {
    ...real,
    // Writes of any token but the enrollment one wait for the test to open the gate.
    writeToken: async (dir: string, token: string) => {
      if (token !== TOKEN && gate.held !== null) await gate.held;
      return real.writeToken(dir, token);
    },
  };
});

const { agents, servers } = stopAfterEach();

it('a hello never carries the old token while a rotated one is being persisted', async () => {
  let open!: () => void;
  gate.held = new Promise<void>((resolve) => (open = resolve));
  const s = await FakeServer.start();
  servers.push(s);
  // First hello: rotate, then drop the socket right behind the HelloResult.
  s.scriptNextHello((p, session) => {
    setTimeout(() => session.ws.terminate(), 0);
    return { ...s.defaultHello(p), rotated_token: ROTATED };
  });
  const h = await makeAgent(s.url, { backoff: { baseMs: 2, capMs: 5, random: () => 0.5 } });
  agents.push(h.agent);
  let connecting = 0;
  let authenticating = 0;
  let secondConnect!: () => void;
  const secondConnectSeen = new Promise<void>((resolve) => (secondConnect = resolve));
  let secondAuth!: () => void;
  const secondAuthSeen = new Promise<void>((resolve) => (secondAuth = resolve));
  h.agent.on('state', (t: { to: string }) => {
    if (t.to === 'Connecting' && ++connecting === 2) secondConnect();
    if (t.to === 'Authenticating' && ++authenticating === 2) secondAuth();
  });
  h.agent.start();
  await secondConnectSeen; // the first session is gone, its token write still held
  // The agent must not get as far as a hello while the write is pending: give it a
  // generous moment to (wrongly) do so, then let the write finish.
  const wentOn = await Promise.race([secondAuthSeen.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 300))]);
  open();
  gate.held = null;
  await h.agent.waitForState('Active');
  const hellos = s.sessions.filter((x) => x.hello !== null).map((x) => x.hello!.token);
  expect(hellos[0]).toBe(TOKEN);
  expect(hellos[1], 'the second hello carries the rotated token').toBe(ROTATED);
  expect(wentOn, 'no second hello before the rotated token was on disk').toBe(false);
  expect(await readToken(h.dir)).toBe(ROTATED);
});
