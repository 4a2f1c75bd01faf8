// The OpenRPC and AsyncAPI documents through the tools other ecosystems use (issue 16): the
// official parsers (@open-rpc/schema-utils-js, @asyncapi/parser), OpenRPC's
// MethodCallValidator over every param vector against the contract's verdicts, and Modelina
// generating TypeScript and Python models from the AsyncAPI document, which must type-check
// (tsc --strict) and byte-compile (python3 -m py_compile).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');
const require = createRequire(join(repo, 'package.json'));
const spec = (f: string) => readFileSync(join(repo, 'generated', 'spec', f), 'utf8');
const tscBin = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
/** The catalog's wire methods (kind "response" is not a method on the wire), in catalog order. */
const catalogMethods = (direction?: string) =>
  (JSON.parse(readFileSync(join(repo, 'contract', 'methods.json'), 'utf8')) as { methods: { name: string; direction: string; kind: string }[] }).methods
    .filter((m) => m.kind !== 'response' && (direction === undefined || m.direction === direction))
    .map((m) => m.name);

interface OpenRpcDoc {
  methods: { name: string }[];
  servers?: { url: string }[];
}
interface MethodCallValidatorLike {
  validate(method: string, params: unknown): unknown[] | Error;
}
const openrpc = require('@open-rpc/schema-utils-js') as {
  parseOpenRPCDocument(doc: unknown, options?: { dereference?: boolean }): Promise<OpenRpcDoc>;
  MethodCallValidator: new (doc: OpenRpcDoc) => MethodCallValidatorLike;
};

interface Vector {
  id: string;
  target: string;
  mutation: string;
  path: string;
  message: { method?: unknown; params?: unknown };
  expected: { valid: boolean };
}
function paramVectors(): Vector[] {
  const dir = join(repo, 'generated', 'vectors');
  return readdirSync(dir)
    .flatMap((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { vectors: Vector[] }).vectors)
    .filter((v) => (v.target === 'params' || v.target === 'message') && typeof v.message.method === 'string');
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('OpenRPC', () => {
  it('the official parser accepts all three documents; one document per direction says which side serves what', async () => {
    const all = await openrpc.parseOpenRPCDocument(JSON.parse(spec('openrpc.json')));
    expect(all.methods.map((m) => m.name)).toEqual(catalogMethods());
    const server = await openrpc.parseOpenRPCDocument(JSON.parse(spec('openrpc.agent-to-server.json')));
    expect(server.methods.map((m) => m.name)).toEqual(catalogMethods('agent_to_server'));
    expect(server.servers?.map((s) => s.url)).toEqual(['ws://127.0.0.1:3100/ws/agent']);
    const agent = await openrpc.parseOpenRPCDocument(JSON.parse(spec('openrpc.server-to-agent.json')));
    expect(agent.methods.map((m) => m.name)).toEqual(catalogMethods('server_to_agent'));
    expect(agent.servers).toBeUndefined();
    // error data is a value in OpenRPC: no schema objects there
    for (const m of JSON.parse(spec('openrpc.json')).methods as { errors?: Record<string, unknown>[] }[]) for (const e of m.errors ?? []) expect(Object.keys(e).sort()).toEqual(['code', 'message']);
  });

  it('MethodCallValidator agrees with the contract on every param vector but the unknown top-level params, which a by-name param list cannot forbid', async () => {
    const doc = await openrpc.parseOpenRPCDocument(JSON.parse(spec('openrpc.json')), { dereference: true });
    const validator = new openrpc.MethodCallValidator(doc);
    const vectors = paramVectors();
    expect(vectors.length).toBeGreaterThanOrEqual(150);
    const disagree: string[] = [];
    for (const v of vectors) {
      const r = validator.validate(v.message.method as string, v.message.params);
      const valid = Array.isArray(r) && r.length === 0;
      if (valid !== v.expected.valid) disagree.push(v.id);
    }
    const unknownTopLevel = vectors.filter((v) => v.mutation === 'extra_property' && v.path.split('/').length === 2).map((v) => v.id);
    // one per method with a request or notification example (its params vectors derive from it)
    const withParamsExample = (JSON.parse(readFileSync(join(repo, 'contract', 'methods.json'), 'utf8')) as { methods: { examples: { message: string }[] }[] }).methods.filter((m) =>
      m.examples.some((e) => e.message === 'request' || e.message === 'notification'),
    );
    expect(unknownTopLevel.length).toBe(withParamsExample.length);
    expect(disagree.sort()).toEqual(unknownTopLevel.sort());
  });
});

describe('AsyncAPI', () => {
  it('the official parser reports no error or warning; the path is not doubled; the subprotocol is a ws binding', async () => {
    const { Parser } = require('@asyncapi/parser') as typeof import('@asyncapi/parser');
    const { document, diagnostics } = await new Parser().parse(spec('asyncapi.json'));
    expect(diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.code}: ${d.message} at ${d.path.join('/')}`)).toEqual([]);
    expect(document).toBeDefined();
    const server = document!.servers().get('local')!;
    const channel = document!.channels().get('agent')!;
    expect(`${server.protocol()}://${server.host()}${server.pathname() ?? ''}${channel.address()}`).toBe('ws://127.0.0.1:3100/ws/agent');
    const ws = channel.bindings().get('ws')!.value() as { headers: { properties: Record<string, { const: string }> } };
    expect(ws.headers.properties['Sec-WebSocket-Protocol']!.const).toBe('cortex.v1');
  });

  it('Modelina generates named TypeScript models that compile under strict and Python models that byte-compile', { timeout: 120_000 }, async () => {
    const { Parser } = require('@asyncapi/parser') as typeof import('@asyncapi/parser');
    const { document } = await new Parser().parse(spec('asyncapi.json'));
    const { TypeScriptGenerator, PythonGenerator } = require('@asyncapi/modelina') as typeof import('@asyncapi/modelina');
    const ts = await new TypeScriptGenerator({ modelType: 'interface', enumType: 'enum' }).generate(document as never);
    const py = await new PythonGenerator().generate(document as never);
    for (const models of [ts, py]) {
      const names = models.map((m) => m.modelName);
      expect(names.filter((n) => /anonymous/i.test(n))).toEqual([]);
      expect(names).toEqual(expect.arrayContaining(['AgentHelloRequest', 'AgentHelloParams', 'LogsPushRequest', 'LogBatchEntry', 'ProbeRequestSuccess', 'Severity']));
    }
    const dir = mkdtempSync(join(tmpdir(), 'cortex-modelina-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'models.ts'), `${ts.map((m) => `export ${m.result}`).join('\n\n')}\n`);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'ES2022', moduleResolution: 'bundler', types: [] }, files: ['models.ts'] }));
    const tsc = spawnSync(process.execPath, [tscBin, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0);

    const imports = [...new Set(py.flatMap((m) => m.dependencies))].sort();
    writeFileSync(join(dir, 'models.py'), `${imports.join('\n')}\n\n${py.map((m) => m.result).join('\n\n')}\n`);
    const pyc = spawnSync('python3', ['-m', 'py_compile', join(dir, 'models.py')], { encoding: 'utf8' });
    expect(pyc.status, pyc.stderr).toBe(0);
  });
});
