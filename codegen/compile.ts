/**
 * Compiles generated/src to JavaScript and declarations in memory, so that generated/ ships
 * `.js` + `.d.ts` (usable without a TypeScript loader) and the drift check covers them too.
 */
import ts from 'typescript';
import { dirname, resolve } from 'node:path';

export function compileGenerated(sources: Map<string, string>, headerFor: (file: string) => string): Map<string, string> {
  const root = '/__generated__';
  const abs = (rel: string) => `${root}/${rel}`;
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
    rootDir: abs('src'),
    outDir: abs('dist'),
    newLine: ts.NewLineKind.LineFeed,
    removeComments: false,
  };
  const files = new Map<string, string>();
  for (const [rel, text] of sources) files.set(abs(rel), text);
  // NodeNext decides ESM vs CommonJS from the nearest package.json: the package is ESM.
  files.set(abs('package.json'), '{ "type": "module" }');
  // Only generated/src files are virtual; the TypeScript libs come from disk.
  const host = ts.createCompilerHost(options, true);
  const libDir = dirname(ts.getDefaultLibFilePath(options));
  const isVirtual = (f: string) => f.startsWith(root + '/');
  const orig = { getSourceFile: host.getSourceFile, fileExists: host.fileExists, readFile: host.readFile };
  host.getSourceFile = (fileName, lang, onError) => {
    if (isVirtual(fileName)) {
      const text = files.get(fileName);
      return text === undefined ? undefined : ts.createSourceFile(fileName, text, lang, true);
    }
    return orig.getSourceFile.call(host, fileName, lang, onError);
  };
  host.fileExists = (f) => (isVirtual(f) ? files.has(f) : orig.fileExists.call(host, f));
  host.readFile = (f) => (isVirtual(f) ? files.get(f) : orig.readFile.call(host, f));
  host.getDefaultLibLocation = () => libDir;
  host.getCurrentDirectory = () => root;
  host.directoryExists = (d) => (isVirtual(d + '/') || d === root ? true : ts.sys.directoryExists(d));
  host.getDirectories = () => [];
  host.realpath = (p) => p;
  const out = new Map<string, string>();
  host.writeFile = (fileName, text) => {
    const rel = fileName.slice(root.length + 1);
    out.set(rel, text.startsWith('/*\n * Generated') ? text : headerFor(rel) + text);
  };
  const rootNames = [...sources.keys()].filter((f) => f.endsWith('.ts')).map(abs);
  const program = ts.createProgram(rootNames, options, host);
  const diagnostics = [...program.getSyntacticDiagnostics(), ...program.getSemanticDiagnostics(), ...program.getOptionsDiagnostics()];
  if (diagnostics.length > 0) {
    const msg = ts.formatDiagnostics(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' });
    throw new Error(`generated/src does not type-check:\n${msg}`);
  }
  program.emit();
  void resolve;
  return out;
}
