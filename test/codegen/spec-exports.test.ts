// The OpenRPC and AsyncAPI exports validate against their ecosystems' official JSON Schemas
// (@open-rpc/meta-schema with @json-schema-tools/meta-schema, @asyncapi/specs 3.0.0).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

const repo = resolve(import.meta.dirname, '..', '..');
const require = createRequire(join(repo, 'package.json'));
type Doc = Record<string, unknown>;
/** The catalog's wire methods (kind "response" is not a method on the wire), in catalog order. */
const catalogMethods = (direction?: string) =>
  (JSON.parse(readFileSync(join(repo, 'contract', 'methods.json'), 'utf8')) as { methods: { name: string; direction: string; kind: string }[] }).methods
    .filter((m) => m.kind !== 'response' && (direction === undefined || m.direction === direction))
    .map((m) => m.name);
const load = (f: string) => JSON.parse(readFileSync(join(repo, 'generated', 'spec', f), 'utf8')) as Doc;

function openRpcValidator() {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const jsonSchemaMeta = (require('@json-schema-tools/meta-schema') as { default: Doc }).default;
  // The OpenRPC meta-schema refers to it both with and without the trailing slash.
  for (const key of ['https://meta.json-schema.tools/', 'https://meta.json-schema.tools']) {
    const copy = structuredClone(jsonSchemaMeta);
    delete copy['$schema'];
    delete copy['$id'];
    ajv.addSchema(copy, key);
  }
  const meta = structuredClone((require('@open-rpc/meta-schema') as { default: Doc }).default);
  delete meta['$schema'];
  return ajv.compile(meta);
}

function asyncApiValidator() {
  // The bundled 3.0.0 schema carries its own copy of the draft-07 meta-schema.
  const ajv = new Ajv({ strict: false, allErrors: true, meta: false, validateSchema: false });
  addFormats.default(ajv);
  const schema = structuredClone(require('@asyncapi/specs/schemas/3.0.0.json') as Doc);
  delete schema['$schema'];
  return ajv.compile(schema);
}

describe('spec exports', () => {
  it('generated/spec/openrpc.json is a valid OpenRPC document with every method of the catalog', () => {
    const doc = load('openrpc.json');
    const validate = openRpcValidator();
    expect(validate(doc), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    const names = (doc['methods'] as { name: string }[]).map((m) => m.name);
    expect(names).toEqual(catalogMethods());
    const push = (doc['methods'] as Doc[]).find((m) => m['name'] === 'logs.push')!;
    // error data is a value in OpenRPC: its schema is in the method's x-error-data-schemas
    expect(push['errors']).toContainEqual({ code: -32020, message: 'Backpressure' });
    expect(push['x-error-data-schemas']).toMatchObject({ '-32020': { $ref: '#/components/schemas/RetryAfterData' } });
    // The validator really checks: a broken document is refused.
    expect(validate({ ...doc, methods: [{ name: 'x' }] })).toBe(false);
  });

  it('generated/spec/asyncapi.json is a valid AsyncAPI 3.0 document with a message per request, response and notification', () => {
    const doc = load('asyncapi.json');
    const validate = asyncApiValidator();
    expect(validate(doc), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    const messages = Object.keys((doc['components'] as { messages: Doc }).messages);
    expect(messages).toEqual(expect.arrayContaining(['AgentHelloRequest', 'AgentHelloResponse', 'AgentHeartbeatNotification', 'LogsPushRequest', 'ProbeRequestRequest', 'ProbeRequestResponse', 'ConfigUpdateNotification']));
    const ops = doc['operations'] as Record<string, { action: string }>;
    expect(ops['sendLogsPush']?.action).toBe('send');
    expect(ops['receiveProbeRequest']?.action).toBe('receive');
    const broken = structuredClone(doc) as { operations: Record<string, { action: string }> };
    broken.operations['sendLogsPush']!.action = 'yell';
    expect(validate(broken)).toBe(false);
  });
});
