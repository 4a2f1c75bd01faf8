// One secret list, from the contract: every field a contract schema marks secret ("Secret:
// never logged." in its description) is SECRET_FIELDS, and both loggers (agent/log.ts,
// server/log.ts) redact each of them at every depth they cover.
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SECRET_FIELDS } from '@cortex/agent-protocol';
import { createCapturingLogger as agentLogger, REDACT_PATHS as AGENT_PATHS } from '../../agent/log.js';
import { createCapturingLogger as serverLogger, REDACT_PATHS as SERVER_PATHS } from '../../server/log.js';

const repo = resolve(import.meta.dirname, '..', '..');

/** The contract's secret fields, read straight from contract/ (not through codegen). */
function contractSecrets(): string[] {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    const props = (node as { properties?: Record<string, { description?: string }> }).properties;
    for (const [name, s] of Object.entries(props ?? {})) if (s?.description?.includes('Secret: never logged.')) found.add(name);
    Object.values(node).forEach(visit);
  };
  for (const dir of ['schemas', 'probes']) for (const f of readdirSync(join(repo, 'contract', dir)).filter((f) => f.endsWith('.json'))) visit(JSON.parse(readFileSync(join(repo, 'contract', dir, f), 'utf8')));
  return [...found].sort();
}

const SECRET = 'tok_0123456789abcdef0123456789abcdef';

describe('secret fields', () => {
  it('SECRET_FIELDS is exactly the contract fields marked secret (token, rotated_token, admin_token)', () => {
    expect([...SECRET_FIELDS].sort()).toEqual(contractSecrets());
    expect(contractSecrets()).toEqual(['admin_token', 'rotated_token', 'token']);
  });

  it('both loggers redact every secret field at the top level and three objects deep, with the same paths', () => {
    expect([...AGENT_PATHS].sort()).toEqual([...SERVER_PATHS].sort());
    const loggers = [
      ['agent', () => { const c = agentLogger(); return { logger: c.logger, text: () => c.raw.join('') }; }],
      ['server', () => { const c = serverLogger(); return { logger: c.logger, text: () => c.lines.join('\n') }; }],
    ] as const;
    for (const [name, make] of loggers) {
      for (const field of [...SECRET_FIELDS, 'authorization']) {
        const { logger, text } = make();
        logger.info({ [field]: SECRET, a: { [field]: SECRET, b: { [field]: SECRET, c: { [field]: SECRET } } } }, 'hello');
        expect(text(), `${name} ${field}`).not.toContain(SECRET);
        expect(text().match(/\[redacted\]/g)?.length, `${name} ${field}`).toBe(4);
      }
    }
  });
});
