// Headless Chromium for the console tests and the console bench: Debian's /usr/bin/chromium
// driven by playwright-core (no browser download).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

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
