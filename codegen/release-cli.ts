#!/usr/bin/env node
/**
 * npm run contract:release -- <git-ref> [--contract DIR] [--json]
 *
 * Records a release of the contract in contract/releases.json: compares contract/ with its
 * state at <git-ref> (the last release: its contract must be the one the newest entry
 * records) through contract:diff's rules, picks the next version (breaking → protocol
 * major, additive on the wire → minor, documentation/examples only → patch) and adds the
 * entry. Then `npm run codegen` writes the package version and CHANGELOG.md from it.
 *
 * When the newest entry was recorded but never committed (the ref's releases.json does not
 * have it) and the ref holds the release before it, that entry is recorded again for the
 * contract as it is now (amending a contract after contract:release).
 *
 * Exit: 0 recorded (or nothing to record), 1 a breaking change without the protocol bump,
 * 2 bad usage, an unknown ref, or a ref that does not hold the last release's contract.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ContractError, loadContract } from './contract.js';
import { checkContract } from './contract-check.js';
import { evaluate } from './diff/contract-diff.js';
import { RELEASES_FILE, contractSha256, nextVersion, readReleases, releaseChange, type Release } from './release.js';
import { UsageError, formatCliError } from '../common/errors.js';

const USAGE = `usage: contract:release <git-ref> [--contract DIR] [--json]
  <git-ref>        where the last release's contract is (a tag, a branch such as main, a commit)
  --contract DIR   the contract directory (default: contract/ of the repository)
  --json           print the new release entry as one JSON object`;


function git(cwd: string, args: string[]): { ok: boolean; out: string; err: string } {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  return { ok: r.status === 0, out: (r.stdout ?? '').trim(), err: (r.stderr ?? '').trim() };
}

function contractAt(contractDir: string, ref: string, temps: string[]): string {
  const top = git(contractDir, ['rev-parse', '--show-toplevel']);
  if (!top.ok) throw new UsageError(`${contractDir} is not inside a git repository`, { code: 'E_GIT_REF' });
  const prefix = git(contractDir, ['rev-parse', '--show-prefix']).out.replace(/\/$/, '');
  const commit = git(contractDir, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  if (!commit.ok || commit.out === '') throw new UsageError(`unknown git ref "${ref}"`, { code: 'E_GIT_REF' });
  const out = mkdtempSync(join(tmpdir(), 'cortex-contract-release-'));
  temps.push(out);
  const archive = spawnSync('git', ['archive', '--format=tar', `${commit.out}:${prefix}`], { cwd: top.out, maxBuffer: 1 << 30 });
  if (archive.status !== 0) throw new UsageError(`${prefix}/ does not exist at ${ref}: ${archive.stderr?.toString().trim()}`, { code: 'E_GIT_REF' });
  const tar = spawnSync('tar', ['-x', '-C', out], { input: archive.stdout });
  if (tar.status !== 0) throw new UsageError(`tar failed: ${tar.stderr?.toString().trim()}`, { code: 'E_GIT_REF' });
  return out;
}

/** The releases recorded at the ref (none when its releases.json is missing or unreadable). */
function readReleasesQuietly(contractDir: string): Release[] {
  try {
    return readReleases(contractDir) ?? [];
  } catch {
    return [];
  }
}

export function main(argv: string[]): number {
  const temps: string[] = [];
  try {
    let ref: string | undefined;
    let dir = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'contract');
    let json = false;
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i]!;
      if (a === '--json') json = true;
      else if (a === '--contract') {
        const v = argv[++i];
        if (v === undefined) throw new UsageError('--contract needs a directory');
        dir = resolve(v);
      } else if (a === '--help' || a === '-h') {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      } else if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
      else if (ref === undefined) ref = a;
      else throw new UsageError(`unexpected argument ${a}`);
    }
    if (ref === undefined) throw new UsageError('missing <git-ref> of the last release');
    const releases = readReleases(dir);
    if (releases === null) throw new UsageError(`${join(dir, RELEASES_FILE)} does not exist: start it with the first release by hand`, { code: 'E_CONTRACT' });
    const last = releases[0]!;
    const current = loadContract(dir);
    const digest = contractSha256(current);
    if (digest === last.contract_sha256) {
      process.stderr.write(`contract:release: contract/ is release ${last.version} already; nothing to record\n`);
      if (json) process.stdout.write(`${JSON.stringify(last)}\n`);
      return 0;
    }
    checkContract(current);
    const oldDir = contractAt(dir, ref, temps);
    const old = loadContract(oldDir);
    const oldDigest = contractSha256(old);
    // The releases this one follows: all of them, or, when the newest was recorded but never
    // committed (the ref's releases.json does not have it) and the ref holds the one before,
    // all but the newest: it is recorded again for the contract as it is now.
    let prior = releases;
    if (oldDigest !== last.contract_sha256) {
      const atRef = readReleasesQuietly(oldDir);
      const lastCommitted = atRef.some((r) => r.version === last.version && r.contract_sha256 === last.contract_sha256);
      const previous = releases[1];
      if (!lastCommitted && previous !== undefined && previous.contract_sha256 === oldDigest) {
        process.stderr.write(`contract:release: release ${last.version} is recorded in contract/${RELEASES_FILE} but not committed (${ref} holds release ${previous.version}): recording it again for the contract as it is now\n`);
        prior = releases.slice(1);
      } else {
        const held = releases.find((r) => r.contract_sha256 === oldDigest);
        const what = held !== undefined ? `release ${held.version}, an older one` : `none of the releases in contract/${RELEASES_FILE} (digest ${oldDigest.slice(0, 12)}…)`;
        const hint = !lastCommitted
          ? `release ${last.version} is recorded but not committed: \`git checkout ${ref} -- contract/${RELEASES_FILE}\` (or \`git checkout contract/${RELEASES_FILE}\` when ${ref} is HEAD) drops it; then run contract:release again with the ref of the release before it`
          : `give the ref whose contract/ is release ${last.version} (\`git log --oneline -- contract/${RELEASES_FILE}\` lists the commits that recorded releases)`;
        throw new UsageError(`the contract at ${ref} is ${what}, not the newest recorded release ${last.version} (digest ${last.contract_sha256.slice(0, 12)}…)`, { code: 'E_GIT_REF', hint });
      }
    }
    const base = prior[0]!;
    const r = evaluate(old, current);
    if (r.exit_code !== 0) {
      process.stderr.write(`contract:release: ${formatCliError('E_BREAKING_CHANGE', `${r.breaking} breaking change(s) without protocol_version and subprotocol bumped together`, `see npm run contract:diff -- ${ref}`)}\n`);
      return 1;
    }
    const protocol = Number(current.limits['protocol_version']?.value);
    const changes = r.changes.map(releaseChange);
    const version = nextVersion(base.version, { breaking: r.breaking, additive: changes.filter((c) => c.kind === 'additive').length }, protocol);
    const entry: Release = { version, contract_sha256: digest, changes };
    writeFileSync(join(dir, RELEASES_FILE), `${JSON.stringify([entry, ...prior], null, 2)}\n`);
    process.stderr.write(`contract:release: ${base.version} → ${version} (${r.breaking} breaking, ${r.additive} additive); now run npm run codegen\n`);
    if (json) process.stdout.write(`${JSON.stringify(entry)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`contract:release: ${formatCliError(err.code, err.message, err.hint)}\n${err.code === 'E_USAGE' ? `${USAGE}\n` : ''}`);
      return 2;
    }
    if (err instanceof ContractError) {
      process.stderr.write(`contract:release: ${formatCliError('E_CONTRACT', err.message)}\n`);
      return 2;
    }
    throw err;
  } finally {
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  }
}

process.exitCode = main(process.argv.slice(2));
