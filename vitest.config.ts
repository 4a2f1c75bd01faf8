import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two shared cores: keep parallelism modest so timing-sensitive protocol tests stay honest.
    maxWorkers: 2,
  },
});
