// The server and agent CLIs as the tests spawn them: one esbuild bundle of each compiled CLI
// (dist/server/cli.js, dist/agent/cli.js), made once per vitest run by test/support/global-setup.ts.
// Why: a spawn of dist/server/cli.js loads ~350 ES modules (263 of them kysely's) and spends
// ~0.45 s of CPU before it does anything; the bundle ~0.24 s (test/README.md, "Compiled CLIs").
//
// The bundles sit in dist/test-bundle/, one folder below dist/ as the compiled CLIs do, so what
// they look up beside themselves is found the same way: the console in ../console
// (server/console.ts), the SQLite writer thread's file beside the bundle
// (server/db/sqlite-writer.ts locateWriterWorker), and the native better-sqlite3 and the
// agent's CommonJS packages (agent/cjs.ts requires them at run time) in the repository's
// node_modules. Nothing is defined as packaged (server/packaged.ts): the hints stay those of a
// clone. A test that needs the compiled files themselves (one that patches or reads dist/)
// names dist/ itself.
import { build } from 'esbuild';
import { mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BUNDLE_DIR = join(ROOT, 'dist/test-bundle');
export const SERVER_CLI_BUNDLE = join(BUNDLE_DIR, 'cortex-server.mjs');
export const AGENT_CLI_BUNDLE = join(BUNDLE_DIR, 'cortex-agent.mjs');

const ENTRIES: [entry: string, out: string][] = [
  ['dist/server/cli.js', SERVER_CLI_BUNDLE],
  ['dist/agent/cli.js', AGENT_CLI_BUNDLE],
  ['dist/server/db/sqlite-writer-worker.js', join(BUNDLE_DIR, 'sqlite-writer-worker.mjs')],
];

/**
 * Builds the three bundles from dist/ (run `tsc -b` first). Each is written under a name of
 * its own and renamed into place, so a run that spawns a bundle while another run rebuilds it
 * reads a whole file, the old or the new.
 */
export async function buildCliBundles(): Promise<void> {
  mkdirSync(BUNDLE_DIR, { recursive: true });
  await Promise.all(
    ENTRIES.map(async ([entry, out]) => {
      const part = `${out}.${process.pid}.part.mjs`;
      try {
        await build({
          entryPoints: [join(ROOT, entry)],
          outfile: part,
          bundle: true,
          platform: 'node',
          format: 'esm',
          target: 'node20',
          keepNames: true,
          logLevel: 'error',
          // the native addon stays in node_modules (found from dist/test-bundle, as from dist/);
          // the optional native speed-ups of ws and pg and pg's Cloudflare socket are not installed
          external: ['better-sqlite3', 'bufferutil', 'utf-8-validate', 'pg-native', 'pg-cloudflare', 'cloudflare:sockets'],
          // CommonJS packages in an ESM bundle need a real `require` (node: built-ins, agent/cjs.ts)
          banner: { js: `import { createRequire as __cortex_cr } from 'node:module';\nconst require = __cortex_cr(import.meta.url);` },
        });
        renameSync(part, out);
      } finally {
        rmSync(part, { force: true });
      }
    }),
  );
}
