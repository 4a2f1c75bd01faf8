#!/usr/bin/env node
/**
 * `npm run codegen` writes generated/ from contract/; `npm run codegen:check` regenerates in
 * memory and fails (exit 1) listing every differing, missing and stale file.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from './generate.js';
import { ContractError, loadContract } from './contract.js';
import { currentRelease } from './release.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function usage(): string {
  return 'usage: codegen [--check] [--contract DIR] [--out DIR]\n  Writes generated/ from contract/; with --check, only compares and exits 1 on drift.\n';
}

function listFiles(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listFiles(p, base));
    else out.push(relative(base, p).split('\\').join('/'));
  }
  return out.sort();
}

async function main(argv: string[]): Promise<number> {
  let check = false;
  let contractDir = join(repo, 'contract');
  let outDir = join(repo, 'generated');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--check') check = true;
    else if (a === '--contract' && argv[i + 1]) contractDir = resolve(argv[++i]!);
    else if (a === '--out' && argv[i + 1]) outDir = resolve(argv[++i]!);
    else if (a === '--help' || a === '-h') {
      process.stdout.write(usage());
      return 0;
    } else {
      process.stderr.write(`codegen: unknown argument ${JSON.stringify(a)}\n${usage()}`);
      return 2;
    }
  }
  const started = Date.now();
  let files: Map<string, string>;
  try {
    const generatorVersion = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
    files = await generate({ contractDir, runtimeDir: join(repo, 'codegen', 'runtime'), generatorVersion, licenseFile: join(repo, 'LICENSE') });
  } catch (err) {
    if (err instanceof ContractError) {
      process.stderr.write(`codegen: ${err.message}\nFix contract/ and run again.\n`);
      return 2;
    }
    throw err;
  }
  const existing = listFiles(outDir);
  const stale = currentRelease(loadContract(contractDir), contractDir).stale;
  if (stale) process.stderr.write(`codegen: ${check ? '' : 'warning: '}${stale}\n`);
  if (check) {
    const differing: string[] = [];
    const missing: string[] = [];
    for (const [rel, text] of files) {
      const p = join(outDir, rel);
      if (!existsSync(p)) missing.push(rel);
      else if (readFileSync(p, 'utf8') !== text) differing.push(rel);
    }
    const staleFiles = existing.filter((f) => !files.has(f));
    if (differing.length + missing.length + staleFiles.length === 0) {
      if (stale) return 1;
      process.stderr.write(`codegen: generated/ is up to date (${files.size} files, ${Date.now() - started} ms)\n`);
      return 0;
    }
    const lines = [
      ...differing.map((f) => `  differs: generated/${f}`),
      ...missing.map((f) => `  missing: generated/${f}`),
      ...staleFiles.map((f) => `  stale:   generated/${f} (no longer generated)`),
    ];
    process.stderr.write(`codegen: generated/ has drifted from contract/:\n${lines.join('\n')}\nRun \`npm run codegen\` and commit contract/ and generated/ together.\n`);
    return 1;
  }
  for (const [rel, text] of files) {
    const p = join(outDir, rel);
    mkdirSync(dirname(p), { recursive: true });
    if (!existsSync(p) || readFileSync(p, 'utf8') !== text) writeFileSync(p, text);
  }
  let removed = 0;
  for (const f of existing) {
    if (!files.has(f)) {
      rmSync(join(outDir, f));
      removed++;
    }
  }
  process.stderr.write(`codegen: wrote ${files.size} files to ${relative(process.cwd(), outDir) || '.'}${removed ? `, removed ${removed} stale` : ''} (${Date.now() - started} ms)\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`codegen: failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
