// The bundled validators must not depend on where node_modules physically lives: a checkout
// whose node_modules is a symlink (esbuild sees ajv at its real path, e.g.
// ../../../work/main/node_modules/ajv/…) generates the same bytes as any other (item 7).
import { describe, expect, it } from 'vitest';
import { bundleStandalone, normaliseModulePaths } from '../../codegen/emit-validators.js';

describe('module paths in bundled validators', () => {
  it('whatever precedes node_modules/ in a module comment or a __commonJS key goes', () => {
    const bundled = [
      '// ../../../work/main/node_modules/ajv/dist/runtime/ucs2length.js',
      'var require_ucs2length = __commonJS({',
      '  "../../../work/main/node_modules/ajv/dist/runtime/ucs2length.js"(exports) {',
      '// ../node_modules/fast-uri/index.js',
      '// /abs/path/node_modules/ajv/node_modules/fast-deep-equal/index.js',
      '  "node_modules/ajv/dist/runtime/equal.js"(exports) {',
      'const s = "a string, not a path";',
    ].join('\n');
    expect(normaliseModulePaths(bundled).split('\n')).toEqual([
      '// node_modules/ajv/dist/runtime/ucs2length.js',
      'var require_ucs2length = __commonJS({',
      '  "node_modules/ajv/dist/runtime/ucs2length.js"(exports) {',
      '// node_modules/fast-uri/index.js',
      '// node_modules/ajv/node_modules/fast-deep-equal/index.js',
      '  "node_modules/ajv/dist/runtime/equal.js"(exports) {',
      'const s = "a string, not a path";',
    ]);
  });

  it('a bundle names ajv\'s modules from node_modules/, with nothing before it', async () => {
    const js = await bundleStandalone('import ucs2 from "ajv/dist/runtime/ucs2length.js";\nexport const f = (s) => ucs2.default(s);\n', 'probe.js');
    const paths = [...js.matchAll(/(?:\/\/ |")([^\s"]*node_modules\/[^\s"]*)/g)].map((m) => m[1]!);
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) expect(p, p).toMatch(/^node_modules\//);
  });
});
