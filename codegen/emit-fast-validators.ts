/**
 * Fast paths for the hot validators (the entries of logs.push): a specialised predicate,
 * compiled from the same contract schema, that answers "valid?" exactly like ajv but cheaper
 * (no per-call context object, a hand-written RFC 3339 scan for `format: date-time`, a
 * length test before counting code points for `maxLength`, a prefix dispatch for a `oneOf`
 * of disjoint string branches). The exported validator runs the predicate first; only when it
 * says "invalid" does it run ajv's validator, which then gives the verdict and the `errors`.
 * The predicate is exact (for every input it returns what ajv returns), so verdicts and error
 * paths stay ajv's by construction; test/codegen/fast-validators.test.ts compares the two on
 * every generated vector and on random mutations.
 *
 * Only the keywords below are compiled; a hot schema using anything else fails codegen
 * (extend the compiler, or take the schema off HOT_VALIDATORS).
 */
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonSchema } from './contract.js';

/** Validator exports that get a fast path. */
export const HOT_VALIDATORS: readonly string[] = ['validateLogBatchEntry', 'validateLogsPushParams'];

/** Keywords that do not affect validation. */
const ANNOTATIONS = new Set(['$schema', '$id', '$comment', '$defs', 'title', 'description', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly']);
const SUPPORTED = new Set([
  ...ANNOTATIONS,
  'type',
  'enum',
  'const',
  'required',
  'properties',
  'additionalProperties',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'maxLength',
  'pattern',
  'format',
  'items',
  'minItems',
  'maxItems',
  'oneOf',
  '$ref',
]);

type Schema = Record<string, unknown>;

interface Ctx {
  ajv: Ajv2020;
  /** Resolved schema URI -> predicate function name. */
  fns: Map<string, string>;
  out: string[];
  n: number;
}

export interface FastChecks {
  /** Module-scope code: the predicates and their helpers (refers to ajv's formats and ucs2length). */
  code: string;
  /** Export name -> predicate function name. */
  predicates: Map<string, string>;
}

/** Compiles the predicates of the given exports (name + ajv schema reference). */
export function emitFastChecks(ajv: Ajv2020, exports: readonly { name: string; ajvRef: string }[]): FastChecks {
  const ctx: Ctx = { ajv, fns: new Map(), out: [], n: 0 };
  const predicates = new Map<string, string>();
  for (const e of exports) predicates.set(e.name, fnFor(e.ajvRef, ctx));
  const code = [HELPERS, ...ctx.out].join('\n');
  return { code, predicates };
}

function resolve(uri: string, ctx: Ctx): { schema: Schema; base: string } {
  const v = ctx.ajv.getSchema(uri);
  if (!v || typeof v.schema !== 'object' || v.schema === null) throw new Error(`fast validators: cannot resolve ${uri}`);
  const schema = v.schema as Schema;
  const base = typeof schema.$id === 'string' ? new URL(schema.$id, uri).href : uri.split('#')[0]!;
  return { schema, base };
}

function fnFor(uri: string, ctx: Ctx): string {
  const known = ctx.fns.get(uri);
  if (known) return known;
  const name = `fast${ctx.n++}`;
  ctx.fns.set(uri, name);
  const { schema, base } = resolve(uri, ctx);
  const body = node(schema, base, 'd', ctx, uri);
  ctx.out.push(`function ${name}(d) {\n${indent(body).join("\n")}\n  return true;\n}`);
  return name;
}

/** Statements that `return false` when `v` fails `schema`, else fall through. */
function node(schema: JsonSchema | boolean, base: string, v: string, ctx: Ctx, where: string): string[] {
  if (schema === true) return [];
  if (schema === false) return ['return false;'];
  const s = schema as Schema;
  for (const k of Object.keys(s)) if (!SUPPORTED.has(k)) throw new Error(`fast validators: keyword ${JSON.stringify(k)} at ${where} is not compiled; extend codegen/emit-fast-validators.ts`);
  const base2 = typeof s.$id === 'string' ? new URL(s.$id, base).href : base;
  const lines: string[] = [];
  if (s.$ref !== undefined) lines.push(`if (!${fnFor(new URL(String(s.$ref), base2).href, ctx)}(${v})) return false;`);
  const types = s.type === undefined ? undefined : Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
  if (types) lines.push(`if (!(${types.map((t) => typeTest(t, v)).join(' || ')})) return false;`);
  // Keywords for strings, numbers, objects, arrays apply only to values of that type.
  const only = (t: string, body: string[]) => {
    if (body.length === 0) return;
    if (types && types.length === 1 && (types[0] === t || (t === 'number' && types[0] === 'integer'))) lines.push(...body);
    else lines.push(`if (${typeTest(t === 'number' ? 'anyNumber' : t, v)}) {`, ...indent(body), '}');
  };
  if (s.enum !== undefined) {
    const vals = s.enum as unknown[];
    if (!vals.every((x) => x === null || ['string', 'number', 'boolean'].includes(typeof x))) throw new Error(`fast validators: non-scalar enum at ${where}`);
    lines.push(`if (!(${vals.map((x) => `${v} === ${JSON.stringify(x)}`).join(' || ')})) return false;`);
  }
  if (s.const !== undefined) {
    if (!(s.const === null || ['string', 'number', 'boolean'].includes(typeof s.const))) throw new Error(`fast validators: non-scalar const at ${where}`);
    lines.push(`if (${v} !== ${JSON.stringify(s.const)}) return false;`);
  }
  const num: string[] = [];
  if (typeof s.minimum === 'number') num.push(`if (!(${v} >= ${s.minimum})) return false;`);
  if (typeof s.maximum === 'number') num.push(`if (!(${v} <= ${s.maximum})) return false;`);
  if (typeof s.exclusiveMinimum === 'number') num.push(`if (!(${v} > ${s.exclusiveMinimum})) return false;`);
  if (typeof s.exclusiveMaximum === 'number') num.push(`if (!(${v} < ${s.exclusiveMaximum})) return false;`);
  only('number', num);
  const str: string[] = [];
  // ucs2length(v) <= v.length: a string no longer in UTF-16 units is short enough.
  if (typeof s.maxLength === 'number') str.push(`if (${v}.length > ${s.maxLength} && fastUcs2length(${v}) > ${s.maxLength}) return false;`);
  if (typeof s.pattern === 'string') str.push(`if (!${regexp(s.pattern, ctx)}.test(${v})) return false;`);
  if (s.format !== undefined) {
    if (s.format !== 'date-time') throw new Error(`fast validators: format ${JSON.stringify(s.format)} at ${where} is not compiled`);
    str.push(`if (!fastDateTime(${v}) && !fastFormatDateTime.validate(${v})) return false;`);
  }
  only('string', str);
  const obj: string[] = [];
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  if (Array.isArray(s.required) && s.required.length > 0) obj.push(`if (${(s.required as string[]).map((p) => `${v}[${JSON.stringify(p)}] === void 0`).join(' || ')}) return false;`);
  if (s.additionalProperties === false) {
    const k = `k${ctx.n++}`;
    const names = Object.keys(props);
    obj.push(`for (const ${k} in ${v}) {`, `  if (!(${names.length ? names.map((p) => `${k} === ${JSON.stringify(p)}`).join(' || ') : 'false'})) return false;`, '}');
  } else if (s.additionalProperties !== undefined && s.additionalProperties !== true) {
    throw new Error(`fast validators: additionalProperties schema at ${where} is not compiled`);
  }
  for (const [p, ps] of Object.entries(props)) {
    const pv = `p${ctx.n++}`;
    const inner = node(ps, base2, pv, ctx, `${where}/properties/${p}`);
    if (inner.length === 0) continue;
    obj.push(`const ${pv} = ${v}[${JSON.stringify(p)}];`, `if (${pv} !== void 0) {`, ...indent(inner), '}');
  }
  only('object', obj);
  const arr: string[] = [];
  if (typeof s.maxItems === 'number') arr.push(`if (${v}.length > ${s.maxItems}) return false;`);
  if (typeof s.minItems === 'number') arr.push(`if (${v}.length < ${s.minItems}) return false;`);
  if (s.items !== undefined) {
    if (Array.isArray(s.items) || typeof s.items !== 'object') throw new Error(`fast validators: items at ${where} must be one schema`);
    const i = `i${ctx.n++}`;
    const item = `e${ctx.n++}`;
    const inner = node(s.items as JsonSchema, base2, item, ctx, `${where}/items`);
    if (inner.length) arr.push(`for (let ${i} = 0, ${i}n = ${v}.length; ${i} < ${i}n; ${i}++) {`, `  const ${item} = ${v}[${i}];`, ...indent(inner, 2), '}');
  }
  only('array', arr);
  if (s.oneOf !== undefined) lines.push(...oneOf(s.oneOf as JsonSchema[], base2, v, ctx, `${where}/oneOf`));
  return lines;
}

function typeTest(t: string, v: string): string {
  switch (t) {
    case 'string':
      return `typeof ${v} === "string"`;
    case 'integer':
      return `(typeof ${v} === "number" && !(${v} % 1) && !isNaN(${v}) && isFinite(${v}))`;
    case 'number':
      return `(typeof ${v} === "number" && isFinite(${v}))`;
    case 'anyNumber': // where ajv applies numeric keywords
      return `(typeof ${v} === "number" && isFinite(${v}))`;
    case 'boolean':
      return `typeof ${v} === "boolean"`;
    case 'null':
      return `${v} === null`;
    case 'object':
      return `(${v} !== null && typeof ${v} === "object" && !Array.isArray(${v}))`;
    case 'array':
      return `Array.isArray(${v})`;
    default:
      throw new Error(`fast validators: type ${t}`);
  }
}

function regexp(pattern: string, ctx: Ctx): string {
  const name = `fastRe${ctx.n++}`;
  // ajv compiles patterns with the "u" flag.
  ctx.out.push(`const ${name} = /* @__PURE__ */ new RegExp(${JSON.stringify(pattern)}, "u");`);
  return name;
}

/**
 * The literal strings every match of a string branch starts with, or undefined when the branch
 * is not a `type: string` with an enum of strings or a `^literal...` pattern.
 */
function prefixes(b: JsonSchema): string[] | undefined {
  if (typeof b !== 'object' || b === null || b.type !== 'string') return undefined;
  const s = b as Schema;
  if (Array.isArray(s.enum) && s.enum.every((x) => typeof x === 'string')) return s.enum as string[];
  if (typeof s.pattern === 'string' && s.pattern.startsWith('^')) {
    const m = /^\^([^\\^$.|?*+()[\]{}]*)/.exec(s.pattern)!;
    let lit = m[1]!;
    // A quantifier after the run makes its last character optional or repeated.
    if (lit.length && /^[?*{]/.test(s.pattern.slice(1 + lit.length))) lit = lit.slice(0, -1);
    return lit.length ? [lit] : undefined;
  }
  return undefined;
}

function oneOf(branches: JsonSchema[], base: string, v: string, ctx: Ctx, where: string): string[] {
  const fns = branches.map((b, i) => {
    const name = `fast${ctx.n++}`;
    ctx.out.push(`function ${name}(d) {\n${indent(node(b, base, 'd', ctx, `${where}/${i}`)).join('\n')}\n  return true;\n}`);
    return name;
  });
  const pre = branches.map(prefixes);
  const disjoint =
    pre.every((p) => p !== undefined) &&
    pre.every((pi, i) => pre.every((pj, j) => i === j || pi!.every((a) => pj!.every((b) => !a.startsWith(b) && !b.startsWith(a)))));
  if (disjoint) {
    // A string can only match the branch whose prefix it starts with: test that one alone.
    const out = [`if (typeof ${v} !== "string") return false;`];
    pre.forEach((ps, i) => out.push(`${i ? 'else ' : ''}if (${ps!.map((p) => `${v}.startsWith(${JSON.stringify(p)})`).join(' || ')}) { if (!${fns[i]}(${v})) return false; }`));
    out.push('else return false;');
    return out;
  }
  const c = `c${ctx.n++}`;
  return [`let ${c} = 0;`, ...fns.map((f) => `if (${f}(${v}) && ++${c} > 1) return false;`), `if (${c} !== 1) return false;`];
}

function indent(lines: string[], by = 2): string[] {
  const pad = ' '.repeat(by);
  return lines.flatMap((l) => l.split('\n')).map((l) => pad + l);
}

/**
 * fastDateTime(s) is true only for `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)` with every
 * field in range (no leap second); ajv-formats' full date-time then says valid as well. For
 * anything else it says false and the caller asks ajv-formats itself, so the answer is
 * always ajv-formats'.
 */
const HELPERS = `const fastFormatDateTime = /* @__PURE__ */ require("ajv-formats/dist/formats").fullFormats["date-time"];
const fastUcs2length = /* @__PURE__ */ require("ajv/dist/runtime/ucs2length").default;
const FAST_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function fastD2(s, i) {
  const a = s.charCodeAt(i) - 48, b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}
function fastDateTime(s) {
  const n = s.length;
  if (n < 20 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return false;
  const t = s.charCodeAt(10);
  if (t !== 84 && t !== 116) return false;
  const y1 = fastD2(s, 0), y2 = fastD2(s, 2), mo = fastD2(s, 5), da = fastD2(s, 8);
  const hr = fastD2(s, 11), mi = fastD2(s, 14), se = fastD2(s, 17);
  if (y1 < 0 || y2 < 0 || mo < 1 || mo > 12 || da < 1 || hr < 0 || hr > 23 || mi < 0 || mi > 59 || se < 0 || se > 59) return false;
  const y = y1 * 100 + y2;
  if (da > (mo === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : FAST_DAYS[mo])) return false;
  let i = 19;
  if (s.charCodeAt(i) === 46) {
    i++;
    const f = i;
    for (let c = s.charCodeAt(i); c >= 48 && c <= 57; c = s.charCodeAt(++i));
    if (i === f) return false;
  }
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) return i + 1 === n;
  if ((z !== 43 && z !== 45) || i + 6 !== n || s.charCodeAt(i + 3) !== 58) return false;
  const th = fastD2(s, i + 1), tm = fastD2(s, i + 4);
  return th >= 0 && th <= 23 && tm >= 0 && tm <= 59;
}`;
