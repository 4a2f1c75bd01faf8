// hello.platform (seed 4.1): os, arch, kernel from node:os, distro from os-release.

import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseOsRelease } from './os-release.js';

export interface Platform {
  /** node's platform name: "linux", "darwin", "freebsd", "win32", ... */
  os: string;
  /** uname-style machine name, as in the seed's example: "x86_64", "aarch64", ... */
  arch: string;
  /** Kernel release, e.g. "6.6.21". */
  kernel: string;
  /** os-release PRETTY_NAME, e.g. "Ubuntu 24.04 LTS"; null when unknown. */
  distro: string | null;
}

/** Node's process.arch → uname -m style. Unlisted values are passed through. */
const ARCH_NAMES: Record<string, string> = {
  x64: 'x86_64',
  arm64: 'aarch64',
  ia32: 'i686',
  arm: 'armv7l',
  ppc64: 'ppc64le',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loongarch64',
  mips: 'mips',
  mipsel: 'mips',
};

export function archName(nodeArch: string): string {
  return ARCH_NAMES[nodeArch] ?? nodeArch;
}

export interface PlatformSources {
  platform?: string;
  arch?: string;
  release?: string;
  /** os-release files tried in order (the os-release(5) lookup order). */
  osReleasePaths?: readonly string[];
}

export function detectPlatform(sources: PlatformSources = {}): Platform {
  return {
    os: sources.platform ?? os.platform(),
    arch: archName(sources.arch ?? process.arch),
    kernel: sources.release ?? os.release(),
    distro: readDistro(sources.osReleasePaths ?? ['/etc/os-release', '/usr/lib/os-release']),
  };
}

function readDistro(paths: readonly string[]): string | null {
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    const fields = parseOsRelease(text);
    const name = fields.PRETTY_NAME ?? null;
    return name !== null && name.trim() !== '' ? name.trim() : null;
  }
  return null;
}

export { parseOsRelease } from './os-release.js';
