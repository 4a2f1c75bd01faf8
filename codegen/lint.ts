/**
 * Refuses JSON Schema constructs that the type generator or ajv would silently mishandle, so
 * a contract change cannot produce types and validators that disagree. Walks schema positions
 * only (property names are not keywords).
 */
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { Contract, JsonSchema } from './contract.js';
import { SECRET_MARKER, SECRET_NAME, isMarkedSecret } from './secrets.js';

/** Keywords we generate faithful types and validators for. */
const SUPPORTED = new Set([
  '$schema', '$id', '$defs', '$ref', '$comment', 'title', 'description', 'default', 'examples', 'deprecated',
  'type', 'enum', 'const', 'properties', 'required', 'additionalProperties', 'items', 'minItems', 'maxItems',
  'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'pattern', 'format',
  'oneOf', 'anyOf', 'allOf', 'minProperties', 'maxProperties', 'uniqueItems',
]);

/** Known to be mishandled: named in the error message with the reason. */
const FORBIDDEN: Record<string, string> = {
  prefixItems: 'tuple types are not generated faithfully; use items',
  unevaluatedProperties: 'not supported by the type generator',
  unevaluatedItems: 'not supported by the type generator',
  if: 'conditional schemas are ignored by the type generator',
  then: 'conditional schemas are ignored by the type generator',
  else: 'conditional schemas are ignored by the type generator',
  $dynamicRef: 'dynamic references are not supported by the type generator',
  $dynamicAnchor: 'dynamic references are not supported by the type generator',
  $anchor: 'anchors are not resolved by the bundler; use $defs and #/$defs/Name',
  $recursiveRef: 'draft 2019 recursion is not supported',
  patternProperties: 'generated as a loose index signature; not supported',
  dependentSchemas: 'ignored by the type generator',
  dependentRequired: 'ignored by the type generator',
  not: 'negation is ignored by the type generator',
  contains: 'ignored by the type generator',
  propertyNames: 'ignored by the type generator',
};

const KNOWN_FORMATS = new Set(Object.keys(fullFormats));
const REF_FORM = /^(?:[a-z0-9.-]+\.json)?#(?:\/\$defs\/[A-Za-z][A-Za-z0-9]*)?$/;

export interface LintProblem {
  file: string;
  path: string;
  message: string;
}

export function lintSchema(file: string, schema: unknown, path = ''): LintProblem[] {
  const problems: LintProblem[] = [];
  const visit = (node: unknown, at: string) => {
    if (typeof node === 'boolean') return;
    if (node === null || typeof node !== 'object' || Array.isArray(node)) {
      problems.push({ file, path: at, message: 'a schema must be an object or a boolean' });
      return;
    }
    const s = node as JsonSchema;
    for (const key of Object.keys(s)) {
      if (key in FORBIDDEN) problems.push({ file, path: `${at}/${key}`, message: `keyword "${key}" is not allowed: ${FORBIDDEN[key]}` });
      else if (!SUPPORTED.has(key)) problems.push({ file, path: `${at}/${key}`, message: `unknown or unsupported keyword "${key}" (typo?)` });
    }
    const ref = s['$ref'];
    if (ref !== undefined) {
      if (typeof ref !== 'string') problems.push({ file, path: `${at}/$ref`, message: '$ref must be a string' });
      else if (/^[a-z][a-z0-9+.-]*:/i.test(ref)) problems.push({ file, path: `${at}/$ref`, message: `remote $ref "${ref}" is not allowed: reference contract files relatively (e.g. defs.json#/$defs/Name)` });
      else if (!REF_FORM.test(ref)) problems.push({ file, path: `${at}/$ref`, message: `$ref "${ref}" must have the form [file.json]#/$defs/Name` });
    }
    const format = s['format'];
    if (format !== undefined && (typeof format !== 'string' || !KNOWN_FORMATS.has(format))) {
      problems.push({ file, path: `${at}/format`, message: `unknown format ${JSON.stringify(format)} (known: ${[...KNOWN_FORMATS].join(', ')})` });
    }
    const pattern = s['pattern'];
    if (pattern !== undefined) {
      try {
        new RegExp(String(pattern), 'u');
      } catch (err) {
        problems.push({ file, path: `${at}/pattern`, message: `pattern is not a valid ECMAScript (u) regular expression: ${(err as Error).message}` });
      }
    }
    for (const key of ['properties', '$defs'] as const) {
      const map = s[key];
      if (map !== undefined) {
        if (map === null || typeof map !== 'object' || Array.isArray(map)) problems.push({ file, path: `${at}/${key}`, message: `${key} must be an object` });
        else
          for (const [name, sub] of Object.entries(map)) {
            if (key === 'properties' && SECRET_NAME.test(name) && !isMarkedSecret(sub)) {
              problems.push({ file, path: `${at}/${key}/${name}`, message: `"${name}" looks like a secret: say so in its description ("${SECRET_MARKER}"), so every logger redacts it` });
            }
            visit(sub, `${at}/${key}/${name}`);
          }
      }
    }
    for (const key of ['items', 'additionalProperties'] as const) {
      const sub = s[key];
      if (sub !== undefined) {
        if (Array.isArray(sub)) problems.push({ file, path: `${at}/${key}`, message: `${key} must be a schema, not an array` });
        else visit(sub, `${at}/${key}`);
      }
    }
    for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
      const list = s[key];
      if (list !== undefined) {
        if (!Array.isArray(list)) problems.push({ file, path: `${at}/${key}`, message: `${key} must be an array` });
        else list.forEach((sub, i) => visit(sub, `${at}/${key}/${i}`));
      }
    }
  };
  visit(schema, path);
  return problems;
}

export function lintContract(contract: Contract): LintProblem[] {
  const problems: LintProblem[] = [];
  for (const [file, schema] of contract.schemas) problems.push(...lintSchema(`schemas/${file}`, schema));
  for (const p of contract.probes) {
    problems.push(...lintSchema(`probes/${p.name}.args.json`, p.args));
    problems.push(...lintSchema(`probes/${p.name}.output.json`, p.output));
  }
  return problems;
}
