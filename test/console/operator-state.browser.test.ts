/// <reference lib="dom" />
// What the console keeps for the operator, in headless Chromium against the compiled server (a
// SQLite file): an unsaved config edit outlives a session that ended under it (signed out in
// another tab) and a reload, and comes back based on the version it was typed against; the
// fleet's filter and page outlive a visit to a host (Back) and a reload; a log line's bidi and
// control characters are shown as code points in the live tail and the search, not obeyed, and
// a very long one is cut in the tail; the enroll card says how to keep the token off ps; Skip to
// content skips, and a page opened by keyboard gets the focus.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, requireDist, startServer, tempDir, tokens, type ServerProc } from '../support/procs.js';
import { SCREENSHOT_DIR, chromiumGate, launch } from './browser.js';

const ADMIN_TOKEN = 'browser-operator-state-admin-token-8c2f61d4';
const run = chromiumGate('console operator-state browser tests');

describe.skipIf(!run)('console: what the operator typed or chose is not thrown away', () => {
  let server: ServerProc;
  let browser: Browser;
  let hostId: string;
  let dbFile: string;

  const api = async (path: string, init: RequestInit = {}) =>
    fetch(`${server.http}${path}`, { ...init, headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) } });

  beforeAll(async () => {
    requireDist();
    dbFile = join(tempDir('cortex-console-state-'), 'server.db');
    server = await startServer(dbFile, ['--admin-token', ADMIN_TOKEN]);
    tokens.add(ADMIN_TOKEN);
    const issued = (await (await api('/admin/agents', { method: 'POST', body: JSON.stringify({ hostname: 'edited-host' }) })).json()) as { host_id: string; token: string };
    tokens.add(issued.token);
    hostId = issued.host_id;
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.kill();
    const leaks = [...tokens].filter((t) => server?.stderr().includes(t));
    cleanupTempDirs();
    expect(leaks, 'a token appeared in the server log').toEqual([]);
  });

  async function signIn(page: Page): Promise<void> {
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Admin token').press('Enter');
  }

  it('an unsaved config edit survives the session ending under it and a reload, and saves with the If-Match it was typed against', async () => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const ifMatch: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith(`/admin/agents/${hostId}/config`) && r.method() === 'PUT') ifMatch.push(r.headers()['if-match'] ?? '(none)');
    });
    await page.goto(`${server.http}/ui/`);
    await signIn(page);
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    await page.goto(`${server.http}/ui/#/hosts/${hostId}`);
    const editor = page.getByLabel('AgentConfig (JSON)');
    await expect.poll(() => editor.inputValue()).toContain('heartbeat_interval_secs');
    const mine = JSON.stringify({ ...(JSON.parse(await editor.inputValue()) as object), heartbeat_interval_secs: 41 }, null, 2);
    await editor.fill(mine);

    // another tab signs out: this one's next request gets 401 and the sign-in page shows
    const status = await page.evaluate(async () => {
      const s = (await (await fetch('../admin/session')).json()) as { csrf_token: string };
      return (await fetch('../admin/session', { method: 'DELETE', headers: { 'X-CSRF-Token': s.csrf_token } })).status;
    });
    expect(status).toBe(200);
    await page.getByRole('button', { name: 'Save config' }).click();
    await page.getByLabel('Admin token').waitFor();
    await signIn(page);
    await expect.poll(() => editor.inputValue()).toBe(mine);
    await page.getByText('Your unsaved text from before (based on version 0)').waitFor();

    // a reload keeps it too
    await page.reload();
    await expect.poll(() => editor.inputValue()).toBe(mine);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'config-draft-restored.png'), fullPage: true });

    await page.getByRole('button', { name: 'Save config' }).click();
    await page.getByText('Saved as version 1').waitFor();
    expect(ifMatch.at(-1)).toBe('"0"');
    const stored = (await (await api(`/admin/agents/${hostId}/config`)).json()) as { stored: { heartbeat_interval_secs: number } };
    expect(stored.stored.heartbeat_interval_secs).toBe(41);

    // saved: nothing is put back any more
    await page.reload();
    await expect.poll(() => editor.inputValue()).toContain('"heartbeat_interval_secs": 41');
    expect(await page.getByText('Your unsaved text from before').count()).toBe(0);
    await context.close();
  }, 60_000);

  async function signedInPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${server.http}/ui/`);
    await signIn(page);
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    return page;
  }

  it("the fleet's filter and page come back after a host's page (Back) and a reload", async () => {
    const sqlite = new Database(dbFile);
    const add = sqlite.prepare("insert into agents (host_id, hostname, connection_state, created_at) values (?, ?, 'NeverConnected', ?)");
    for (let i = 0; i < 150; i++) add.run(randomUUID(), `yy-view-${String(i).padStart(3, '0')}`, new Date().toISOString());
    sqlite.close();
    const page = await signedInPage();
    const summary = () => page.locator('p.summary').textContent();
    await page.getByLabel('Filter by hostname or host id').fill('yy-view-');
    await expect.poll(summary).toBe('Agents 1–100 of 150');
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(summary).toBe('Agents 101–150 of 150');
    await page.getByRole('link', { name: 'yy-view-100' }).click();
    await page.getByRole('heading', { name: 'yy-view-100' }).waitFor();
    await page.goBack();
    await expect.poll(summary).toBe('Agents 101–150 of 150');
    expect(await page.getByLabel('Filter by hostname or host id').inputValue()).toBe('yy-view-');
    await page.reload();
    await expect.poll(summary).toBe('Agents 101–150 of 150');
    // the Fleet link is the whole fleet again
    await page.getByRole('link', { name: 'Fleet', exact: true }).click();
    await expect.poll(summary).toBe('Agents 1–100 of 151');
    expect(await page.getByLabel('Filter by hostname or host id').inputValue()).toBe('');
    await page.context().close();
  }, 60_000);

  it("a log line's bidi override and terminal escapes show as code points in the live tail and the search", async () => {
    const sqlite = new Database(dbFile);
    const now = new Date().toISOString();
    sqlite
      .prepare("insert into logs (host_id, seq, ts, received_at, severity, message, source) values (?, 1, ?, ?, 'info', ?, ?)")
      .run(hostId, now, now, 'login failed for \u202enimda\u202c from \u001b[31m10.0.0.1\u001b[0m', 'file:/var/log/\u202eauth');
    // and one line of 20,000 characters: the tail shows its first 2,000 and says how many more
    sqlite.prepare("insert into logs (host_id, seq, ts, received_at, severity, message, source) values (?, 2, ?, ?, 'info', ?, 'file:/var/log/big')").run(hostId, now, now, 'X'.repeat(20_000));
    sqlite.close();
    const page = await signedInPage();
    await page.goto(`${server.http}/ui/#/hosts/${hostId}`);
    const line = page.locator('ol.log-lines li').first();
    await expect.poll(() => line.locator('.msg').textContent()).toBe('login failed for \\u202Enimda\\u202C from \\u001B[31m10.0.0.1\\u001B[0m');
    expect(await line.locator('.src').textContent()).toBe('file:/var/log/\\u202Eauth');
    const long = page.locator('ol.log-lines li').nth(1);
    expect((await long.locator('.msg').textContent())?.length).toBe(2000);
    expect(await long.locator('.more').textContent()).toContain('18000 more characters');
    await page.locator('#search-source').fill('file:/var/log/\u202eauth');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('1 line, newest first').waitFor();
    const cell = page.locator('td.msg').first();
    await expect.poll(() => cell.textContent()).toBe('login failed for \\u202Enimda\\u202C from \\u001B[31m10.0.0.1\\u001B[0m');
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'log-controls-visible.png'), fullPage: true });
    await page.context().close();
  }, 60_000);

  it('the enroll card says how to keep the token off the command line, as agent issue does', async () => {
    const page = await signedInPage();
    await page.getByRole('link', { name: 'Enroll a host' }).click();
    await page.getByLabel('Hostname of the new host').fill('hint-host');
    await page.getByRole('button', { name: 'Issue enrollment token' }).click();
    tokens.add((await page.getByLabel('Enrollment token').textContent()) ?? '');
    // the command shown first reads the token from stdin (DECISIONS I33), and the card says how to give it
    expect(await page.getByLabel('Enroll command').textContent()).toContain(' --token - ');
    await page.getByText('Run this on the host; paste the token when it asks for it (nothing is shown as you type), or pipe it from a file: … < token-file.').waitFor();
    // the one-line form, folded away, says what it costs and how to do without it
    await page.locator('section.issued details > summary').click();
    await page.getByText('To keep the token out of ps and the shell history on the host').waitFor();
    expect(await page.locator('section.issued details').textContent()).toContain('--token-file FILE');
    await page.context().close();
  }, 60_000);

  it('keyboard: Skip to content keeps the page and moves the focus into it; a host opened from the fleet gets the focus', async () => {
    const page = await signedInPage();
    await page.getByLabel('Filter by hostname or host id').fill('edited-host');
    await expect.poll(() => page.locator('p.summary').textContent()).toBe('Agents 1–1 of 1');
    await expect.poll(() => page.url()).toContain('#/?q=edited-host');
    const url = page.url();
    await page.locator('a.skip').focus();
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    expect(page.url()).toBe(url);
    expect(await page.getByText('No page at').count()).toBe(0);
    await page.getByRole('link', { name: 'edited-host' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'edited-host' }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    await page.context().close();
  }, 60_000);
});
