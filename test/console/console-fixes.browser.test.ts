/// <reference lib="dom" />
// The console when the server says no, in headless Chromium against the compiled server (a
// SQLite file) and a reference agent: a refused sign-out keeps the operator signed in and says
// so; two loopback servers on one machine keep their sessions apart; a page whose session was
// replaced by another tab mends it itself; a live tail the server refuses says why and stops;
// "Use the server default" for a host in a group names what happens; an editor learns that the
// stored config moved on; probe errors read as sentences; names with bidi controls show them.
import { type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, requireDist, startServer, tempDir, tokens, until, type ServerProc } from '../support/procs.js';
import { SCREENSHOT_DIR, chromiumGate, enrollAndStart, launch } from './browser.js';

const ADMIN_TOKEN = 'browser-fixes-admin-token-3e9b5d71';
const run = chromiumGate('console fixes browser tests');

// One browser for the file, launched while the three servers start (the first describe's, with
// its enrolled agent, and the second describe's two loopback servers).
let browser: Browser;
let server: ServerProc;
let dbFile: string;
let dir: string;
let agent: ChildProcess | undefined;
let hostId: string;
let a: ServerProc;
let b: ServerProc;

const api = async (path: string, init: RequestInit = {}) =>
  fetch(`${server.http}${path}`, { ...init, headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) } });

beforeAll(async () => {
  if (!run) return;
  requireDist();
  dir = tempDir('cortex-console-fixes-');
  dbFile = join(dir, 'server.db');
  // a database each for the loopback servers (the cookie clash is the browser's, whatever the servers share)
  const d = tempDir('cortex-console-loopback-');
  const withAgent = async () => {
    server = await startServer(dbFile, ['--admin-token', ADMIN_TOKEN]);
    tokens.add(ADMIN_TOKEN);
    const issued = (await (await api('/admin/agents', { method: 'POST', body: JSON.stringify({ hostname: 'probe-host' }) })).json()) as { host_id: string; token: string };
    tokens.add(issued.token);
    hostId = issued.host_id;
    const stateDir = join(dir, 'agent');
    agent = await enrollAndStart(server.url, hostId, issued.token, stateDir, ['--allow-insecure']);
  };
  // each assigned as it comes (a failed start leaves the others to afterAll)
  await Promise.all([launch().then((x) => (browser = x)), withAgent(), startServer(join(d, 'a.db')).then((x) => (a = x)), startServer(join(d, 'b.db')).then((x) => (b = x))]);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await b?.kill();
  await a?.kill();
  cleanupTempDirs();
});

describe.skipIf(!run)('console: refusals said, sessions kept apart, stale configs noticed', () => {
  const contexts: BrowserContext[] = [];

  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    if (agent !== undefined && agent.exitCode === null) agent.kill('SIGKILL');
    await server?.kill();
    const leaks = [...tokens].filter((t) => server?.stderr().includes(t));
    expect(leaks, 'a token appeared in the server log').toEqual([]);
  });

  async function signedIn(context?: BrowserContext): Promise<Page> {
    const ctx = context ?? (await browser.newContext({ viewport: { width: 1360, height: 900 } }));
    contexts.push(ctx);
    const page = await ctx.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${server.http}/ui/`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Admin token').press('Enter');
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    return page;
  }

  /** A new context signed in through the API (POST /admin/session: its cookie), its page opened at `hash`: one page load, not two. */
  async function signedInAt(hash: string, beforeLoad?: (page: Page) => void): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    contexts.push(ctx);
    const res = await ctx.request.post(`${server.http}/admin/session`, { data: { token: ADMIN_TOKEN } });
    expect(res.status()).toBe(200);
    const page = await ctx.newPage();
    page.setDefaultTimeout(10_000);
    beforeLoad?.(page);
    await page.goto(`${server.http}/ui/${hash}`);
    return page;
  }

  it('a sign-out the server refuses keeps the page signed in, with its message and a retry that works', async () => {
    const page = await signedInAt('#/');
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    const db = new Database(dbFile);
    db.exec("create trigger cx_refuse_end before insert on ended_sessions begin select raise(abort, 'simulated write failure'); end");
    try {
      await page.getByRole('button', { name: 'Sign out' }).click();
      const alert = page.getByRole('alert').filter({ hasText: 'Not signed out' });
      await alert.waitFor();
      expect(await alert.textContent()).toContain('sign-out failed: the database did not record that this session ended');
      expect(await page.locator('header.top').isVisible()).toBe(true);
      await page.screenshot({ path: join(SCREENSHOT_DIR, 'signout-refused.png') });
      // the session is still good: the page goes on working
      expect(await page.evaluate(async () => (await fetch('/admin/agents')).status)).toBe(200);
    } finally {
      db.exec('drop trigger cx_refuse_end');
      db.close();
    }
    await page.getByRole('button', { name: 'Try signing out again' }).click();
    await page.getByRole('heading', { name: 'Sign in to the Cortex console' }).waitFor();
    expect(await page.evaluate(async () => (await fetch('/admin/agents')).status)).toBe(401);
  });

  it('a page whose cookie another tab replaced (a new sign-in) still saves: it takes the session it holds now', async () => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    const first = await signedIn(context);
    // the second tab's sign-in replaces the cookie: the first one's CSRF token is stale
    const second = await context.newPage();
    await second.goto(`${server.http}/ui/`);
    const signIn = await second.evaluate(async (token) => (await fetch('/admin/session', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token }) })).status, ADMIN_TOKEN);
    expect(signIn).toBe(200);
    await first.goto(`${server.http}/ui/#/enroll`);
    await first.getByLabel('Hostname of the new host').fill('after-second-tab');
    await first.getByRole('button', { name: 'Issue enrollment token' }).click();
    await first.getByRole('heading', { name: 'Token for after-second-tab' }).waitFor();
  });

  it('a live tail the server refuses says why next to the filter and stops; a filter it would refuse is not sent', async () => {
    const streams: string[] = [];
    const page = await signedInAt(`#/hosts/${hostId}`, (p) =>
      p.on('request', (r) => {
        if (r.url().includes('/logs/stream')) streams.push(r.url());
      }),
    );
    await page.locator('.tail-status').filter({ hasText: 'Live' }).waitFor();
    // a control character in the text: said at once, not sent
    await page.getByLabel('Text', { exact: true }).fill('a\u0001b');
    const refused = page.locator('#tail-refused');
    await expect.poll(() => refused.textContent()).toContain('Text contains a control character (U+0001 at position 2)');
    expect(await page.getByLabel('Text', { exact: true }).getAttribute('maxlength')).toBe('200');
    expect(streams.some((u) => u.includes('%01'))).toBe(false);
    // a refusal only the server knows (the host is gone): its message, then no retry
    await page.getByLabel('Text', { exact: true }).fill('');
    await page.locator('.tail-status').filter({ hasText: 'Live' }).waitFor();
    const other = (await (await api('/admin/agents', { method: 'POST', body: JSON.stringify({ hostname: 'gone-soon' }) })).json()) as { host_id: string; token: string };
    tokens.add(other.token);
    await page.goto(`${server.http}/ui/#/hosts/${other.host_id}`);
    await page.locator('.tail-status').filter({ hasText: 'Live' }).waitFor();
    expect((await api(`/admin/agents/${other.host_id}?purge=true`, { method: 'DELETE' })).status).toBe(200);
    await page.locator('#tail-severity').selectOption({ index: 3 });
    await expect.poll(() => refused.textContent()).toMatch(/The server refused the live tail \(HTTP 404\): no agent with host_id/);
    expect(await page.locator('.tail-status').textContent()).toContain('Not streaming');
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'tail-refused.png') });
  });

  it('for a host in a group, the button says it moves the host to its group\'s config, and the page says so after', async () => {
    const web = ((await (await api(`/admin/agents/${hostId}/config`)).json()) as { effective: Record<string, unknown> }).effective;
    expect((await api('/admin/groups/web/config', { method: 'PUT', body: JSON.stringify({ config: web }) })).status).toBe(200);
    const grouped = (await (await api('/admin/agents', { method: 'POST', body: JSON.stringify({ hostname: 'grouped' }) })).json()) as { host_id: string; token: string };
    tokens.add(grouped.token);
    expect((await api(`/admin/agents/${grouped.host_id}/group`, { method: 'PUT', body: JSON.stringify({ group: 'web' }) })).status).toBe(200);
    expect((await api(`/admin/agents/${grouped.host_id}/config`, { method: 'PUT', body: JSON.stringify({ config: { ...web, probe_concurrency: 2 } }) })).status).toBe(200);
    const page = await signedInAt(`#/hosts/${grouped.host_id}`);
    await page.getByText('This host has its own config').waitFor();
    expect(await page.getByRole('button', { name: 'Use the server default' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Use the config of group web' }).click();
    const status = page.getByRole('status').filter({ hasText: 'own config is removed' });
    await status.waitFor();
    expect(await status.textContent()).toMatch(/it runs the config of its group web now \(version \d+\)/);
    expect(await status.textContent()).not.toContain('server default');
    await page.getByText('This host runs the config of its group web').waitFor();
    // nothing of its own left to remove
    expect(await page.getByRole('button', { name: 'Use the config of group web' }).isDisabled()).toBe(true);
  });

  it('an open editor notices that someone saved since it loaded (on focus), keeps the text typed, and loads the new version on request', async () => {
    const page = await signedInAt(`#/hosts/${hostId}`);
    const editor = page.getByLabel('AgentConfig (JSON)');
    await expect.poll(() => editor.inputValue()).toContain('heartbeat_interval_secs');
    const loaded = JSON.parse(await editor.inputValue()) as Record<string, unknown>;
    const typed = JSON.stringify({ ...loaded, metrics_interval_secs: 17 }, null, 2);
    await editor.fill(typed);
    const before = (await (await api(`/admin/agents/${hostId}/config`)).json()) as { config_version: number };
    expect((await api(`/admin/agents/${hostId}/config`, { method: 'PUT', body: JSON.stringify({ config: { ...loaded, probe_concurrency: 3 } }) })).status).toBe(200);
    const now = before.config_version + 1;
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    const notice = page.locator('.stale[role="status"]');
    await notice.waitFor();
    expect(await notice.textContent()).toContain(`someone saved version ${now} (you loaded version ${before.config_version}`);
    expect(await editor.inputValue()).toBe(typed);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'config-stale.png'), fullPage: true });
    await notice.getByRole('button', { name: `Load version ${now} into the editor` }).click();
    expect(JSON.parse(await editor.inputValue())).toMatchObject({ probe_concurrency: 3 });
    expect(await page.getByLabel('Your text before you loaded the stored config').textContent()).toBe(typed);
    expect(await notice.count()).toBe(0);
  });

  it('a probe refused by the agent reads as a sentence with what to do, not raw JSON', async () => {
    await until('the agent connected', async () => ((await (await api(`/admin/agents/${hostId}`)).json()) as { connection_state: string }).connection_state === 'Active', 15_000);
    const page = await signedInAt(`#/hosts/${hostId}`);
    await page.getByLabel('Probe', { exact: true }).selectOption('file.tail');
    await page.locator('fieldset input').first().fill('/etc/hostname');
    await page.getByRole('button', { name: 'Run file.tail' }).click();
    const alert = page.locator('section[aria-labelledby="h-probe"] [role="alert"]');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    expect(text).toContain('InvalidParams: path is outside the allowed paths');
    expect(text).toContain("probe_file_tail_paths (in its agent.json");
    expect(text).not.toContain('{');
    expect(text).not.toContain('-32602');
  });

  it('host names with bidi controls show them as code points; a 255-character name wraps in its card', async () => {
    const sneaky = 'web\u202Egpj.exe';
    const issued = (await (await api('/admin/agents', { method: 'POST', body: JSON.stringify({ hostname: sneaky }) })).json()) as { host_id: string; token: string };
    tokens.add(issued.token);
    const page = await signedInAt('#/');
    await page.getByLabel('Filter by hostname or host id').fill(issued.host_id);
    const cell = page.locator(`tr[data-host-id="${issued.host_id}"] td`).first();
    await expect.poll(() => cell.textContent()).toBe('web\\u202Egpj.exe');
    expect(await cell.locator('bdi .ctrl').textContent()).toBe('\\u202E');

    await page.goto(`${server.http}/ui/#/enroll`);
    const long = `h${'x'.repeat(254)}`;
    await page.getByLabel('Hostname of the new host').fill(long);
    await page.getByRole('button', { name: 'Issue enrollment token' }).click();
    const card = page.locator('section.issued');
    await card.waitFor();
    const heading = card.locator('h2');
    const [cardBox, headingWidth] = [await card.boundingBox(), await heading.evaluate((el) => el.scrollWidth)];
    expect(headingWidth).toBeLessThanOrEqual(Math.ceil((cardBox as { width: number }).width));
    expect(await card.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
  });
});

describe.skipIf(!run)('console: two loopback servers on one machine', () => {
  it('both consoles, open in one browser, issue tokens: neither evicts the other\'s session', async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const pages: Page[] = [];
    for (const s of [a, b]) {
      const p = await context.newPage();
      p.setDefaultTimeout(10_000);
      await p.goto(`${s.http}/ui/#/enroll`);
      await p.getByLabel('Hostname of the new host').waitFor();
      pages.push(p);
    }
    const names = (await context.cookies()).map((c) => c.name).sort();
    expect(names).toEqual([`cortex_session_${a.port}`, `cortex_session_${b.port}`].sort());
    const requests: string[] = [];
    context.on('request', (r) => {
      if (r.method() === 'POST') requests.push(new URL(r.url()).pathname);
    });
    for (const [i, p] of pages.entries()) {
      await p.getByLabel('Hostname of the new host').fill(`from-tab-${i}`);
      await p.getByRole('button', { name: 'Issue enrollment token' }).click();
      await p.getByRole('heading', { name: `Token for from-tab-${i}` }).waitFor();
    }
    // each went straight through: no session had to be started again
    expect(requests).toEqual(['/admin/agents', '/admin/agents']);
  });
});
