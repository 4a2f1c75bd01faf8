/**
 * The whole generation, in memory: contract/ → a map of generated/ files (relative path →
 * content). Deterministic: the same contract and tool versions give the same bytes.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { loadContract, ContractError } from './contract.js';
import { lintContract } from './lint.js';
import { collectNamedSchemas } from './bundle.js';
import { emitTypes } from './emit-types.js';
import { createAjv, emitValidators, validatorExports } from './emit-validators.js';
import { emitCatalog, emitConstants, emitErrors, emitProbes, emitStateMachine } from './emit-code.js';
import { emitStubs } from './emit-stubs.js';
import { emitVectors } from './emit-vectors.js';
import { emitDocs } from './emit-docs.js';
import { compileGenerated, compilerVersion } from './compile.js';
import { TS_HEADER, MD_HEADER, JSON_HEADER_VALUE, jsonWithHeader } from './header.js';
import { packageJson, packageReadme } from './emit-package.js';
import { emitAsyncApi, emitOpenRpc } from './emit-spec.js';
import { contractSha256, currentRelease, renderChangelog } from './release.js';

export const PACKAGE_NAME = '@cortex/agent-protocol';

export interface GenerateOptions {
  contractDir: string;
  runtimeDir: string;
  /** Version of the generator, recorded in manifest.json (the toolkit's package version). */
  generatorVersion: string;
  /** The package's LICENSE (default: LICENSE beside contractDir). */
  licenseFile?: string;
}

const require = createRequire(import.meta.url);
const toolVersion = (name: string) => (require(`${name}/package.json`) as { version: string }).version;

export async function generate(opts: GenerateOptions): Promise<Map<string, string>> {
  const contract = loadContract(opts.contractDir);
  const lint = lintContract(contract);
  if (lint.length > 0) throw new ContractError(lint.map((p) => `${p.file}${p.path ? ` at ${p.path}` : ''}: ${p.message}`));
  const release = currentRelease(contract, opts.contractDir);
  const named = collectNamedSchemas(contract);
  const exportsList = validatorExports(named);
  const files = new Map<string, string>();
  const src = new Map<string, string>();

  src.set('src/types.ts', TS_HEADER + (await emitTypes(named)));
  const validators = await emitValidators(contract, exportsList);
  src.set('src/validators.d.ts', TS_HEADER + validators.dts);
  src.set('src/catalog.ts', TS_HEADER + emitCatalog(contract, named));
  src.set('src/errors.ts', TS_HEADER + emitErrors(contract));
  src.set('src/constants.ts', TS_HEADER + emitConstants(contract));
  src.set('src/state-machine.ts', TS_HEADER + emitStateMachine(contract));
  src.set('src/probes.ts', TS_HEADER + emitProbes(contract, named));
  src.set('src/client.ts', TS_HEADER + emitStubs(contract, named));
  for (const f of readdirSync(opts.runtimeDir).filter((f) => f.endsWith('.ts')).sort()) {
    src.set(`src/runtime/${f}`, TS_HEADER + readFileSync(join(opts.runtimeDir, f), 'utf8'));
  }
  src.set(
    'src/index.ts',
    TS_HEADER +
      ['types', 'validators', 'catalog', 'errors', 'constants', 'state-machine', 'probes', 'client', 'runtime/peer', 'runtime/errors', 'runtime/transport', 'runtime/entry-guard']
        .map((m) => `export * from './${m}.js';`)
        .join('\n') +
      '\n',
  );
  for (const [k, v] of src) files.set(k, v);
  const compiled = compileGenerated(src, (rel) => (rel.endsWith('.map') ? '' : TS_HEADER));
  for (const [k, v] of compiled) files.set(k, v);
  files.set('dist/validators.js', TS_HEADER + validators.js);
  files.set('dist/validators.d.ts', TS_HEADER + validators.dts);

  // Conformance vectors, one file per method.
  const vectors = emitVectors(contract, named, createAjv(contract, false));
  for (const [method, list] of vectors) files.set(`vectors/${method}.json`, jsonWithHeader({ method, vectors: list }));

  // The contract's schemas, for generators in other languages.
  for (const [f, s] of contract.schemas) files.set(`schemas/${f}`, JSON.stringify(s, null, 2) + '\n');
  for (const p of contract.probes) {
    files.set(`schemas/probes/${p.name}.args.json`, JSON.stringify(p.args, null, 2) + '\n');
    files.set(`schemas/probes/${p.name}.output.json`, JSON.stringify(p.output, null, 2) + '\n');
  }

  files.set('PROTOCOL.md', emitDocs(contract, named));
  // Both formats allow only x- extensions at the top level: the header goes there.
  const specHeader = { 'x-generated': JSON_HEADER_VALUE };
  files.set('spec/openrpc.json', JSON.stringify({ ...specHeader, ...emitOpenRpc(contract, named) }, null, 2) + '\n');
  files.set('spec/openrpc.agent-to-server.json', JSON.stringify({ ...specHeader, ...emitOpenRpc(contract, named, 'agent_to_server') }, null, 2) + '\n');
  files.set('spec/openrpc.server-to-agent.json', JSON.stringify({ ...specHeader, ...emitOpenRpc(contract, named, 'server_to_agent') }, null, 2) + '\n');
  files.set('spec/asyncapi.json', JSON.stringify({ ...specHeader, ...emitAsyncApi(contract, named) }, null, 2) + '\n');
  files.set('README.md', MD_HEADER + packageReadme(PACKAGE_NAME));
  files.set('package.json', packageJson(PACKAGE_NAME, release.version));
  files.set('CHANGELOG.md', MD_HEADER + renderChangelog(PACKAGE_NAME, release.releases, release.stale));
  files.set('LICENSE', readFileSync(opts.licenseFile ?? join(opts.contractDir, '..', 'LICENSE'), 'utf8'));

  const runtimeHash = createHash('sha256');
  for (const [rel, text] of [...src].filter(([k]) => k.startsWith('src/runtime/')).sort(([a], [b]) => (a < b ? -1 : 1))) runtimeHash.update(`${rel}\0${text}\0`);
  files.set(
    'manifest.json',
    jsonWithHeader({
      package: PACKAGE_NAME,
      generator: { name: 'cortex-codegen', version: opts.generatorVersion },
      tools: { ...Object.fromEntries(['json-schema-to-typescript', 'ajv', 'ajv-formats', 'esbuild', 'ts-morph'].map((t) => [t, toolVersion(t)])), typescript: compilerVersion },
      contract_sha256: contractSha256(contract),
      runtime_sha256: runtimeHash.digest('hex'),
      files: [...files.keys()].sort(),
    }),
  );
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)));
}
