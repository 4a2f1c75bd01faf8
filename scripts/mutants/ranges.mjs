// Stryker `mutate` entries for named functions: "file:startLine-endLine" found by the
// function's signature and brace matching, so the scope follows the code when lines move.
import { readFileSync } from 'node:fs';

/** Line range (1-based, inclusive) of the body that starts at the first "{" after `signature`. */
export function rangeOf(file, signature) {
  const text = readFileSync(file, 'utf8');
  const at = text.indexOf(signature);
  if (at < 0) throw new Error(`mutants: ${file} has no "${signature}" any more: update scripts/mutants/ranges.mjs`);
  // The body's brace ends the first line (from the signature on) that ends with "{".
  let i = at;
  for (;;) {
    const eol = text.indexOf('\n', i);
    if (eol < 0) throw new Error(`mutants: no body after "${signature}" in ${file}`);
    if (text.slice(i, eol).trimEnd().endsWith('{')) {
      i = text.slice(0, eol).lastIndexOf('{');
      break;
    }
    i = eol + 1;
  }
  let depth = 0;
  let quote = null;
  for (; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === '/' && text[i + 1] === '/') {
      i = text.indexOf('\n', i);
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i) + 1;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) break;
  }
  const line = (pos) => text.slice(0, pos).split('\n').length;
  return `${file}:${line(at)}-${line(i)}`;
}

/** The modules implementing the wire rules and the functions of each that the suites exercise. */
export const SERVER_SCOPE = {
  // handshake: the hello verdict (protocol and agent versions, host id, token, revoked,
  // rotation required, params) and which rotation the session gets — all in the pure
  // decision module (not the decommission branch: no suite option decommissions a host)
  'server/ws/handshake.ts': [
    'export function helloHostId(',
    'export function screenHello(',
    { from: "const token = typeof p['token'] === 'string'", to: 'if (row.decommission_requested_at !== null) {' },
    { from: 'if (!validateAgentHelloParams(params)) {', to: "/** The row's state once the activation applied" },
  ],
  // ingest: contiguity and the refused-push rule, cap, host gone, quota, queue
  'server/ingest.ts': ['  push(params: LogsPushParams)', '  private accept('],
};

export const AGENT_SCOPE = {
  // session: the hello and its result (rotated token persisted before anything else, fatal
  // auth, Revoked), and the close reason final_seq=<n>
  'agent/session.ts': ['  private async authenticate(', '  private finalSeqReason('],
};

/** Lines from the one holding `from` up to (not including) the next one holding `to`. */
export function linesBetween(file, from, to) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const a = lines.findIndex((l) => l.includes(from));
  const b = a < 0 ? -1 : lines.findIndex((l, i) => i > a && l.includes(to));
  if (a < 0 || b < 0) throw new Error(`mutants: ${file} has no "${from}" … "${to}" any more: update scripts/mutants/ranges.mjs`);
  return `${file}:${a + 1}-${b}`;
}

export function mutateList(scope) {
  return Object.entries(scope).flatMap(([file, sigs]) => sigs.map((s) => (typeof s === 'string' ? rangeOf(file, s) : linesBetween(file, s.from, s.to))));
}
