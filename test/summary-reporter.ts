// Ends a test run with the plain line "N passed, M failed[, K skipped]" (what CI reads to
// tell a run that tested nothing from one that passed). With CORTEX_TEST_DURATIONS=1 (what
// `npm run test:durations` sets) it also writes each file's duration to test/durations.json,
// which test/support/duration-sequencer.ts reads to start the longest files first.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { DURATIONS_FILE } from './support/duration-sequencer.js';

export default class SummaryReporter implements Reporter {
  private root = process.cwd();

  onInit(ctx: Vitest): void {
    this.root = ctx.config.root;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (process.env['CORTEX_TEST_DURATIONS'] === '1') this.writeDurations(testModules);
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) failed++; // a file that failed to load
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }

  /** Seconds per file (set-up, collection and tests: the time a worker spends on it), longest first. */
  private writeDurations(testModules: ReadonlyArray<TestModule>): void {
    const rows = testModules.map((m) => {
      const d = m.diagnostic();
      const s = (d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration) / 1000;
      return [`${m.project.name}:${relative(this.root, m.moduleId)}`, Math.round(s * 10) / 10] as const;
    });
    rows.sort((a, b) => b[1] - a[1]);
    const note = 'seconds per test file of a full run (CI=true npm run test:durations); read by test/support/duration-sequencer.ts';
    writeFileSync(DURATIONS_FILE, `${JSON.stringify({ note, written: new Date().toISOString(), files: Object.fromEntries(rows) }, null, 1)}\n`);
  }
}
