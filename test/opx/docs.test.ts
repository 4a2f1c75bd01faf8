// The README and docs/ hold what a user needs and point to nothing outside the repository;
// their examples are valid; every option of the admin commands is documented.
import { cliAsync } from '../support/scli-pool.js';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { agentConfigIssues } from '../../server/config-check.js';
import { httpBase } from '../server/control-helpers.js';
import { requireServerCli } from '../server/spawn.js';
import { startTestServer, type TestServer } from '../server/wire.js';
import { AGENT_CLI, CLI, ROOT, type Run } from './helpers.js';

const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

beforeAll(() => requireServerCli(), 120_000);

// `--help` of each command, spawned once for the two tests that read it (they share nine
// commands), a few at a time.
const helps = new Map<string, Promise<Run>>();
function help(cli: string, command: string[]): Promise<Run> {
  const key = [cli, ...command].join(' ');
  let run = helps.get(key);
  if (!run) {
    run = cliAsync([...command, '--help'], { script: cli });
    helps.set(key, run);
  }
  return run;
}

it('README and docs link only to files inside the repository, and never to the design document', () => {
  expect(files).toEqual(expect.arrayContaining(['docs/README.md', 'docs/cli.md', 'docs/configuration.md', 'docs/operations.md']));
  for (const f of files) {
    const text = read(f);
    expect(text, f).not.toMatch(/\.\.\/shared|DESIGN\.md|\/work\//);
    for (const m of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
      const target = m[1] as string;
      if (/^[a-z]+:/.test(target)) continue;
      const abs = resolve(ROOT, dirname(f), target);
      expect(abs.startsWith(ROOT), `${f} → ${target}`).toBe(true);
      expect(existsSync(abs), `${f} → ${target}`).toBe(true);
    }
  }
  expect(read('README.md')).toContain('docs/cli.md');
});

it('the AgentConfig example of docs/configuration.md is valid and has every source kind, custom with its command', () => {
  const text = read('docs/configuration.md');
  const blocks = [...text.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1] as string) as Record<string, unknown>);
  const example = blocks.find((b) => Array.isArray(b['log_sources']) && (b['log_sources'] as unknown[]).length > 0) as { log_sources: { kind: string; command?: unknown }[] };
  expect(agentConfigIssues(example, 1000)).toEqual([]);
  expect(new Set(example.log_sources.map((s) => s.kind))).toEqual(new Set(['file', 'journald', 'docker', 'custom']));
  expect(Array.isArray(example.log_sources.find((s) => s.kind === 'custom')?.command)).toBe(true);
  expect(text).toContain('A line without a timestamp of its own keeps the time it was read');
  // the server config example is a valid ServerConfig
  const serverConfig = blocks.find((b) => 'listen' in b);
  expect(serverConfig).toBeDefined();
});

it('the options of the admin commands (as their --help lists them) are in docs/cli.md', async () => {
  const doc = read('docs/cli.md');
  // The options this work defines; other options may be added by others with their docs.
  const remote = ['--server', '--admin-token-file', '--ca', '--db', '--help'];
  const own: [string[], string[]][] = [
    [['agent', 'issue'], ['--host', '--host-id', '--group', '--json']],
    [['agent', 'list'], ['--group', '--groups', '--state', '--json']],
    [['agent', 'tail'], ['-n', '--follow', '--json', '--severity', '--source', '--grep', '--since', '--until']],
    [['agent', 'revoke'], []],
    [['agent', 'rotate'], ['--grace-secs']],
    [['agent', 'decommission'], ['--drain-secs']],
    [['agent', 'config'], ['--get', '--set', '--set-file', '--clear', '--group', '--default', '--apply-after']],
    [['agent', 'delete'], ['--purge']],
    [['probe'], ['--args', '--timeout-ms', '--url']],
  ];
  const runs = await Promise.all(own.map(([cmd]) => help(CLI, cmd)));
  for (const [i, [cmd, opts]] of own.entries()) {
    const usage = runs[i]!;
    expect(usage.code, cmd.join(' ')).toBe(0);
    for (const opt of [...remote, ...opts]) {
      expect(usage.stdout, `${cmd.join(' ')} --help lists ${opt}`).toContain(opt === '--help' ? 'Usage:' : opt);
      expect(doc, `docs/cli.md documents ${cmd.join(' ')} ${opt}`).toContain(opt);
    }
  }
});

it('every option any command lists in its --help is in docs/cli.md, every server config key in docs/configuration.md', async () => {
  // The hand-picked list above pins what each option means; this one catches an option added
  // to a command without a word in the docs (seven server and agent options had none).
  const doc = read('docs/cli.md');
  const serverCommands = ['serve', 'agent issue', 'agent list', 'agent tail', 'agent revoke', 'agent rotate', 'agent decommission', 'agent config', 'agent group', 'agent delete', 'agent reset-seq', 'agent tokens', 'agent withdraw', 'audit', 'probe', 'backup', 'migrate'];
  const agentCommands = ['enroll', 'run', 'status', 'buffer check'];
  const missing: string[] = [];
  const groups = [[CLI, serverCommands], [AGENT_CLI, agentCommands]] as const;
  const runs = await Promise.all(groups.map(([cli, commands]) => Promise.all(commands.map((command) => help(cli, command.split(' '))))));
  for (const [g, [, commands]] of groups.entries()) {
    for (const [i, command] of commands.entries()) {
      const usage = runs[g]![i]!;
      expect(usage.code, `${command} --help`).toBe(0);
      const options = new Set([...usage.stdout.matchAll(/(?<![\w-])(--[a-z][a-z0-9-]*)/g)].map((m) => m[1] as string));
      expect(options.size, `${command} --help lists options`).toBeGreaterThan(0);
      for (const o of options) if (!doc.includes(o)) missing.push(`${command} ${o}`);
    }
  }
  expect(missing).toEqual([]);
  const config = read('docs/configuration.md');
  const keys = Object.keys((JSON.parse(read('contract/schemas/server-config.json')) as { properties: Record<string, unknown> }).properties);
  expect(keys.length).toBeGreaterThan(10);
  expect(keys.filter((k) => !config.includes(`\`${k}\``))).toEqual([]);
});

it('docs/cli.md names every probe of the contract', () => {
  const probes = (JSON.parse(read('contract/probes/probes.json')) as { probes: { name: string }[] }).probes.map((p) => p.name);
  const section = read('docs/cli.md').split('### probe')[1]?.split('\n## ')[0] ?? '';
  expect(probes.length).toBeGreaterThan(0);
  for (const name of probes) expect(section, `docs/cli.md (probe) names ${name}`).toContain(`\`${name}\``);
});

let t: TestServer | undefined;
afterAll(async () => {
  await t?.close();
});

it("the alert rule's metrics exist in GET /metrics", async () => {
  t = await startTestServer();
  const scrape = await (await fetch(`${httpBase(t)}/metrics`)).text();
  const rules = read('docs/operations.md');
  const used = new Set([...rules.matchAll(/\b(cortex_agents\w*)/g)].map((m) => m[1] as string));
  expect(used.size).toBeGreaterThanOrEqual(2);
  for (const name of used) expect(scrape, name).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
});
