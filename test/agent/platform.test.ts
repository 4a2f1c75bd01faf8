import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { archName, detectPlatform, parseOsRelease } from '../../agent/platform.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(os.tmpdir(), 'cortex-platform-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('platform', () => {
  it('reads os, arch, kernel and distro from this system', () => {
    const p = detectPlatform();
    expect(p.os).toBe(os.platform());
    expect(p.kernel).toBe(os.release());
    expect(p.kernel.length).toBeGreaterThan(0);
    expect(p.arch).toBe(archName(process.arch));
    if (process.arch === 'x64' || process.arch === 'arm64') expect(p.arch).toBe(os.machine());
    expect(p.distro === null || (typeof p.distro === 'string' && p.distro.length > 0)).toBe(true);
    expect(Object.keys(p).sort()).toEqual(['arch', 'distro', 'kernel', 'os']);
  });

  it('names architectures the way the seed does', () => {
    expect(archName('x64')).toBe('x86_64');
    expect(archName('arm64')).toBe('aarch64');
    expect(archName('something-new')).toBe('something-new');
  });

  it('takes PRETTY_NAME from os-release, falling back to /usr/lib/os-release, else null', () => {
    const etc = join(dir, 'etc-os-release');
    const lib = join(dir, 'lib-os-release');
    writeFileSync(lib, 'NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04 LTS"\n');
    expect(detectPlatform({ osReleasePaths: [etc, lib] }).distro).toBe('Ubuntu 24.04 LTS');
    writeFileSync(etc, '# comment\nPRETTY_NAME=\'Alpine Linux v3.20\'\nID=alpine\n');
    expect(detectPlatform({ osReleasePaths: [etc, lib] }).distro).toBe('Alpine Linux v3.20');
    writeFileSync(etc, 'ID=minimal\n');
    expect(detectPlatform({ osReleasePaths: [etc, lib] }).distro).toBeNull();
    expect(detectPlatform({ osReleasePaths: [join(dir, 'none')] }).distro).toBeNull();
    expect(detectPlatform({ platform: 'linux', arch: 'arm64', release: '6.6.21', osReleasePaths: [] })).toEqual({
      os: 'linux',
      arch: 'aarch64',
      kernel: '6.6.21',
      distro: null,
    });
  });

  it('parses os-release quoting and escapes', () => {
    expect(parseOsRelease('A="x \\"y\\" \\$z"\nB=plain\n  C="spaced"  \nbad line\n=novalue\n')).toEqual({ A: 'x "y" $z', B: 'plain', C: 'spaced' });
  });
});
