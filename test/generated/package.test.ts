/**
 * The packed package works on its own: `npm pack` generated/, install the tarball (offline) into
 * a scratch ESM project outside the repository, type-check a strict TypeScript client against
 * its .d.ts with the repo's tsc, and run plain ESM (no loader, no ajv installed) that validates
 * a seed example and makes a logs.push call between an agent and a server peer.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const generatedDir = join(repoRoot, 'generated');
const tscBin = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const npmCli = process.platform === 'win32' ? 'npm.cmd' : 'npm';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment for child processes: without the npm_* variables of an enclosing `npm test`. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'NODE_OPTIONS') env[k] = v;
  return env;
}

function run(file: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    execFile(file, args, { cwd, env: childEnv(), maxBuffer: 32 * 1024 * 1024, timeout: 45_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

const failed = (what: string, r: Run) => `${what} exited ${r.code}\n${r.stdout}\n${r.stderr}`;

// ---------------------------------------------------------------------------------------------
// Files of the scratch project

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['es2022', 'dom'],
    types: [],
    skipLibCheck: false,
    noEmitOnError: true,
    outDir: 'out',
  },
  files: ['client.ts'],
};

/** A tiny typed client: compiled with strict settings, then run. */
const CLIENT_TS = `
import {
  AgentClient,
  createAgentPeer,
  createServerPeer,
  memoryTransportPair,
  registerServerHandlers,
  validateLogsPushParams,
  SUBPROTOCOL,
  type LogsPushParams,
  type LogsPushResult,
} from '@cortex/agent-protocol';

const params: LogsPushParams = {
  seq_start: 7,
  entries: [{ seq: 7, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'hello', source: 'journald' }],
};
// @ts-expect-error severity is the Severity enum, not any string
const wrong: LogsPushParams = { seq_start: 1, entries: [{ seq: 1, ts: 'x', severity: 'loud', message: 'm', source: 'journald' }] };
void wrong;

const [agentSide, serverSide] = memoryTransportPair();
const agent = new AgentClient(createAgentPeer(agentSide));
const server = createServerPeer(serverSide);
registerServerHandlers(server, {
  'logs.push': (p) => ({ up_to_seq: p.seq_start + p.entries.length - 1 }),
});

const result: LogsPushResult = await agent.logsPush(params);
const upTo: number = result.up_to_seq;
// A notification has nothing to await.
const nothing: void = agent.agentHeartbeat({ ts: '2026-05-16T19:42:41.002Z', queue_depth: 0, buffer_bytes: 0 });
void nothing;
// Typed by method name: the agent cannot send probe.request (not called, only type-checked).
export const notAllowed = () =>
  // @ts-expect-error the agent does not send probe.request
  agent.peer.request('probe.request', { probe: 'x', args: {}, timeout_ms: 1 });

const input: unknown = JSON.parse(JSON.stringify(params));
const narrowed: number = validateLogsPushParams(input) ? input.seq_start : -1;
agent.peer.close(1000, 'done');
console.log(JSON.stringify({ client: 'ts', subprotocol: SUBPROTOCOL, upTo, narrowed }));
`;

/** A mistyped call: up_to_seq is a number. Must not compile. */
const BAD_TS =
  `import { AgentClient } from '@cortex/agent-protocol';\n` +
  `export async function f(c: AgentClient): Promise<string> {\n` +
  `  return (await c.logsPush({ seq_start: 1, entries: [{ seq: 1, ts: 't', severity: 'info', message: 'm', source: 'journald' }] })).up_to_seq;\n` +
  `}\n`;

/** Plain ESM, no loader, no TypeScript. Prints one JSON line. */
const MAIN_MJS = `
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  AgentClient,
  createAgentPeer,
  createServerPeer,
  memoryTransportPair,
  registerServerHandlers,
  validateLogsPushParams,
} from '@cortex/agent-protocol';
import * as validators from '@cortex/agent-protocol/validators';

const out = {};
try {
  createRequire(import.meta.url).resolve('ajv');
  out.ajv = 'resolvable';
} catch {
  out.ajv = 'absent';
}

// The seed example of logs.push (contract/examples/logs.push.request.json), params only.
const example = JSON.parse(readFileSync(new URL('./logs.push.request.json', import.meta.url), 'utf8'));
out.exampleValid = validateLogsPushParams(example.params);
out.sameValidator = validators.validateLogsPushParams === validateLogsPushParams;
const bad = structuredClone(example.params);
bad.entries[1].severity = 'loud';
out.badValid = validateLogsPushParams(bad);
out.badPath = validateLogsPushParams.errors?.[0]?.instancePath;

const [agentSide, serverSide] = memoryTransportPair();
const agentPeer = createAgentPeer(agentSide);
const serverPeer = createServerPeer(serverSide);
const received = [];
registerServerHandlers(serverPeer, {
  'logs.push': (params) => {
    received.push(...params.entries.map((e) => e.seq));
    return { up_to_seq: params.entries[params.entries.length - 1].seq, received_at: '2026-05-16T19:42:50.612Z' };
  },
});
out.result = await new AgentClient(agentPeer).logsPush(example.params);
out.received = received;
agentPeer.close(1000, 'done');
console.log(JSON.stringify(out));
`;

// ---------------------------------------------------------------------------------------------

let work: string;
let scratch: string;
let packedFiles: string[] = [];
let installDir: string;
/** The two compiles (the client; the mistyped call), started side by side once the package is installed. */
let clientTsc: Promise<Run>;
let badTsc: Promise<Run>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'cortex-pack-'));
  const packDir = join(work, 'pack');
  scratch = join(work, 'scratch');
  mkdirSync(packDir);
  mkdirSync(scratch);

  const pack = await run(npmCli, ['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], generatedDir);
  if (pack.code !== 0) throw new Error(failed('npm pack', pack));
  const info = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
  packedFiles = info[0]!.files.map((f) => f.path);
  const tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz'))!);

  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch-client', version: '0.0.0', private: true, type: 'module' }, null, 2));
  const install = await run(npmCli, ['install', '--no-audit', '--no-fund', '--offline', '--ignore-scripts', tarball], scratch);
  if (install.code !== 0) throw new Error(failed('npm install', install));
  installDir = join(scratch, 'node_modules', '@cortex', 'agent-protocol');

  writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  writeFileSync(join(scratch, 'client.ts'), CLIENT_TS);
  writeFileSync(join(scratch, 'main.mjs'), MAIN_MJS);
  copyFileSync(join(repoRoot, 'contract', 'examples', 'logs.push.request.json'), join(scratch, 'logs.push.request.json'));
  writeFileSync(join(scratch, 'bad.ts'), BAD_TS);
  writeFileSync(join(scratch, 'tsconfig.bad.json'), JSON.stringify({ ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, noEmit: true }, files: ['bad.ts'] }));
  clientTsc = run(process.execPath, [tscBin, '-p', 'tsconfig.json'], scratch);
  badTsc = run(process.execPath, [tscBin, '-p', 'tsconfig.bad.json'], scratch);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([clientTsc, badTsc]);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('packed @cortex/agent-protocol in a scratch project outside the repo', () => {
  it('is outside the repository and has no ajv or other dependencies installed', () => {
    expect(relative(repoRoot, scratch).split(sep)[0]).toBe('..');
    expect(readdirSync(join(scratch, 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual(['@cortex']);
    expect(readdirSync(join(scratch, 'node_modules', '@cortex'))).toEqual(['agent-protocol']);
  });

  it('packs dist (.js + .d.ts), README and package.json, and no sources', () => {
    for (const f of ['dist/index.js', 'dist/index.d.ts', 'dist/validators.js', 'dist/validators.d.ts', 'README.md', 'package.json']) {
      expect(packedFiles).toContain(f);
    }
    expect(packedFiles.filter((f) => f.startsWith('src/') || f.includes('/src/'))).toEqual([]);
    expect(packedFiles.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  });

  it('type-checks a strict TypeScript client (NodeNext, lib es2022+dom, no @types) and runs it', { timeout: 60_000 }, async () => {
    const tsc = await clientTsc;
    expect(tsc.code, failed('tsc', tsc)).toBe(0);
    const client = await run(process.execPath, ['out/client.js'], scratch);
    expect(client.code, failed('node out/client.js', client)).toBe(0);
    expect(JSON.parse(client.stdout.trim())).toEqual({ client: 'ts', subprotocol: 'cortex.v1', upTo: 7, narrowed: 7 });
  });

  it('rejects a mistyped call at compile time', { timeout: 60_000 }, async () => {
    const tsc = await badTsc;
    expect(tsc.code).not.toBe(0);
    expect(tsc.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^bad\.ts\(3,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/)]);
  });

  it('runs as plain ESM: validates the seed example and answers logs.push between two peers', { timeout: 30_000 }, async () => {
    const main = await run(process.execPath, ['main.mjs'], scratch);
    expect(main.code, failed('node main.mjs', main)).toBe(0);
    expect(main.stderr).toBe('');
    expect(JSON.parse(main.stdout.trim())).toEqual({
      ajv: 'absent',
      exampleValid: true,
      sameValidator: true,
      badValid: false,
      badPath: '/entries/1/severity',
      result: { up_to_seq: 42119, received_at: '2026-05-16T19:42:50.612Z' },
      received: [42118, 42119],
    });
  });

  it('ships validators with their ajv runtime bundled: no require() call anywhere in dist', () => {
    const calls: string[] = [];
    const jsFiles = packedFiles.filter((f) => f.startsWith('dist/') && f.endsWith('.js'));
    expect(jsFiles).toContain('dist/validators.js');
    for (const file of jsFiles) {
      const text = readFileSync(join(installDir, file), 'utf8');
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.JS);
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require') {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
          calls.push(`${file}:${line + 1}: ${node.getText(source).slice(0, 80)}`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
      expect(text).not.toMatch(/\bcreateRequire\b/);
      expect(text).not.toMatch(/from\s+["']ajv(?:-formats)?(?:\/[^"']*)?["']/);
    }
    expect(calls).toEqual([]);
    // The check itself finds a real call (and ignores one inside a string).
    const probe = ts.createSourceFile('p.js', 'const a = "require(\'x\')"; const b = require("y");', ts.ScriptTarget.ES2022, false, ts.ScriptKind.JS);
    let found = 0;
    const count = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'require') found++;
      ts.forEachChild(node, count);
    };
    count(probe);
    expect(found).toBe(1);
  });
});
