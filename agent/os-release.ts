// os-release(5): KEY=value lines, values optionally in double or single quotes, with
// backslash escapes for \ " $ ` inside double quotes; comments and blank lines ignored.
// Shared by platform detection (hello) and the sys.os_release probe.

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
