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
  const passed = results.filter((r) => r.status === 'PASS').length;
  const failed = results.filter((r) => r.status === 'FAIL').length;
  const skipped = results.filter((r) => r.status === 'SKIP').length;
  return `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
}

export function caseLine(r: CaseResult): string {
  if (r.status === 'SKIP') return `SKIP ${r.id} — ${r.seen}`;
  return `${r.status} ${r.id} — expected ${r.expected}; seen ${r.seen}`;
}

function xml(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function junitXml(suite: string, results: readonly CaseResult[]): string {
  const failed = results.filter((r) => r.status === 'FAIL').length;
  const skipped = results.filter((r) => r.status === 'SKIP').length;
  const total = results.reduce((n, r) => n + r.durationMs, 0) / 1000;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="cortex-conformance" tests="${results.length}" failures="${failed}" skipped="${skipped}" time="${total.toFixed(3)}">`,
    `  <testsuite name="${xml(suite)}" tests="${results.length}" failures="${failed}" skipped="${skipped}" time="${total.toFixed(3)}">`,
  ];
  for (const r of results) {
    const slash = r.id.lastIndexOf('/');
    const classname = `${suite}.${slash > 0 ? r.id.slice(0, slash).replace(/\//g, '.') : 'case'}`;
    const open = `    <testcase classname="${xml(classname)}" name="${xml(r.id)}" time="${(r.durationMs / 1000).toFixed(3)}"`;
    if (r.status === 'PASS') lines.push(`${open}/>`);
    else if (r.status === 'SKIP') lines.push(`${open}>`, `      <skipped message="${xml(r.seen)}"/>`, '    </testcase>');
    else {
      const msg = `expected ${r.expected}; seen ${r.seen}`;
      lines.push(`${open}>`, `      <failure message="${xml(msg)}" type="conformance">${xml(msg)}</failure>`, '    </testcase>');
    }
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}

export interface ReportOptions {
  suite: 'server' | 'agent';
  target: string;
  json: boolean;
  junit: string | undefined;
  /** Set when the target could not be reached or talked to at all. */
  fatal?: string | undefined;
}

/** Prints the report and returns the exit code (0 only when nothing failed and the target was reachable). */
export function report(results: readonly CaseResult[], opts: ReportOptions): number {
  if (opts.junit !== undefined) writeFileSync(opts.junit, junitXml(opts.suite, results));
  const failed = results.some((r) => r.status === 'FAIL') || opts.fatal !== undefined;
  if (opts.json) {
    const obj = {
      suite: opts.suite,
      target: opts.target,
      ok: !failed,
      ...(opts.fatal !== undefined ? { error: opts.fatal } : {}),
      passed: results.filter((r) => r.status === 'PASS').length,
      failed: results.filter((r) => r.status === 'FAIL').length,
      skipped: results.filter((r) => r.status === 'SKIP').length,
      cases: results.map((r) => ({ id: r.id, status: r.status, expected: r.expected, seen: r.seen, duration_ms: Math.round(r.durationMs) })),
    };
    process.stdout.write(`${JSON.stringify(obj)}\n`);
  } else {
    const out = results.map(caseLine);
    out.push(summaryLine(results));
    process.stdout.write(`${out.join('\n')}\n`);
  }
  return failed ? 1 : 0;
}

/** Runs cases one after the other, turning CaseFailure/CaseSkip/other errors into results. */
export class Runner {
  readonly results: CaseResult[] = [];
  constructor(private readonly onResult?: (r: CaseResult) => void) {}

  async run(id: string, expected: string, body: () => Promise<string | void>): Promise<CaseResult> {
    const t0 = performance.now();
    let r: CaseResult;
    try {
      const seen = await body();
      r = { id, status: 'PASS', expected, seen: seen ?? 'as expected', durationMs: performance.now() - t0 };
    } catch (err) {
      const durationMs = performance.now() - t0;
      if (err instanceof CaseSkip) r = { id, status: 'SKIP', expected, seen: err.reason, durationMs };
      else if (err instanceof CaseFailure) r = { id, status: 'FAIL', expected: err.expected, seen: err.seen, durationMs };
      else r = { id, status: 'FAIL', expected, seen: `error: ${(err as Error)?.message ?? String(err)}`, durationMs };
    }
    this.results.push(r);
    this.onResult?.(r);
    return r;
  }

  skip(id: string, expected: string, reason: string): CaseResult {
    const r: CaseResult = { id, status: 'SKIP', expected, seen: reason, durationMs: 0 };
    this.results.push(r);
    this.onResult?.(r);
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
