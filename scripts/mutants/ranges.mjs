// The scope of `npm run conformance:mutants`: the modules that implement the wire rules, the
// parts of each that are mutated, what is left out of them and why, and the conformance cases
// that test each module. Parts are found by text (a function's signature and brace matching,
// or the lines between two markers), so the scope follows the code when lines move; a part or
// an exception that is no longer found fails the run, naming this file.
import { readFileSync } from 'node:fs';

/**
 * side: which suite tests it (run-server.mjs / run-agent.mjs).
 * parts: a function signature (its body), or { from, to } (the line holding `from` up to, not
 *   including, the next one holding `to`).
 * except: source text inside the parts that is not mutated, each with the reason (listed in
 *   conformance/MUTANTS.md); every occurrence inside a part is left out, and so is any mutant
 *   that spans one (a whole enclosing block, say).
 * cases: the runner's --only list for a mutant of this module (the dry run without a mutant
 *   runs every case). Cases a selected one needs (handshake/first-enrollment-rotates: the
 *   primary host's credential) are listed too.
 */
export const MODULES = [
  {
    side: 'server',
    name: 'handshake',
    // the hello verdict (protocol and agent versions, host id, token, revoked, rotation
    // required, enrollment expiry, params, resume_from_seq) and which rotation the session
    // gets: the pure decision module (its I/O, hello-flow.ts, only carries it out)
    file: 'server/ws/handshake.ts',
    parts: ['export function helloHostId(', 'export function screenHello(', 'export function needsEnrollmentExpiry(', 'export function decideHello('],
    except: [
      { text: 'if (row.decommission_requested_at !== null) {', why: 'the decommission branch: the runner has no option that decommissions a host while it is not connected (a --decommission-command case is left to do)' },
      { text: '.slice(0, 20)', why: 'how many schema issues the -32602 data lists is not a rule' },
      { text: "outcome: rotatedToken === undefined ? 'ok' : row.connection_state === 'NeverConnected' ? 'enrolled' : 'rotated',", why: 'the label of a server metric, not wire behaviour' },
    ],
    cases: [
      'handshake/*', 'vector/agent.hello/*', 'error/-32001-*', 'error/-32002-*', 'error/-32003-*', 'error/-32005-*',
      'close/4001-*', 'close/4002-*', 'close/1012-*', 'revocation/*', 'rotation/*', 'ingest/ack-up-to-seq',
    ],
  },
  {
    side: 'server',
    name: 'ingest',
    // contiguity, max_seq, metadata limits, the refused-push rule, cap, host gone, quota, queue
    file: 'server/ingest.ts',
    parts: ['  push(params: LogsPushParams)', '  private accept('],
    except: [
      { text: '`must be seq_start + ${i} = ${seq_start + i} (entries are contiguous from seq_start)`', why: 'the text of the -32602 message' },
      { text: 'replaced += makeStorable(e);', why: 'the count of replaced characters only feeds a log line and a metric (the replacement itself, makeStorable, is not mutated here)' },
      { text: "if (replaced > 0) {\n      this.ingest.options.metrics?.charsReplaced.inc(replaced);", why: 'a log line and a metric, not wire behaviour' },
      { text: 'this.pendingEntries += n;\n      if (this.pendingEntries >= this.ingest.flushEntries) this.requestFlush();', why: 'the K trigger: whether the ack comes at K entries or T ms later is timing the runner does not judge (both are allowed on the wire); pinned in-process by test/contract/pinned-server.test.ts R-ING-06' },
    ],
    cases: [
      'handshake/first-enrollment-rotates', 'ingest/*', 'error/-32007-*', 'error/-32008-*', 'error/-32020-*', 'error/-32030-*', 'vector/logs.push/*',
    ],
  },
  {
    side: 'agent',
    name: 'agent session',
    // the hello and its result (rotated token persisted before anything else, fatal auth,
    // Revoked, resume point), and the close reason final_seq=<n>
    file: 'agent/session.ts',
    parts: ['  private async authenticate(', '  private finalSeqReason('],
    except: [
      { text: 'if (conn !== this.conn || this.halted) return;', why: 'race guard: a hello outcome arriving after the connection was replaced or the agent was stopped' },
      { text: "const what = err instanceof RpcError ? `hello rejected (${err.code} ${err.message})` : `hello failed: ${(err as Error).message}`;", why: 'the text of the status error and log line' },
      { text: 'this.log.warn({ code: err instanceof RpcError ? err.code : (err as PeerError).code }, msg);', why: 'a log line' },
      { text: "events.emit('hello', { ...result, rotated_token: result.rotated_token ? '[redacted]' : result.rotated_token });", why: "an in-process event (the library's 'hello'), not wire behaviour" },
    ],
    cases: undefined, // the whole agent suite: every case starts from a hello
  },
];

/** Line range (1-based, inclusive) of the body that starts at the first "{" after `signature`. */
export function rangeOf(file, signature) {
  const text = readFileSync(file, 'utf8');
  const [a, b] = bodySpan(text, file, signature);
  const line = (pos) => text.slice(0, pos).split('\n').length;
  return `${file}:${line(a)}-${line(b)}`;
}

/** [start, end) offsets from the signature to the body's closing brace (inclusive). */
function bodySpan(text, file, signature) {
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
  return [at, i + 1];
}

/** [start, end) offsets of the lines from the one holding `from` up to (not including) the next one holding `to`. */
function linesSpan(text, file, from, to) {
  const lines = text.split('\n');
  const a = lines.findIndex((l) => l.includes(from));
  const b = a < 0 ? -1 : lines.findIndex((l, i) => i > a && l.includes(to));
  if (a < 0 || b < 0) throw new Error(`mutants: ${file} has no "${from}" … "${to}" any more: update scripts/mutants/ranges.mjs`);
  const offset = (n) => lines.slice(0, n).reduce((s, l) => s + l.length + 1, 0);
  return [offset(a), offset(b) - 1];
}

/** Stryker `mutate` entries of one module: "file:line:col-line:col" (line 1-based, col 0-based, end exclusive). */
export function moduleRanges(m) {
  const text = readFileSync(m.file, 'utf8');
  const pos = (off) => {
    const before = text.slice(0, off).split('\n');
    return `${before.length}:${before.at(-1).length}`;
  };
  const out = [];
  for (const part of m.parts) {
    const [a, b] = typeof part === 'string' ? bodySpan(text, m.file, part) : linesSpan(text, m.file, part.from, part.to);
    const cuts = [];
    for (const ex of m.except) {
      let found = 0;
      for (let i = text.indexOf(ex.text, a); i >= 0 && i + ex.text.length <= b; i = text.indexOf(ex.text, i + 1)) {
        cuts.push([i, i + ex.text.length]);
        found++;
      }
      ex.found = (ex.found ?? 0) + found;
    }
    cuts.sort((x, y) => x[0] - y[0]);
    let from = a;
    for (const [c0, c1] of cuts) {
      if (c0 > from) out.push(`${m.file}:${pos(from)}-${pos(c0)}`);
      from = Math.max(from, c1);
    }
    if (b > from) out.push(`${m.file}:${pos(from)}-${pos(b)}`);
  }
  for (const ex of m.except) {
    if (!ex.found) throw new Error(`mutants: ${m.file} has no "${ex.text}" inside its parts any more: update scripts/mutants/ranges.mjs`);
  }
  return out;
}

export function mutateList(side) {
  return MODULES.filter((m) => m.side === side).flatMap(moduleRanges);
}

/** The module a mutated file belongs to. */
export function moduleOf(file) {
  return MODULES.find((m) => m.file === file);
}
