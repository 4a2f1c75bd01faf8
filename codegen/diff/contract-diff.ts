/**
 * Breaking-change check for contract/ (seed section 9, issue 7).
 *
 * diffContracts(old, new) compares two loaded contracts and classifies every change as
 * "breaking" or "additive". The model, taken from seed 9:
 *
 *  - Additive: new methods, new optional fields, new probes, new error/close codes, anything
 *    that only WIDENS what a schema accepts (enum value added, bound relaxed, pattern/format
 *    removed, additionalProperties false → true), documentation.
 *  - Breaking: anything REMOVED or RENAMED (methods, fields, codes, probes), anything that
 *    NARROWS what a schema accepts (type, enum, const, range, pattern, format, additional-
 *    Properties tightened), new required fields without a default, changed semantics
 *    (error meaning/name/number, close codes, direction/kind of a method, defaults), and a
 *    change of protocol_version or subprotocol without the other.
 *
 * A note on new optional fields. Seed 9 calls them additive, and this check follows it. But
 * this contract uses additionalProperties:false almost everywhere, so a receiver that
 * validates with the OLD schema rejects a message that carries the new field. "Additive"
 * therefore means: the change does not need a protocol_version bump, and senders must only
 * send the new field to peers known to accept it (seed 9: "additive evolution requires
 * explicit schema relaxation"). The report says so on each such line.
 *
 * Schema changes are found by walking every schema file (schemas/*.json and the probe
 * args/output schemas) including its $defs, so a change in a shared definition is reported
 * once, at the definition, with the methods that reach it through $ref listed as "used by".
 * Where a $ref itself changes (retargeted, or inlined ↔ referenced) both sides are resolved
 * and compared structurally, so a pure refactoring is not a change.
 *
 * Whatever is not understood is never silently passed: an unknown schema keyword that
 * changed, or a data-file difference no rule accounted for, is reported as breaking
 * ("cannot prove compatible").
 */
import type { Contract, JsonSchema, MethodEntry, ErrorEntry, CloseCodeEntry, LimitEntry } from '../contract.js';
import { schemaIdBase } from '../contract.js';

export type ChangeKind = 'breaking' | 'additive';

export interface Change {
  kind: ChangeKind;
  /** Short rule name, e.g. "method-removed", "type-narrowed". */
  rule: string;
  /** Location: "methods.json:agent.hello", "schemas/defs.json#/$defs/LogBatchEntry/properties/seq", "limits.json:max_frame_bytes". */
  where: string;
  detail: string;
}

export interface DiffResult {
  changes: Change[];
  breaking: number;
  additive: number;
  /** Breaking changes are allowed: protocol_version and subprotocol were bumped together. */
  allowed: boolean;
  exit_code: 0 | 1;
}

// ---------------------------------------------------------------------------------------
// Small helpers

type Obj = { [k: string]: unknown };
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (isObj(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}
const deepEqual = (a: unknown, b: unknown) => canon(a) === canon(b);

/** Compact rendering of a JSON value for report details. */
function show(v: unknown): string {
  if (v === undefined) return '(absent)';
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

const escapePtr = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const unescapePtr = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

function at(file: string, path: string[]): string {
  return path.length === 0 ? file : `${file}#/${path.map(escapePtr).join('/')}`;
}

// ---------------------------------------------------------------------------------------
// Schema files of a contract, keyed "schemas/<file>" or "probes/<probe>.<args|output>.json".

function schemaFiles(c: Contract): Map<string, JsonSchema> {
  const m = new Map<string, JsonSchema>();
  for (const [f, s] of c.schemas) m.set(`schemas/${f}`, s);
  for (const p of c.probes) {
    m.set(`probes/${p.name}.args.json`, p.args);
    m.set(`probes/${p.name}.output.json`, p.output);
  }
  return m;
}

/** $id-relative URL of a schema file key: "schemas/x.json" → "x.json", "probes/a.json" → "probes/a.json". */
const idPath = (key: string) => (key.startsWith('schemas/') ? key.slice('schemas/'.length) : key);
const keyOfIdPath = (p: string) => (p.startsWith('probes/') ? p : `schemas/${p}`);

interface Resolved {
  file: string;
  path: string[];
  schema: unknown;
}

function resolveRef(files: Map<string, JsonSchema>, fromFile: string, ref: string): Resolved | undefined {
  let url: URL;
  try {
    url = new URL(ref, schemaIdBase + idPath(fromFile));
  } catch {
    return undefined;
  }
  const full = url.origin + url.pathname;
  if (!full.startsWith(schemaIdBase)) return undefined;
  const file = keyOfIdPath(full.slice(schemaIdBase.length));
  const root = files.get(file);
  if (root === undefined) return undefined;
  const frag = decodeURIComponent(url.hash.replace(/^#/, ''));
  const path = frag === '' ? [] : frag.replace(/^\//, '').split('/').map(unescapePtr);
  let node: unknown = root;
  for (const seg of path) {
    if (isObj(node) && seg in node) node = node[seg];
    else if (Array.isArray(node) && /^\d+$/.test(seg)) node = node[Number(seg)];
    else return undefined;
  }
  return { file, path, schema: node };
}

/**
 * "used by" index: for every $ref target reachable from a method's params/result schema (or
 * an error's data definition), which methods/errors reach it.
 */
function usageIndex(c: Contract, files: Map<string, JsonSchema>): Map<string, Set<string>> {
  const index = new Map<string, Set<string>>();
  const add = (target: string, user: string) => {
    let s = index.get(target);
    if (!s) index.set(target, (s = new Set()));
    s.add(user);
  };
  const walk = (node: unknown, file: string, user: string, seen: Set<string>) => {
    if (Array.isArray(node)) {
      for (const x of node) walk(x, file, user, seen);
      return;
    }
    if (!isObj(node)) return;
    if (typeof node['$ref'] === 'string') {
      const r = resolveRef(files, file, node['$ref']);
      if (r) {
        const key = at(r.file, r.path);
        add(key, user);
        if (!seen.has(key)) {
          seen.add(key);
          walk(r.schema, r.file, user, seen);
        }
      }
    }
    for (const [k, v] of Object.entries(node)) if (k !== '$defs' && k !== '$ref') walk(v, file, user, seen);
  };
  for (const m of c.methods) {
    for (const part of ['params', 'result'] as const) {
      const f = m[part];
      if (f !== undefined && files.has(`schemas/${f}`)) walk(files.get(`schemas/${f}`), `schemas/${f}`, `${m.name} ${part}`, new Set());
    }
  }
  for (const p of c.probes) {
    walk(p.args, `probes/${p.name}.args.json`, `probe ${p.name} args`, new Set());
    walk(p.output, `probes/${p.name}.output.json`, `probe ${p.name} output`, new Set());
  }
  for (const e of c.errors) {
    if (e.data === undefined) continue;
    const key = at('schemas/error-data.json', ['$defs', e.data]);
    add(key, `error ${e.code} data`);
    const r = resolveRef(files, 'schemas/error-data.json', `#/$defs/${e.data}`);
    if (r) walk(r.schema, r.file, `error ${e.code} data`, new Set([key]));
  }
  return index;
}

// ---------------------------------------------------------------------------------------
// Schema comparison

const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains'];
const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains'];
/** Documentation only: never changes what validates. */
const ANNOTATIONS = ['title', 'description', '$comment', 'examples', 'deprecated', 'readOnly', 'writeOnly'];
/** Keywords compareSchema handles itself; any other keyword that differs is reported as "keyword-changed" (breaking). */
const HANDLED = new Set([
  ...LOWER_BOUNDS,
  ...UPPER_BOUNDS,
  ...ANNOTATIONS,
  '$ref',
  'type',
  'enum',
  'const',
  'multipleOf',
  'uniqueItems',
  'pattern',
  'format',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  '$defs',
  'default',
]);

interface Loc {
  oldFile: string;
  newFile: string;
  /** Display file and path (where the change is reported). */
  file: string;
  path: string[];
}

class Differ {
  readonly changes: Change[] = [];
  readonly oldFiles: Map<string, JsonSchema>;
  readonly newFiles: Map<string, JsonSchema>;
  private oldUsage?: Map<string, Set<string>>;
  private newUsage?: Map<string, Set<string>>;
  private readonly refStack = new Set<string>();

  constructor(
    readonly oldC: Contract,
    readonly newC: Contract,
  ) {
    this.oldFiles = schemaFiles(oldC);
    this.newFiles = schemaFiles(newC);
  }

  add(kind: ChangeKind, rule: string, where: string, detail: string) {
    this.changes.push({ kind, rule, where, detail });
  }

  /** "(used by: logs.push params, ...)" for locations inside a $defs entry that methods reach through $ref. */
  usedBy(loc: Loc, side: 'old' | 'new'): string {
    if (!loc.path.includes('$defs')) return '';
    const idx = side === 'old' ? (this.oldUsage ??= usageIndex(this.oldC, this.oldFiles)) : (this.newUsage ??= usageIndex(this.newC, this.newFiles));
    const here = at(loc.file, loc.path);
    const users = new Set<string>();
    for (const [target, us] of idx) if (here === target || here.startsWith(`${target}/`)) for (const u of us) users.add(u);
    return users.size === 0 ? '' : ` (used by: ${[...users].sort().join(', ')})`;
  }

  schemaChange(kind: ChangeKind, rule: string, loc: Loc, detail: string, side: 'old' | 'new' = 'new') {
    this.add(kind, rule, at(loc.file, loc.path), detail + this.usedBy(loc, side));
  }

  compareSchema(oIn: unknown, nIn: unknown, loc: Loc): void {
    // Boolean schemas: true ≡ {}, false ≡ {not: {}}.
    let o: Obj = oIn === true || oIn === undefined ? {} : oIn === false ? { not: {} } : isObj(oIn) ? { ...oIn } : {};
    let n: Obj = nIn === true || nIn === undefined ? {} : nIn === false ? { not: {} } : isObj(nIn) ? { ...nIn } : {};
    let { oldFile, newFile } = loc;

    const oRef = typeof o['$ref'] === 'string' ? (o['$ref'] as string) : undefined;
    const nRef = typeof n['$ref'] === 'string' ? (n['$ref'] as string) : undefined;
    if (oRef !== undefined && oRef === nRef) {
      // Same target: the target is compared at its own location (its file / $defs entry).
      delete o['$ref'];
      delete n['$ref'];
    } else if (oRef !== undefined || nRef !== undefined) {
      // Retargeted, or inlined ↔ referenced: compare what each side actually means.
      const guard = `${oldFile}|${oRef}|${newFile}|${nRef}`;
      if (this.refStack.has(guard)) return;
      if (oRef !== undefined) {
        const r = resolveRef(this.oldFiles, oldFile, oRef);
        if (!r) return this.schemaChange('breaking', 'ref-unresolvable', loc, `old $ref ${oRef} does not resolve`, 'old');
        delete o['$ref'];
        o = { ...(isObj(r.schema) ? r.schema : r.schema === false ? { not: {} } : {}), ...o };
        oldFile = r.file;
      }
      if (nRef !== undefined) {
        const r = resolveRef(this.newFiles, newFile, nRef);
        if (!r) return this.schemaChange('breaking', 'ref-unresolvable', loc, `new $ref ${nRef} does not resolve`);
        delete n['$ref'];
        n = { ...(isObj(r.schema) ? r.schema : r.schema === false ? { not: {} } : {}), ...n };
        newFile = r.file;
      }
      // $defs of a resolved target belong to its own file and are compared there.
      delete o['$defs'];
      delete n['$defs'];
      this.refStack.add(guard);
      const before = this.changes.length;
      try {
        this.compareNode(o, n, { ...loc, oldFile, newFile });
      } finally {
        this.refStack.delete(guard);
      }
      // Same meaning, different spelling: still a change of the file, and a harmless one.
      if (this.changes.length === before) {
        const how = oRef === undefined ? `inlined schema replaced by $ref ${nRef}` : nRef === undefined ? `$ref ${oRef} inlined` : `$ref ${oRef} → ${nRef}`;
        this.schemaChange('additive', 'ref-refactored', loc, `${how} (resolved schemas accept the same values)`);
      }
      return;
    }
    this.compareNode(o, n, loc);
  }

  private compareNode(o: Obj, n: Obj, loc: Loc): void {
    const sub = (...segs: string[]): Loc => ({ ...loc, path: [...loc.path, ...segs] });

    // --- type
    if (!deepEqual(o['type'], n['type'])) {
      const ot = typeSet(o['type']);
      const nt = typeSet(n['type']);
      const lost = ot === null ? (nt === null ? [] : ['(any type)']) : ot.filter((t) => !covers(nt, t));
      const gained = nt === null ? (ot === null ? [] : ['(any type)']) : nt.filter((t) => !covers(ot, t));
      if (lost.length > 0) this.schemaChange('breaking', 'type-narrowed', loc, `type ${show(o['type'])} → ${show(n['type'])} (no longer accepts ${lost.join(', ')})`);
      else if (gained.length > 0) this.schemaChange('additive', 'type-widened', loc, `type ${show(o['type'])} → ${show(n['type'])} (now also accepts ${gained.join(', ')})`);
      else this.schemaChange('additive', 'type-rewritten', loc, `type ${show(o['type'])} → ${show(n['type'])} (accepts the same values)`);
    }

    // --- enum
    const oe = o['enum'];
    const ne = n['enum'];
    if (!deepEqual(oe, ne)) {
      if (!Array.isArray(oe) && Array.isArray(ne)) this.schemaChange('breaking', 'enum-narrowed', loc, `enum added: only ${show(ne)} accepted now`);
      else if (Array.isArray(oe) && !Array.isArray(ne)) this.schemaChange('additive', 'enum-widened', loc, `enum ${show(oe)} removed (any value of the type accepted now)`);
      else if (Array.isArray(oe) && Array.isArray(ne)) {
        const removed = oe.filter((v) => !ne.some((w) => deepEqual(v, w)));
        const added = ne.filter((v) => !oe.some((w) => deepEqual(v, w)));
        for (const v of removed) this.schemaChange('breaking', 'enum-value-removed', loc, `enum value ${show(v)} removed`);
        for (const v of added) this.schemaChange('additive', 'enum-value-added', loc, `enum value ${show(v)} added`);
        if (removed.length === 0 && added.length === 0) this.schemaChange('additive', 'enum-reordered', loc, `enum values reordered (same set)`);
      }
    }

    // --- const
    if (!deepEqual(o['const'], n['const'])) {
      if (n['const'] === undefined) this.schemaChange('additive', 'const-removed', loc, `const ${show(o['const'])} removed`);
      else this.schemaChange('breaking', 'const-changed', loc, `const ${show(o['const'])} → ${show(n['const'])}`);
    }

    // --- numeric / length / count bounds
    for (const k of LOWER_BOUNDS) this.bound(k, o[k], n[k], 'lower', loc);
    for (const k of UPPER_BOUNDS) this.bound(k, o[k], n[k], 'upper', loc);
    if (!deepEqual(o['multipleOf'], n['multipleOf'])) {
      const a = o['multipleOf'];
      const b = n['multipleOf'];
      // Widened when every old multiple is a new multiple, i.e. the new step divides the old one.
      if (b === undefined || (typeof a === 'number' && typeof b === 'number' && Number.isInteger(a / b))) this.schemaChange('additive', 'range-widened', loc, `multipleOf ${show(a)} → ${show(b)}`);
      else this.schemaChange('breaking', 'range-narrowed', loc, `multipleOf ${show(a)} → ${show(b)}`);
    }
    if (Boolean(o['uniqueItems']) !== Boolean(n['uniqueItems'])) {
      if (n['uniqueItems'] === true) this.schemaChange('breaking', 'range-narrowed', loc, `uniqueItems now required`);
      else this.schemaChange('additive', 'range-widened', loc, `uniqueItems no longer required`);
    }

    // --- pattern / format
    if (o['pattern'] !== n['pattern']) {
      if (n['pattern'] === undefined) this.schemaChange('additive', 'pattern-removed', loc, `pattern ${show(o['pattern'])} removed`);
      else if (o['pattern'] === undefined) this.schemaChange('breaking', 'pattern-changed', loc, `pattern ${show(n['pattern'])} added (cannot prove it is not narrower)`);
      else this.schemaChange('breaking', 'pattern-changed', loc, `pattern changed (cannot prove it is not narrower): ${show(o['pattern'])} → ${show(n['pattern'])}`);
    }
    if (o['format'] !== n['format']) {
      if (n['format'] === undefined) this.schemaChange('additive', 'format-removed', loc, `format ${show(o['format'])} removed`);
      else if (o['format'] === undefined) this.schemaChange('breaking', 'format-changed', loc, `format ${show(n['format'])} added`);
      else this.schemaChange('breaking', 'format-changed', loc, `format ${show(o['format'])} → ${show(n['format'])}`);
    }

    // --- properties and required
    const op = isObj(o['properties']) ? o['properties'] : {};
    const np = isObj(n['properties']) ? n['properties'] : {};
    const oreq = new Set(Array.isArray(o['required']) ? (o['required'] as string[]) : []);
    const nreq = new Set(Array.isArray(n['required']) ? (n['required'] as string[]) : []);
    const removedProps = Object.keys(op).filter((k) => !(k in np));
    const addedProps = Object.keys(np).filter((k) => !(k in op));
    const closedBefore = o['additionalProperties'] === false;
    for (const k of removedProps) {
      const twin = addedProps.find((a) => deepEqual(op[k], np[a]));
      const hint = twin !== undefined ? `; renamed to "${twin}"? a rename is a removal plus an addition` : '';
      this.schemaChange('breaking', 'field-removed', sub('properties', k), `${oreq.has(k) ? 'required' : 'optional'} field "${k}" removed${hint}`, 'old');
    }
    for (const k of addedProps) {
      const ps = np[k];
      if (nreq.has(k)) {
        if (isObj(ps) && 'default' in ps) this.schemaChange('additive', 'required-field-added-with-default', sub('properties', k), `new required field "${k}" with default ${show(ps['default'])} (seed 9: only required fields WITHOUT a default are breaking; receivers must apply the default to messages from older senders)`);
        else this.schemaChange('breaking', 'required-field-added', sub('properties', k), `new required field "${k}" without default (older senders do not send it)`);
      } else {
        this.schemaChange('additive', 'optional-field-added', sub('properties', k), `new optional field "${k}" (additive per seed 9${closedBefore ? '; the old schema has additionalProperties:false, so receivers built from it reject the field: send it only to peers that know it' : ''})`);
      }
    }
    for (const k of Object.keys(op)) if (k in np) this.compareSchema(op[k], np[k], sub('properties', k));
    for (const k of nreq) {
      if (oreq.has(k) || addedProps.includes(k)) continue;
      this.schemaChange('breaking', 'field-made-required', sub('properties', k), `field "${k}" is now required (older senders may omit it)`);
    }
    for (const k of oreq) {
      if (nreq.has(k) || removedProps.includes(k)) continue;
      this.schemaChange('additive', 'field-made-optional', sub('properties', k), `field "${k}" is no longer required (receivers must not rely on it)`);
    }

    // --- additionalProperties
    const oa = apState(o['additionalProperties']);
    const na = apState(n['additionalProperties']);
    if (oa.state === 'schema' && na.state === 'schema') this.compareSchema(o['additionalProperties'], n['additionalProperties'], sub('additionalProperties'));
    else if (oa.state !== na.state) {
      const desc = `additionalProperties ${show(o['additionalProperties'])} → ${show(n['additionalProperties'])}`;
      const tighter = (oa.state === 'open' && na.state !== 'open') || (oa.state === 'schema' && na.state === 'closed');
      if (tighter) this.schemaChange('breaking', 'additional-properties-tightened', loc, `${desc} (properties older senders may send are rejected now)`);
      else this.schemaChange('additive', 'additional-properties-relaxed', loc, desc);
    }

    // --- items / not
    if (!deepEqual(o['items'], n['items'])) this.compareSchema(o['items'] ?? {}, n['items'] ?? {}, sub('items'));
    if (!deepEqual(o['not'], n['not'])) {
      if (n['not'] === undefined) this.schemaChange('additive', 'not-removed', loc, `not ${show(o['not'])} removed`);
      else this.schemaChange('breaking', 'not-changed', loc, `not ${show(o['not'])} → ${show(n['not'])} (cannot prove it is not narrower)`);
    }

    // --- unions and intersections
    for (const kw of ['oneOf', 'anyOf'] as const) this.branches(kw, o[kw], n[kw], loc, 'union');
    this.branches('allOf', o['allOf'], n['allOf'], loc, 'intersection');

    // --- $defs (each definition compared at its own location)
    const od = isObj(o['$defs']) ? o['$defs'] : {};
    const nd = isObj(n['$defs']) ? n['$defs'] : {};
    for (const k of Object.keys(od)) {
      if (!(k in nd)) this.schemaChange('breaking', 'def-removed', sub('$defs', k), `shared definition "${k}" removed`, 'old');
      else this.compareSchema(od[k], nd[k], sub('$defs', k));
    }
    for (const k of Object.keys(nd)) if (!(k in od)) this.schemaChange('additive', 'def-added', sub('$defs', k), `shared definition "${k}" added`);

    // --- default: a changed or removed default changes what a missing field means.
    if (!deepEqual(o['default'], n['default'])) {
      if (o['default'] === undefined) this.schemaChange('additive', 'default-added', loc, `default ${show(n['default'])} added`);
      else this.schemaChange('breaking', 'default-changed', loc, `default ${show(o['default'])} → ${show(n['default'])} (changes the meaning of an omitted field)`);
    }

    // --- annotations (documentation only)
    const docs = ANNOTATIONS.filter((k) => !deepEqual(o[k], n[k]));
    if (docs.length > 0) {
      const title = docs.includes('title') ? ` (title ${show(o['title'])} → ${show(n['title'])} renames the generated type)` : '';
      this.schemaChange('additive', 'annotation-changed', loc, `${docs.join(', ')} changed; documentation only${title}`);
    }

    // --- anything else: not understood, so not provably compatible
    for (const k of new Set([...Object.keys(o), ...Object.keys(n)])) {
      if (HANDLED.has(k) || deepEqual(o[k], n[k])) continue;
      this.schemaChange('breaking', 'keyword-changed', loc, `${k} ${show(o[k])} → ${show(n[k])} (keyword not analysed; cannot prove compatible)`);
    }
  }

  private bound(k: string, a: unknown, b: unknown, side: 'lower' | 'upper', loc: Loc) {
    if (deepEqual(a, b)) return;
    const desc = a === undefined ? `${k} ${show(b)} added` : b === undefined ? `${k} ${show(a)} removed` : `${k} ${show(a)} → ${show(b)}`;
    let narrower: boolean;
    if (a === undefined) narrower = true;
    else if (b === undefined) narrower = false;
    else if (typeof a === 'number' && typeof b === 'number') narrower = side === 'lower' ? b > a : b < a;
    else narrower = true;
    if (narrower) this.schemaChange('breaking', 'range-narrowed', loc, `${desc} (${side === 'lower' ? 'lower bound raised' : 'upper bound lowered'})`);
    else this.schemaChange('additive', 'range-widened', loc, `${desc} (${side === 'lower' ? 'lower bound relaxed' : 'upper bound raised'})`);
  }

  /**
   * oneOf/anyOf: a branch added widens (additive), a branch removed narrows (breaking).
   * allOf is the other way round. Identical branches are matched wherever they moved; the
   * remaining ones are paired in order and compared structurally.
   */
  private branches(kw: string, a: unknown, b: unknown, loc: Loc, mode: 'union' | 'intersection') {
    if (deepEqual(a, b)) return;
    const oa = Array.isArray(a) ? a : undefined;
    const na = Array.isArray(b) ? b : undefined;
    const sub = (i: number): Loc => ({ ...loc, path: [...loc.path, kw, String(i)] });
    if (oa === undefined || na === undefined) {
      const addedKw = oa === undefined;
      const breaking = mode === 'union' ? addedKw : !addedKw;
      this.schemaChange(breaking ? 'breaking' : 'additive', `${kw}-${addedKw ? 'added' : 'removed'}`, loc, `${kw} ${addedKw ? 'added' : 'removed'}`);
      return;
    }
    const usedNew = new Set<number>();
    const unmatchedOld: number[] = [];
    oa.forEach((x, i) => {
      const j = na.findIndex((y, jj) => !usedNew.has(jj) && deepEqual(x, y));
      if (j >= 0) usedNew.add(j);
      else unmatchedOld.push(i);
    });
    const unmatchedNew = na.map((_, j) => j).filter((j) => !usedNew.has(j));
    const pairs = Math.min(unmatchedOld.length, unmatchedNew.length);
    for (let p = 0; p < pairs; p++) this.compareSchema(oa[unmatchedOld[p]!], na[unmatchedNew[p]!], { ...sub(unmatchedNew[p]!), oldFile: loc.oldFile, newFile: loc.newFile });
    for (const i of unmatchedOld.slice(pairs)) {
      this.schemaChange(mode === 'union' ? 'breaking' : 'additive', `${kw}-branch-removed`, sub(i), `${kw} branch ${show(oa[i])} removed`, 'old');
    }
    for (const j of unmatchedNew.slice(pairs)) {
      this.schemaChange(mode === 'union' ? 'additive' : 'breaking', `${kw}-branch-added`, sub(j), `${kw} branch ${show(na[j])} added`);
    }
  }
}

function typeSet(t: unknown): string[] | null {
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  return null;
}
function covers(set: string[] | null, t: string): boolean {
  return set === null || set.includes(t) || (t === 'integer' && set.includes('number'));
}
function apState(v: unknown): { state: 'open' | 'closed' | 'schema' } {
  if (v === undefined || v === true || (isObj(v) && Object.keys(v).length === 0)) return { state: 'open' };
  if (v === false) return { state: 'closed' };
  return { state: 'schema' };
}

// ---------------------------------------------------------------------------------------
// Limits policy. Each limit is judged by who depends on it:
//   ceiling  — the largest/longest thing a receiver accepts or waits for. Lowering it rejects
//              what older peers send (breaking); raising it is additive.
//   promise  — a bound one side promises the other (the server acks within ack_flush_ms, pings
//              every ping_interval_ms, ...). Raising it breaks peers that rely on it; lowering
//              is additive.
//   floor    — a minimum one side promises (heartbeats are never closer than N s). Lowering
//              it is breaking.
//   exact    — a value both sides must agree on (path, first seq, close-reason format): any
//              change is breaking.
//   local    — a tuning value of one implementation that never shows on the wire or in a
//              peer's expectations (agent backoff, buffer caps, default drains that travel
//              explicitly in messages): any change is additive.
// Limits not listed are treated as ceilings (lowered = breaking) and the report says so.
// protocol_version and subprotocol are handled separately (see versioning below).

type LimitPolicy = 'ceiling' | 'promise' | 'floor' | 'exact' | 'local';
export const LIMIT_POLICY: Record<string, LimitPolicy> = {
  max_frame_bytes: 'ceiling',
  pre_hello_bytes: 'ceiling',
  max_hello_frame_bytes: 'ceiling',
  hello_timeout_ms: 'ceiling', // time the server gives an agent to say hello
  missed_pongs: 'ceiling',
  logs_push_max_entries: 'ceiling',
  metrics_push_max_samples: 'ceiling',
  max_message_chars: 'ceiling',
  server_max_batch_entries: 'ceiling',
  upgrades_per_minute: 'ceiling',
  rotation_grace_secs: 'ceiling', // how long the previous token keeps working
  rotation_close_grace_ms: 'ceiling', // how long an agent has to reconnect before 1012
  max_drain_seconds: 'ceiling',
  ingest_queue_min_batches: 'ceiling',
  agent_rate_entries_per_s: 'ceiling',
  ack_flush_entries: 'promise', // agents keep up to K entries un-acked
  ack_flush_ms: 'promise', // agents wait up to T for an ack
  ping_interval_ms: 'promise', // agents may use ping silence to detect a dead link
  control_propagation_ms: 'promise',
  heartbeat_jitter_s: 'promise', // the server expects a heartbeat within interval + jitter
  heartbeat_min_interval_s: 'floor',
  ws_path: 'exact',
  first_seq: 'exact',
  final_seq_close_reason: 'exact',
  backoff_base_s: 'local',
  backoff_cap_s: 'local',
  backoff_reset_after_active_s: 'local',
  retry_after_default_ms: 'local',
  backpressure_recovery_ms: 'local',
  agent_frame_target_bytes: 'local',
  buffer_soft_cap_bytes: 'local',
  buffer_hard_cap_bytes: 'local',
  shutdown_drain_secs: 'local', // sent explicitly as drain_seconds
  decommission_drain_secs: 'local', // sent explicitly as drain_seconds
};

function diffLimits(d: Differ) {
  const o = d.oldC.limits;
  const n = d.newC.limits;
  for (const name of Object.keys(o)) {
    if (name === 'subprotocol' || name === 'protocol_version') continue;
    const where = `limits.json:${name}`;
    const a = o[name] as LimitEntry;
    const b = n[name];
    if (b === undefined) {
      d.add('breaking', 'limit-removed', where, `limit ${name} (${show(a.value)}) removed`);
      continue;
    }
    if (a.unit !== b.unit) d.add('breaking', 'limit-unit-changed', where, `unit ${show(a.unit)} → ${show(b.unit)}`);
    if (!deepEqual(a.value, b.value)) {
      const policy = LIMIT_POLICY[name];
      const desc = `${name} ${show(a.value)} → ${show(b.value)}`;
      if (typeof a.value !== 'number' || typeof b.value !== 'number') {
        d.add(policy === 'local' ? 'additive' : 'breaking', 'limit-changed', where, `${desc}${policy === 'local' ? ' (implementation tuning)' : ' (a value both sides must agree on)'}`);
      } else if (policy === 'local') d.add('additive', 'limit-changed', where, `${desc} (implementation tuning; not visible to peers)`);
      else if (policy === 'exact') d.add('breaking', 'limit-changed', where, `${desc} (a value both sides must agree on)`);
      else {
        const raised = b.value > a.value;
        const effective = policy ?? 'ceiling';
        const breaking = effective === 'promise' ? raised : !raised;
        const why =
          effective === 'promise'
            ? raised
              ? 'peers relying on the promised bound wait longer or keep more'
              : 'a tighter promise'
            : raised
              ? 'accepts more than before'
              : 'rejects or cuts off what older peers may send';
        const unlisted = policy === undefined ? '; limit has no policy entry, judged as a ceiling' : '';
        d.add(breaking ? 'breaking' : 'additive', raised ? 'limit-raised' : 'limit-lowered', where, `${desc} (${why}${unlisted})`);
      }
    }
    const docs = (['source', 'description'] as const).filter((k) => a[k] !== b[k]);
    if (docs.length > 0) d.add('additive', 'annotation-changed', where, `${docs.join(', ')} changed; documentation only`);
  }
  for (const name of Object.keys(n)) {
    if (name === 'subprotocol' || name === 'protocol_version' || name in o) continue;
    d.add('additive', 'limit-added', `limits.json:${name}`, `limit ${name} = ${show((n[name] as LimitEntry).value)} added`);
  }
}

// ---------------------------------------------------------------------------------------
// Versioning (seed 9): protocol_version and subprotocol move together, never alone.

export interface VersionInfo {
  oldVersion: unknown;
  newVersion: unknown;
  oldSubprotocol: unknown;
  newSubprotocol: unknown;
  /** Both bumped together, consistently: breaking changes are allowed. */
  bumped: boolean;
}

export function versionInfo(oldC: Contract, newC: Contract): VersionInfo {
  const ov = oldC.limits['protocol_version']?.value;
  const nv = newC.limits['protocol_version']?.value;
  const os = oldC.limits['subprotocol']?.value;
  const ns = newC.limits['subprotocol']?.value;
  const bumped = typeof ov === 'number' && typeof nv === 'number' && nv > ov && os !== ns && ns === `cortex.v${nv}`;
  return { oldVersion: ov, newVersion: nv, oldSubprotocol: os, newSubprotocol: ns, bumped };
}

function diffVersioning(d: Differ) {
  const v = versionInfo(d.oldC, d.newC);
  const vChanged = !deepEqual(v.oldVersion, v.newVersion);
  const sChanged = !deepEqual(v.oldSubprotocol, v.newSubprotocol);
  if (!vChanged && !sChanged) return;
  if (v.bumped) {
    d.add('breaking', 'protocol-version-bumped', 'limits.json:protocol_version', `protocol_version ${show(v.oldVersion)} → ${show(v.newVersion)} with subprotocol ${show(v.oldSubprotocol)} → ${show(v.newSubprotocol)} (new major version: breaking changes allowed)`);
  } else if (vChanged && !sChanged) {
    d.add('breaking', 'protocol-version-changed-alone', 'limits.json:protocol_version', `protocol_version ${show(v.oldVersion)} → ${show(v.newVersion)} but subprotocol stays ${show(v.oldSubprotocol)} (seed 9: bump both together)`);
  } else if (sChanged && !vChanged) {
    d.add('breaking', 'subprotocol-changed-alone', 'limits.json:subprotocol', `subprotocol ${show(v.oldSubprotocol)} → ${show(v.newSubprotocol)} but protocol_version stays ${show(v.oldVersion)} (seed 9: bump both together)`);
  } else {
    d.add('breaking', 'version-mismatch', 'limits.json:protocol_version', `protocol_version ${show(v.oldVersion)} → ${show(v.newVersion)} with subprotocol ${show(v.oldSubprotocol)} → ${show(v.newSubprotocol)}: a bump must raise protocol_version to N and set the subprotocol to cortex.vN`);
  }
}

// ---------------------------------------------------------------------------------------
// Methods, errors, close codes, probes, state machine, examples

function diffMethods(d: Differ) {
  const om = new Map(d.oldC.methods.map((m) => [m.name, m]));
  const nm = new Map(d.newC.methods.map((m) => [m.name, m]));
  const removed = [...om.values()].filter((m) => !nm.has(m.name));
  const added = [...nm.values()].filter((m) => !om.has(m.name));
  for (const m of removed) {
    const twins = added.filter((a) => a.direction === m.direction && a.kind === m.kind).map((a) => a.name);
    const hint = twins.length > 0 ? `; renamed to ${twins.join(' or ')}? a rename is a removal plus an addition` : '';
    d.add('breaking', 'method-removed', `methods.json:${m.name}`, `${m.kind} ${m.name} (${m.direction}) removed${hint}`);
  }
  for (const m of added) d.add('additive', 'method-added', `methods.json:${m.name}`, `${m.kind} ${m.name} (${m.direction}) added`);
  for (const [name, a] of om) {
    const b = nm.get(name);
    if (!b) continue;
    const where = `methods.json:${name}`;
    if (a.direction !== b.direction) d.add('breaking', 'method-direction-changed', where, `direction ${a.direction} → ${b.direction}`);
    if (a.kind !== b.kind) d.add('breaking', 'method-kind-changed', where, `kind ${a.kind} → ${b.kind}`);
    if (a.response_to !== b.response_to) d.add('breaking', 'method-response-to-changed', where, `response_to ${show(a.response_to)} → ${show(b.response_to)}`);
    for (const part of ['params', 'result'] as const) diffMethodSchemaRef(d, a, b, part);
    // Error lists are append-only like the codes themselves: a new code the receiver may
    // answer with is additive; dropping one changes what older peers were promised.
    for (const c of b.errors) if (!a.errors.includes(c)) d.add('additive', 'method-error-added', where, `may now answer with error ${c}`);
    for (const c of a.errors) if (!b.errors.includes(c)) d.add('breaking', 'method-error-removed', where, `error ${c} removed from the method's error list (changes what older peers were promised)`);
    const docs = (['summary', 'section'] as const).filter((k) => a[k] !== b[k]);
    if (!deepEqual(a.examples, b.examples)) docs.push('examples' as never);
    if (docs.length > 0) d.add('additive', 'annotation-changed', where, `${docs.join(', ')} changed; documentation only`);
    const known = new Set(['name', 'section', 'direction', 'kind', 'response_to', 'summary', 'params', 'result', 'errors', 'examples']);
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (known.has(k)) continue;
      const x = (a as unknown as Obj)[k];
      const y = (b as unknown as Obj)[k];
      if (!deepEqual(x, y)) d.add('breaking', 'method-field-changed', where, `${k} ${show(x)} → ${show(y)} (field not analysed; cannot prove compatible)`);
    }
  }
}

function diffMethodSchemaRef(d: Differ, a: MethodEntry, b: MethodEntry, part: 'params' | 'result') {
  const x = a[part];
  const y = b[part];
  if (x === y) return; // same file: compared at the file itself
  const where = `methods.json:${a.name}`;
  if (x === undefined) return d.add('breaking', `method-${part}-added`, where, `${part} schema ${y} added where there was none`);
  if (y === undefined) return d.add('breaking', `method-${part}-removed`, where, `${part} schema ${x} removed`);
  // Different file: compare what the two files accept, reported under the method.
  d.compareSchema(d.oldFiles.get(`schemas/${x}`), d.newFiles.get(`schemas/${y}`), { oldFile: `schemas/${x}`, newFile: `schemas/${y}`, file: `${where}/${part}`, path: [] });
  d.add('additive', 'method-schema-file-changed', where, `${part} schema file ${x} → ${y} (contents compared above)`);
}

function diffErrors(d: Differ) {
  const oe = new Map(d.oldC.errors.map((e) => [e.code, e]));
  const ne = new Map(d.newC.errors.map((e) => [e.code, e]));
  const newByName = new Map(d.newC.errors.map((e) => [e.name, e]));
  const renumbered = new Set<number>(); // new codes explained by a renumbering
  for (const [code, a] of oe) {
    const b = ne.get(code);
    const where = `errors.json:${code}`;
    const moved = newByName.get(a.name);
    if (moved !== undefined && moved.code !== code && !oe.has(moved.code)) {
      renumbered.add(moved.code);
      d.add('breaking', 'error-code-renumbered', where, `${a.name} renumbered ${code} → ${moved.code} (seed 9: error codes are append-only)`);
    }
    if (!b) {
      if (!(moved !== undefined && moved.code !== code)) d.add('breaking', 'error-code-removed', where, `${a.name} (${code}) removed (seed 9: error codes are append-only)`);
      continue;
    }
    if (a.name !== b.name) d.add('breaking', 'error-code-reused', where, `code ${code} was ${a.name}, now ${b.name} (a code must never get a different meaning)`);
    if (a.meaning !== b.meaning) d.add('breaking', 'error-meaning-changed', where, `meaning of ${b.name} changed: ${show(a.meaning)} → ${show(b.meaning)}`);
    if (a.direction !== b.direction) d.add('breaking', 'error-direction-changed', where, `direction ${a.direction} → ${b.direction}`);
    if (a.close_code !== b.close_code) d.add('breaking', 'error-close-code-changed', where, `close code after ${b.name} ${show(a.close_code)} → ${show(b.close_code)}`);
    if (a.data !== b.data) {
      if (a.data === undefined) d.add('additive', 'error-data-added', where, `error.data of ${b.name} now described by ${b.data}`);
      else d.add('breaking', 'error-data-changed', where, `error.data of ${b.name} ${show(a.data)} → ${show(b.data)}`);
    }
    extraFields(d, a, b, ['code', 'name', 'direction', 'meaning', 'close_code', 'data'], where);
  }
  for (const [code, b] of ne) {
    if (oe.has(code) || renumbered.has(code)) continue;
    d.add('additive', 'error-code-added', `errors.json:${code}`, `${b.name} (${code}) added`);
  }
}

function diffCloseCodes(d: Differ) {
  const oc = new Map(d.oldC.closeCodes.map((c) => [c.code, c]));
  const nc = new Map(d.newC.closeCodes.map((c) => [c.code, c]));
  const newByName = new Map(d.newC.closeCodes.map((c) => [c.name, c]));
  const renumbered = new Set<number>();
  for (const [code, a] of oc) {
    const b = nc.get(code);
    const where = `close-codes.json:${code}`;
    const moved = newByName.get(a.name);
    if (moved !== undefined && moved.code !== code && !oc.has(moved.code)) {
      renumbered.add(moved.code);
      d.add('breaking', 'close-code-renumbered', where, `${a.name} renumbered ${code} → ${moved.code}`);
    }
    if (!b) {
      if (!(moved !== undefined && moved.code !== code)) d.add('breaking', 'close-code-removed', where, `${a.name} (${code}) removed`);
      continue;
    }
    if (a.name !== b.name) d.add('breaking', 'close-code-changed', where, `code ${code} was ${a.name}, now ${b.name}`);
    if (a.meaning !== b.meaning) d.add('breaking', 'close-code-changed', where, `meaning of ${b.name} changed: ${show(a.meaning)} → ${show(b.meaning)}`);
    if (a.source !== b.source) d.add('additive', 'annotation-changed', where, `source ${show(a.source)} → ${show(b.source)}; documentation only`);
    extraFields(d, a, b, ['code', 'name', 'meaning', 'source'], where);
  }
  for (const [code, b] of nc) {
    if (oc.has(code) || renumbered.has(code)) continue;
    d.add('additive', 'close-code-added', `close-codes.json:${code}`, `${b.name} (${code}) added`);
  }
}

function extraFields(d: Differ, a: ErrorEntry | CloseCodeEntry, b: ErrorEntry | CloseCodeEntry, known: string[], where: string) {
  const x = a as unknown as Obj;
  const y = b as unknown as Obj;
  for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
    if (known.includes(k) || deepEqual(x[k], y[k])) continue;
    d.add('breaking', 'field-changed', where, `${k} ${show(x[k])} → ${show(y[k])} (field not analysed; cannot prove compatible)`);
  }
}

function diffProbes(d: Differ) {
  const op = new Map(d.oldC.probes.map((p) => [p.name, p]));
  const np = new Map(d.newC.probes.map((p) => [p.name, p]));
  for (const [name, a] of op) {
    const b = np.get(name);
    if (!b) d.add('breaking', 'probe-removed', `probes/probes.json:${name}`, `probe ${name} removed`);
    else if (a.summary !== b.summary) d.add('additive', 'annotation-changed', `probes/probes.json:${name}`, `summary changed; documentation only`);
  }
  for (const name of np.keys()) if (!op.has(name)) d.add('additive', 'probe-added', `probes/probes.json:${name}`, `probe ${name} added`);
}

/** Every schema file, walked whole (root and $defs). */
function diffSchemaFiles(d: Differ) {
  const probeFile = (k: string, c: Contract) => c.probes.some((p) => k === `probes/${p.name}.args.json` || k === `probes/${p.name}.output.json`);
  for (const [key, s] of d.oldFiles) {
    const t = d.newFiles.get(key);
    if (t === undefined) {
      // A removed probe's files are covered by probe-removed.
      if (!(key.startsWith('probes/') && !d.newC.probes.some((p) => key.startsWith(`probes/${p.name}.`)))) d.add('breaking', 'schema-file-removed', key, `schema file removed`);
      continue;
    }
    d.compareSchema(s, t, { oldFile: key, newFile: key, file: key, path: [] });
  }
  for (const key of d.newFiles.keys()) {
    if (d.oldFiles.has(key)) continue;
    if (key.startsWith('probes/') && probeFile(key, d.newC) && !d.oldC.probes.some((p) => key.startsWith(`probes/${p.name}.`))) continue;
    d.add('additive', 'schema-file-added', key, `schema file added`);
  }
}

function diffStateMachine(d: Differ) {
  const a = d.oldC.stateMachine;
  const b = d.newC.stateMachine;
  const W = 'state-machine.json';
  if (a.initial !== b.initial) d.add('breaking', 'state-machine-changed', `${W}:initial`, `initial state ${a.initial} → ${b.initial}`);
  const os = new Map((a.states ?? []).map((s) => [s.name, s]));
  const ns = new Map((b.states ?? []).map((s) => [s.name, s]));
  for (const [name, s] of os) {
    const t = ns.get(name);
    if (!t) d.add('breaking', 'state-removed', `${W}:${name}`, `state ${name} removed`);
    else {
      if (Boolean(s.terminal) !== Boolean(t.terminal)) d.add('breaking', 'state-machine-changed', `${W}:${name}`, `state ${name} ${t.terminal ? 'is terminal now' : 'is no longer terminal'}`);
      if (s.description !== t.description) d.add('additive', 'annotation-changed', `${W}:${name}`, `description changed; documentation only`);
    }
  }
  for (const name of ns.keys()) if (!os.has(name)) d.add('additive', 'state-added', `${W}:${name}`, `state ${name} added`);
  const key = (t: { from: string; to: string; event: string }) => `${t.from}->${t.to} (${t.event})`;
  const ot = new Map((a.transitions ?? []).map((t) => [key(t), t]));
  const nt = new Map((b.transitions ?? []).map((t) => [key(t), t]));
  for (const [k, t] of ot) {
    const u = nt.get(k);
    if (!u) d.add('breaking', 'transition-removed', `${W}:${k}`, `transition removed`);
    else {
      const oe = t.errors ?? [];
      const ne = u.errors ?? [];
      for (const c of oe) if (!ne.includes(c)) d.add('breaking', 'transition-changed', `${W}:${k}`, `error ${c} no longer leads to this transition`);
      for (const c of ne) if (!oe.includes(c)) d.add('breaking', 'transition-changed', `${W}:${k}`, `error ${c} now leads to this transition (changes how agents react to it)`);
      if (t.description !== u.description) d.add('additive', 'annotation-changed', `${W}:${k}`, `description changed; documentation only`);
    }
  }
  for (const k of nt.keys()) if (!ot.has(k)) d.add('additive', 'transition-added', `${W}:${k}`, `transition added`);
  const of = new Map((a.final ?? []).map((f) => [f.from, f]));
  const nf = new Map((b.final ?? []).map((f) => [f.from, f]));
  for (const [k, f] of of) {
    const g = nf.get(k);
    if (!g) d.add('breaking', 'state-machine-changed', `${W}:final ${k}`, `final marker for ${k} removed`);
    else if (f.description !== g.description) d.add('additive', 'annotation-changed', `${W}:final ${k}`, `description changed; documentation only`);
  }
  for (const k of nf.keys()) if (!of.has(k)) d.add('breaking', 'state-machine-changed', `${W}:final ${k}`, `${k} is final now`);
}

function diffExamples(d: Differ) {
  // Examples document the contract (codegen turns them into conformance vectors); they do
  // not change what is accepted, so every example change is additive.
  for (const [f, v] of d.oldC.examples) {
    if (!d.newC.examples.has(f)) d.add('additive', 'example-removed', `examples/${f}`, `example removed (documentation)`);
    else if (!deepEqual(v, d.newC.examples.get(f))) d.add('additive', 'example-changed', `examples/${f}`, `example changed (documentation)`);
  }
  for (const f of d.newC.examples.keys()) if (!d.oldC.examples.has(f)) d.add('additive', 'example-added', `examples/${f}`, `example added (documentation)`);
}

/**
 * Safety net: every data file whose parsed JSON differs must be explained by at least one
 * change located in it. File-level "description" texts are documentation; a difference
 * nothing explains is breaking, because it cannot be proven compatible.
 */
function diffLeftovers(d: Differ) {
  const parse = (t: string | undefined): unknown => {
    if (t === undefined) return undefined;
    try {
      return JSON.parse(t);
    } catch {
      return t;
    }
  };
  const files = new Set([...d.oldC.files.keys(), ...d.newC.files.keys()]);
  for (const f of [...files].sort()) {
    const ta = d.oldC.files.get(f);
    const tb = d.newC.files.get(f);
    if (ta === tb || ta === undefined || tb === undefined) continue; // added/removed files are reported by their own rules
    const a = parse(ta);
    const b = parse(tb);
    if (deepEqual(a, b)) {
      d.add('additive', 'formatting-only', f, `file text changed, JSON content identical`);
      continue;
    }
    if (!f.startsWith('schemas/') && !f.startsWith('examples/') && !/^probes\/.+\.(args|output)\.json$/.test(f) && isObj(a) && isObj(b) && a['description'] !== b['description']) {
      d.add('additive', 'annotation-changed', f, `file description changed; documentation only`);
    }
    const explained = d.changes.some((c) => c.where === f || c.where.startsWith(`${f}:`) || c.where.startsWith(`${f}#`));
    if (!explained) d.add('breaking', 'unclassified-change', f, `content changed in a way no rule recognises (cannot prove compatible; review by hand)`);
  }
}

// ---------------------------------------------------------------------------------------

/** Every change between two contracts, classified. Order: versioning, methods, errors, close codes, limits, probes, schemas, state machine, examples, leftovers. */
export function diffContracts(oldC: Contract, newC: Contract): Change[] {
  const d = new Differ(oldC, newC);
  diffVersioning(d);
  diffMethods(d);
  diffErrors(d);
  diffCloseCodes(d);
  diffLimits(d);
  diffProbes(d);
  diffSchemaFiles(d);
  diffStateMachine(d);
  diffExamples(d);
  diffLeftovers(d);
  return d.changes;
}

/** Classifies a diff as a whole: exit 1 when there is a breaking change and the version was not bumped. */
export function evaluate(oldC: Contract, newC: Contract, changes = diffContracts(oldC, newC)): DiffResult & { version: VersionInfo } {
  const breaking = changes.filter((c) => c.kind === 'breaking').length;
  const additive = changes.length - breaking;
  const version = versionInfo(oldC, newC);
  const allowed = breaking > 0 && version.bumped;
  const exit_code = breaking > 0 && !allowed ? 1 : 0;
  return { changes, breaking, additive, allowed, exit_code, version };
}

export function formatReport(r: DiffResult & { version: VersionInfo }): string {
  const lines = r.changes.map((c) => `${c.kind === 'breaking' ? 'BREAKING' : 'additive'} ${c.rule} at ${c.where}: ${c.detail}`);
  if (r.changes.length === 0) lines.push('no changes');
  else {
    const counts = `${r.changes.length} change${r.changes.length === 1 ? '' : 's'}: ${r.breaking} breaking, ${r.additive} additive`;
    if (r.breaking === 0) lines.push(`${counts}; no protocol version bump needed (exit 0)`);
    else if (r.allowed) lines.push(`${counts}; breaking changes allowed: protocol version bumped to ${String(r.version.newVersion)} with subprotocol ${String(r.version.newSubprotocol)} (exit 0)`);
    else lines.push(`${counts}; breaking changes need protocol_version and subprotocol bumped together (seed 9) (exit 1)`);
  }
  return lines.join('\n') + '\n';
}
