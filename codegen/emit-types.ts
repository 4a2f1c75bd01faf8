/** TypeScript types from the bundled contract, through json-schema-to-typescript. */
import { compile } from 'json-schema-to-typescript';
import type { JsonSchema } from './contract.js';
import { packagePath, type NamedSchema } from './bundle.js';

/**
 * A string schema that is a union of constants and prefixes (`oneOf` of `enum` branches and
 * `pattern: "^prefix:.+$"` branches, like LogSource) as a template-literal type, so that a
 * wrong kind is a type error: 'journald' | `file:${string}` | ... (plain `string` otherwise).
 */
export function templateLiteralType(schema: JsonSchema): string | undefined {
  const branches = schema['oneOf'] ?? schema['anyOf'];
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const parts: string[] = [];
  for (const b of branches as JsonSchema[]) {
    if (b['type'] !== 'string') return undefined;
    const extra = Object.keys(b).filter((k) => !['type', 'enum', 'const', 'pattern', 'description', 'title', '$comment'].includes(k));
    if (extra.length > 0) return undefined;
    if (Array.isArray(b['enum']) && b['pattern'] === undefined) parts.push(...(b['enum'] as unknown[]).map((v) => JSON.stringify(v).replace(/"/g, "'")));
    else if (typeof b['const'] === 'string' && b['pattern'] === undefined) parts.push(JSON.stringify(b['const']).replace(/"/g, "'"));
    else if (typeof b['pattern'] === 'string' && b['enum'] === undefined) {
      const m = /^\^([A-Za-z0-9_.:/-]+)\.[+*]\$$/.exec(b['pattern']);
      if (!m) return undefined;
      parts.push(`\`${m[1]}\${string}\``);
    } else return undefined;
  }
  return parts.join(' | ');
}

export async function emitTypes(named: NamedSchema[]): Promise<string> {
  const concrete = named.filter((n) => !n.aliasOf);
  const defs: Record<string, JsonSchema> = {};
  for (const n of concrete) {
    const description = [n.schema['description'], `Schema: \`${packagePath(n.origin)}\``].filter((x) => typeof x === 'string').join('\n\n');
    const tsType = templateLiteralType(n.schema);
    defs[n.name] = { ...n.schema, title: n.name, description, ...(tsType ? { tsType } : {}) };
  }
  const root: JsonSchema = {
    title: 'ProtocolSchemas',
    description: 'Every named schema of the contract, by name (a lookup type: ProtocolSchemas["LogsPushParams"]).',
    type: 'object',
    additionalProperties: false,
    required: named.map((n) => n.name),
    properties: Object.fromEntries(named.map((n) => [n.name, { $ref: `#/$defs/${n.aliasOf ?? n.name}` }])),
    $defs: defs,
  };
  let ts = await compile(root as Parameters<typeof compile>[0], 'ProtocolSchemas', {
    bannerComment: '',
    additionalProperties: true,
    unreachableDefinitions: true,
    strictIndexSignatures: false,
    // minItems/maxItems become tuple types (`[T, ...T[]]`), awkward for batches built in a loop; the validators enforce them.
    ignoreMinAndMaxItems: true,
    format: true,
    style: { singleQuote: true, printWidth: 120 },
  });
  // Drop the generator's "referenced by" boilerplate; the Schema: line says where it comes from.
  ts = ts.replace(/\n \*\n \* This interface was referenced by `ProtocolSchemas`'s JSON-Schema\n \* via the `definition` "[A-Za-z0-9]+"\./g, '');
  ts = ts.replace(/\/\*\*\n \* This interface was referenced by `ProtocolSchemas`'s JSON-Schema\n \* via the `definition` "[A-Za-z0-9]+"\.\n \*\/\n/g, '');
  const aliases = named
    .filter((n) => n.aliasOf)
    .map((n) => `/**\n * ${String(n.schema['description'] ?? n.name)}\n *\n * Schema: \`${packagePath(n.origin)}\`\n */\nexport type ${n.name} = ${n.aliasOf};\n`);
  const out = `${ts.trimEnd()}\n\n${aliases.join('\n')}`;
  const dup = /export (?:interface|type) ([A-Za-z]+\d+)\b/.exec(out);
  if (dup && !process.env.CODEGEN_DEBUG) throw new Error(`the type generator produced a numbered duplicate type ${dup[1]}: give the inline schema a title or move it to $defs`);
  return out;
}
