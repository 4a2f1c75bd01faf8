// RFC 5424 lines for the tests of the paths that write an entry's JSON text straight from the
// scan (DECISIONS P18, P19): lines those paths write, lines they leave to the object path, lines
// that are not RFC 5424, and a generator of lines mixing the unusual cases.

/** Lines the JSON paths write themselves (P19 takes only those that are printable ASCII). */
export const WRITTEN = [
  '<134>1 2024-06-15T12:00:00.000Z web-0.example.com nginx 1000 ACCESS [req@32473 id="0" status="200"] GET /api/v1/items/0 HTTP/1.1 200 512 "-" "curl/8.5"',
  '<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \uFEFF\'su root\' failed for lonvick on /dev/pts/8',
  '<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It\'s time to make the do-nuts.',
  '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="a\\"b\\]c\\\\d"] "quoted" and \\ backslash',
  '<14>1 2024-01-01T00:00:00Z h"x a\\b 1"2 m\\ [x@1 k=""][y@2] quotes and backslashes in the header tokens',
  '<0>1 - - - - - -',
  '<0>1 - - - - - - msg',
  '<13>1 2024-01-01T00:00:00Z h a 1 m -',
  '<14>1 2024-01-01T00:00:00Z hôte appé 1 m [x@1 k="é"] non-ASCII, no surrogate',
  '<14>1 2016-12-31T23:59:60.999+05:30 h a 1 m - leap second with offset',
  '<14>1 0050-02-28T00:00:00Z h a 1 m - two-digit year',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 a="1" b="2" c="3"][y@1 a="1"] the same name in two elements',
  `<14>1 2024-01-01T00:00:00Z h a 1 m - ${'x'.repeat(20_000)}`,
];

/** RFC 5424 lines left to the object path (which must still parse them as before). */
export const LEFT = [
  '<14>1 2024-01-01T00:00:00Z h a 1 m - a\ttab',
  '<14>1 2024-01-01T00:00:00Z h a 1 m - nul\u0000',
  '<14>1 2024-01-01T00:00:00Z h a 1 m - emoji 😀',
  '<14>1 2024-01-01T00:00:00Z h a 1 m - lone \ud800 surrogate',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v" k="w"] duplicate name',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v"][x@1 k="w"] duplicate id',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 1="v" a="w"] an array-index name',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [7 a="w"] an array-index id',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [__proto__ __proto__="x" k="y"] __proto__',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 a"b="v"] a quote in a name',
  '<14>1 2024-01-01T00:00:00Z a\\b=c a 1 m [i\\d k\\x="v"] a backslash in names',
  `<14>1 2024-01-01T00:00:00Z h a 1 m - ${'x'.repeat(22_000)}`,
];

/** Not RFC 5424 at all. */
export const NOT_5424 = ['<13>Jun  5 22:14:15 mymachine sshd[1234]: Accepted publickey', '<13>1 - h a p m [broken x', '{"msg":"x"}', 'plain', ''];

/** 4,000 lines mixing the unusual cases; asciiOnly: only printable-ASCII pieces (a generated timestamp or SD may still be malformed). */
export function* generated(asciiOnly = false): Generator<string> {
  let seed = 11;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  for (let k = 0; k < 4000; k++) {
    const frac = pick(['', '.5', '.123456', '.000', '.999', '.1234']);
    const ts = pick(['-', `${pad(pick([0, 99, 100, 1969, 2024, 9999]) + rnd(2), 4)}-${pad(rnd(14), 2)}-${pad(rnd(32), 2)}${pick(['T', 't', ' '])}${pad(rnd(25), 2)}:${pad(rnd(61), 2)}:${pad(rnd(62), 2)}${frac}${pick(['Z', 'z', '+02:00', '-11:30', '+00:00', ''])}`]);
    const ascii = <T>(xs: readonly T[]): readonly T[] => (asciiOnly ? xs.filter((x) => typeof x !== 'string' || /^[\x20-\x7e]*$/.test(x)) : xs);
    const tok = () => pick(ascii(['-', 'host', 'a"q', 'b\\s', 'é', 'web-1.example.com', '--', '[x]']));
    const name = () => pick(ascii(['k', 'id@1', 'n\\x', '0', '__proto__', '__proto_', '_proto__x', 'é', 'a"b', 'k']));
    const value = () => pick(ascii(['', 'v', 'a b', 'q\\"q', 'b\\]', 'bs\\\\', 'odd\\x', 'é', '😀', 'tab\t', '"', 'end\\', ']']));
    const el = () => `[${name()}${pick(['', ` ${name()}="${value()}"`, ` ${name()}="${value()}" ${name()}="${value()}"`])}]`;
    const sd = pick(['-', el(), el() + el(), `[${name()} k=v]`, '[', '[]', `${el()}x`, '- ']);
    const msg = pick(ascii(['', ' ', ' hello "world"', ' \uFEFFbom', ' back\\slash', ' tab\there', ' ünï', ` ${'y'.repeat(rnd(80))}`, ' end\\', ' \x7f del']));
    yield `<${rnd(192)}>${pick(['1', '12'])} ${ts} ${tok()} ${tok()} ${tok()} ${tok()} ${sd}${msg}`;
  }
}

export const LABELS: (Record<string, string> | null)[] = [null, { env: 'prod', team: 'a' }, { '1': 'one', zone: 'é' }];

