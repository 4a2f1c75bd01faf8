/// <reference lib="dom" />
// The server behind a real nginx that terminates TLS and serves it under a path prefix
// (https://localhost:PORT/cortex/ → http://127.0.0.1:SERVER/), configured as
// docs/operations.md "Behind a reverse proxy" says (DECISIONS I26): the console signs in and
// works under the prefix, its session cookie is Secure, the enroll command it shows names the
// proxy's wss:// URL, an agent enrolled with that command streams through the proxy, and a
// line it ships reaches the console's live tail (server-sent events through nginx).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupDirs as cleanupCertDirs, selfSignedCert } from '../agent/helpers/agent-harness.js';
import { cleanupTempDirs, requireDist, startServer, tempDir, tokens, until, untilFileSourceRuns, type ServerProc } from '../support/procs.js';
import { cliEach, type CliRun } from '../support/scli-pool.js';
import { SCREENSHOT_DIR, chromiumGate, enrollAndStart, launch } from './browser.js';
import { accepts, freePort } from '../support/ports.js';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => spawnSync(p, ['-v']).status === 0);
const ADMIN_TOKEN = 'reverse-proxy-test-admin-token-3b81d0';
const OTHER_ADMIN_TOKEN = 'reverse-proxy-test-other-admin-token-5e1f77';

function nginxGate(): boolean {
  if (NGINX !== undefined) return true;
  if (process.env['CI'] === 'true') throw new Error('reverse proxy tests: CI=true needs nginx (apt-get install -y nginx-light)');
  console.log('reverse proxy tests: skipped, no nginx (apt-get install -y nginx-light to run them)');
  return false;
}
const run = chromiumGate('reverse proxy tests') && nginxGate();



/** The location block docs/operations.md gives, with the test's ports and files. */
function nginxConf(dir: string, port: number, upstream: number, cert: string, key: string, other: number): string {
  return `
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    location /cortex/ {
      proxy_pass http://127.0.0.1:${upstream}/;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Prefix /cortex;
      proxy_read_timeout 1h;
    }
    # a second deployment behind the same proxy (its own database and admin token)
    location /other/ {
      proxy_pass http://127.0.0.1:${other}/;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Prefix /other;
    }
  }
}
`;
}

describe.skipIf(!run)('the server behind nginx under a path prefix', () => {
  let server: ServerProc;
  let other: ServerProc;
  let nginx: ChildProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dir: string;
  let base: string;
  let certFile: string;
  let agent: ChildProcess | undefined;
  let hostId = '';
  let stateDir = '';

  beforeAll(async () => {
    requireDist();
    dir = tempDir('cortex-rproxy-');
    chmodSync(dir, 0o755); // nginx's workers (another user when started as root) write their temp files here
    for (const d of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, d), { mode: 0o777 });
    // both servers and the browser start together (each assigned as it comes: a failed start
    // leaves the others to afterAll); the certificate is made meanwhile
    const started = Promise.all([
      startServer(join(dir, 'server.db'), ['--admin-token', ADMIN_TOKEN]).then((x) => (server = x)),
      startServer(join(dir, 'other.db'), ['--admin-token', OTHER_ADMIN_TOKEN]).then((x) => (other = x)),
      launch().then((x) => (browser = x)),
    ]);
    tokens.add(ADMIN_TOKEN);
    tokens.add(OTHER_ADMIN_TOKEN);
    const tls = selfSignedCert('localhost');
    await started;
    certFile = tls.certFile;
    const keyFile = join(dir, 'key.pem');
    writeFileSync(keyFile, tls.key, { mode: 0o600 });
    const port = await freePort();
    writeFileSync(join(dir, 'nginx.conf'), nginxConf(dir, port, server.port, certFile, keyFile, other.port));
    nginx = spawn(NGINX as string, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let nginxErr = '';
    nginx.stderr?.on('data', (b: Buffer) => (nginxErr += b.toString()));
    await until(`nginx listening on ${port}`, async () => (nginx.exitCode !== null ? Promise.reject(new Error(`nginx exited: ${nginxErr}`)) : accepts(port)), 10_000, 50);
    base = `https://localhost:${port}/cortex`;
    context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1360, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    if (agent !== undefined && agent.exitCode === null) agent.kill('SIGKILL');
    if (nginx !== undefined && nginx.exitCode === null) {
      const gone = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGTERM');
      await gone;
    }
    await server?.kill();
    await other?.kill();
    const leaks = [...tokens].filter((t) => server?.stderr().includes(t) || other?.stderr().includes(t));
    cleanupTempDirs();
    cleanupCertDirs(); // the certificate's folder
    expect(leaks, 'a token appeared in the server log').toEqual([]);
  });

  it('/cortex/ui redirects within the prefix; the console signs in there with a Secure, HttpOnly cookie and reads the fleet', async () => {
    await page.goto(`${base}/ui`);
    expect(page.url()).toBe(`${base}/ui/`);
    const field = page.getByLabel('Admin token');
    await field.fill(ADMIN_TOKEN);
    await field.press('Enter');
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === 'cortex_session');
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/cortex/' });
    await page.getByText('No agents yet').waitFor(); // GET admin/agents answered through the prefix
  });

  it('a second server under another prefix of the same proxy keeps its own sign-in (DECISIONS I27)', async () => {
    const second = await context.newPage();
    try {
      await second.goto(`${base.replace(/\/cortex$/, '/other')}/ui/`);
      await second.getByLabel('Admin token').fill(OTHER_ADMIN_TOKEN);
      await second.getByLabel('Admin token').press('Enter');
      await second.getByRole('heading', { name: 'Fleet' }).waitFor();
      expect((await context.cookies()).filter((c) => c.name === 'cortex_session').map((c) => c.path).sort()).toEqual(['/cortex/', '/other/']);
      // the first console, loaded again, is still signed in: its cookie was not replaced by the other's
      await page.reload();
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      expect(await page.getByLabel('Admin token').count()).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('the enroll command names the proxy wss:// URL with its prefix; an agent enrolled with it streams through nginx', async () => {
    await page.getByRole('link', { name: 'Enroll a host' }).click();
    await page.getByLabel('Hostname of the new host').fill('behind-proxy');
    await page.getByRole('button', { name: 'Issue enrollment token' }).click();
    const command = (await page.getByLabel('Enroll command').textContent()) ?? '';
    // the token is not in the command: enroll reads it from stdin (DECISIONS I33); it is shown beside it
    const m = /^cortex-agent enroll --server (\S+) --host-id (\S+) --token - --state-dir \S+$/.exec(command);
    expect(m, command).not.toBe(null);
    const [, url, id] = m as unknown as [string, string, string];
    const token = (await page.getByLabel('Enrollment token').textContent()) ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    tokens.add(token);
    expect(url).toBe(`${base.replace(/^https/, 'wss')}/ws/agent`);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'reverse-proxy-enroll.png'), fullPage: true });
    hostId = id;
    stateDir = join(dir, 'agent');
    agent = await enrollAndStart(url, hostId, token, stateDir, ['--ca', certFile]);
    await page.getByRole('link', { name: 'Fleet' }).click();
    await expect.poll(() => page.locator(`tr[data-host-id="${hostId}"] .state`).textContent(), { timeout: 15_000 }).toBe('Active');
  });

  it('the admin CLI works through the proxy with --server naming the prefix, and says what is wrong without it', async () => {
    const env = { ...process.env, CORTEX_ADMIN_TOKEN: ADMIN_TOKEN, CORTEX_SERVER: '' };
    // the three commands side by side (independent reads)
    const [list, noPrefix, probeNoPrefix] = await cliEach(
      [
        ['agent', 'list', '--json', '--server', base, '--ca', certFile],
        ['agent', 'list', '--server', base.replace(/\/cortex$/, ''), '--ca', certFile],
        // probe reads the answer itself: the same message, not a raw "without a JSON body"
        ['probe', hostId, 'sys.uptime', '--server', base.replace(/\/cortex$/, ''), '--ca', certFile],
      ],
      { cwd: dir, fullEnv: env },
    ) as [CliRun, CliRun, CliRun];
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { host_id: string }[]).map((a) => a.host_id)).toEqual([hostId]);
    expect(noPrefix.code).toBe(2); // a 404: the command was pointed at the wrong place
    expect(noPrefix.stderr).toMatch(/answered HTTP 404 with a page that is not the Cortex admin API's \(404 Not Found .*nginx.*\): check --server; behind a reverse proxy, give the path/);
    expect(probeNoPrefix.code).toBe(2);
    expect(probeNoPrefix.stderr).toMatch(/answered HTTP 404 with a page that is not the Cortex admin API's .*: check --server; behind a reverse proxy/);
    expect(`${list.stderr}${noPrefix.stderr}${probeNoPrefix.stderr}`).not.toContain(ADMIN_TOKEN);
  });

  it('a line the agent ships reaches the live tail through the proxy', async () => {
    const logFile = join(dir, 'app.log');
    writeFileSync(logFile, '');
    const res = await page.evaluate(
      async ([u, cfg]) => {
        const session = (await (await fetch(`${u}/admin/session`)).json()) as { csrf_token: string };
        const r = await fetch(`${u}/admin/agents/${cfg.host}/config`, {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': session.csrf_token },
          body: JSON.stringify({ config: { heartbeat_interval_secs: 30, max_batch_entries: 100, flush_interval_ms: 100, probe_concurrency: 1, log_sources: [{ kind: 'file', path: cfg.file }] } }),
        });
        return r.status;
      },
      [base, { host: hostId, file: logFile }] as const,
    );
    expect(res).toBe(200);
    await untilFileSourceRuns(stateDir, logFile);
    await page.locator(`a[href="#/hosts/${hostId}"]`).click();
    await page.locator('.tail-status').filter({ hasText: 'Live' }).waitFor();
    const line = `through nginx ${Date.now()}`;
    appendFileSync(logFile, `${line}\n`);
    await page.locator('.log-lines li', { hasText: line }).waitFor({ timeout: 5000 });
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'reverse-proxy-host.png'), fullPage: true });
  });
});
