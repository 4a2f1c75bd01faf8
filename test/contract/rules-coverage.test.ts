// Rule coverage: contract/rules.json numbers the rules of the seed (and of DESIGN.md's
// resolutions) that the implementation must hold. Each must be named by a test: either a
// test file under test/ contains the rule id (as the tests written for issue 15 do in their
// describe titles), or every covered_by entry of the rule exists — a test file that contains
// the given test title, or a conformance case id that a runner test asserts. Prints
// "rules covered: N of M"; fails when a rule is not covered or a reference is stale.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const RULES_FILE = join(ROOT, 'contract/rules.json');
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));

type Ref = { file: string; test: string } | { case: string };
interface Rule {
  id: string;
  source: string;
  rule: string;
  covered_by?: Ref[];
}

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...testFiles(p));
    else if (/\.(test\.ts|ts|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

const rules = (JSON.parse(readFileSync(RULES_FILE, 'utf8')) as { rules: Rule[] }).rules;
const files = new Map(testFiles(join(ROOT, 'test')).map((p) => [relative(ROOT, p), readFileSync(p, 'utf8')] as const));
/** The tests that assert conformance case outcomes against our server and agents. */
const runnerTests = [...files].filter(([p]) => /^test\/conformance\/.*\.test\.ts$/.test(p)).map(([, text]) => text);

/** Why a rule is not covered, or undefined when it is. */
function uncovered(rule: Rule): string | undefined {
  const word = new RegExp(`(^|[^A-Z0-9-])${rule.id.replace(/-/g, '\\-')}([^0-9]|$)`);
  const naming = [...files].filter(([p, text]) => p !== THIS_FILE && word.test(text)).map(([p]) => p);
  if (naming.length > 0) return undefined;
  const refs = rule.covered_by ?? [];
  if (refs.length === 0) return 'no test names it and it has no covered_by';
  for (const ref of refs) {
    if ('case' in ref) {
      if (!runnerTests.some((text) => text.includes(`'${ref.case}'`))) return `conformance case ${ref.case} is asserted by no test in test/conformance/`;
    } else {
      const text = files.get(ref.file);
      if (text === undefined) return `${ref.file} does not exist`;
      if (ref.test.trim().length < 8) return `${ref.file}: the test title "${ref.test}" is too short to name a test`;
      if (!text.includes(ref.test)) return `${ref.file} has no test "${ref.test}"`;
    }
  }
  return undefined;
}

describe('contract/rules.json: every rule is named by a test', () => {
  it('rules are numbered uniquely and well formed', () => {
    const ids = rules.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of rules) {
      expect(r.id).toMatch(/^R-[A-Z]+-\d{2}$/);
      expect(r.rule.length).toBeGreaterThan(10);
      expect(r.source.length).toBeGreaterThan(0);
    }
    expect(rules.length).toBeGreaterThanOrEqual(112);
  });

  it('every rule has a test that names it', () => {
    const missing = rules.map((r) => [r.id, uncovered(r)] as const).filter(([, why]) => why !== undefined);
    console.log(`rules covered: ${rules.length - missing.length} of ${rules.length}`);
    expect(missing.map(([id, why]) => `${id}: ${why}`)).toEqual([]);
  });

  it('the check notices a rule nobody tests and a stale reference', () => {
    expect(uncovered({ id: 'R-ZZZ-99', source: 'test', rule: 'a rule with no test at all' })).toMatch(/no test names it/);
    expect(uncovered({ id: 'R-ZZZ-98', source: 'test', rule: 'a rule with a stale reference', covered_by: [{ file: 'test/server/handshake.test.ts', test: 'a title no test has' }] })).toMatch(/has no test/);
    expect(uncovered({ id: 'R-ZZZ-97', source: 'test', rule: 'a rule with an unasserted case', covered_by: [{ case: 'no/such-case' }] })).toMatch(/asserted by no test/);
  });
});
