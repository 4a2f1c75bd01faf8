// Case results and the three output formats: the human summary (one line per case, last
// line "N passed, M failed[, K skipped]"), JUnit XML and one JSON object.
import { writeFileSync } from 'node:fs';

export type Status = 'PASS' | 'FAIL' | 'SKIP';

export interface CaseResult {
  id: string;
  status: Status;
  /** What the contract requires. */
  expected: string;
  /** What the target did (or why the case was skipped). */
  seen: string;
  durationMs: number;
  /** Listed in --expect-fail: a FAIL does not fail the run, a PASS does. */
  expectedFail?: boolean;
}

/** Thrown inside a case to fail it with an expected/seen pair. */
export class CaseFailure extends Error {
  constructor(
    readonly expected: string,
    readonly seen: string,
  ) {
    super(`expected ${expected}; seen ${seen}`);
  }
}

/** Thrown inside a case to skip it (missing options, not applicable to this target). */
export class CaseSkip extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export function summaryLine(results: readonly CaseResult[]): string {
  const count = (pred: (r: CaseResult) => boolean) => results.filter(pred).length;
  const passed = count((r) => r.status === 'PASS' && !r.expectedFail);
  const failed = count((r) => r.status === 'FAIL' && !r.expectedFail);
  const skipped = count((r) => r.status === 'SKIP');
  const xfail = count((r) => r.status === 'FAIL' && r.expectedFail === true);
  const xpass = count((r) => r.status === 'PASS' && r.expectedFail === true);
  return `${passed} passed, ${failed} failed, ${skipped} skipped${xfail > 0 ? `, ${xfail} expected failures` : ''}${xpass > 0 ? `, ${xpass} unexpected passes` : ''}`;
}

/** PASS|FAIL|SKIP, or XFAIL / XPASS for a case listed in --expect-fail. */
export function label(r: CaseResult): string {
  if (r.expectedFail) return r.status === 'FAIL' ? 'XFAIL' : r.status === 'PASS' ? 'XPASS' : r.status;
  return r.status;
}

export function caseLine(r: CaseResult): string {
  if (r.status === 'SKIP') return `SKIP ${r.id} — ${r.seen}`;
  if (r.expectedFail && r.status === 'PASS') return `XPASS ${r.id} — listed in --expect-fail but passed (remove it from the list); expected ${r.expected}; seen ${r.seen}`;
  return `${label(r)} ${r.id} — expected ${r.expected}; seen ${r.seen}`;
}

function xml(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function junitXml(suite: string, results: readonly CaseResult[]): string {
  // An expected failure (--expect-fail) is reported as skipped with its reason; an unexpected
  // pass of a listed case is a failure, so CI shows both the way the exit status does.
  const failing = (r: CaseResult) => (r.status === 'FAIL' && !r.expectedFail) || (r.status === 'PASS' && r.expectedFail === true);
  const skipping = (r: CaseResult) => r.status === 'SKIP' || (r.status === 'FAIL' && r.expectedFail === true);
  const failed = results.filter(failing).length;
  const skipped = results.filter(skipping).length;
  const total = results.reduce((n, r) => n + r.durationMs, 0) / 1000;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="cortex-conformance" tests="${results.length}" failures="${failed}" errors="0" skipped="${skipped}" time="${total.toFixed(3)}">`,
    `  <testsuite name="${xml(suite)}" tests="${results.length}" failures="${failed}" errors="0" skipped="${skipped}" time="${total.toFixed(3)}">`,
  ];
  for (const r of results) {
    const slash = r.id.lastIndexOf('/');
    const classname = `${suite}.${slash > 0 ? r.id.slice(0, slash).replace(/\//g, '.') : 'case'}`;
    const open = `    <testcase classname="${xml(classname)}" name="${xml(r.id)}" time="${(r.durationMs / 1000).toFixed(3)}"`;
    if (failing(r)) {
      const msg = r.status === 'PASS' ? `listed in --expect-fail but passed: remove it from the list (seen ${r.seen})` : `expected ${r.expected}; seen ${r.seen}`;
      lines.push(`${open}>`, `      <failure message="${xml(msg)}" type="${r.status === 'PASS' ? 'unexpected-pass' : 'conformance'}">${xml(msg)}</failure>`, '    </testcase>');
    } else if (skipping(r)) {
      const msg = r.status === 'SKIP' ? r.seen : `expected failure (--expect-fail): expected ${r.expected}; seen ${r.seen}`;
      lines.push(`${open}>`, `      <skipped message="${xml(msg)}"/>`, '    </testcase>');
    } else lines.push(`${open}/>`);
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}

export interface ReportOptions {
  suite: 'server' | 'agent';
  target: string;
  /** One JSON object for the run, its `cases` one object per case. */
  json: boolean;
  /** One JSON object per case as it finished (already written), then the summary object. */
  jsonLines?: boolean;
  junit: string | undefined;
  /** --strict: any skipped case fails the run. */
  strict?: boolean;
  /** --expect-fail FILE: ids read from it (and the file name, for messages). */
  expectFail?: ExpectFailList | undefined;
  /** Set when the target could not be reached or talked to at all. */
  fatal?: string | undefined;
  /** How many of the results were already printed as they finished (text and --json-lines): not printed again. */
  printed?: number;
}

/** The known-failing list of --expect-fail FILE: one case id per line, # comments. */
export interface ExpectFailList {
  file: string;
  ids: Set<string>;
}

export function parseExpectFail(file: string, text: string): ExpectFailList {
  const ids = new Set<string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/#.*/, '').trim();
    if (line !== '') ids.add(line);
  }
  return { file, ids };
}

/** Marks the cases listed in the known-failing list. */
export function applyExpectFail(results: CaseResult[], list: ExpectFailList | undefined): void {
  if (list === undefined) return;
  for (const r of results) if (list.ids.has(r.id)) r.expectedFail = true;
}

/** Why the run fails (empty: it passes). */
export function runProblems(results: readonly CaseResult[], opts: Pick<ReportOptions, 'strict' | 'expectFail' | 'fatal'>): string[] {
  const out: string[] = [];
  if (opts.fatal !== undefined) out.push(opts.fatal);
  const failed = results.filter((r) => r.status === 'FAIL' && !r.expectedFail);
  if (failed.length > 0) out.push(`${failed.length} case(s) failed: ${failed.slice(0, 5).map((r) => r.id).join(', ')}${failed.length > 5 ? ', …' : ''}`);
  const xpass = results.filter((r) => r.status === 'PASS' && r.expectedFail === true);
  if (xpass.length > 0) out.push(`${xpass.length} case(s) listed in --expect-fail ${opts.expectFail?.file ?? ''} passed; remove them from the list: ${xpass.map((r) => r.id).join(', ')}`);
  if (opts.strict) {
    const skipped = results.filter((r) => r.status === 'SKIP');
    if (skipped.length > 0) out.push(`--strict: ${skipped.length} case(s) skipped: ${skipped.slice(0, 5).map((r) => `${r.id} (${r.seen})`).join('; ')}${skipped.length > 5 ? '; …' : ''}`);
    if (opts.expectFail !== undefined) {
      const ran = new Set(results.map((r) => r.id));
      const stale = [...opts.expectFail.ids].filter((id) => !ran.has(id));
      if (stale.length > 0) out.push(`--strict: --expect-fail ${opts.expectFail.file} lists case(s) that did not run: ${stale.join(', ')}`);
    }
  }
  return out;
}

export function caseJson(r: CaseResult): Record<string, unknown> {
  return {
    id: r.id,
    status: r.status,
    ...(r.expectedFail ? { expected_fail: true } : {}),
    expected: r.expected,
    seen: r.seen,
    duration_ms: Math.round(r.durationMs),
  };
}

/** Prints the report and returns the exit code (0 only when the run passes and the target was reachable). */
export function report(results: CaseResult[], opts: ReportOptions): number {
  applyExpectFail(results, opts.expectFail);
  if (opts.junit !== undefined) writeFileSync(opts.junit, junitXml(opts.suite, results));
  const problems = runProblems(results, opts);
  const failed = problems.length > 0;
  const counts = {
    passed: results.filter((r) => r.status === 'PASS' && !r.expectedFail).length,
    failed: results.filter((r) => r.status === 'FAIL' && !r.expectedFail).length,
    skipped: results.filter((r) => r.status === 'SKIP').length,
    expected_failures: results.filter((r) => r.status === 'FAIL' && r.expectedFail === true).length,
    unexpected_passes: results.filter((r) => r.status === 'PASS' && r.expectedFail === true).length,
  };
  const head = { suite: opts.suite, target: opts.target, ok: !failed, ...(opts.fatal !== undefined ? { error: opts.fatal } : {}), ...counts };
  if (opts.jsonLines) {
    // results added after the last streamed one (server/reachable) get their line too
    for (const r of results.slice(opts.printed ?? results.length)) process.stdout.write(`${JSON.stringify(caseJson(r))}\n`);
    process.stdout.write(`${JSON.stringify({ summary: true, ...head, ...(problems.length ? { problems } : {}) })}\n`);
  } else if (opts.json) {
    process.stdout.write(`${JSON.stringify({ ...head, ...(problems.length ? { problems } : {}), cases: results.map(caseJson) })}\n`);
  } else {
    const out = results.slice(opts.printed ?? 0).map(caseLine);
    out.push(summaryLine(results));
    process.stdout.write(`${out.join('\n')}\n`);
  }
  for (const p of problems) if (p !== opts.fatal) process.stderr.write(`cortex-conformance: ${p}\n`);
  return failed ? 1 : 0;
}

/** Thrown by Runner.run after the first failure when the runner bails (--bail): ends the suite. */
export class BailOut extends Error {
  constructor(readonly caseId: string) {
    super(`stopped after the first failure (${caseId}; --bail)`);
  }
}

/** Runs cases one after the other, turning CaseFailure/CaseSkip/other errors into results. */
/**
 * --only ID[,ID…]: the cases to run; an ID ending in "*" selects every case id starting with
 * what comes before it ("ingest/*"). Unknown ids are not an error (the list may name cases of
 * another suite or target).
 */
export function parseOnly(value: string): { patterns: string[]; matches(id: string): boolean } {
  const patterns = value.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
  return {
    patterns,
    matches: (id) => patterns.some((pat) => (pat.endsWith('*') ? id.startsWith(pat.slice(0, -1)) : id === pat)),
  };
}

export class Runner {
  readonly results: CaseResult[] = [];
  /** --bail: stop the suite at the first failure (a case listed in --expect-fail does not count). */
  bail: { expectFail: ExpectFailList | undefined } | undefined;
  /** --only: cases not selected are skipped (their body does not run), saying so. */
  only: { matches(id: string): boolean } | undefined;
  /**
   * Set by a suite: given a failing case's id and when it started (Date.now()), the reason it could not be
   * judged when the target broke the connection under it for a fault another case reports (the
   * agent suite: a frame over the limit, agent/frames-within-limit); the case is then SKIPPED
   * with that reason instead of failing as a consequence. undefined: it fails.
   */
  consequence: ((id: string, startedAt: number) => string | undefined) | undefined;
  /** Set by a suite: called before each case that runs (the agent suite follows the agent to its live session). */
  beforeEach: (() => void) | undefined;
  /**
   * Set by a suite: a case that cannot run now, because an earlier step it needs did not happen
   * (the agent suite: the agent lost its credential), gets this reason and is SKIPPED without
   * running; undefined: it runs. Never silently left out: the case is listed and counted.
   */
  gate: ((id: string) => string | undefined) | undefined;
  constructor(private readonly onResult?: (r: CaseResult) => void) {}

  private record(r: CaseResult): void {
    this.results.push(r);
    this.onResult?.(r);
    if (this.bail !== undefined && r.status === 'FAIL' && !this.bail.expectFail?.ids.has(r.id)) throw new BailOut(r.id);
  }

  async run(id: string, expected: string, body: () => Promise<string | void>): Promise<CaseResult> {
    if (this.only !== undefined && !this.only.matches(id)) return this.skip(id, expected, 'not selected by --only');
    const reason = this.gate?.(id);
    if (reason !== undefined) return this.skip(id, expected, reason);
    this.beforeEach?.();
    const t0 = performance.now();
    const startedAt = Date.now();
    let r: CaseResult;
    try {
      const seen = await body();
      r = { id, status: 'PASS', expected, seen: seen ?? 'as expected', durationMs: performance.now() - t0 };
    } catch (err) {
      const durationMs = performance.now() - t0;
      const consequence = err instanceof CaseSkip ? undefined : this.consequence?.(id, startedAt);
      if (err instanceof CaseSkip) r = { id, status: 'SKIP', expected, seen: err.reason, durationMs };
      else if (consequence !== undefined) {
        const saw = err instanceof CaseFailure ? `expected ${err.expected}; seen ${err.seen}` : ((err as Error)?.message ?? String(err));
        r = { id, status: 'SKIP', expected, seen: `${consequence} (the case saw: ${saw.length > 160 ? `${saw.slice(0, 159)}…` : saw})`, durationMs };
      }
      else if (err instanceof CaseFailure) r = { id, status: 'FAIL', expected: err.expected, seen: err.seen, durationMs };
      else r = { id, status: 'FAIL', expected, seen: `error: ${(err as Error)?.message ?? String(err)}`, durationMs };
    }
    this.record(r);
    return r;
  }

  /** Records a failure found outside any case's body (the suite could not go on). */
  fail(id: string, expected: string, seen: string): CaseResult {
    const r: CaseResult = { id, status: 'FAIL', expected, seen, durationMs: 0 };
    this.record(r);
    return r;
  }

  skip(id: string, expected: string, reason: string): CaseResult {
    const r: CaseResult = { id, status: 'SKIP', expected, seen: reason, durationMs: 0 };
    this.record(r);
    return r;
  }
}

/** Fail the current case unless `ok`. */
export function expect(ok: boolean, expected: string, seen: string): void {
  if (!ok) throw new CaseFailure(expected, seen);
}

/** JSON for messages, never throwing on undefined; cut to n characters. */
export function js(v: unknown, n = 200): string {
  return String(JSON.stringify(v)).slice(0, n);
}
