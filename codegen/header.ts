/** The first lines of every generated file. No version or timestamp: those go to manifest.json. */
export const HEADER_LINES = [
  'Generated from contract/ by codegen — do not edit.',
  'Change the contract (or codegen/) and run `npm run codegen` instead.',
];

export const TS_HEADER = `/*\n${HEADER_LINES.map((l) => ` * ${l}`).join('\n')}\n */\n`;
export const MD_HEADER = `<!-- ${HEADER_LINES.join(' ')} -->\n`;
export const JSON_HEADER_KEY = '//';
export const JSON_HEADER_VALUE = HEADER_LINES.join(' ');

/** Serialize a JSON value with the header as its first key (objects only). */
export function jsonWithHeader(value: Record<string, unknown>): string {
  return JSON.stringify({ [JSON_HEADER_KEY]: JSON_HEADER_VALUE, ...value }, null, 2) + '\n';
}
