// The schema files of a contract and how they reach each other: files by key, $ref
// resolution across files, and which methods/probes use each definition ("used by").
// Part of the contract diff (contract-diff.ts); imports only the contract loader's types.
import type { Contract, JsonSchema } from '../contract.js';
import { schemaIdBase } from '../contract.js';
import { at, isObj, unescapePtr } from './json-util.js';

// Schema files of a contract, keyed "schemas/<file>" or "probes/<probe>.<args|output>.json".

export function schemaFiles(c: Contract): Map<string, JsonSchema> {
  const m = new Map<string, JsonSchema>();
  for (const [f, s] of c.schemas) m.set(`schemas/${f}`, s);
  for (const p of c.probes) {
    m.set(`probes/${p.name}.args.json`, p.args);
    m.set(`probes/${p.name}.output.json`, p.output);
  }
  return m;
}

/** $id-relative URL of a schema file key: "schemas/x.json" → "x.json", "probes/a.json" → "probes/a.json". */
export const idPath = (key: string) => (key.startsWith('schemas/') ? key.slice('schemas/'.length) : key);
export const keyOfIdPath = (p: string) => (p.startsWith('probes/') ? p : `schemas/${p}`);

export interface Resolved {
  file: string;
  path: string[];
  schema: unknown;
}

export function resolveRef(files: Map<string, JsonSchema>, fromFile: string, ref: string): Resolved | undefined {
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
 * Every $ref target reachable from `node` (in `file`), each told to `reached` as its location
 * key every time a $ref names it, and followed once (`seen`); $defs are reached only through refs.
 */
function walkRefs(files: Map<string, JsonSchema>, node: unknown, file: string, seen: Set<string>, reached: (key: string) => void): void {
  if (Array.isArray(node)) {
    for (const x of node) walkRefs(files, x, file, seen, reached);
    return;
  }
  if (!isObj(node)) return;
  if (typeof node['$ref'] === 'string') {
    const r = resolveRef(files, file, node['$ref']);
    if (r) {
      const key = at(r.file, r.path);
      reached(key);
      if (!seen.has(key)) {
        seen.add(key);
        walkRefs(files, r.schema, r.file, seen, reached);
      }
    }
  }
  for (const [k, v] of Object.entries(node)) if (k !== '$defs' && k !== '$ref') walkRefs(files, v, file, seen, reached);
}

/**
 * "used by" index: for every $ref target reachable from a method's params/result schema (or
 * an error's data definition), which methods/errors reach it.
 */
export function usageIndex(c: Contract, files: Map<string, JsonSchema>): Map<string, Set<string>> {
  const index = new Map<string, Set<string>>();
  const add = (target: string, user: string) => {
    let s = index.get(target);
    if (!s) index.set(target, (s = new Set()));
    s.add(user);
  };
  const walk = (node: unknown, file: string, user: string, seen: Set<string>) => walkRefs(files, node, file, seen, (key) => add(key, user));
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


/**
 * Which side of a connection receives a message, seen from the agent: what an agent RECEIVES
 * (params of server→agent methods, results of agent→server requests, probe args, error data
 * the server sends) and what it SENDS (params of agent→server methods, results it answers
 * server→agent requests with, probe outputs, error data of the errors agents answer with).
 */
export type Role = 'agent-receives' | 'agent-sends';

export function methodPartRole(m: { direction: string }, part: 'params' | 'result'): Role {
  const agentSends = m.direction === 'agent_to_server' ? part === 'params' : part === 'result';
  // kind "response" (probe.response): a result sent in the method's direction
  return agentSends ? 'agent-sends' : 'agent-receives';
}

/**
 * For every schema location a message starts at or reaches through $ref (file roots and
 * $defs entries), which messages use it and in which role (user label → role).
 */
export function roleIndex(c: Contract, files: Map<string, JsonSchema>): Map<string, Map<string, Role>> {
  const index = new Map<string, Map<string, Role>>();
  const add = (target: string, user: string, role: Role) => {
    let m = index.get(target);
    if (!m) index.set(target, (m = new Map()));
    m.set(user, role);
  };
  const walk = (node: unknown, file: string, user: string, role: Role, seen: Set<string>) => walkRefs(files, node, file, seen, (key) => add(key, user, role));
  const start = (file: string, user: string, role: Role) => {
    if (!files.has(file)) return;
    add(file, user, role);
    walk(files.get(file), file, user, role, new Set([file]));
  };
  for (const m of c.methods) {
    for (const part of ['params', 'result'] as const) {
      const f = m[part];
      if (f !== undefined) start(`schemas/${f}`, `${m.name} ${part}`, methodPartRole(m, part));
    }
  }
  for (const p of c.probes) {
    start(`probes/${p.name}.args.json`, `probe ${p.name} args`, 'agent-receives');
    start(`probes/${p.name}.output.json`, `probe ${p.name} output`, 'agent-sends');
  }
  for (const e of c.errors) {
    if (e.data === undefined) continue;
    const key = at('schemas/error-data.json', ['$defs', e.data]);
    const roles: Role[] = e.direction === 'server' ? ['agent-receives'] : e.direction === 'agent' ? ['agent-sends'] : ['agent-receives', 'agent-sends'];
    for (const role of roles) {
      const user = `error ${e.code} data${roles.length > 1 ? ` (${role === 'agent-receives' ? 'from servers' : 'from agents'})` : ''}`;
      add(key, user, role);
      const r = resolveRef(files, 'schemas/error-data.json', `#/$defs/${e.data}`);
      if (r) walk(r.schema, r.file, user, role, new Set([key]));
    }
  }
  return index;
}
