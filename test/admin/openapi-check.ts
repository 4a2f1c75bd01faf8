// Checks admin API answers against the OpenAPI document: the schema documented for that
// path, method and status must accept the body.
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { OPENAPI, createAdminAjv } from '../../server/admin/schemas.js';

type Json = Record<string, any>;
const ajv = createAdminAjv();
const cache = new Map<string, ValidateFunction>();

function deref(node: Json): Json {
  const ref = node['$ref'];
  if (typeof ref !== 'string') return node;
  const parts = ref.replace(/^#\//, '').split('/');
  let cur: any = OPENAPI;
  for (const p of parts) cur = cur[p];
  return deref(cur as Json);
}

/** The documented JSON schema of an answer, or throws when the status is not documented. */
export function documentedSchema(path: string, method: string, status: number): Json {
  const op = (OPENAPI.paths as Json)[path]?.[method.toLowerCase()];
  if (op === undefined) throw new Error(`${method} ${path} is not in the OpenAPI document`);
  const response = op.responses[String(status)];
  if (response === undefined) throw new Error(`${method} ${path} does not document status ${status}`);
  const schema = deref(response).content?.['application/json']?.schema;
  if (schema === undefined) throw new Error(`${method} ${path} ${status} has no application/json schema`);
  return schema as Json;
}

/** Errors (ajv's) when `body` does not match the documented schema; [] when it does. */
export function undocumented(path: string, method: string, status: number, body: unknown): unknown[] {
  const key = `${method} ${path} ${status}`;
  let v = cache.get(key);
  if (v === undefined) {
    const text = JSON.stringify(documentedSchema(path, method, status)).replaceAll('"#/components/schemas/', '"admin-api#/$defs/');
    v = ajv.compile(JSON.parse(text) as Json);
    cache.set(key, v);
  }
  return v(body) ? [] : (v.errors ?? []);
}
