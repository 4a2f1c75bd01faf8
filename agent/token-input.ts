// Where `enroll` takes the one-time token from (DECISIONS H7): a file (--token-file FILE)
// or stdin (--token -) keep it out of the command line, which every local process can
// read in /proc/<pid>/cmdline for as long as the command runs. A literal --token still
// works and is warned about.

import { readFileSync, readSync } from 'node:fs';
import { isatty } from 'node:tty';

export class TokenInputError extends Error {
  override readonly name = 'TokenInputError';
}

export interface TokenInput {
  /** The token itself, or "-" for stdin. */
  token?: string | undefined;
  /** A file holding the token (optionally followed by a newline). */
  tokenFile?: string | undefined;
}

/**
 * Reads all of stdin (fd 0) synchronously; '' when it is closed or empty. A terminal (someone
 * typed `--token -` without a pipe) is asked for the token and read up to Enter: reading it to
 * its end waited for Ctrl-D without a word, and looked like a hang.
 */
function readStdin(): string {
  if (isatty(0)) {
    process.stderr.write('cortex-agent: paste the one-time token (from "cortex-server agent issue"), then press Enter: ');
    const buf = Buffer.alloc(4096);
    try {
      const n = readSync(0, buf, 0, buf.length, null);
      return buf.toString('utf8', 0, n);
    } catch {
      return '';
    }
  }
  try {
    return readFileSync(0, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EAGAIN' || code === 'EOF') return '';
    throw err;
  }
}

/**
 * The token and where it came from. Throws TokenInputError (a usage error: exit 2) when
 * none or both are given, or the file/stdin is unreadable or empty. The message never
 * contains the token.
 */
export function readTokenInput(input: TokenInput, stdin: () => string = readStdin): { token: string; from: 'argument' | 'file' | 'stdin' } {
  const { token, tokenFile } = input;
  if (token !== undefined && tokenFile !== undefined) throw new TokenInputError('give either --token or --token-file, not both');
  if (token === undefined && tokenFile === undefined) throw new TokenInputError('--token-file FILE (or --token - to read stdin) is required');
  if (tokenFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(tokenFile, 'utf8');
    } catch (err) {
      throw new TokenInputError(`--token-file ${tokenFile}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
    const t = firstLine(text);
    if (t === '') throw new TokenInputError(`--token-file ${tokenFile} is empty; put the token from "cortex-server agent issue" in it`);
    return { token: t, from: 'file' };
  }
  if (token === '-') {
    const t = firstLine(stdin());
    if (t === '') throw new TokenInputError('--token -: stdin is empty; pipe the token from "cortex-server agent issue" into it');
    return { token: t, from: 'stdin' };
  }
  return { token: token as string, from: 'argument' };
}

/** The text without surrounding whitespace and without anything after its first line. */
function firstLine(text: string): string {
  return (text.split(/\r?\n/, 1)[0] ?? '').trim();
}
