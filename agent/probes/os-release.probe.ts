// sys.os_release: the first of /etc/os-release and /usr/lib/os-release that exists, parsed as
// os-release(5) says: KEY=value lines, values optionally in double or single quotes, with
// backslash escapes for \ " $ ` inside double quotes; comments and blank lines ignored.

import { readFile } from 'node:fs/promises';
import { ProbeExecutionFailedError, type SysOsReleaseOutput } from '@cortex/agent-protocol';
import { defineProbe } from './types.js';

/** os-release keys are upper-case shell variable names (this also keeps __proto__ out). */
const KEY = /^[A-Z][A-Z0-9_]*$/;
const MAX_VALUE = 4096;
const MAX_FIELDS = 256;

function unquote(raw: string): string {
  const v = raw.trim();
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) return v.slice(1, -1).replace(/\\([\\"$`])/g, '$1');
  if (v.length >= 2 && v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1);
  return v.replace(/\\(.)/g, '$1');
}

/** All KEY=value assignments of an os-release file (later assignments win). */
export function parseOsRelease(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  let count = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq);
    if (!KEY.test(key)) continue;
    if (!Object.prototype.hasOwnProperty.call(fields, key)) {
      if (count >= MAX_FIELDS) continue;
      count++;
    }
    fields[key] = unquote(line.slice(eq + 1)).slice(0, MAX_VALUE);
  }
  return fields;
}

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
