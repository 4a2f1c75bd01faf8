/**
 * Files codegen writes for the reference server (server/generated/), not for the wire
 * package: contract schemas that describe the server itself rather than the protocol
 * (SERVER_ONLY_SCHEMAS: the `--config FILE` schema). The package ships wire-protocol
 * schemas only; the server gets its config type, the schema as a constant and a precompiled
 * validator (ajv standalone code bundled by esbuild, as the package's validators: no ajv
 * loaded when the server starts, and a bundle of the server, `npm run package`, carries it).
 */
import { compile } from 'json-schema-to-typescript';
import type { Contract, JsonSchema } from './contract.js';
import { TS_HEADER } from './header.js';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { bundleStandalone, createAjv, hoistEvaluated } from './emit-validators.js';

/** One precompiled validator as an ES module: ajv standalone code, bundled (no require, no ajv at run time). */
async function standaloneValidator(contract: Contract, name: string, ref: string): Promise<string> {
  const ajv = createAjv(contract, true);
  return bundleStandalone(hoistEvaluated(standaloneCode.default(ajv, { [name]: ref })), 'validator.js');
}

/** Contract schema files that belong to the server, not to the wire protocol. */
export const SERVER_ONLY_SCHEMAS: ReadonlySet<string> = new Set(['server-config.json']);

/** The folder of the server's generated files, relative to the repository. */
export const SERVER_GENERATED_DIR = 'server/generated';

/** `defs.json#/$defs/Name` references become the package's type `Name` (imported). */
function withPackageTypes(schema: JsonSchema, used: Set<string>): JsonSchema {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const o = node as JsonSchema;
    if (typeof o['$ref'] === 'string') {
      const m = /^defs\.json#\/\$defs\/([A-Za-z0-9]+)$/.exec(o['$ref']);
      if (!m) throw new Error(`server schema: $ref ${o['$ref']} is not a defs.json definition`);
      used.add(m[1]!);
      return { tsType: m[1], ...(typeof o['description'] === 'string' ? { description: o['description'] } : {}) };
    }
    return Object.fromEntries(Object.entries(o).filter(([k]) => k !== '$id' && k !== '$schema').map(([k, v]) => [k, walk(v)]));
  };
  return walk(schema) as JsonSchema;
}

export async function emitServerFiles(contract: Contract): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const file of [...SERVER_ONLY_SCHEMAS].sort()) {
    const schema = contract.schemas.get(file);
    if (!schema) throw new Error(`contract/schemas/${file} is missing`);
    const title = schema['title'];
    if (typeof title !== 'string') throw new Error(`contract/schemas/${file} has no title`);
    const used = new Set<string>();
    const forTypes = withPackageTypes(schema, used);
    forTypes['description'] = `${String(schema['description'] ?? title)}\n\nSchema: \`contract/schemas/${file}\` (this repository; not part of the wire package).`;
    const ts = await compile(forTypes as Parameters<typeof compile>[0], title, {
      bannerComment: '',
      additionalProperties: true,
      strictIndexSignatures: false,
      ignoreMinAndMaxItems: true,
      format: true,
      style: { singleQuote: true, printWidth: 120 },
    });
    const constName = `${title.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}_SCHEMA`;
    const imports = [...used].sort();
    const base = file.replace(/\.json$/, '');
    const standalone = await standaloneValidator(contract, `validate${title}`, String(schema['$id']));
    out.set(`${base}.validator.ts`, `${TS_HEADER}/* eslint-disable */\n// @ts-nocheck -- ajv standalone code bundled by esbuild (JavaScript); typed by ${base}.ts\n${standalone}`);
    const text = `${TS_HEADER}// The reference server's ${file} (contract/schemas/${file}): its type, the schema and a
// validator. The wire package (@cortex/agent-protocol) ships the protocol's schemas only.
import type { Validator${imports.map((t) => `, ${t}`).join('')} } from '@cortex/agent-protocol';
import * as precompiled from './${base}.validator.js';

${ts.trimEnd()}

/** contract/schemas/${file}, verbatim. */
export const ${constName} = ${JSON.stringify(schema, null, 2)} as const;

/**
 * Validates a {@link ${title}} (precompiled, first error only, like the package's validators).
 * On failure \`errors\` lists what failed; \`toIssues\` and \`describeIssues\` make it readable.
 */
export const validate${title}: Validator<${title}> = (precompiled as unknown as { validate${title}: Validator<${title}> }).validate${title};
`;
    out.set(`${base}.ts`, text);
  }
  return out;
}
