// Validating a 1000-entry logs.push params: the generated standalone validator vs ajv
// compiling the same schemas at run time, measured side by side in one run; plus the time to
// import the generated validators in a fresh process.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const validatorsUrl = new URL('../generated/dist/validators.js', import.meta.url).href;
const { validateLogsPushParams } = await import(validatorsUrl);

// Runtime-compiled baseline: the same contract schemas, the same ajv options as codegen.
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: false });
addFormats.default(ajv);
for (const f of readdirSync(join(repo, 'contract/schemas'))) ajv.addSchema(JSON.parse(readFileSync(join(repo, 'contract/schemas', f), 'utf8')));
const compileStart = performance.now();
const runtimeValidate = ajv.getSchema('https://cortex.invalid/schemas/v1/logs.push.params.json');
const compileMs = performance.now() - compileStart;

// ~250-byte entries, like a real batch, parsed from a flat string (not a rope).
const entries = Array.from({ length: 1000 }, (_, i) => ({
  seq: 1001 + i,
  ts: new Date(Date.UTC(2026, 4, 16, 19, 42, 50, i)).toISOString(),
  severity: ['info', 'warning', 'err', 'debug'][i % 4],
  facility: 'daemon',
  app_name: 'sshd',
  process_id: String(1000 + (i % 97)),
  message: `Accepted publickey for user${i % 13} from 10.0.${i % 255}.${(i * 7) % 255} port ${20000 + i} ssh2: ED25519 SHA256:${'x'.repeat(40)}`,
  source: i % 2 ? 'journald' : 'file:/var/log/auth.log',
}));
const params = JSON.parse(JSON.stringify({ seq_start: 1001, entries }));
if (!validateLogsPushParams(params) || !runtimeValidate(params)) throw new Error('benchmark batch must be valid');

/** Entries/s over `calls` validations of the 1000-entry batch, timed as a whole. */
function rate(fn, calls = 40) {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) if (!fn(params)) throw new Error('invalid');
  return (calls * entries.length * 1000) / (performance.now() - t0);
}
rate(validateLogsPushParams, 300);
rate(runtimeValidate, 300);
// Alternate the order each round so that drift of a noisy shared machine hits both alike.
const standalone = [];
const runtime = [];
const ratios = [];
// Many short paired rounds: the median ratio converges on the true one however the
// machine's speed drifts.
for (let r = 0; r < 41; r++) {
  let s, t;
  if (r % 2 === 0) {
    s = rate(validateLogsPushParams);
    t = rate(runtimeValidate);
  } else {
    t = rate(runtimeValidate);
    s = rate(validateLogsPushParams);
  }
  standalone.push(s);
  runtime.push(t);
  ratios.push(s / t);
}
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const median = (xs) => quantile(xs, 0.5);

const importMs = [];
for (let r = 0; r < 7; r++) {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `const t = performance.now(); await import(${JSON.stringify(validatorsUrl)}); process.stdout.write(String(performance.now() - t));`], { encoding: 'utf8' });
  importMs.push(Number(out));
}

const result = {
  benchmark: 'validators',
  standalone_entries_per_s: Math.round(median(standalone)),
  runtime_entries_per_s: Math.round(median(runtime)),
  standalone_vs_runtime_ratio: Number(median(ratios).toFixed(3)),
  import_ms: Number(median(importMs).toFixed(1)),
  runtime_compile_ms: Number(compileMs.toFixed(1)),
  batch_entries: entries.length,
  // The two run the same ajv-generated code (one precompiled, one compiled here), so the
  // ratio is 1 up to noise: "at least as fast" is read as the median ratio >= 1, and the
  // spread of the paired ratios is reported so a reader can judge the noise.
  standalone_vs_runtime_ratio_p25: Number(quantile(ratios, 0.25).toFixed(3)),
  standalone_vs_runtime_ratio_p75: Number(quantile(ratios, 0.75).toFixed(3)),
  targets: { standalone_at_least_runtime: median(ratios) >= 1, import_under_50_ms: median(importMs) < 50 },
};
console.log(`standalone: ${result.standalone_entries_per_s} entries/s; runtime-compiled: ${result.runtime_entries_per_s} entries/s (ratio ${result.standalone_vs_runtime_ratio}); import ${result.import_ms} ms`);
console.log(JSON.stringify(result));
