#!/usr/bin/env node
// Stryker's build command for `npm run conformance:mutants`: instead of a full `tsc -b` of the
// sandbox (a minute or more on the shared machine, per side), the sandbox gets the project's
// pre-built dist/ (npm run conformance:mutants builds it first) and only the instrumented files
// are transpiled over it with esbuild (no type check: Stryker's instrumented code is
// `// @ts-nocheck` anyway). `node build-mutated.mjs FILE.ts…`, run in the sandbox.
//   server/ws/connection.ts → dist/server/ws/connection.js  (outDir ../dist/<project>)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write('build-mutated: no files given\n');
  process.exit(2);
}
// Which file each mutant id is in (run-server.mjs / run-agent.mjs pick the module's cases by it).
const mutants = {};
for (const file of files) {
  const out = `dist/${file.replace(/\.ts$/, '.js')}`;
  if (!existsSync(out)) {
    process.stderr.write(`build-mutated: ${out} is missing: build the project first (npm run build)\n`);
    process.exit(1);
  }
  const source = readFileSync(file, 'utf8');
  for (const m of source.matchAll(/stryMutAct_9fa48\("(\d+)"\)/g)) mutants[m[1]] = file;
  const { code } = transformSync(source, {
    loader: 'ts',
    format: 'esm',
    platform: 'node',
    target: 'es2022',
    sourcefile: file,
    // As tsc does for target ES2022 (tsconfig.base.json): class fields are define semantics.
    tsconfigRaw: { compilerOptions: { useDefineForClassFields: true } },
  });
  writeFileSync(out, code);
}
writeFileSync('dist/mutants.json', `${JSON.stringify(mutants)}\n`);
process.stdout.write(`build-mutated: ${files.length} file(s) transpiled into dist/, ${Object.keys(mutants).length} mutants\n`);
