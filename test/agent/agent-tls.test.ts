// wss:// with the system CAs plus an optional --ca FILE (a self-signed test CA).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleChild } from './fixtures/bundle.js';
import { TOKEN, cleanupDirs, makeAgent, selfSignedCert, tempDir } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';

let cli = '';
beforeAll(async () => {
  cli = await bundleChild(new URL('../../agent/cli.ts', import.meta.url).pathname, tempDir(), 'cli');
}, 60_000);
afterAll(cleanupDirs);

function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}


describe('wss://', () => {
  it('connects with --ca trusting the server certificate, and refuses an untrusted one', async () => {
    const tls = selfSignedCert();
    const s = await FakeServer.start({ tls });
    try {
      const untrusted = await makeAgent(s.url, { allowInsecure: false });
      untrusted.agent.start();
      await untrusted.agent.waitForState('Reconnecting');
      expect(untrusted.agent.status().last_error).toMatch(/certificate/i);
      await untrusted.agent.stop();
      const trusted = await makeAgent(s.url, { allowInsecure: false, caFile: tls.certFile });
      trusted.agent.start();
      await trusted.agent.waitForState('Active');
      await trusted.agent.stop();
    } finally {
      await s.close();
    }
  });
});

describe('cortex-agent enroll against wss:// it cannot trust', () => {
  it('says what to do: give --ca, give the right CA, or use a host name the certificate lists', async () => {
    const tls = selfSignedCert();
    const other = selfSignedCert();
    const s = await FakeServer.start({ tls });
    try {
      const tokenFile = join(tempDir(), 'enroll-token');
      writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
      const enroll = (url: string, ...extra: string[]) => runCli(['enroll', '--server', url, '--token-file', tokenFile, '--host-id', randomUUID(), '--state-dir', tempDir(), ...extra]);
      const noCa = await enroll(s.url);
      expect(noCa.code).toBe(1);
      expect(noCa.stderr).toMatch(/error\[E_CONNECT\]: .*self-signed certificate \(the token was not sent and is still good\) — the server's certificate is not trusted here: give the CA that signed it .* with --ca FILE/);
      const wrongCa = await enroll(s.url, '--ca', other.certFile);
      expect(wrongCa.stderr).toMatch(/— the --ca file given does not vouch for the server certificate/);
      const wrongName = await enroll(s.url.replace('127.0.0.1', 'localhost'), '--ca', tls.certFile);
      expect(wrongName.stderr).toMatch(/— the URL's host name is not one the server's certificate names/);
      for (const r of [noCa, wrongCa, wrongName]) expect(r.stderr).not.toContain(TOKEN);
    } finally {
      await s.close();
    }
  });
});

describe('cortex-agent enroll with the scheme or the path wrong', () => {
  it('wss:// to a server without TLS, ws:// to one with TLS: says to switch the scheme, in one line without OpenSSL\'s internals', async () => {
    const tls = selfSignedCert();
    const plain = await FakeServer.start();
    const secure = await FakeServer.start({ tls });
    try {
      const tokenFile = join(tempDir(), 'enroll-token');
      writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
      const enroll = (url: string) => runCli(['enroll', '--server', url, '--token-file', tokenFile, '--host-id', randomUUID(), '--state-dir', tempDir(), '--allow-insecure']);
      const toPlain = await enroll(plain.url.replace('ws://', 'wss://'));
      expect(toPlain.code).toBe(1);
      expect(toPlain.stderr).toMatch(
        /^cortex-agent: error\[E_CONNECT\]: cannot connect to wss:\/\/127\.0\.0\.1:\d+\/ws\/agent: EPROTO \(TLS: wrong version number\) \(the token was not sent and is still good\) — the server does not speak TLS on that port \(it answered in plain text\): use ws:\/\/127\.0\.0\.1:\d+\/ws\/agent with --allow-insecure, or start serve there with --tls-cert and --tls-key\n$/,
      );
      const toSecure = await enroll(secure.url.replace('wss://', 'ws://'));
      expect(toSecure.code).toBe(1);
      expect(toSecure.stderr).toMatch(/error\[E_CONNECT\]: cannot connect to ws:\/\/127\.0\.0\.1:\d+\/ws\/agent: .*\(the token was not sent and is still good\) — the server closed the connection at once: if it serves TLS on that port \(serve --tls-cert\), use wss:\/\/127\.0\.0\.1:\d+\/ws\/agent/);
    } finally {
      await plain.close();
      await secure.close();
    }
  });

  it('a running agent whose wss:// server speaks no TLS: status shows the reason in one line, not OpenSSL\'s internals', async () => {
    const plain = await FakeServer.start();
    try {
      const a = await makeAgent(plain.url.replace('ws://', 'wss://'), { allowInsecure: false });
      a.agent.start();
      await a.agent.waitForState('Reconnecting');
      expect(a.agent.status().last_error).toMatch(/^connect: cannot connect to wss:\/\/127\.0\.0\.1:\d+\/ws\/agent: EPROTO \(TLS: wrong version number\)$/);
      await a.agent.stop();
    } finally {
      await plain.close();
    }
  });

  it('a path where the server has no agent endpoint (HTTP 404): the URL ends in /ws/agent', async () => {
    const { connectHint } = await import('../../agent/cli-main.js');
    expect(connectHint('server refused the WebSocket upgrade: HTTP 404 Not Found', false, 'wss://logs.example.com:3100/')).toBe(
      "the server has no agent endpoint at /: the agent's URL ends in /ws/agent (wss://logs.example.com:3100/ws/agent)",
    );
    expect(connectHint('server refused the WebSocket upgrade: HTTP 404 Not Found', false, 'wss://logs.example.com/ws/agent')).toBeUndefined();
    // throttled, not down: the hint names the token, not "check that the server runs"
    expect(connectHint('server refused the WebSocket upgrade: HTTP 429 Too Many Requests (Retry-After 8 s)', false, 'wss://logs.example.com/ws/agent')).toMatch(/^the server throttles this address: .* check the token/);
    // under a reverse proxy's path prefix (DECISIONS I26)
    expect(connectHint('server refused the WebSocket upgrade: HTTP 404 Not Found', false, 'wss://logs.example.com/cortex/')).toBe(
      "the server has no agent endpoint at /cortex/: the agent's URL ends in /ws/agent (wss://logs.example.com/cortex/ws/agent)",
    );
    expect(connectHint('server refused the WebSocket upgrade: HTTP 404 Not Found', false, 'wss://logs.example.com/wrong/ws/agent')).toMatch(
      /^nothing answers as the agent endpoint at \/wrong\/ws\/agent \(HTTP 404\): check the path; behind a reverse proxy/,
    );
    // nginx redirects /cortex to /cortex/, and http:// to https://
    expect(connectHint('server refused the WebSocket upgrade: HTTP 301 Moved Permanently', false, 'wss://logs.example.com/cortex')).toBe(
      "the server has no agent endpoint at /cortex: the agent's URL ends in /ws/agent (wss://logs.example.com/cortex/ws/agent)",
    );
    expect(connectHint('server refused the WebSocket upgrade: HTTP 301 Moved Permanently', true, 'ws://logs.example.com/cortex/ws/agent')).toBe(
      'the server answers with a redirect (HTTP 301), as a reverse proxy does from http to https: use wss://logs.example.com/cortex/ws/agent',
    );
  });
});
