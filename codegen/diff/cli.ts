/**
 * npm run contract:diff -- <git-ref> [--json] [--contract DIR]
 * npm run contract:diff -- --against OLD_DIR [--json] [--contract DIR]
 *
 * Compares contract/ (or --contract DIR) with its state at a git ref (or with OLD_DIR) and
 * classifies every change as additive or breaking (seed section 9; see contract-diff.ts).
 *
 * Exit status: 0 no breaking change, or breaking changes with protocol_version and
 * subprotocol bumped together; 1 breaking change without that bump; 2 bad usage, unknown
 * ref, no contract/ at the ref, or a contract that does not load.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadContract, type Contract } from '../contract.js';
import { evaluate, formatReport } from './contract-diff.js';
import { UsageError, formatCliError } from '../../common/errors.js';

const USAGE = `usage: contract:diff <git-ref> [--json] [--contract DIR]
       contract:diff --against OLD_DIR [--json] [--contract DIR]
  <git-ref>        compare contract/ with its state at this commit, branch or tag
  --against DIR    compare with the contract directory DIR instead of a git ref
  --contract DIR   the new contract directory (default: contract/ of the repository)
  --json           print one JSON object {changes, breaking, additive, allowed, exit_code}
exit: 0 no breaking change (or protocol_version and subprotocol bumped together),
      1 breaking change, 2 bad usage or unreadable ref/contract`;


function git(cwd: string, args: string[]): { ok: boolean; out: string; err: string } {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  return { ok: r.status === 0, out: (r.stdout ?? '').trim(), err: (r.stderr ?? '').trim() || (r.error?.message ?? '') };
}

function defaultContractDir(): string {
  const top = git(process.cwd(), ['rev-parse', '--show-toplevel']);
  if (top.ok && existsSync(join(top.out, 'contract'))) return join(top.out, 'contract');
  // Not inside a git work tree with contract/: the repository this CLI was built in.
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'contract');
}

function load(dir: string, label: string): Contract {
  try {
    return loadContract(dir);
  } catch (err) {
    throw new UsageError(`cannot load the contract ${label}: ${(err as Error).message}`, { code: 'E_CONTRACT' });
  }
}

/** Extracts the contract directory at `ref` into a temporary directory. */
function materialize(contractDir: string, ref: string, temps: string[]): string {
  if (ref.startsWith('-')) throw new UsageError(`unknown option ${ref}`);
  const inRepo = git(contractDir, ['rev-parse', '--show-toplevel']);
  if (!inRepo.ok) throw new UsageError(`${contractDir} is not inside a git repository (use --against DIR to compare directories)`, { code: 'E_GIT_REF' });
  const prefix = git(contractDir, ['rev-parse', '--show-prefix']).out.replace(/\/$/, '');
  const commit = git(contractDir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (!commit.ok || commit.out === '') throw new UsageError(`unknown git ref "${ref}"`, { code: 'E_GIT_REF' });
  const treeish = `${commit.out}:${prefix}`;
  const type = git(contractDir, ['cat-file', '-t', treeish]);
  if (!type.ok || type.out !== 'tree') throw new UsageError(`${prefix}/ does not exist at ${ref} (${commit.out.slice(0, 12)})`, { code: 'E_GIT_REF' });
  const out = mkdtempSync(join(tmpdir(), 'cortex-contract-diff-'));
  temps.push(out);
  // From the top level: in a subdirectory git archive limits itself to that directory.
  const archive = spawnSync('git', ['archive', '--format=tar', treeish], { cwd: inRepo.out, maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new UsageError(`git archive ${treeish} failed: ${archive.stderr?.toString().trim()}`, { code: 'E_GIT_REF' });
  const tar = spawnSync('tar', ['-x', '-C', out], { input: archive.stdout });
  if (tar.status !== 0) throw new UsageError(`tar failed: ${tar.stderr?.toString().trim() ?? tar.error?.message}`, { code: 'E_GIT_REF' });
  return out;
}

export function main(argv: string[]): number {
  const temps: string[] = [];
  let json = false;
  try {
    let ref: string | undefined;
    let against: string | undefined;
    let contract: string | undefined;
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i]!;
      const value = () => {
        const v = argv[++i];
        if (v === undefined || v.startsWith('--')) throw new UsageError(`${a} needs a value`);
        return v;
      };
      if (a === '--json') json = true;
      else if (a === '--against') against = value();
      else if (a === '--contract') contract = value();
      else if (a === '-h' || a === '--help') {
        process.stdout.write(USAGE + '\n');
        return 0;
      } else if (a.startsWith('-') && a !== '-') throw new UsageError(`unknown option ${a}`);
      else if (ref === undefined) ref = a;
      else throw new UsageError(`unexpected argument ${a}`);
    }
    if (ref !== undefined && against !== undefined) throw new UsageError('give either a git ref or --against DIR, not both');
    if (ref === undefined && against === undefined) throw new UsageError('missing <git-ref> (or --against DIR)');

    const newDir = resolve(contract ?? defaultContractDir());
    if (!existsSync(newDir) || !statSync(newDir).isDirectory()) throw new UsageError(`contract directory ${newDir} does not exist`, { code: 'E_CONTRACT' });
    let oldDir: string;
    let oldLabel: string;
    if (against !== undefined) {
      oldDir = resolve(against);
      if (!existsSync(oldDir) || !statSync(oldDir).isDirectory()) throw new UsageError(`--against ${against}: not a directory`, { code: 'E_CONTRACT' });
      oldLabel = `in ${oldDir}`;
    } else {
      oldDir = materialize(newDir, ref!, temps);
      oldLabel = `at ${ref}`;
    }
    const oldC = load(oldDir, oldLabel);
    const newC = load(newDir, `in ${newDir}`);
    const r = evaluate(oldC, newC);
    if (json) {
      const { changes, breaking, additive, allowed, exit_code } = r;
      process.stdout.write(JSON.stringify({ changes, breaking, additive, allowed, exit_code }, null, 2) + '\n');
    } else {
      process.stdout.write(`contract diff: ${against !== undefined ? oldDir : `${ref}:contract/`} → ${newDir}\n`);
      process.stdout.write(formatReport(r));
    }
    return r.exit_code;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`contract:diff: ${formatCliError(err.code, err.message, err.hint)}\n${err.message.startsWith('unknown option') || err.message.startsWith('missing') || err.message.startsWith('give either') || err.message.startsWith('unexpected') || err.message.endsWith('needs a value') ? USAGE + '\n' : ''}`);
      return 2;
    }
    throw err;
  } finally {
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  }
}

process.exitCode = main(process.argv.slice(2));
