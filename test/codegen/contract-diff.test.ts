/**
 * contract:diff (issue 7, seed 9): one fixture pair per rule, built from a copy of the real
 * contract/ (as committed at HEAD, so concurrent edits of the working tree cannot make the
 * fixtures inconsistent) with exactly one thing mutated; plus exit codes through the
 * compiled CLI, and git refs (a scratch repository and this repository's HEAD).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract, type Contract } from '../../codegen/contract.js';
import { diffContracts, evaluate, type Change } from '../../codegen/diff/contract-diff.js';
import { cliAsync } from '../support/scli-pool.js';

const repo = resolve(import.meta.dirname, '..', '..');
const cli = join(repo, 'dist/codegen/diff/cli.js');
const temps: string[] = [];
const tmp = (tag = 'fixture') => {
  const d = mkdtempSync(join(tmpdir(), `cortex-diff-${tag}-`));
  temps.push(d);
  return d;
};
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

let base: string;
let baseC: Contract;

beforeAll(() => {
  // The compiled CLI must be current (npm test builds first; a direct vitest run may not).
  const sources = [...readdirSync(join(repo, 'codegen/diff')).map((f) => join(repo, 'codegen/diff', f)), join(repo, 'codegen/contract.ts')];
  const stale = !existsSync(cli) || sources.some((f) => statSync(f).mtimeMs > statSync(cli).mtimeMs);
  if (stale) {
    const b = spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-b', join(repo, 'codegen')], { encoding: 'utf8' });
    if (!existsSync(cli)) throw new Error(`tsc -b codegen did not produce ${cli}:\n${b.stdout}${b.stderr}`);
  }
  base = tmp('base');
  const archive = spawnSync('git', ['archive', '--format=tar', 'HEAD:contract'], { cwd: repo, maxBuffer: 1 << 30 });
  expect(archive.status).toBe(0);
  expect(spawnSync('tar', ['-x', '-C', base], { input: archive.stdout }).status).toBe(0);
  baseC = loadContract(base);
}, 120_000);

// ---------------------------------------------------------------------------------------
// fixture helpers

type Json = any;
function edit(dir: string, rel: string, fn: (j: Json) => void) {
  const p = join(dir, rel);
  const j = JSON.parse(readFileSync(p, 'utf8'));
  fn(j);
  writeFileSync(p, JSON.stringify(j, null, 2) + '\n');
}
function fixture(mutate: (dir: string) => void): string {
  const d = tmp();
  cpSync(base, d, { recursive: true });
  mutate(d);
  return d;
}
function diff(mutate: (dir: string) => void): Change[] {
  return diffContracts(baseC, loadContract(fixture(mutate)));
}
const method = (j: Json, name: string) => j.methods.find((m: Json) => m.name === name);
const def = (j: Json, name: string) => j.$defs[name];
/** Removes an error code everywhere it is referenced, so the fixture still loads. */
function dropErrorRefs(d: string, code: number) {
  edit(d, 'methods.json', (j) => j.methods.forEach((m: Json) => (m.errors = m.errors.filter((c: number) => c !== code))));
  edit(d, 'state-machine.json', (j) => j.transitions.forEach((t: Json) => t.errors && (t.errors = t.errors.filter((c: number) => c !== code))));
}
function renumberErrorRefs(d: string, from: number, to: number) {
  edit(d, 'methods.json', (j) => j.methods.forEach((m: Json) => (m.errors = m.errors.map((c: number) => (c === from ? to : c)))));
  edit(d, 'state-machine.json', (j) => j.transitions.forEach((t: Json) => t.errors && (t.errors = t.errors.map((c: number) => (c === from ? to : c)))));
}

function only(changes: Change[], kind: Change['kind'], rule: string, where?: string): Change {
  const hits = changes.filter((c) => c.rule === rule && (where === undefined || c.where === where));
  expect(hits, `${rule} at ${where ?? '*'} in\n${changes.map((c) => `${c.kind} ${c.rule} at ${c.where}: ${c.detail}`).join('\n')}`).toHaveLength(1);
  expect(hits[0]!.kind).toBe(kind);
  return hits[0]!;
}
const kinds = (changes: Change[]) => new Set(changes.map((c) => c.kind));

// ---------------------------------------------------------------------------------------

describe('diffContracts: one fixture pair per rule', () => {
  it('no change: nothing reported', () => {
    expect(diff(() => {})).toEqual([]);
  });

  it('formatting-only rewrite is additive and nothing else', () => {
    const c = diff((d) => edit(d, 'methods.json', () => {}));
    expect(c.map((x) => x.rule)).toEqual(['formatting-only']);
    expect(c[0]!.kind).toBe('additive');
  });

  describe('methods', () => {
    it('removed method is breaking', () => {
      const c = diff((d) => {
        edit(d, 'methods.json', (j) => {
          for (const ex of method(j, 'config.update').examples) unlinkSync(join(d, 'examples', ex.file));
          j.methods = j.methods.filter((m: Json) => m.name !== 'config.update');
        });
      });
      only(c, 'breaking', 'method-removed', 'methods.json:config.update');
      expect(kinds(c).has('breaking')).toBe(true);
    });

    it('renamed method is a removal (breaking) plus an addition', () => {
      const c = diff((d) => edit(d, 'methods.json', (j) => (method(j, 'config.update').name = 'config.push')));
      const r = only(c, 'breaking', 'method-removed', 'methods.json:config.update');
      expect(r.detail).toContain('renamed to config.push?');
      only(c, 'additive', 'method-added', 'methods.json:config.push');
    });

    it('added method is additive', () => {
      const c = diff((d) =>
        edit(d, 'methods.json', (j) =>
          j.methods.push({ name: 'agent.ping', section: '4.9', direction: 'agent_to_server', kind: 'notification', summary: 'ping', params: 'agent.heartbeat.params.json', errors: [], examples: [] }),
        ),
      );
      only(c, 'additive', 'method-added', 'methods.json:agent.ping');
      expect(kinds(c)).toEqual(new Set(['additive']));
    });

    it('direction changed is breaking', () => {
      const c = diff((d) => edit(d, 'methods.json', (j) => (method(j, 'agent.heartbeat').direction = 'server_to_agent')));
      only(c, 'breaking', 'method-direction-changed', 'methods.json:agent.heartbeat');
    });

    it('kind changed is breaking', () => {
      const c = diff((d) =>
        edit(d, 'methods.json', (j) => {
          const m = method(j, 'agent.heartbeat');
          m.kind = 'request';
          m.result = 'logs.push.result.json';
        }),
      );
      only(c, 'breaking', 'method-kind-changed', 'methods.json:agent.heartbeat');
    });

    it('error added to a method list is additive, removed is breaking', () => {
      const add = diff((d) => edit(d, 'methods.json', (j) => method(j, 'logs.push').errors.push(-32603)));
      only(add, 'additive', 'method-error-added', 'methods.json:logs.push');
      const rm = diff((d) => edit(d, 'methods.json', (j) => (method(j, 'logs.push').errors = method(j, 'logs.push').errors.filter((c: number) => c !== -32020))));
      only(rm, 'breaking', 'method-error-removed', 'methods.json:logs.push');
    });
  });

  describe('fields', () => {
    const HELLO = 'schemas/agent.hello.params.json';
    it('removed field in params is breaking', () => {
      const c = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => delete j.properties.resume_from_seq));
      only(c, 'breaking', 'field-removed', `${HELLO}#/properties/resume_from_seq`);
    });

    it('removed field in a shared def is breaking and names the methods that reach it through $ref', () => {
      const c = diff((d) => edit(d, 'schemas/defs.json', (j) => delete def(j, 'LogBatchEntry').properties.facility));
      const r = only(c, 'breaking', 'field-removed', 'schemas/defs.json#/$defs/LogBatchEntry/properties/facility');
      expect(r.detail).toContain('used by: logs.push params');
    });

    it('removed field in a result schema is breaking', () => {
      const c = diff((d) => edit(d, 'schemas/logs.push.result.json', (j) => delete j.properties[Object.keys(j.properties)[0]!]));
      expect(c.some((x) => x.rule === 'field-removed' && x.kind === 'breaking' && x.where.startsWith('schemas/logs.push.result.json#/properties/'))).toBe(true);
    });

    it('renamed field is a removal (breaking) plus a new required field (breaking)', () => {
      const c = diff((d) =>
        edit(d, 'schemas/agent.hello.params.json', (j) => {
          j.properties.host_name = j.properties.hostname;
          delete j.properties.hostname;
          j.required = j.required.map((r: string) => (r === 'hostname' ? 'host_name' : r));
        }),
      );
      const r = only(c, 'breaking', 'field-removed', `${HELLO}#/properties/hostname`);
      expect(r.detail).toContain('renamed to "host_name"?');
      only(c, 'breaking', 'required-field-added', `${HELLO}#/properties/host_name`);
    });

    it('new required field without default is breaking; with a default it is additive (seed 9)', () => {
      const c = diff((d) =>
        edit(d, 'schemas/agent.hello.params.json', (j) => {
          j.properties.zone = { type: 'string' };
          j.required.push('zone');
        }),
      );
      only(c, 'breaking', 'required-field-added', `${HELLO}#/properties/zone`);
      const withDefault = diff((d) =>
        edit(d, 'schemas/agent.hello.params.json', (j) => {
          j.properties.zone = { type: 'string', default: 'eu' };
          j.required.push('zone');
        }),
      );
      only(withDefault, 'additive', 'required-field-added-with-default', `${HELLO}#/properties/zone`);
    });

    it('new optional field is additive, and the report warns about additionalProperties:false', () => {
      const c = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.zone = { type: 'string' })));
      const r = only(c, 'additive', 'optional-field-added', `${HELLO}#/properties/zone`);
      expect(r.detail).toContain('additionalProperties:false');
      expect(kinds(c)).toEqual(new Set(['additive']));
    });

    it('optional field made required is breaking; required made optional is additive', () => {
      const req = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => j.properties.platform.required.push('distro')));
      only(req, 'breaking', 'field-made-required', `${HELLO}#/properties/platform/properties/distro`);
      const opt = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.required = j.required.filter((r: string) => r !== 'hostname'))));
      only(opt, 'additive', 'field-made-optional', `${HELLO}#/properties/hostname`);
    });
  });

  describe('types, enums, ranges, patterns, formats', () => {
    const HELLO = 'schemas/agent.hello.params.json';
    it('type narrowed ["string","null"] → "string" is breaking', () => {
      const c = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.platform.properties.distro.type = 'string')));
      const r = only(c, 'breaking', 'type-narrowed', `${HELLO}#/properties/platform/properties/distro`);
      expect(r.detail).toContain('no longer accepts null');
    });

    it('number → integer is breaking, integer → number is additive', () => {
      const n = diff((d) => edit(d, 'schemas/defs.json', (j) => (def(j, 'MetricSample').properties.value.type = 'integer')));
      only(n, 'breaking', 'type-narrowed', 'schemas/defs.json#/$defs/MetricSample/properties/value');
      const w = diff((d) => edit(d, 'schemas/logs.push.params.json', (j) => (j.properties.seq_start.type = 'number')));
      only(w, 'additive', 'type-widened', 'schemas/logs.push.params.json#/properties/seq_start');
    });

    it('enum value removed is breaking, added is additive', () => {
      const rm = diff((d) => edit(d, 'schemas/defs.json', (j) => (def(j, 'Severity').enum = def(j, 'Severity').enum.filter((s: string) => s !== 'debug'))));
      const r = only(rm, 'breaking', 'enum-value-removed', 'schemas/defs.json#/$defs/Severity');
      expect(r.detail).toContain('"debug"');
      expect(r.detail).toContain('used by: logs.push params');
      const add = diff((d) => edit(d, 'schemas/defs.json', (j) => def(j, 'Severity').enum.push('trace')));
      only(add, 'additive', 'enum-value-added', 'schemas/defs.json#/$defs/Severity');
    });

    it('const changed is breaking', () => {
      const c = diff((d) => edit(d, 'schemas/jsonrpc.json', (j) => (def(j, 'JsonRpcRequest').properties.jsonrpc.const = '2.1')));
      only(c, 'breaking', 'const-changed', 'schemas/jsonrpc.json#/$defs/JsonRpcRequest/properties/jsonrpc');
    });

    it.each([
      ['minimum raised', (j: Json): unknown => (j.properties.resume_from_seq.minimum = 1), 'resume_from_seq', 'breaking', 'range-narrowed'],
      ['maximum lowered', (j: Json): unknown => (j.properties.capabilities.properties.max_batch_entries.maximum = 1000), 'capabilities/properties/max_batch_entries', 'breaking', 'range-narrowed'],
      ['minLength raised', (j: Json): unknown => (j.properties.hostname.minLength = 2), 'hostname', 'breaking', 'range-narrowed'],
      ['maxLength lowered', (j: Json): unknown => (j.properties.token.maxLength = 128), 'token', 'breaking', 'range-narrowed'],
      ['maxLength added', (j: Json): unknown => (j.properties.agent_version.maxLength = 64), 'agent_version', 'breaking', 'range-narrowed'],
      ['maxLength raised', (j: Json): unknown => (j.properties.token.maxLength = 512), 'token', 'additive', 'range-widened'],
      ['minimum lowered', (j: Json): unknown => (j.properties.capabilities.properties.max_batch_entries.minimum = 0), 'capabilities/properties/max_batch_entries', 'additive', 'range-widened'],
      ['minLength removed', (j: Json): unknown => delete j.properties.hostname.minLength, 'hostname', 'additive', 'range-widened'],
    ] as const)('%s in agent.hello params', (_name, mutate, prop, kind, rule) => {
      const c = diff((d) => edit(d, 'schemas/agent.hello.params.json', mutate));
      only(c, kind, rule, `${HELLO}#/properties/${prop}`);
    });

    it('a bound on an integer that keeps every integer within ±(2^53 − 1) is range-interoperable (additive, DECISIONS C16); one inside that range is range-narrowed', () => {
      const at = `${HELLO}#/properties/resume_from_seq`;
      only(diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.resume_from_seq.maximum = Number.MAX_SAFE_INTEGER))), 'additive', 'range-interoperable', at);
      only(diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.resume_from_seq.exclusiveMaximum = 2 ** 53))), 'additive', 'range-interoperable', at);
      only(diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.resume_from_seq.maximum = Number.MAX_SAFE_INTEGER - 1))), 'breaking', 'range-narrowed', at);
      only(diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.resume_from_seq.exclusiveMaximum = Number.MAX_SAFE_INTEGER))), 'breaking', 'range-narrowed', at);
      // the envelope's id, unbounded (as before DECISIONS C16) against bounded as contract/schemas/jsonrpc.json has it
      const ID = 'schemas/jsonrpc.json#/$defs/JsonRpcId';
      const idBounds = (min: number | undefined, max: number | undefined) => (j: Json) => {
        const id = def(j, 'JsonRpcId');
        delete id.minimum;
        delete id.maximum;
        if (min !== undefined) id.minimum = min;
        if (max !== undefined) id.maximum = max;
      };
      const unbounded = loadContract(fixture((d) => edit(d, 'schemas/jsonrpc.json', idBounds(undefined, undefined))));
      const between = (min: number, max: number) => diffContracts(unbounded, loadContract(fixture((d) => edit(d, 'schemas/jsonrpc.json', idBounds(min, max))))).filter((c) => c.where === ID);
      expect(between(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER).map((c) => `${c.kind} ${c.rule}`)).toEqual(['additive range-interoperable', 'additive range-interoperable']);
      expect(between(-(2 ** 31), Number.MAX_SAFE_INTEGER).map((c) => `${c.kind} ${c.rule}`)).toEqual(['breaking range-narrowed', 'additive range-interoperable']);
    });

    it('minItems raised / maxItems lowered are breaking, maxItems raised is additive', () => {
      const W = 'schemas/logs.push.params.json#/properties/entries';
      only(diff((d) => edit(d, 'schemas/logs.push.params.json', (j) => (j.properties.entries.minItems = 2))), 'breaking', 'range-narrowed', W);
      only(diff((d) => edit(d, 'schemas/logs.push.params.json', (j) => (j.properties.entries.maxItems = 500))), 'breaking', 'range-narrowed', W);
      only(diff((d) => edit(d, 'schemas/logs.push.params.json', (j) => (j.properties.entries.maxItems = 2000))), 'additive', 'range-widened', W);
    });

    it('pattern changed is breaking (cannot prove it is not narrower); removed is additive', () => {
      const c = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.agent_version.pattern = '^\\d+\\.\\d+\\.\\d+$')));
      const r = only(c, 'breaking', 'pattern-changed', `${HELLO}#/properties/agent_version`);
      expect(r.detail).toContain('pattern changed (cannot prove it is not narrower)');
      const rm = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => delete j.properties.agent_version.pattern));
      only(rm, 'additive', 'pattern-removed', `${HELLO}#/properties/agent_version`);
    });

    it('format added or changed is breaking; removed is additive', () => {
      only(diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.hostname.format = 'hostname'))), 'breaking', 'format-changed', `${HELLO}#/properties/hostname`);
      only(diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.host_id.format = 'uri'))), 'breaking', 'format-changed', `${HELLO}#/properties/host_id`);
      only(diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => delete j.properties.host_id.format)), 'additive', 'format-removed', `${HELLO}#/properties/host_id`);
    });

    it('additionalProperties tightened (absent → false) is breaking; false → true is additive', () => {
      const t = diff((d) => edit(d, 'schemas/defs.json', (j) => (def(j, 'LogBatchEntry').properties.metadata.additionalProperties = false)));
      only(t, 'breaking', 'additional-properties-tightened', 'schemas/defs.json#/$defs/LogBatchEntry/properties/metadata');
      const r = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.additionalProperties = true)));
      only(r, 'additive', 'additional-properties-relaxed', HELLO);
      const s = diff((d) => edit(d, 'schemas/defs.json', (j) => (def(j, 'MetricSample').properties.labels.additionalProperties = false)));
      only(s, 'breaking', 'additional-properties-tightened', 'schemas/defs.json#/$defs/MetricSample/properties/labels');
    });

    it('oneOf branch removed is breaking, added is additive', () => {
      const rm = diff((d) => edit(d, 'schemas/defs.json', (j) => def(j, 'LogSource').oneOf.splice(2, 1)));
      only(rm, 'breaking', 'oneOf-branch-removed');
      const add = diff((d) => edit(d, 'schemas/defs.json', (j) => def(j, 'LogSource').oneOf.push({ type: 'string', pattern: '^k8s:.+$' })));
      only(add, 'additive', 'oneOf-branch-added');
    });

    it('an unknown keyword that changed is breaking (cannot prove compatible)', () => {
      const c = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.hostname.contentEncoding = 'base64')));
      only(c, 'breaking', 'keyword-changed', `${HELLO}#/properties/hostname`);
    });

    it('walks $ref: inlining a shared def (same content) is no change; a retargeted $ref is compared structurally', () => {
      const inline = diff((d) => {
        const defs = JSON.parse(readFileSync(join(d, 'schemas/defs.json'), 'utf8'));
        edit(d, 'schemas/defs.json', (j) => (def(j, 'LogBatchEntry').properties.severity = defs.$defs.Severity));
      });
      expect(inline).toEqual([{ kind: 'additive', rule: 'ref-refactored', where: 'schemas/defs.json#/$defs/LogBatchEntry/properties/severity', detail: expect.stringContaining('$ref defs.json#/$defs/Severity inlined') }]);
      const narrowed = diff((d) => {
        const defs = JSON.parse(readFileSync(join(d, 'schemas/defs.json'), 'utf8'));
        const narrow = { ...defs.$defs.Severity, enum: ['emerg', 'alert'] };
        edit(d, 'schemas/defs.json', (j) => (def(j, 'LogBatchEntry').properties.severity = narrow));
      });
      expect(narrowed.filter((x) => x.rule === 'enum-value-removed' && x.where === 'schemas/defs.json#/$defs/LogBatchEntry/properties/severity')).toHaveLength(6);
    });

    it('annotations are additive (documentation only)', () => {
      const c = diff((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.description = 'reworded')));
      only(c, 'additive', 'annotation-changed', HELLO);
    });

    it('schema file added is additive, removed is breaking', () => {
      only(diff((d) => writeFileSync(join(d, 'schemas/extra.json'), JSON.stringify({ $id: 'https://cortex.invalid/schemas/v1/extra.json', title: 'Extra', type: 'object' }))), 'additive', 'schema-file-added', 'schemas/extra.json');
      only(diff((d) => unlinkSync(join(d, 'schemas/server-config.json'))), 'breaking', 'schema-file-removed', 'schemas/server-config.json');
    });
  });

  describe('error codes and close codes', () => {
    it('error code removed is breaking', () => {
      const c = diff((d) => {
        edit(d, 'errors.json', (j) => (j.errors = j.errors.filter((e: Json) => e.code !== -32004)));
        dropErrorRefs(d, -32004);
      });
      only(c, 'breaking', 'error-code-removed', 'errors.json:-32004');
    });

    it('error code renumbered is breaking (one line, not removed + added)', () => {
      const c = diff((d) => {
        edit(d, 'errors.json', (j) => (j.errors.find((e: Json) => e.code === -32004).code = -32006));
        renumberErrorRefs(d, -32004, -32006);
      });
      only(c, 'breaking', 'error-code-renumbered', 'errors.json:-32004');
      expect(c.some((x) => x.rule === 'error-code-added' || x.rule === 'error-code-removed')).toBe(false);
    });

    it('error meaning changed is breaking', () => {
      const c = diff((d) => edit(d, 'errors.json', (j) => (j.errors.find((e: Json) => e.code === -32004).meaning = 'Something else entirely.')));
      only(c, 'breaking', 'error-meaning-changed', 'errors.json:-32004');
    });

    it('a code reused under another name is breaking', () => {
      const c = diff((d) => edit(d, 'errors.json', (j) => (j.errors.find((e: Json) => e.code === -32004).name = 'HostQuarantined')));
      only(c, 'breaking', 'error-code-reused', 'errors.json:-32004');
    });

    it('new error code is additive', () => {
      const c = diff((d) => edit(d, 'errors.json', (j) => j.errors.push({ code: -32040, name: 'NewThing', direction: 'server', meaning: 'New.' })));
      only(c, 'additive', 'error-code-added', 'errors.json:-32040');
      expect(kinds(c)).toEqual(new Set(['additive']));
    });

    it('error close code changed is breaking', () => {
      const c = diff((d) => edit(d, 'errors.json', (j) => (j.errors.find((e: Json) => e.code === -32002).close_code = 4001)));
      only(c, 'breaking', 'error-close-code-changed', 'errors.json:-32002');
    });

    it('close code removed or changed is breaking; added is additive', () => {
      only(diff((d) => edit(d, 'close-codes.json', (j) => (j.close_codes = j.close_codes.filter((c: Json) => c.code !== 1012)))), 'breaking', 'close-code-removed', 'close-codes.json:1012');
      only(diff((d) => edit(d, 'close-codes.json', (j) => (j.close_codes.find((c: Json) => c.code === 1012).meaning = 'Other.'))), 'breaking', 'close-code-changed', 'close-codes.json:1012');
      only(diff((d) => edit(d, 'close-codes.json', (j) => j.close_codes.push({ code: 4003, name: 'Quarantined', meaning: 'New.', source: 'design' }))), 'additive', 'close-code-added', 'close-codes.json:4003');
    });
  });

  describe('versioning and limits', () => {
    const bump = (d: string, v: number | undefined, sp: string | undefined) =>
      edit(d, 'limits.json', (j) => {
        if (v !== undefined) j.limits.protocol_version.value = v;
        if (sp !== undefined) j.limits.subprotocol.value = sp;
      });

    it('subprotocol changed alone is breaking and not allowed', () => {
      const n = loadContract(fixture((d) => bump(d, undefined, 'cortex.v2')));
      const r = evaluate(baseC, n);
      only(r.changes, 'breaking', 'subprotocol-changed-alone', 'limits.json:subprotocol');
      expect([r.allowed, r.exit_code]).toEqual([false, 1]);
    });

    it('protocol_version changed alone is breaking and not allowed', () => {
      const r = evaluate(baseC, loadContract(fixture((d) => bump(d, 2, undefined))));
      only(r.changes, 'breaking', 'protocol-version-changed-alone', 'limits.json:protocol_version');
      expect(r.exit_code).toBe(1);
    });

    it('both bumped together (cortex.vN with N) allow breaking changes', () => {
      const r = evaluate(
        baseC,
        loadContract(
          fixture((d) => {
            bump(d, 2, 'cortex.v2');
            edit(d, 'schemas/agent.hello.params.json', (j) => delete j.properties.resume_from_seq);
          }),
        ),
      );
      only(r.changes, 'breaking', 'protocol-version-bumped', 'limits.json:protocol_version');
      expect([r.allowed, r.exit_code, r.breaking]).toEqual([true, 0, 2]);
    });

    it('both changed but inconsistently is breaking', () => {
      const r = evaluate(baseC, loadContract(fixture((d) => bump(d, 2, 'cortex.v3'))));
      only(r.changes, 'breaking', 'version-mismatch');
      expect(r.exit_code).toBe(1);
    });

    it.each([
      ['max_frame_bytes', 524288, 'breaking', 'limit-lowered'],
      ['max_frame_bytes', 2097152, 'additive', 'limit-raised'],
      ['logs_push_max_entries', 500, 'breaking', 'limit-lowered'],
      ['ack_flush_ms', 500, 'breaking', 'limit-raised'], // a promise to agents: raising it breaks them
      ['ack_flush_ms', 100, 'additive', 'limit-lowered'],
      ['backoff_cap_s', 30, 'additive', 'limit-changed'], // agent-local tuning
      ['ws_path', '/ws/v2', 'breaking', 'limit-changed'],
    ] as const)('limit %s → %s is %s', (name, value, kind, rule) => {
      const c = diff((d) => edit(d, 'limits.json', (j) => (j.limits[name].value = value)));
      only(c, kind, rule, `limits.json:${name}`);
    });

    it('limit removed is breaking, added is additive', () => {
      only(diff((d) => edit(d, 'limits.json', (j) => delete j.limits.first_seq)), 'breaking', 'limit-removed', 'limits.json:first_seq');
      only(diff((d) => edit(d, 'limits.json', (j) => (j.limits.new_limit = { value: 3, source: 'x', description: 'y' }))), 'additive', 'limit-added', 'limits.json:new_limit');
    });
  });

  describe('probes, state machine, examples', () => {
    it('probe removed is breaking, added is additive', () => {
      const name = baseC.probes[0]!.name;
      const rm = diff((d) => {
        edit(d, 'probes/probes.json', (j) => (j.probes = j.probes.filter((p: Json) => p.name !== name)));
        unlinkSync(join(d, `probes/${name}.args.json`));
        unlinkSync(join(d, `probes/${name}.output.json`));
      });
      only(rm, 'breaking', 'probe-removed', `probes/probes.json:${name}`);
      expect(rm).toHaveLength(1);
      const add = diff((d) => {
        edit(d, 'probes/probes.json', (j) => j.probes.push({ name: 'x.new', summary: 'new' }));
        for (const k of ['args', 'output']) writeFileSync(join(d, `probes/x.new.${k}.json`), JSON.stringify({ $id: `https://cortex.invalid/schemas/v1/probes/x.new.${k}.json`, title: `X${k}`, type: 'object' }));
      });
      only(add, 'additive', 'probe-added', 'probes/probes.json:x.new');
      expect(add).toHaveLength(1);
    });

    it('probe args schema narrowed is breaking', () => {
      const name = baseC.probes[0]!.name;
      const c = diff((d) =>
        edit(d, `probes/${name}.args.json`, (j) => {
          j.properties = { ...j.properties, must_have: { type: 'string' } };
          j.required = [...(j.required ?? []), 'must_have'];
        }),
      );
      only(c, 'breaking', 'required-field-added', `probes/${name}.args.json#/properties/must_have`);
    });

    it('state removed / transition removed are breaking; transition added is additive', () => {
      const t = diff((d) => edit(d, 'state-machine.json', (j) => (j.transitions = j.transitions.filter((x: Json) => x.event !== 'drained'))));
      only(t, 'breaking', 'transition-removed');
      const a = diff((d) => edit(d, 'state-machine.json', (j) => j.transitions.push({ from: 'Draining', to: 'Revoked', event: 'revoked', description: 'x' })));
      only(a, 'additive', 'transition-added');
    });

    it('example changed is additive', () => {
      const c = diff((d) => edit(d, 'examples/logs.push.response.json', (j) => (j.id = 999)));
      only(c, 'additive', 'example-changed', 'examples/logs.push.response.json');
    });
  });
});

// ---------------------------------------------------------------------------------------

/** The compiled CLI to its exit, without blocking (at most four at once, support/scli-pool.ts): the tests below run side by side. */
async function run(args: string[], cwd = repo) {
  const r = await cliAsync(args, { script: cli, cwd });
  return { code: r.code, out: r.stdout, err: r.stderr };
}

// side by side: every test has its own fixture; the scratch repository's working tree is only
// read (the test that edits it edits a copy)
describe.concurrent('contract:diff CLI (compiled)', () => {
  it('no change: exit 0, "no changes"', async ({ expect }) => {
    const r = await run(['--against', base, '--contract', fixture(() => {})]);
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim().split('\n').at(-1)).toBe('no changes');
  });

  it('additive only: exit 0, one "additive" line per change', async ({ expect }) => {
    const r = await run(['--against', base, '--contract', fixture((d) => edit(d, 'schemas/agent.hello.params.json', (j) => (j.properties.zone = { type: 'string' })))]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^additive optional-field-added at schemas\/agent\.hello\.params\.json#\/properties\/zone: /m);
    expect(r.out).toContain('1 change: 0 breaking, 1 additive');
  });

  it('breaking: exit 1, "BREAKING" line', async ({ expect }) => {
    const r = await run(['--against', base, '--contract', fixture((d) => edit(d, 'schemas/agent.hello.params.json', (j) => delete j.properties.resume_from_seq))]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toMatch(/^BREAKING field-removed at schemas\/agent\.hello\.params\.json#\/properties\/resume_from_seq: /m);
    expect(r.out).toContain('(exit 1)');
  });

  it('breaking with protocol_version and subprotocol bumped together: exit 0', async ({ expect }) => {
    const dir = fixture((d) => {
      edit(d, 'limits.json', (j) => {
        j.limits.protocol_version.value = 2;
        j.limits.subprotocol.value = 'cortex.v2';
      });
      edit(d, 'schemas/agent.hello.params.json', (j) => delete j.properties.resume_from_seq);
    });
    const r = await run(['--against', base, '--contract', dir]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('breaking changes allowed: protocol version bumped to 2 with subprotocol cortex.v2');
  });

  it('subprotocol bumped alone: exit 1', async ({ expect }) => {
    const r = await run(['--against', base, '--contract', fixture((d) => edit(d, 'limits.json', (j) => (j.limits.subprotocol.value = 'cortex.v2')))]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toMatch(/^BREAKING subprotocol-changed-alone at limits\.json:subprotocol: /m);
  });

  it('--json prints one object {changes, breaking, additive, allowed, exit_code}', async ({ expect }) => {
    const r = await run(['--json', '--against', base, '--contract', fixture((d) => edit(d, 'schemas/defs.json', (j) => def(j, 'Severity').enum.pop()))]);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out);
    expect(Object.keys(j).sort()).toEqual(['additive', 'allowed', 'breaking', 'changes', 'exit_code']);
    expect(j).toMatchObject({ breaking: 1, additive: 0, allowed: false, exit_code: 1 });
    expect(j.changes[0]).toMatchObject({ kind: 'breaking', rule: 'enum-value-removed', where: 'schemas/defs.json#/$defs/Severity' });
  });

  it('bad usage and unknown refs exit 2', async ({ expect }) => {
    const [none, bogus, both, missing, u] = await Promise.all([run([]), run(['--bogus']), run(['HEAD', '--against', base]), run(['--against', join(base, 'nope')]), run(['no-such-ref-xyz'])]);
    expect(none.code).toBe(2);
    expect(bogus.code).toBe(2);
    expect(both.code).toBe(2);
    expect(missing.code).toBe(2);
    expect(u.code).toBe(2);
    expect(u.err).toContain('unknown git ref "no-such-ref-xyz"');
  });

  describe('git refs (scratch repository)', () => {
    let scratch: string;
    const g = (...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'commit.gpgsign=false', ...args], { cwd: scratch, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    };
    beforeAll(() => {
      scratch = tmp('repo');
      g('init', '-q');
      writeFileSync(join(scratch, 'README'), 'x\n');
      g('add', 'README');
      g('commit', '-q', '-m', 'no contract yet');
      g('tag', 'before-contract');
      cpSync(base, join(scratch, 'contract'), { recursive: true });
      g('add', 'contract');
      g('commit', '-q', '-m', 'contract');
    });

    it('HEAD vs a clean working tree: exit 0, "no changes"', async ({ expect }) => {
      const r = await run(['HEAD'], scratch);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain('no changes');
    });

    it('HEAD vs a working tree with a breaking edit: exit 1', async ({ expect }) => {
      // in a copy of the scratch repository (history and all): the tests beside this one read the clean tree
      const own = tmp('repo');
      cpSync(scratch, own, { recursive: true });
      edit(join(own, 'contract'), 'limits.json', (j) => (j.limits.max_frame_bytes.value = 1024));
      const r = await run(['HEAD'], own);
      expect(r.code, r.err).toBe(1);
      expect(r.out).toMatch(/^BREAKING limit-lowered at limits\.json:max_frame_bytes: /m);
    });

    it('a ref where contract/ does not exist: exit 2 with a clear error', async ({ expect }) => {
      const r = await run(['before-contract'], scratch);
      expect(r.code).toBe(2);
      expect(r.err).toContain('contract/ does not exist at before-contract');
    });

    it('run from a subdirectory, the ref is still read from the top level', async ({ expect }) => {
      const r = await run(['HEAD~0', '--contract', join(scratch, 'contract')], join(scratch, 'contract'));
      expect(r.code, r.err).toBe(0);
    });
  });

  it('this repository: HEAD vs the working tree (exit 0 when contract/ is clean)', async ({ expect }) => {
    const r = await run(['HEAD', '--json']);
    expect(r.code, r.err).not.toBe(2);
    const j = JSON.parse(r.out);
    expect(j.exit_code).toBe(r.code);
    const dirty = spawnSync('git', ['status', '--porcelain', '--', 'contract'], { cwd: repo, encoding: 'utf8' }).stdout.trim();
    // Other work may have uncommitted edits under contract/ (e.g. new probes); then only the
    // report's consistency is checked.
    if (dirty === '') expect([r.code, j.changes]).toEqual([0, []]);
  });
});

// ---------------------------------------------------------------------------------------
// Who receives the message (item 1): a server of the new release talks to agents of the
// previous release. What agents RECEIVE breaks when it widens (they validate it with the old
// schema); what agents SEND breaks when it narrows (servers validate it with the new one).

describe('direction: what agents receive and what they send', () => {
  it('a field of what the server sends made optional (logs.push result up_to_seq) is breaking', () => {
    const c = diff((d) => edit(d, 'schemas/logs.push.result.json', (j) => (j.required = j.required.filter((r: string) => r !== 'up_to_seq'))));
    const r = only(c, 'breaking', 'field-made-optional', 'schemas/logs.push.result.json#/properties/up_to_seq');
    expect(r.detail).toContain('agents of the previous release reject');
    expect(r.detail).toContain('logs.push result');
  });

  it('an enum value added to what the server sends (agent.shutdown reason) is breaking', () => {
    const c = diff((d) => edit(d, 'schemas/agent.shutdown.params.json', (j) => j.properties.reason.enum.push('Maintenance')));
    const r = only(c, 'breaking', 'enum-value-added', 'schemas/agent.shutdown.params.json#/properties/reason');
    expect(r.detail).toContain('agents of the previous release reject what is new: they validate the agent.shutdown params they receive');
  });

  it('an optional field added to a closed message agents receive is breaking; to one they send, additive', () => {
    const recv = diff((d) => edit(d, 'schemas/logs.push.result.json', (j) => (j.properties.note = { type: 'string' })));
    only(recv, 'breaking', 'optional-field-added', 'schemas/logs.push.result.json#/properties/note');
    const sent = diff((d) => edit(d, 'schemas/logs.push.params.json', (j) => (j.properties.note = { type: 'string' })));
    only(sent, 'additive', 'optional-field-added', 'schemas/logs.push.params.json#/properties/note');
  });

  it('a bound raised in probe args (agents receive them) is breaking; in the probe output (agents send it), additive', () => {
    const probes = readdirSync(join(base, 'probes')).filter((f) => f.endsWith('.args.json'));
    const withMax = probes.map((f) => ({ f, j: JSON.parse(readFileSync(join(base, 'probes', f), 'utf8')) as Json })).find(({ j }) => Object.values(j.properties ?? {}).some((p: Json) => typeof p.maximum === 'number'))!;
    const key = Object.keys(withMax.j.properties).find((k) => typeof withMax.j.properties[k].maximum === 'number')!;
    const c = diff((d) => edit(d, `probes/${withMax.f}`, (j) => (j.properties[key].maximum += 1)));
    const r = only(c, 'breaking', 'range-widened', `probes/${withMax.f}#/properties/${key}`);
    expect(r.detail).toContain('they receive');
  });

  it('data of an error the server answers with widened is breaking (agents receive it)', () => {
    const c = diff((d) => edit(d, 'schemas/error-data.json', (j) => (j.$defs.RetryAfterData.properties.retry_after_ms.minimum = -1)));
    const r = only(c, 'breaking', 'range-widened', 'schemas/error-data.json#/$defs/RetryAfterData/properties/retry_after_ms');
    expect(r.detail).toContain('error -32020 data');
  });

  it('what agents send narrowed stays breaking, with the reason; what they receive narrowed is additive', () => {
    const sent = diff((d) => edit(d, 'schemas/logs.push.params.json', (j) => (j.properties.entries.maxItems -= 1)));
    const r = only(sent, 'breaking', 'range-narrowed', 'schemas/logs.push.params.json#/properties/entries');
    expect(r.detail).toContain('servers of this release reject what agents of the previous release may still send in logs.push params');
    const recv = diff((d) => edit(d, 'schemas/agent.shutdown.params.json', (j) => (j.properties.drain_seconds.maximum -= 1)));
    const s = only(recv, 'additive', 'range-narrowed', 'schemas/agent.shutdown.params.json#/properties/drain_seconds');
    expect(s.detail).toContain('narrows only what agents receive');
  });

  it('a method\'s result swapped for a wider file is judged by the method\'s direction', () => {
    const c = diff((d) => {
      const r = JSON.parse(readFileSync(join(d, 'schemas/metrics.push.result.json'), 'utf8'));
      r.$id = r.$id.replace('metrics.push.result.json', 'metrics.push.result2.json');
      r.title = 'MetricsPushResult2';
      r.additionalProperties = true;
      writeFileSync(join(d, 'schemas/metrics.push.result2.json'), JSON.stringify(r, null, 2));
      edit(d, 'methods.json', (j) => (method(j, 'metrics.push').result = 'metrics.push.result2.json'));
    });
    expect(c.some((x) => x.kind === 'breaking' && x.where === 'methods.json:metrics.push/result' && x.detail.includes('metrics.push result'))).toBe(true);
  });
});

describe('deprecation (item 9)', () => {
  it('deprecating a method is additive; removing it stays breaking', () => {
    const c = diff((d) => edit(d, 'methods.json', (j) => (method(j, 'agent.heartbeat').deprecated = true)));
    expect(c.map((x) => [x.kind, x.rule])).toEqual([['additive', 'method-deprecated']]);
    const rm = diff((d) =>
      edit(d, 'methods.json', (j) => {
        for (const ex of method(j, 'config.update').examples) unlinkSync(join(d, 'examples', ex.file));
        j.methods = j.methods.filter((m: Json) => m.name !== 'config.update');
      }),
    );
    expect(rm.some((x) => x.kind === 'breaking' && x.rule === 'method-removed')).toBe(true);
  });

  it('deprecating a field is additive (its own rule), whichever side receives it', () => {
    const c = diff((d) => edit(d, 'schemas/logs.push.result.json', (j) => (j.properties.received_at.deprecated = true)));
    const r = only(c, 'additive', 'deprecated-changed', 'schemas/logs.push.result.json#/properties/received_at');
    expect(r.detail).toContain('deprecated');
  });
});
