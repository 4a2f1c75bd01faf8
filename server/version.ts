// agent_version vs min_agent_version with SemVer 2.0.0 precedence: a pre-release ranks
// below its release (1.0.0-rc.1 < 1.0.0), build metadata is ignored (1.0.0+b == 1.0.0).
import semver from 'semver';

// The official SemVer 2.0.0 regular expression (semver.org). `semver.parse` alone also
// accepts a leading "v" or "=" and surrounding spaces, which SemVer 2.0.0 does not.
const SEMVER_2 =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** Is `v` a valid SemVer 2.0.0 version string? */
export function isSemver(v: string): boolean {
  return SEMVER_2.test(v) && semver.valid(v) !== null;
}

/** -1, 0 or 1 by SemVer 2.0.0 precedence. Throws on an invalid version. */
export function compareVersions(a: string, b: string): -1 | 0 | 1 {
  if (!isSemver(a)) throw new Error(`not a SemVer 2.0.0 version: ${JSON.stringify(a)}`);
  if (!isSemver(b)) throw new Error(`not a SemVer 2.0.0 version: ${JSON.stringify(b)}`);
  return semver.compare(a, b); // compare() ignores build metadata; compareBuild() would not
}

/**
 * agent.hello check: is agent_version >= min_agent_version? An agent_version that is not
 * valid SemVer is unsupported (-32003). No minimum configured means every version passes.
 */
export function isAgentVersionSupported(
  agentVersion: string,
  minAgentVersion: string | null | undefined,
): boolean {
  if (minAgentVersion == null) return true;
  if (!isSemver(agentVersion)) return false;
  return compareVersions(agentVersion, minAgentVersion) >= 0;
}
