// `npm run demo` (scripts/demo.mjs) stops by itself with --seconds, exits 0, printed rows
// and a probe answer, and removed its temporary folder.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { ROOT, requireDist } from '../support/procs.js';

beforeAll(() => requireDist());

it('node scripts/demo.mjs --seconds 8: rows, a probe answer, exactly-once summary, exit 0, nothing left behind', async () => {
  const child = spawn(process.execPath, [join(ROOT, 'scripts/demo.mjs'), '--seconds', '8'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  expect(code, `${out}\n${err}`).toBe(0);
  const rows = out.split('\n').filter((l) => /│ \d+ \S+Z \w+\s+file:/.test(l));
  expect(rows.length, out).toBeGreaterThan(0);
  expect(out).toContain('"total_bytes"');
  expect(out).toContain('sample.log → sample.log.1');
  expect(out).toMatch(/every line exactly once/);
  // the tail printed every stored row
  const stored = Number(/(\d+) rows stored for this host/.exec(out)?.[1]);
  expect(rows.length).toBe(stored);
  expect(out).toMatch(/recorded the close as "1000 final_seq=\d+"/);
  expect(out).toContain('server exited 0');
  const tmp = /temporary folder (\S+)/.exec(out)?.[1];
  expect(tmp).toBeTruthy();
  expect(existsSync(tmp!)).toBe(false);
  // no token in the output
  expect(out + err).not.toMatch(/"token"\s*:/);
}, 60_000);
