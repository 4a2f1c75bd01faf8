// `npm run build` is `tsc -b`, which decides whether a project is up to date from the times of
// its own input files. The generated package is reached through node_modules
// (@cortex/agent-protocol → generated/), and a declaration file found that way is not an input:
// after a contract change and `npm run codegen`, `tsc -b` called server/ and agent/ up to date
// and said nothing of a handler now missing. Each project that imports the package lists its
// declaration files as inputs.
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '..', '..');
const references = (JSON.parse(readFileSync(join(repo, 'tsconfig.json'), 'utf8')) as { references: { path: string }[] }).references.map((r) => r.path);

/** An import statement of the package (not one inside a template that codegen writes: no `$` or backquote before `from`). */
const IMPORT = /^\s*(import|export)\b[^`$;]*?\bfrom\s+['"]@cortex\/agent-protocol(\/[^'"]*)?['"]/m;

function importsPackage(dir: string): boolean {
  return readdirSync(dir, { withFileTypes: true }).some((d) =>
    d.isDirectory()
      ? d.name !== 'node_modules' && importsPackage(join(dir, d.name))
      : d.name.endsWith('.ts') && IMPORT.test(readFileSync(join(dir, d.name), 'utf8')),
  );
}

describe('build inputs', () => {
  it('every project of `tsc -b` that imports @cortex/agent-protocol has the generated declarations as inputs', () => {
    const importing = references.filter((p) => importsPackage(join(repo, p)));
    expect(importing).toEqual(expect.arrayContaining(['server', 'agent', 'conformance', 'fleet']));
    for (const p of importing) {
      const config = JSON.parse(readFileSync(join(repo, p, 'tsconfig.json'), 'utf8')) as { include: string[] };
      expect(config.include, `${p}/tsconfig.json include`).toContain('../generated/dist/**/*.d.ts');
    }
  });
});
