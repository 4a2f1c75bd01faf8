// An agent that knows several servers (agent.json server_urls, `enroll --server` repeated):
// it connects to one that answers, moves to another when its server goes away, and says which
// one it holds. With one URL (a load balancer) nothing changes.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enroll } from '../../agent/enroll.js';
import { createCapturingLogger } from '../../agent/log.js';
import { readAgentSettings, settingsServerUrls, writeAgentSettings } from '../../agent/state-dir.js';
import { startAgent } from '../../agent/index.js';
import { ROTATED, TOKEN, entries, makeAgent, stopAfterEach, tempDir } from './helpers/agent-harness.js';
import { ErrorCode } from '@cortex/agent-protocol';
import { FakeServer, rpcError } from './helpers/fake-server.js';

const { agents, servers } = stopAfterEach();

/** A ws:// URL on a loopback port where nothing listens (connection refused). */
async function deadUrl(): Promise<string> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return `ws://127.0.0.1:${port}/ws/agent`;
}

async function fake(): Promise<FakeServer> {
  const s = await FakeServer.start();
  servers.push(s);
  return s;
}

describe('agent with several servers', () => {
  it('skips a server that refuses the connection and goes Active on one that answers', async () => {
    const dead = await deadUrl();
    const live = await fake();
    // random just below 1: the shuffle keeps the configured order, so the dead server is tried first
    const { agent } = await makeAgent(dead, { serverUrls: [dead, live.url], random: () => 0.999 });
    agents.push(agent);
    const sawHello = live.next('hello');
    agent.start();
    await sawHello;
    await agent.waitForState('Active');
    expect(agent.status().server_url).toBe(live.url);
    expect(agent.status().server_urls).toEqual([dead, live.url]);
    agent.ingest(entries(5));
    await agent.waitForAck(5);
    expect(live.stored.size).toBe(5);
  });

  it('when its server goes away it reconnects to the other and replays what was not acked', async () => {
    const a = await fake();
    const b = await fake();
    const { agent } = await makeAgent(a.url, { serverUrls: [a.url, b.url] });
    agents.push(agent);
    agent.start();
    await agent.waitForState('Active');
    const first = agent.status().server_url;
    const [held, other] = first === a.url ? [a, b] : [b, a];
    agent.ingest(entries(10, 'before'));
    await agent.waitForAck(10);
    // the held server stops acking, then dies: what it did not ack must reach the other
    held.push = () => new Promise(() => undefined);
    agent.ingest(entries(10, 'during'));
    await held.next('push');
    other.accepted = 10; // one database behind both servers: the other knows seq 1..10
    const hello = other.next('hello');
    await held.close();
    await hello;
    await agent.waitForState('Active');
    expect(agent.status().server_url).toBe(other.url);
    await agent.waitForAck(20);
    expect([...other.stored.keys()].sort((x, y) => x - y)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
  });

  it('a server that refuses the host for good (-32001: another database) does not stop the agent: the other takes it (F12)', async () => {
    const wrong = await fake();
    wrong.hello = () => {
      throw rpcError(ErrorCode.AuthFailed, 'AuthFailed');
    };
    const right = await fake();
    // random just below 1: the configured order, so the refusing server is asked first
    const { agent, logs } = await makeAgent(wrong.url, { serverUrls: [wrong.url, right.url], random: () => 0.999 });
    agents.push(agent);
    agent.start();
    await agent.waitForState('Active');
    expect(agent.status().server_url).toBe(right.url);
    expect(wrong.sessions).toHaveLength(1);
    const said = logs.lines.find((r) => String(r['msg']).startsWith(`${wrong.url} refused this host: authentication failed (-32001 AuthFailed)`));
    expect(said).toMatchObject({ level: 'error', server_url: wrong.url, servers_refused: 1, servers: 2 });
    expect(String(said?.['msg'])).toContain('1 of the 2 servers of agent.json refused it; trying the others before stopping');
    agent.ingest(entries(3));
    await agent.waitForAck(3);
    expect(right.stored.size).toBe(3);
    // accepted: the refusal is forgotten, and the agent goes on (no FatalAuth) when its server goes away
    const hello = wrong.next('hello');
    await right.close();
    await hello;
    expect(agent.status().state).not.toBe('FatalAuth');
  });

  it('every server refusing the host is the answer: FatalAuth, naming that all of them did (F12)', async () => {
    const a = await fake();
    const b = await fake();
    for (const s of [a, b]) {
      s.hello = () => {
        throw rpcError(ErrorCode.TokenRotationRequired, 'TokenRotationRequired');
      };
    }
    const { agent } = await makeAgent(a.url, { serverUrls: [a.url, b.url] });
    agents.push(agent);
    agent.start();
    expect(await agent.done).toBe('FatalAuth');
    expect(a.sessions.length + b.sessions.length).toBe(2); // each asked once
    expect(agent.status().last_error).toMatch(/-32005 TokenRotationRequired.*\(every server of agent\.json, 2, refused it\)$/);
  });

  it('a drain (agent.shutdown ServerReload) moves the agent to the other server', async () => {
    const a = await fake();
    const b = await fake();
    const { agent } = await makeAgent(a.url, { serverUrls: [a.url, b.url] });
    agents.push(agent);
    agent.start();
    await agent.waitForState('Active');
    const [held, other] = agent.status().server_url === a.url ? [a, b] : [b, a];
    const hello = other.next('hello');
    await held.current!.client.agentShutdown({ reason: 'ServerReload', drain_seconds: 0 });
    await hello;
    await agent.waitForState('Active');
    expect(agent.status().server_url).toBe(other.url);
  });

  it('startAgent reads server_urls from agent.json; status.json names the server held', async () => {
    const dead = await deadUrl();
    const live = await fake();
    const dir = tempDir();
    const hostId = randomUUID();
    const { writeToken } = await import('../../agent/token-store.js');
    await writeToken(dir, TOKEN);
    const { writeHostId } = await import('../../agent/state-dir.js');
    await writeHostId(dir, hostId);
    await writeAgentSettings(dir, { server_url: dead, server_urls: [dead, live.url], allow_insecure: true });
    const logs = createCapturingLogger('debug');
    const agent = await startAgent({
      stateDir: dir,
      logger: logs.logger,
      sourceFactories: [],
      backoff: { baseMs: 20, capMs: 100 },
      metricsIntervalMs: 0,
      statusIntervalMs: 20,
    });
    agents.push(agent);
    await agent.waitForState('Active');
    expect(agent.status().server_url).toBe(live.url);
    await agent.stop();
    const status = JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8')) as { server_url: string; server_urls: string[] };
    expect(status.server_url).toBe(live.url);
    expect(status.server_urls).toEqual([dead, live.url]);
  });
});

describe('enroll with several servers', () => {
  it('enrolls through the first server that answers and keeps every server in agent.json', async () => {
    const dead = await deadUrl();
    const live = await fake();
    live.rotatedToken = ROTATED;
    const dir = tempDir();
    const hostId = randomUUID();
    const logs = createCapturingLogger('debug');
    const r = await enroll({ serverUrl: dead, serverUrls: [dead, live.url], token: TOKEN, hostId, stateDir: dir, allowInsecure: true, caFile: null, logger: logs.logger });
    expect(r.server_url).toBe(live.url);
    expect(r.server_urls).toEqual([dead, live.url]);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(ROTATED);
    const settings = await readAgentSettings(dir);
    expect(settings).toMatchObject({ server_url: dead, server_urls: [dead, live.url] });
    expect(settingsServerUrls(settings!)).toEqual([dead, live.url]);
    expect(logs.raw.join("")).not.toContain(TOKEN);
  });

  it('enroll passes over a server that refuses the token (another database) and enrolls through the next; all refusing fails naming each (F12)', async () => {
    const wrong = await fake();
    wrong.hello = () => {
      throw rpcError(ErrorCode.AuthFailed, 'AuthFailed');
    };
    const right = await fake();
    right.rotatedToken = ROTATED;
    const dir = tempDir();
    const logs = createCapturingLogger('debug');
    const r = await enroll({ serverUrl: wrong.url, serverUrls: [wrong.url, right.url], token: TOKEN, hostId: randomUUID(), stateDir: dir, allowInsecure: true, caFile: null, logger: logs.logger });
    expect(r.server_url).toBe(right.url);
    expect(wrong.sessions).toHaveLength(1);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(ROTATED);
    expect(logs.lines.find((l) => String(l['msg']).startsWith(`enrollment: ${wrong.url} refused it (authentication failed (-32001 AuthFailed)`))).toMatchObject({ level: 'warn', code: ErrorCode.AuthFailed });
    expect(logs.raw.join('')).not.toContain(TOKEN);

    const other = await fake();
    other.hello = wrong.hello;
    const dir2 = tempDir();
    await expect(
      enroll({ serverUrl: wrong.url, serverUrls: [wrong.url, other.url], token: TOKEN, hostId: randomUUID(), stateDir: dir2, allowInsecure: true, caFile: null, logger: logs.logger }),
    ).rejects.toMatchObject({ code: ErrorCode.AuthFailed, message: expect.stringMatching(new RegExp(`-32001 AuthFailed.*\\(refused by each of ${wrong.url}, ${other.url}\\)$`)) });
    expect(() => readFileSync(join(dir2, 'token'))).toThrow();
  });

  it('fails naming every server when none answers, and writes no token', async () => {
    const d1 = await deadUrl();
    const d2 = await deadUrl();
    const dir = tempDir();
    const logs = createCapturingLogger('debug');
    await expect(
      enroll({ serverUrl: d1, serverUrls: [d1, d2], token: TOKEN, hostId: randomUUID(), stateDir: dir, allowInsecure: true, caFile: null, logger: logs.logger, timeoutMs: 2000 }),
    ).rejects.toThrow(/no server answered: .*;/);
    expect(() => readFileSync(join(dir, 'token'))).toThrow();
    expect(() => readFileSync(join(dir, 'agent.json'))).toThrow();
  });

  it('a hello with no answer in time: the message says to run enroll again with the same token, and what to do if that fails (G16)', async () => {
    const slow = await fake();
    slow.scriptNextHello(() => new Promise<never>(() => undefined)); // the server never answers
    const dir = tempDir();
    const hostId = randomUUID();
    const logs = createCapturingLogger('debug');
    const failed = enroll({ serverUrl: slow.url, serverUrls: [slow.url], token: TOKEN, hostId, stateDir: dir, allowInsecure: true, caFile: null, logger: logs.logger, timeoutMs: 300 });
    await expect(failed).rejects.toThrow(/agent\.hello got no response within 300 ms: the server did not answer in time \(busy\?\); run enroll again with the same token/);
    await expect(failed).rejects.toThrow(`issue a new token on the server (agent issue --host-id ${hostId})`);
    expect(() => readFileSync(join(dir, 'token'))).toThrow();
  });

  it('agent.json with a bad server_urls entry is refused naming the field', async () => {
    const dir = tempDir();
    await expect(writeAgentSettings(dir, { server_url: 'ws://127.0.0.1:1/ws/agent', server_urls: ['http://x/'] })).rejects.toThrow(/server_urls\[0\]/);
    await expect(writeAgentSettings(dir, { server_url: 'ws://127.0.0.1:1/ws/agent', server_urls: [] })).rejects.toThrow(/server_urls must be a non-empty array/);
  });
});
