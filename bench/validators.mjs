// The hot generated validators vs ajv compiling the same schemas at run time, measured side by
// side in one run on the same inputs: a 1000-entry logs.push params (validateLogsPushParams)
// and the same entries one call each (validateLogBatchEntry, as the agent validates what it
// buffers); plus the time to import the generated validators in a fresh process. The generated
// hot validators run a compiled exact predicate before ajv's code (codegen/emit-fast-validators.ts);
// test/codegen/fast-validators.test.ts checks that verdicts and errors stay ajv's.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const validatorsUrl = new URL('../generated/dist/validators.js', import.meta.url).href;
const { validateLogsPushParams, validateLogBatchEntry } = await import(validatorsUrl);

// Runtime-compiled baseline: the same contract schemas, the same ajv options as codegen.
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: false });
addFormats.default(ajv);
for (const f of readdirSync(join(repo, 'contract/schemas'))) ajv.addSchema(JSON.parse(readFileSync(join(repo, 'contract/schemas', f), 'utf8')));
const compileStart = performance.now();
const runtimeValidate = ajv.getSchema('https://cortex.invalid/schemas/v1/logs.push.params.json');
const compileMs = performance.now() - compileStart;
const runtimeEntry = ajv.getSchema('https://cortex.invalid/schemas/v1/defs.json#/$defs/LogBatchEntry');

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

const parsedEntries = params.entries;
for (const e of parsedEntries) if (!validateLogBatchEntry(e) || !runtimeEntry(e)) throw new Error('benchmark entries must be valid');

/** Entries/s over `calls` validations of the 1000-entry batch, timed as a whole. */
function rate(fn, calls = 40) {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) if (!fn(params)) throw new Error('invalid');
  return (calls * entries.length * 1000) / (performance.now() - t0);
}
/** Entries/s validating the batch's entries one call each, `calls` times over. */
function rateEach(fn, calls = 40) {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) for (const e of parsedEntries) if (!fn(e)) throw new Error('invalid');
  return (calls * parsedEntries.length * 1000) / (performance.now() - t0);
}
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const median = (xs) => quantile(xs, 0.5);

/**
 * Many short paired rounds, alternating which goes first, so that drift of a noisy shared
 * machine hits both alike: the median ratio converges on the true one.
 */
function paired(measure, generated, reference) {
  measure(generated, 300);
  measure(reference, 300);
  const g = [];
  const t = [];
  const ratios = [];
  for (let r = 0; r < 41; r++) {
    let a, b;
    if (r % 2 === 0) {
      a = measure(generated);
      b = measure(reference);
    } else {
      b = measure(reference);
      a = measure(generated);
    }
    g.push(a);
    t.push(b);
    ratios.push(a / b);
  }
  return { g, t, ratios };
}
const push = paired(rate, validateLogsPushParams, runtimeValidate);
const each = paired(rateEach, validateLogBatchEntry, runtimeEntry);
const standalone = push.g;
const runtime = push.t;
const ratios = push.ratios;

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
  // Median of the paired ratios, and their spread so a reader can judge the noise.
  standalone_vs_runtime_ratio_p25: Number(quantile(ratios, 0.25).toFixed(3)),
  standalone_vs_runtime_ratio_p75: Number(quantile(ratios, 0.75).toFixed(3)),
  // The hot schemas, each against ajv compiled at run time on the same inputs.
  logs_push_params_entries_per_s: Math.round(median(push.g)),
  logs_push_params_ajv_entries_per_s: Math.round(median(push.t)),
  logs_push_params_vs_ajv_ratio: Number(median(push.ratios).toFixed(3)),
  log_batch_entry_per_s: Math.round(median(each.g)),
  log_batch_entry_ajv_per_s: Math.round(median(each.t)),
  log_batch_entry_vs_ajv_ratio: Number(median(each.ratios).toFixed(3)),
  log_batch_entry_vs_ajv_ratio_p25: Number(quantile(each.ratios, 0.25).toFixed(3)),
  targets: {
    standalone_at_least_runtime: median(ratios) >= 1,
    import_under_50_ms: median(importMs) < 50,
    hot_at_least_1_5x_ajv: median(push.ratios) >= 1.5 && median(each.ratios) >= 1.5,
  },
};
console.log(`logs.push params (1000 entries): generated ${result.logs_push_params_entries_per_s} entries/s, ajv at run time ${result.logs_push_params_ajv_entries_per_s} (ratio ${result.logs_push_params_vs_ajv_ratio})`);
console.log(`LogBatchEntry (one call each): generated ${result.log_batch_entry_per_s} entries/s, ajv at run time ${result.log_batch_entry_ajv_per_s} (ratio ${result.log_batch_entry_vs_ajv_ratio}); import ${result.import_ms} ms`);
console.log(JSON.stringify(result));
