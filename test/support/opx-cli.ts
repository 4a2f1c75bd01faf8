// test/opx/helpers.ts's server(), without blocking the event loop: the compiled server CLI
// run to its exit through scli-pool.ts (at most four children at once), so that independent
// runs of one test overlap and an in-process server or relay keeps answering meanwhile.
import { cliAsync, type CliRun } from './scli-pool.js';

export type { CliRun };

/** `env` is added to this process's environment; a key set to undefined is removed from it. */
export function serverRun(args: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<CliRun> {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return cliAsync(args, { fullEnv: env as NodeJS.ProcessEnv, ...(options.cwd === undefined ? {} : { cwd: options.cwd }) });
}
