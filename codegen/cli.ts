#!/usr/bin/env node
/**
 * `npm run codegen` writes generated/ from contract/; `npm run codegen:check` regenerates in
 * memory and fails (exit 1) listing every differing, missing and stale file.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_GENERATED_DIR, generate, generateServer } from './generate.js';
import { ContractError, loadContract } from './contract.js';
import { currentRelease } from './release.js';
import { formatCliError } from '../common/errors.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function usage(): string {
  return 'usage: codegen [--check] [--contract DIR] [--out DIR] [--server-out DIR]\n  Writes generated/ (the wire package) and server/generated/ (the server\'s own schemas) from contract/;\n  with --check, only compares and exits 1 on drift.\n';
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
  let serverOutDir = join(repo, SERVER_GENERATED_DIR);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--check') check = true;
    else if (a === '--contract' && argv[i + 1]) contractDir = resolve(argv[++i]!);
    else if (a === '--out' && argv[i + 1]) outDir = resolve(argv[++i]!);
    else if (a === '--server-out' && argv[i + 1]) serverOutDir = resolve(argv[++i]!);
    else if (a === '--help' || a === '-h') {
      process.stdout.write(usage());
      return 0;
    } else {
      process.stderr.write(`codegen: ${formatCliError('E_USAGE', `unknown argument ${JSON.stringify(a)}`)}\n${usage()}`);
      return 2;
    }
  }
  const started = Date.now();
  let files: Map<string, string>;
  let serverFiles: Map<string, string>;
  try {
    const generatorVersion = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
    files = await generate({ contractDir, runtimeDir: join(repo, 'codegen', 'runtime'), generatorVersion, licenseFile: join(repo, 'LICENSE') });
    serverFiles = await generateServer({ contractDir });
  } catch (err) {
    if (err instanceof ContractError) {
      process.stderr.write(`codegen: ${formatCliError('E_CONTRACT', err.message)}\n`);
      return 2;
    }
    throw err;
  }
  const targets = [
    { dir: outDir, label: 'generated', files },
    { dir: serverOutDir, label: SERVER_GENERATED_DIR, files: serverFiles },
  ];
  const total = files.size + serverFiles.size;
  const stale = currentRelease(loadContract(contractDir), contractDir).stale;
  if (stale) process.stderr.write(`codegen: ${check ? '' : 'warning: '}${stale}\n`);
  if (check) {
    const lines: string[] = [];
    for (const { dir, label, files: want } of targets) {
      for (const [rel, text] of want) {
        const p = join(dir, rel);
        if (!existsSync(p)) lines.push(`  missing: ${label}/${rel}`);
        else if (readFileSync(p, 'utf8') !== text) lines.push(`  differs: ${label}/${rel}`);
      }
      for (const f of listFiles(dir)) if (!want.has(f)) lines.push(`  stale:   ${label}/${f} (no longer generated)`);
    }
    if (lines.length === 0) {
      if (stale) return 1;
      process.stderr.write(`codegen: generated/ and ${SERVER_GENERATED_DIR}/ are up to date (${total} files, ${Date.now() - started} ms)\n`);
      return 0;
    }
    // differs first, then missing, then stale (the order people fix them in)
    const order = (l: string) => ['  differs', '  missing', '  stale: '].findIndex((p) => l.startsWith(p));
    lines.sort((a, b) => order(a) - order(b));
    process.stderr.write(`codegen: generated files have drifted from contract/:\n${lines.join('\n')}\nRun \`npm run codegen\` and commit contract/, generated/ and ${SERVER_GENERATED_DIR}/ together.\n`);
    return 1;
  }
  let removed = 0;
  for (const { dir, files: want } of targets) {
    const existing = listFiles(dir);
    for (const [rel, text] of want) {
      const p = join(dir, rel);
      mkdirSync(dirname(p), { recursive: true });
      if (!existsSync(p) || readFileSync(p, 'utf8') !== text) writeFileSync(p, text);
    }
    for (const f of existing) {
      if (!want.has(f)) {
        rmSync(join(dir, f));
        removed++;
      }
    }
  }
  process.stderr.write(`codegen: wrote ${files.size} files to ${relative(process.cwd(), outDir) || '.'} and ${serverFiles.size} to ${relative(process.cwd(), serverOutDir) || '.'}${removed ? `, removed ${removed} stale` : ''} (${Date.now() - started} ms)\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`codegen: ${formatCliError('E_INTERNAL', `failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)}\n`);
    process.exitCode = 1;
  },
);
