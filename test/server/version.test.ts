import { describe, expect, it } from 'vitest';
import { compareVersions, isAgentVersionSupported, isSemver } from '../../server/version.js';

describe('agent version (SemVer 2.0.0 precedence)', () => {
  it('ranks a pre-release below its release', () => {
    expect(compareVersions('1.0.0-rc.1', '1.0.0')).toBe(-1);
    expect(isAgentVersionSupported('1.0.0-rc.1', '1.0.0')).toBe(false);
    expect(isAgentVersionSupported('1.0.0', '1.0.0-rc.1')).toBe(true);
  });

  it('ignores build metadata', () => {
    expect(compareVersions('1.0.0+build.5', '1.0.0')).toBe(0);
    expect(compareVersions('1.0.0+a', '1.0.0+b')).toBe(0);
    expect(isAgentVersionSupported('1.0.0+build', '1.0.0')).toBe(true);
  });

  it('follows the precedence example of semver.org section 11', () => {
    const ordered = [
      '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2',
      '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0', '2.0.0', '2.1.0', '2.1.1',
    ];
    for (let i = 1; i < ordered.length; i++) {
      expect(compareVersions(ordered[i - 1]!, ordered[i]!)).toBe(-1);
      expect(compareVersions(ordered[i]!, ordered[i - 1]!)).toBe(1);
    }
    expect(compareVersions('1.10.0', '1.9.0')).toBe(1); // numeric, not lexical
  });

  it('treats invalid agent versions as unsupported and accepts all without a minimum', () => {
    expect(isAgentVersionSupported('1.2', '1.0.0')).toBe(false);
    expect(isAgentVersionSupported('v1.2.3', '1.0.0')).toBe(false);
    expect(isAgentVersionSupported('01.2.3', '1.0.0')).toBe(false);
    expect(isAgentVersionSupported('anything', undefined)).toBe(true);
    expect(isAgentVersionSupported('0.0.1', null)).toBe(true);
    expect(isSemver('1.2.3-rc.1+sha.abc')).toBe(true);
    expect(() => compareVersions('1.0.0', 'latest')).toThrow(/SemVer/);
  });
});
