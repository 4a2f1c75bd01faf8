// Running the compiled CLI (dist/server/cli.js, bundled once per run: test/support/cli-bundles.ts) as a child process.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVER_CLI_BUNDLE } from '../support/cli-bundles.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = SERVER_CLI_BUNDLE;

/** Fails unless the bundled server CLI is there (test/support/global-setup.ts builds dist/ and bundles it before any file runs). */
export function requireServerCli(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run the tests with vitest (its global setup builds and bundles the CLIs)`);
}

export function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  port: number;
  stderr: () => string;
  /** The human banner (stdout). */
  stdout: () => string;
  exited: Promise<number | null>;
}

/** Spawns `serve` and waits for its "listening" log line. */
export function serve(args: string[], env: Record<string, string> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let out = '';
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolveP, reject) => {
    // Ready when the JSON "listening" line (stderr) and the human banner (stdout) are out.
    const check = () => {
      if (!out.includes('To enroll an agent')) return;
      // complete lines only: a chunk may end in the middle of one
      for (const line of err.split('\n').slice(0, -1)) {
        if (!line.startsWith('{')) continue;
        const rec = JSON.parse(line) as { msg?: string; url?: string };
        if (rec.msg === 'listening' && rec.url) {
          const port = Number(new URL(rec.url.replace(/^ws/, 'http')).port);
          resolveP({ child, url: rec.url, port, stderr: () => err, stdout: () => out, exited });
          return;
        }
      }
    };
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      check();
    });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      check();
    });
    void exited.then((code) => reject(new Error(`serve exited ${code} before listening: ${err}`)));
  });
}
