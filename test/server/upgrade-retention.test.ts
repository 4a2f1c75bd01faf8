// A session must not keep its upgrade request alive: the socket's error listener used to be
// a closure of the 'upgrade' handler, which retained the request, its headers and head
// buffer for the whole session (~2 KB per connected agent, found by `bench fleet`).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT, requireDist } from '../support/procs.js';

it('an open session does not retain its upgrade request (http.IncomingMessage is collectable)', () => {
  requireDist();
  const r = spawnSync(process.execPath, ['--expose-gc', join(ROOT, 'test/server/fixtures/upgrade-retention.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
  expect(r.status, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout.trim()) as { upgrades: number; collected: number; sessions: number };
  expect(out.sessions).toBe(20);
  expect(out.upgrades).toBe(20);
  expect(out.collected).toBe(20);
});
