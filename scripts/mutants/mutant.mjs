// Shared by run-server.mjs and run-agent.mjs: which module the active mutant is in (its
// --only case list) and one line per tested mutant in $CORTEX_MUTANTS_LOG (the case that
// killed it, for conformance/MUTANTS.md).
import { appendFileSync, readFileSync } from 'node:fs';
import { moduleOf } from './ranges.mjs';

/** The active mutant's id, file and --only list (none in the dry run: every case runs). */
export function activeMutant() {
  const id = process.env.__STRYKER_ACTIVE_MUTANT__;
  if (id === undefined) return { id: undefined, file: undefined, only: [] };
  let file;
  try {
    file = JSON.parse(readFileSync('dist/mutants.json', 'utf8'))[id];
  } catch {
    file = undefined;
  }
  const cases = file === undefined ? undefined : moduleOf(file)?.cases;
  return { id, file, only: cases === undefined ? [] : ['--only', cases.join(',')] };
}

/** The runner's output → the first failing case id (or null). */
export function failedCase(out) {
  const m = /^FAIL (\S+)/m.exec(out);
  return m ? m[1] : null;
}

export function record(entry) {
  const log = process.env.CORTEX_MUTANTS_LOG;
  if (log) appendFileSync(log, `${JSON.stringify(entry)}\n`);
}
