/**
 * Conformance vectors derived from the contract: every seed example (must be accepted) and,
 * from each params/result schema, invalid variants of a valid example — each required field
 * missing, an extra property, a wrong type, out of range, a bad enum value, a bad
 * pattern/format, too few/many items — each with the expected outcome. Every derived
 * variant is confirmed invalid by ajv at generation time (variants that a schema happens to
 * accept are not emitted).
 */
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type { Contract, JsonSchema } from './contract.js';
import type { NamedSchema } from './bundle.js';

export interface Vector {
  id: string;
  method: string;
  /** What is varied: the params of a request/notification, or the result of a response. */
  target: 'params' | 'result' | 'message';
  description: string;
  /** JSON Pointer (into params or result) of the varied value. */
  path: string;
  mutation: string;
  /** The whole JSON-RPC message to send. */
  message: unknown;
  expected: {
    valid: boolean;
    /** What a conforming receiver does: answer with result/error, drop (notifications), or treat the response as invalid. */
    outcome: 'accepted' | 'error' | 'dropped' | 'invalid_result';
    /** JSON-RPC error code of the answer, for outcome "error". */
    code?: number;
    /** Other codes a conforming receiver may answer with (its check order decides). */
    alternative_codes?: number[];
  };
}

type Mutation = { path: string; mutation: string; description: string; apply: (root: unknown) => unknown };

const clone = <T>(v: T): T => structuredClone(v);
const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function setAt(root: unknown, segs: (string | number)[], fn: (parent: Record<string | number, unknown>, key: string | number) => void): unknown {
  const copy = clone(root);
  let node = copy as Record<string | number, unknown>;
  for (const s of segs.slice(0, -1)) node = node[s] as Record<string | number, unknown>;
  fn(node, segs[segs.length - 1]!);
  return copy;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function allowsType(schema: JsonSchema, v: unknown): boolean {
  const t = schema['type'];
  if (t === undefined) return true;
  const types = Array.isArray(t) ? (t as string[]) : [t as string];
  const jt = jsonType(v);
  return types.includes(jt) || (jt === 'integer' && types.includes('number'));
}

export function deriveMutations(schema: JsonSchema, value: unknown, resolve: (s: JsonSchema) => JsonSchema, segs: (string | number)[] = []): Mutation[] {
  const s = resolve(schema);
  const at = '/' + segs.map((x) => esc(String(x))).join('/');
  const ptr = segs.length === 0 ? '' : at;
  const out: Mutation[] = [];
  const replace = (mutation: string, description: string, v: unknown) =>
    segs.length > 0 && out.push({ path: ptr, mutation, description, apply: (r) => setAt(r, segs, (p, k) => (p[k] = v)) });

  // wrong type
  if (s['type'] !== undefined) {
    const candidate = [12345, 'not-the-right-type', true, { unexpected: 1 }, [1], null].find((c) => !allowsType(s, c));
    if (candidate !== undefined) replace('wrong_type', `${ptr || 'value'} has the wrong type (${jsonType(candidate)})`, candidate);
  }
  if (typeof s['minimum'] === 'number') replace('below_minimum', `${ptr} below its minimum ${s['minimum']}`, (s['minimum'] as number) - 1);
  if (typeof s['maximum'] === 'number') replace('above_maximum', `${ptr} above its maximum ${s['maximum']}`, (s['maximum'] as number) + 1);
  if (typeof s['minLength'] === 'number' && (s['minLength'] as number) > 0) replace('too_short', `${ptr} shorter than ${s['minLength']}`, 'x'.repeat((s['minLength'] as number) - 1));
  if (typeof s['maxLength'] === 'number') replace('too_long', `${ptr} longer than ${s['maxLength']}`, 'x'.repeat((s['maxLength'] as number) + 1));
  if (Array.isArray(s['enum'])) replace('bad_enum', `${ptr} not one of ${JSON.stringify(s['enum'])}`, 'not-an-allowed-value');
  if (typeof s['pattern'] === 'string') {
    const re = new RegExp(s['pattern'] as string, 'u');
    const bad = ['', ' ', '-leading-dash', 'has space', '../x', 'x'].find((c) => !re.test(c));
    if (bad !== undefined) replace('bad_pattern', `${ptr} does not match ${s['pattern']}`, bad);
  }
  if (s['format'] === 'date-time') replace('bad_format', `${ptr} is not an RFC 3339 date-time`, '2026-02-30T25:61:00Z');
  if (s['format'] === 'uuid') replace('bad_format', `${ptr} is not a UUID`, 'not-a-uuid');
  if (Array.isArray(s['oneOf']) && typeof value === 'string') replace('bad_one_of', `${ptr} matches none of its alternatives`, 'unknownsource');

  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const props = (s['properties'] ?? {}) as Record<string, JsonSchema>;
    for (const req of (s['required'] ?? []) as string[]) {
      if (req in (value as object)) {
        const segsReq = [...segs, req];
        out.push({ path: '/' + segsReq.map((x) => esc(String(x))).join('/'), mutation: 'missing_required', description: `required ${req} missing`, apply: (r) => setAt(r, segsReq, (p, k) => delete p[k]) });
      }
    }
    if (s['additionalProperties'] === false) {
      const segsX = [...segs, 'unexpected_field'];
      out.push({ path: '/' + segsX.map((x) => esc(String(x))).join('/'), mutation: 'extra_property', description: `unknown property in ${ptr || 'params'}`, apply: (r) => setAt(r, segsX, (p, k) => (p[k] = 1)) });
    }
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const ps = props[k];
      if (ps) out.push(...deriveMutations(ps, v, resolve, [...segs, k]));
    }
  }
  if (Array.isArray(value)) {
    if (typeof s['minItems'] === 'number' && (s['minItems'] as number) > 0) replace('too_few_items', `${ptr} has fewer than ${s['minItems']} items`, []);
    if (typeof s['maxItems'] === 'number' && value.length > 0) {
      const n = (s['maxItems'] as number) + 1;
      replace('too_many_items', `${ptr} has more than ${s['maxItems']} items`, Array.from({ length: n }, () => clone(value[0])));
    }
    if (value.length > 0 && s['items'] && typeof s['items'] === 'object') out.push(...deriveMutations(s['items'] as JsonSchema, value[0], resolve, [...segs, 0]));
  }
  return out;
}

export function emitVectors(contract: Contract, named: NamedSchema[], ajv: Ajv2020): Map<string, Vector[]> {
  const byName = new Map(named.map((n) => [n.name, n]));
  const resolve = (s: JsonSchema): JsonSchema => {
    let cur = s;
    for (let i = 0; i < 10 && typeof cur['$ref'] === 'string'; i++) cur = byName.get((cur['$ref'] as string).slice('#/$defs/'.length))!.schema;
    return cur;
  };
  const schemaOf = (file: string) => named.find((n) => n.origin === `contract/schemas/${file}`)!;
  const out = new Map<string, Vector[]>();
  for (const m of contract.methods) {
    const vectors: Vector[] = [];
    for (const ex of m.examples) {
      vectors.push({
        id: `${m.name}/example/${ex.file.replace(/\.json$/, '')}`,
        method: m.name,
        target: 'message',
        description: `contract example ${ex.file} (${ex.message})`,
        path: '',
        mutation: 'none',
        message: contract.examples.get(ex.file),
        expected: { valid: true, outcome: 'accepted' },
      });
    }
    const addDerived = (target: 'params' | 'result', file: string, base: unknown, wrap: (v: unknown) => unknown, outcome: (path: string, mutation: string) => Vector['expected']) => {
      const named1 = schemaOf(file);
      const validate = ajv.getSchema(named1.ajvRef)!;
      const seen = new Set<string>();
      for (const mu of deriveMutations(named1.schema, base, resolve)) {
        const v = mu.apply(base);
        if (validate(v)) continue; // the schema accepts this variant: not a negative vector
        let id = `${m.name}/${target}${mu.path}/${mu.mutation}`;
        for (let i = 2; seen.has(id); i++) id = `${m.name}/${target}${mu.path}/${mu.mutation}-${i}`;
        seen.add(id);
        vectors.push({ id, method: m.name, target, description: mu.description, path: mu.path, mutation: mu.mutation, message: wrap(v), expected: outcome(mu.path, mu.mutation) });
      }
    };
    const findExample = (kind: string) => {
      const ex = m.examples.find((e) => e.message === kind);
      return ex ? (contract.examples.get(ex.file) as Record<string, unknown>) : undefined;
    };
    if (m.kind !== 'response' && m.params) {
      const ex = findExample(m.kind === 'request' ? 'request' : 'notification');
      if (ex) {
        const { params, ...envelope } = ex;
        addDerived('params', m.params, params, (p) => ({ ...envelope, params: p }), (path, mutation) => {
          if (m.kind === 'notification') return { valid: false, outcome: 'dropped' };
          // agent.hello checks protocol_version before the params schema (seed 3 step 4). A hello
          // without the field is malformed, not a version mismatch: -32602 (DECISIONS H10; a
          // server answering -32003 there, as before, still passes).
          if (m.name === 'agent.hello' && path === '/protocol_version' && mutation === 'missing_required') {
            return { valid: false, outcome: 'error', code: -32602, alternative_codes: [-32003] };
          }
          if (m.name === 'agent.hello' && path === '/protocol_version') return { valid: false, outcome: 'error', code: -32003 };
          // Seed 3 step 4 checks the token before the params schema: without a usable host_id
          // or token, a server may answer -32001 first.
          if (m.name === 'agent.hello' && /^\/(token|host_id)(\/|$)/.test(path)) return { valid: false, outcome: 'error', code: -32602, alternative_codes: [-32001] };
          return { valid: false, outcome: 'error', code: -32602 };
        });
      }
    }
    if (m.kind === 'request' && m.result) {
      const ex = findExample('response');
      if (ex) {
        const { result, ...envelope } = ex;
        addDerived('result', m.result, result, (r) => ({ ...envelope, result: r }), () => ({ valid: false, outcome: 'invalid_result' }));
      }
    }
    if (vectors.length > 0) out.set(m.name, vectors);
  }
  return out;
}
