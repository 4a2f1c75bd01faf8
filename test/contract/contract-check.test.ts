// What codegen refuses in a contract, each as E_CONTRACT naming the file, the JSON pointer and
// what to do (never a stack trace, a TypeScript error in the generated code, or silence):
// catalog shapes, duplicate names and numbers, $ref targets, keyword values, limits that
// contradict their schema, protocol_version/subprotocol constants, examples that fail their
// schema or name another method. Fixtures: a copy of contract/ with one thing changed.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContractError, loadContract } from '../../codegen/contract.js';
import { contractProblems } from '../../codegen/contract-check.js';
import { emitDocs } from '../../codegen/emit-docs.js';
import { emitErrors } from '../../codegen/emit-code.js';
import { packageJson, packageReadme, protocolNames } from '../../codegen/emit-package.js';
import { collectNamedSchemas } from '../../codegen/bundle.js';
import { wireContract } from '../../codegen/generate.js';

const repo = resolve(import.meta.dirname, '..', '..');
const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

type Json = any;
function fixture(mutate: (edit: (rel: string, fn: (j: Json) => void) => void, dir: string) => void): string {
  const d = mkdtempSync(join(tmpdir(), 'cortex-check-'));
  temps.push(d);
  cpSync(join(repo, 'contract'), d, { recursive: true });
  mutate((rel, fn) => {
    const p = join(d, rel);
    const j = JSON.parse(readFileSync(p, 'utf8'));
    fn(j);
    writeFileSync(p, JSON.stringify(j, null, 2) + '\n');
  }, d);
  return d;
}
/** Every problem loading and checking the fixture reports (loadContract throws the shape ones). */
function problems(mutate: Parameters<typeof fixture>[0]): string[] {
  const d = fixture(mutate);
  try {
    return contractProblems(loadContract(d));
  } catch (err) {
    if (err instanceof ContractError) return err.problems;
    throw err;
  }
}
const method = (j: Json, name: string) => j.methods.find((m: Json) => m.name === name);

describe('the current contract', () => {
  it('passes every check', () => {
    expect(contractProblems(loadContract(join(repo, 'contract')))).toEqual([]);
  });
});

describe('catalog shapes, names and numbers (item 5)', () => {
  it('a wrong direction or kind in methods.json names the value and what is allowed', () => {
    const p = problems((edit) =>
      edit('methods.json', (j) => {
        method(j, 'agent.hello').direction = 'agent_2_server';
        method(j, 'agent.heartbeat').kind = 'notify';
      }),
    );
    expect(p).toContain('methods.json at /methods/0/direction: "agent_2_server" must be one of "agent_to_server", "server_to_agent"');
    expect(p).toContain('methods.json at /methods/1/kind: "notify" must be one of "request", "notification", "response"');
  });

  it('a misspelled top-level key ("erorrs") is named, not a TypeError', () => {
    const p = problems((edit) =>
      edit('errors.json', (j) => {
        j.erorrs = j.errors;
        delete j.errors;
      }),
    );
    expect(p).toContain('errors.json at /erorrs: unknown key "erorrs" (expected: description, errors); a misspelling?');
  });

  it('a misspelled key of an entry is named with its pointer', () => {
    const p = problems((edit) =>
      edit('methods.json', (j) => {
        const m = method(j, 'agent.heartbeat');
        m.parmas = m.params;
      }),
    );
    expect(p.some((x) => x.startsWith('methods.json at /methods/1/parmas: unknown key "parmas"'))).toBe(true);
  });

  it('two errors with one name, two with one code, two close codes with one number or name', () => {
    const p = problems((edit) => {
      edit('errors.json', (j) => {
        j.errors[5].name = 'ParseError';
        j.errors[6].code = -32700;
      });
      edit('close-codes.json', (j) => {
        j.close_codes[1].code = 1000;
        j.close_codes[2].name = 'NormalClosure';
      });
    });
    expect(p).toContain('errors.json at /errors/5/name: "ParseError" is already used at /errors/0/name; an error name (it names ErrorCode keys and error classes) must be unique');
    expect(p).toContain('errors.json at /errors/6/code: -32700 is already used at /errors/0/code; an error code must be unique');
    expect(p).toContain('close-codes.json at /close_codes/1/code: 1000 is already used at /close_codes/0/code; a close code must be unique');
    expect(p).toContain('close-codes.json at /close_codes/2/name: "NormalClosure" is already used at /close_codes/0/name; a close code name (it names CloseCode keys) must be unique');
  });

  it('the same probe listed twice is reported once, at the second entry', () => {
    const list = (JSON.parse(readFileSync(join(repo, 'contract/probes/probes.json'), 'utf8')) as { probes: { name: string }[] }).probes;
    const p = problems((edit) => edit('probes/probes.json', (j) => j.probes.push(j.probes[0])));
    expect(p).toEqual([`probes/probes.json at /probes/${list.length}/name: "${list[0]!.name}" is already used at /probes/0/name; a probe name must be unique`]);
  });
});

describe('schemas (item 5)', () => {
  it('a dangling $ref names the file, the pointer and what exists', () => {
    const p = problems((edit) => edit('schemas/logs.push.params.json', (j) => (j.properties.entries.items = { $ref: '#/$defs/Nope' })));
    expect(p).toEqual(['schemas/logs.push.params.json at /properties/entries/items/$ref: $ref "#/$defs/Nope" does not resolve: schemas/logs.push.params.json has nothing at /$defs/Nope (it has no $defs)']);
    const q = problems((edit) => edit('schemas/logs.push.params.json', (j) => (j.properties.entries.items = { $ref: 'defs.json#/$defs/LogEntry' })));
    expect(q[0]).toMatch(/^schemas\/logs\.push\.params\.json at \/properties\/entries\/items\/\$ref: \$ref "defs\.json#\/\$defs\/LogEntry" does not resolve: schemas\/defs\.json has nothing at \/\$defs\/LogEntry \(its \$defs: .*LogBatchEntry/);
  });

  it('a bad keyword value ("integr") names the file and pointer', () => {
    const p = problems((edit) => edit('schemas/logs.push.result.json', (j) => (j.properties.up_to_seq.type = 'integr')));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^schemas\/logs\.push\.result\.json at \/properties\/up_to_seq\/type: "integr" is not a valid JSON Schema value here: .*allowed: .*"integer"/);
  });

  it('two schemas naming one type are reported, not thrown from the bundler', () => {
    const p = problems((edit) => edit('schemas/logs.push.result.json', (j) => (j.title = 'LogsPushParams')));
    expect(p).toContain('schemas/logs.push.result.json at /title: the type name LogsPushParams is already taken by schemas/logs.push.params.json at /title: give one another title or $defs key');
  });
});

describe('limits against the schema constraints they state (item 3)', () => {
  it('logs_push_max_entries lowered without the schema: both values, file and pointer', () => {
    const p = problems((edit) => edit('limits.json', (j) => (j.limits.logs_push_max_entries.value = 500)));
    expect(p).toEqual([
      'limits.json at /limits/logs_push_max_entries/value: 500, but schemas/logs.push.params.json at /properties/entries/maxItems says maxItems 1000 (the limit states that constraint): change both together — LIMITS, PROTOCOL.md and the validators must agree',
    ]);
  });

  it('the schema changed without the limit, and limits in $defs and named by "Maximum <field>"', () => {
    const p = problems((edit) => {
      edit('schemas/metrics.push.params.json', (j) => (j.properties.samples.maxItems = 256));
      edit('limits.json', (j) => {
        j.limits.max_message_chars.value = 1000;
        j.limits.max_drain_seconds.value = 30;
      });
    });
    expect(p.map((x) => x.slice(0, x.indexOf(' (the limit')))).toEqual([
      'limits.json at /limits/metrics_push_max_samples/value: 512, but schemas/metrics.push.params.json at /properties/samples/maxItems says maxItems 256',
      'limits.json at /limits/max_message_chars/value: 1000, but schemas/defs.json at /$defs/LogBatchEntry/properties/message/maxLength says maxLength 65536',
      'limits.json at /limits/max_drain_seconds/value: 30, but schemas/agent.shutdown.params.json at /properties/drain_seconds/maximum says maximum 300',
    ]);
  });

  it('a source pointing at the keyword itself is compared with it; a source naming no field it can find is refused', () => {
    const p = problems((edit) =>
      edit('limits.json', (j) => {
        j.limits.logs_push_max_entries.source = 'schemas/logs.push.params.json#/properties/entries/maxItems';
        j.limits.logs_push_max_entries.value = 999;
        j.limits.metrics_push_max_samples.description = 'How many there may be.';
      }),
    );
    expect(p[0]).toMatch(/^limits\.json at \/limits\/logs_push_max_entries\/value: 999, but schemas\/logs\.push\.params\.json at \/properties\/entries\/maxItems says maxItems 1000/);
    expect(p[1]).toMatch(/^limits\.json at \/limits\/metrics_push_max_samples: source "schemas\/metrics\.push\.params\.json" is a schema, but which of its constraints the limit states cannot be told/);
  });
});

describe('protocol major bump (item 2)', () => {
  const bump = (edit: (rel: string, fn: (j: Json) => void) => void) =>
    edit('limits.json', (j) => {
      j.limits.protocol_version.value = 2;
      j.limits.subprotocol.value = 'cortex.v2';
    });

  it('a hello schema still saying maximum 1 is refused with file and pointer', () => {
    const p = problems((edit) => bump(edit));
    expect(p).toContain('schemas/agent.hello.params.json at /properties/protocol_version/maximum: maximum 1, but limits.json protocol_version is 2: make it {"const": 2} (or minimum and maximum 2) to match limits.json protocol_version');
  });

  it('protocol_version and subprotocol must be bumped together', () => {
    const p = problems((edit) => edit('limits.json', (j) => (j.limits.subprotocol.value = 'cortex.v2')));
    expect(p).toContain('limits.json at /limits/subprotocol/value: "cortex.v2" does not name protocol_version 1 (expected "cortex.v1"): bump both together');
  });

  it('a 2.x package says V2 and cortex.v2 everywhere and has no deprecated 1.x aliases', () => {
    const d = fixture((edit) => {
      bump(edit);
      edit('schemas/agent.hello.params.json', (j) => (j.properties.protocol_version = { type: 'integer', const: 2 }));
      edit('examples/agent.hello.request.json', (j) => (j.params.protocol_version = 2));
    });
    const c = loadContract(d);
    expect(contractProblems(c)).toEqual([]);
    const names = protocolNames(c.limits);
    const pkg = packageJson('@cortex/agent-protocol', '2.0.0', names);
    const readme = packageReadme('@cortex/agent-protocol', names);
    const docs = emitDocs(wireContract(c), collectNamedSchemas(wireContract(c)));
    const errors = emitErrors(wireContract(c));
    for (const text of [pkg, readme]) {
      expect(text).toContain('V2');
      expect(text).toContain('cortex.v2');
      expect(text).not.toMatch(/V1\b|cortex\.v1/);
    }
    expect(docs).toContain('# Cortex agent protocol V2 — reference');
    expect(readme).not.toContain('ParseErrorError');
    expect(errors).not.toMatch(/ParseErrorError|InternalErrorError|@deprecated/);
    // and 1.x keeps them
    expect(emitErrors(wireContract(loadContract(join(repo, 'contract'))))).toContain('export const ParseErrorError = ParseError;');
  });
});

describe('examples (item 4)', () => {
  it('an example failing its schema is refused with its file and the failing pointer', () => {
    const p = problems((edit) => edit('examples/logs.push.request.json', (j) => (j.params.entries[0].severity = 'loud')));
    expect(p).toHaveLength(1);
    expect(p[0]).toMatch(/^examples\/logs\.push\.request\.json at \/params\/entries\/0\/severity: must be equal to one of the allowed values .* the request of logs\.push \(methods\.json at \/methods\/3\/examples\/0\) fails its schema/);
  });

  it('an error example whose data fails the error data schema, and a response with an extra field', () => {
    const p = problems((edit) => {
      edit('examples/logs.push.error-backpressure.json', (j) => (j.error.data = {}));
      edit('examples/logs.push.response.json', (j) => (j.result.extra = 1));
    });
    expect(p.some((x) => x.startsWith("examples/logs.push.error-backpressure.json at /error/data: must have required property 'retry_after_ms'"))).toBe(true);
    expect(p.some((x) => x.startsWith('examples/logs.push.response.json at /result: must NOT have additional properties ("extra")'))).toBe(true);
  });

  it('an example whose method is not the one it is filed under (a rename) is refused', () => {
    const p = problems((edit) => edit('examples/agent.shutdown.notification.json', (j) => (j.method = 'agent.stop')));
    expect(p).toEqual(['examples/agent.shutdown.notification.json at /method: "agent.stop", but methods.json at /methods/2/examples/0 files it as a notification of agent.shutdown: make its method "agent.shutdown" (after a rename, rename the example too)']);
  });
});

describe('through the codegen command', () => {
  const cli = join(repo, 'dist/codegen/cli.js');
  beforeAll(() => {
    const sources = readdirSync(join(repo, 'codegen')).filter((f) => f.endsWith('.ts')).map((f) => join(repo, 'codegen', f));
    if (!existsSync(cli) || sources.some((f) => statSync(f).mtimeMs > statSync(cli).mtimeMs)) spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-b', join(repo, 'codegen')], { encoding: 'utf8' });
  }, 120_000);

  it('contract mistakes are E_CONTRACT (exit 2) with no stack trace, for codegen and codegen:check', () => {
    const d = fixture((edit) => {
      edit('schemas/logs.push.params.json', (j) => (j.properties.entries.items = { $ref: '#/$defs/Nope' }));
      edit('close-codes.json', (j) => (j.close_codes[1].code = 1000));
    });
    const out = mkdtempSync(join(tmpdir(), 'cortex-check-out-'));
    temps.push(out);
    for (const args of [[], ['--check']]) {
      const r = spawnSync(process.execPath, [cli, '--contract', d, '--out', join(out, 'g'), '--server-out', join(out, 's'), ...args], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain('error[E_CONTRACT]');
      expect(r.stderr).toContain('close-codes.json at /close_codes/1/code: 1000 is already used');
      expect(r.stderr).not.toMatch(/E_INTERNAL|\n\s+at /);
      expect(existsSync(join(out, 'g'))).toBe(false);
    }
  }, 60_000);
});

describe('deprecation in PROTOCOL.md (item 9)', () => {
  it('a deprecated method and a deprecated field say so', () => {
    const d = fixture((edit) => {
      edit('methods.json', (j) => (method(j, 'agent.heartbeat').deprecated = true));
      edit('schemas/logs.push.result.json', (j) => (j.properties.received_at.deprecated = true));
    });
    const c = wireContract(loadContract(d));
    expect(contractProblems(c)).toEqual([]);
    const docs = emitDocs(c, collectNamedSchemas(c));
    expect(docs).toContain('| [`agent.heartbeat`](#agentheartbeat) (deprecated) |');
    expect(docs).toContain('### agent.heartbeat\n\n**Deprecated**: still part of the protocol; a later major version removes it.');
    expect(docs).toMatch(/\| `received_at` \| string \| no \| \*\*deprecated\*\* \(still accepted; a later major version removes it\); /);
  });
});
