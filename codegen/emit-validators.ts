/**
 * Precompiled validators: ajv standalone code, bundled by esbuild into one pure ES module
 * with no `require` and no schema compilation at run time (ajv's ESM standalone output still
 * calls require() for its runtime helpers and formats; bundling inlines them).
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';
import addFormats from 'ajv-formats';
import * as esbuild from 'esbuild';
import type { Contract, JsonSchema } from './contract.js';
import type { NamedSchema } from './bundle.js';

export interface ValidatorExport {
  /** Export name, e.g. validateLogsPushParams. */
  name: string;
  /** The type it narrows to. */
  type: string;
  ajvRef: string;
}

/** An ajv instance with every contract schema added (also used by benchmarks and tests). */
export function createAjv(contract: Contract, forStandalone: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    strict: true,
    allowUnionTypes: true,
    allErrors: false,
    ...(forStandalone ? { code: { source: true, esm: true, lines: true } } : {}),
  });
  addFormats.default(ajv);
  for (const s of contract.schemas.values()) ajv.addSchema(s as JsonSchema & object);
  for (const p of contract.probes) {
    ajv.addSchema(p.args);
    ajv.addSchema(p.output);
  }
  return ajv;
}

export function validatorExports(named: NamedSchema[]): ValidatorExport[] {
  return named.map((n) => ({ name: `validate${n.name}`, type: n.name, ajvRef: n.ajvRef }));
}

export async function emitValidators(contract: Contract, exports: ValidatorExport[]): Promise<{ js: string; dts: string }> {
  const ajv = createAjv(contract, true);
  const mapping = Object.fromEntries(exports.map((e) => [e.name, e.ajvRef]));
  const code = standaloneCode.default(ajv, mapping);
  // Resolve ajv's runtime modules from where codegen found ajv itself.
  const require = createRequire(import.meta.url);
  const resolveDir = dirname(dirname(dirname(require.resolve('ajv/package.json'))));
  const result = await esbuild.build({
    stdin: { contents: code, resolveDir, loader: 'js', sourcefile: 'validators.js' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    legalComments: 'inline',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const bundled = result.outputFiles[0]!.text
    // esbuild names bundled modules by path; keep paths free of the machine's layout.
    .replace(/\/\/ (?:\.\.\/)*node_modules\//g, '// node_modules/')
    .replace(/"(?:\.\.\/)*node_modules\//g, '"node_modules/');
  const js = wrapInFunctionScope(bundled);
  // A require( call (not one inside a string literal) would break pure ESM consumers.
  if (/(?<!["'\w.])require\(/.test(js)) throw new Error('bundled validators still call require(); check the esbuild bundle');
  const dts = [
    "import type { Validator } from './runtime/peer.js';",
    "import type * as T from './types.js';",
    '',
    ...exports.map((e) => `/** Validates a {@link T.${e.type}}. On failure \`errors\` lists what failed. */\nexport declare const ${e.name}: Validator<T.${e.type}>;`),
    '',
  ].join('\n');
  return { js, dts };
}

/**
 * Moves the bundle's module-scope code into one function and exports what it returns. V8
 * reaches module-scope bindings (the schemas, patterns and format functions every validator
 * refers to) more slowly than closure bindings: validating a 1000-entry logs.push was ~4%
 * slower than the same code compiled by ajv at run time, and ~1.0x once wrapped
 * (`npm run bench -- validators`). Still a plain ES module with named exports.
 */
export function wrapInFunctionScope(bundled: string): string {
  const m = /\nexport \{([^}]*)\};\s*$/.exec(bundled);
  if (m === null) throw new Error('bundled validators: expected one export list at the end of the esbuild output');
  const names = m[1]!
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const [local, exported = local] = s.split(/\s+as\s+/) as [string, string?];
      return { local, exported };
    });
  return [
    'const __cortexValidators = (() => {',
    bundled.slice(0, m.index),
    `return { ${names.map((n) => (n.local === n.exported ? n.local : `${n.exported}: ${n.local}`)).join(', ')} };`,
    '})();',
    ...names.map((n) => `export const ${n.exported} = __cortexValidators.${n.exported};`),
    '',
  ].join('\n');
}
