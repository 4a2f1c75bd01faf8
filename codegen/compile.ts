/**
 * Compiles generated/src to JavaScript and declarations in memory, so that generated/ ships
 * `.js` + `.d.ts` (usable without a TypeScript loader) and the drift check covers them too.
 * Uses the project's pinned `typescript` (package.json / package-lock.json), the version
 * manifest.json names, over an in-memory host: the sources and a `package.json` under a
 * virtual root, TypeScript's own lib files from its install.
 */
import { dirname } from 'node:path';
import ts from 'typescript';
import { GENERATED_MARKER } from './header.js';

export const compilerVersion = ts.version;

export function compileGenerated(sources: Map<string, string>, headerFor: (file: string) => string): Map<string, string> {
  const root = '/__generated__';
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    strict: true,
    declaration: true,
    noImplicitOverride: true,
    skipLibCheck: true,
    rootDir: `${root}/src`,
    outDir: `${root}/dist`,
    newLine: ts.NewLineKind.LineFeed,
    removeComments: false,
  };
  const files = new Map<string, string>();
  // NodeNext decides ESM vs CommonJS from the nearest package.json: the package is ESM.
  files.set(`${root}/package.json`, '{ "type": "module" }');
  for (const [rel, text] of sources) files.set(`${root}/${rel}`, text);
  const libDir = dirname(ts.getDefaultLibFilePath(options));
  const isLib = (f: string) => f.startsWith(`${libDir}/`);
  const read = (f: string): string | undefined => files.get(f) ?? (isLib(f) ? ts.sys.readFile(f) : undefined);
  const out = new Map<string, string>();
  const host: ts.CompilerHost = {
    getSourceFile: (f, languageVersion) => {
      const text = read(f);
      return text === undefined ? undefined : ts.createSourceFile(f, text, languageVersion);
    },
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    writeFile: (f, text) => {
      const rel = f.slice(root.length + 1);
      out.set(rel, text.startsWith(`/*\n * ${GENERATED_MARKER}`) ? text : headerFor(rel) + text);
    },
    getCurrentDirectory: () => root,
    getDirectories: () => [],
    fileExists: (f) => files.has(f) || (isLib(f) && ts.sys.fileExists(f)),
    readFile: read,
    directoryExists: (d) => d === root || [...files.keys()].some((f) => f.startsWith(`${d}/`)) || isLib(`${d}/`) || d === libDir,
    realpath: (p) => p,
    getCanonicalFileName: (f) => f,
    useCaseSensitiveFileNames: () => true,
    getNewLine: () => '\n',
  };
  const program = ts.createProgram({ rootNames: [...sources.keys()].map((rel) => `${root}/${rel}`), options, host });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length > 0) throw new Error(`generated/src does not type-check:\n${ts.formatDiagnosticsWithColorAndContext(diagnostics, host)}`);
  const emitted = program.emit();
  if (emitted.emitSkipped) throw new Error('generated/src: TypeScript skipped the emit');
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : 1)));
}
