// Bundles the operator console (console/) into dist/console/, served by the server at /ui/:
// one ES module (Preact, uPlot and the generated validators inlined), one stylesheet and
// index.html. No CDN: the page loads nothing from elsewhere. Runs in `npm run build`;
// packaging/package.mjs calls buildConsole() to put the same console into the server tarball.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Builds the console into `out` (index.html, app.js, app.css; with `sourcemap`, their maps).
 * Returns esbuild's metafile (its inputs name the bundled packages).
 */
export async function buildConsole(out, { sourcemap = true } = {}) {
  mkdirSync(out, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { app: 'console/src/main.tsx' },
    outdir: out,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap,
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  // The page's own stylesheet after uPlot's (imported by console/src/metrics.tsx).
  const css = readFileSync(join(out, 'app.css'), 'utf8');
  writeFileSync(join(out, 'app.css'), `${css}\n${readFileSync(join(root, 'console', 'style.css'), 'utf8')}`);
  copyFileSync(join(root, 'console', 'index.html'), join(out, 'index.html'));
  return result.metafile;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = join(root, 'dist', 'console');
  const metafile = await buildConsole(out);
  const bytes = Object.values(metafile.outputs).reduce((n, o) => n + o.bytes, 0);
  if (process.env.CONSOLE_BUILD_VERBOSE) console.error(`console: ${Math.round(bytes / 1024)} KiB in ${out}`);
}
