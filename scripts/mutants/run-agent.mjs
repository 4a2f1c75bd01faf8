#!/usr/bin/env node
// One mutant's test for the agent side of `npm run conformance:mutants`: the conformance
// runner's agent suite drives the sandbox's compiled reference agent (enroll + run, killed
// and restarted by the suite; every child inherits __STRYKER_ACTIVE_MUTANT__). Exits with
// the runner's status (0: the mutant survived; 1: killed).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { activeMutant, failedCase, record } from './mutant.mjs';

const root = process.cwd();
const started = Date.now();
const mutant = activeMutant();
const agent = join(root, 'dist/agent/cli.js');
const q = (v) => `'${v.replace(/'/g, `'\\''`)}'`;
const args = [
  join(root, 'dist/conformance/cli.js'), 'agent',
  '--enroll-command', `${q(process.execPath)} ${q(agent)} enroll --server {url} --token {token} --host-id {host_id} --state-dir {state_dir} --allow-insecure`,
  '--run-command', `${q(process.execPath)} ${q(agent)} run --state-dir {state_dir} --allow-insecure --backoff-base-ms 100 --backoff-cap-ms 2000 --heartbeat-interval-ms 300 --hello-timeout-ms 1000 --request-timeout-ms 1500 --log-level warn`,
  '--probe', 'sys.uptime',
  '--long-probe', 'proc.top', // samples /proc twice, 200 ms apart (agent/probe-concurrency)
  '--agent-hello-timeout-ms', '1000', '--agent-request-timeout-ms', '1500', // as the run command was given
  '--failing-probe', 'exec.systemctl_status', '--failing-probe-args', '{"unit":"cortex-conformance-none.service"}',
  '--slow-probe', 'journal.tail', '--slow-probe-args', '{"unit":"cortex-conformance-none.service"}', '--slow-probe-timeout-ms', '1',
  '--push-window', '4', // the reference agent's logs.push window (agent/push-window-bound)
  // the agent's backoff cap, as its run command was given: the suite's later reconnects would
  // otherwise wait up to the 60 s default each (DECISIONS K12)
  '--backoff-base-ms', '100', '--backoff-cap-ms', '2000', '--quiet-window-ms', '1500', '--timeout-ms', '3000',
  '--bail', ...mutant.only,
];
const runner = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
runner.stdout.on('data', (d) => (out += d));
runner.stderr.on('data', (d) => (out += d));
const killer = setTimeout(() => runner.kill('SIGKILL'), 150_000);
const code = await new Promise((resolve) => runner.on('exit', (c) => resolve(c ?? 1)));
clearTimeout(killer);
record({ mutant: mutant.id ?? null, file: mutant.file ?? null, code, failed: failedCase(out), ms: Date.now() - started });
if (process.env.CORTEX_MUTANTS_VERBOSE) process.stdout.write(`${out.split('\n').filter((l) => !l.startsWith('PASS')).join('\n')}\n`);
process.exit(code);
