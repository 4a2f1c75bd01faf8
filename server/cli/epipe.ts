// `cortex-server agent list | head`: when the reader of stdout goes away, stop quietly
// (exit 0) instead of printing an EPIPE stack trace.
export function exitQuietlyOnEpipe(stream: NodeJS.WriteStream = process.stdout): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
