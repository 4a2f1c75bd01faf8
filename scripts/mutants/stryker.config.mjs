// StrykerJS configuration for `npm run conformance:mutants` (scripts/mutants/run.mjs sets
// CORTEX_MUTANTS_SIDE=server|agent). Why the command runner and not @stryker-mutator/vitest-runner:
// the tests are the conformance runner's suites against the compiled reference server and
// agent as child processes (the agent suite SIGKILLs and restarts its agent), and only the
// command runner hands the active mutant to child processes (__STRYKER_ACTIVE_MUTANT__);
// the vitest runner switches mutants inside its own worker. See contract/DECISIONS.md K7.
import { mutateList } from './ranges.mjs';

const side = process.env.CORTEX_MUTANTS_SIDE === 'agent' ? 'agent' : 'server';
// CORTEX_MUTANTS_MUTATE="file:from-to,..." narrows the scope (a quick check of the setup).
const mutate = process.env.CORTEX_MUTANTS_MUTATE ? process.env.CORTEX_MUTANTS_MUTATE.split(',') : mutateList(side);

export default {
  testRunner: 'command',
  commandRunner: { command: process.env.CORTEX_MUTANTS_COMMAND ?? `node scripts/mutants/run-${side}.mjs` },
  // The sandbox gets the pre-built dist/ and only the instrumented files are transpiled over
  // it (build-mutated.mjs, esbuild; mutant switching reads the environment variable at run
  // time, so one build serves every mutant). A full `tsc -b` here took minutes per side.
  buildCommand: process.env.CORTEX_MUTANTS_COUNT ? undefined : `node scripts/mutants/build-mutated.mjs ${[...new Set(mutate.map((m) => m.replace(/:.*$/, '')))].join(' ')}`,
  mutate,
  mutator: {
    // Log lines and message texts are not wire rules the runner can observe; object
    // literals here are log fields and error data the runner does not check.
    excludedMutations: ['StringLiteral', 'ObjectLiteral', 'ArrowFunction', 'OptionalChaining', 'Regex', 'ArrayDeclaration'],
  },
  coverageAnalysis: 'off',
  // run.mjs runs both sides at once: the server side is CPU-bound (2 slots on 2 cores), the
  // agent side mostly waits on the agent's own timers (backoff, quiet windows), so it takes
  // more slots (CORTEX_MUTANTS_CONCURRENCY; DECISIONS K7).
  concurrency: Number(process.env.CORTEX_MUTANTS_CONCURRENCY) || 2,
  // A mutant's time limit is its dry run's time × timeoutFactor + timeoutMS: a hung server or
  // agent is mostly caught sooner by the runner's own --timeout-ms per answer.
  timeoutMS: 10_000,
  timeoutFactor: 1.5,
  dryRunTimeoutMinutes: 5,
  disableTypeChecks: true,
  // One sandbox directory per side: the two sides run at the same time.
  tempDirName: `.stryker-tmp/${side}`,
  cleanTempDir: true,
  // dist/ is copied (see buildCommand).
  ignorePatterns: ['reports', 'data', 'artifacts', '.stryker-tmp'],
  // progress-append-only: the two sides' output is interleaved line by line (run.mjs prefixes it).
  reporters: ['clear-text', 'progress-append-only', 'json'],
  jsonReporter: { fileName: `reports/mutation/${side}.json` },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  thresholds: { high: 90, low: 80, break: null },
};
