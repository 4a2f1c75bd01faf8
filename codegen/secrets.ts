/**
 * Secret fields of the contract: a property whose description contains SECRET_MARKER
 * ("Secret: never logged."). Codegen emits the list as SECRET_FIELDS (generated constants),
 * and every logger of the toolkit redacts those keys (agent/log.ts, server/log.ts); lint
 * refuses a `…token` property without the marker, so a new secret cannot be forgotten.
 * A description marker rather than a keyword: the schemas ship for other languages, and
 * an unknown keyword (`x-secret`) fails validators in strict mode (ajv's default).
 */
import type { Contract, JsonSchema } from './contract.js';

export const SECRET_MARKER = 'Secret: never logged.';

/** Property names that must carry the marker. */
export const SECRET_NAME = /(^|_)token$/;

export function isMarkedSecret(schema: unknown): boolean {
  return schema !== null && typeof schema === 'object' && typeof (schema as JsonSchema)['description'] === 'string' && ((schema as JsonSchema)['description'] as string).includes(SECRET_MARKER);
}

/** Every property name marked secret in the contract's schemas and probe schemas, sorted. */
export function secretFields(contract: Contract): string[] {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const props = (node as JsonSchema)['properties'];
    if (props !== null && typeof props === 'object') for (const [name, sub] of Object.entries(props as Record<string, unknown>)) if (isMarkedSecret(sub)) found.add(name);
    for (const v of Object.values(node as JsonSchema)) visit(v);
  };
  for (const s of contract.schemas.values()) visit(s);
  for (const p of contract.probes) {
    visit(p.args);
    visit(p.output);
  }
  return [...found].sort();
}
