// The generated conformance vectors (generated/vectors/<method>.json), loaded for every
// method of METHOD_CATALOG, so a new method or a new vector becomes a new case after
// `npm run codegen` with no change here.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { METHOD_CATALOG, type MethodInfo } from '@cortex/agent-protocol';

export interface Vector {
  id: string;
  method: string;
  target: 'message' | 'params' | 'result' | string;
  description?: string;
  path: string;
  mutation: string;
  message: Record<string, unknown>;
  expected: { valid: boolean; outcome: 'accepted' | 'error' | 'dropped' | 'invalid_result'; code?: number };
}

function vectorsDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@cortex/agent-protocol/package.json')), 'vectors');
}

let cache: Map<string, Vector[]> | undefined;

/** Vectors per method name, for every catalog method that has a vectors file. */
export function loadVectors(): Map<string, Vector[]> {
  if (cache) return cache;
  const dir = vectorsDir();
  cache = new Map();
  for (const m of METHOD_CATALOG) {
    const file = join(dir, `${m.name}.json`);
    if (!existsSync(file)) continue;
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { vectors?: Vector[] } | Vector[];
    cache.set(m.name, Array.isArray(doc) ? doc : (doc.vectors ?? []));
  }
  return cache;
}

/** Catalog methods of one direction and kind. */
export function methodsWhere(pred: (m: MethodInfo) => boolean): MethodInfo[] {
  return METHOD_CATALOG.filter(pred);
}

/** Does a JSON Pointer path touch this top-level params key? */
export function pathTouches(path: string, key: string): boolean {
  return path === `/${key}` || path.startsWith(`/${key}/`);
}

export function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}
