#!/usr/bin/env node
// `npm run package`: self-contained tarballs of the reference agent and server for this
// platform, installable on a host that has Node.js (same major as this build) and nothing
// else: no repository, no npm install, no compiler, no download.
//
//   artifacts/cortex-agent-<version>-<platform>-<arch>.tar.gz
//   artifacts/cortex-server-<version>-<platform>-<arch>.tar.gz
//
// Each unpacks to one folder <name>-<version>-<platform>-<arch>/ holding
//   bin/<name>                  launcher (POSIX sh): checks the Node version, runs the bundle
//   lib/<name>.mjs              the program: one esbuild bundle of dist/<agent|server>/cli.js
//   lib/better_sqlite3.node     the native SQLite addon, copied from this build (stripped)
//   console/                    (server) the operator console served at /ui/ (scripts/build-console.mjs)
//   systemd/<name>.service      hardened unit (see README "Operating")
//   LICENSE                     this project's licence
//   README.md                   the repository README's "Operating" section
//   docs/                       the documentation the README and --help point to (docs/*.md)
//   THIRD-PARTY-NOTICES.txt     the licence of every package in the bundle and the addon
//   BUILD.json                  version, node ABI, platform, the bundled packages
//
// Reads the compiled dist/ (run `npm run build` first; `npm run package` does). Prints one
// JSON line on stdout: the tarballs with their sizes (paths relative to the repository when
// they are inside it, absolute otherwise).
//
//   node packaging/package.mjs [--out DIR]   write the tarballs to DIR (default: artifacts/)
import { execFileSync } from 'node:child_process';
import { copyFileSync, chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildConsole } from '../scripts/build-console.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = outDir(process.argv.slice(2));

/** --out DIR (default artifacts/ in the repository). */
function outDir(argv) {
  const i = argv.indexOf('--out');
  if (i < 0) return join(ROOT, 'artifacts');
  const dir = argv[i + 1];
  if (dir === undefined || dir.startsWith('--')) throw new Error('--out needs a folder');
  return resolve(dir);
}
const rootPkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const VERSION = rootPkg.version;
const PLATFORM = `${process.platform}-${process.arch}`;
const NODE_ABI = process.versions.modules;
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

const PROGRAMS = [
  { name: 'cortex-agent', entry: 'dist/agent/cli.js', unit: 'packaging/systemd/cortex-agent.service' },
  // The SQLite writer thread runs from a file of its own: lib/sqlite-writer-worker.mjs,
  // found beside the bundle by server/db/sqlite-writer.ts (locateWriterWorker).
  // The console (/ui/) is found in console/ beside lib/ by server/console.ts (consoleDir).
  { name: 'cortex-server', entry: 'dist/server/cli.js', unit: 'packaging/systemd/cortex-server.service', workers: ['dist/server/db/sqlite-writer-worker.js'], console: true },
];

const ADDON = join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');

class PackagingError extends Error {}

function fail(message) {
  throw new PackagingError(message);
}

/**
 * better-sqlite3 finds its addon through the `bindings` package, which searches paths
 * relative to node_modules. In the bundle the addon sits next to the bundle file: this
 * stand-in for `bindings` loads it from there (`__cortex_dir` is set by the banner).
 */
/**
 * An addon that is missing or cannot be loaded (a partial copy, a file left unreadable)
 * means the installation is incomplete: the error says so and how to mend it, with its own
 * name and code (CortexInstallError, E_INSTALL_INCOMPLETE), instead of the database or
 * buffer error it would otherwise surface as.
 */
export const INSTALL_ERROR_NAME = 'CortexInstallError';
export const INSTALL_ERROR_CODE = 'E_INSTALL_INCOMPLETE';
const bindingsShimSource = `module.exports = function bindings(name) {
  const file = require('node:path').join(__cortex_dir, name);
  try {
    return require(file);
  } catch (cause) {
    const home = require('node:path').dirname(__cortex_dir);
    const err = new Error('this installation is incomplete: the native addon lib/' + name + ' is missing or unreadable (' + ((cause && cause.code) || 'cannot load') + ', ' + file + '): unpack the tarball again into ' + home, { cause });
    err.name = ${JSON.stringify(INSTALL_ERROR_NAME)};
    err.code = ${JSON.stringify(INSTALL_ERROR_CODE)};
    throw err;
  }
};`;

const bindingsShim = {
  name: 'cortex-bindings-shim',
  setup(b) {
    b.onResolve({ filter: /^bindings$/ }, () => ({ path: 'bindings', namespace: 'cortex-shim' }));
    b.onLoad({ filter: /.*/, namespace: 'cortex-shim' }, () => ({ contents: bindingsShimSource, loader: 'js' }));
  },
};

/**
 * agent/cjs.js requires the agent's CommonJS packages at run time (DECISIONS P9: an ESM import
 * of them costs the unbundled agent memory). In the bundle they are imported statically, so
 * esbuild bundles them; node:tls still loads on first use (the banner's `require`).
 */
const agentCjsStatic = {
  name: 'cortex-agent-cjs-static',
  setup(b) {
    b.onLoad({ filter: /[\\/]agent[\\/]cjs\.js$/ }, (args) => ({
      contents: [
        `export { default as pino } from 'pino';`,
        `export { default as Database } from 'better-sqlite3';`,
        `export { default as WebSocket } from 'ws';`,
        `export const tlsModule = () => require('node:tls');`,
      ].join('\n'),
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

// ESM output: CommonJS dependencies need a real `require` (for node: built-ins and the
// addon). The ABI check runs before anything else so a wrong Node says so in one line.
const banner = (name) =>
  [
    `import { createRequire as __cortex_cr } from 'node:module';`,
    `import { dirname as __cortex_dn } from 'node:path';`,
    `import { fileURLToPath as __cortex_fu } from 'node:url';`,
    `const require = __cortex_cr(import.meta.url);`,
    `const __cortex_dir = __cortex_dn(__cortex_fu(import.meta.url));`,
    `if (process.versions.modules !== ${JSON.stringify(NODE_ABI)}) { process.stderr.write(${JSON.stringify(`${name}: this build needs Node.js ${NODE_MAJOR} (native ABI ${NODE_ABI}); this is Node.js `)} + process.versions.node + ' (ABI ' + process.versions.modules + '). Install Node.js ${NODE_MAJOR} or use the tarball built for yours.\\n'); process.exit(1); }`,
  ].join('\n');

/** The package that owns a bundled file: its folder and package.json (walks up to the nearest package.json under node_modules). */
export function owningPackage(file) {
  const abs = resolve(ROOT, file);
  const parts = abs.split(sep);
  const nm = parts.lastIndexOf('node_modules');
  if (nm < 0) return null;
  const scoped = parts[nm + 1]?.startsWith('@');
  const dir = parts.slice(0, nm + (scoped ? 3 : 2)).join(sep);
  const pkgFile = join(dir, 'package.json');
  if (!existsSync(pkgFile)) return null;
  return { dir, pkg: JSON.parse(readFileSync(pkgFile, 'utf8')) };
}

function licenceText(dir) {
  const names = readdirSync(dir).filter((f) => /^(licen[cs]e|copying|notice)(\.|$|-)/i.test(f));
  const files = names.sort().map((f) => readFileSync(join(dir, f), 'utf8').trim()).join('\n\n');
  return files || readmeLicence(dir);
}

/**
 * Some packages (pg-types and its helpers) ship their licence only as the README's
 * "License" section: that section, as the package ships it.
 */
function readmeLicence(dir) {
  const readme = readdirSync(dir).find((f) => /^readme(\.md)?$/i.test(f));
  if (readme === undefined) return '';
  const lines = readFileSync(join(dir, readme), 'utf8').split('\n');
  const start = lines.findIndex((l) => /^#{1,6}\s*licen[cs]e\b/i.test(l));
  if (start < 0) return '';
  const end = lines.findIndex((l, i) => i > start && /^#{1,6}\s/.test(l));
  const text = lines.slice(start + 1, end < 0 ? undefined : end).join('\n').trim();
  // A section that only names the licence ("MIT") is not its text.
  return text.length >= 200 ? text : '';
}

/**
 * The packages an input of this repository already bundles: generated/dist/validators.js (and
 * the server's config validator) carry ajv's and ajv-formats' code, bundled by codegen's
 * esbuild, which names each module it took by its path (`// node_modules/ajv/dist/...` above
 * it, `"node_modules/ajv-formats/dist/formats.js"(exports)` as its CommonJS wrapper's key).
 * Their licences are owed as much as those of the packages esbuild bundles here.
 */
export function prebundledPackages(file) {
  if (!/\.[cm]?js$/.test(file) || !existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  const names = new Set();
  for (const m of text.matchAll(/^\/\/ (?:\.\.\/)*node_modules\/((?:@[^/\s]+\/)?[^/\s]+)\/\S*$|"(?:\.\.\/)*node_modules\/((?:@[^/"]+\/)?[^/"]+)\/[^"]*"\s*\(/gm)) names.add(m[1] ?? m[2]);
  return [...names];
}

/** THIRD-PARTY-NOTICES.txt for the inputs of an esbuild metafile (plus `extra` package folders). Throws when a package ships no licence file. */
export function notices(metafile, extra, withConsole = false) {
  const packages = new Map();
  for (const input of Object.keys(metafile.inputs)) {
    const file = input.replace(/^[a-z-]+:/, '');
    const owner = owningPackage(file);
    if (owner && !packages.has(owner.pkg.name)) packages.set(owner.pkg.name, owner);
    if (owner) continue;
    for (const name of prebundledPackages(resolve(ROOT, file))) {
      const o = owningPackage(join(ROOT, 'node_modules', name, 'package.json'));
      if (o === null) fail(`${file} bundles ${name}, which is not in node_modules: its licence cannot be collected (npm install, then package again)`);
      if (!packages.has(o.pkg.name)) packages.set(o.pkg.name, o);
    }
  }
  for (const dir of extra) {
    const o = owningPackage(join(dir, 'package.json'));
    if (o && !packages.has(o.pkg.name)) packages.set(o.pkg.name, o);
  }
  const list = [...packages.values()].sort((a, b) => a.pkg.name.localeCompare(b.pkg.name));
  const blocks = list.map(({ dir, pkg }) => {
    const text = licenceText(dir);
    if (!text) fail(`${pkg.name}@${pkg.version} is bundled but ships no licence file: add its notice by hand before publishing`);
    return `${'='.repeat(78)}\n${pkg.name}@${pkg.version} (${typeof pkg.license === 'string' ? pkg.license : JSON.stringify(pkg.license)})\n${'='.repeat(78)}\n\n${text}\n`;
  });
  return {
    text:
      `Third-party software in this distribution\n\n` +
      `The program in lib/ bundles the packages below (their code is inside lib/*.mjs${withConsole ? ' and\nconsole/app.js, the operator console' : ''}), and\n` +
      `lib/better_sqlite3.node is better-sqlite3's addon, which embeds SQLite (public domain:\n` +
      `https://www.sqlite.org/copyright.html).\n\n${blocks.join('\n')}`,
    packages: list.map(({ pkg }) => `${pkg.name}@${pkg.version}`),
  };
}

const launcher = (name) => `#!/bin/sh
# ${name} launcher: runs lib/${name}.mjs with Node.js ${NODE_MAJOR} (set CORTEX_NODE to pick one).
set -e
# cd below must not consult CDPATH (a relative folder found through it is printed and taken)
unset CDPATH
self=$(readlink -f "$0" 2>/dev/null || echo "$0")
home=$(cd "$(dirname "$self")/.." && pwd)
# The install folder as invoked (e.g. /opt/${name}, a link to the versioned folder after an
# upgrade): links to this launcher are followed, links to its folders are kept, so the
# commands the program prints keep working after the next upgrade. The program uses it only
# when it is this same folder (CORTEX_INVOKED_HOME).
link=$0
hops=0
while [ -L "$link" ] && [ "$hops" -lt 40 ]; do
  target=$(readlink "$link") || break
  case $target in
    /*) link=$target ;;
    *) link=$(dirname "$link")/$target ;;
  esac
  hops=$((hops + 1))
done
invoked=$(cd "$(dirname "$link")/.." 2>/dev/null && pwd) || invoked=$home
node=\${CORTEX_NODE:-node}
if ! command -v "$node" >/dev/null 2>&1; then
  echo "${name}: Node.js ${NODE_MAJOR} not found (looked for '$node' on PATH; set CORTEX_NODE=/path/to/node)" >&2
  exit 1
fi
if [ ! -r "$home/lib/better_sqlite3.node" ]; then
  echo "${name}: error[${INSTALL_ERROR_CODE}]: this installation is incomplete: the native addon lib/better_sqlite3.node is missing or unreadable ($home/lib/better_sqlite3.node): unpack the tarball again" >&2
  exit 1
fi
CORTEX_INVOKED_HOME=$invoked exec "$node" "$home/lib/${name}.mjs" "$@"
`;

/** README.md of the tarball: the repository README's "Operating" section (one source for both). */
function operatingReadme(name) {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Operating\n');
  if (start < 0) fail('README.md has no "## Operating" section');
  const rest = readme.slice(start + 1);
  const end = rest.indexOf('\n## ', 3);
  const section = end < 0 ? rest : rest.slice(0, end + 1);
  return `# ${name} ${VERSION} (${PLATFORM})\n\nThe Cortex reference ${name === 'cortex-agent' ? 'agent' : 'server'}; \`bin/${name} --help\` lists its commands.\n\n${section.trimEnd()}\n`;
}

async function packageOne({ name, entry, unit, workers = [], console: withConsole = false }) {
  const base = `${name}-${VERSION}-${PLATFORM}`;
  const stage = join(OUT, 'stage', base);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(join(stage, 'bin'), { recursive: true });
  mkdirSync(join(stage, 'lib'), { recursive: true });
  mkdirSync(join(stage, 'systemd'), { recursive: true });

  const result = await build({
    entryPoints: [join(ROOT, entry)],
    outfile: join(stage, 'lib', `${name}.mjs`),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${NODE_MAJOR}`,
    minify: true,
    keepNames: true,
    legalComments: 'none', // the notices file holds them
    metafile: true,
    logLevel: 'warning',
    // optional native speed-ups of ws and pg (loaded in try/catch), and pg's Cloudflare
    // Workers socket (loaded only there): none of them is used on a Linux host
    external: ['bufferutil', 'utf-8-validate', 'pg-native', 'pg-cloudflare', 'cloudflare:sockets'],
    banner: { js: banner(name) },
    // the program knows it runs from the tarball (server/cli/hints.ts: its hints name bin/, not npm run)
    define: { __CORTEX_PACKAGED__: JSON.stringify(name) },
    plugins: [bindingsShim, agentCjsStatic],
  });

  const workerInputs = [];
  for (const w of workers) {
    const out = join(stage, 'lib', `${basename(w, '.js')}.mjs`);
    const r = await build({
      entryPoints: [join(ROOT, w)],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: `node${NODE_MAJOR}`,
      minify: true,
      keepNames: true,
      legalComments: 'none',
      metafile: true,
      logLevel: 'warning',
      banner: { js: banner(name) },
      plugins: [bindingsShim],
    });
    workerInputs.push(r.metafile);
  }

  // the console's page, script and stylesheet (no source maps: they are for working on it)
  const consoleInputs = withConsole ? (await buildConsole(join(stage, 'console'), { sourcemap: false })).inputs : {};

  const addon = join(stage, 'lib', 'better_sqlite3.node');
  copyFileSync(ADDON, addon);
  try {
    execFileSync('strip', ['--strip-unneeded', addon], { stdio: 'ignore' });
  } catch {
    // no strip(1): ship it unstripped
  }
  writeFileSync(join(stage, 'bin', name), launcher(name));
  chmodSync(join(stage, 'bin', name), 0o755);
  copyFileSync(join(ROOT, unit), join(stage, 'systemd', `${name}.service`));
  copyFileSync(join(ROOT, 'LICENSE'), join(stage, 'LICENSE'));
  writeFileSync(join(stage, 'README.md'), operatingReadme(name));
  // the documentation the README links and --help names (docs/cli.md, docs/configuration.md, ...)
  mkdirSync(join(stage, 'docs'));
  for (const f of readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort()) copyFileSync(join(ROOT, 'docs', f), join(stage, 'docs', f));
  const inputs = Object.assign({}, result.metafile.inputs, ...workerInputs.map((m) => m.inputs), consoleInputs);
  const n = notices({ inputs }, [join(ROOT, 'node_modules/better-sqlite3')], withConsole);
  writeFileSync(join(stage, 'THIRD-PARTY-NOTICES.txt'), n.text);
  writeFileSync(
    join(stage, 'BUILD.json'),
    `${JSON.stringify({ name, version: VERSION, platform: PLATFORM, node_major: NODE_MAJOR, node_abi: NODE_ABI, bundled: n.packages }, null, 2)}\n`,
  );

  const tarball = join(OUT, `${base}.tar.gz`);
  // reproducible: sorted names, fixed owner and mtime, and modes that do not depend on the
  // umask of the build (a umask of 077 made every folder 0700: root unpacks with the modes as
  // stored, and the service user could not run its own install)
  execFileSync('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0', '--mode=u+rwX,go+rX,go-w', '-czf', tarball, '-C', join(OUT, 'stage'), base]);
  rmSync(stage, { recursive: true, force: true });
  const rel = relative(ROOT, tarball);
  return {
    name,
    tarball: rel.startsWith('..') ? tarball : rel,
    packed_bytes: statSync(tarball).size,
    bundle_bytes: result.metafile.outputs[relative(process.cwd(), join(stage, 'lib', `${name}.mjs`))]?.bytes ?? null,
    packages: n.packages.length,
  };
}

async function main() {
  for (const p of PROGRAMS) if (!existsSync(join(ROOT, p.entry))) fail(`${p.entry} is missing: run "npm run build" first`);
  if (!existsSync(ADDON)) fail(`${relative(ROOT, ADDON)} is missing: better-sqlite3 is not built (npm rebuild better-sqlite3)`);
  mkdirSync(OUT, { recursive: true });
  const out = [];
  for (const p of PROGRAMS) out.push(await packageOne(p));
  rmSync(join(OUT, 'stage'), { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ version: VERSION, platform: PLATFORM, node_abi: NODE_ABI, artifacts: out })}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    process.stderr.write(`package: ${error instanceof PackagingError ? error.message : (error?.stack ?? String(error))}\n`);
    process.exit(1);
  });
}
