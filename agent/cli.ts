#!/usr/bin/env node
// The cortex-agent executable (bin/cortex-agent.js, packaging/package.mjs): the commands are
// in cli-main.ts, which a site-specific build calls with its own probes instead of this file.

import { formatCliError } from '../common/errors.js';
import { main } from './cli-main.js';

// `cortex-agent status | head`: the reader went away; stop quietly, no EPIPE stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`cortex-agent: ${formatCliError('E_INTERNAL', `unexpected error: ${(err as Error).message}`)}\n`);
    process.exitCode = 1;
  },
);
