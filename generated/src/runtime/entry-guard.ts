/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
// Checks a log entry's free-form parts against the contract's caps (LIMITS, PROTOCOL.md#limits-and-timings:
// metadata_max_depth, metadata_max_bytes, max_seq) and makes its text storable. Shared by
// the reference server (refuses with -32602) and agent (degrades the entry before it is
// buffered), so both apply the same rule.

/** Why a metadata value is refused. */
export interface MetadataProblem {
  kind: 'depth' | 'size';
  /** Human-readable: what the limit is and what was found. */
  message: string;
}

export interface MetadataLimits {
  /** Deepest nesting; the metadata object itself is level 1. */
  maxDepth: number;
  /** Largest UTF-8 JSON text. */
  maxBytes: number;
}

/**
 * The first cap `metadata` breaks, or undefined. The depth walk is iterative and stops at
 * the first level past the cap, so a value nested thousands deep (which would overflow
 * the stack of JSON.stringify or a recursive walk) is refused in O(maxDepth) work per
 * branch. The size is measured only once the depth is known to be within the cap.
 */
export function metadataProblem(metadata: unknown, limits: MetadataLimits): MetadataProblem | undefined {
  if (metadata === null || typeof metadata !== 'object') return undefined;
  if (nestedDeeperThan(metadata, limits.maxDepth)) {
    return { kind: 'depth', message: `metadata is nested deeper than metadata_max_depth = ${limits.maxDepth} levels` };
  }
  const text = JSON.stringify(metadata) as string | undefined; // undefined from a toJSON
  // A UTF-16 unit is 1 to 3 bytes of UTF-8: only a text longer than maxBytes / 3 units is counted.
  if (text === undefined || text.length * 3 <= limits.maxBytes) return undefined;
  const bytes = utf8Length(text);
  if (bytes > limits.maxBytes) {
    return { kind: 'size', message: `metadata is ${bytes} bytes as JSON, more than metadata_max_bytes = ${limits.maxBytes}` };
  }
  return undefined;
}

/**
 * True when `value` (an object or array is level 1) has objects or arrays nested deeper than
 * maxDepth: the children of an array are its elements, those of an object its own enumerable
 * string-keyed values (Object.values). The walk stops at the first level past the cap, so it
 * is never more than maxDepth + 1 calls deep; it recurses without allocating for a cap up to
 * RECURSIVE_MAX_DEPTH (the allocating iterative walk cost ~1 µs per log entry with metadata)
 * and walks iteratively above it.
 */
export function nestedDeeperThan(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (maxDepth <= RECURSIVE_MAX_DEPTH) return deeperThan(value, 1, maxDepth);
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [object, number];
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child as object, depth + 1]);
    }
  }
  return false;
}

/** The cap up to which nestedDeeperThan recurses (metadata_max_depth is 32). */
const RECURSIVE_MAX_DEPTH = 256;
const hasOwn = Object.prototype.hasOwnProperty;

function deeperThan(v: object, depth: number, maxDepth: number): boolean {
  if (depth > maxDepth) return true;
  if (Array.isArray(v)) {
    for (const child of v as unknown[]) {
      if (child !== null && typeof child === 'object' && deeperThan(child, depth + 1, maxDepth)) return true;
    }
    return false;
  }
  // for-in without its inherited keys: the keys of Object.values, without building the array
  for (const key in v) {
    if (!hasOwn.call(v, key)) continue;
    const child = (v as Record<string, unknown>)[key];
    if (child !== null && typeof child === 'object' && deeperThan(child, depth + 1, maxDepth)) return true;
  }
  return false;
}

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

// A lone high surrogate, a lone low surrogate, or NUL.
const UNSTORABLE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\u0000/g;
const HAS_SUSPECT = /[\u0000\ud800-\udfff]/;

/**
 * `text` with every lone surrogate and every NUL replaced by U+FFFD (one per code unit),
 * and how many were replaced. Neither can be stored faithfully as text: UTF-8 has no form
 * for a lone surrogate (SQLite stores bytes that read back as three U+FFFD), PostgreSQL
 * refuses NUL in text, and SQLite's length() stops at it.
 */
export function storableText(text: string): { text: string; replaced: number } {
  if (!HAS_SUSPECT.test(text)) return { text, replaced: 0 };
  let replaced = 0;
  const out = text.replace(UNSTORABLE, () => {
    replaced++;
    return '\ufffd';
  });
  return { text: out, replaced };
}
