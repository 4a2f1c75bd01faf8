/**
 * Compiles generated/src to JavaScript and declarations in memory, so that generated/ ships
 * `.js` + `.d.ts` (usable without a TypeScript loader) and the drift check covers them too.
 * Uses ts-morph's bundled TypeScript and in-memory file system (with its bundled lib files),
 * so codegen loads one TypeScript, not two.
 */
import { Project, ts } from 'ts-morph';

export const compilerVersion = ts.version;

export function compileGenerated(sources: Map<string, string>, headerFor: (file: string) => string): Map<string, string> {
  const root = '/__generated__';
  const project = new Project({
    useInMemoryFileSystem: true,
    compilerOptions: {
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
    },
  });
  const fs = project.getFileSystem();
  // NodeNext decides ESM vs CommonJS from the nearest package.json: the package is ESM.
  fs.writeFileSync(`${root}/package.json`, '{ "type": "module" }');
  for (const [rel, text] of sources) project.createSourceFile(`${root}/${rel}`, text, { overwrite: true });
  const diagnostics = project.getPreEmitDiagnostics();
  if (diagnostics.length > 0) throw new Error(`generated/src does not type-check:\n${project.formatDiagnosticsWithColorAndContext(diagnostics)}`);
  const out = new Map<string, string>();
  for (const file of project.emitToMemory().getFiles()) {
    const rel = file.filePath.slice(root.length + 1);
    out.set(rel, file.text.startsWith('/*\n * Generated') ? file.text : headerFor(rel) + file.text);
  }
  return out;
}
