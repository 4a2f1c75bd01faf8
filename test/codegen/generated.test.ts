import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as G from '@cortex/agent-protocol';
import type { LogsPushParams, AgentHelloParams, Validator } from '@cortex/agent-protocol';
import { generate } from '../../codegen/generate.js';
import { lintSchema } from '../../codegen/lint.js';
import { hoistEvaluated, markPure } from '../../codegen/emit-validators.js';

const repo = resolve(import.meta.dirname, '..', '..');
const generatedDir = join(repo, 'generated');
const temps: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'cortex-codegen-'));
  temps.push(d);
  return d;
};
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** `node dist/codegen/cli.js ARGS`, without blocking: the drift-check runs of this file go on side by side. */
const cliRuns: Promise<unknown>[] = [];
function codegenCli(args: string[]): Promise<{ status: number | null; stderr: string }> {
  const run = new Promise<{ status: number | null; stderr: string }>((done, fail) => {
    const child = spawn(process.execPath, [join(repo, 'dist/codegen/cli.js'), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', fail);
    child.on('close', (status) => done({ status, stderr }));
  });
  cliRuns.push(run);
  return run;
}

type Vector = { id: string; method: string; target: 'params' | 'result' | 'message'; path: string; message: Record<string, unknown>; expected: { valid: boolean; outcome: string; code?: number } };
const vectors: Vector[] = readdirSync(join(generatedDir, 'vectors')).flatMap((f) => (JSON.parse(readFileSync(join(generatedDir, 'vectors', f), 'utf8')) as { vectors: Vector[] }).vectors);
const methods = G.METHOD_CATALOG;

function validatorFor(v: Vector, part: 'params' | 'result'): Validator {
  const m = methods.find((x) => x.name === v.method)!;
  return (part === 'params' ? m.validateParams : m.validateResult)!;
}

describe('generated validators against the conformance vectors', () => {
  it('has vectors for every method with examples, valid and invalid', () => {
    // one accepted vector per example the contract lists (contract/methods.json)
    const catalog = JSON.parse(readFileSync(join(repo, 'contract', 'methods.json'), 'utf8')) as { methods: { name: string; examples: { file: string }[] }[] };
    const examples = catalog.methods.flatMap((m) => m.examples.map((e) => `${m.name}:${e.file}`));
    expect(vectors.filter((v) => v.expected.valid).length).toBe(examples.length);
    expect(vectors.filter((v) => !v.expected.valid).length).toBeGreaterThan(100);
    for (const mut of ['missing_required', 'extra_property', 'wrong_type', 'below_minimum', 'above_maximum', 'bad_enum', 'bad_pattern', 'bad_format', 'too_many_items', 'too_long']) {
      expect(vectors.some((v) => v.id.endsWith(`/${mut}`)), mut).toBe(true);
    }
  });

  it('accepts every seed example (envelope, params or result, and error data)', () => {
    for (const v of vectors.filter((x) => x.expected.valid)) {
      expect(G.validateJsonRpcMessage(v.message), v.id).toBe(true);
      const m = methods.find((x) => x.name === v.method)!;
      if ('params' in v.message) expect(m.validateParams!(v.message['params']), v.id).toBe(true);
      if ('result' in v.message) expect(m.validateResult!(v.message['result']), v.id).toBe(true);
      if ('error' in v.message) {
        const err = v.message['error'] as { code: number; data?: unknown };
        const info = G.errorInfo(err.code)!;
        expect(info, v.id).toBeDefined();
        const validate = (G as unknown as Record<string, Validator>)[`validate${info.dataType}`]!;
        expect(validate(err.data), v.id).toBe(true);
      }
    }
  });

  it('rejects every derived invalid vector at the path the vector names', () => {
    const invalid = vectors.filter((x) => !x.expected.valid);
    for (const v of invalid) {
      const part = v.target === 'result' ? 'result' : 'params';
      const validate = validatorFor(v, part);
      expect(validate(v.message[part]), v.id).toBe(false);
      const paths = (validate.errors ?? []).map((e) => e.instancePath);
      const issues = G.toIssues(validate.errors);
      // The reported issue is at the varied value, or (missing/extra property) at its parent naming it.
      expect(issues.some((i) => i.path === v.path || v.path.startsWith(i.path + '/') || i.path.startsWith(v.path)), `${v.id}: ${JSON.stringify(paths)}`).toBe(true);
    }
  });

  it('gives the expected outcome per kind: -32602 for requests, -32003 for protocol_version, dropped for notifications', () => {
    const byId = new Map(vectors.map((v) => [v.id, v]));
    expect(byId.get('logs.push/params/entries/0/seq/below_minimum')?.expected).toEqual({ valid: false, outcome: 'error', code: -32602 });
    expect(byId.get('agent.hello/params/protocol_version/above_maximum')?.expected).toEqual({ valid: false, outcome: 'error', code: -32003 });
    expect(byId.get('agent.heartbeat/params/queue_depth/wrong_type')?.expected).toEqual({ valid: false, outcome: 'dropped' });
    expect(byId.get('logs.push/result/up_to_seq/below_minimum')?.expected).toEqual({ valid: false, outcome: 'invalid_result' });
  });

  it('types match validators: a value typed from the seed passes its validator', () => {
    const params: LogsPushParams = {
      seq_start: 42118,
      entries: [
        { seq: 42118, ts: '2026-05-16T19:42:50.123Z', severity: 'info', app_name: 'sshd', process_id: '1431', message: 'Accepted publickey for jmagar from 10.0.0.4', source: 'journald' },
        { seq: 42119, ts: '2026-05-16T19:42:50.501Z', severity: 'warning', message: 'deprecated option foo', source: 'docker:cortex' },
      ],
    };
    expect(G.validateLogsPushParams(params)).toBe(true);
    const hello: AgentHelloParams = {
      protocol_version: 1,
      agent_version: '0.1.0',
      hostname: 'devhost.lan',
      host_id: '2b9a0b3a-7e3c-4d2a-9c0e-9bbf5d3a1f01',
      platform: { os: 'linux', arch: 'x86_64', kernel: '6.6.21', distro: 'Ubuntu 24.04' },
      capabilities: { supported_probes: ['exec.systemctl_status', 'fs.disk_usage'], sources: ['journald', 'docker'], max_batch_entries: 1000, compression: ['zstd'] },
      token: 'c2VjcmV0LXRva2VuLW9wYXF1ZS1iYXNlNjR1cmwtMzJieXRlcw',
      resume_from_seq: 42117,
    };
    expect(G.validateAgentHelloParams(hello)).toBe(true);
    const example = JSON.parse(readFileSync(join(repo, 'contract/examples/logs.push.request.json'), 'utf8')) as { params: unknown };
    expect(example.params).toEqual(params);
  });

  it('checks formats in standalone mode (date-time, uuid)', () => {
    const base = { ts: '2026-05-16T19:42:41.002Z', queue_depth: 0, buffer_bytes: 0 };
    expect(G.validateAgentHeartbeatParams(base)).toBe(true);
    expect(G.validateAgentHeartbeatParams({ ...base, ts: '2026-02-30T10:00:00Z' })).toBe(false);
    expect(G.validateAgentHeartbeatParams({ ...base, ts: 'yesterday' })).toBe(false);
    expect(G.validateAgentHelloResult({ server_version: '1', server_time: '2026-05-16T19:42:11.501Z', accepted_seq: 0, session_id: 'nope', config: { heartbeat_interval_secs: 30, max_batch_entries: 1, flush_interval_ms: 200, probe_concurrency: 1, log_sources: [] } })).toBe(false);
  });

  it('exposes the contract tables: errors with close codes, close codes, limits, state machine', () => {
    expect(G.ErrorCode.TokenRevoked).toBe(-32002);
    expect(G.errorInfo(-32005)?.closeCode).toBe(4001);
    expect(G.errorInfo(-32002)?.closeCode).toBe(4002);
    expect(G.CloseCode.MessageTooBig).toBe(1009);
    expect(G.CLOSE_CODE_TABLE.map((c) => c.code)).toEqual([1000, 1001, 1002, 1003, 1007, 1009, 1011, 1012, 4000, 4001, 4002]);
    expect(G.LIMITS.max_frame_bytes).toBe(1_048_576);
    expect(G.SUBPROTOCOL).toBe('cortex.v1');
    expect(G.nextAgentState('Authenticating', 'token_revoked')).toBe('Revoked');
    expect(G.nextAgentState('Active', 'hello_accepted')).toBeUndefined();
    expect(G.isTerminalState('FatalAuth')).toBe(true);
    const typed = G.errorFromWire({ code: -32011, message: 'ProbeExecutionFailed', data: { stderr: 'x', exit_code: 3 } });
    expect(typed).toBeInstanceOf(G.ProbeExecutionFailedError);
  });
});

describe('codegen', () => {
  // Each CLI run below generates the whole package (seconds of CPU): they are started together
  // here, each on its own input, and each test awaits its own run.
  let drift: { text: string; run: Promise<{ status: number | null; stderr: string }> };
  let committed: Promise<{ status: number | null; stderr: string }>;
  let staleAndMissing: Promise<{ status: number | null; stderr: string }>;
  let refused: Promise<{ status: number | null; stderr: string }>;
  beforeAll(() => {
    // a contract file changed by one character
    // (not a bound limits.json states: a limit and its schema constraint must change together)
    const changed = tmp();
    cpSync(join(repo, 'contract'), changed, { recursive: true });
    const file = join(changed, 'schemas', 'agent.hello.params.json');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('"maxLength": 253', '"maxLength": 254'));
    drift = { text, run: codegenCli(['--check', '--contract', changed]) };
    // the committed tree, and a copy of generated/ with a stale file and a missing one
    committed = codegenCli(['--check']);
    const out = tmp();
    cpSync(generatedDir, out, { recursive: true });
    writeFileSync(join(out, 'stale.txt'), 'x');
    rmSync(join(out, 'PROTOCOL.md'));
    staleAndMissing = codegenCli(['--check', '--out', out]);
    // a contract with a keyword the generators would mishandle
    const bad = tmp();
    cpSync(join(repo, 'contract'), bad, { recursive: true });
    const heartbeat = join(bad, 'schemas', 'agent.heartbeat.params.json');
    const s = JSON.parse(readFileSync(heartbeat, 'utf8')) as Record<string, unknown>;
    s['if'] = { required: ['ts'] };
    writeFileSync(heartbeat, JSON.stringify(s));
    refused = codegenCli(['--check', '--contract', bad]);
  });
  // (a run no test awaited, with -t, still ends before its input is removed)
  afterAll(() => Promise.allSettled(cliRuns));

  it('makes the validator module tree-shakeable: no module-scope assignment to a validator, call initialisers marked pure', async () => {
    const code = 'export const validateA = validate0;\nconst pattern0 = new RegExp("^a$", "u");\nfunction validate0(d){\nconst evaluated0 = validate0.evaluated;\nif(evaluated0.dynamicProps){}\nreturn pattern0.test(d);\n}\nvalidate0.evaluated = {"dynamicProps":false,"dynamicItems":false};\n';
    const hoisted = hoistEvaluated(code);
    expect(hoisted).not.toMatch(/^validate0\.evaluated =/m);
    expect(hoisted).toContain('const evaluated0 = validate0.evaluated || (validate0.evaluated = {"dynamicProps":false,"dynamicItems":false});');
    const mod = (await import(`data:text/javascript,${encodeURIComponent(hoisted)}`)) as Record<string, ((d: unknown) => boolean) & { evaluated?: unknown }>;
    expect(mod['validateA']!('a')).toBe(true);
    expect(mod['validateA']!('b')).toBe(false);
    expect(mod['validateA']!.evaluated).toEqual({ dynamicProps: false, dynamicItems: false });
    expect(() => hoistEvaluated('function validate1(){}\nvalidate1.schema = {};\n')).toThrow(/tree shaking/);
    expect(hoistEvaluated('function validate1(d){\nvalidate1.errors = [];\n}\n')).toContain('validate1.errors = [];');
    expect(markPure('var require_x = __commonJS({\nvar f = require_x().default;\nvar p = new RegExp("a");\nvar q = 1;\n')).toBe(
      'var require_x = /* @__PURE__ */ __commonJS({\nvar f = /* @__PURE__ */ require_x().default;\nvar p = /* @__PURE__ */ new RegExp("a");\nvar q = 1;\n',
    );
  });

  it('is deterministic: two generations give identical bytes', async () => {
    const generatorVersion = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
    const opts = { contractDir: join(repo, 'contract'), runtimeDir: join(repo, 'codegen', 'runtime'), generatorVersion };
    const [a, b] = [await generate(opts), await generate(opts)];
    expect([...a.keys()]).toEqual([...b.keys()]);
    for (const [k, v] of a) expect(b.get(k), k).toBe(v);
  }, 120_000);

  it('starts every generated file with the @generated marker and the do-not-edit header and keeps versions out of it', () => {
    const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? (e.name === 'node_modules' ? [] : walk(join(d, e.name))) : [join(d, e.name)]));
    const files = [...walk(generatedDir), ...walk(join(repo, 'server', 'generated'))];
    expect(files.length).toBeGreaterThan(80);
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      if (f === join(generatedDir, 'LICENSE')) continue; // the licence, verbatim
      // schemas carry it in $comment (after $schema and $id), the rest in their first lines
      const head = f.includes(join('generated', 'schemas')) ? String((JSON.parse(text) as { $comment?: string }).$comment) : text.slice(0, 200);
      expect(head, f).toMatch(/@generated/);
      expect(head, f).toMatch(/Generated from contract\/ by codegen; do not edit/);
      expect(text.slice(0, 300), f).not.toMatch(/\d{4}-\d{2}-\d{2}T|version \d/);
    }
    const manifest = JSON.parse(readFileSync(join(generatedDir, 'manifest.json'), 'utf8')) as { contract_sha256: string; tools: Record<string, string> };
    expect(manifest.contract_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.tools['json-schema-to-typescript']).toBe('16.0.0');
    // the compiler it names is the one package.json pins and the lockfile installs
    const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
    expect(manifest.tools['typescript']).toBe(pkg.devDependencies['typescript']);
    expect(manifest.tools['typescript']).toBe(lock.packages['node_modules/typescript']!.version);
  });

  it('cites only what the package ships: no seed, DESIGN or DECISIONS references, no repository paths but the header', () => {
    const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
    const shipped = walk(generatedDir).filter((f) => !f.endsWith('LICENSE'));
    const offenders: string[] = [];
    for (const f of shipped) {
      const text = readFileSync(f, 'utf8')
        .replaceAll('Generated from contract/ by codegen', '')
        .replaceAll('source: "seed"', '')
        .replaceAll('source: "design"', '')
        .replaceAll('"source": "seed"', '')
        .replaceAll('"source": "design"', '')
        .replaceAll('"seed": a code of the base V1 protocol; "design"', '');
      for (const m of text.matchAll(/\b(seed|Seed|DESIGN|DECISIONS|MEASURED)\b|§|contract\/|[Ss]ection \d/g)) offenders.push(`${f.slice(generatedDir.length + 1)}: ${text.slice(Math.max(0, m.index - 40), m.index + 40).replace(/\n/g, ' ')}`);
    }
    expect(offenders).toEqual([]);
    // every PROTOCOL.md# citation names a heading of PROTOCOL.md
    const protocol = readFileSync(join(generatedDir, 'PROTOCOL.md'), 'utf8');
    const anchors = new Set([...protocol.matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
    const cited = new Set(shipped.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/PROTOCOL\.md#([a-z0-9-]+)/g)].map((m) => m[1]!)));
    expect(cited.size).toBeGreaterThan(5);
    for (const a of cited) expect(anchors, a).toContain(a);
    // every schemas/… citation names a shipped schema (CHANGELOG.md's history may name files of older versions)
    for (const f of shipped.filter((x) => !x.endsWith('CHANGELOG.md'))) for (const m of readFileSync(f, 'utf8').matchAll(/(?<![\w/.])schemas\/([a-z0-9_./-]+\.json)/g)) expect(existsSync(join(generatedDir, 'schemas', m[1]!)), `${f}: ${m[0]}`).toBe(true);
  });

  it('ships wire-protocol schemas only; the server config schema is generated for the server', async () => {
    expect(existsSync(join(generatedDir, 'schemas', 'server-config.json'))).toBe(false);
    expect(Object.keys(G)).not.toContain('validateServerConfig');
    expect(readFileSync(join(generatedDir, 'src', 'types.ts'), 'utf8')).not.toMatch(/\bServerConfig\b/);
    const server = await import('../../server/generated/server-config.js');
    expect(server.SERVER_CONFIG_SCHEMA.$id).toBe((JSON.parse(readFileSync(join(repo, 'contract', 'schemas', 'server-config.json'), 'utf8')) as { $id: string }).$id);
    expect(server.validateServerConfig({ listen: '127.0.0.1:3100', max_batch_entries: 500, retention_days: 0 })).toBe(true);
    expect(server.validateServerConfig({ listen: 'nowhere' })).toBe(false);
    expect(G.toIssues(server.validateServerConfig.errors)[0]!.path).toBe('/listen');
    expect(server.validateServerConfig({ default_agent_config: { heartbeat_interval_secs: 'x' } })).toBe(false);
  });

  it('names error classes without a doubled suffix and keeps the old names as deprecated aliases', () => {
    const exported = Object.keys(G);
    for (const e of G.ERROR_TABLE) {
      const cls = e.name.endsWith('Error') ? e.name : `${e.name}Error`;
      expect(exported, cls).toContain(cls);
      expect(G.errorFromWire({ code: e.code, message: e.name })).toBeInstanceOf((G as unknown as Record<string, new () => Error>)[cls]);
    }
    expect(exported.filter((n) => /ErrorError$/.test(n)).sort()).toEqual(['InternalErrorError', 'ParseErrorError']);
    expect(G.ParseErrorError).toBe(G.ParseError);
    expect(G.InternalErrorError).toBe(G.InternalError);
    expect(new G.InternalError({ reason: 'x' }).name).toBe('InternalError');
    const errorsTs = readFileSync(join(generatedDir, 'src', 'errors.ts'), 'utf8');
    expect(errorsTs).toMatch(/@deprecated Renamed to \{@link ParseError\}[^\n]*\n \*\/\nexport const ParseErrorError = ParseError;/);
  });

  it('keeps internals out of the main entry: they are in @cortex/agent-protocol/runtime (exports map and typesVersions)', async () => {
    const runtime = await import('@cortex/agent-protocol/runtime');
    const main = Object.keys(G);
    for (const name of ['Peer', 'utf8Length', 'summarizeData', 'metadataProblem', 'nestedDeeperThan', 'storableText', 'WIRE_METHODS', 'checkProbeOutput']) {
      expect(main, name).not.toContain(name);
      expect(Object.keys(runtime), name).toContain(name);
    }
    // the public runtime names are in both, the same bindings
    for (const name of ['RpcError', 'PeerError', 'toIssues', 'describeIssues', 'webSocketTransport', 'memoryTransportPair']) expect((runtime as Record<string, unknown>)[name], name).toBe((G as Record<string, unknown>)[name]);
    // every export of the generated modules is in one entry or the other
    for (const mod of ['catalog', 'probes']) {
      const m = (await import(`../../generated/dist/${mod}.js`)) as Record<string, unknown>;
      for (const name of Object.keys(m)) expect(main.includes(name) || Object.keys(runtime).includes(name), `${mod}.${name}`).toBe(true);
    }
    const pkg = JSON.parse(readFileSync(join(generatedDir, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; default: string }>; typesVersions: Record<string, Record<string, string[]>> };
    expect(pkg.exports['./runtime']).toEqual({ types: './dist/runtime.d.ts', default: './dist/runtime.js' });
    expect(pkg.typesVersions['*']!['runtime']).toEqual(['./dist/runtime.d.ts']);
  });

  it('emits no numbered duplicate types and one type per schema', () => {
    const types = readFileSync(join(generatedDir, 'src', 'types.ts'), 'utf8');
    expect(types).not.toMatch(/export (interface|type) [A-Za-z]+\d\b/);
    for (const name of ['AgentHelloParams', 'AgentHelloResult', 'LogBatchEntry', 'AgentConfig', 'Severity', 'ProbeOutput', 'RetryAfterData']) {
      expect(types.match(new RegExp(`export (interface|type) ${name}\\b`, 'g'))?.length, name).toBe(1);
    }
  });

  it('the drift check fails when a contract file changes by one character, listing the files', async () => {
    expect(drift.text).toContain('"maxLength": 253');
    const run = await drift.run;
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('differs: generated/dist/validators.js');
    expect(run.stderr).toContain('differs: generated/manifest.json');
  }, 120_000);

  it('the drift check passes on the committed tree and reports stale and missing files', async () => {
    const ok = await committed;
    expect(ok.status, ok.stderr).toBe(0);
    const run = await staleAndMissing;
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('missing: generated/PROTOCOL.md');
    expect(run.stderr).toContain('stale:   generated/stale.txt');
  }, 120_000);

  it('refuses a contract with a keyword the generators would mishandle (exit 2, naming file and path)', async () => {
    const run = await refused;
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('schemas/agent.heartbeat.params.json at /if: keyword "if" is not allowed');
  }, 120_000);

  it('lint flags each construct the type generator or ajv would silently mishandle', () => {
    const cases: [object, string][] = [
      [{ type: 'array', prefixItems: [{ type: 'string' }] }, 'prefixItems'],
      [{ type: 'object', unevaluatedProperties: false }, 'unevaluatedProperties'],
      [{ type: 'array', unevaluatedItems: false }, 'unevaluatedItems'],
      [{ if: {}, then: {}, else: {} }, '"if"'],
      [{ $dynamicRef: '#meta' }, '$dynamicRef'],
      [{ $anchor: 'x' }, '$anchor'],
      [{ $ref: 'https://example.com/schema.json' }, 'remote $ref'],
      [{ type: 'string', format: 'date-tme' }, 'unknown format'],
      [{ type: 'string', maxLenght: 3 }, 'maxLenght'],
    ];
    for (const [schema, needle] of cases) {
      const problems = lintSchema('x.json', schema);
      expect(problems.map((p) => p.message).join('\n'), needle).toContain(needle);
    }
    expect(lintSchema('ok.json', { type: 'object', properties: { format: { type: 'string', format: 'uuid' } } })).toEqual([]);
  });

  it('keeps the deprecated aliases through 1.x and says so the same way everywhere: removed in the next major version (2.0), not the next minor (DECISIONS F14)', () => {
    const texts = {
      'dist/errors.d.ts': readFileSync(join(generatedDir, 'dist', 'errors.d.ts'), 'utf8'),
      'src/errors.ts': readFileSync(join(generatedDir, 'src', 'errors.ts'), 'utf8'),
      'README.md': readFileSync(join(generatedDir, 'README.md'), 'utf8'),
      'CHANGELOG.md': readFileSync(join(generatedDir, 'CHANGELOG.md'), 'utf8'),
    };
    for (const [file, text] of Object.entries(texts)) {
      expect(text, file).not.toMatch(/(removed|go(es)?|until) in the next minor|until the next minor version/);
      const mentions = text.split('\n').filter((l) => /ParseErrorError|InternalErrorError|@deprecated Renamed/.test(l) && !/^export /.test(l));
      expect(mentions.length, file).toBeGreaterThan(0);
      for (const l of mentions) if (!/^\s*\* @deprecated Renamed to \{@link \w+\} in 1\.3\.0/.test(l) || /removed/.test(l)) expect(l, file).toMatch(/next major version \(2\.0/);
    }
    // the aliases are still exported in this major
    expect(G.ParseErrorError).toBe(G.ParseError);
    expect(G.InternalErrorError).toBe(G.InternalError);
    // the repository's own code uses the new names
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(join(repo, dir), { withFileTypes: true })) {
        const rel = `${dir}/${e.name}`;
        if (e.isDirectory()) walk(rel);
        else if (/\.(ts|mts|mjs|js)$/.test(e.name) && /\b(ParseErrorError|InternalErrorError)\b/.test(readFileSync(join(repo, rel), 'utf8'))) offenders.push(rel);
      }
    };
    for (const dir of ['conformance', 'server', 'agent', 'fleet', 'examples', 'common']) if (existsSync(join(repo, dir))) walk(dir);
    expect(offenders).toEqual([]);
  });

  it("the reference document gives each probe's arguments: name, type, required, bounds, enum (from schemas/probes/<name>.args.json)", () => {
    const doc = readFileSync(join(generatedDir, 'PROTOCOL.md'), 'utf8');
    const probes = doc.slice(doc.indexOf('## Probes'));
    expect(probes).toContain('| probe | summary | args |');
    for (const p of G.PROBES) {
      const args = p.argsSchema as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
      const props = Object.entries(args.properties ?? {});
      const row = probes.split('\n').find((l) => l.startsWith(`| \`${p.name}\` |`));
      expect(row, p.name).toBeDefined();
      const section = probes.slice(probes.indexOf(`#### ${p.name}\n`));
      expect(section.startsWith(`#### ${p.name}\n`), `section of ${p.name}`).toBe(true);
      const body = section.slice(0, section.indexOf('\n#### ', 1) > 0 ? section.indexOf('\n#### ', 1) : undefined);
      if (props.length === 0) {
        expect(row).toContain('none');
        expect(body).toMatch(/No arguments/);
      }
      for (const [name, schema] of props) {
        const required = (args.required ?? []).includes(name);
        expect(row, `${p.name}: ${name} in the table`).toContain(`\`${name}\`${required ? ' (required)' : ''}`);
        const line = body.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
        expect(line, `${p.name}.${name}`).toBeDefined();
        expect(line).toContain(`| ${String(schema['type'])} | ${required ? 'yes' : 'no'} |`);
        for (const k of ['minimum', 'maximum', 'minLength', 'maxLength']) if (schema[k] !== undefined) expect(line, `${p.name}.${name} ${k}`).toContain(`${k} ${String(schema[k])}`);
        if (Array.isArray(schema['enum'])) expect(line).toContain(`one of ${schema['enum'].map((v) => `\`${String(v)}\``).join(', ')}`);
        if (typeof schema['pattern'] === 'string') expect(line).toContain('pattern `');
      }
    }
  });

  it('the README tells how to get the package (not on the registry) and its tiny agent opens the socket as the protocol requires', () => {
    const readme = readFileSync(join(generatedDir, 'README.md'), 'utf8');
    // `npm install @cortex/agent-protocol` fails with E404: never given as the way to install it
    expect(readme).not.toMatch(/^npm install @cortex\/agent-protocol\b/m);
    expect(readme).toMatch(/^npm pack \.\/generated\b/m);
    expect(readme).toMatch(/^npm install \S*cortex-agent-protocol-<version>\.tgz ws$/m);
    expect(readme).toContain('"@cortex/agent-protocol": "file:');
    const sockets = [...readme.matchAll(/new WebSocket\(([^)]*)\)/g)].map((m) => m[1]!);
    expect(sockets.length).toBeGreaterThan(0);
    for (const args of sockets) expect(args).toMatch(/perMessageDeflate: false.*maxPayload: LIMITS\.max_frame_bytes/);
  });

  it('examples/minimal-agent: the same socket options, an install that works without the registry', () => {
    const dir = join(repo, 'examples', 'minimal-agent');
    const agent = readFileSync(join(dir, 'agent.mjs'), 'utf8');
    const sockets = [...agent.matchAll(/new WebSocket\(([^)]*)\)/g)].map((m) => m[1]!);
    expect(sockets.length).toBeGreaterThan(0);
    for (const args of sockets) expect(args).toMatch(/perMessageDeflate: false.*maxPayload: LIMITS\.max_frame_bytes/);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies['@cortex/agent-protocol']).toBe('file:../../generated');
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toMatch(/not published to the npm registry/);
    expect(readme).toMatch(/npm pack \S+\/generated/);
    expect(readme).toMatch(/npm install \.\/cortex-agent-protocol-<version>\.tgz ws/);
  });

  it('the generated reference document covers every method, error code and close code', () => {
    const doc = readFileSync(join(generatedDir, 'PROTOCOL.md'), 'utf8');
    for (const m of methods) expect(doc).toContain(`### ${m.name}`);
    for (const e of G.ERROR_TABLE) expect(doc).toContain(`| ${e.code} | ${e.name} |`);
    for (const c of G.CLOSE_CODE_TABLE) expect(doc).toContain(`| ${c.code} | ${c.name} |`);
  });
});

