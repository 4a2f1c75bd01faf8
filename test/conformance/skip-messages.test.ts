// No silent skips (conformance/README.md): every reason the runner gives for a SKIP names the
// option(s) that enable the case, or the case it depends on, and why it did not run. Read from
// the suites' source: each `new CaseSkip(…)`, `runner.skip(…, reason)` and `skip: …` outcome.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

/** The text of the balanced expression starting at `from` (up to the `)`, or `,` / `;` when asked, that ends it at depth 0). */
function argumentAt(src: string, from: number, stopAtComma: boolean, stopAtSemicolon = false): string {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < src.length; i++) {
    const c = src[i]!;
    if (quote !== null) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return src.slice(from, i);
      depth--;
    } else if (c === ',' && depth === 0 && stopAtComma) return src.slice(from, i);
    else if (c === ';' && depth === 0 && stopAtSemicolon) return src.slice(from, i);
  }
  throw new Error(`unbalanced expression at ${from}`);
}

/** A bare identifier is resolved to its `const NAME = …;` in the same file. */
function resolveConst(src: string, expr: string): string {
  const name = expr.trim();
  if (!/^[A-Za-z_$][\w$]*$/.test(name)) return expr;
  const m = new RegExp(`const ${name} =\\s*`).exec(src);
  if (!m) return expr;
  return argumentAt(src, m.index + m[0].length, false, true);
}

/** Names an option (--flag, {placeholder} of a command option) or a case id (agent/…, ingest/…). */
const NAMES_WHAT_ENABLES = /--[a-z][a-z0-9-]*|\b(?:agent|handshake|ingest|error|close|control|vector|probe|admin|metrics|heartbeat|shutdown)\/[a-z0-9*-]+/;
/**
 * Reasons passed on from elsewhere: an earlier Outcome's or CaseSkip's reason, already checked
 * where it was made (the Runner's gate gives a suite's CaseSkip reason).
 */
const PASSED_ON = new Set(['err.reason', 'o.skip', '`needs ${needs}`', 'this.gate?.(id)']);

describe('conformance skip messages', () => {
  for (const file of ['conformance/agent-suite.ts', 'conformance/server-suite.ts', 'conformance/report.ts']) {
    it(`${file}: every skip reason names the option that enables the case, or the case it depends on`, () => {
      const src = readFileSync(join(ROOT, file), 'utf8');
      const reasons: { line: number; expr: string }[] = [];
      const lineOf = (i: number) => src.slice(0, i).split('\n').length;
      for (const m of src.matchAll(/new CaseSkip\(/g)) reasons.push({ line: lineOf(m.index), expr: argumentAt(src, m.index + m[0].length, false) });
      for (const m of src.matchAll(/\bskip: /g)) reasons.push({ line: lineOf(m.index), expr: argumentAt(src, m.index + m[0].length, true) });
      for (const m of src.matchAll(/(?:runner|this)\.skip\(/g)) {
        const args = argumentAt(src, m.index + m[0].length, false);
        // the third argument (id, expected, reason)
        let rest = args;
        for (let k = 0; k < 2; k++) rest = rest.slice(argumentAt(rest, 0, true).length + 1);
        reasons.push({ line: lineOf(m.index), expr: rest });
      }
      // provokeProbeError(given, code, timeoutMs, needs) skips with `needs ${needs}`: its callers' texts
      for (const m of src.matchAll(/provokeProbeError\(/g)) {
        const args = argumentAt(src, m.index + m[0].length, false);
        if (args.startsWith('given')) continue; // the definition
        reasons.push({ line: lineOf(m.index), expr: args });
      }
      expect(reasons.length).toBeGreaterThan(0);
      const bad = reasons
        .map((r) => ({ ...r, text: resolveConst(src, r.expr).trim() }))
        .filter((r) => r.text !== '' && !PASSED_ON.has(r.text) && !/^(reason|err\.reason)$/.test(r.text))
        .filter((r) => !NAMES_WHAT_ENABLES.test(r.text) && !/no option enables it/.test(r.text));
      expect(bad.map((b) => `${file}:${b.line}: ${b.text.slice(0, 200)}`)).toEqual([]);
    });
  }
});
