// A source filter that backtracks catastrophically (DECISIONS H26): `^(a|aa)+$` against a line
// of 60 `a` and a `b` takes 2^60 steps in V8's backtracking engine — the agent's one thread
// stopped there for good (no lines, no heartbeats, no answer to pings, status.json frozen),
// and a config given to a group stops every agent of the group. The agent process runs with
// V8's fallback to its linear-time engine after excessive backtracking, so the line is judged
// in milliseconds.
import { appendFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../agent/sources/text.js';
import { cliAgent, storedMessages } from '../agent/helpers/cli-agent.js';
import { until } from '../support/procs.js';

const { run, setUp } = cliAgent();

describe('a filter that backtracks catastrophically (DECISIONS H26)', () => {
  it('the agent judges the line at once and goes on reading', async () => {
    const evil = `${'a'.repeat(60)}b`;
    const { server, dir, log } = await setUp(`aaaa\n${evil}\n`, { filter: '^(a|aa)+$' });
    const r = run(dir);
    await until('the first line', () => storedMessages(server).length === 1, 15_000);
    appendFileSync(log, `${evil}\naa\n`);
    await until('the line after the second bad one', () => storedMessages(server).length === 2, 15_000);
    expect(storedMessages(server)).toEqual(['aaaa', 'aa']);
    r.child.kill('SIGTERM');
    expect(await r.exited).toBe(0);
  }, 60_000);

  it('the filter still decides as a JavaScript regular expression', () => {
    const re = compileFilter('^(a|aa)+$')!;
    expect(re.test('aaaa')).toBe(true);
    expect(re.test('aab')).toBe(false);
    expect(compileFilter('ERROR|WARN')!.test('x WARN y')).toBe(true);
  });
});
