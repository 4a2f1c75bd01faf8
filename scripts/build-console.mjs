// Bundles the operator console (console/) into dist/console/, served by the server at /ui/:
// one ES module (Preact, uPlot and the generated validators inlined), one stylesheet and
// index.html. No CDN: the page loads nothing from elsewhere. Runs in `npm run build`.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'console');
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
  sourcemap: true,
  legalComments: 'linked',
  metafile: true,
  logLevel: 'warning',
});
// The page's own stylesheet after uPlot's (imported by console/src/metrics.tsx).
const css = readFileSync(join(out, 'app.css'), 'utf8');
writeFileSync(join(out, 'app.css'), `${css}\n${readFileSync(join(root, 'console', 'style.css'), 'utf8')}`);
copyFileSync(join(root, 'console', 'index.html'), join(out, 'index.html'));
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
if (process.env.CONSOLE_BUILD_VERBOSE) console.error(`console: ${Math.round(bytes / 1024)} KiB in ${out}`);
