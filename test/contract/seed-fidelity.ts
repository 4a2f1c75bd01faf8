/**
 * Seed fidelity: reads the JSON schemas, examples and tables out of the seed contract
 * (../shared/seed/agent-protocol-v1.md) and compares them with the data in contract/.
 *
 * Schemas are compared by meaning: every $ref is inlined (the seed's "#/$defs/X" against the
 * schema's own $defs, then the shared $defs block of section 4.4 and agent.hello result's
 * local $defs; the contract's "defs.json#/$defs/X" against the contract files by $id),
 * annotations (title, description, $comment, $id, $schema, examples) and $defs are dropped,
 * `required` and `type` lists are compared as sets; everything else must be equal. Examples are
 * compared as parsed JSON values.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------------------------------------
// Seed parsing

export interface SeedBlock {
  /** Section number ("4.4") and, for method sections, the method name. */
  section: string;
  method: string | undefined;
  /** The text line(s) introducing the block ("params schema:", "Example request:", …). */
  label: string;
  kind: 'params' | 'result' | 'example' | 'defs' | 'unknown';
  value: Json;
  line: number;
}

export interface SeedMethod {
  name: string;
  section: string;
  direction?: string;
  kind?: string;
  errors?: number[];
  /** "result schema: identical to probe.request's result schema" → "probe.request". */
  resultSameAs?: string;
}

export interface SeedErrorRow {
  code: number;
  name: string;
  direction: string;
  meaning: string;
}

export interface SeedDoc {
  blocks: SeedBlock[];
  methods: SeedMethod[];
  errors: SeedErrorRow[];
  closeCodes: { code: number; meaning: string }[];
  transitions: { from: string; to: string; label: string }[];
}

/** Strip Markdown decoration from a prose line (headings, bullets, bold, code spans). */
function plain(line: string): string {
  return line
    .replace(/^\s*#+\s*/, '')
    .replace(/^\s*(?:[•*-]\s+)/, '')
    .replace(/\*\*|`/g, '')
    .trim();
}

function classify(label: string): SeedBlock['kind'] {
  if (/params schema/i.test(label)) return 'params';
  if (/result schema/i.test(label)) return 'result';
  if (/^example/i.test(label)) return 'example';
  if (/\$defs/.test(label)) return 'defs';
  return 'unknown';
}

const DIRECTION: Record<string, string> = { 'client → server': 'agent_to_server', 'server → client': 'server_to_agent' };
const REPLIES: Record<string, string> = { 'server replies': 'server', 'agent replies': 'agent', either: 'either' };

export function parseSeed(text: string): SeedDoc {
  const lines = text.split(/\r?\n/);
  const doc: SeedDoc = { blocks: [], methods: [], errors: [], closeCodes: [], transitions: [] };
  let section = '';
  let method: SeedMethod | undefined;
  let label = '';
  let lastBlockKind: SeedBlock['kind'] | undefined;
  let table: 'errors' | 'close' | undefined;
  let inDiagram = false;

  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.startsWith('{')) {
      // A JSON block: accumulate lines until they parse (balanced).
      let acc = raw;
      let j = i;
      let value: Json | undefined;
      for (;;) {
        try {
          value = JSON.parse(acc) as Json;
          break;
        } catch {
          if (++j >= lines.length) throw new Error(`seed line ${i + 1}: JSON block never balances`);
          acc += '\n' + lines[j];
        }
      }
      // A block right after another block with no label of its own continues the previous
      // label (metrics.push's one-line response follows its request under "Example:").
      const kind = label ? classify(label) : lastBlockKind === 'example' ? 'example' : 'unknown';
      doc.blocks.push({ section, method: method?.name, label: label || '(continued)', kind, value, line: i + 1 });
      lastBlockKind = kind;
      label = '';
      i = j;
      continue;
    }
    const text = plain(raw);
    if (text === '' || text.startsWith('```')) {
      if (text === '') table = undefined;
      continue;
    }

    const methodHeading = /^(\d+\.\d+)\s+([a-z][\w]*\.[\w.]+)$/.exec(text);
    const topHeading = /^(\d+)\.\s+\S/.exec(text);
    if (methodHeading) {
      section = methodHeading[1]!;
      method = { name: methodHeading[2]!, section };
      doc.methods.push(method);
      label = '';
      lastBlockKind = undefined;
      continue;
    }
    if (topHeading) {
      section = topHeading[1]!;
      method = undefined;
      label = '';
      lastBlockKind = undefined;
      continue;
    }

    if (method) {
      const field = /^(Direction|Kind|Errors)\b[^:]*:\s*(.*)$/.exec(text);
      if (field) {
        const value = field[2]!;
        if (field[1] === 'Direction') method.direction = DIRECTION[value.trim()] ?? value.trim();
        if (field[1] === 'Kind') method.kind = /^(request|notification|response)\b/.exec(value)?.[1] ?? value;
        if (field[1] === 'Errors') method.errors = (value.match(/-32\d{3}/g) ?? []).map(Number);
        continue;
      }
      const same = /result schema:\s*identical to ([\w.]+)'s result schema/i.exec(text);
      if (same) {
        method.resultSameAs = same[1]!;
        continue;
      }
    }

    // Tables of section 5 (rendered as "CodeNameDirectionMeaning" rows, or Markdown pipes).
    if (/^\|?\s*Code\s*\|?\s*Name\s*\|?\s*Direction\s*\|?\s*Meaning/.test(text)) {
      table = 'errors';
      continue;
    }
    if (/^\|?\s*WS code\s*\|?\s*Meaning/.test(text)) {
      table = 'close';
      continue;
    }
    if (table && /^\|?[\s:|-]+$/.test(text)) continue; // Markdown separator row
    if (table === 'errors') {
      const cells = text.includes('|') ? text.split('|').map((c) => c.trim()).filter((c) => c !== '') : undefined;
      const m = cells
        ? cells.length === 4 ? [text, cells[0]!, cells[1]!, cells[2]!, cells[3]!] : null
        : /^(-\d+)([A-Za-z]+?)(server replies|agent replies|either)(.+)$/.exec(text);
      if (m) {
        doc.errors.push({ code: Number(m[1]), name: m[2]!, direction: REPLIES[m[3]!] ?? m[3]!, meaning: m[4]!.trim() });
        continue;
      }
      table = undefined;
    }
    if (table === 'close') {
      const cells = text.includes('|') ? text.split('|').map((c) => c.trim()).filter((c) => c !== '') : undefined;
      const m = cells ? (cells.length === 2 ? [text, cells[0]!, cells[1]!] : null) : /^(\d{4})\s*(.+)$/.exec(text);
      if (m) {
        doc.closeCodes.push({ code: Number(m[1]), meaning: m[2]!.trim() });
        continue;
      }
      table = undefined;
    }

    // Section 6 mermaid state diagram.
    if (text === 'stateDiagram-v2') {
      inDiagram = true;
      continue;
    }
    if (inDiagram) {
      const t = /^(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)\s*(?::\s*(.*))?$/.exec(text);
      if (t) {
        doc.transitions.push({ from: t[1]!, to: t[2]!, label: (t[3] ?? '').trim() });
        continue;
      }
      inDiagram = false;
    }

    label = text;
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Schema normalisation and comparison

export const ANNOTATIONS = new Set(['title', 'description', '$comment', '$id', '$schema', 'examples']);
const SCHEMA_KEYWORDS = new Set([
  'not', 'if', 'then', 'else', 'additionalProperties', 'additionalItems', 'contains', 'propertyNames',
  'unevaluatedProperties', 'unevaluatedItems',
]);
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas']);
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const DEFINITION_KEYWORDS = new Set(['$defs', 'definitions']);

/** A schema document: where relative refs inside it resolve from. */
export interface SchemaDoc {
  uri: string;
  root: Json;
}

export interface Resolved {
  schema: Json;
  doc: SchemaDoc;
  key: string;
}

export type Resolver = (ref: string, from: SchemaDoc) => Resolved;

export function jsonPointer(root: Json, pointer: string): Json | undefined {
  if (pointer === '' || pointer === '/') return pointer === '' ? root : undefined;
  let node: Json | undefined = root;
  for (const part of pointer.replace(/^\//, '').split('/')) {
    const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isObject(node)) node = Object.prototype.hasOwnProperty.call(node, key) ? node[key] : undefined;
    else return undefined;
  }
  return node;
}

/** Inline every $ref, drop annotations and $defs, canonicalise `required`/`type` order. */
export function normalizeSchema(schema: Json, doc: SchemaDoc, resolve: Resolver, stack: readonly string[] = []): Json {
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  let refTarget: Json | undefined;
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key) || DEFINITION_KEYWORDS.has(key)) continue;
    if (key === '$ref' && typeof value === 'string') {
      const target = resolve(value, doc);
      if (stack.includes(target.key)) throw new Error(`recursive $ref ${[...stack, target.key].join(' -> ')}`);
      refTarget = normalizeSchema(target.schema, target.doc, resolve, [...stack, target.key]);
    } else if (SCHEMA_KEYWORDS.has(key)) {
      out[key] = normalizeSchema(value, doc, resolve, stack);
    } else if (key === 'items') {
      out[key] = Array.isArray(value) ? value.map((s) => normalizeSchema(s, doc, resolve, stack)) : normalizeSchema(value, doc, resolve, stack);
    } else if (SCHEMA_MAP_KEYWORDS.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, s]) => [k, normalizeSchema(s, doc, resolve, stack)]));
    } else if (SCHEMA_ARRAY_KEYWORDS.has(key) && Array.isArray(value)) {
      out[key] = value.map((s) => normalizeSchema(s, doc, resolve, stack));
    } else if (key === 'required' && Array.isArray(value)) {
      out[key] = [...new Set(value.map(String))].sort();
    } else if (key === 'type' && Array.isArray(value)) {
      const types = [...new Set(value.map(String))].sort();
      out[key] = types.length === 1 ? types[0]! : types;
    } else {
      out[key] = value;
    }
  }
  if (refTarget === undefined) return out;
  // 2020-12: $ref with sibling keywords applies both.
  return Object.keys(out).length === 0 ? refTarget : { allOf: [refTarget, out] };
}

/** Structural differences between two JSON values, as "path: detail" strings. */
export function diffJson(a: Json | undefined, b: Json | undefined, names: readonly [string, string] = ['seed', 'contract'], path = ''): string[] {
  const at = path || '/';
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: string[] = [];
    if (a.length !== b.length) out.push(`${at}: ${names[0]} has ${a.length} items, ${names[1]} has ${b.length}`);
    for (let i = 0; i < Math.min(a.length, b.length); i++) out.push(...diffJson(a[i], b[i], names, `${path}/${i}`));
    return out;
  }
  if (isObject(a) && isObject(b)) {
    const out: string[] = [];
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const p = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (!(key in b)) out.push(`${p}: only in ${names[0]} (${JSON.stringify(a[key])})`);
      else if (!(key in a)) out.push(`${p}: only in ${names[1]} (${JSON.stringify(b[key])})`);
      else out.push(...diffJson(a[key], b[key], names, p));
    }
    return out;
  }
  if (isDeepStrictEqual(a, b)) return [];
  return [`${at}: ${names[0]} ${JSON.stringify(a)}, ${names[1]} ${JSON.stringify(b)}`];
}

// ---------------------------------------------------------------------------------------------
// Contract loading

interface CatalogMethod {
  name: string;
  direction: string;
  kind: string;
  params?: string;
  result?: string;
  errors?: number[];
  examples?: { file: string; message: string }[];
}

export interface Contract {
  dir: string;
  /** Schema documents by $id. */
  docs: Map<string, SchemaDoc>;
  /** schemas/<file> → document. */
  files: Map<string, SchemaDoc>;
  methods: CatalogMethod[];
  errors: { code: number; name: string; direction: string; meaning: string }[];
  closeCodes: { code: number; meaning: string }[];
  stateMachine: { initial: string; states: { name: string }[]; transitions: { from: string; to: string; description?: string }[]; final: { from: string; description?: string }[] };
  examples: Map<string, Json>;
}

const readJson = (path: string): Json => JSON.parse(readFileSync(path, 'utf8')) as Json;

export function loadContract(dir: string): Contract {
  const docs = new Map<string, SchemaDoc>();
  const files = new Map<string, SchemaDoc>();
  for (const file of readdirSync(join(dir, 'schemas')).filter((f) => f.endsWith('.json'))) {
    const root = readJson(join(dir, 'schemas', file));
    const id = isObject(root) && typeof root['$id'] === 'string' ? root['$id'] : `file:///contract/schemas/${file}`;
    const doc = { uri: id, root };
    docs.set(id, doc);
    files.set(file, doc);
  }
  const examples = new Map<string, Json>();
  for (const file of readdirSync(join(dir, 'examples')).filter((f) => f.endsWith('.json')).sort()) {
    examples.set(file, readJson(join(dir, 'examples', file)));
  }
  const methods = (readJson(join(dir, 'methods.json')) as unknown as { methods: CatalogMethod[] }).methods;
  const errors = (readJson(join(dir, 'errors.json')) as unknown as { errors: Contract['errors'] }).errors;
  const closeCodes = (readJson(join(dir, 'close-codes.json')) as unknown as { close_codes: Contract['closeCodes'] }).close_codes;
  const stateMachine = readJson(join(dir, 'state-machine.json')) as unknown as Contract['stateMachine'];
  return { dir, docs, files, methods, errors, closeCodes, stateMachine, examples };
}

export function contractResolver(contract: Contract): Resolver {
  return (ref, from) => {
    const url = new URL(ref, from.uri);
    const pointer = decodeURIComponent(url.hash.replace(/^#/, ''));
    url.hash = '';
    const doc = contract.docs.get(url.href);
    if (!doc) throw new Error(`contract $ref ${ref} (from ${from.uri}): no schema with $id ${url.href}`);
    const schema = jsonPointer(doc.root, pointer);
    if (schema === undefined) throw new Error(`contract $ref ${ref} (from ${from.uri}): ${pointer} not found`);
    return { schema, doc, key: `${url.href}#${pointer}` };
  };
}

/**
 * The seed's refs are all "#/$defs/X": the schema's own $defs first (agent.hello result), then
 * the registry of shared definition documents (section 4.4's block, agent.hello result).
 */
export function seedResolver(registry: readonly SchemaDoc[]): Resolver {
  return (ref, from) => {
    if (!ref.startsWith('#')) throw new Error(`seed $ref ${ref}: only local refs are expected`);
    const pointer = ref.slice(1);
    for (const doc of [from, ...registry]) {
      const schema = jsonPointer(doc.root, pointer);
      if (schema !== undefined) return { schema, doc, key: `${doc.uri}#${pointer}` };
    }
    throw new Error(`seed $ref ${ref} (from ${from.uri}) resolves nowhere`);
  };
}

// ---------------------------------------------------------------------------------------------
// The fidelity check

export interface FidelityReport {
  problems: string[];
  checked: { schemas: number; defs: number; examples: number; errors: number; closeCodes: number; transitions: number; methods: number };
}

const words = (s: string): string[] => s.toLowerCase().match(/-?\d+(?:\.\d+)?|[a-z_]+/g) ?? [];
/** True when every word of `seed` occurs in `contract` (the contract may add detail, never drop any). */
export const keepsMeaning = (seed: string, contract: string): boolean => {
  const have = new Set(words(contract));
  return words(seed).every((w) => have.has(w));
};
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Optional fields added to the contract after the seed through the additive path (seed
 * section 9: `npm run contract:diff` says additive), each recorded in contract/DECISIONS.md.
 * Only their exact "only in contract" difference is accepted; any other change to the same
 * schema is still reported.
 */
export const POST_SEED_ADDITIONS: readonly { path: string; decision: string }[] = [
  { path: '/log_sources/items/properties/start_at', decision: 'I6' },
];

function isPostSeedAddition(diff: string): boolean {
  return POST_SEED_ADDITIONS.some((a) => {
    const i = diff.indexOf(`${a.path}: only in contract (`);
    return i >= 0 && diff.slice(0, i).split(': ').length === 1 && /^[^:]*$/.test(diff.slice(0, i));
  });
}

export function checkFidelity(seedText: string, contractDir: string): FidelityReport {
  const seed = parseSeed(seedText);
  const contract = loadContract(contractDir);
  const problems: string[] = [];
  const checked = { schemas: 0, defs: 0, examples: 0, errors: 0, closeCodes: 0, transitions: 0, methods: 0 };
  const resolveContract = contractResolver(contract);
  const catalog = new Map(contract.methods.map((m) => [m.name, m]));

  for (const b of seed.blocks) {
    if (b.kind === 'unknown') problems.push(`seed line ${b.line}: JSON block with unrecognised label "${b.label}"`);
  }

  // Seed definition registry: the shared $defs block(s) and agent.hello result's local $defs.
  const registry: SchemaDoc[] = [];
  seed.blocks.forEach((b, i) => {
    if (b.kind === 'defs' || (isObject(b.value) && isObject(b.value['$defs']) && b.kind !== 'example')) {
      registry.push({ uri: `seed:block${i}`, root: b.value });
    }
  });
  const resolveSeed = seedResolver(registry);
  const seedDoc = (b: SeedBlock): SchemaDoc => ({ uri: `seed:block${seed.blocks.indexOf(b)}`, root: b.value });

  const compare = (what: string, seedSchema: Json, from: SchemaDoc, contractSchema: Json, contractDoc: SchemaDoc) => {
    let left: Json;
    let right: Json;
    try {
      left = normalizeSchema(seedSchema, from, resolveSeed);
      right = normalizeSchema(contractSchema, contractDoc, resolveContract);
    } catch (err) {
      problems.push(`${what}: ${(err as Error).message}`);
      return;
    }
    for (const d of diffJson(left, right)) if (!isPostSeedAddition(d)) problems.push(`${what}: ${d}`);
  };

  // Methods: list, direction, kind, errors, params/result schemas.
  const seedNames = seed.methods.map((m) => m.name);
  for (const name of seedNames) if (!catalog.has(name)) problems.push(`method ${name}: in the seed, missing from contract/methods.json`);
  for (const name of catalog.keys()) if (!seedNames.includes(name)) problems.push(`method ${name}: in contract/methods.json, not in the seed`);
  for (const sm of seed.methods) {
    const cm = catalog.get(sm.name);
    if (!cm) continue;
    checked.methods++;
    if (sm.direction !== cm.direction) problems.push(`method ${sm.name}: direction seed ${sm.direction}, contract ${cm.direction}`);
    if (sm.kind !== cm.kind) problems.push(`method ${sm.name}: kind seed ${sm.kind}, contract ${cm.kind}`);
    const missing = (sm.errors ?? []).filter((c) => !(cm.errors ?? []).includes(c));
    if (missing.length) problems.push(`method ${sm.name}: seed "Errors:" codes ${missing.join(', ')} missing from contract/methods.json errors`);
    for (const role of ['params', 'result'] as const) {
      const blocks = seed.blocks.filter((b) => b.method === sm.name && b.kind === role);
      const file = cm[role];
      if (blocks.length > 1) problems.push(`method ${sm.name}: seed has ${blocks.length} ${role} schemas`);
      if (role === 'result' && sm.resultSameAs) {
        const other = catalog.get(sm.resultSameAs);
        if (!other || file !== other.result) problems.push(`method ${sm.name}: seed says its result schema is ${sm.resultSameAs}'s; contract has ${file} vs ${other?.result}`);
        continue;
      }
      const block = blocks[0];
      if (!block) {
        if (file) problems.push(`method ${sm.name}: contract has a ${role} schema (${file}) the seed does not give`);
        continue;
      }
      const doc = file ? contract.files.get(file) : undefined;
      if (!doc) {
        problems.push(`method ${sm.name}: seed gives a ${role} schema, contract/methods.json names ${file ?? 'none'} (not found)`);
        continue;
      }
      checked.schemas++;
      compare(`${sm.name} ${role} (${file})`, block.value, seedDoc(block), doc.root, doc);
    }
  }

  // Shared definitions: each seed $defs entry ↔ defs.json#/$defs/<name>.
  const defsDoc = contract.files.get('defs.json');
  for (const reg of registry) {
    const defs = isObject(reg.root) ? reg.root['$defs'] : undefined;
    if (!isObject(defs)) continue;
    for (const [name, def] of Object.entries(defs)) {
      const target = defsDoc ? jsonPointer(defsDoc.root, `/$defs/${name}`) : undefined;
      if (!defsDoc || target === undefined) {
        problems.push(`definition ${name}: in the seed, missing from contract/schemas/defs.json`);
        continue;
      }
      checked.defs++;
      compare(`definition ${name} (defs.json)`, def, reg, target, defsDoc);
    }
  }

  // Examples: each seed example is exactly one contract/examples file, listed under its method.
  for (const b of seed.blocks.filter((x) => x.kind === 'example')) {
    checked.examples++;
    const where = `seed example at line ${b.line} (section ${b.section} ${b.method ?? ''}, "${b.label}")`;
    const matches = [...contract.examples].filter(([, v]) => isDeepStrictEqual(v, b.value)).map(([f]) => f);
    if (matches.length === 0) problems.push(`${where}: missing from contract/examples/`);
    else if (matches.length > 1) problems.push(`${where}: appears ${matches.length} times in contract/examples/ (${matches.join(', ')})`);
    else if (b.method && !(catalog.get(b.method)?.examples ?? []).some((e) => e.file === matches[0])) {
      problems.push(`${where}: contract/examples/${matches[0]} is not listed under ${b.method} in contract/methods.json`);
    }
  }

  // Error codes (section 5).
  const errorsByCode = new Map(contract.errors.map((e) => [e.code, e]));
  for (const row of seed.errors) {
    checked.errors++;
    const e = errorsByCode.get(row.code);
    if (!e) {
      problems.push(`error ${row.code}: missing from contract/errors.json`);
      continue;
    }
    if (e.name !== row.name) problems.push(`error ${row.code}: name seed ${row.name}, contract ${e.name}`);
    if (e.direction !== row.direction) problems.push(`error ${row.code}: direction seed ${row.direction}, contract ${e.direction}`);
    if (squash(e.meaning) !== squash(row.meaning)) problems.push(`error ${row.code}: meaning seed "${row.meaning}", contract "${e.meaning}"`);
  }

  // Close codes: each seed code present, its meaning kept (the contract may add detail).
  const closeByCode = new Map(contract.closeCodes.map((c) => [c.code, c]));
  for (const row of seed.closeCodes) {
    checked.closeCodes++;
    const c = closeByCode.get(row.code);
    if (!c) problems.push(`close code ${row.code}: missing from contract/close-codes.json`);
    else if (!keepsMeaning(row.meaning, c.meaning)) problems.push(`close code ${row.code}: meaning seed "${row.meaning}", contract "${c.meaning}"`);
  }

  // State machine (section 6).
  const sm = contract.stateMachine;
  const stateNames = new Set(sm.states.map((s) => s.name));
  const seedEdges = seed.transitions.filter((t) => t.from !== '[*]' && t.to !== '[*]');
  for (const t of seed.transitions) {
    checked.transitions++;
    if (t.from === '[*]') {
      if (sm.initial !== t.to) problems.push(`state machine: seed initial state ${t.to}, contract ${sm.initial}`);
    } else if (t.to === '[*]') {
      const f = sm.final.find((x) => x.from === t.from);
      if (!f) problems.push(`state machine: seed final transition from ${t.from} missing`);
      else if (!keepsMeaning(t.label, f.description ?? '')) problems.push(`state machine: final ${t.from}: seed "${t.label}", contract "${f.description ?? ''}"`);
    } else {
      const c = sm.transitions.filter((x) => x.from === t.from && x.to === t.to);
      if (c.length !== 1) problems.push(`state machine: transition ${t.from} --> ${t.to}: ${c.length} in the contract, expected 1`);
      else if (!keepsMeaning(t.label, c[0]!.description ?? '')) problems.push(`state machine: ${t.from} --> ${t.to}: seed "${t.label}", contract "${c[0]!.description ?? ''}"`);
    }
    for (const s of [t.from, t.to]) if (s !== '[*]' && !stateNames.has(s)) problems.push(`state machine: state ${s} missing from contract states`);
  }
  for (const c of sm.transitions) {
    if (!seedEdges.some((t) => t.from === c.from && t.to === c.to)) problems.push(`state machine: contract transition ${c.from} --> ${c.to} is not in the seed`);
  }
  for (const f of sm.final) {
    if (!seed.transitions.some((t) => t.from === f.from && t.to === '[*]')) problems.push(`state machine: contract final state ${f.from} is not final in the seed`);
  }

  return { problems, checked };
}
