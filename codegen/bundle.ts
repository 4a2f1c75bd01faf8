/**
 * Collects every named schema of the contract into one namespace: method params/results by
 * their title, shared definitions by their $defs key, probe schemas by title. Types are
 * compiled from one bundled root built from this, so each definition becomes exactly one
 * type (no `Severity1` duplicates).
 */
import { ContractError, type Contract, type JsonSchema } from './contract.js';

export interface NamedSchema {
  /** Type name (PascalCase). */
  name: string;
  /** Absolute schema id for ajv: file id, or file id + "#/$defs/Name". */
  ajvRef: string;
  /** Where it is defined, for doc comments ("contract/schemas/defs.json#/$defs/Severity"). */
  origin: string;
  /** The schema with $refs rewritten to "#/$defs/<Name>" and $id/$schema removed. */
  schema: JsonSchema;
  /** Set when the schema is nothing but a reference to another named schema. */
  aliasOf?: string;
}

/**
 * The package-relative path of a schema origin, for doc comments: the package ships the
 * contract's schemas under schemas/ (probes under schemas/probes/), not contract/.
 */
export function packagePath(origin: string): string {
  return origin.replace(/^contract\/probes\//, 'schemas/probes/').replace(/^contract\//, '');
}

/** Files whose root is only a container of $defs. */
const CONTAINERS = new Set(['defs.json', 'error-data.json']);

export function collectNamedSchemas(contract: Contract): NamedSchema[] {
  const out: NamedSchema[] = [];
  const byRef = new Map<string, string>(); // "file.json#/$defs/X" or "file.json#" → name
  const add = (file: string, rel: string, s: JsonSchema) => {
    const id = s['$id'] as string;
    if (!CONTAINERS.has(file)) {
      const name = s['title'] as string;
      byRef.set(`${file}#`, name);
      out.push({ name, ajvRef: id, origin: `contract/${rel}`, schema: s });
    }
    const defs = (s['$defs'] ?? {}) as Record<string, JsonSchema>;
    for (const [key, def] of Object.entries(defs)) {
      byRef.set(`${file}#/$defs/${key}`, key);
      out.push({ name: key, ajvRef: `${id}#/$defs/${key}`, origin: `contract/${rel}#/$defs/${key}`, schema: def });
    }
  };
  for (const [file, s] of contract.schemas) add(file, `schemas/${file}`, s);
  for (const p of contract.probes) {
    add(`probes/${p.name}.args.json`, `probes/${p.name}.args.json`, p.args);
    add(`probes/${p.name}.output.json`, `probes/${p.name}.output.json`, p.output);
  }
  const seen = new Map<string, string>();
  for (const n of out) {
    const prev = seen.get(n.name);
    if (prev) throw new ContractError([`two schemas would both generate the type ${n.name}: ${prev} and ${n.origin}; give one another title or $defs key`]);
    seen.set(n.name, n.origin);
  }
  // Rewrite references into the flat namespace.
  return out.map((n) => {
    const file = n.origin.replace(/^contract\/(schemas\/)?/, '').replace(/#.*$/, '');
    const rewrite = (node: unknown, top: boolean): unknown => {
      if (Array.isArray(node)) return node.map((x) => rewrite(x, false));
      if (node === null || typeof node !== 'object') return node;
      const o: JsonSchema = {};
      const isRef = !top && typeof (node as JsonSchema)['$ref'] === 'string';
      for (const [k, v] of Object.entries(node as JsonSchema)) {
        if (k === '$id' || k === '$schema') continue;
        // Annotations beside a $ref would make the type generator emit a copy of the target type.
        if (isRef && (k === 'description' || k === 'title' || k === '$comment')) continue;
        if (top && k === '$defs') continue; // each def is its own named schema
        if (k === '$ref' && typeof v === 'string') {
          const [refFile, pointer] = v.split('#') as [string, string | undefined];
          const key = `${refFile === '' ? file : refFile}#${pointer ?? ''}`;
          const target = byRef.get(key);
          if (!target) throw new ContractError([`${n.origin}: $ref "${v}" does not resolve to a named schema of the contract`]);
          o[k] = `#/$defs/${target}`;
          continue;
        }
        o[k] = rewrite(v, false);
      }
      return o;
    };
    const schema = rewrite(n.schema, true) as JsonSchema;
    const keys = Object.keys(schema).filter((k) => !['title', 'description', '$comment'].includes(k));
    const aliasOf = keys.length === 1 && keys[0] === '$ref' ? (schema['$ref'] as string).slice('#/$defs/'.length) : undefined;
    return aliasOf ? { ...n, schema, aliasOf } : { ...n, schema };
  });
}
