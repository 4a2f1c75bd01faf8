/**
 * The whole generation, in memory: contract/ → a map of generated/ files (relative path →
 * content). Deterministic: the same contract and tool versions give the same bytes.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { loadContract, type Contract } from './contract.js';
import { checkContract } from './contract-check.js';
import { collectNamedSchemas } from './bundle.js';
import { emitTypes } from './emit-types.js';
import { createAjv, emitValidators, validatorExports } from './emit-validators.js';
import { emitCatalog, emitConstants, emitErrors, emitProbes, emitStateMachine } from './emit-code.js';
import { emitStubs } from './emit-stubs.js';
import { emitVectors } from './emit-vectors.js';
import { emitDocs } from './emit-docs.js';
import { compileGenerated, compilerVersion } from './compile.js';
import { TS_HEADER, MD_HEADER, JSON_HEADER_VALUE, jsonWithHeader, schemaWithHeader } from './header.js';
import { emitMainEntry, emitRuntimeEntry } from './emit-entries.js';
import { secretFields } from './secrets.js';
import { packageJson, packageReadme, protocolNames } from './emit-package.js';
import { SERVER_ONLY_SCHEMAS, emitServerFiles } from './emit-server.js';

export { SERVER_GENERATED_DIR } from './emit-server.js';
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

/** The contract as the wire package sees it: without the server-only schemas. */
export function wireContract(contract: Contract): Contract {
  return { ...contract, schemas: new Map([...contract.schemas].filter(([f]) => !SERVER_ONLY_SCHEMAS.has(f))) };
}

/** The server's generated files (server/generated/, relative path → content). */
export async function generateServer(opts: Pick<GenerateOptions, 'contractDir'>): Promise<Map<string, string>> {
  return emitServerFiles(loadContract(opts.contractDir));
}

export async function generate(opts: GenerateOptions): Promise<Map<string, string>> {
  const contract = loadContract(opts.contractDir);
  checkContract(contract);
  const release = currentRelease(contract, opts.contractDir);
  const protocol = protocolNames(contract.limits);
  const wire = wireContract(contract);
  const named = collectNamedSchemas(wire);
  const exportsList = validatorExports(named);
  const files = new Map<string, string>();
  const src = new Map<string, string>();

  src.set('src/types.ts', TS_HEADER + (await emitTypes(named)));
  const validators = await emitValidators(wire, exportsList);
  src.set('src/validators.d.ts', TS_HEADER + validators.dts);
  src.set('src/catalog.ts', TS_HEADER + emitCatalog(wire, named));
  src.set('src/errors.ts', TS_HEADER + emitErrors(wire));
  src.set('src/constants.ts', TS_HEADER + emitConstants(wire, secretFields(contract)));
  src.set('src/state-machine.ts', TS_HEADER + emitStateMachine(wire));
  src.set('src/probes.ts', TS_HEADER + emitProbes(wire, named));
  src.set('src/client.ts', TS_HEADER + emitStubs(wire, named));
  for (const f of readdirSync(opts.runtimeDir).filter((f) => f.endsWith('.ts')).sort()) {
    src.set(`src/runtime/${f}`, TS_HEADER + readFileSync(join(opts.runtimeDir, f), 'utf8'));
  }
  src.set('src/index.ts', TS_HEADER + emitMainEntry(protocol.version));
  src.set('src/runtime.ts', TS_HEADER + emitRuntimeEntry());
  for (const [k, v] of src) files.set(k, v);
  const compiled = compileGenerated(src, (rel) => (rel.endsWith('.map') ? '' : TS_HEADER));
  for (const [k, v] of compiled) files.set(k, v);
  files.set('dist/validators.js', TS_HEADER + validators.js);
  files.set('dist/validators.d.ts', TS_HEADER + validators.dts);

  // Conformance vectors, one file per method.
  const vectors = emitVectors(wire, named, createAjv(wire, false));
  for (const [method, list] of vectors) files.set(`vectors/${method}.json`, jsonWithHeader({ method, vectors: list }));

  // The contract's wire-protocol schemas, for generators in other languages (the server's own
  // settings schema is not part of the protocol: generateServer writes it for the server).
  for (const [f, s] of wire.schemas) files.set(`schemas/${f}`, schemaWithHeader(s));
  for (const p of wire.probes) {
    files.set(`schemas/probes/${p.name}.args.json`, schemaWithHeader(p.args));
    files.set(`schemas/probes/${p.name}.output.json`, schemaWithHeader(p.output));
  }

  files.set('PROTOCOL.md', emitDocs(wire, named));
  // Both formats allow only x- extensions at the top level: the header goes there.
  const specHeader = { 'x-generated': JSON_HEADER_VALUE };
  files.set('spec/openrpc.json', JSON.stringify({ ...specHeader, ...emitOpenRpc(wire, named) }, null, 2) + '\n');
  files.set('spec/openrpc.agent-to-server.json', JSON.stringify({ ...specHeader, ...emitOpenRpc(wire, named, 'agent_to_server') }, null, 2) + '\n');
  files.set('spec/openrpc.server-to-agent.json', JSON.stringify({ ...specHeader, ...emitOpenRpc(wire, named, 'server_to_agent') }, null, 2) + '\n');
  files.set('spec/asyncapi.json', JSON.stringify({ ...specHeader, ...emitAsyncApi(wire, named) }, null, 2) + '\n');
  files.set('README.md', MD_HEADER + packageReadme(PACKAGE_NAME, protocol));
  files.set('package.json', packageJson(PACKAGE_NAME, release.version, protocol));
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
