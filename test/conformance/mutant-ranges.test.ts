// `npm run conformance:mutants` (scripts/mutants/) mutates the parts of seven modules that the
// runner can judge, leaving out lines found by their text (log lines, race guards; each with
// its reason). An edit to one of those modules that changes such a line makes the whole mutation
// run refuse to start, and nothing said so until someone ran it (it takes 15 minutes): found so
// on 2026-12-06, four left-out lines of ingest.ts, session.ts and push-pump.ts having changed
// (DECISIONS K12). This checks, in milliseconds, that every part and left-out line is found.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

interface Ranges {
  mutateList(side: 'server' | 'agent'): string[];
}

describe('scripts/mutants/ranges.mjs', () => {
  it('finds every module part and every left-out line in the current sources, for both sides', async () => {
    const ranges = (await import(pathToFileURL(join(ROOT, 'scripts/mutants/ranges.mjs')).href)) as Ranges;
    for (const side of ['server', 'agent'] as const) {
      const list = ranges.mutateList(side); // throws naming the line that is no longer there
      expect(list.length, side).toBeGreaterThan(10);
      for (const r of list) expect(r, side).toMatch(/^(server|agent)\/[\w/.-]+\.ts:\d+:\d+-\d+:\d+$/);
    }
  });

  it('a function part ends at its own closing brace: a quote inside a template literal does not carry it into the next methods', async () => {
    const ranges = (await import(pathToFileURL(join(ROOT, 'scripts/mutants/ranges.mjs')).href)) as Ranges;
    // session.ts's authenticate() holds `the server's log` in a template literal; brace counting
    // by hand took the quote for a string and mutated 110 more lines (onClosed, clockOffsetText, ...)
    const lines = readFileSync(join(ROOT, 'agent/session.ts'), 'utf8').split('\n');
    const lineOf = (text: string) => lines.findIndex((l) => l.includes(text)) + 1;
    const outside = [lineOf('  private replacedRecently('), lineOf('  private onClosed('), lineOf('export function clockOffsetText(')];
    expect(outside.every((n) => n > 0)).toBe(true);
    const spans = ranges
      .mutateList('agent')
      .filter((r) => r.startsWith('agent/session.ts:'))
      .map((r) => /:(\d+):\d+-(\d+):\d+$/.exec(r)!.slice(1).map(Number) as [number, number]);
    for (const n of outside) expect(spans.filter(([a, b]) => a <= n && n <= b), `line ${n}`).toEqual([]);
  });
});
