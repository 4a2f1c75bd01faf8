// The hot generated validators (validateLogBatchEntry, validateLogsPushParams) run a compiled
// fast predicate before ajv (codegen/emit-fast-validators.ts). They must give ajv's verdict and
// ajv's errors (instancePath, schemaPath, keyword, params, message) on every input: compared
// here with ajv compiling the same contract schemas at run time, on every generated vector,
// on a grid of per-field mutations, and on random values.
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { validateLogBatchEntry, validateLogsPushParams, type Validator } from '@cortex/agent-protocol';
import { emitFastChecks, HOT_VALIDATORS } from '../../codegen/emit-fast-validators.js';

const repo = resolve(import.meta.dirname, '..', '..');
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: false });
addFormats.default(ajv);
for (const f of readdirSync(join(repo, 'contract/schemas'))) ajv.addSchema(JSON.parse(readFileSync(join(repo, 'contract/schemas', f), 'utf8')) as object);
const ref = {
  entry: ajv.getSchema('https://cortex.invalid/schemas/v1/defs.json#/$defs/LogBatchEntry')!,
  params: ajv.getSchema('https://cortex.invalid/schemas/v1/logs.push.params.json')!,
};

type Vector = { id: string; method: string; target: string; message: Record<string, unknown>; expected: { valid: boolean } };
const vectors: Vector[] = readdirSync(join(repo, 'generated/vectors')).flatMap((f) => (JSON.parse(readFileSync(join(repo, 'generated/vectors', f), 'utf8')) as { vectors: Vector[] }).vectors);

function same(generated: Validator, reference: ValidateFunction, value: unknown, label: string): boolean {
  const verdict = generated(value);
  const errors = generated.errors ?? null;
  const refVerdict = reference(value);
  expect({ label, verdict, errors }).toEqual({ label, verdict: refVerdict, errors: reference.errors ?? null });
  return verdict;
}

const entry = {
  seq: 42118,
  ts: '2026-05-16T19:42:50.123Z',
  severity: 'info',
  facility: 'auth',
  app_name: 'sshd',
  process_id: '1431',
  message: 'Accepted publickey for jmagar from 10.0.0.4',
  source: 'journald',
  metadata: { unit: 'ssh.service' },
};

// Values each field is set to in turn (and the field removed, and an unknown field added).
const palette: unknown[] = [
  undefined, null, true, 0, -1, 1.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, '', 'x', [], {}, { a: 1 }, ['info'],
  'info', 'warning', 'emerg', 'debug', 'INFO', 'informational',
  'journald', 'journald2', 'journal', 'file:', 'file:/var/log/syslog', 'file:a\nb', 'file:\u2028', 'docker:', 'docker:web', 'custom:x', 'custom:', 'File:/x',
  'x'.repeat(65536), 'x'.repeat(65537), '\u{1F600}'.repeat(32768), '\u{1F600}'.repeat(32769), `${'\u{1F600}'.repeat(32768)}x`,
  '2026-05-16T19:42:50Z', '2026-05-16t19:42:50z', '2026-05-16T19:42:50.123456789Z', '2026-05-16T19:42:50+02:00', '2026-05-16T19:42:50-23:59',
  '2026-05-16T19:42:50+24:00', '2026-05-16T19:42:50+02:60', '2026-05-16T19:42:50+0200', '2026-05-16T19:42:50+02', '2026-05-16T19:42:50',
  '2026-05-16 19:42:50Z', '2026-05-16T19:42:50.Z', '2026-05-16T24:00:00Z', '2026-05-16T23:60:00Z', '2026-05-16T23:59:60Z', '2016-12-31T23:59:60Z',
  '2016-12-31T23:59:60+00:00', '2026-05-16T19:42:60Z', '2026-05-16T23:59:60-00:00', '2026-05-16T00:59:60+01:00', '2017-01-01T00:59:60+01:00', '2026-05-16T19:42:61Z', '2026-02-29T00:00:00Z', '2024-02-29T00:00:00Z', '1900-02-29T00:00:00Z',
  '2000-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '2026-1-01T00:00:00Z',
  '２０２６-05-16T19:42:50Z', '2026-05-16T19:42:50Zt', '2026-05-16T19:42:50ZZ', 'T2026-05-16T19:42:50Z', '2026-05-16T19:42:50.1+02:00x',
];

function entryMutations(): unknown[] {
  const out: unknown[] = [entry, { ...entry, extra: 1 }, null, [], 'entry', 0];
  for (const k of [...Object.keys(entry), 'extra']) {
    for (const v of palette) {
      const e: Record<string, unknown> = { ...entry };
      if (v === undefined) delete e[k];
      else e[k] = v;
      out.push(e);
    }
  }
  return out;
}

describe('fast generated validators vs ajv compiled at run time', () => {
  it('compile the hot schemas (and refuse keywords they do not compile)', () => {
    expect(HOT_VALIDATORS).toEqual(['validateLogBatchEntry', 'validateLogsPushParams']);
    const a = new Ajv2020({ strict: false });
    a.addSchema({ $id: 'https://x.invalid/s.json', type: 'object', patternProperties: { '^a': { type: 'string' } } });
    expect(() => emitFastChecks(a, [{ name: 'validateS', ajvRef: 'https://x.invalid/s.json' }])).toThrow(/patternProperties/);
  });

  it('give the same verdict and errors on every generated vector', () => {
    let compared = 0;
    let invalid = 0;
    for (const v of vectors) {
      const m = v.message;
      // The params of every request in the vectors (most are not logs.push: all must be refused alike).
      for (const value of [m, m.params, m.result]) {
        if (value === undefined) continue;
        same(validateLogsPushParams, ref.params, value, `${v.id} as logs.push params`);
        if (!same(validateLogBatchEntry, ref.entry, value, `${v.id} as entry`)) invalid++;
        compared++;
        const entries = (value as { entries?: unknown }).entries;
        if (Array.isArray(entries)) entries.forEach((e, i) => same(validateLogBatchEntry, ref.entry, e, `${v.id} entries/${i}`));
      }
      if (v.method === 'logs.push' && v.target === 'params') expect(validateLogsPushParams(m.params), v.id).toBe(v.expected.valid);
    }
    expect(vectors.filter((v) => v.method === 'logs.push' && v.target === 'params' && !v.expected.valid).length).toBeGreaterThan(10);
    expect(compared).toBeGreaterThan(200);
    expect(invalid).toBeGreaterThan(100);
  });

  it('give the same verdict and errors on every field mutation of an entry, alone and inside a batch', () => {
    const cases = entryMutations();
    let valid = 0;
    for (const [i, e] of cases.entries()) {
      if (same(validateLogBatchEntry, ref.entry, e, `mutation ${i}`)) valid++;
      // The bad entry in the middle of a batch: the error path names its index.
      const batch = { seq_start: 1, entries: [entry, entry, e, entry] };
      same(validateLogsPushParams, ref.params, batch, `batch with mutation ${i}`);
    }
    // Both verdicts occur in quantity (the grid is not all-invalid).
    expect(valid).toBeGreaterThan(40);
    expect(cases.length - valid).toBeGreaterThan(200);
    for (const p of [{ seq_start: -1, entries: [entry] }, { seq_start: 1.5, entries: [entry] }, { seq_start: 1, entries: [] }, { seq_start: 1, entries: Array(1001).fill(entry) }, { seq_start: 1, entries: {} }, { seq_start: 1 }, { entries: [entry] }, { seq_start: 1, entries: [entry], x: 1 }]) {
      same(validateLogsPushParams, ref.params, p, JSON.stringify(p).slice(0, 80));
    }
  });

  it('give the same verdict and errors on random entries and date-times', () => {
    // Fields around their bounds, so that the leap-second and day-of-month rules are hit often.
    const digits = (n: number, max: number) => fc.integer({ min: 0, max }).map((x) => String(x).padStart(n, '0'));
    const dateTime = fc.oneof(
      fc.date({ min: new Date(Date.UTC(1, 0, 1)), max: new Date(Date.UTC(9999, 11, 31)), noInvalidDate: true }).map((d) => d.toISOString()),
      fc
        .tuple(fc.constantFrom('1900', '2000', '2016', '2024', '2026', '0000', '9999'), digits(2, 13), digits(2, 32), fc.constantFrom('T', 't', 'T', ' ', 'X'), digits(2, 25), digits(2, 61), digits(2, 61), fc.constantFrom('', '.', '.5', '.123456'), fc.constantFrom('Z', 'z', '', '+00:00', '-12:30', '+23:59', '+24:00', '+05:60', '+0530', '+05'))
        .map(([y, mo, d, t, h, mi, s, f, z]) => `${y}-${mo}-${d}${t}${h}:${mi}:${s}${f}${z}`),
      fc.string({ maxLength: 30 }),
    );
    const value = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(null), fc.boolean(), fc.constant(undefined), fc.object({ maxDepth: 1 }));
    const arbEntry = fc.record(
      {
        seq: fc.oneof(fc.nat(), value),
        ts: fc.oneof(dateTime, dateTime, value),
        severity: fc.oneof(fc.constantFrom('emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'), value),
        facility: fc.oneof(fc.string(), fc.constant(null), value),
        app_name: fc.oneof(fc.string(), value),
        process_id: fc.oneof(fc.string(), value),
        message: fc.oneof(fc.string({ unit: 'grapheme' }), value),
        source: fc.oneof(fc.constantFrom('journald', 'file:', 'file:/x', 'docker:c', 'custom:n', 'custom:\n'), fc.string().map((s) => `file:${s}`), value),
        metadata: fc.oneof(fc.object({ maxDepth: 1 }), fc.constant(null), value),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(arbEntry, fc.array(arbEntry, { maxLength: 3 }), fc.oneof(fc.nat(), value), (e, rest, seqStart) => {
        same(validateLogBatchEntry, ref.entry, e, 'random entry');
        same(validateLogsPushParams, ref.params, { seq_start: seqStart, entries: [...rest, e] }, 'random batch');
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(dateTime, (ts) => {
        same(validateLogBatchEntry, ref.entry, { ...entry, ts }, `ts ${ts}`);
      }),
      { numRuns: 3000 },
    );
  });
});
