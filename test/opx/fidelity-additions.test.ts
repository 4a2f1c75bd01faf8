// The seed-fidelity check accepts exactly the recorded post-seed additions (start_at) and
// still reports any other field added beside it.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { checkFidelity } from '../contract/seed-fidelity.js';
import { ROOT } from './helpers.js';

const seedPath = process.env['CORTEX_SEED_PATH'] ? resolve(process.env['CORTEX_SEED_PATH']) : resolve(ROOT, '..', 'shared', 'seed', 'agent-protocol-v1.md');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

it.runIf(existsSync(seedPath))('start_at passes the fidelity check; an unrecorded field beside it does not', () => {
  const seed = readFileSync(seedPath, 'utf8');
  expect(checkFidelity(seed, join(ROOT, 'contract')).problems).toEqual([]);
  const dir = mkdtempSync(join(tmpdir(), 'opx-fidelity-'));
  dirs.push(dir);
  cpSync(join(ROOT, 'contract'), dir, { recursive: true });
  const defs = JSON.parse(readFileSync(join(dir, 'schemas/defs.json'), 'utf8')) as { $defs: { AgentConfig: { properties: { log_sources: { items: { properties: Record<string, unknown> } } } } } };
  defs.$defs.AgentConfig.properties.log_sources.items.properties['start_att'] = { type: 'string' };
  writeFileSync(join(dir, 'schemas/defs.json'), JSON.stringify(defs, null, 2));
  const problems = checkFidelity(seed, dir).problems;
  expect(problems.some((p) => p.includes('start_att: only in contract'))).toBe(true);
  expect(problems.some((p) => p.includes('/start_at:'))).toBe(false);
});
