// Where `enroll` takes the one-time token from (DECISIONS H7): a file (--token-file FILE)
// or stdin (--token -) keep it out of the command line, which every local process can
// read in /proc/<pid>/cmdline for as long as the command runs. A literal --token still
// works and is warned about.

import { readFileSync } from 'node:fs';
import { isatty } from 'node:tty';
import { checkToken, stripBom } from './token-store.js';

export class TokenInputError extends Error {
  override readonly name = 'TokenInputError';
  /** `canceled`: the user pressed Ctrl-C at the prompt (exit 130, not a usage error). */
  constructor(
    message: string,
    readonly reason: 'usage' | 'canceled' = 'usage',
    /** What to do, when the catalogue's E_TOKEN hint ("give the token with --token-file") does not fit. */
    readonly hint?: string,
  ) {
    super(message);
  }
}

export interface TokenInput {
  /** The token itself, or "-" for stdin. */
  token?: string | undefined;
  /** A file holding the token (optionally followed by a newline). */
  tokenFile?: string | undefined;
}

/** What `--token -` asks at a terminal (stderr: stdout stays for --json). */
export const TOKEN_PROMPT = 'cortex-agent: paste the one-time token (from "cortex-server agent issue"), then press Enter:';

/**
 * Reads all of stdin (fd 0); '' when it is closed or empty. A terminal (someone typed
 * `--token -` without a pipe) is asked for the token, which is read up to Enter without being
 * echoed (DECISIONS I20): reading it to its end waited for Ctrl-D without a word and looked like
 * a hang, and an echoed token stayed on the screen and in the terminal's scrollback. The
 * terminal reading is npm's own `read` package (readline with its output muted): the terminal
 * is in raw mode only while it reads, and is put back on Enter, on Ctrl-C (TokenInputError
 * `canceled`) and when the process exits.
 */
async function readStdin(): Promise<string> {
  if (isatty(0)) {
    const { read } = await import('read');
    try {
      return await read({ prompt: TOKEN_PROMPT, silent: true, terminal: true, input: process.stdin, output: process.stderr });
    } catch (err) {
      if (err instanceof Error && err.message === 'canceled') throw new TokenInputError('canceled at the token prompt (Ctrl-C); nothing was enrolled', 'canceled');
      throw err;
    } finally {
      // the muted prompt wrote no line end for the Enter; the next message starts on a line of its own
      process.stderr.write('\n');
      process.stdin.pause();
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
 * none or both are given, the file/stdin is unreadable or empty, or the token is not a token's
 * shape (checkToken), naming where it came from: `--token-file FILE`, `--token -`, `--token` (a
 * token file's short token was said as "--token: …", an option not given). The message never
 * contains the token.
 */
export async function readTokenInput(input: TokenInput, stdin: () => Promise<string> = readStdin): Promise<{ token: string; from: 'argument' | 'file' | 'stdin' }> {
  const read = await readRaw(input, stdin);
  const problem = checkToken(read.token);
  if (problem === null) return read;
  const { tokenFile } = input;
  if (read.from === 'file') throw new TokenInputError(`--token-file ${tokenFile}: ${problem}`, 'usage', `put the token that "cortex-server agent issue" printed in ${tokenFile}, on its first line, and nothing else`);
  if (read.from === 'stdin') throw new TokenInputError(`--token -: ${problem}`, 'usage', 'give it the token that "cortex-server agent issue" printed, on one line');
  throw new TokenInputError(`--token: ${problem}`);
}

async function readRaw(input: TokenInput, stdin: () => Promise<string>): Promise<{ token: string; from: 'argument' | 'file' | 'stdin' }> {
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
    const t = firstLine(await stdin());
    if (t === '') throw new TokenInputError('--token -: stdin is empty; pipe the token from "cortex-server agent issue" into it');
    return { token: t, from: 'stdin' };
  }
  return { token: token as string, from: 'argument' };
}

/** The text without a byte order mark (as DIR/token is read), surrounding whitespace, and anything after its first line. */
function firstLine(text: string): string {
  return (stripBom(text).split(/\r?\n/, 1)[0] ?? '').trim();
}
