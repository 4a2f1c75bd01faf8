// Schema comparison for the contract diff: the Differ walks two versions of a schema
// (with $defs and across $refs) and records each change as additive or breaking
// (what only widens what validates is additive; what narrows it is breaking).
import type { Contract, JsonSchema } from '../contract.js';
import type { Change, ChangeKind } from './types.js';
import { at, deepEqual, isObj, show, type Obj } from './json-util.js';
import { resolveRef, roleIndex, schemaFiles, usageIndex, type Role } from './schema-index.js';

// Schema comparison

export const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains'];
export const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains'];
/** Documentation only: never changes what validates. */
export const ANNOTATIONS = ['title', 'description', '$comment', 'examples', 'deprecated', 'readOnly', 'writeOnly'];
/** Keywords compareSchema handles itself; any other keyword that differs is reported as "keyword-changed" (breaking). */
export const HANDLED = new Set([
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

export interface Loc {
  oldFile: string;
  newFile: string;
  /** Display file and path (where the change is reported). */
  file: string;
  path: string[];
  /** Who uses the schema and how, when the display location does not tell (a method's schema file swapped). */
  roles?: Map<string, Role>;
}

/**
 * What a schema change does to the set of values it accepts: "widens" (accepts more),
 * "narrows" (accepts less), "changes" (both, or a meaning changed), "none" (the same values).
 * Whether that breaks depends on who receives the message (classify).
 */
export type Effect = 'widens' | 'narrows' | 'changes' | 'none';

/** The effect of each schema rule (rules whose effect depends on the case pass it themselves). */
const RULE_EFFECT: Record<string, Effect> = {
  'type-narrowed': 'narrows',
  'type-widened': 'widens',
  'type-rewritten': 'none',
  'enum-narrowed': 'narrows',
  'enum-widened': 'widens',
  'enum-value-removed': 'narrows',
  'enum-value-added': 'widens',
  'enum-reordered': 'none',
  'const-removed': 'widens',
  'const-changed': 'changes',
  'range-interoperable': 'none',
  'range-narrowed': 'narrows',
  'range-widened': 'widens',
  'pattern-removed': 'widens',
  'pattern-changed': 'changes',
  'format-removed': 'widens',
  'format-changed': 'narrows',
  'field-removed': 'changes',
  'field-made-required': 'narrows',
  'field-made-optional': 'widens',
  'additional-properties-tightened': 'narrows',
  'additional-properties-relaxed': 'widens',
  'not-removed': 'widens',
  'not-changed': 'changes',
  'oneOf-added': 'narrows',
  'anyOf-added': 'narrows',
  'oneOf-removed': 'widens',
  'anyOf-removed': 'widens',
  'allOf-added': 'narrows',
  'allOf-removed': 'widens',
  'oneOf-branch-added': 'widens',
  'anyOf-branch-added': 'widens',
  'oneOf-branch-removed': 'narrows',
  'anyOf-branch-removed': 'narrows',
  'allOf-branch-added': 'narrows',
  'allOf-branch-removed': 'widens',
  'def-removed': 'changes',
  'def-added': 'none',
  'default-added': 'none',
  'default-changed': 'changes',
  'annotation-changed': 'none',
  'deprecated-changed': 'none',
  'keyword-changed': 'changes',
  'ref-unresolvable': 'changes',
  'ref-refactored': 'none',
};

/**
 * Breaking or additive, seen from the fleet: a server of the new release talks to agents of
 * the previous release (agents are upgraded after the server). A message an agent RECEIVES
 * breaks when it widens (old agents validate it with the old schema and reject what is new);
 * a message an agent SENDS breaks when it narrows (servers validate it with the new schema
 * and reject what old agents still send). A location no message reaches is judged as a
 * received-by-the-upgraded-side message (narrowing breaks), as before.
 */
export function classify(effect: Effect, legacy: ChangeKind, roles: Map<string, Role>): { kind: ChangeKind; why: string } {
  if (roles.size === 0 || effect === 'none') return { kind: legacy, why: '' };
  const users = (role: Role) => [...roles].filter(([, r]) => r === role).map(([u]) => u).sort();
  const received = users('agent-receives');
  const sent = users('agent-sends');
  if (effect === 'changes') {
    const parts = [...(received.length ? [`agents of the previous release reject the new form of ${received.join(', ')} they receive`] : []), ...(sent.length ? [`servers of this release reject the old form of ${sent.join(', ')} that agents of the previous release send`] : [])];
    return { kind: 'breaking', why: ` — breaking: ${parts.join('; ')}` };
  }
  if (effect === 'widens') {
    if (received.length > 0) return { kind: 'breaking', why: ` — breaking: agents of the previous release reject what is new: they validate the ${received.join(', ')} they receive against the old schema` };
    return { kind: 'additive', why: '' };
  }
  // narrows
  if (sent.length > 0) return { kind: 'breaking', why: ` — breaking: servers of this release reject what agents of the previous release may still send in ${sent.join(', ')}` };
  return { kind: 'additive', why: ` (narrows only what agents receive: agents of the previous release accept every such ${received.join(', ')})` };
}

export class Differ {
  readonly changes: Change[] = [];
  readonly oldFiles: Map<string, JsonSchema>;
  readonly newFiles: Map<string, JsonSchema>;
  private oldUsage?: Map<string, Set<string>>;
  private newUsage?: Map<string, Set<string>>;
  private roles?: Map<string, Map<string, Role>>[];
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

  /** Which messages use the location (old and new contract together), and how. */
  rolesAt(loc: Loc): Map<string, Role> {
    if (loc.roles) return loc.roles;
    this.roles ??= [roleIndex(this.oldC, this.oldFiles), roleIndex(this.newC, this.newFiles)];
    const here = at(loc.file, loc.path);
    const out = new Map<string, Role>();
    for (const idx of this.roles) {
      for (const [target, users] of idx) {
        if (here === target || here.startsWith(target.includes('#') ? `${target}/` : `${target}#`)) for (const [u, r] of users) out.set(u, r);
      }
    }
    return out;
  }

  /**
   * Records a schema change. `kind` is how the change counts where the upgraded side receives
   * it (narrowing breaks); classify() turns it around for messages agents receive.
   */
  schemaChange(kind: ChangeKind, rule: string, loc: Loc, detail: string, side: 'old' | 'new' = 'new', effect: Effect = RULE_EFFECT[rule] ?? 'changes') {
    const c = classify(effect, kind, this.rolesAt(loc));
    this.add(c.kind, rule, at(loc.file, loc.path), detail + this.usedBy(loc, side) + c.why);
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
    const integerOnly = isIntegerOnly(o['type']) && isIntegerOnly(n['type']);
    for (const k of LOWER_BOUNDS) this.bound(k, o[k], n[k], 'lower', loc, integerOnly);
    for (const k of UPPER_BOUNDS) this.bound(k, o[k], n[k], 'upper', loc, integerOnly);
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
        if (isObj(ps) && 'default' in ps) this.schemaChange('additive', 'required-field-added-with-default', sub('properties', k), `new required field "${k}" with default ${show(ps['default'])} (seed 9: only required fields WITHOUT a default are breaking; receivers must apply the default to messages from older senders)`, 'new', closedBefore ? 'widens' : 'none');
        else this.schemaChange('breaking', 'required-field-added', sub('properties', k), `new required field "${k}" without default (older senders do not send it)`, 'new', closedBefore ? 'changes' : 'narrows');
      } else {
        this.schemaChange('additive', 'optional-field-added', sub('properties', k), `new optional field "${k}" (additive${closedBefore ? '; the old schema has additionalProperties:false, so receivers built from it reject the field: send it only to peers that know it' : ''})`, 'new', closedBefore ? 'widens' : 'none');
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
    if (Boolean(o['deprecated']) !== Boolean(n['deprecated'])) {
      this.schemaChange('additive', 'deprecated-changed', loc, n['deprecated'] === true ? 'deprecated (still accepted; removing it later is breaking)' : 'no longer deprecated');
    }
    const docs = ANNOTATIONS.filter((k) => k !== 'deprecated' && !deepEqual(o[k], n[k]));
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

  private bound(k: string, a: unknown, b: unknown, side: 'lower' | 'upper', loc: Loc, integerOnly = false) {
    if (deepEqual(a, b)) return;
    const desc = a === undefined ? `${k} ${show(b)} added` : b === undefined ? `${k} ${show(a)} removed` : `${k} ${show(a)} → ${show(b)}`;
    // A bound on integers that still admits every interoperable integer (RFC 8259 section 6,
    // RFC 7493 section 2.2: within ±(2^53 − 1), the integers every JSON parser reads exactly)
    // refuses only integers a peer may already read as another number: no exchange that
    // worked between two peers stops working (DECISIONS C16).
    if (integerOnly && keepsInteroperableIntegers(k, b) && (a === undefined || keepsInteroperableIntegers(k, a))) {
      this.schemaChange('additive', 'range-interoperable', loc, `${desc} (every integer within ±${Number.MAX_SAFE_INTEGER}, the range JSON parsers read exactly, is still accepted)`);
      return;
    }
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

export function typeSet(t: unknown): string[] | null {
  if (typeof t === 'string') return [t];
  if (Array.isArray(t)) return t.filter((x): x is string => typeof x === 'string');
  return null;
}
/** A type that admits integers and no other numbers (strings, null and so on may be beside it). */
function isIntegerOnly(t: unknown): boolean {
  const set = typeSet(t);
  return set !== null && set.includes('integer') && !set.includes('number');
}

/** Does bound keyword `k` with value `v` keep every integer within ±(2^53 − 1)? */
function keepsInteroperableIntegers(k: string, v: unknown): boolean {
  if (typeof v !== 'number') return false;
  const max = Number.MAX_SAFE_INTEGER;
  if (k === 'maximum') return v >= max;
  if (k === 'exclusiveMaximum') return v > max;
  if (k === 'minimum') return v <= -max;
  if (k === 'exclusiveMinimum') return v < -max;
  return false;
}

export function covers(set: string[] | null, t: string): boolean {
  return set === null || set.includes(t) || (t === 'integer' && set.includes('number'));
}
export function apState(v: unknown): { state: 'open' | 'closed' | 'schema' } {
  if (v === undefined || v === true || (isObj(v) && Object.keys(v).length === 0)) return { state: 'open' };
  if (v === false) return { state: 'closed' };
  return { state: 'schema' };
}

