// Headless Chromium for the console tests and the console bench: Debian's /usr/bin/chromium
// driven by playwright-core (no browser download).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { expect } from 'vitest';
import { AGENT_CLI, ROOT, captured } from '../support/procs.js';
import { cliAsync } from '../support/scli-pool.js';

export const CHROMIUM = process.env['CORTEX_CHROMIUM'] ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);
/** Screenshots of each page: inside the git-ignored dist/. */
export const SCREENSHOT_DIR = join(new URL('../..', import.meta.url).pathname, 'dist', 'screenshots', 'console');

/** Under CI=true a missing Chromium fails the run; locally the tests are skipped with one line. */
export function chromiumGate(suite: string): boolean {
  if (HAVE_CHROMIUM) return true;
  if (process.env['CI'] === 'true') throw new Error(`${suite}: CI=true needs Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  console.log(`${suite}: skipped, no Chromium at ${CHROMIUM} (apt-get install -y chromium to run it)`);
  return false;
}

export function launch(): Promise<Browser> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
}

/**
 * `cortex-agent enroll` (without blocking the page; its output kept in `captured`, as cliSync
 * keeps it) into `stateDir`, then `cortex-agent run` there. `trust`: `--allow-insecure` for a
 * ws:// server, or `--ca FILE`. Returns the running agent.
 */
export async function enrollAndStart(serverUrl: string, hostId: string, token: string, stateDir: string, trust: string[]): Promise<ChildProcess> {
  const r = await cliAsync(['enroll', '--server', serverUrl, '--host-id', hostId, `--token=${token}`, '--state-dir', stateDir, ...trust, '--json'], { script: AGENT_CLI });
  captured.push(r.stdout, r.stderr);
  expect(r.code, r.stderr).toBe(0);
  const child = spawn(process.execPath, [AGENT_CLI, 'run', '--state-dir', stateDir, ...trust.filter((a) => a === '--allow-insecure')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.resume();
  return child;
}
