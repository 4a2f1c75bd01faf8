/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
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
export declare function metadataProblem(metadata: unknown, limits: MetadataLimits): MetadataProblem | undefined;
/**
 * True when `value` (an object or array is level 1) has objects or arrays nested deeper than
 * maxDepth: the children of an array are its elements, those of an object its own enumerable
 * string-keyed values (Object.values). The walk stops at the first level past the cap, so it
 * is never more than maxDepth + 1 calls deep; it recurses without allocating for a cap up to
 * RECURSIVE_MAX_DEPTH (the allocating iterative walk cost ~1 µs per log entry with metadata)
 * and walks iteratively above it.
 */
export declare function nestedDeeperThan(value: unknown, maxDepth: number): boolean;
/**
 * `text` with every lone surrogate and every NUL replaced by U+FFFD (one per code unit),
 * and how many were replaced. Neither can be stored faithfully as text: UTF-8 has no form
 * for a lone surrogate (SQLite stores bytes that read back as three U+FFFD), PostgreSQL
 * refuses NUL in text, and SQLite's length() stops at it.
 */
export declare function storableText(text: string): {
    text: string;
    replaced: number;
};
