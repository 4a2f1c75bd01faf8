/// <reference lib="dom" />
// The console's enroll cards in headless Chromium against the compiled server (DECISIONS I33):
// after "Issue enrollment token" and after a host's "New enrollment token", the card shows first
// the API's `enroll_command_stdin` (`--token -`: no token on the host's command line, in ps or
// the shell history), with its copy button, then the token with its own copy button; the
// one-line `enroll_command` (`--token TOKEN`) is folded away behind a disclosure that says what
// it costs. The command as copied, run for real in a POSIX shell (`cortex-agent` is the compiled
// agent CLI on PATH), enrolls with the token on stdin and with `< token-file`. The token is in no
// URL, sessionStorage or localStorage, nor in the server's log.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellQuote } from '../../common/shell-quote.js';
import { AGENT_CLI, cleanupTempDirs, requireDist, startServer, tempDir, tokens, type ServerProc } from '../support/procs.js';
import { SCREENSHOT_DIR, chromiumGate, launch } from './browser.js';

const ADMIN_TOKEN = 'browser-enroll-stdin-admin-token-5a7c3e92';
const run = chromiumGate('console enroll-stdin browser tests');

interface Issued {
  host_id: string;
  hostname: string;
  token: string;
  server_url: string;
  enroll_command_stdin: string;
  enroll_command: string;
}

describe.skipIf(!run)('console: the enroll cards show the command that reads the token from stdin first', () => {
  let server: ServerProc;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let dir: string;
  let bin: string;
  let hostId: string;

  beforeAll(async () => {
    requireDist();
    dir = tempDir('cortex-console-enroll-stdin-');
    server = await startServer(join(dir, 'server.db'), ['--admin-token', ADMIN_TOKEN]);
    tokens.add(ADMIN_TOKEN);
    // `cortex-agent` as the host would have it: the compiled agent CLI
    bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'cortex-agent'), `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(AGENT_CLI)} "$@"\n`, { mode: 0o755 });
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.http });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${server.http}/ui/`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Admin token').press('Enter');
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.kill();
    const leaks = [...tokens].filter((t) => server?.stderr().includes(t));
    cleanupTempDirs();
    expect(leaks, 'a token appeared in the server log').toEqual([]);
  });

  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

  /** What the page keeps where it could outlive the page: the URL and the tab's storage. */
  const kept = () => page.evaluate(() => [location.href, JSON.stringify({ ...sessionStorage }), JSON.stringify({ ...localStorage })].join('\n'));

  /**
   * `command` (a copied enroll command) run by /bin/sh as it is, but for its state folder
   * (/var/lib/cortex-agent becomes `stateDir`), the token on stdin or from `tokenFile`.
   */
  function runCopied(command: string, stateDir: string, from: { stdin: string } | { tokenFile: string }) {
    expect(command).toContain(' --state-dir /var/lib/cortex-agent');
    const local = command.replace(' --state-dir /var/lib/cortex-agent', ` --state-dir ${shellQuote(stateDir)}`);
    const line = 'tokenFile' in from ? `${local} < ${shellQuote(from.tokenFile)}` : local;
    const r = spawnSync('/bin/sh', ['-c', line], {
      cwd: dir,
      env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` },
      encoding: 'utf8',
      ...('stdin' in from ? { input: from.stdin } : { stdio: ['ignore', 'pipe', 'pipe'] }),
      timeout: 30_000,
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /** The card's parts in order, its copy buttons, and what each copies. */
  async function checkCard(card: Locator, issued: Issued): Promise<void> {
    const command = card.getByLabel('Enroll command', { exact: true });
    expect(await command.textContent()).toBe(issued.enroll_command_stdin);
    expect(issued.enroll_command_stdin).toContain(' --token - ');
    expect(await command.textContent()).not.toContain(issued.token);
    expect(await card.getByLabel('Enrollment token', { exact: true }).textContent()).toBe(issued.token);
    // first the command, then the token; the one-line form last, folded away
    expect(await card.locator('[aria-label]').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')))).toEqual(['Enroll command', 'Enrollment token', 'One-line command with the token']);
    expect(await card.getByRole('button').allTextContents()).toEqual(['Copy command', 'Copy token']);
    const oneLine = card.getByLabel('One-line command with the token', { exact: true });
    expect(await oneLine.isVisible()).toBe(false);
    expect(await card.locator('details > summary').textContent()).toBe('One line, token on the command line (visible to other users in ps)');
    expect(await card.evaluate((el) => (el as HTMLElement).innerText)).not.toContain(issued.enroll_command);
    expect(await card.locator('p.help').first().textContent()).toBe(
      'Run this on the host; paste the token when it asks for it (nothing is shown as you type), or pipe it from a file: … < token-file. The token is on no command line, so ps and the shell history do not keep it.',
    );
    // the command described by that instruction (screen readers read it with the command)
    expect(await command.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent)).toContain('paste the token when it asks for it');

    // each copy button copies its own text and says so beside it (a status, announced)
    await card.getByRole('button', { name: 'Copy token', exact: true }).click();
    await card.getByRole('status').filter({ hasText: 'Token copied.' }).waitFor();
    expect(await clipboard()).toBe(issued.token);
    await card.getByRole('button', { name: 'Copy command', exact: true }).click();
    await card.getByRole('status').filter({ hasText: 'Command copied.' }).waitFor();
    expect(await card.getByRole('status').allTextContents()).toEqual(['Command copied.', '']);
    expect(await clipboard()).toBe(issued.enroll_command_stdin);
    // the button pressed keeps the focus (it is not drawn anew when its status changes)
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Copy command');

    // nothing keeps the token beyond the page
    expect(await kept()).not.toContain(issued.token);
  }

  it('after issuing a host: the stdin command first, then the token; the copied command enrolls with the token on stdin', async () => {
    await page.getByRole('link', { name: 'Enroll a host' }).click();
    await page.getByLabel('Hostname of the new host').fill('stdin-host');
    const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/admin/agents');
    await page.getByRole('button', { name: 'Issue enrollment token' }).click();
    const issued = (await (await answer).json()) as Issued;
    tokens.add(issued.token);
    hostId = issued.host_id;
    const card = page.locator('section.issued');
    await card.getByRole('heading', { name: 'Token for stdin-host' }).waitFor();
    await checkCard(card, issued);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'enroll-stdin-card.png'), fullPage: true });

    const copied = await clipboard();
    const stateDir = join(dir, 'state-issued');
    const r = runCopied(copied, stateDir, { stdin: `${issued.token}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(`${r.stdout}${r.stderr}`).not.toContain(issued.token);
    expect(existsSync(join(stateDir, 'token'))).toBe(true);
    const agent = (await (await fetch(`${server.http}/admin/agents/${hostId}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { first_seen: string | null };
    expect(agent.first_seen).not.toBe(null);

    // the one-line form is there for those who want it, behind the disclosure, and says what it costs
    await card.locator('details > summary').click();
    const oneLine = card.getByLabel('One-line command with the token', { exact: true });
    await oneLine.waitFor();
    expect(await oneLine.textContent()).toBe(issued.enroll_command);
    await card.screenshot({ path: join(SCREENSHOT_DIR, 'enroll-stdin-card-one-line.png') });
    expect(await card.locator('details p.help').textContent()).toContain('every user on the host can read the token in ps');
    await card.getByRole('button', { name: 'Copy one-line command', exact: true }).click();
    await card.getByRole('status').filter({ hasText: 'One-line command copied.' }).waitFor();
    expect(await clipboard()).toBe(issued.enroll_command);
    expect(await kept()).not.toContain(issued.token);
  }, 60_000);

  it("after a host's New enrollment token: the same card; the copied command enrolls with < token-file", async () => {
    await page.goto(`${server.http}/ui/#/hosts/${hostId}`);
    await page.getByRole('heading', { name: 'stdin-host' }).waitFor();
    await page.getByRole('button', { name: 'New enrollment token' }).click();
    const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/admin/agents/${hostId}/token`);
    await page.getByRole('dialog').getByRole('button', { name: 'Issue a new token for stdin-host' }).click();
    const issued = (await (await answer).json()) as Issued;
    tokens.add(issued.token);
    await page.getByRole('status').filter({ hasText: 'New one-time enrollment token for stdin-host: shown below, only here.' }).waitFor();
    const card = page.locator('section.issued');
    await card.getByRole('heading', { name: 'New enrollment token for stdin-host' }).waitFor();
    await checkCard(card, issued);
    await card.screenshot({ path: join(SCREENSHOT_DIR, 'reissue-stdin-card.png') });

    const copied = await clipboard();
    const tokenFile = join(dir, 'token-file');
    writeFileSync(tokenFile, `${issued.token}\n`, { mode: 0o600 });
    const stateDir = join(dir, 'state-reissued');
    const r = runCopied(copied, stateDir, { tokenFile });
    expect(r.code, r.stderr).toBe(0);
    expect(`${r.stdout}${r.stderr}`).not.toContain(issued.token);
    expect(existsSync(join(stateDir, 'token'))).toBe(true);
    expect(await kept()).not.toContain(issued.token);
  }, 60_000);
});
