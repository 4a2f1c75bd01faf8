import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const script = join(repoRoot, 'scripts', 'contract-validate.mjs');
const realExamples = readdirSync(join(repoRoot, 'contract', 'examples')).filter((f) => f.endsWith('.json'));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runValidate(args: string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [script, ...args], { cwd: repoRoot }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      done({ code, stdout, stderr });
    });
  });
}

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** A copy of contract/ in a temp dir, with `edit` applied to one example (parsed, then rewritten). */
function contractCopy(edit?: { file: string; change: (example: Record<string, unknown>) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'contract-copy-'));
  scratch.push(dir);
  cpSync(join(repoRoot, 'contract'), dir, { recursive: true });
  if (edit) {
    const path = join(dir, 'examples', edit.file);
    const example = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    edit.change(example);
    writeFileSync(path, JSON.stringify(example, null, 2));
  }
  return dir;
}

const failLine = (stderr: string, file: string) => stderr.split('\n').find((l) => l.startsWith('FAIL') && l.includes(file));

describe.concurrent('npm run contract:validate (ajv-cli over contract/examples)', () => {
  it('passes on the real contract with one PASS line per example', async () => {
    const run = await runValidate([]);
    expect(run.stderr).not.toContain('FAIL');
    expect(run.code).toBe(0);
    for (const file of realExamples) {
      expect(run.stderr).toMatch(new RegExp(`^PASS .*${file.replace(/\./g, '\\.')} `, 'm'));
    }
    expect(run.stdout).toContain(`${realExamples.length} example(s), ${realExamples.length} passed, 0 failed`);
  });

  it('fails naming the file and ajv\'s message when a request example breaks its params schema', async () => {
    const dir = contractCopy({
      file: 'logs.push.request.json',
      change: (ex) => {
        const params = ex['params'] as { entries: Record<string, unknown>[] };
        params.entries[1]!['severity'] = 'verbose';
      },
    });
    const run = await runValidate(['--contract', dir]);
    expect(run.code).toBe(1);
    const line = failLine(run.stderr, 'logs.push.request.json');
    expect(line).toBeDefined();
    expect(line).toContain('/params/entries/1/severity must be equal to one of the allowed values');
    // Only the broken example fails.
    expect(run.stderr.split('\n').filter((l) => l.startsWith('FAIL'))).toHaveLength(1);
    expect(run.stderr.split('\n').filter((l) => l.startsWith('PASS'))).toHaveLength(realExamples.length - 1);
  });

  it('checks error.data against the error-data.json definition errors.json names for the code', async () => {
    const dir = contractCopy({
      file: 'logs.push.error-backpressure.json',
      change: (ex) => {
        (ex['error'] as { data: Record<string, unknown> }).data = { retry_after_ms: 'soon' };
      },
    });
    const run = await runValidate(['--contract', dir]);
    expect(run.code).toBe(1);
    expect(failLine(run.stderr, 'logs.push.error-backpressure.json')).toContain('/error/data/retry_after_ms must be integer');
  });

  it('rejects an error code the method does not list, and an id on a notification', async () => {
    const dir = contractCopy({
      file: 'probe.request.error-timeout.json',
      change: (ex) => {
        (ex['error'] as { code: number }).code = -32020;
      },
    });
    const hb = join(dir, 'examples', 'agent.heartbeat.notification.json');
    writeFileSync(hb, JSON.stringify({ ...(JSON.parse(readFileSync(hb, 'utf8')) as object), id: 7 }));
    const run = await runValidate(['--contract', dir]);
    expect(run.code).toBe(1);
    expect(failLine(run.stderr, 'probe.request.error-timeout.json')).toContain('/error/code must be equal to one of the allowed values');
    expect(failLine(run.stderr, 'agent.heartbeat.notification.json')).toContain('must NOT have additional properties');
  });

  it('fails on an example that methods.json does not list', async () => {
    const dir = contractCopy();
    writeFileSync(join(dir, 'examples', 'logs.push.extra.json'), JSON.stringify({ jsonrpc: '2.0', id: 1, result: { up_to_seq: 1 } }));
    const run = await runValidate(['--contract', dir]);
    expect(run.code).toBe(1);
    expect(failLine(run.stderr, 'logs.push.extra.json')).toContain('not listed in contract/methods.json');
  });

  it('fails when a contract schema is rejected by ajv in strict mode', async () => {
    const dir = contractCopy();
    const path = join(dir, 'schemas', 'logs.push.params.json');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"maxItems"', '"maxItem"'));
    const run = await runValidate(['--contract', dir]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('unknown keyword: "maxItem"');
  });

  it('exits non-zero when ajv-cli cannot be run', async () => {
    const run = await runValidate(['--ajv', join(tmpdir(), 'no-such-dir', 'ajv')]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('cannot run ajv-cli');
  });

  it('exits 2 on bad usage', async () => {
    const run = await runValidate(['--no-such-flag']);
    expect(run.code).toBe(2);
  });
});
