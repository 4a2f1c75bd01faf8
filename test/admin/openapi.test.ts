// The OpenAPI 3.1 document of the admin API: valid by the official schema (through
// @readme/openapi-parser), served at /admin/openapi.json, and in step with the routes the
// server has (no route undocumented, no documented route missing).
import { readFileSync } from 'node:fs';
import { validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../../server/admin.js';
import { httpBase, httpRequest } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';

const DOC_PATH = new URL('../../server/admin/openapi.json', import.meta.url);
const doc = JSON.parse(readFileSync(DOC_PATH, 'utf8')) as { openapi: string; paths: Record<string, Record<string, unknown>> };
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

function documented(): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths)) for (const m of Object.keys(item)) if (METHODS.includes(m)) out.push(`${m.toUpperCase()} ${path}`);
  return out.sort();
}

describe('admin OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (official schema, via @readme/openapi-parser)', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, JSON.stringify(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('the validator does refuse a broken document (so the check above means something)', async () => {
    const broken = structuredClone(doc) as Record<string, any>;
    broken.paths['/admin/agents'].get.responses = { '200': { content: {} } }; // a response without description
    const result = await validate(broken as never);
    expect(result.valid).toBe(false);
  });

  it('documents every route the server has, and the server has every documented route', () => {
    const routes = ADMIN_ROUTES.map((r) => `${r.method} ${r.path}`).sort();
    expect(new Set(routes).size).toBe(routes.length);
    expect(routes.filter((r) => !documented().includes(r)), 'routes missing from the document').toEqual([]);
    expect(documented().filter((r) => !routes.includes(r)), 'documented routes the server lacks').toEqual([]);
  });

  it('every operation has an operationId and documents its error answers with the error envelope', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(item)) {
        if (!METHODS.includes(m)) continue;
        const o = op as { operationId?: string; responses: Record<string, unknown>; security?: unknown[] };
        expect(o.operationId, `${m} ${path}`).toBeTypeOf('string');
        expect(ids.has(o.operationId as string)).toBe(false);
        ids.add(o.operationId as string);
        if (o.security === undefined) expect(Object.keys(o.responses), `${m} ${path} documents 401/403`).toEqual(expect.arrayContaining(['401', '403']));
      }
    }
  });

  describe('served', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer();
    });
    afterAll(async () => {
      await t.close();
    });

    it('GET /admin/openapi.json answers the document kept beside the code', async () => {
      const res = await httpRequest(`${httpBase(t)}/admin/openapi.json`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual(doc);
    });

    it('every documented path answers something other than 404 / 405 for each documented method', async () => {
      const host = '00000000-0000-4000-8000-000000000000';
      for (const entry of documented()) {
        const [method, path] = entry.split(' ') as [string, string];
        if (path.endsWith('/logs/stream')) continue; // an unknown host answers 404 -32004 (checked in admin-api tests)
        const res = await httpRequest(`${httpBase(t)}${path.replace('{host_id}', host)}`, {
          method,
          ...(method === 'GET' || method === 'DELETE' ? {} : { raw: '{}', headers: { 'Content-Type': 'application/json' } }),
        });
        expect(res.status, entry).not.toBe(405);
        // a 404 for an unknown host is the documented -32004, never "no such endpoint"
        if (res.status === 404) expect(res.body.error.code, entry).toBe(-32004);
      }
    });
  });
});
