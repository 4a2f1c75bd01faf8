/**
 * The first lines of every generated file. No version or timestamp: those go to manifest.json.
 * `@generated` is the marker tools look for (linters, review tools, GitHub's diff view); the
 * sentence after it says what to do instead of editing.
 */
export const GENERATED_MARKER = '@generated';
// ASCII only: V8 holds a module's whole source as two-byte text when it has one character
// past Latin-1, so one em dash here doubled the in-memory source of every generated module
// (validators.js: 0.83 MiB instead of 0.41; DECISIONS P9).
export const HEADER_LINES = [
  'Generated from contract/ by codegen; do not edit.',
  'Change the contract (or codegen/) and run `npm run codegen` instead.',
];

export const TS_HEADER = `/*\n * ${GENERATED_MARKER}\n${HEADER_LINES.map((l) => ` * ${l}`).join('\n')}\n */\n`;
export const MD_HEADER = `<!-- ${GENERATED_MARKER} ${HEADER_LINES.join(' ')} -->\n`;
export const JSON_HEADER_KEY = '//';
export const JSON_HEADER_VALUE = `${GENERATED_MARKER} ${HEADER_LINES.join(' ')}`;

/** Serialize a JSON value with the header as its first key (objects only). */
export function jsonWithHeader(value: Record<string, unknown>): string {
  return JSON.stringify({ [JSON_HEADER_KEY]: JSON_HEADER_VALUE, ...value }, null, 2) + '\n';
}

/**
 * A JSON Schema with the header as its `$comment` (a keyword every validator ignores; a `//`
 * key would be an unknown keyword under ajv's strict mode), after `$schema` and `$id`.
 */
export function schemaWithHeader(schema: Record<string, unknown>): string {
  const { $schema, $id, $comment, ...rest } = schema;
  const comment = typeof $comment === 'string' ? `${JSON_HEADER_VALUE} ${$comment}` : JSON_HEADER_VALUE;
  const head: Record<string, unknown> = {};
  if ($schema !== undefined) head['$schema'] = $schema;
  if ($id !== undefined) head['$id'] = $id;
  return JSON.stringify({ ...head, $comment: comment, ...rest }, null, 2) + '\n';
}
