// Runs the longest test files first, across both projects (vitest.config.ts). vitest's own
// sequencer does that only from its local results cache; on a fresh clone (CI) it has none and
// ran the files in glob order, the PostgreSQL project's first: a long file that came last kept
// one of the two workers busy alone for a minute or more at the end of the run. Here the
// durations come from the cache when it has them (this machine's last run), else from
// test/durations.json (committed; `npm run test:durations` rewrites it from a full run), and a
// file in neither runs first (it may be long). Longest first is the classic greedy schedule:
// the end of the run is then filled with short files.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const DURATIONS_FILE = new URL('../durations.json', import.meta.url);

/** "project:relative/path" → seconds, from test/durations.json (empty when it is missing or broken). */
export function committedDurations(): Map<string, number> {
  try {
    const raw = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as { files?: Record<string, unknown> };
    return new Map(Object.entries(raw.files ?? {}).filter((e): e is [string, number] => typeof e[1] === 'number'));
  } catch {
    return new Map();
  }
}

export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const committed = committedDurations();
    const root = this.ctx.config.root;
    const seconds = (spec: TestSpecification): number => {
      const key = `${spec.project.name}:${relative(root, spec.moduleId)}`;
      const cached = this.ctx.cache.getFileTestResults(key);
      if (cached !== undefined && cached.duration > 0) return cached.duration / 1000;
      return committed.get(key) ?? Number.POSITIVE_INFINITY;
    };
    const withTime = files.map((spec) => ({ spec, s: seconds(spec) }));
    // a stable sort: equal (unknown) files keep vitest's order
    withTime.sort((a, b) => (a.s === b.s ? 0 : a.s > b.s ? -1 : 1));
    return withTime.map((x) => x.spec);
  }
}
