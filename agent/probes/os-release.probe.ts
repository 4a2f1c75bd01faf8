// sys.os_release: the first of /etc/os-release and /usr/lib/os-release that exists, parsed as
// os-release(5) says: KEY=value lines, values optionally in double or single quotes, with
// backslash escapes for \ " $ ` inside double quotes; comments and blank lines ignored.

import { readFile } from 'node:fs/promises';
import { ProbeExecutionFailedError, type SysOsReleaseOutput } from '@cortex/agent-protocol';
import { parseOsRelease } from '../os-release.js';
import { defineProbe } from './types.js';

export { parseOsRelease };

export function osReleaseOutput(source: string, fields: Record<string, string>): SysOsReleaseOutput {
  const get = (k: string) => (Object.prototype.hasOwnProperty.call(fields, k) ? fields[k] : undefined);
  const out: SysOsReleaseOutput = {
    source,
    id: get('ID') || 'linux',
    name: get('NAME') || 'Linux',
    pretty_name: get('PRETTY_NAME') || 'Linux',
    fields,
  };
  const idLike = get('ID_LIKE');
  if (idLike) out.id_like = idLike.split(/\s+/).filter(Boolean);
  const optional = [
    ['VERSION', 'version'],
    ['VERSION_ID', 'version_id'],
    ['VERSION_CODENAME', 'version_codename'],
    ['BUILD_ID', 'build_id'],
  ] as const;
  for (const [key, prop] of optional) {
    const v = get(key);
    if (v !== undefined && v !== '') out[prop] = v;
  }
  return out;
}

export const osReleaseProbe = defineProbe('sys.os_release', async (_args, ctx) => {
  const tried: string[] = [];
  for (const path of ctx.settings.osReleasePaths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      tried.push(`${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      continue;
    }
    return { output: osReleaseOutput(path, parseOsRelease(text)), exit_code: null, stderr: null };
  }
  throw new ProbeExecutionFailedError({ stderr: `no os-release file on this host (${tried.join('; ')})`, exit_code: null, probe: ctx.probe });
});
