// What a failed write to stdout does (DECISIONS I14, H30). A command's reader going away
// (`agent list | head`: EPIPE) ends it quietly with exit 0. Any other failure (stdout a file on a
// full disk: ENOSPC; a terminal gone: EIO) is said in one line on stderr, exit 1 — it threw, and
// Node printed a stack trace. A long-running command (`serve`, `run`) writes to stdout only its
// banner: its work goes on whatever became of stdout (`serve > FILE` on a full disk did not start).
import { formatCliError, isDiskFullCode } from './errors.js';

let banner = false;

/** Installs the handler on `stream` (process.stdout) for `program` (cortex-agent, cortex-server). */
export function watchStdout(program: string, stream: NodeJS.WritableStream = process.stdout): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (banner) return;
    if (error.code === 'EPIPE') process.exit(0);
    const code = error.code ?? error.message;
    process.stderr.write(`${program}: ${formatCliError(isDiskFullCode(error.code) ? 'E_DISK_FULL' : 'E_FILE_ACCESS', `cannot write the output to stdout (${code}): it goes to a file or device that refuses it`)}\n`);
    process.exit(1);
  });
}

/** From now on stdout carries nothing the command needs (a long-running command's banner): its failures are ignored. */
export function stdoutIsBannerOnly(): void {
  banner = true;
}
