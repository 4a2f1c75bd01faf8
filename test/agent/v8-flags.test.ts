// The agent process turns V8's allocation-site pretenuring off (agent/v8-flags.ts, DECISIONS
// P13): a child process builds batches of object literals that all survive one scavenge each,
// as a source's chunk of entries does until its append commits. V8 (run with
// --trace-pretenuring-statistics) decides to pretenure those literals in a plain process,
// and never after applyAgentV8Flags() or the agent's runCli().
import { spawn } from 'node:child_process';
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

/** The workload in a child process (not blocking: the tests' runs go side by side); how many tenure decisions V8 traced. */
function tenureDecisions(prelude: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--trace-pretenuring-statistics', '--input-type=module', '-e', `${prelude}\n${WORKLOAD}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        expect(code, stderr).toBe(0);
        resolve((stdout.match(/=> tenure/g) ?? []).length);
      } catch (err) {
        reject(err as Error);
      }
    });
  });
}

// The three tests are independent child processes: run side by side.
describe.concurrent('agent V8 flags', () => {
  it('a plain process pretenures the surviving literals (the workload shows the effect)', async () => {
    // Whether V8 decides within one run depends on when its scavenges fall (with 20 rounds about
    // 1 run in 12 decides nothing here; 60 rounds took 2.5 × as long and missed as often): up to 5
    // runs, the first decision is enough.
    let decisions = 0;
    for (let run = 0; run < 5 && decisions === 0; run++) decisions = await tenureDecisions('');
    expect(decisions).toBeGreaterThan(0);
  }, 120_000);

  it('applyAgentV8Flags() turns pretenuring off', async () => {
    const url = JSON.stringify(`file://${join(ROOT, 'dist/agent/v8-flags.js')}`);
    expect(await Promise.all([0, 1].map(() => tenureDecisions(`(await import(${url})).applyAgentV8Flags();`)))).toEqual([0, 0]);
  }, 120_000);

  it('the cortex-agent executable (runCli) applies them before its command runs', async () => {
    const url = JSON.stringify(`file://${join(ROOT, 'dist/agent/cli-main.js')}`);
    expect(await Promise.all([0, 1].map(() => tenureDecisions(`process.argv = [process.argv[0], 'cortex-agent', '--help']; (await import(${url})).runCli();`)))).toEqual([0, 0]);
  }, 120_000);
});
