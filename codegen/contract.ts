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
  const methods = (read('methods.json') as { methods: MethodEntry[] }).methods ?? [];
  const errors = (read('errors.json') as { errors: ErrorEntry[] }).errors ?? [];
  const closeCodes = (read('close-codes.json') as { close_codes: CloseCodeEntry[] }).close_codes ?? [];
  const limits = (read('limits.json') as { limits: Record<string, LimitEntry> }).limits ?? {};
  const stateMachine = read('state-machine.json') as StateMachine;
  const probeList = (read('probes/probes.json') as { probes: { name: string; summary: string }[] }).probes ?? [];
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
  const seenCodes = new Set<number>();
  for (const e of errors) {
    if (seenCodes.has(e.code)) problems.push(`errors.json: code ${e.code} listed twice`);
    seenCodes.add(e.code);
    if (e.close_code !== undefined && !closeCodes.some((c) => c.code === e.close_code)) problems.push(`errors.json: ${e.name} closes with ${e.close_code}, which close-codes.json does not list`);
    if (e.data !== undefined && !hasDef(schemas.get('error-data.json'), e.data)) problems.push(`errors.json: ${e.name} data "${e.data}" is not a $defs entry of schemas/error-data.json`);
  }
  const usedExamples = new Set<string>();
  const names = new Set<string>();
  for (const m of methods) {
    if (names.has(m.name)) problems.push(`methods.json: ${m.name} listed twice`);
    names.add(m.name);
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
