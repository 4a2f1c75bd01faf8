// node bench/_cpuprofile-summary.mjs FILE.cpuprofile [REGEX]
// Self time per function and per file of a `node --cpu-prof` profile (idle and GC
// included, as shares of the profiled wall time); with REGEX also the inclusive time of
// the functions whose "name file:line" matches it. Not a benchmark (run.mjs skips _*).
import { readFileSync } from 'node:fs';

const [file, pattern] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node bench/_cpuprofile-summary.mjs FILE.cpuprofile [REGEX]\n');
  process.exit(2);
}
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const self = new Map();
let total = 0;
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i] ?? 0;
  total += dt;
  self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + dt);
}
const short = (u) => u.replace(/^file:\/\/.*?\/(dist|generated|bench)\//, '$1/').replace(/.*node_modules\//, '');
const key = (cf) => `${cf.functionName || '(anonymous)'} ${short(cf.url)}:${cf.lineNumber + 1}`;
const byFn = new Map();
const byFile = new Map();
for (const [id, t] of self) {
  const cf = byId.get(id).callFrame;
  byFn.set(key(cf), (byFn.get(key(cf)) ?? 0) + t);
  const f = short(cf.url) || cf.functionName;
  byFile.set(f, (byFile.get(f) ?? 0) + t);
}
const pct = (t) => `${((100 * t) / total).toFixed(1).padStart(5)}%`;
const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
console.log(`profiled ${(total / 1000).toFixed(0)} ms`);
console.log('--- self time by function');
for (const [k, t] of top(byFn, 30)) console.log(pct(t), k);
console.log('--- self time by file');
for (const [k, t] of top(byFile, 15)) console.log(pct(t), k);
if (pattern) {
  const re = new RegExp(pattern);
  const incl = new Map();
  for (const [id, t] of self) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(byId.get(cur).callFrame);
      if (re.test(k) && !seen.has(k)) {
        seen.add(k);
        incl.set(k, (incl.get(k) ?? 0) + t);
      }
    }
  }
  console.log(`--- inclusive time of /${pattern}/`);
  for (const [k, t] of top(incl, 30)) console.log(pct(t), k);
}
