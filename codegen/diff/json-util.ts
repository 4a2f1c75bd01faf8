// Small JSON helpers of the contract diff: canonical comparison, display, JSON pointers.
// Imports nothing.

export type Obj = { [k: string]: unknown };
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(',')}]`;
  if (isObj(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canon(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'undefined';
}
export const deepEqual = (a: unknown, b: unknown) => canon(a) === canon(b);

/** Compact rendering of a JSON value for report details. */
export function show(v: unknown): string {
  if (v === undefined) return '(absent)';
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

export const escapePtr = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
export const unescapePtr = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

export function at(file: string, path: string[]): string {
  return path.length === 0 ? file : `${file}#/${path.map(escapePtr).join('/')}`;
}

