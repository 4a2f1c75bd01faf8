import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deleteToken, readToken, TokenStoreError, tokenPath, writeToken } from '../../agent/token-store.js';
import { bundleChild } from './fixtures/bundle.js';
import { pause, randomInt, spawnNodeChild } from './fixtures/child.js';
import { tokenFor, tokenIndex } from './fixtures/token-format.js';

const TOKEN_A = 'c2VjcmV0LXRva2VuLW9wYXF1ZS1iYXNlNjR1cmwtMzJieXRlcw';
const TOKEN_B = 'bmV3LWxvbmctbGl2ZWQtdG9rZW4tZm9yLXRoZS1hZ2VudC0xMjM0NTY';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cortex-token-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const mode = (p: string): number => statSync(p).mode & 0o777;

describe('token store', () => {
  it('writes the token alone with mode 0600, reads it back, replaces and deletes it', async () => {
    expect(await readToken(dir)).toBeNull();
    await writeToken(dir, TOKEN_A);
    expect(readFileSync(tokenPath(dir), 'utf8')).toBe(TOKEN_A);
    expect(mode(tokenPath(dir))).toBe(0o600);
    expect(await readToken(dir)).toBe(TOKEN_A);
    await writeToken(dir, TOKEN_B);
    expect(await readToken(dir)).toBe(TOKEN_B);
    expect(mode(tokenPath(dir))).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['token']); // no temp file left behind
    expect(await deleteToken(dir)).toBe(true);
    expect(await deleteToken(dir)).toBe(false);
    expect(await readToken(dir)).toBeNull();
  });

  it('keeps mode 0600 whatever the umask', async () => {
    const old = process.umask(0o000);
    try {
      await writeToken(dir, TOKEN_A);
    } finally {
      process.umask(old);
    }
    expect(mode(tokenPath(dir))).toBe(0o600);
  });

  it('tolerates a trailing newline written by an operator', async () => {
    writeFileSync(tokenPath(dir), `${TOKEN_A}\n`);
    expect(await readToken(dir)).toBe(TOKEN_A);
    writeFileSync(tokenPath(dir), `${TOKEN_A}\r\n`);
    expect(await readToken(dir)).toBe(TOKEN_A);
  });

  it('never puts the token in an error message', async () => {
    const secret = 'short-secret-token';
    const errors: unknown[] = [];
    await writeToken(dir, secret).catch((e: unknown) => errors.push(e));
    await writeToken(dir, `${TOKEN_A} with space`).catch((e: unknown) => errors.push(e));
    await writeToken(join(dir, 'missing', 'dir'), TOKEN_A).catch((e: unknown) => errors.push(e));
    writeFileSync(tokenPath(dir), `${TOKEN_B} trailing junk\n\n`);
    await readToken(dir).catch((e: unknown) => errors.push(e));
    expect(errors).toHaveLength(4);
    for (const e of errors) {
      expect(e).toBeInstanceOf(TokenStoreError);
      const text = `${(e as Error).message} ${(e as Error).stack ?? ''} ${JSON.stringify(e)}`;
      for (const t of [secret, TOKEN_A, TOKEN_B]) expect(text).not.toContain(t);
    }
    expect((errors[2] as TokenStoreError).code).toBe('ENOENT');
    expect((errors[3] as TokenStoreError).message).toMatch(/malformed/);
  });
});

describe('token file atomicity under SIGKILL', () => {
  let bundleDir: string;
  let script: string;
  beforeAll(async () => {
    bundleDir = mkdtempSync(join(tmpdir(), 'cortex-token-child-'));
    script = await bundleChild(join(import.meta.dirname, 'fixtures', 'token-writer-child.ts'), bundleDir, 'token-writer-child');
  });
  afterAll(() => rmSync(bundleDir, { recursive: true, force: true }));

  it('leaves the old or the new token, never a partial one, always 0600', async () => {
    let last = -1; // highest index known to be complete on disk
    let next = 0;
    for (let i = 0; i < 15; i++) {
      const child = spawnNodeChild(script, [dir, String(next)]);
      await child.ready; // token `next` is fully written
      await pause(randomInt(25));
      child.child.kill('SIGKILL');
      expect((await child.exited).signal).toBe('SIGKILL');
      const text = readFileSync(tokenPath(dir), 'utf8');
      const k = tokenIndex(text);
      expect(k, `token file holds a partial or mixed token (${text.length} chars)`).not.toBeNull();
      expect(k!).toBeGreaterThanOrEqual(Math.max(last, next));
      expect(mode(tokenPath(dir))).toBe(0o600);
      expect(await readToken(dir)).toBe(tokenFor(k!));
      last = k!;
      next = k! + 2; // the child may have been between rename and exit on k + 1
    }
    // temp files of the killed writers are cleaned up by the next write
    await writeToken(dir, TOKEN_A);
    expect(readdirSync(dir)).toEqual(['token']);
  }, 60_000);
});
