// Wall time of a full regeneration (into a temporary folder) and of the drift check, each as
// a user runs it (a fresh node process on the compiled codegen), median of 3.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(repo, 'dist/codegen/cli.js');
const time = (args) => {
  const t = performance.now();
  execFileSync(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  return performance.now() - t;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const out = mkdtempSync(join(tmpdir(), 'cortex-codegen-bench-'));
const generate = [];
const check = [];
const nodeStartup = [];
try {
  for (let i = 0; i < 3; i++) {
    generate.push(time(['--out', out]));
    check.push(time(['--check']));
    const t = performance.now();
    execFileSync(process.execPath, ['-e', '0']);
    nodeStartup.push(performance.now() - t);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
const result = {
  benchmark: 'codegen',
  generate_ms: Math.round(median(generate)),
  check_ms: Math.round(median(check)),
  node_startup_ms: Math.round(median(nodeStartup)),
  check_vs_10s_target_ratio: Number((median(check) / 10_000).toFixed(3)),
};
console.log(`generate ${result.generate_ms} ms, check ${result.check_ms} ms (node startup ${result.node_startup_ms} ms)`);
console.log(JSON.stringify(result));
