/**
 * Loads contract/ into one typed object and checks that its parts agree with each other
 * (every referenced schema, error code and example exists). Everything codegen emits is
 * derived from the value this returns.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export type JsonSchema = { [key: string]: unknown };

export interface MethodEntry {
  name: string;
  section: string;
  direction: 'agent_to_server' | 'server_to_agent';
  kind: 'request' | 'notification' | 'response';
  response_to?: string;
  summary: string;
  params?: string;
  result?: string;
  errors: number[];
  examples: { file: string; message: 'request' | 'response' | 'error' | 'notification' }[];
  /** Still part of the protocol, to be removed in a later major version (PROTOCOL.md says so). */
  deprecated?: boolean;
}

export interface ErrorEntry {
  code: number;
  name: string;
  direction: 'server' | 'agent' | 'either';
  meaning: string;
  close_code?: number;
  data?: string;
}

export interface CloseCodeEntry {
  code: number;
  name: string;
  meaning: string;
  source: string;
}

export interface LimitEntry {
  value: number | string;
  unit?: string;
  source: string;
  description: string;
}

export interface StateMachine {
  description: string;
  initial: string;
  states: { name: string; description: string; terminal?: boolean }[];
  transitions: { from: string; to: string; event: string; description: string; errors?: number[] }[];
  final: { from: string; description: string }[];
}

export interface ProbeEntry {
  name: string;
  summary: string;
  args: JsonSchema;
  output: JsonSchema;
}

export interface Contract {
  /** Schema files under schemas/, by file name. */
  schemas: Map<string, JsonSchema>;
  methods: MethodEntry[];
  errors: ErrorEntry[];
  closeCodes: CloseCodeEntry[];
  limits: Record<string, LimitEntry>;
  stateMachine: StateMachine;
  probes: ProbeEntry[];
  /** Example files under examples/, by file name, parsed. */
  examples: Map<string, unknown>;
  /** Every data file of contract/ as read (relative path → text), for the manifest's hash. DECISIONS.md is prose and not hashed. */
  files: Map<string, string>;
}

export class ContractError extends Error {
  constructor(readonly problems: string[]) {
    super(`contract/ is inconsistent:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ContractError';
  }
}

const SCHEMA_ID_BASE = 'https://cortex.invalid/schemas/v1/';

export function loadContract(dir: string): Contract {
  const files = new Map<string, string>();
  const problems: string[] = [];
  const read = (rel: string): unknown => {
    const text = readFileSync(join(dir, rel), 'utf8');
    files.set(rel, text);
    try {
      return JSON.parse(text);
    } catch (err) {
      problems.push(`${rel}: not valid JSON (${(err as Error).message})`);
      return {};
    }
  };
  const listJson = (sub: string) =>
    existsSync(join(dir, sub))
      ? readdirSync(join(dir, sub))
          .filter((f) => f.endsWith('.json'))
          .sort()
      : [];

  const schemas = new Map<string, JsonSchema>();
  for (const f of listJson('schemas')) {
    const s = read(`schemas/${f}`) as JsonSchema;
    if (s['$id'] !== SCHEMA_ID_BASE + f) problems.push(`schemas/${f}: $id must be "${SCHEMA_ID_BASE + f}"`);
    if (typeof s['title'] !== 'string') problems.push(`schemas/${f}: needs a title (it names the generated type)`);
    schemas.set(f, s);
  }
  // The catalogs' shapes first: everything below (and every emitter) relies on them.
  const shape = new ShapeChecker(problems);
  const methods = shape.list<MethodEntry>(read('methods.json'), 'methods.json', 'methods', METHOD_FIELDS);
  const errors = shape.list<ErrorEntry>(read('errors.json'), 'errors.json', 'errors', ERROR_FIELDS);
  const closeCodes = shape.list<CloseCodeEntry>(read('close-codes.json'), 'close-codes.json', 'close_codes', CLOSE_CODE_FIELDS);
  const limits = shape.limits(read('limits.json'));
  const stateMachine = shape.stateMachine(read('state-machine.json'));
  const probeList = shape.list<{ name: string; summary: string }>(read('probes/probes.json'), 'probes/probes.json', 'probes', PROBE_FIELDS);
  shape.unique('methods.json', 'methods', methods, 'name', 'a method name');
  shape.unique('errors.json', 'errors', errors, 'code', 'an error code');
  shape.unique('errors.json', 'errors', errors, 'name', 'an error name (it names ErrorCode keys and error classes)');
  shape.unique('close-codes.json', 'close_codes', closeCodes, 'code', 'a close code');
  shape.unique('close-codes.json', 'close_codes', closeCodes, 'name', 'a close code name (it names CloseCode keys)');
  shape.unique('probes/probes.json', 'probes', probeList, 'name', 'a probe name');
  if (problems.length > 0) throw new ContractError(problems);
  const probes: ProbeEntry[] = probeList.map((p) => {
    const load = (kind: 'args' | 'output') => {
      const rel = `probes/${p.name}.${kind}.json`;
      if (!existsSync(join(dir, rel))) {
        problems.push(`probe ${p.name}: ${rel} is missing`);
        return {};
      }
      const s = read(rel) as JsonSchema;
      if (s['$id'] !== `${SCHEMA_ID_BASE}${rel}`) problems.push(`${rel}: $id must be "${SCHEMA_ID_BASE}${rel}"`);
      return s;
    };
    return { name: p.name, summary: p.summary, args: load('args'), output: load('output') };
  });
  for (const f of listJson('probes')) {
    if (f === 'probes.json') continue;
    if (!probeList.some((p) => f === `${p.name}.args.json` || f === `${p.name}.output.json`)) problems.push(`probes/${f} belongs to no probe listed in probes/probes.json`);
  }
  const examples = new Map<string, unknown>();
  for (const f of listJson('examples')) examples.set(f, read(`examples/${f}`));

  // Cross-checks.
  const codes = new Set(errors.map((e) => e.code));
  for (const e of errors) {
    if (e.close_code !== undefined && !closeCodes.some((c) => c.code === e.close_code)) problems.push(`errors.json: ${e.name} closes with ${e.close_code}, which close-codes.json does not list`);
    if (e.data !== undefined && !hasDef(schemas.get('error-data.json'), e.data)) problems.push(`errors.json: ${e.name} data "${e.data}" is not a $defs entry of schemas/error-data.json`);
  }
  const usedExamples = new Set<string>();
  for (const m of methods) {
    for (const ref of [m.params, m.result]) if (ref !== undefined && !schemas.has(ref)) problems.push(`methods.json: ${m.name} names schemas/${ref}, which does not exist`);
    if (m.kind !== 'response' && m.params === undefined) problems.push(`methods.json: ${m.name} has no params schema`);
    if (m.kind === 'request' && m.result === undefined) problems.push(`methods.json: request ${m.name} has no result schema`);
    if (m.kind === 'notification' && m.result !== undefined) problems.push(`methods.json: notification ${m.name} cannot have a result`);
    if (m.kind === 'response' && !methods.some((o) => o.name === m.response_to && o.kind === 'request')) problems.push(`methods.json: ${m.name} responds to "${m.response_to}", which is not a request`);
    for (const c of m.errors) if (!codes.has(c)) problems.push(`methods.json: ${m.name} lists error ${c}, which errors.json does not define`);
    for (const ex of m.examples) {
      if (!examples.has(ex.file)) problems.push(`methods.json: ${m.name} example ${ex.file} is missing from examples/`);
      usedExamples.add(ex.file);
    }
  }
  for (const f of examples.keys()) if (!usedExamples.has(f)) problems.push(`examples/${f} is not listed by any method in methods.json`);
  const states = new Set(stateMachine.states?.map((s) => s.name) ?? []);
  if (!states.has(stateMachine.initial)) problems.push(`state-machine.json: initial state ${stateMachine.initial} is not a state`);
  for (const t of stateMachine.transitions ?? []) {
    if (!states.has(t.from) || !states.has(t.to)) problems.push(`state-machine.json: transition ${t.from} -> ${t.to} names an unknown state`);
    for (const c of t.errors ?? []) if (!codes.has(c)) problems.push(`state-machine.json: transition ${t.from} -> ${t.to} names unknown error ${c}`);
  }
  if (problems.length > 0) throw new ContractError(problems);
  return { schemas, methods, errors, closeCodes, limits, stateMachine, probes, examples, files };
}

// ---------------------------------------------------------------------------------------
// Shapes of the catalogs (methods.json, errors.json, close-codes.json, limits.json,
// probes/probes.json, state-machine.json): each mistake is reported with its file, the JSON
// pointer of the value and what is expected, never as a crash or a compiler error in the
// generated code.

type FieldCheck = { required: boolean; check: (v: unknown) => string | undefined };
type Fields = Record<string, FieldCheck>;

const isStr = (v: unknown) => (typeof v === 'string' && v.length > 0 ? undefined : 'must be a non-empty string');
const isInt = (v: unknown) => (Number.isInteger(v) ? undefined : 'must be an integer');
const isBool = (v: unknown) => (typeof v === 'boolean' ? undefined : 'must be true or false');
const oneOf = (...allowed: string[]) => (v: unknown) => (typeof v === 'string' && allowed.includes(v) ? undefined : `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
const matches = (re: RegExp, what: string) => (v: unknown) => (typeof v === 'string' && re.test(v) ? undefined : `must be ${what}`);
const intIn = (lo: number, hi: number) => (v: unknown) => (Number.isInteger(v) && (v as number) >= lo && (v as number) <= hi ? undefined : `must be an integer from ${lo} to ${hi}`);
const req = (check: FieldCheck['check']): FieldCheck => ({ required: true, check });
const opt = (check: FieldCheck['check']): FieldCheck => ({ required: false, check });
/** A TypeScript identifier in PascalCase: it names generated keys and classes. */
const IDENT = matches(/^[A-Z][A-Za-z0-9]*$/, 'a PascalCase identifier (letters and digits, e.g. "PayloadTooLarge"): it names generated constants and classes');
const METHOD_NAME = matches(/^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$/, 'a dotted lower-case name such as "logs.push"');
const SCHEMA_FILE = matches(/^[a-z0-9][a-z0-9.-]*\.json$/, 'a file name under schemas/ such as "logs.push.params.json"');

const METHOD_FIELDS: Fields = {
  name: req(METHOD_NAME),
  section: req(isStr),
  direction: req(oneOf('agent_to_server', 'server_to_agent')),
  kind: req(oneOf('request', 'notification', 'response')),
  response_to: opt(isStr),
  summary: req(isStr),
  params: opt(SCHEMA_FILE),
  result: opt(SCHEMA_FILE),
  errors: req((v) => (Array.isArray(v) && v.every((c) => Number.isInteger(c)) ? undefined : 'must be an array of error codes (integers from errors.json)')),
  examples: req((v) =>
    !Array.isArray(v)
      ? 'must be an array of {"file", "message"}'
      : v
          .map((e, i) => {
            if (e === null || typeof e !== 'object' || Array.isArray(e)) return `/${i} must be an object {"file", "message"}`;
            const unknown = Object.keys(e as object).filter((k) => k !== 'file' && k !== 'message');
            if (unknown.length) return `/${i} has unknown key ${JSON.stringify(unknown[0])} (expected: file, message)`;
            const o = e as { file?: unknown; message?: unknown };
            if (typeof o.file !== 'string' || !o.file.endsWith('.json')) return `/${i}/file must be a file name under examples/`;
            const m = oneOf('request', 'response', 'error', 'notification')(o.message);
            return m && `/${i}/message ${m}`;
          })
          .find((x) => x !== undefined),
  ),
  deprecated: opt(isBool),
};
const ERROR_FIELDS: Fields = {
  code: req(isInt),
  name: req(IDENT),
  direction: req(oneOf('server', 'agent', 'either')),
  meaning: req(isStr),
  close_code: opt(intIn(1000, 4999)),
  data: opt(isStr),
};
const CLOSE_CODE_FIELDS: Fields = {
  code: req(intIn(1000, 4999)),
  name: req(IDENT),
  meaning: req(isStr),
  source: req(oneOf('seed', 'design')),
};
const PROBE_FIELDS: Fields = {
  name: req(matches(/^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$/, 'a dotted lower-case name such as "sys.uptime"')),
  summary: req(isStr),
};
const LIMIT_FIELDS: Fields = {
  value: req((v) => ((typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v !== '') ? undefined : 'must be a number or a non-empty string')),
  unit: opt(isStr),
  source: req(isStr),
  description: req(isStr),
};

class ShapeChecker {
  /** Each accepted entry's index in its file's list (for pointers). */
  private readonly index = new WeakMap<object, number>();
  constructor(private readonly problems: string[]) {}

  private obj(v: unknown): v is Record<string, unknown> {
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  }

  /** Top-level keys of a catalog file: `expected` (plus description), nothing else. */
  private top(doc: unknown, file: string, keys: string[]): Record<string, unknown> | undefined {
    if (!this.obj(doc)) {
      this.problems.push(`${file}: must be a JSON object with ${keys.map((k) => `"${k}"`).join(', ')}`);
      return undefined;
    }
    for (const k of Object.keys(doc)) {
      if (k !== 'description' && !keys.includes(k)) this.problems.push(`${file} at /${escape(k)}: unknown key ${JSON.stringify(k)} (expected: description, ${keys.join(', ')}); a misspelling?`);
    }
    return doc;
  }

  /** Checks one entry's fields; returns whether it can be used. */
  private entry(e: unknown, file: string, ptr: string, fields: Fields): boolean {
    if (!this.obj(e)) {
      this.problems.push(`${file} at ${ptr}: must be an object with ${Object.keys(fields).filter((k) => fields[k]!.required).join(', ')}`);
      return false;
    }
    let ok = true;
    for (const [k, f] of Object.entries(fields)) {
      if (!(k in e)) {
        if (f.required) {
          this.problems.push(`${file} at ${ptr}: "${k}" is missing`);
          ok = false;
        }
        continue;
      }
      const why = f.check(e[k]);
      if (why !== undefined) {
        if (why.startsWith('/')) {
          const sub = why.slice(0, why.indexOf(' '));
          this.problems.push(`${file} at ${ptr}/${k}${sub}: ${why.slice(sub.length + 1)}`);
        } else this.problems.push(`${file} at ${ptr}/${k}: ${show(e[k])} ${why}`);
        ok = false;
      }
    }
    for (const k of Object.keys(e)) {
      if (!(k in fields)) {
        this.problems.push(`${file} at ${ptr}/${escape(k)}: unknown key ${JSON.stringify(k)} (known: ${Object.keys(fields).join(', ')}); a misspelling?`);
        ok = false;
      }
    }
    return ok;
  }

  list<T>(doc: unknown, file: string, key: string, fields: Fields): T[] {
    const d = this.top(doc, file, [key]);
    if (d === undefined) return [];
    const list = d[key];
    if (!Array.isArray(list)) {
      this.problems.push(`${file}: needs "${key}", an array${key in d ? ` (it is ${list === null ? 'null' : typeof list})` : ''}`);
      return [];
    }
    return list.filter((e, i) => {
      const ok = this.entry(e, file, `/${key}/${i}`, fields);
      if (ok) this.index.set(e as object, i);
      return ok;
    }) as T[];
  }

  limits(doc: unknown): Record<string, LimitEntry> {
    const d = this.top(doc, 'limits.json', ['limits']);
    if (d === undefined) return {};
    if (!this.obj(d['limits'])) {
      this.problems.push('limits.json: needs "limits", an object of name → {value, unit?, source, description}');
      return {};
    }
    const out: Record<string, LimitEntry> = {};
    for (const [k, v] of Object.entries(d['limits'])) {
      if (!/^[a-z][a-z0-9_]*$/.test(k)) this.problems.push(`limits.json at /limits/${escape(k)}: a limit name must be snake_case (it is a LIMITS key)`);
      if (this.entry(v, 'limits.json', `/limits/${escape(k)}`, LIMIT_FIELDS)) out[k] = v as LimitEntry;
    }
    return out;
  }

  stateMachine(doc: unknown): StateMachine {
    const d = this.top(doc, 'state-machine.json', ['initial', 'states', 'transitions', 'final']);
    const empty: StateMachine = { description: '', initial: '', states: [], transitions: [], final: [] };
    if (d === undefined) return empty;
    const arr = (k: string) => {
      if (Array.isArray(d[k])) return d[k] as unknown[];
      this.problems.push(`state-machine.json: needs "${k}", an array`);
      return [];
    };
    if (typeof d['initial'] !== 'string') this.problems.push('state-machine.json at /initial: must be the name of a state');
    const states = arr('states').filter((s, i) => this.entry(s, 'state-machine.json', `/states/${i}`, { name: req(IDENT), description: req(isStr), terminal: opt(isBool) }));
    const transitions = arr('transitions').filter((t, i) =>
      this.entry(t, 'state-machine.json', `/transitions/${i}`, {
        from: req(isStr),
        to: req(isStr),
        event: req(isStr),
        description: req(isStr),
        errors: opt((v) => (Array.isArray(v) && v.every((c) => Number.isInteger(c)) ? undefined : 'must be an array of error codes')),
      }),
    );
    const final = arr('final').filter((f, i) => this.entry(f, 'state-machine.json', `/final/${i}`, { from: req(isStr), description: req(isStr) }));
    return { description: typeof d['description'] === 'string' ? d['description'] : '', initial: String(d['initial']), states, transitions, final } as StateMachine;
  }

  /** Reports every value of `key` that more than one entry has (with both pointers). */
  unique<T>(file: string, listKey: string, list: T[], key: keyof T & string, what: string): void {
    const first = new Map<unknown, number>();
    list.forEach((e, k) => {
      const i = this.index.get(e as object) ?? k;
      const v = e[key];
      const j = first.get(v);
      if (j === undefined) first.set(v, i);
      else this.problems.push(`${file} at /${listKey}/${i}/${key}: ${JSON.stringify(v)} is already used at /${listKey}/${j}/${key}; ${what} must be unique`);
    });
  }
}

const show = (v: unknown) => {
  const t = JSON.stringify(v) ?? String(v);
  return t.length > 60 ? `${t.slice(0, 57)}...` : t;
};
const escape = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');

function hasDef(schema: JsonSchema | undefined, name: string): boolean {
  const defs = schema?.['$defs'];
  return defs !== null && typeof defs === 'object' && Object.prototype.hasOwnProperty.call(defs, name);
}

/** "agent.hello" → "AgentHello"; "exec.systemctl_status" → "ExecSystemctlStatus". */
export function pascal(name: string): string {
  return name
    .split(/[._-]/)
    .filter(Boolean)
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join('');
}

/** "agent.hello" → "agentHello". */
export function camel(name: string): string {
  const p = pascal(name);
  return p[0]!.toLowerCase() + p.slice(1);
}

export const schemaIdBase = SCHEMA_ID_BASE;
