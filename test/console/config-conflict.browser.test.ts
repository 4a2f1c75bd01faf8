/// <reference lib="dom" />
// Two operators edit one host's config in two browser sessions (headless Chromium against the
// compiled server and a real SQLite file): the second save is refused with 412 because the
// first changed the config meanwhile (DECISIONS J13). The console sent If-Match with the
// version it loaded, kept what the operator typed, showed the config stored now, and let them
// load it or keep their text on purpose. And the console's Sign out ends the session on the
// server, not only in the browser (DECISIONS J14): a copy of its cookie is refused afterwards.
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, requireDist, startServer, tempDir, tokens, type ServerProc } from '../support/procs.js';
import { SCREENSHOT_DIR, chromiumGate, launch } from './browser.js';

const ADMIN_TOKEN = 'browser-conflict-admin-token-4b1d8e0a';
const run = chromiumGate('console config-conflict tests');

interface Stored {
  stored: { heartbeat_interval_secs: number; probe_concurrency: number } | null;
  config_version: number;
}

describe.skipIf(!run)('console: two operators editing one config, and sign-out', () => {
  let server: ServerProc;
  let browser: Browser;
  let hostId: string;
  const contexts: BrowserContext[] = [];

  const api = async (path: string, init: RequestInit = {}) =>
    fetch(`${server.http}${path}`, { ...init, headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) } });
  const stored = async (): Promise<Stored> => (await (await api(`/admin/agents/${hostId}/config`)).json()) as Stored;

  beforeAll(async () => {
    requireDist();
    server = await startServer(join(tempDir('cortex-console-conflict-'), 'server.db'), ['--admin-token', ADMIN_TOKEN]);
    tokens.add(ADMIN_TOKEN);
    const issued = (await (await api('/admin/agents', { method: 'POST', body: JSON.stringify({ hostname: 'shared-host' }) })).json()) as { host_id: string; token: string };
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

  /** A browser session of its own (its own cookie), signed in, on the host's page. */
  async function operator(): Promise<{ page: Page; ifMatch: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const ifMatch: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith(`/admin/agents/${hostId}/config`) && r.method() !== 'GET') ifMatch.push(r.headers()['if-match'] ?? '(none)');
    });
    await page.goto(`${server.http}/ui/`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Admin token').press('Enter');
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    await page.goto(`${server.http}/ui/#/hosts/${hostId}`);
    await expect.poll(() => page.getByLabel('AgentConfig (JSON)').inputValue()).toContain('heartbeat_interval_secs');
    return { page, ifMatch };
  }

  const editorOf = (page: Page) => page.getByLabel('AgentConfig (JSON)');
  async function edit(page: Page, change: Record<string, unknown>): Promise<string> {
    const current = JSON.parse(await editorOf(page).inputValue()) as Record<string, unknown>;
    const text = JSON.stringify({ ...current, ...change }, null, 2);
    await editorOf(page).fill(text);
    return text;
  }

  it('the second save of a config both loaded is refused (412) with what they typed kept and the stored config shown; they can keep theirs on purpose', async () => {
    const a = await operator();
    const b = await operator();
    expect((await stored()).config_version).toBe(0);

    await edit(a.page, { probe_concurrency: 2 });
    await a.page.getByRole('button', { name: 'Save config' }).click();
    await a.page.getByRole('status').filter({ hasText: 'Saved as version 1' }).waitFor();

    const typed = await edit(b.page, { heartbeat_interval_secs: 11 });
    await b.page.getByRole('button', { name: 'Save config' }).click();
    const alert = b.page.locator('.conflict[role="alert"]');
    await alert.waitFor();
    expect(await alert.textContent()).toContain("someone else changed this host's config after you loaded it (you loaded version 0; it is version 1 now)");
    // nothing of B's stored, A's change intact
    expect((await stored()).stored).toMatchObject({ probe_concurrency: 2, heartbeat_interval_secs: 30 });
    expect(b.ifMatch).toEqual(['"0"']); // the version B loaded
    // B's text is still in the editor, the config stored now beside it, Save held back
    expect(await editorOf(b.page).inputValue()).toBe(typed);
    expect(await b.page.getByLabel('Config stored now (version 1)').textContent()).toContain('"probe_concurrency": 2');
    expect(await b.page.getByRole('button', { name: 'Save config' }).isDisabled()).toBe(true);
    await b.page.screenshot({ path: join(SCREENSHOT_DIR, 'config-conflict.png'), fullPage: true });

    // B keeps their text on purpose: the next save replaces version 1 (If-Match "1")
    await b.page.getByRole('button', { name: 'Keep my text, to save over version 1' }).click();
    expect(await editorOf(b.page).inputValue()).toBe(typed);
    await b.page.getByRole('button', { name: 'Save config' }).click();
    await b.page.getByRole('status').filter({ hasText: 'Saved as version 2' }).waitFor();
    expect(b.ifMatch).toEqual(['"0"', '"1"']);
    expect(await stored()).toMatchObject({ config_version: 2, stored: { heartbeat_interval_secs: 11, probe_concurrency: 4 } });
  });

  it('loading the stored config after a refused save keeps the text typed on the page, to put back; a refused "Use the server default" too', async () => {
    const [a] = contexts;
    const page = a!.pages()[0]!; // operator A: still at version 1, which B replaced
    const typed = await edit(page, { metrics_interval_secs: 17 });
    await page.getByRole('button', { name: 'Save config' }).click();
    await page.locator('.conflict[role="alert"]').waitFor();
    await page.getByRole('button', { name: 'Load version 2 into the editor' }).click();
    const loaded = JSON.parse(await editorOf(page).inputValue()) as Record<string, unknown>;
    expect(loaded).toMatchObject({ heartbeat_interval_secs: 11, probe_concurrency: 4 });
    await page.getByText('Your text before you loaded the stored config').first().click(); // open the <details>
    expect(await page.getByLabel('Your text before you loaded the stored config').textContent()).toBe(typed);
    await page.getByRole('button', { name: 'Put it back in the editor' }).click();
    expect(await editorOf(page).inputValue()).toBe(typed);

    // someone changes it again (a script, no If-Match: unconditional, as before)
    const script = await api(`/admin/agents/${hostId}/config`, { method: 'PUT', body: JSON.stringify({ config: { ...loaded, probe_concurrency: 3 } }) });
    expect(script.status).toBe(200);
    expect(script.headers.get('etag')).toBe('"3"');
    await page.getByRole('button', { name: 'Use the server default' }).click();
    await page.locator('.conflict[role="alert"]').waitFor();
    expect((await stored()).stored).toMatchObject({ probe_concurrency: 3 }); // not cleared
    expect(await editorOf(page).inputValue()).toBe(typed);
  });

  it('Sign out ends the session on the server: a copy of its cookie is refused afterwards (401)', async () => {
    const context = contexts[1]!;
    const page = context.pages()[0]!;
    const cookie = (await context.cookies()).find((c) => c.name === 'cortex_session');
    expect(cookie).toBeDefined();
    const copied = `cortex_session=${cookie!.value}`;
    expect((await fetch(`${server.http}/admin/agents`, { headers: { Cookie: copied } })).status).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the Cortex console' }).waitFor();
    const after = await fetch(`${server.http}/admin/agents`, { headers: { Cookie: copied } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { message: string } }).error.message).toContain('sign in again');
    const session = (await (await fetch(`${server.http}/admin/session`, { headers: { Cookie: copied } })).json()) as { authenticated: boolean };
    expect(session.authenticated).toBe(false);
  });
});
