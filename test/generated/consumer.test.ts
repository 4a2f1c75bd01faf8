/**
 * The generated package as a third-party author meets it (issue 16): `npm pack` of generated/
 * installed beside `ws` (and the type packages a TypeScript author adds) into an empty
 * project outside the repository; every code snippet of generated/README.md compiled under
 * `strict` and run, the tiny agent against the reference server; subpath types under
 * `moduleResolution: node10`; LogSource as a template-literal type; a bundle with
 * validateLogsPushParams alone measured with esbuild; and a browser bundle running hello,
 * push and ack against the reference server in headless Chromium.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { SERVER_CLI, issueAgentAsync, requireDist, startServer, tokens, type ServerProc } from '../support/procs.js';
import { freePort } from '../support/ports.js';
import { Slots, cliAsync } from '../support/scli-pool.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const tscBin = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const CHROMIUM = '/usr/bin/chromium';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'NODE_OPTIONS' && k !== 'NODE_PATH') env[k] = v;
  return { ...env, ...extra };
}

/** The tests below run side by side (describe.concurrent): at most three of these children at once. */
const children = new Slots(3);
function run(file: string, args: string[], cwd: string, extra: Record<string, string> = {}): Promise<Run> {
  return children.run(
    () =>
      new Promise((done) => {
        execFile(file, args, { cwd, env: childEnv(extra), maxBuffer: 32 * 1024 * 1024, timeout: 60_000 }, (error, stdout, stderr) => {
          done({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
        });
      }),
  );
}
/** `agent tail HOST --json`: the server CLI, without blocking the tests running beside it. */
const tailOf = (hostId: string) => cliAsync(['agent', 'tail', hostId, '--json', '--db', db], { script: SERVER_CLI });
const failed = (what: string, r: Run) => `${what} exited ${r.code}\n${r.stdout}\n${r.stderr}`;

/** The README's code blocks: each starts with `// file: NAME`, which is where the test puts it. */
function readmeSnippets(readme: string): { file: string; code: string }[] {
  const blocks = [...readme.matchAll(/```(ts|js)\n([\s\S]*?)```/g)];
  return blocks.map((m) => {
    const first = /^\/\/ file: (\S+)\n/.exec(m[2]!);
    if (!first) throw new Error(`a README snippet has no "// file: NAME" first line: ${m[2]!.slice(0, 80)}`);
    return { file: first[1]!, code: m[2]! };
  });
}

const STRICT = { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['es2022'], types: ['node'], skipLibCheck: false, noEmitOnError: true };

let work: string;
let project: string;
let server: ServerProc | null = null;
let db: string;

beforeAll(async () => {
  requireDist();
  work = mkdtempSync(join(tmpdir(), 'cortex-consumer-'));
  const packs = join(work, 'packs');
  project = join(work, 'project');
  mkdirSync(packs);
  mkdirSync(project);
  db = join(work, 'server.db');
  // the server starts while npm packs and installs (both settle before any test, or afterAll could miss the server)
  const settled = await Promise.allSettled([installPackage(packs), serve()]);
  for (const r of settled) if (r.status === 'rejected') throw r.reason;
}, 120_000);

async function installPackage(packs: string): Promise<void> {
  // the package, ws, and the types a TypeScript author installs with it; packed from this
  // checkout so the install runs offline
  // (one `npm pack` of the five folders, `npm pack ./generated` as the README says: a tarball each)
  const sources = ['./generated', ...['ws', '@types/ws', '@types/node', 'undici-types'].map((p) => `./node_modules/${p}`)];
  const pack = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packs, ...sources], repoRoot);
  if (pack.code !== 0) throw new Error(failed(`npm pack ${sources.join(' ')}`, pack));
  const packed = JSON.parse(pack.stdout) as { name: string; filename: string }[];
  const tarballs = ['@cortex/agent-protocol', 'ws', '@types/ws', '@types/node', 'undici-types'].map((name) => {
    const info = packed.find((p) => p.name === name);
    if (!info) throw new Error(`npm pack did not pack ${name}:\n${pack.stdout}`);
    return join(packs, info.filename.replace(/^@/, '').replace('/', '-'));
  });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'third-party-agent', version: '0.0.0', private: true, type: 'module' }, null, 2));
  const [pkg, ws, ...types] = tarballs;
  const install = await run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--ignore-scripts', pkg!, ws!], project);
  if (install.code !== 0) throw new Error(failed('npm install', install));
  const dev = await run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--ignore-scripts', '--save-dev', ...types], project);
  if (dev.code !== 0) throw new Error(failed('npm install --save-dev', dev));
}

async function serve(): Promise<void> {
  // A browser sends Origin on its upgrade; the server refuses pages it was not told to allow
  // (DECISIONS H7): the page below is served by the server itself, from this origin.
  port = await freePort();
  server = await startServer(db, ['--allow-origin', `http://127.0.0.1:${port}`], { port });
}

let port = 0;
afterAll(async () => {
  if (server) await server.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

// Side by side: each test has its own folder under the project (readme/, types/, types-bad/), its own host
// on the shared server, and only reads the installed project.
describe.concurrent('@cortex/agent-protocol from npm pack, in an empty project outside the repository', () => {
  it('installs with no runtime dependency but ws; ships LICENSE and CHANGELOG.md; version follows the protocol major', ({ expect }) => {
    expect(relative(repoRoot, project).split(sep)[0]).toBe('..');
    const manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['@cortex/agent-protocol', 'ws']);
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const runtime = Object.entries(lock.packages).filter(([k, v]) => k !== '' && !v.dev).map(([k]) => k).sort();
    expect(runtime).toEqual(['node_modules/@cortex/agent-protocol', 'node_modules/ws']);
    const installed = join(project, 'node_modules', '@cortex', 'agent-protocol');
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(readFileSync(join(installed, 'CHANGELOG.md'), 'utf8')).toContain('## 1.0.0');
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string; engines: { node: string }; type: string };
    expect(pkg.version.split('.')[0]).toBe('1');
    expect(pkg.type).toBe('module');
    // ESM only: the engines range is where require() of an ES module works without a flag
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
  });

  it('every README snippet compiles under strict TypeScript and runs; the tiny agent enrolls, pushes, is acked, closes and exits, then reconnects with its rotated token', { timeout: 120_000 }, async ({ expect }) => {
    const readme = readFileSync(join(project, 'node_modules', '@cortex', 'agent-protocol', 'README.md'), 'utf8');
    const snippets = readmeSnippets(readme);
    expect(snippets.map((s) => s.file).sort()).toEqual(['from-commonjs.cjs', 'runtime.ts', 'tiny-agent.ts', 'validate.ts']);
    const dir = join(project, 'readme');
    mkdirSync(dir, { recursive: true });
    for (const s of snippets) writeFileSync(join(dir, s.file), s.code);
    const tsFiles = snippets.filter((s) => s.file.endsWith('.ts')).map((s) => s.file);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { ...STRICT, outDir: 'out', rootDir: '.' }, files: tsFiles }));
    // the CommonJS snippet is not compiled, and the host is issued meanwhile
    const cjsRun = run(process.execPath, ['from-commonjs.cjs'], dir);
    const issuing = issueAgentAsync(db, 'tiny-agent');
    issuing.catch(() => undefined); // awaited below (a failed compile must not leave it unhandled)
    const tsc = await run(process.execPath, [tscBin, '-p', 'tsconfig.json'], dir);
    expect(tsc.code, failed('tsc (README snippets)', tsc)).toBe(0);

    const [validate, runtime] = await Promise.all([run(process.execPath, ['out/validate.js'], dir), run(process.execPath, ['out/runtime.js'], dir)]);
    expect(validate.code, failed('validate.js', validate)).toBe(0);
    expect(validate.stdout.split('\n')).toEqual(['true', '/seq_start must be integer', '']);

    expect(runtime.code, failed('runtime.js', runtime)).toBe(0);
    expect(runtime.stdout.trim()).toBe('2 undefined');

    const cjs = await cjsRun;
    expect(cjs.code, failed('from-commonjs.cjs', cjs)).toBe(0);
    expect(cjs.stdout.trim()).toBe('1 cortex.v1 1048576');

    const issued = await issuing;
    const env = { SERVER_URL: server!.url, HOST_ID: issued.host_id, TOKEN: issued.token, TOKEN_FILE: join(dir, 'token') };
    const first = await run(process.execPath, ['out/tiny-agent.js'], dir, env);
    expect(first.code, failed('tiny-agent (enroll)', first)).toBe(0);
    expect(first.stdout.trim().split('\n')).toEqual(['acked up to 1', 'closed with 1000']);
    tokens.add(readFileSync(join(dir, 'token'), 'utf8').trim());
    // the one-time token is spent: the second run works only with the rotated one it saved
    const second = await run(process.execPath, ['out/tiny-agent.js'], dir, env);
    expect(second.code, failed('tiny-agent (reconnect)', second)).toBe(0);
    expect(second.stdout.trim().split('\n')).toEqual(['acked up to 2', 'closed with 1000']);

    const tail = await tailOf(issued.host_id);
    expect(tail.code, tail.stderr).toBe(0);
    const rows = JSON.parse(tail.stdout) as { seq: number; message: string; source: string }[];
    expect(rows.map((r) => [r.seq, r.message, r.source])).toEqual([
      [1, 'hello from a tiny agent', 'custom:tiny'],
      [2, 'hello from a tiny agent', 'custom:tiny'],
    ]);
  });

  it('types: subpaths resolve under moduleResolution node10 too; a LogSource of another kind does not compile', { timeout: 180_000 }, async ({ expect }) => {
    const dir = join(project, 'types');
    mkdirSync(dir, { recursive: true });
    const sources = [
      "import type { LogBatchEntry, LogSource } from '@cortex/agent-protocol';",
      "import { validateLogsPushParams } from '@cortex/agent-protocol/validators';",
      "import { utf8Length, type MethodSpec } from '@cortex/agent-protocol/runtime';",
      "export const spec: MethodSpec | undefined = utf8Length('x') === 1 ? undefined : undefined;",
      "const ok: LogSource[] = ['journald', 'file:/var/log/syslog', 'docker:web', 'custom:x'];",
      "// @ts-expect-error: not a source kind of the contract",
      "const wrong: LogSource = 'syslog:/var/log/messages';",
      "const entry: LogBatchEntry = { seq: 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'm', source: ok[0]! };",
      'export const checked: boolean = validateLogsPushParams({ seq_start: 1, entries: [entry] }) && wrong.length > 0;',
      '',
    ].join('\n');
    writeFileSync(join(dir, 'sources.ts'), sources);
    const configs = [
      ['nodenext', { ...STRICT, types: [] }],
      ['node10', { ...STRICT, module: 'ES2022', moduleResolution: 'node10', types: [], ignoreDeprecations: '5.0' }],
      ['bundler', { ...STRICT, module: 'ES2022', moduleResolution: 'bundler', types: [] }],
    ] as const;
    for (const [name, options] of configs) writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions: { ...options, noEmit: true }, files: ['sources.ts'] }));
    // and without the expect-error line, the wrong kind is the one error: the same file in a
    // folder of its own (same name, same nodenext tsconfig), compiled beside the three above
    const badDir = join(project, 'types-bad');
    mkdirSync(badDir, { recursive: true });
    writeFileSync(join(badDir, 'sources.ts'), sources.replace(/\/\/ @ts-expect-error[^\n]*\n/, ''));
    writeFileSync(join(badDir, 'tsconfig.nodenext.json'), readFileSync(join(dir, 'tsconfig.nodenext.json'), 'utf8'));
    const badRun = run(process.execPath, [tscBin, '-p', 'tsconfig.nodenext.json'], badDir);
    const runs = await Promise.all(configs.map(([name]) => run(process.execPath, [tscBin, '-p', `tsconfig.${name}.json`], dir)));
    for (const [i, [name]] of configs.entries()) {
      const tsc = runs[i]!;
      expect(tsc.code, failed(`tsc (${name})`, tsc)).toBe(0);
    }
    const bad = await badRun;
    expect(bad.code).not.toBe(0);
    expect(bad.stdout).toMatch(/sources\.ts\(6,7\): error TS2322: Type '"syslog:\/var\/log\/messages"' is not assignable to type 'LogSource'/);
  });

  it('a bundle with validateLogsPushParams alone is at most 40 KB minified (esbuild), from the root and from /validators', async ({ expect }) => {
    const sizes: Record<string, number> = {};
    for (const from of ['@cortex/agent-protocol', '@cortex/agent-protocol/validators']) {
      const r = await esbuild.build({
        stdin: { contents: `import { validateLogsPushParams } from '${from}';\nglobalThis.v = validateLogsPushParams;\n`, resolveDir: project, loader: 'js' },
        bundle: true,
        minify: true,
        format: 'esm',
        platform: 'browser',
        write: false,
      });
      sizes[from] = r.outputFiles[0]!.contents.byteLength;
    }
    const all = await esbuild.build({
      stdin: { contents: `import * as V from '@cortex/agent-protocol/validators';\nglobalThis.v = V;\n`, resolveDir: project, loader: 'js' },
      bundle: true,
      minify: true,
      format: 'esm',
      write: false,
    });
    console.log(`validateLogsPushParams alone: ${JSON.stringify(sizes)} bytes minified; every validator: ${all.outputFiles[0]!.contents.byteLength}`);
    for (const size of Object.values(sizes)) expect(size).toBeLessThanOrEqual(40 * 1024);
    // and it is tree shaking that makes it small: the whole set is several times larger
    expect(all.outputFiles[0]!.contents.byteLength).toBeGreaterThan(4 * Math.max(...Object.values(sizes)));
  });

  it('the browser bundle runs hello, a push and its ack against the reference server in headless Chromium', { timeout: 90_000 }, async ({ expect }) => {
    if (!existsSync(CHROMIUM)) {
      if (process.env['CI'] === 'true') throw new Error(`${CHROMIUM} is missing: .ci/run installs it (apt-get install chromium)`);
      console.log(`${CHROMIUM} not found: browser test not run (apt-get install chromium)`);
      return;
    }
    const source = `
import { AgentClient, SUBPROTOCOL, createAgentPeer, registerAgentHandlers, webSocketTransport } from '@cortex/agent-protocol';
globalThis.runAgent = async (url, hostId, token) => {
  const ws = new WebSocket(url, SUBPROTOCOL);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error('websocket error')); });
  const peer = createAgentPeer(webSocketTransport(ws));
  const agent = new AgentClient(peer);
  registerAgentHandlers(peer, { 'config.update': () => undefined, 'agent.shutdown': () => undefined });
  const closed = new Promise((resolve) => peer.onClose((code) => resolve(code)));
  const hello = await agent.agentHello({
    protocol_version: 1, agent_version: '0.1.0', hostname: 'browser', host_id: hostId,
    platform: { os: 'browser', arch: 'wasm', kernel: navigator.userAgent.slice(0, 60), distro: null },
    capabilities: { supported_probes: [], sources: ['custom'], max_batch_entries: 10, compression: [] },
    token, resume_from_seq: 0,
  });
  const seq = hello.accepted_seq + 1;
  const ack = await agent.logsPush({ seq_start: seq, entries: [{ seq, ts: new Date().toISOString(), severity: 'notice', message: 'hello from chromium', source: 'custom:browser' }] });
  peer.close(1000, 'final_seq=' + ack.up_to_seq);
  return { rotated: typeof hello.rotated_token === 'string', upTo: ack.up_to_seq, closed: await closed };
};`;
    const issuing = issueAgentAsync(db, 'chromium');
    issuing.catch(() => undefined); // awaited below, once the page is ready
    const bundle = await esbuild.build({ stdin: { contents: source, resolveDir: project, loader: 'js' }, bundle: true, minify: true, format: 'iife', platform: 'browser', write: false });
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`http://127.0.0.1:${port}/healthz`);
      await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
      const issued = await issuing;
      const result = await page.evaluate(
        ([url, hostId, token]) => (globalThis as unknown as { runAgent: (u: string, h: string, t: string) => Promise<unknown> }).runAgent(url, hostId, token),
        [server!.url, issued.host_id, issued.token] as const,
      );
      expect(errors).toEqual([]);
      expect(result).toEqual({ rotated: true, upTo: 1, closed: 1000 });
      const tail = await tailOf(issued.host_id);
      expect((JSON.parse(tail.stdout) as { message: string }[]).map((r) => r.message)).toEqual(['hello from chromium']);
    } finally {
      await browser.close();
    }
  });
});
