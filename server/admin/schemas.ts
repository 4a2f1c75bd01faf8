// Validators for the admin API's own request bodies, compiled once at start from the
// schemas of the OpenAPI document (./openapi.json), so the document and the validation can
// never disagree. Bodies that are contract types (AgentConfig, ProbeRequestParams) are
// checked by the contract's generated validators in the route handlers instead.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describeIssues, toIssues } from '@cortex/agent-protocol';
import doc from './openapi.json' with { type: 'json' };
import { invalid } from './http.js';

/** The OpenAPI document (served at /admin/openapi.json). */
export const OPENAPI: typeof doc = doc;

export type BodySchemaName = 'IssueRequest' | 'RotateRequest' | 'DecommissionRequest' | 'SetConfigRequest' | 'SignInRequest' | 'SetGroupRequest';

/** components.schemas as one JSON Schema (2020-12) document with $defs. */
export function componentSchemas(): Record<string, unknown> {
  const text = JSON.stringify(doc.components.schemas).replaceAll('"#/components/schemas/', '"admin-api#/$defs/');
  return { $id: 'admin-api', $defs: JSON.parse(text) as Record<string, unknown> };
}

/** An ajv instance with the document's schemas (the tests reuse it to check answers). */
export function createAdminAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(componentSchemas());
  return ajv;
}

const ajv = createAdminAjv();
const compiled = new Map<BodySchemaName, ValidateFunction>();

/**
 * Checks `body` against the named schema of the document.
 * @throws ApiError 400 (-32602) listing what failed
 */
export function checkBody<T>(name: BodySchemaName, body: unknown): T {
  let validate = compiled.get(name);
  if (validate === undefined) {
    validate = ajv.getSchema(`admin-api#/$defs/${name}`) as ValidateFunction;
    compiled.set(name, validate);
  }
  if (!validate(body)) {
    const issues = toIssues(validate.errors);
    throw invalid(`invalid ${name}: ${describeIssues(issues)} (see components.schemas.${name} in /admin/openapi.json)`, issues.slice(0, 20));
  }
  return body as T;
}
