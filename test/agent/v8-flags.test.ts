// The agent process turns V8's allocation-site pretenuring off (agent/v8-flags.ts, DECISIONS
// P13): a child process builds batches of object literals that all survive one scavenge each,
// as a source's chunk of entries does until its append commits. V8 (run with
// --trace-pretenuring-statistics) decides to pretenure those literals in a plain process,
// and never after applyAgentV8Flags() or the agent's runCli().
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/procs.js';

const WORKLOAD = `
function make(i) { return { ts: 'a' + i, metadata: { hostname: 'h' + i } }; }
let sink = 0;
for (let r = 0; r < 20; r++) {
  const batch = [];
  for (let i = 0; i < 2000; i++) batch.push(make(i));
  // garbage while the batch is alive: scavenges find all of the batch's objects alive
  for (let k = 0; k < 30; k++) sink += new Array(100000).fill(k).length;
  sink += batch.length;
}
if (sink === 0) throw new Error('nothing ran');
`;

function tenureDecisions(prelude: string): number {
  const r = spawnSync(process.execPath, ['--trace-pretenuring-statistics', '--input-type=module', '-e', `${prelude}\n${WORKLOAD}`], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return (r.stdout.match(/=> tenure/g) ?? []).length;
}

describe('agent V8 flags', () => {
  it('a plain process pretenures the surviving literals (the workload shows the effect)', () => {
    // Whether V8 decides within one run depends on when its scavenges fall (with 20 rounds about
    // 1 run in 12 decides nothing here; 60 rounds took 2.5 × as long and missed as often): up to 5
    // runs, the first decision is enough.
    let decisions = 0;
    for (let run = 0; run < 5 && decisions === 0; run++) decisions = tenureDecisions('');
    expect(decisions).toBeGreaterThan(0);
  }, 120_000);

  it('applyAgentV8Flags() turns pretenuring off', () => {
    const url = JSON.stringify(`file://${join(ROOT, 'dist/agent/v8-flags.js')}`);
    for (let run = 0; run < 2; run++) expect(tenureDecisions(`(await import(${url})).applyAgentV8Flags();`)).toBe(0);
  }, 120_000);

  it('the cortex-agent executable (runCli) applies them before its command runs', () => {
    const url = JSON.stringify(`file://${join(ROOT, 'dist/agent/cli-main.js')}`);
    for (let run = 0; run < 2; run++) expect(tenureDecisions(`process.argv = [process.argv[0], 'cortex-agent', '--help']; (await import(${url})).runCli();`)).toBe(0);
  }, 120_000);
});
