// The server behind Caddy and behind HAProxy, each terminating TLS and serving it under
// `/cortex/`, with the very configuration docs/operations.md "Behind a reverse proxy" gives
// (read from that file; only the host name, certificate, listen port and upstream port are
// replaced), DECISIONS I26 and I27. What an operator does through each: open the prefix in a
// browser and land in the console; sign in (a Secure cookie scoped to the prefix); issue a
// token whose enroll command names the proxy's wss:// URL; enroll and run an agent through
// it; list and tail (server-sent events) with the admin CLI through it. nginx is run by
// test/console/reverse-proxy.browser.test.ts with a real browser.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupDirs as cleanupCertDirs, selfSignedCert } from '../agent/helpers/agent-harness.js';
import { AGENT_CLI, ROOT, SERVER_CLI, cleanupTempDirs, cliSync, requireDist, startServer, tempDir, tokens, until, untilFileSourceRuns, type ServerProc } from '../support/procs.js';
import { accepts, freePort } from '../support/ports.js';

const ADMIN_TOKEN = 'reverse-proxies-test-admin-token-7c02e4';
const DOCS = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');

/** The fenced block of docs/operations.md in that language. */
function docBlock(lang: string): string {
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(DOCS);
  if (m === null) throw new Error(`docs/operations.md has no \`\`\`${lang} block`);
  return m[1] as string;
}

interface Proxy {
  name: string;
  bin: string | undefined;
  pkg: string;
  /** The docs' block made runnable here; returns the argv. */
  setup(dir: string, port: number, upstream: number, cert: string, key: string): string[];
  env?(dir: string): NodeJS.ProcessEnv;
}

function which(...paths: string[]): string | undefined {
  return paths.find((p) => spawnSync(p, ['version'], { stdio: 'ignore' }).error === undefined);
}

const PROXIES: Proxy[] = [
  {
    name: 'Caddy',
    bin: which('/usr/bin/caddy', '/usr/local/bin/caddy'),
    pkg: 'caddy',
    setup(dir, port, upstream, cert, key) {
      const site = docBlock('caddyfile')
        .replace('logs.example.com {', `https://localhost:${port} {\n\ttls ${cert} ${key}`)
        .replaceAll('127.0.0.1:3100', `127.0.0.1:${upstream}`);
      // the test's own: no admin endpoint (port 2019 may be taken), no port-80 redirect listener
      const file = join(dir, 'Caddyfile');
      writeFileSync(file, `{\n\tadmin off\n\tauto_https disable_redirects\n}\n${site}`);
      return ['run', '--config', file, '--adapter', 'caddyfile'];
    },
    env: (dir) => ({ ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') }),
  },
  {
    name: 'HAProxy',
    bin: which('/usr/sbin/haproxy', '/usr/local/sbin/haproxy'),
    pkg: 'haproxy',
    setup(dir, port, upstream, cert, key) {
      const pem = join(dir, 'haproxy.pem');
      writeFileSync(pem, readFileSync(cert, 'utf8') + readFileSync(key, 'utf8'), { mode: 0o600 });
      const cfg = docBlock('haproxy')
        .replace(/bind :443 ssl crt \S+/, `bind 127.0.0.1:${port} ssl crt ${pem}`)
        .replaceAll('127.0.0.1:3100', `127.0.0.1:${upstream}`);
      const file = join(dir, 'haproxy.cfg');
      writeFileSync(file, cfg);
      return ['-f', file];
    },
  },
];

function gate(p: Proxy): boolean {
  if (p.bin !== undefined) return true;
  if (process.env['CI'] === 'true') throw new Error(`reverse proxy tests: CI=true needs ${p.name} (apt-get install -y ${p.pkg})`);
  console.log(`reverse proxy tests: ${p.name} skipped, not installed (apt-get install -y ${p.pkg} to run them)`);
  return false;
}


interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTPS request to the proxy (its certificate trusted), no redirect followed. */
function https(url: string, ca: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers, ca }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

describe.each(PROXIES.filter(gate))('the server behind $name under /cortex/, configured as docs/operations.md says', (proxy) => {
  let server: ServerProc;
  let child: ChildProcess;
  let dir: string;
  let origin: string;
  let base: string;
  let ca: string;
  let certFile: string;
  let agent: ChildProcess | undefined;
  let hostId = '';
  let stateDir = '';
  let output = '';
  const env = { ...process.env, CORTEX_ADMIN_TOKEN: ADMIN_TOKEN, CORTEX_SERVER: '' };

  beforeAll(async () => {
    requireDist();
    dir = tempDir('cortex-rproxies-');
    server = await startServer(join(dir, 'server.db'), ['--admin-token', ADMIN_TOKEN]);
    tokens.add(ADMIN_TOKEN);
    const tls = selfSignedCert('localhost');
    certFile = tls.certFile;
    ca = tls.cert;
    const keyFile = join(dir, 'key.pem');
    writeFileSync(keyFile, tls.key, { mode: 0o600 });
    const port = await freePort();
    const argv = proxy.setup(dir, port, server.port, certFile, keyFile);
    child = spawn(proxy.bin as string, argv, { cwd: dir, env: proxy.env?.(dir) ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
    await until(`${proxy.name} listening on ${port}`, async () => (child.exitCode !== null ? Promise.reject(new Error(`${proxy.name} exited: ${output}`)) : accepts(port)), 15_000, 50);
    origin = `https://localhost:${port}`;
    base = `${origin}/cortex`;
  }, 60_000);

  afterAll(async () => {
    if (agent !== undefined && agent.exitCode === null) agent.kill('SIGKILL');
    if (child !== undefined && child.exitCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await gone;
    }
    await server?.kill();
    const leaks = [...tokens].filter((t) => server?.stderr().includes(t) || output.includes(t));
    cleanupTempDirs();
    cleanupCertDirs();
    expect(leaks, 'a token appeared in the server or proxy log').toEqual([]);
  });

  it('a browser opening the prefix lands in the console, redirect by redirect within the prefix', async () => {
    const html = { Accept: 'text/html,application/xhtml+xml' };
    const hops: string[] = [];
    let url = base;
    for (let i = 0; i < 5; i++) {
      const r = await https(url, ca, { headers: html });
      if (r.status < 300 || r.status >= 400) {
        expect(r.status).toBe(200);
        expect(r.body).toContain('<title>');
        break;
      }
      url = new URL(String(r.headers['location']), url).href;
      hops.push(url);
    }
    expect(hops).toEqual([`${base}/`, `${base}/ui/`]);
  });

  it('the sign-in works with the origin the browser sees; its cookie is Secure and scoped to the prefix', async () => {
    const r = await https(`${base}/admin/session`, ca, { method: 'POST', headers: { Origin: origin, 'Content-Type': 'application/json' }, body: JSON.stringify({ token: ADMIN_TOKEN }) });
    expect(r.status, r.body).toBe(200);
    const cookie = String(r.headers['set-cookie']);
    expect(cookie).toMatch(/^cortex_session=[^;]+; HttpOnly; SameSite=Strict; Path=\/cortex\/; Max-Age=\d+; Secure$/);
    const session = await https(`${base}/admin/session`, ca, { headers: { Cookie: cookie.split(';')[0] as string, 'Sec-Fetch-Site': 'same-origin' } });
    expect(JSON.parse(session.body)).toMatchObject({ authenticated: true, via: 'cookie' });
  });

  it("the enroll command names the proxy's wss:// URL; an agent enrolled with it runs through the proxy", async () => {
    const r = await https(`${base}/admin/agents`, ca, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ hostname: `behind-${proxy.pkg}` }) });
    expect(r.status, r.body).toBe(201);
    const issued = JSON.parse(r.body) as { host_id: string; token: string; enroll_command: string };
    tokens.add(issued.token);
    expect(issued.enroll_command).toContain(`--server wss://localhost:${new URL(origin).port}/cortex/ws/agent `);
    hostId = issued.host_id;
    stateDir = join(dir, 'agent');
    const tokenFile = join(dir, 'enroll-token');
    writeFileSync(tokenFile, issued.token, { mode: 0o600 });
    const url = `${base.replace(/^https/, 'wss')}/ws/agent`;
    const e = cliSync(AGENT_CLI, ['enroll', '--server', url, '--host-id', hostId, '--token-file', tokenFile, '--state-dir', stateDir, '--ca', certFile]);
    expect(e.code, e.stderr).toBe(0);
    agent = spawn(process.execPath, [AGENT_CLI, 'run', '--state-dir', stateDir], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    agent.stderr?.resume();
    await until(
      'the agent listed Active through the proxy',
      () => {
        const list = spawnSync(process.execPath, [SERVER_CLI, 'agent', 'list', '--json', '--server', base, '--ca', certFile], { cwd: dir, env, encoding: 'utf8' });
        if (list.status !== 0) throw new Error(`agent list --server ${base}: ${list.stderr}`);
        return (JSON.parse(list.stdout) as { host_id: string; state: string }[]).find((a) => a.host_id === hostId)?.state === 'Active';
      },
      15_000,
      200,
    );
  });

  it('agent tail --follow through the proxy shows a line the agent ships', async () => {
    const logFile = join(dir, 'app.log');
    writeFileSync(logFile, '');
    const cfgFile = join(dir, 'config.json');
    writeFileSync(cfgFile, JSON.stringify({ heartbeat_interval_secs: 30, max_batch_entries: 100, flush_interval_ms: 100, probe_concurrency: 1, log_sources: [{ kind: 'file', path: logFile }] }));
    const set = spawnSync(process.execPath, [SERVER_CLI, 'agent', 'config', hostId, '--set-file', cfgFile, '--server', base, '--ca', certFile], { cwd: dir, env, encoding: 'utf8' });
    expect(set.status, set.stderr).toBe(0);
    await untilFileSourceRuns(stateDir, logFile);
    const tail = spawn(process.execPath, [SERVER_CLI, 'agent', 'tail', hostId, '--follow', '--server', base, '--ca', certFile], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = '';
    let err = '';
    tail.stdout?.on('data', (b: Buffer) => (seen += b.toString()));
    tail.stderr?.on('data', (b: Buffer) => (err += b.toString()));
    try {
      const line = `through ${proxy.pkg} ${Date.now()}`;
      // the tail prints what is stored, then follows from there: the line is shown whenever it is stored
      appendFileSync(logFile, `${line}\n`);
      await until(`"${line}" in agent tail --follow (stderr: ${err})`, () => {
        if (tail.exitCode !== null) throw new Error(`agent tail exited ${tail.exitCode}: ${err}`);
        return seen.includes(line);
      }, 15_000, 50);
    } finally {
      tail.kill('SIGTERM');
    }
  });
});
