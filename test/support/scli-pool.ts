// Running a compiled CLI (dist/…/cli.js) as a child process without blocking the test's
// event loop, so that independent invocations overlap. At most POOL children of this
// module run at once (a file that starts twenty does not starve the other vitest worker on a
// two-core machine); the rest wait their turn in order.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { CLI, ROOT } from '../server/spawn.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  /** Added to process.env (ignored when `fullEnv` is given); a key set to undefined is removed from it. */
  env?: Record<string, string | undefined>;
  /** The child's whole environment. */
  fullEnv?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The script, relative to the repository root (default: the bundled server CLI, test/support/cli-bundles.ts). */
  bin?: string;
  /** The script by absolute path (a bundle in a temp folder); wins over `bin`. */
  script?: string;
  /** Run as this user and group (root only). */
  uid?: number;
  gid?: number;
  /** SIGTERM after this long (as spawnSync's `timeout`). */
  timeoutMs?: number;
  /** Start at once, outside the pool (a run whose duration is asserted must not wait for a slot). */
  now?: boolean;
}

/** At most `size` holders at once; the others wait in order. */
export class Slots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async acquire(): Promise<void> {
    if (this.running >= this.size) await new Promise<void>((r) => this.waiting.push(r));
    else this.running++;
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next(); // the slot passes on: `running` stays
    else this.running--;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}

const POOL = 4;
const pool = new Slots(POOL);

function childEnv(opts: CliRunOptions): NodeJS.ProcessEnv {
  if (opts.fullEnv) return opts.fullEnv;
  const env: Record<string, string | undefined> = { ...process.env, ...opts.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  return env;
}

/** Runs the CLI with `args` to its exit: what spawn.ts's cli() returns, asynchronously. */
export function cliAsync(args: string[], opts: CliRunOptions = {}): Promise<CliRun> {
  const run = () =>
    new Promise<CliRun>((resolve, reject) => {
      const script = opts.script ?? (opts.bin === undefined ? CLI : join(ROOT, opts.bin));
      const child = spawn(process.execPath, [script, ...args], {
        cwd: opts.cwd ?? ROOT,
        env: childEnv(opts),
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(opts.uid === undefined ? {} : { uid: opts.uid }),
        ...(opts.gid === undefined ? {} : { gid: opts.gid }),
        ...(opts.timeoutMs === undefined ? {} : { timeout: opts.timeoutMs }),
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.once('error', reject);
      // 'close': the exit status and every byte of both pipes
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  return opts.now === true ? run() : pool.run(run);
}

/** Runs every argument list (overlapping, POOL at a time); the results in the order given. */
export function cliEach(argLists: string[][], opts: CliRunOptions = {}): Promise<CliRun[]> {
  return Promise.all(argLists.map((args) => cliAsync(args, opts)));
}
