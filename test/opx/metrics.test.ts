// GET /metrics passes `promtool check metrics` with no warning, and has the fleet gauges
// cortex_agents{state}, cortex_agents_silent and the counter cortex_agents_gone_silent_total.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { revoke } from '../../server/db/agents.repository.js';
import { connectAgent, httpBase, metricValue } from '../server/control-helpers.js';
import { startTestServer, type TestServer } from '../server/wire.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ silent_after_secs: 60 });
});
afterAll(async () => {
  await t.close();
});

const scrape = async () => (await fetch(`${httpBase(t)}/metrics`)).text();
const hasPromtool = spawnSync('promtool', ['--version']).status === 0;

it('promtool check metrics: no warning, no error (default process metrics included)', async () => {
  await connectAgent(t); // a session, so that every family has samples
  const text = await scrape();
  expect(text).not.toMatch(/^cortex_process_nodejs_active_\w+_total /m);
  if (!hasPromtool) {
    // CI installs it (.ci/run); a developer machine without it checks the names above only
    expect(process.env['CI'], 'promtool is missing: apt-get install prometheus (it ships promtool)').not.toBe('true');
    return;
  }
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  expect(`${r.stdout}${r.stderr}`).toBe('');
  expect(r.status).toBe(0);
});

it('cortex_agents{state} counts agents by state; silent agents are a gauge and a counter of silences', async () => {
  const db = t.server.storage.db;
  const quiet = await t.issue('quiet');
  const gone = await t.issue('gone');
  await t.issue('never');
  const old = new Date(Date.now() - 3600_000).toISOString();
  await db.updateTable('agents').set({ connection_state: 'Disconnected', last_seen: old }).where('host_id', 'in', [quiet.host_id, gone.host_id]).execute();
  await revoke(db, gone.host_id); // revoked: not silent
  let text = await scrape();
  expect(metricValue(text, 'cortex_agents', { state: 'Active' })).toBe(1);
  expect(metricValue(text, 'cortex_agents', { state: 'Disconnected' })).toBe(1);
  expect(metricValue(text, 'cortex_agents', { state: 'NeverConnected' })).toBe(1);
  expect(metricValue(text, 'cortex_agents', { state: 'Revoked' })).toBe(1);
  expect(metricValue(text, 'cortex_agents_silent')).toBe(1);
  expect(metricValue(text, 'cortex_agents_gone_silent_total')).toBe(1);
  // still silent: counted once
  text = await scrape();
  expect(metricValue(text, 'cortex_agents_gone_silent_total')).toBe(1);
  // heard from again, then silent again: a second silence
  await db.updateTable('agents').set({ last_seen: new Date().toISOString() }).where('host_id', '=', quiet.host_id).execute();
  text = await scrape();
  expect(metricValue(text, 'cortex_agents_silent')).toBe(0);
  await db.updateTable('agents').set({ last_seen: old }).where('host_id', '=', quiet.host_id).execute();
  text = await scrape();
  expect(metricValue(text, 'cortex_agents_silent')).toBe(1);
  expect(metricValue(text, 'cortex_agents_gone_silent_total')).toBe(2);
});
