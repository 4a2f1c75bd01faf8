// H42: two file sources of one config that name a common file. Both read it (every line stored
// twice, 5,989 rows for 3,000 lines in the helper's run) and commit their positions under one
// key, so a restart resumes one at the other's offset. `agent config --set`, the admin API and
// the group configs refuse such a config (agentConfigIssues), naming both sources.
import { describe, expect, it } from 'vitest';
import { agentConfigIssues, namePatternsMeet } from '../../server/config-check.js';

const config = (...paths: string[]) => ({
  heartbeat_interval_secs: 30,
  max_batch_entries: 1000,
  flush_interval_ms: 200,
  metrics_interval_secs: null,
  probe_concurrency: 4,
  log_sources: paths.map((path) => ({ kind: 'file', path })),
});

describe('file sources that name the same file', () => {
  it('name patterns: which can match one name', () => {
    const meet: [string, string][] = [
      ['x.log', 'x.log'], ['*.log', 'x.log'], ['x.log', '*'], ['*.log', 'app*'], ['a?c', 'abc'], ['*', '*'], ['a*b*c', '*bc'], ['app.log*', 'app.log.1'], ['??', 'ab'], ['*x*', '*y*'],
    ];
    const apart: [string, string][] = [
      ['x.log', 'y.log'], ['*.log', '*.txt'], ['a?c', 'abd'], ['??', 'abc'], ['app.log', 'app.log*1'], ['a*', 'b*'], ['*.log', 'x.log.1'],
    ];
    for (const [a, b] of meet) expect([a, b, namePatternsMeet(a, b), namePatternsMeet(b, a)]).toEqual([a, b, true, true]);
    for (const [a, b] of apart) expect([a, b, namePatternsMeet(a, b), namePatternsMeet(b, a)]).toEqual([a, b, false, false]);
  });

  it('a config with two sources of one file is refused, naming both; different folders or names are not', () => {
    const issues = agentConfigIssues(config('/var/log/ov/*.log', '/var/log/ov/x.log', '/var/log/other/x.log', '/var/log/ov/x.txt', '/var/log/ov/x.log'), 1000);
    expect(issues).toEqual([
      {
        path: '/log_sources/1/path',
        message:
          '"/var/log/ov/x.log" and /log_sources/0 ("/var/log/ov/*.log") can name the same file: each file is read by one source only (both would store every line, and share one stored position); merge them, or narrow the glob',
      },
      {
        path: '/log_sources/4/path',
        message:
          '"/var/log/ov/x.log" and /log_sources/0 ("/var/log/ov/*.log") can name the same file: each file is read by one source only (both would store every line, and share one stored position); merge them, or narrow the glob',
      },
    ]);
    expect(agentConfigIssues(config('/var/log/a.log', '/var/log/b.log', '/srv/*.log', '/srv/logs/*.log', '/x.log'), 1000)).toEqual([]);
  });
});
