// Reaching the server through an HTTP proxy (DECISIONS F13): HTTP CONNECT, TLS to the server
// inside the tunnel, agent.json `proxy` or the environment (HTTPS_PROXY, NO_PROXY), a proxy
// that wants credentials or refuses said as such, loopback servers never proxied.
//
// The server's host name, logs.cortex.test, resolves nowhere: only the test proxy knows it
// (it sends every tunnel to 127.0.0.1), so an agent that reaches the server went through it.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyFor, proxySettingProblem, redactProxy } from '../../agent/proxy.js';
import { bundleChild } from './fixtures/bundle.js';
import { TOKEN, cleanupDirs, makeAgent, selfSignedCert, tempDir } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';

const HOST = 'logs.cortex.test';

let cli = '';
beforeAll(async () => {
  cli = await bundleChild(new URL('../../agent/cli.ts', import.meta.url).pathname, tempDir(), 'cli');
}, 60_000);
afterAll(cleanupDirs);


interface TestProxy {
  url: string;
  /** The CONNECT targets asked for, in order. */
  targets: string[];
  /** The Proxy-Authorization headers seen. */
  auth: (string | undefined)[];
  close(): Promise<void>;
}

/** A CONNECT proxy: every tunnel goes to 127.0.0.1 at the asked port; `basic` ("user:password") makes it answer 407 without those. */
async function startProxy(basic?: string): Promise<TestProxy> {
  const targets: string[] = [];
  const auth: (string | undefined)[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    targets.push(req.url ?? '');
    auth.push(req.headers['proxy-authorization']);
    if (basic !== undefined && req.headers['proxy-authorization'] !== `Basic ${Buffer.from(basic).toString('base64')}`) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const port = Number((req.url ?? '').split(':').pop());
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    targets,
    auth,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function tlsServer(): Promise<{ server: FakeServer; url: string; certFile: string }> {
  const tls = selfSignedCert(HOST);
  const server = await FakeServer.start({ tls });
  return { server, url: server.url.replace('127.0.0.1', HOST), certFile: tls.certFile };
}

describe('through an HTTP proxy', () => {
  it('tunnels wss:// with CONNECT (TLS to the server checked inside it) and reaches Active', async () => {
    const { server, url, certFile } = await tlsServer();
    const proxy = await startProxy();
    try {
      const { agent, logs } = await makeAgent(url, { allowInsecure: false, caFile: certFile, proxy: proxy.url });
      agent.start();
      await agent.waitForState('Active');
      expect(proxy.targets).toEqual([`${HOST}:${new URL(url).port}`]);
      expect(agent.status().proxy).toBe(proxy.url);
      await agent.stop();
      expect(logs.raw.join('')).not.toContain(TOKEN);
    } finally {
      await proxy.close();
      await server.close();
    }
  });

  it('a proxy that wants credentials is said as such (407), with what to do; with them in the URL it works, and the password is never written', async () => {
    const { server, url, certFile } = await tlsServer();
    const proxy = await startProxy('cortex:s3cr3t-pw');
    try {
      const denied = await makeAgent(url, { allowInsecure: false, caFile: certFile, proxy: proxy.url });
      denied.agent.start();
      await denied.agent.waitForState('Reconnecting');
      expect(denied.agent.status().last_error).toMatch(
        new RegExp(`^connect: the proxy http://127\\.0\\.0\\.1:\\d+ refused the tunnel to ${HOST.replace(/\./g, '\\.')}:\\d+: HTTP 407 Proxy Authentication Required — it wants credentials: give them in the proxy URL`),
      );
      await denied.agent.stop();
      const withPassword = proxy.url.replace('http://', 'http://cortex:s3cr3t-pw@');
      const allowed = await makeAgent(url, { allowInsecure: false, caFile: certFile, proxy: withPassword });
      allowed.agent.start();
      await allowed.agent.waitForState('Active');
      expect(proxy.auth.at(-1)).toBe(`Basic ${Buffer.from('cortex:s3cr3t-pw').toString('base64')}`);
      expect(allowed.agent.status().proxy).toBe(proxy.url.replace('http://', 'http://***@'));
      await allowed.agent.stop();
      for (const h of [denied, allowed]) expect(h.logs.raw.join('')).not.toContain('s3cr3t-pw');
      // a proxy that is not there: the message names it (without the password)
      await proxy.close();
      const gone = await makeAgent(url, { allowInsecure: false, caFile: certFile, proxy: withPassword });
      gone.agent.start();
      await gone.agent.waitForState('Reconnecting');
      expect(gone.agent.status().last_error).toMatch(/\(through the proxy http:\/\/\*\*\*@127\.0\.0\.1:\d+\): connect ECONNREFUSED/);
      expect(gone.logs.raw.join('')).not.toContain('s3cr3t-pw');
      await gone.agent.stop();
    } finally {
      await proxy.close().catch(() => undefined);
      await server.close();
    }
  });

  it('a server on this machine (loopback) is reached directly, whatever proxy is set', async () => {
    const server = await FakeServer.start();
    const proxy = await startProxy();
    try {
      const { agent } = await makeAgent(server.url, { proxy: proxy.url });
      agent.start();
      await agent.waitForState('Active');
      expect(proxy.targets).toEqual([]);
      expect(agent.status().proxy).toBeNull();
      await agent.stop();
    } finally {
      await proxy.close();
      await server.close();
    }
  });

  it('cortex-agent enroll and run take HTTPS_PROXY from the environment; agent.json "proxy": null goes direct, for run and for enroll', async () => {
    const { server, url, certFile } = await tlsServer();
    const proxy = await startProxy();
    try {
      const dir = tempDir();
      const env = { ...process.env, HTTPS_PROXY: proxy.url, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };
      const run = (args: string[]) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
          let stderr = '';
          child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
          child.on('exit', (code) => resolve({ code, stderr }));
        });
      const enrolled = await run(['enroll', '--server', url, '--token', TOKEN, '--host-id', randomUUID(), '--state-dir', dir, '--ca', certFile]);
      expect(enrolled.code, enrolled.stderr).toBe(0);
      expect(proxy.targets).toEqual([`${HOST}:${new URL(url).port}`]);
      // run through it: status names the proxy in use
      const proxied = spawn(process.execPath, [cli, 'run', '--state-dir', dir], { stdio: ['ignore', 'ignore', 'ignore'], env });
      const proxiedExit = new Promise<number | null>((resolve) => proxied.on('exit', (code) => resolve(code)));
      let shown: { state?: string; proxy?: string | null } = {};
      for (let i = 0; i < 200 && shown.state !== 'Active'; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const st = spawnSync(process.execPath, [cli, 'status', '--state-dir', dir, '--json'], { encoding: 'utf8' });
        shown = st.status === 0 ? (JSON.parse(st.stdout) as typeof shown) : {};
      }
      expect(shown).toMatchObject({ state: 'Active', proxy: proxy.url });
      const text = spawnSync(process.execPath, [cli, 'status', '--state-dir', dir], { encoding: 'utf8' }).stdout;
      expect(text).toContain(`proxy:        ${proxy.url} (agent.json proxy, or HTTPS_PROXY`);
      proxied.kill('SIGTERM');
      expect(await proxiedExit).toBe(0);
      expect(proxy.targets).toHaveLength(2);
      // agent.json "proxy": null — no proxy, whatever the environment says: the name resolves nowhere
      const path = join(dir, 'agent.json');
      writeFileSync(path, JSON.stringify({ ...(JSON.parse(readFileSync(path, 'utf8')) as object), proxy: null }));
      const child = spawn(process.execPath, [cli, 'run', '--state-dir', dir, '--backoff-base-ms', '50'], { stdio: ['ignore', 'ignore', 'pipe'], env });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      for (let i = 0; i < 200 && !stderr.includes('connection attempt failed'); i++) await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stderr).toMatch(new RegExp(`"msg":"connection attempt failed"`));
      expect(stderr).not.toContain('through the proxy');
      expect(proxy.targets).toHaveLength(2);
      // enrolling the folder again uses its agent.json's proxy too (kept): null, so no tunnel, whatever the environment says
      const again = await run(['enroll', '--server', url, '--token', TOKEN, '--host-id', readFileSync(join(dir, 'host_id'), 'utf8').trim(), '--state-dir', dir, '--ca', certFile]);
      expect(again.code).toBe(1);
      expect(again.stderr).not.toContain('through the proxy');
      expect(proxy.targets).toHaveLength(2);
      expect((JSON.parse(readFileSync(path, 'utf8')) as { proxy?: unknown }).proxy).toBeNull();
    } finally {
      await proxy.close();
      await server.close();
    }
  });
});

describe('which proxy', () => {
  it('agent.json first (null: none), else HTTPS_PROXY for wss:// and HTTP_PROXY for ws://, NO_PROXY honoured', async () => {
    const keys = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy'];
    const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
    try {
      for (const k of keys) delete process.env[k];
      expect(await proxyFor('wss://logs.example.com/ws/agent', undefined)).toBeNull();
      process.env['HTTPS_PROXY'] = 'http://proxy.example:3128';
      process.env['HTTP_PROXY'] = 'http://plain.example:8080';
      expect(await proxyFor('wss://logs.example.com/ws/agent', undefined)).toBe('http://proxy.example:3128');
      expect(await proxyFor('ws://logs.example.com/ws/agent', undefined)).toBe('http://plain.example:8080');
      expect(await proxyFor('wss://logs.example.com/ws/agent', null)).toBeNull();
      expect(await proxyFor('wss://logs.example.com/ws/agent', 'http://other:1')).toBe('http://other:1');
      // a value without a scheme is an http:// proxy, as curl takes it (proxy-from-env would give it the request's https://)
      process.env['HTTPS_PROXY'] = 'proxy.example:3128';
      expect(await proxyFor('wss://logs.example.com/ws/agent', undefined)).toBe('http://proxy.example:3128');
      process.env['HTTPS_PROXY'] = 'http://proxy.example:3128';
      process.env['NO_PROXY'] = '.example.com';
      expect(await proxyFor('wss://logs.example.com/ws/agent', undefined)).toBeNull();
      expect(await proxyFor('wss://logs.example.org/ws/agent', undefined)).toBe('http://proxy.example:3128');
    } finally {
      for (const k of keys) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });

  it('agent.json "proxy" must be an http(s) URL or null; a password is never shown', () => {
    expect(proxySettingProblem(null)).toBeNull();
    expect(proxySettingProblem('http://proxy:3128')).toBeNull();
    expect(proxySettingProblem('socks5://proxy:1080')).toMatch(/must be an http:\/\/ or https:\/\/ URL, not socks5:/);
    expect(proxySettingProblem('http://[proxy')).toMatch(/is not a URL/);
    expect(proxySettingProblem('proxy.example.com:3128')).toBe('proxy "proxy.example.com:3128" needs its scheme: http://proxy.example.com:3128 (or https:// for a proxy spoken to over TLS)');
    expect(proxySettingProblem(3128)).toMatch(/must be an http/);
    expect(redactProxy('http://u:secret@proxy:3128')).toBe('http://***@proxy:3128');
    expect(redactProxy('http://proxy:3128')).toBe('http://proxy:3128');
  });
});
