// What a command line says about an option it does not know, for every program of the toolkit
// (the server's and fleet's parseArgs, the agent's and conformance's own parsers): the name as
// typed and, when one of the command's options is a typo away, that one. Node's parseArgs says
// `Unknown option '--folow'. To specify a positional argument starting with a '-', place it at
// the end of the command after '--', as in '-- "--folow"` for commands that take positionals,
// which is advice for another mistake (and its quote is never closed).

/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between a and b, or `limit + 1` once it is certainly above `limit`. */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The option of `known` (names without dashes) that `given` (without dashes) most likely
 * meant: the only one that starts with it, else the nearest within two edits (one for a name
 * of up to four letters); undefined when none is, or two are equally near.
 */
export function closestOption(given: string, known: readonly string[]): string | undefined {
  const name = given.toLowerCase();
  const prefixed = known.filter((k) => k.startsWith(name));
  if (name.length >= 2 && prefixed.length === 1) return prefixed[0];
  const limit = name.length <= 4 ? 1 : 2;
  let found: string | undefined;
  let best = limit + 1;
  let tied = false;
  for (const k of known) {
    const d = distance(name, k, limit);
    if (d < best) {
      best = d;
      found = k;
      tied = false;
    } else if (d === best) tied = true;
  }
  return best <= limit && !tied ? found : undefined;
}

/** `unknown option --folow (did you mean --follow?)`; `given` as typed, with its dashes. */
export function unknownOptionText(given: string, known: readonly string[]): string {
  const bare = given.replace(/^-+/, '').split('=')[0]!;
  const near = closestOption(bare, known);
  return `unknown option ${given.split('=')[0]}${near !== undefined ? ` (did you mean --${near}?)` : ''}`;
}

/** The text for an error node:util parseArgs threw, with `known` the command's option names. */
export function parseArgsErrorText(error: unknown, known: readonly string[]): string {
  const e = error as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  if (e?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const m = /^Unknown option '([^']+)'/.exec(message);
    if (m !== null) return unknownOptionText(m[1]!, known);
  }
  if (e?.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // Node's three lines name a `--n=-XYZ` form for a short option that has no long name
    const ambiguous = /^Option '([^']+)' argument is ambiguous/.exec(message);
    if (ambiguous !== null) {
      const opt = ambiguous[1]!;
      return `${opt} needs a value, and the argument after it starts with "-": if that is the value, write ${opt.startsWith('--') ? `${opt}=VALUE` : `${opt}VALUE`} (e.g. ${opt.startsWith('--') ? `${opt}=-x` : `${opt}-x`})`;
    }
    const missing = /^Option '(\S+)(?: <value>)?' argument missing/.exec(message);
    if (missing !== null) return `${missing[1]!} needs a value`;
  }
  return message;
}
