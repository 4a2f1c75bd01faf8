// The catalog parts of the contract diff: methods, error codes, close codes, probes,
// schema files, the state machine, examples, and whatever changed that no rule explains.
import type { CloseCodeEntry, Contract, ErrorEntry, MethodEntry } from '../contract.js';
import { deepEqual, isObj, show, type Obj } from './json-util.js';
import type { Differ } from './schema-differ.js';
import { methodPartRole } from './schema-index.js';

// Methods, errors, close codes, probes, state machine, examples

export function diffMethods(d: Differ) {
  const om = new Map(d.oldC.methods.map((m) => [m.name, m]));
  const nm = new Map(d.newC.methods.map((m) => [m.name, m]));
  const removed = [...om.values()].filter((m) => !nm.has(m.name));
  const added = [...nm.values()].filter((m) => !om.has(m.name));
  for (const m of removed) {
    const twins = added.filter((a) => a.direction === m.direction && a.kind === m.kind).map((a) => a.name);
    const hint = twins.length > 0 ? `; renamed to ${twins.join(' or ')}? a rename is a removal plus an addition` : '';
    d.add('breaking', 'method-removed', `methods.json:${m.name}`, `${m.kind} ${m.name} (${m.direction}) removed${hint}`);
  }
  for (const m of added) d.add('additive', 'method-added', `methods.json:${m.name}`, `${m.kind} ${m.name} (${m.direction}) added`);
  for (const [name, a] of om) {
    const b = nm.get(name);
    if (!b) continue;
    const where = `methods.json:${name}`;
    if (a.direction !== b.direction) d.add('breaking', 'method-direction-changed', where, `direction ${a.direction} → ${b.direction}`);
    if (a.kind !== b.kind) d.add('breaking', 'method-kind-changed', where, `kind ${a.kind} → ${b.kind}`);
    if (a.response_to !== b.response_to) d.add('breaking', 'method-response-to-changed', where, `response_to ${show(a.response_to)} → ${show(b.response_to)}`);
    for (const part of ['params', 'result'] as const) diffMethodSchemaRef(d, a, b, part);
    // Error lists are append-only like the codes themselves: a new code the receiver may
    // answer with is additive; dropping one changes what older peers were promised.
    for (const c of b.errors) if (!a.errors.includes(c)) d.add('additive', 'method-error-added', where, `may now answer with error ${c}`);
    for (const c of a.errors) if (!b.errors.includes(c)) d.add('breaking', 'method-error-removed', where, `error ${c} removed from the method's error list (changes what older peers were promised)`);
    const docs = (['summary', 'section'] as const).filter((k) => a[k] !== b[k]);
    if (!deepEqual(a.examples, b.examples)) docs.push('examples' as never);
    if (docs.length > 0) d.add('additive', 'annotation-changed', where, `${docs.join(', ')} changed; documentation only`);
    // Deprecating announces a later removal (which is breaking then); nothing changes on the wire now.
    if (Boolean(a.deprecated) !== Boolean(b.deprecated)) d.add('additive', 'method-deprecated', where, b.deprecated ? `${name} deprecated (still part of the protocol; removing it is breaking)` : `${name} no longer deprecated`);
    const known = new Set(['name', 'section', 'direction', 'kind', 'response_to', 'summary', 'params', 'result', 'errors', 'examples', 'deprecated']);
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (known.has(k)) continue;
      const x = (a as unknown as Obj)[k];
      const y = (b as unknown as Obj)[k];
      if (!deepEqual(x, y)) d.add('breaking', 'method-field-changed', where, `${k} ${show(x)} → ${show(y)} (field not analysed; cannot prove compatible)`);
    }
  }
}

function diffMethodSchemaRef(d: Differ, a: MethodEntry, b: MethodEntry, part: 'params' | 'result') {
  const x = a[part];
  const y = b[part];
  if (x === y) return; // same file: compared at the file itself
  const where = `methods.json:${a.name}`;
  if (x === undefined) return d.add('breaking', `method-${part}-added`, where, `${part} schema ${y} added where there was none`);
  if (y === undefined) return d.add('breaking', `method-${part}-removed`, where, `${part} schema ${x} removed`);
  // Different file: compare what the two files accept, reported under the method.
  const roles = new Map([[`${b.name} ${part}`, methodPartRole(b, part)] as const]);
  d.compareSchema(d.oldFiles.get(`schemas/${x}`), d.newFiles.get(`schemas/${y}`), { oldFile: `schemas/${x}`, newFile: `schemas/${y}`, file: `${where}/${part}`, path: [], roles });
  d.add('additive', 'method-schema-file-changed', where, `${part} schema file ${x} → ${y} (contents compared above)`);
}

export function diffErrors(d: Differ) {
  const oe = new Map(d.oldC.errors.map((e) => [e.code, e]));
  const ne = new Map(d.newC.errors.map((e) => [e.code, e]));
  const newByName = new Map(d.newC.errors.map((e) => [e.name, e]));
  const renumbered = new Set<number>(); // new codes explained by a renumbering
  for (const [code, a] of oe) {
    const b = ne.get(code);
    const where = `errors.json:${code}`;
    const moved = newByName.get(a.name);
    if (moved !== undefined && moved.code !== code && !oe.has(moved.code)) {
      renumbered.add(moved.code);
      d.add('breaking', 'error-code-renumbered', where, `${a.name} renumbered ${code} → ${moved.code} (seed 9: error codes are append-only)`);
    }
    if (!b) {
      if (!(moved !== undefined && moved.code !== code)) d.add('breaking', 'error-code-removed', where, `${a.name} (${code}) removed (seed 9: error codes are append-only)`);
      continue;
    }
    if (a.name !== b.name) d.add('breaking', 'error-code-reused', where, `code ${code} was ${a.name}, now ${b.name} (a code must never get a different meaning)`);
    if (a.meaning !== b.meaning) d.add('breaking', 'error-meaning-changed', where, `meaning of ${b.name} changed: ${show(a.meaning)} → ${show(b.meaning)}`);
    if (a.direction !== b.direction) d.add('breaking', 'error-direction-changed', where, `direction ${a.direction} → ${b.direction}`);
    if (a.close_code !== b.close_code) d.add('breaking', 'error-close-code-changed', where, `close code after ${b.name} ${show(a.close_code)} → ${show(b.close_code)}`);
    if (a.data !== b.data) {
      if (a.data === undefined) d.add('additive', 'error-data-added', where, `error.data of ${b.name} now described by ${b.data}`);
      else d.add('breaking', 'error-data-changed', where, `error.data of ${b.name} ${show(a.data)} → ${show(b.data)}`);
    }
    extraFields(d, a, b, ['code', 'name', 'direction', 'meaning', 'close_code', 'data'], where);
  }
  for (const [code, b] of ne) {
    if (oe.has(code) || renumbered.has(code)) continue;
    d.add('additive', 'error-code-added', `errors.json:${code}`, `${b.name} (${code}) added`);
  }
}

export function diffCloseCodes(d: Differ) {
  const oc = new Map(d.oldC.closeCodes.map((c) => [c.code, c]));
  const nc = new Map(d.newC.closeCodes.map((c) => [c.code, c]));
  const newByName = new Map(d.newC.closeCodes.map((c) => [c.name, c]));
  const renumbered = new Set<number>();
  for (const [code, a] of oc) {
    const b = nc.get(code);
    const where = `close-codes.json:${code}`;
    const moved = newByName.get(a.name);
    if (moved !== undefined && moved.code !== code && !oc.has(moved.code)) {
      renumbered.add(moved.code);
      d.add('breaking', 'close-code-renumbered', where, `${a.name} renumbered ${code} → ${moved.code}`);
    }
    if (!b) {
      if (!(moved !== undefined && moved.code !== code)) d.add('breaking', 'close-code-removed', where, `${a.name} (${code}) removed`);
      continue;
    }
    if (a.name !== b.name) d.add('breaking', 'close-code-changed', where, `code ${code} was ${a.name}, now ${b.name}`);
    if (a.meaning !== b.meaning) d.add('breaking', 'close-code-changed', where, `meaning of ${b.name} changed: ${show(a.meaning)} → ${show(b.meaning)}`);
    if (a.source !== b.source) d.add('additive', 'annotation-changed', where, `source ${show(a.source)} → ${show(b.source)}; documentation only`);
    extraFields(d, a, b, ['code', 'name', 'meaning', 'source'], where);
  }
  for (const [code, b] of nc) {
    if (oc.has(code) || renumbered.has(code)) continue;
    d.add('additive', 'close-code-added', `close-codes.json:${code}`, `${b.name} (${code}) added`);
  }
}

function extraFields(d: Differ, a: ErrorEntry | CloseCodeEntry, b: ErrorEntry | CloseCodeEntry, known: string[], where: string) {
  const x = a as unknown as Obj;
  const y = b as unknown as Obj;
  for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
    if (known.includes(k) || deepEqual(x[k], y[k])) continue;
    d.add('breaking', 'field-changed', where, `${k} ${show(x[k])} → ${show(y[k])} (field not analysed; cannot prove compatible)`);
  }
}

export function diffProbes(d: Differ) {
  const op = new Map(d.oldC.probes.map((p) => [p.name, p]));
  const np = new Map(d.newC.probes.map((p) => [p.name, p]));
  for (const [name, a] of op) {
    const b = np.get(name);
    if (!b) d.add('breaking', 'probe-removed', `probes/probes.json:${name}`, `probe ${name} removed`);
    else if (a.summary !== b.summary) d.add('additive', 'annotation-changed', `probes/probes.json:${name}`, `summary changed; documentation only`);
  }
  for (const name of np.keys()) if (!op.has(name)) d.add('additive', 'probe-added', `probes/probes.json:${name}`, `probe ${name} added`);
}

/** Every schema file, walked whole (root and $defs). */
export function diffSchemaFiles(d: Differ) {
  const probeFile = (k: string, c: Contract) => c.probes.some((p) => k === `probes/${p.name}.args.json` || k === `probes/${p.name}.output.json`);
  for (const [key, s] of d.oldFiles) {
    const t = d.newFiles.get(key);
    if (t === undefined) {
      // A removed probe's files are covered by probe-removed.
      if (!(key.startsWith('probes/') && !d.newC.probes.some((p) => key.startsWith(`probes/${p.name}.`)))) d.add('breaking', 'schema-file-removed', key, `schema file removed`);
      continue;
    }
    d.compareSchema(s, t, { oldFile: key, newFile: key, file: key, path: [] });
  }
  for (const key of d.newFiles.keys()) {
    if (d.oldFiles.has(key)) continue;
    if (key.startsWith('probes/') && probeFile(key, d.newC) && !d.oldC.probes.some((p) => key.startsWith(`probes/${p.name}.`))) continue;
    d.add('additive', 'schema-file-added', key, `schema file added`);
  }
}

export function diffStateMachine(d: Differ) {
  const a = d.oldC.stateMachine;
  const b = d.newC.stateMachine;
  const W = 'state-machine.json';
  if (a.initial !== b.initial) d.add('breaking', 'state-machine-changed', `${W}:initial`, `initial state ${a.initial} → ${b.initial}`);
  const os = new Map((a.states ?? []).map((s) => [s.name, s]));
  const ns = new Map((b.states ?? []).map((s) => [s.name, s]));
  for (const [name, s] of os) {
    const t = ns.get(name);
    if (!t) d.add('breaking', 'state-removed', `${W}:${name}`, `state ${name} removed`);
    else {
      if (Boolean(s.terminal) !== Boolean(t.terminal)) d.add('breaking', 'state-machine-changed', `${W}:${name}`, `state ${name} ${t.terminal ? 'is terminal now' : 'is no longer terminal'}`);
      if (s.description !== t.description) d.add('additive', 'annotation-changed', `${W}:${name}`, `description changed; documentation only`);
    }
  }
  for (const name of ns.keys()) if (!os.has(name)) d.add('additive', 'state-added', `${W}:${name}`, `state ${name} added`);
  const key = (t: { from: string; to: string; event: string }) => `${t.from}->${t.to} (${t.event})`;
  const ot = new Map((a.transitions ?? []).map((t) => [key(t), t]));
  const nt = new Map((b.transitions ?? []).map((t) => [key(t), t]));
  for (const [k, t] of ot) {
    const u = nt.get(k);
    if (!u) d.add('breaking', 'transition-removed', `${W}:${k}`, `transition removed`);
    else {
      const oe = t.errors ?? [];
      const ne = u.errors ?? [];
      for (const c of oe) if (!ne.includes(c)) d.add('breaking', 'transition-changed', `${W}:${k}`, `error ${c} no longer leads to this transition`);
      for (const c of ne) if (!oe.includes(c)) d.add('breaking', 'transition-changed', `${W}:${k}`, `error ${c} now leads to this transition (changes how agents react to it)`);
      if (t.description !== u.description) d.add('additive', 'annotation-changed', `${W}:${k}`, `description changed; documentation only`);
    }
  }
  for (const k of nt.keys()) if (!ot.has(k)) d.add('additive', 'transition-added', `${W}:${k}`, `transition added`);
  const of = new Map((a.final ?? []).map((f) => [f.from, f]));
  const nf = new Map((b.final ?? []).map((f) => [f.from, f]));
  for (const [k, f] of of) {
    const g = nf.get(k);
    if (!g) d.add('breaking', 'state-machine-changed', `${W}:final ${k}`, `final marker for ${k} removed`);
    else if (f.description !== g.description) d.add('additive', 'annotation-changed', `${W}:final ${k}`, `description changed; documentation only`);
  }
  for (const k of nf.keys()) if (!of.has(k)) d.add('breaking', 'state-machine-changed', `${W}:final ${k}`, `${k} is final now`);
}

export function diffExamples(d: Differ) {
  // Examples document the contract (codegen turns them into conformance vectors); they do
  // not change what is accepted, so every example change is additive.
  for (const [f, v] of d.oldC.examples) {
    if (!d.newC.examples.has(f)) d.add('additive', 'example-removed', `examples/${f}`, `example removed (documentation)`);
    else if (!deepEqual(v, d.newC.examples.get(f))) d.add('additive', 'example-changed', `examples/${f}`, `example changed (documentation)`);
  }
  for (const f of d.newC.examples.keys()) if (!d.oldC.examples.has(f)) d.add('additive', 'example-added', `examples/${f}`, `example added (documentation)`);
}

/**
 * Safety net: every data file whose parsed JSON differs must be explained by at least one
 * change located in it. File-level "description" texts are documentation; a difference
 * nothing explains is breaking, because it cannot be proven compatible.
 */
export function diffLeftovers(d: Differ) {
  const parse = (t: string | undefined): unknown => {
    if (t === undefined) return undefined;
    try {
      return JSON.parse(t);
    } catch {
      return t;
    }
  };
  const files = new Set([...d.oldC.files.keys(), ...d.newC.files.keys()]);
  for (const f of [...files].sort()) {
    const ta = d.oldC.files.get(f);
    const tb = d.newC.files.get(f);
    if (ta === tb || ta === undefined || tb === undefined) continue; // added/removed files are reported by their own rules
    const a = parse(ta);
    const b = parse(tb);
    if (deepEqual(a, b)) {
      d.add('additive', 'formatting-only', f, `file text changed, JSON content identical`);
      continue;
    }
    if (!f.startsWith('schemas/') && !f.startsWith('examples/') && !/^probes\/.+\.(args|output)\.json$/.test(f) && isObj(a) && isObj(b) && a['description'] !== b['description']) {
      d.add('additive', 'annotation-changed', f, `file description changed; documentation only`);
    }
    const explained = d.changes.some((c) => c.where === f || c.where.startsWith(`${f}:`) || c.where.startsWith(`${f}#`));
    if (!explained) d.add('breaking', 'unclassified-change', f, `content changed in a way no rule recognises (cannot prove compatible; review by hand)`);
  }
}

