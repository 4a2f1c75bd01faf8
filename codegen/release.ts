/**
 * The generated package's version and CHANGELOG.md follow the contract.
 *
 * contract/releases.json lists the releases, newest first: each with its version, the
 * sha256 of the contract it was cut from (the same digest as manifest.json's
 * contract_sha256) and the changes `contract:diff` classified against the release before.
 * The version's major is the protocol major (limits.json protocol_version); an additive
 * change bumps the minor, a change with nothing on the wire (descriptions, examples) the
 * patch, a breaking change (protocol_version and subprotocol bumped together) makes
 * `<protocol_version>.0.0`.
 *
 * Codegen takes the package version from the newest release and writes CHANGELOG.md from
 * the list; `codegen:check` fails when the contract no longer matches the newest release's
 * digest: `npm run contract:release -- <git-ref of the last release>` adds the entry.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContractError, type Contract } from './contract.js';

export const RELEASES_FILE = 'releases.json';

export interface ReleaseChange {
  kind: 'breaking' | 'additive' | 'other';
  /** contract:diff's rule and location, or a sentence for changes without a rule. */
  rule?: string;
  where?: string;
  detail: string;
}

export interface Release {
  version: string;
  contract_sha256: string;
  changes: ReleaseChange[];
}

/** sha256 over the contract's files (sorted by path): manifest.json's contract_sha256. */
export function contractSha256(contract: Contract): string {
  const h = createHash('sha256');
  for (const [rel, text] of [...contract.files].sort(([a], [b]) => (a < b ? -1 : 1))) h.update(`${rel}\0${text}\0`);
  return h.digest('hex');
}

const SEMVER = /^(\d+)\.(\d+)\.(\d+)$/;

export function readReleases(contractDir: string): Release[] | null {
  const file = join(contractDir, RELEASES_FILE);
  if (!existsSync(file)) return null;
  let list: unknown;
  try {
    list = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ContractError([`${RELEASES_FILE}: not valid JSON (${(err as Error).message})`]);
  }
  const problems: string[] = [];
  if (!Array.isArray(list) || list.length === 0) problems.push(`${RELEASES_FILE}: must be a non-empty array of releases, newest first`);
  else
    list.forEach((r: Partial<Release>, i) => {
      if (typeof r?.version !== 'string' || !SEMVER.test(r.version)) problems.push(`${RELEASES_FILE}[${i}].version must be MAJOR.MINOR.PATCH`);
      if (typeof r?.contract_sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(r.contract_sha256)) problems.push(`${RELEASES_FILE}[${i}].contract_sha256 must be a sha256 hex digest`);
      if (!Array.isArray(r?.changes)) problems.push(`${RELEASES_FILE}[${i}].changes must be an array`);
    });
  if (problems.length) throw new ContractError(problems);
  return list as Release[];
}

export interface CurrentRelease {
  version: string;
  releases: Release[];
  /** Set when contract/ no longer matches the newest release: what to run. `codegen:check` fails on it. */
  stale?: string;
}

/**
 * The release the package is generated as. Without releases.json (a scratch contract):
 * `<protocol>.0.0` and an empty history. When contract/ changed since the newest release:
 * that release's version, and `stale` says how to record the new one (CHANGELOG.md then
 * shows an "Unreleased" note).
 */
export function currentRelease(contract: Contract, contractDir: string): CurrentRelease {
  const protocol = Number(contract.limits['protocol_version']?.value ?? 1);
  const releases = readReleases(contractDir);
  if (releases === null) return { version: `${protocol}.0.0`, releases: [] };
  const newest = releases[0]!;
  const major = Number(SEMVER.exec(newest.version)![1]);
  const digest = contractSha256(contract);
  if (newest.contract_sha256 !== digest) {
    return {
      version: newest.version,
      releases,
      stale:
        `contract/ changed since release ${newest.version} (contract/${RELEASES_FILE}: digest ${newest.contract_sha256.slice(0, 12)}…, now ${digest.slice(0, 12)}…): ` +
        `run \`npm run contract:release -- <git ref of the last committed release, e.g. HEAD>\` (classifies the change with contract:diff, bumps the version, adds the CHANGELOG entry), then \`npm run codegen\``,
    };
  }
  if (major !== protocol) throw new ContractError([`${RELEASES_FILE}: release ${newest.version} has major ${major}, but protocol_version is ${protocol}: the major is the protocol major`]);
  return { version: newest.version, releases };
}

/**
 * contract:diff rules that change nothing a peer sends or accepts (documentation, examples,
 * formatting, a $ref refactoring, enum order): they make a patch release, listed as "other".
 */
export const NO_WIRE_CHANGE_RULES: ReadonlySet<string> = new Set(['annotation-changed', 'example-added', 'example-changed', 'example-removed', 'formatting-only', 'ref-refactored', 'enum-reordered']);

/** A contract:diff change as a changelog entry: the kind it counts as for the version. */
export function releaseChange(c: { kind: 'breaking' | 'additive'; rule: string; where: string; detail: string }): ReleaseChange {
  const kind = c.kind === 'additive' && NO_WIRE_CHANGE_RULES.has(c.rule) ? 'other' : c.kind;
  return { kind, rule: c.rule, where: c.where, detail: c.detail };
}

/** The next version after `prev` for a diff of the contract (`protocol` = the new protocol_version). */
export function nextVersion(prev: string, diff: { breaking: number; additive: number }, protocol: number): string {
  const [, ma, mi, pa] = SEMVER.exec(prev)!.map(Number) as [number, number, number, number];
  if (diff.breaking > 0) {
    if (protocol <= ma) throw new Error(`breaking changes need protocol_version bumped (it is ${protocol}; release ${prev})`);
    return `${protocol}.0.0`;
  }
  if (protocol !== ma) throw new Error(`protocol_version changed to ${protocol} without a breaking change: contract:diff reports it as breaking`);
  if (diff.additive > 0) return `${ma}.${mi + 1}.0`;
  return `${ma}.${mi}.${pa + 1}`;
}

export function renderChangelog(name: string, releases: readonly Release[], stale?: string): string {
  const out = [
    `# Changelog of ${name}`,
    '',
    'The version follows the protocol contract: the major is the protocol major (`PROTOCOL_VERSION`);',
    'an additive contract change bumps the minor, a change with nothing new on the wire the patch, a',
    'breaking change (new protocol version and subprotocol) the major. Each entry lists what',
    '`contract:diff` found against the release before it.',
    '',
  ];
  if (stale) out.push('## Unreleased', '', `The contract changed since the last release: ${stale}.`, '');
  if (releases.length === 0) out.push('No release recorded.', '');
  for (const r of releases) {
    out.push(`## ${r.version}`, '');
    const groups: [ReleaseChange['kind'], string][] = [
      ['breaking', 'Breaking'],
      ['additive', 'Added'],
      ['other', 'Other'],
    ];
    for (const [kind, title] of groups) {
      const cs = r.changes.filter((c) => c.kind === kind);
      if (cs.length === 0) continue;
      out.push(`### ${title}`, '', ...cs.map((c) => `- ${c.detail}${c.where ? ` (\`${c.where}\`)` : ''}`), '');
    }
    if (r.changes.length === 0) out.push('No change on the wire (documentation, examples).', '');
  }
  return out.join('\n');
}
