/**
 * What codegen, codegen:check and contract:release refuse beyond loadContract's shapes and
 * cross-references: schema mistakes (lint.ts; $refs that resolve nowhere; keyword values the
 * JSON Schema meta-schema rejects; two schemas naming one type), limits that contradict the
 * schema constraint they describe, schema constants of protocol_version/subprotocol that
 * disagree with limits.json, and examples that fail their own schema. Each problem names the
 * contract file, the JSON pointer and what to do; checkContract throws them together as one
 * ContractError (E_CONTRACT), never a stack trace.
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ContractError, schemaIdBase, type Contract, type JsonSchema, type MethodEntry } from './contract.js';
import { lintContract } from './lint.js';
import { resolveRef, schemaFiles } from './diff/schema-index.js';

/** Files whose root only holds $defs (bundle.ts): a $ref must name one of their $defs. */
const CONTAINERS = new Set(['schemas/defs.json', 'schemas/error-data.json']);

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const ptr = (segs: (string | number)[]) => segs.map((s) => `/${esc(String(s))}`).join('');
const show = (v: unknown) => {
  const t = JSON.stringify(v) ?? String(v);
  return t.length > 80 ? `${t.slice(0, 77)}...` : t;
};

/** Every problem of the contract that generation must refuse (empty: it may generate). */
export function contractProblems(contract: Contract): string[] {
  const problems = lintContract(contract).map((p) => `${p.file}${p.path ? ` at ${p.path}` : ''}: ${p.message}`);
  const refs = refProblems(contract);
  problems.push(...refs);
  problems.push(...metaSchemaProblems(contract, refs.length === 0));
  if (problems.length > 0) return problems; // the rest compiles the schemas
  problems.push(...typeNameProblems(contract));
  problems.push(...versionProblems(contract));
  problems.push(...limitProblems(contract));
  if (problems.length > 0) return problems;
  problems.push(...exampleProblems(contract));
  return problems;
}

export function checkContract(contract: Contract): void {
  const problems = contractProblems(contract);
  if (problems.length > 0) throw new ContractError(problems);
}

/** Walks schema positions (not property names) of a schema file: (node, JSON pointer segments). */
function walkSchema(node: unknown, at: (string | number)[], visit: (s: Record<string, unknown>, at: (string | number)[]) => void): void {
  if (!isObj(node)) return;
  visit(node, at);
  for (const key of ['properties', '$defs']) {
    const map = node[key];
    if (isObj(map)) for (const [k, v] of Object.entries(map)) walkSchema(v, [...at, key, k], visit);
  }
  for (const key of ['items', 'additionalProperties']) walkSchema(node[key], [...at, key], visit);
  for (const key of ['oneOf', 'anyOf', 'allOf']) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((v, i) => walkSchema(v, [...at, key, i], visit));
  }
}

// ---------------------------------------------------------------------------------------
// $ref targets

function refProblems(contract: Contract): string[] {
  const files = schemaFiles(contract);
  const out: string[] = [];
  for (const [file, schema] of files) {
    walkSchema(schema, [], (s, at) => {
      const ref = s['$ref'];
      if (typeof ref !== 'string' || /^[a-z][a-z0-9+.-]*:/i.test(ref)) return; // lint reports those
      const where = `${file} at ${ptr([...at, '$ref'])}`;
      const r = resolveRef(files, file, ref);
      if (r === undefined) {
        const [target = '', fragment = ''] = ref.split('#');
        const targetKey = target === '' ? file : target.startsWith('probes/') ? target : `schemas/${target}`;
        const root = files.get(targetKey);
        if (root === undefined) out.push(`${where}: $ref ${JSON.stringify(ref)} names ${targetKey}, which does not exist (schema files: ${[...files.keys()].filter((k) => k.startsWith('schemas/')).join(', ')})`);
        else {
          const defs = isObj(root['$defs']) ? Object.keys(root['$defs']) : [];
          out.push(`${where}: $ref ${JSON.stringify(ref)} does not resolve: ${targetKey} has nothing at ${fragment || '/'}${defs.length ? ` (its $defs: ${defs.join(', ')})` : ' (it has no $defs)'}`);
        }
        return;
      }
      if (r.path.length === 0 && CONTAINERS.has(r.file)) out.push(`${where}: $ref ${JSON.stringify(ref)} names the whole of ${r.file}, which only holds $defs: name one of them (${r.file.slice('schemas/'.length)}#/$defs/Name)`);
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// keyword values (the draft 2020-12 meta-schema, and ajv's strict compilation)

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats.default(ajv);
  return ajv;
}

function metaSchemaProblems(contract: Contract, compile: boolean): string[] {
  const out: string[] = [];
  const ajv = newAjv();
  const files = schemaFiles(contract);
  for (const [file, schema] of files) {
    if (ajv.validateSchema(schema) === false) {
      // One line per schema location: the most specific message there.
      const byPath = new Map<string, ErrorObject>();
      for (const e of ajv.errors ?? []) {
        if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === '$dynamicRef') continue;
        if (!byPath.has(e.instancePath) || e.keyword === 'enum') byPath.set(e.instancePath, e);
      }
      if (byPath.size === 0 && ajv.errors?.[0]) byPath.set(ajv.errors[0].instancePath, ajv.errors[0]);
      for (const [path, e] of byPath) {
        const value = path.split('/').slice(1).reduce<unknown>((n, seg) => (isObj(n) || Array.isArray(n) ? (n as Record<string, unknown>)[seg.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), schema);
        const allowed = e.keyword === 'enum' ? ` (allowed: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')})` : '';
        out.push(`${file} at ${path || '/'}: ${show(value)} is not a valid JSON Schema value here: ${e.message ?? e.keyword}${allowed}`);
      }
    }
  }
  if (out.length > 0 || !compile) return out;
  // Strict mode: what the meta-schema allows but ajv would ignore or misread.
  for (const [file, schema] of files) {
    try {
      ajv.addSchema(schema as object);
    } catch (err) {
      out.push(`${file}: ajv refuses the schema: ${(err as Error).message}`);
    }
  }
  if (out.length > 0) return out;
  for (const [file, schema] of files) {
    try {
      ajv.getSchema(String(schema['$id']));
    } catch (err) {
      out.push(`${file}: ajv cannot compile the schema: ${(err as Error).message}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// type names (bundle.ts gives each schema title and $defs key one generated type)

function typeNameProblems(contract: Contract): string[] {
  const seen = new Map<string, string>();
  const out: string[] = [];
  const add = (name: unknown, where: string) => {
    if (typeof name !== 'string') return;
    const prev = seen.get(name);
    if (prev !== undefined) out.push(`${where}: the type name ${name} is already taken by ${prev}: give one another title or $defs key`);
    else seen.set(name, where);
  };
  for (const [file, s] of schemaFiles(contract)) {
    if (!CONTAINERS.has(file)) add(s['title'], `${file} at /title`);
    if (isObj(s['$defs'])) for (const k of Object.keys(s['$defs'])) add(k, `${file} at /$defs/${esc(k)}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// protocol_version and subprotocol: limits.json is where they are stated

function versionProblems(contract: Contract): string[] {
  const out: string[] = [];
  const version = contract.limits['protocol_version']?.value;
  const sub = contract.limits['subprotocol']?.value;
  if (!Number.isInteger(version) || (version as number) < 1) out.push(`limits.json at /limits/protocol_version/value: must be a positive integer (it is ${show(version)})`);
  if (typeof sub !== 'string' || !/^[a-z][a-z0-9.-]*$/.test(sub)) out.push(`limits.json at /limits/subprotocol/value: must be a subprotocol token such as "cortex.v1" (it is ${show(sub)})`);
  if (out.length > 0) return out;
  if (/\.v\d+$/.test(sub as string) && !(sub as string).endsWith(`.v${String(version)}`)) {
    out.push(`limits.json at /limits/subprotocol/value: ${show(sub)} does not name protocol_version ${String(version)} (expected ${show((sub as string).replace(/\.v\d+$/, `.v${String(version)}`))}): bump both together`);
  }
  for (const [file, schema] of schemaFiles(contract)) {
    walkSchema(schema, [], (s, at) => {
      const name = at[at.length - 2] === 'properties' ? String(at[at.length - 1]) : undefined;
      if (name === 'protocol_version') {
        const fix = `make it {"const": ${String(version)}} (or minimum and maximum ${String(version)}) to match limits.json protocol_version`;
        for (const k of ['const', 'minimum', 'maximum'] as const) {
          if (s[k] !== undefined && s[k] !== version) out.push(`${file} at ${ptr([...at, k])}: ${k} ${show(s[k])}, but limits.json protocol_version is ${String(version)}: ${fix}`);
        }
        if (Array.isArray(s['enum']) && !(s['enum'].length === 1 && s['enum'][0] === version)) out.push(`${file} at ${ptr([...at, 'enum'])}: enum ${show(s['enum'])}, but limits.json protocol_version is ${String(version)}: ${fix}`);
      }
      for (const k of ['const', 'default'] as const) {
        const v = s[k];
        if (typeof v === 'string' && /^cortex\.v\d+$/.test(v) && v !== sub) out.push(`${file} at ${ptr([...at, k])}: ${show(v)}, but limits.json subprotocol is ${show(sub)}`);
      }
      if (Array.isArray(s['enum'])) {
        for (const v of s['enum']) if (typeof v === 'string' && /^cortex\.v\d+$/.test(v) && v !== sub) out.push(`${file} at ${ptr([...at, 'enum'])}: ${show(v)}, but limits.json subprotocol is ${show(sub)}`);
      }
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// limits that a schema states: the limit must equal the schema constraint it describes

/** Schema constraints a limit may state, by how limits.json's descriptions spell them. */
const CONSTRAINTS: Record<string, string> = {
  maxitems: 'maxItems',
  minitems: 'minItems',
  maxlength: 'maxLength',
  minlength: 'minLength',
  maximum: 'maximum',
  minimum: 'minimum',
  exclusivemaximum: 'exclusiveMaximum',
  exclusiveminimum: 'exclusiveMinimum',
  maxproperties: 'maxProperties',
  minproperties: 'minProperties',
  const: 'const',
  default: 'default',
};

/** Properties (name, pointer segments, schema) under a schema node, not following $refs. */
function propertiesUnder(node: unknown, at: (string | number)[]): { name: string; at: (string | number)[]; schema: Record<string, unknown> }[] {
  const out: { name: string; at: (string | number)[]; schema: Record<string, unknown> }[] = [];
  walkSchema(node, at, (s, here) => {
    if (here.length >= at.length + 2 && here[here.length - 2] === 'properties') out.push({ name: String(here[here.length - 1]), at: here, schema: s });
  });
  return out;
}

/**
 * A limit whose `source` is a schema (`schemas/<file>[#pointer]`) states a constraint of it.
 * Which one: the source's pointer ending at the keyword (`…#/properties/entries/maxItems`), or
 * the description naming the keyword and the field (`maxItems of logs.push entries`,
 * `Maximum drain_seconds`); a description naming only the field (`…protocol_version…`)
 * compares with the field's const, single enum value, pinned minimum = maximum or default,
 * and otherwise requires the value to be within the field's bounds.
 */
function limitProblems(contract: Contract): string[] {
  const out: string[] = [];
  const files = schemaFiles(contract);
  for (const [name, limit] of Object.entries(contract.limits)) {
    const m = /^((?:schemas|probes)\/[^#]+\.json)(?:#(.*))?$/.exec(limit.source);
    if (!m || name === 'protocol_version') continue; // a PROTOCOL.md section: prose; protocol_version: versionProblems
    const where = `limits.json at /limits/${esc(name)}`;
    const file = m[1]!.startsWith('schemas/probes/') ? m[1]!.slice('schemas/'.length) : m[1]!;
    const root = files.get(file);
    if (root === undefined) {
      out.push(`${where}/source: ${show(limit.source)} names ${file}, which does not exist`);
      continue;
    }
    const segs = (m[2] ?? '').split('/').slice(1).map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));
    let node: unknown = root;
    for (const seg of segs) node = isObj(node) ? node[seg] : Array.isArray(node) ? node[Number(seg)] : undefined;
    if (node === undefined) {
      out.push(`${where}/source: ${show(limit.source)}: ${file} has nothing at ${m[2]}`);
      continue;
    }
    const compare = (keyword: string, at: (string | number)[], schemaValue: unknown) => {
      if (schemaValue !== limit.value) {
        out.push(
          `${where}/value: ${show(limit.value)}, but ${file} at ${ptr(at)} says ${keyword} ${show(schemaValue)} (the limit states that constraint): change both together — LIMITS, PROTOCOL.md and the validators must agree`,
        );
      }
    };
    const last = segs[segs.length - 1];
    if (last !== undefined && Object.values(CONSTRAINTS).includes(last)) {
      compare(last, segs, node);
      continue;
    }
    const words = limit.description.split(/[^A-Za-z0-9_]+/).filter(Boolean);
    const keyword = words.map((w) => CONSTRAINTS[w.toLowerCase()]).find((k) => k !== undefined);
    const props = propertiesUnder(node, segs).filter((p) => words.includes(p.name));
    const withKeyword = keyword === undefined ? props : props.filter((p) => p.schema[keyword] !== undefined);
    const candidates = withKeyword.length > 0 ? withKeyword : props;
    if (candidates.length !== 1) {
      out.push(
        `${where}: source ${show(limit.source)} is a schema, but which of its constraints the limit states cannot be told (${candidates.length === 0 ? 'its description names none of the fields there' : `its description names ${candidates.map((c) => c.name).join(' and ')}`}): point source at the keyword (e.g. ${file}#/properties/<field>/maxItems) or start the description with "<keyword> of <field>"`,
      );
      continue;
    }
    const field = candidates[0]!;
    const s = field.schema;
    if (keyword !== undefined) {
      if (s[keyword] === undefined) out.push(`${where}/value: ${show(limit.value)}, but ${file} at ${ptr(field.at)} has no ${keyword} (the limit describes it): add "${keyword}": ${show(limit.value)} there`);
      else compare(keyword, [...field.at, keyword], s[keyword]);
      continue;
    }
    if (s['const'] !== undefined) compare('const', [...field.at, 'const'], s['const']);
    else if (Array.isArray(s['enum']) && s['enum'].length === 1) compare('enum', [...field.at, 'enum', 0], s['enum'][0]);
    else if (s['minimum'] !== undefined && s['minimum'] === s['maximum']) {
      compare('minimum', [...field.at, 'minimum'], s['minimum']);
      compare('maximum', [...field.at, 'maximum'], s['maximum']);
    } else if (s['default'] !== undefined) compare('default', [...field.at, 'default'], s['default']);
    else if (typeof limit.value === 'number') {
      const v = limit.value;
      for (const [k, ok] of [
        ['minimum', (b: number) => v >= b],
        ['maximum', (b: number) => v <= b],
        ['exclusiveMinimum', (b: number) => v > b],
        ['exclusiveMaximum', (b: number) => v < b],
      ] as const) {
        if (typeof s[k] === 'number' && !ok(s[k])) out.push(`${where}/value: ${show(v)} is outside ${file} at ${ptr([...field.at, k])} (${k} ${show(s[k])}), the field the limit describes`);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// examples: each must be the message methods.json files it as, and valid against its schema

/** The JSON-RPC envelope an example of `message` for method `m` must be (the same wrappers as scripts/contract-validate.mjs). */
export function exampleWrapper(contract: Contract, m: MethodEntry, message: 'request' | 'response' | 'error' | 'notification'): JsonSchema | string {
  const id = { $ref: `${schemaIdBase}jsonrpc.json#/$defs/JsonRpcId` };
  const ref = (file: string | undefined) => (file === undefined ? undefined : { $ref: `${schemaIdBase}${file}` });
  const fits: Record<string, string[]> = { request: ['request'], notification: ['notification'], response: ['request', 'response'], error: ['request', 'response'] };
  if (!fits[message]!.includes(m.kind)) return `a ${message} example cannot belong to ${m.name}, a ${m.kind}`;
  const closed = (properties: Record<string, unknown>, required = Object.keys(properties)): JsonSchema => ({ type: 'object', required, additionalProperties: false, properties });
  if (message === 'request' || message === 'notification') {
    const properties: Record<string, unknown> = { jsonrpc: { const: '2.0' }, method: { const: m.name }, params: ref(m.params) ?? {} };
    if (message === 'request') properties['id'] = id;
    return closed(properties);
  }
  if (message === 'response') return closed({ jsonrpc: { const: '2.0' }, id, result: ref(m.result) ?? {} });
  if (m.errors.length === 0) return `${m.name} lists no error codes in methods.json, so it has no error example`;
  const dataRules = m.errors.flatMap((code) => {
    const data = contract.errors.find((e) => e.code === code)?.data;
    return data === undefined ? [] : [{ if: { required: ['code'], properties: { code: { const: code } } }, then: { properties: { data: { $ref: `${schemaIdBase}error-data.json#/$defs/${data}` } } } }];
  });
  const error: JsonSchema = { type: 'object', required: ['code', 'message'], additionalProperties: false, properties: { code: { type: 'integer', enum: m.errors }, message: { type: 'string' }, data: true } };
  if (dataRules.length > 0) error['allOf'] = dataRules;
  return closed({ jsonrpc: { const: '2.0' }, id: { anyOf: [id, { type: 'null' }] }, error });
}

function exampleProblems(contract: Contract): string[] {
  const out: string[] = [];
  const ajv = new Ajv2020({ strict: false, allowUnionTypes: true, allErrors: true });
  addFormats.default(ajv);
  for (const s of schemaFiles(contract).values()) ajv.addSchema(s as object);
  const envelope = contract.schemas.has('jsonrpc.json') ? ajv.getSchema(`${schemaIdBase}jsonrpc.json`) : undefined;
  for (const m of contract.methods) {
    m.examples.forEach((ex, i) => {
      const file = `examples/${ex.file}`;
      const value = contract.examples.get(ex.file);
      if (value === undefined) return; // loadContract reports it
      const filed = `methods.json at /methods/${contract.methods.indexOf(m)}/examples/${i}`;
      const sent = isObj(value) ? value['method'] : undefined;
      if ((ex.message === 'request' || ex.message === 'notification') && sent !== m.name) {
        out.push(`${file} at /method: ${show(sent)}, but ${filed} files it as a ${ex.message} of ${m.name}: ${typeof sent === 'string' && contract.methods.some((o) => o.name === sent) ? `file it under ${sent} in methods.json, or make its method ${show(m.name)}` : `make its method ${show(m.name)} (after a rename, rename the example too)`}`);
        return;
      }
      const wrapper = exampleWrapper(contract, m, ex.message);
      if (typeof wrapper === 'string') {
        out.push(`${filed}: ${wrapper}`);
        return;
      }
      const validate = ajv.compile(wrapper);
      const failures: ErrorObject[] = [];
      if (!validate(value)) failures.push(...(validate.errors ?? []));
      if (envelope !== undefined && !envelope(value)) failures.push(...(envelope.errors ?? []));
      const useful = failures.filter((e) => e.keyword !== 'if' && e.keyword !== 'anyOf');
      if (useful.length > 0) {
        const first = new Map<string, ErrorObject>();
        for (const e of useful) if (!first.has(e.instancePath)) first.set(e.instancePath, e);
        for (const [path, e] of first) {
          const params = e.keyword === 'additionalProperties' ? ` (${show((e.params as { additionalProperty: string }).additionalProperty)})` : e.keyword === 'enum' ? ` (${show((e.params as { allowedValues: unknown }).allowedValues)})` : '';
          out.push(`${file} at ${path || '/'}: ${e.message ?? e.keyword}${params} — the ${ex.message} of ${m.name} (${filed}) fails its schema: fix the example or the schema (it would ship as an accepted conformance vector)`);
        }
      }
    });
  }
  return out;
}
