import { blake3 } from '@noble/hashes/blake3.js';
import { describe, expect, it } from 'vitest';
import { generateToken, hashesEqual, hashToken, tokenMatches } from '../../server/auth/tokens.js';

describe('tokens', () => {
  it('generates 43-char base64url tokens from 32 random bytes (within the contract 32..256)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const t = generateToken();
      expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(t, 'base64url')).toHaveLength(32);
      seen.add(t);
    }
    expect(seen.size).toBe(200);
  });

  it('hashes with BLAKE3 to lowercase hex', () => {
    // BLAKE3 of the empty input (official test vector)
    expect(hashToken('')).toBe('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
    const t = generateToken();
    expect(hashToken(t)).toBe(Buffer.from(blake3(Buffer.from(t, 'utf8'))).toString('hex'));
    expect(hashToken(t)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(t)).not.toBe(hashToken(`${t}x`));
  });

  it('matches a token against its hash, and nothing else', () => {
    const t = generateToken();
    const h = hashToken(t);
    expect(tokenMatches(t, h)).toBe(true);
    expect(tokenMatches(generateToken(), h)).toBe(false);
    expect(tokenMatches(t, null)).toBe(false);
    expect(tokenMatches(t, undefined)).toBe(false);
    expect(tokenMatches(t, '')).toBe(false);
    expect(tokenMatches(t, h.slice(0, 63))).toBe(false); // wrong length: no throw
    expect(tokenMatches(t, h.toUpperCase())).toBe(false); // not the stored form
    expect(tokenMatches(t, `${h}00`)).toBe(false);
    expect(hashesEqual(h, hashToken(t))).toBe(true);
    expect(hashesEqual(h, hashToken('other'))).toBe(false);
    expect(hashesEqual(h, null)).toBe(false);
    expect(hashesEqual(null, null)).toBe(false);
  });
});
