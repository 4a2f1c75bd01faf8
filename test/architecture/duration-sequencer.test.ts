// The suite's sequencer (test/support/duration-sequencer.ts) starts the longest files first:
// this machine's vitest cache where it has a file, else test/durations.json, and a file in
// neither first of all; a fresh clone (CI: no cache) takes the committed durations.
import { expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import DurationSequencer, { committedDurations } from '../support/duration-sequencer.js';

const ROOT = '/repo';
const spec = (project: string, file: string) => ({ project: { name: project }, moduleId: `${ROOT}/${file}` }) as unknown as TestSpecification;

function sequencer(cached: Record<string, number>): DurationSequencer {
  const ctx = {
    config: { root: ROOT },
    cache: { getFileTestResults: (key: string) => (key in cached ? { duration: cached[key]! * 1000, failed: false } : undefined) },
  } as unknown as Vitest;
  return new DurationSequencer(ctx);
}

it('longest first by the committed durations, a file in neither first, the cache over the committed figure', async () => {
  const committed = committedDurations();
  // two files the committed list has, in its order (longest first)
  const [[longKey], [shortKey]] = [...committed].sort((a, b) => b[1] - a[1]).filter((_, i, all) => i === 0 || i === all.length - 1) as [string, number][];
  const [longProject, longFile] = longKey!.split(/:(.*)/s) as [string, string];
  const [shortProject, shortFile] = shortKey!.split(/:(.*)/s) as [string, string];
  const long = spec(longProject, longFile);
  const short = spec(shortProject, shortFile);
  const unknown = spec('sqlite', 'test/not-in-the-list.test.ts');

  const order = async (cached: Record<string, number>) => (await sequencer(cached).sort([short, long, unknown])).map((s) => s.moduleId);
  expect(await order({})).toEqual([unknown.moduleId, long.moduleId, short.moduleId]);
  // this machine's cache says the short one took longer: it goes first of the two
  expect(await order({ [shortKey!]: committed.get(longKey!)! + 1 })).toEqual([unknown.moduleId, short.moduleId, long.moduleId]);
  expect(committed.size).toBeGreaterThan(100);
});
