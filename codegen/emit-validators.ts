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
import { HOT_VALIDATORS, emitFastChecks } from './emit-fast-validators.js';

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

/**
 * Bundles ajv standalone code into one ES module (esbuild: ajv's runtime helpers inlined, no
 * require, no ajv at run time) and marks its factories pure. Used for the package's validators
 * and for the server's own (emit-server.ts).
 */
export async function bundleStandalone(code: string, sourcefile: string): Promise<string> {
  // Resolve ajv's runtime modules from where codegen found ajv itself.
  const require = createRequire(import.meta.url);
  const resolveDir = dirname(dirname(dirname(require.resolve('ajv/package.json'))));
  const result = await esbuild.build({
    stdin: { contents: code, resolveDir, loader: 'js', sourcefile },
    // Paths in the bundle's module comments are relative to this: the folder holding
    // node_modules/, wherever it physically is (a symlinked node_modules resolves elsewhere).
    absWorkingDir: resolveDir,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    legalComments: 'inline',
    charset: 'utf8',
    logLevel: 'silent',
  });
  const bundled = normaliseModulePaths(result.outputFiles[0]!.text);
  const js = markPure(bundled);
  // A require( call (not one inside a string literal) would break pure ESM consumers.
  if (/(?<!["'\w.])require\(/.test(js)) throw new Error(`bundled ${sourcefile} still calls require(); check the esbuild bundle`);
  return js;
}

/**
 * esbuild names bundled modules by path (`// node_modules/ajv/dist/runtime/ucs2length.js`, and
 * in `__commonJS({ "node_modules/…"(exports) {…} })` keys). Whatever precedes the first
 * `node_modules/` of such a path (`../../`, `../../../work/main/`, an absolute path) depends on
 * where the tree physically lives, so it goes: the output is the same from every checkout.
 */
export function normaliseModulePaths(text: string): string {
  return text.replace(/(\/\/ |")(?:[^\s"]*?\/)?node_modules\//g, '$1node_modules/');
}

export async function emitValidators(contract: Contract, exports: ValidatorExport[]): Promise<{ js: string; dts: string }> {
  const ajv = createAjv(contract, true);
  const mapping = Object.fromEntries(exports.map((e) => [e.name, e.ajvRef]));
  const code = withFastPaths(ajv, exports, hoistEvaluated(standaloneCode.default(ajv, mapping)));
  const js = await bundleStandalone(code, 'validators.js');
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
 * The hot validators (HOT_VALIDATORS) run a compiled exact predicate first and ajv's
 * validator only for the verdict and errors of an invalid value (see emit-fast-validators.ts).
 */
export function withFastPaths(ajv: Ajv2020, exports: ValidatorExport[], code: string): string {
  const hot = exports.filter((e) => HOT_VALIDATORS.includes(e.name));
  if (hot.length !== HOT_VALIDATORS.length) throw new Error(`fast validators: no export named ${HOT_VALIDATORS.filter((n) => !hot.some((e) => e.name === n)).join(', ')}`);
  const fast = emitFastChecks(ajv, hot);
  let out = code;
  const wrappers: string[] = [];
  for (const e of hot) {
    const re = new RegExp(`^export const ${e.name} = (validate\\d+);$`, 'm');
    if (!re.test(out)) throw new Error(`fast validators: ajv standalone code has no export of ${e.name}`);
    out = out.replace(re, `const ${e.name}Ajv = $1;`);
    const f = fast.predicates.get(e.name)!;
    wrappers.push(
      `export function ${e.name}(data, dataCxt) {`,
      `  if (${f}(data)) {`,
      `    ${e.name}.errors = null;`,
      '    return true;',
      '  }',
      `  const valid = ${e.name}Ajv(data, dataCxt);`,
      `  ${e.name}.errors = ${e.name}Ajv.errors;`,
      '  return valid;',
      '}',
    );
  }
  return [out, fast.code, ...wrappers, ''].join('\n');
}

/**
 * ajv (draft 2020-12) gives each validator an `evaluated` property, set by a statement at
 * module scope (`validate20.evaluated = {...};`), which makes every validator a side effect
 * that no bundler may drop. The only reader is the validator itself, on entry
 * (`const evaluated0 = validate20.evaluated;`): that read now sets it on first use, and the
 * module-scope statements go, so unused validators are dead code.
 */
export function hoistEvaluated(code: string): string {
  const evaluated = new Map<string, string>();
  let out = code.replace(/^(validate\d+)\.evaluated = (\{[^\n]*\});$/gm, (_m, fn: string, obj: string) => {
    evaluated.set(fn, obj);
    return '';
  });
  out = out.replace(/const (evaluated\d+) = (validate\d+)\.evaluated;/g, (m, v: string, fn: string) => {
    const obj = evaluated.get(fn);
    return obj === undefined ? m : `const ${v} = ${fn}.evaluated || (${fn}.evaluated = ${obj});`;
  });
  if (/^validate\d+\.(?:evaluated|schema) =/m.test(out)) throw new Error('ajv standalone code assigns to a validator at module scope: it would defeat tree shaking; extend hoistEvaluated');
  return out;
}

/**
 * Marks the bundle's module-scope initialisers that call something (esbuild's CommonJS
 * wrappers for ajv's runtime helpers, `new RegExp` patterns) as pure, so that a bundler
 * importing one validator keeps only that validator, what it refers to, and those helpers.
 * With the rest being function declarations and object literals, the module is tree-shakeable
 * (`sideEffects: false` in the package lets bundlers skip it entirely when unused).
 */
export function markPure(bundled: string): string {
  return bundled
    .replace(/^(var [A-Za-z_$][\w$]* = )(__commonJS\(|require_[\w$]+\(\)|new RegExp\()/gm, '$1/* @__PURE__ */ $2');
}
