import { defineConfig } from 'vitest/config';
import DurationSequencer from './test/support/duration-sequencer.js';
import { postgresProject } from './test/support/postgres-project.js';

// The storage suites run twice: once on SQLite (the "sqlite" project, every test file) and
// once on PostgreSQL (the "postgres" project: the files in STORAGE_SUITES, with
// CORTEX_TEST_DIALECT=postgres so their helpers open a fresh PostgreSQL schema). Without a
// reachable PostgreSQL the second project is left out with one line saying how to enable
// it; under CI=true that is a failure instead (test/support/postgres-project.ts).
const shared = {
  reporters: ['default', './test/summary-reporter.ts'],
  pool: 'forks' as const,
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // expect.poll waits for a state to come (it returns as soon as it has): 1 s, its default, was
  // shorter than a page's debounce plus a request on a loaded machine
  expect: { poll: { timeout: 10_000 } },
  // Two shared cores: keep parallelism modest so timing-sensitive protocol tests stay honest.
  maxWorkers: 2,
  // the longest files first, from test/durations.json on a fresh clone (see that file)
  sequence: { sequencer: DurationSequencer },
  // dist/ up to date and the CLIs bundled once for every file that spawns them (test/support/cli-bundles.ts)
  globalSetup: ['./test/support/global-setup.ts'],
};

export default defineConfig(async () => {
  const postgres = await postgresProject();
  return {
    test: {
      ...shared,
      projects: [
        { extends: true, test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: ['test/**/*.pg.test.ts'] } },
        ...(postgres === undefined ? [] : [{ extends: true, test: { name: 'postgres', ...postgres } }]),
      ],
    },
  };
});
