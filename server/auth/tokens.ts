// Agent tokens: generation, BLAKE3 hashing, constant-time comparison.
// A token is a secret: never put one in a log line, an error message or an exception.
import { randomFillSync, timingSafeEqual } from 'node:crypto';
import { blake3 } from '@noble/hashes/blake3.js';

/** Bytes of randomness in a token (base64url of 32 bytes = 43 characters). */
export const TOKEN_BYTES = 32;
const HASH_HEX_LENGTH = 64;
const HEX = /^[0-9a-f]+$/;

/** A fresh token: 32 random bytes, base64url without padding (43 chars; the contract wants 32..256). */
export function generateToken(): string {
  // base64url may start with "-": such a token reads as an option on a command line
  // (`--token -x…`), so draw again (1 in 64 draws; the entropy lost is negligible).
  for (;;) {
    const token = drawTokenBytes();
    if (!token.startsWith('-')) return token;
  }
}

// randomBytes(32) per token costs a call into OpenSSL each (~15 µs, on every first
// enrollment); drawing POOL_TOKENS tokens' worth at once costs about the same as one. Each
// token's bytes are handed out once and zeroed as they are used (DECISIONS P7).
const POOL_TOKENS = 64;
const pool = Buffer.alloc(TOKEN_BYTES * POOL_TOKENS);
let poolOffset = pool.length;

function drawTokenBytes(): string {
  if (poolOffset >= pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = pool.subarray(poolOffset, poolOffset + TOKEN_BYTES);
  poolOffset += TOKEN_BYTES;
  const token = bytes.toString('base64url');
  bytes.fill(0);
  return token;
}

function hashBytes(token: string): Buffer {
  const digest = blake3(Buffer.from(token, 'utf8'));
  return Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength);
}

/** BLAKE3 of the token's UTF-8 bytes, lowercase hex (64 chars): what agents.token_hash holds. */
export function hashToken(token: string): string {
  return hashBytes(token).toString('hex');
}

function hashHexToBytes(hashHex: string): Buffer | undefined {
  if (hashHex.length !== HASH_HEX_LENGTH || !HEX.test(hashHex)) return undefined;
  return Buffer.from(hashHex, 'hex');
}

/**
 * Does BLAKE3(token) equal the stored hash? Constant time in the token and the hash
 * contents. NULL/malformed stored hashes never match.
 */
export function tokenMatches(token: string, hashHex: string | null | undefined): boolean {
  const presented = hashBytes(token);
  const stored = hashHex == null ? undefined : hashHexToBytes(hashHex);
  if (stored === undefined) {
    timingSafeEqual(presented, presented); // same work either way
    return false;
  }
  return timingSafeEqual(presented, stored);
}

/**
 * Compares two hex hashes in constant time (for a hash computed once and checked against
 * token_hash and token_hash_prev). NULL/malformed never match.
 */
export function hashesEqual(
  aHex: string | null | undefined,
  bHex: string | null | undefined,
): boolean {
  const a = aHex == null ? undefined : hashHexToBytes(aHex);
  const b = bHex == null ? undefined : hashHexToBytes(bHex);
  if (a === undefined || b === undefined) return false;
  return timingSafeEqual(a, b);
}
