#!/usr/bin/env node
/**
 * contract:validate — validate every example in contract/examples/ against its schema with the
 * ajv-cli command line, independently of the generated validators (DESIGN.md section 1).
 *
 *   node scripts/contract-validate.mjs [--contract DIR] [--ajv PATH]
 *
 * Examples are whole JSON-RPC envelopes while the method schemas cover params/result only, so
 * for each example this builds a wrapper schema from contract/methods.json (which names the
 * example's method and message kind):
 *
 *   request       { jsonrpc: "2.0", id, method: <name>, params: $ref <params schema> }
 *   notification  { jsonrpc: "2.0", method: <name>, params: $ref <params schema> }   (no id)
 *   response      { jsonrpc: "2.0", id, result: $ref <result schema> }
 *   error         { jsonrpc: "2.0", id|null, error: { code ∈ the method's errors, message,
 *                   data: $ref error-data.json#/$defs/<errors.json data of that code> } }
 *
 * each closed with additionalProperties: false and also checked against the envelope schema
 * (jsonrpc.json). ajv-cli takes one schema per run, so all wrappers go into one dispatcher
 * schema keyed by example file name and every example runs in a single ajv-cli call
 * (~1 s instead of ~0.7 s per example).
 *
 * stderr: one PASS/FAIL line per example (FAIL with ajv's message); stdout: a summary line.
 * Exit: 0 all pass; 1 an example fails, an example is not listed in methods.json, or ajv-cli
 * cannot be run; 2 bad usage (unknown flag, no contract directory).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DISPATCH_ID = 'https://cortex.invalid/contract-validate/examples.json';

function usage(message) {
  process.stderr.write(`contract-validate: ${message}\nusage: node scripts/contract-validate.mjs [--contract DIR] [--ajv PATH]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { contract: join(repoRoot, 'contract'), ajv: join(repoRoot, 'node_modules', '.bin', 'ajv') };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (flag === '--contract' || flag === '--ajv') {
      const value = inline ?? argv[++i];
      if (value === undefined || value === '') usage(`${flag} needs a value`);
      opts[flag.slice(2)] = resolve(value);
    } else if (flag === '--help' || flag === '-h') {
      process.stdout.write('usage: node scripts/contract-validate.mjs [--contract DIR] [--ajv PATH]\n');
      process.exit(0);
    } else {
      usage(`unknown argument ${arg}`);
    }
  }
  return opts;
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function listJson(dir) {
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).sort() : [];
}

const opts = parseArgs(process.argv.slice(2));
const contractDir = opts.contract;
if (!existsSync(contractDir) || !statSync(contractDir).isDirectory()) usage(`no contract directory at ${contractDir}`);
const display = (path) => relative(process.cwd(), path) || path;

let catalog;
let errorTable;
try {
  catalog = readJson(join(contractDir, 'methods.json'));
  errorTable = readJson(join(contractDir, 'errors.json'));
} catch (err) {
  process.stderr.write(`contract-validate: cannot read ${display(contractDir)}/methods.json or errors.json: ${err.message}\n`);
  process.exit(2);
}

// Schema files and their $ids: refs in the wrappers use the $ids, so nothing depends on paths.
const schemaDirs = [join(contractDir, 'schemas'), join(contractDir, 'probes')];
const schemaFiles = [];
const idOf = new Map(); // file name under schemas/ -> $id
for (const dir of schemaDirs) {
  for (const file of listJson(dir)) {
    const path = join(dir, file);
    let schema;
    try {
      schema = readJson(path);
    } catch (err) {
      process.stderr.write(`FAIL ${display(path)}: not JSON: ${err.message}\n`);
      process.exit(1);
    }
    if (typeof schema.$id !== 'string') continue; // catalogs such as probes/probes.json
    schemaFiles.push(path);
    if (dir === schemaDirs[0]) idOf.set(file, schema.$id);
  }
}
const errorDataId = idOf.get('error-data.json');
const envelopeId = idOf.get('jsonrpc.json');
const errorsByCode = new Map(errorTable.errors.map((e) => [e.code, e]));

/** Build the wrapper schema of one example, or return a reason it cannot be built. */
function wrapperFor(method, message) {
  const schemaRef = (file) => {
    if (!file) return undefined;
    const id = idOf.get(file);
    return id === undefined ? undefined : { $ref: id };
  };
  const jsonrpc = { const: '2.0' };
  const id = envelopeId ? { $ref: `${envelopeId}#/$defs/JsonRpcId` } : { type: ['integer', 'string'] };
  const expectKind = { request: ['request'], notification: ['notification'], response: ['request', 'response'], error: ['request', 'response'] }[message];
  if (!expectKind) return `unknown message kind "${message}" in methods.json`;
  if (!expectKind.includes(method.kind)) return `a ${message} example cannot belong to ${method.name} (kind ${method.kind})`;
  switch (message) {
    case 'request':
    case 'notification': {
      const params = schemaRef(method.params);
      if (!params) return `methods.json names no existing params schema for ${method.name} (${method.params})`;
      const properties = { jsonrpc, method: { const: method.name }, params };
      if (message === 'request') properties.id = id;
      return { type: 'object', required: Object.keys(properties), additionalProperties: false, properties };
    }
    case 'response': {
      const result = schemaRef(method.result);
      if (!result) return `methods.json names no existing result schema for ${method.name} (${method.result})`;
      return { type: 'object', required: ['jsonrpc', 'id', 'result'], additionalProperties: false, properties: { jsonrpc, id, result } };
    }
    case 'error': {
      const codes = method.errors ?? [];
      if (codes.length === 0) return `${method.name} lists no error codes in methods.json`;
      const unknown = codes.filter((c) => !errorsByCode.has(c));
      if (unknown.length) return `${method.name} lists codes missing from errors.json: ${unknown.join(', ')}`;
      const dataRules = [];
      for (const code of codes) {
        const dataDef = errorsByCode.get(code).data;
        if (!dataDef) continue;
        if (!errorDataId) return 'schemas/error-data.json is missing';
        dataRules.push({
          if: { required: ['code'], properties: { code: { const: code } } },
          then: { properties: { data: { $ref: `${errorDataId}#/$defs/${dataDef}` } } },
        });
      }
      const error = {
        type: 'object',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: { code: { type: 'integer', enum: codes }, message: { type: 'string' }, data: true },
      };
      if (dataRules.length) error.allOf = dataRules;
      return {
        type: 'object',
        required: ['jsonrpc', 'id', 'error'],
        additionalProperties: false,
        properties: { jsonrpc, id: { oneOf: [id, { type: 'null' }] }, error },
      };
    }
  }
  return `unhandled message kind ${message}`;
}

const examplesDir = join(contractDir, 'examples');
const exampleFiles = listJson(examplesDir);
const results = new Map(); // file -> { ok, detail }
const listed = new Map(); // file -> { method, message }
for (const method of catalog.methods ?? []) {
  for (const ex of method.examples ?? []) {
    if (listed.has(ex.file)) {
      results.set(ex.file, { ok: false, detail: `listed twice in methods.json (${listed.get(ex.file).method.name} and ${method.name})` });
      continue;
    }
    listed.set(ex.file, { method, message: ex.message });
  }
}

const work = []; // { file, defKey, data }
for (const file of exampleFiles) {
  if (results.has(file)) continue;
  const entry = listed.get(file);
  if (!entry) {
    results.set(file, { ok: false, detail: 'not listed in contract/methods.json (no method/message kind to validate it against)' });
    continue;
  }
  let data;
  try {
    data = readJson(join(examplesDir, file));
  } catch (err) {
    results.set(file, { ok: false, detail: `not JSON: ${err.message}` });
    continue;
  }
  const wrapper = wrapperFor(entry.method, entry.message);
  if (typeof wrapper === 'string') {
    results.set(file, { ok: false, detail: wrapper });
    continue;
  }
  work.push({ file, wrapper, data, label: `${entry.method.name} ${entry.message}` });
}
for (const file of listed.keys()) {
  if (!exampleFiles.includes(file)) results.set(file, { ok: false, detail: 'listed in contract/methods.json but the file does not exist' });
}

let ajvFailure;
if (work.length > 0) {
  const tmp = mkdtempSync(join(tmpdir(), 'contract-validate-'));
  try {
    const dataDir = join(tmp, 'data');
    mkdirSync(dataDir);
    // One dispatcher: the example's file name selects its wrapper (if/then), the envelope
    // schema applies to every message.
    const dispatcher = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: DISPATCH_ID,
      type: 'object',
      required: ['example', 'message'],
      additionalProperties: false,
      properties: { example: { type: 'string', enum: work.map((w) => w.file) }, message: true },
      allOf: work.map((w, i) => ({
        if: { required: ['example'], properties: { example: { const: w.file } } },
        then: { properties: { message: { $ref: `#/$defs/example${i}` } } },
      })),
      $defs: Object.fromEntries(
        work.map((w, i) => [`example${i}`, envelopeId ? { allOf: [w.wrapper, { $ref: envelopeId }] } : w.wrapper]),
      ),
    };
    const dispatcherPath = join(tmp, 'examples.schema.json');
    writeFileSync(dispatcherPath, JSON.stringify(dispatcher, null, 2));
    const dataPaths = work.map((w, i) => {
      const p = join(dataDir, `${i}.json`);
      writeFileSync(p, JSON.stringify({ example: w.file, message: w.data }));
      return p;
    });
    const args = [
      'validate',
      '--spec=draft2020',
      '--strict=true',
      '--allow-union-types',
      '--errors=line',
      '-c',
      'ajv-formats',
      '-s',
      dispatcherPath,
      ...schemaFiles.flatMap((f) => ['-r', f]),
      ...dataPaths.flatMap((p) => ['-d', p]),
    ];
    const run = await new Promise((done) => {
      execFile(opts.ajv, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => done({ error, stdout, stderr }));
    });
    if (run.error && typeof run.error.code === 'string') {
      ajvFailure = `cannot run ajv-cli (${opts.ajv}): ${run.error.message}`;
    } else {
      parseAjvOutput(run, dataPaths);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** ajv-cli prints "<file> valid" on stdout and "<file> invalid" + one JSON line of errors on stderr. */
function parseAjvOutput(run, dataPaths) {
  const byPath = new Map(dataPaths.map((p, i) => [p, work[i]]));
  const seen = new Set();
  for (const line of run.stdout.split('\n')) {
    const m = /^(.*) valid$/.exec(line.trim());
    if (m && byPath.has(m[1])) {
      const w = byPath.get(m[1]);
      results.set(w.file, { ok: true, detail: w.label });
      seen.add(m[1]);
    }
  }
  const errLines = run.stderr.split('\n');
  for (let i = 0; i < errLines.length; i++) {
    const m = /^(.*) invalid$/.exec(errLines[i].trim());
    if (!m || !byPath.has(m[1])) continue;
    const w = byPath.get(m[1]);
    let detail = (errLines[i + 1] ?? '').trim();
    try {
      detail = formatErrors(JSON.parse(detail));
      i++;
    } catch {
      // keep ajv's raw text
    }
    results.set(w.file, { ok: false, detail: `${w.label}: ${detail}` });
    seen.add(m[1]);
  }
  const unreported = dataPaths.filter((p) => !seen.has(p));
  if (unreported.length > 0) {
    // ajv-cli failed before validating (bad schema, strict-mode error, crash): show its output.
    const why = (run.stderr + run.stdout).trim().split('\n').slice(0, 12).join(' | ') || `exit ${run.error?.code ?? 0}`;
    for (const p of unreported) results.set(byPath.get(p).file, { ok: false, detail: `ajv-cli reported no result: ${why}` });
  }
}

/** ajv errors -> "path message {params}", paths relative to the example (the dispatcher's /message prefix removed). */
function formatErrors(errors) {
  const useful = errors.filter((e) => e.keyword !== 'if');
  return (useful.length ? useful : errors)
    .map((e) => {
      const path = (e.instancePath ?? '').replace(/^\/message/, '') || '/';
      const params = e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : '';
      return `${path} ${e.message}${params}`;
    })
    .join('; ');
}

let failed = 0;
for (const file of [...results.keys()].sort()) {
  const r = results.get(file);
  const where = display(join(examplesDir, file));
  if (r.ok) {
    process.stderr.write(`PASS ${where} (${r.detail})\n`);
  } else {
    failed++;
    process.stderr.write(`FAIL ${where}: ${r.detail}\n`);
  }
}
if (ajvFailure) {
  process.stderr.write(`contract-validate: ${ajvFailure}\n`);
  process.stdout.write(`contract:validate: ajv-cli could not be run; ${work.length} example(s) not validated\n`);
  process.exit(1);
}
process.stdout.write(`contract:validate: ${results.size} example(s), ${results.size - failed} passed, ${failed} failed\n`);
process.exit(failed > 0 || results.size === 0 ? 1 : 0);
